"""The `rouge` command (official ROUGE-1.5.5, files2rouge's interface) and the Lead baseline."""

import pytest

from conftest import run_cli
from fairseq_hier.cli import rouge
from fairseq_hier.cli.lead import lead

needs_official = pytest.mark.skipif(rouge.official_available() is not None,
                                    reason="ROUGE-1.5.5 needs perl + XML::Parser")


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_official
def test_hand_computed_scores_and_report_layout(tmp_path):
    refs = write(tmp_path, "refs", ["the cat sat on the mat . it was happy .", "a b c d ."])
    hyps = write(tmp_path, "hyps", ["the cat sat . it was sad .", "a b c d ."])
    out = run_cli("rouge", refs, hyps).stdout
    scores = rouge.parse_report(out)
    # example 1: 5 of 9 reference words (punctuation dropped), 5 of 6 hypothesis words
    assert scores["rouge-1"]["r"] == pytest.approx((5 / 9 + 1) / 2, abs=2e-5)
    assert scores["rouge-1"]["p"] == pytest.approx((5 / 6 + 1) / 2, abs=2e-5)
    for name in ("ROUGE-1", "ROUGE-2", "ROUGE-L"):
        assert f"1 {name} Average_F: " in out and "(95%-conf.int. " in out


@needs_official
def test_identical_files_score_one():
    s = rouge.rouge_scores(["x y z . u v ."], ["x y z . u v ."])
    assert all(s[k][m] == 1.0 for k in ("rouge-1", "rouge-2", "rouge-l") for m in "rpf")


@needs_official
def test_rouge_l_is_summary_level_over_split_sentences():
    # union-LCS over sentences: swapped sentence order keeps ROUGE-L at 1 (a flat LCS would not)
    s = rouge.rouge_scores(["a b c . d e f ."], ["d e f . a b c ."])
    assert s["rouge-l"]["f"] == 1.0 and s["rouge-2"]["f"] < 1.0


@needs_official
def test_wordnet_exception_db_is_built_and_used():
    assert rouge.wordnet_db_ok()
    # "swam" -> "swim" only through WordNet's exception list (Porter keeps "swam")
    s = rouge.rouge_scores(["the children swam home ."], ["the children swim home ."])
    assert s["rouge-1"]["r"] == 1.0


def test_line_count_mismatch_is_an_error(tmp_path):
    refs = write(tmp_path, "refs", ["a b .", "c d ."])
    hyps = write(tmp_path, "hyps", ["a b ."])
    proc = run_cli("rouge", refs, hyps, check=False)
    assert proc.returncode != 0
    assert f"line counts differ: {refs} has 2 references, {hyps} has 1 hypotheses" in proc.stdout


def test_fallback_announces_itself(tmp_path):
    refs = write(tmp_path, "refs", ["the cat sat on the mat ."])
    proc = run_cli("rouge", refs, refs, "--fallback")
    assert "NOT OFFICIAL ROUGE-1.5.5" in proc.stdout
    assert "1 ROUGE-1 Average_F: 1.00000" in proc.stdout


def test_lead_takes_reference_length_title_first():
    src = "my title <P> one two three <P> four five"
    assert lead(src, "x x x x") == "my title one two"
    assert lead(src, "x x x x x x x x x x") == "my title one two three four five"
