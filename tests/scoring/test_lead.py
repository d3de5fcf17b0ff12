"""The Lead baseline: first K tokens of title + paragraphs, K = the reference's length."""

import logging

from fairseq_hier.baselines.lead import lead
from fairseq_hier.cli import baseline

SOURCE = "my title <P> one two three <P> four five"


def cli_main(argv):
    """``fairseq-hier-baseline lead ARGV`` in-process: its exit status."""
    return baseline.cli_main(["lead", *argv])


def test_lead_takes_exactly_k_tokens_title_first():
    assert lead(SOURCE, "x x x x") == "my title one two"
    assert lead(SOURCE, "x") == "my"
    assert lead(SOURCE, "") == ""


def test_lead_removes_separators_and_stops_at_the_source_end():
    assert lead(SOURCE, " ".join(["x"] * 20)) == "my title one two three four five"
    assert lead("t <P> <P> a b <P>", "x x x") == "t a b"


def test_custom_separator():
    assert lead("t ||| a b ||| c", "x x x x", separator="|||") == "t a b c"
    assert lead("t ||| a <P> b", "x x x x", separator="|||") == "t a <P> b"


def test_cli_writes_one_lead_per_line(tmp_path, caplog):
    src, ref, out = tmp_path / "test.src", tmp_path / "test.tgt", tmp_path / "lead.hyp"
    src.write_text(f"{SOURCE}\nT <P> p q r s\n", encoding="utf-8")
    ref.write_text("a b c\nw x y z .\n", encoding="utf-8")
    with caplog.at_level(logging.INFO):
        cli_main(["--source", str(src), "--reference", str(ref), "--output", str(out)])
    assert out.read_text(encoding="utf-8") == "my title one\nT p q r s\n"
    assert f"wrote 2 Lead summaries to {out}" in caplog.text


def test_cli_line_count_mismatch(tmp_path, capsys):
    src, ref = tmp_path / "test.src", tmp_path / "test.tgt"
    src.write_text(f"{SOURCE}\n{SOURCE}\n", encoding="utf-8")
    ref.write_text("a b c\n", encoding="utf-8")
    assert cli_main(["--source", str(src), "--reference", str(ref), "--output",
                     str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-baseline lead: error: line counts differ: {src} has 2 lines, {ref} has 1 lines "
        f"(one example per line is expected)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["test.src", "test.tgt"]
