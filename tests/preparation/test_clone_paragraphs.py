"""002's clone-paragraph removal (Sec. 4: bigram recall against the target summary > 0.8):
:func:`clone_paragraphs` against a literal loop, the raw-WikiSum filter of
``fairseq-hier-to-raw --format wikisum --input-dir`` (on by default there), and the shards' converter, which
keeps the published paragraphs unless ``--clone-recall`` is given; the count is logged."""

import logging
import random
from collections import Counter

import pytest
import torch

from fairseq_hier.cli import to_raw
from fairseq_hier.preparation.wikisum import Converter, clone_paragraphs


def cli_main(argv):
    """fairseq-hier-to-raw --format wikisum, in-process: its exit status."""
    return to_raw.cli_main(["--format", "wikisum", *argv])


def literal_clones(paragraphs, target, threshold=0.8):
    """The rule written out: for each paragraph, its bigrams matched against the target's
    (each target bigram at most as often as the target has it), over the target's bigrams."""
    target = [t.lower() for t in target]
    wanted = Counter(zip(target, target[1:]))
    total = sum(wanted.values())
    out = []
    for j, para in enumerate(paragraphs):
        para = [t.lower() for t in para]
        have = Counter(zip(para, para[1:]))
        matched = 0
        for bigram, count in wanted.items():
            matched += min(count, have[bigram])
        recall = matched / total if total else 0.0
        if recall > threshold:
            out.append(j)
    return out


def test_clone_paragraphs_equals_the_literal_rule():
    rng = random.Random(0)
    words = [f"w{i}" for i in range(12)] + ["W1", "W2"]
    found = 0
    for _ in range(300):
        target = rng.choices(words, k=rng.randint(0, 12))
        paragraphs = []
        for _ in range(rng.randint(0, 6)):
            kind = rng.random()
            if kind < 0.3 and target:  # a copy of part of the target, plus some noise
                a = rng.randint(0, len(target) - 1)
                paragraphs.append(target[a:] + rng.choices(words, k=rng.randint(0, 3)))
            else:
                paragraphs.append(rng.choices(words, k=rng.randint(0, 10)))
        for threshold in (0.8, 0.5, 0.0):
            ours = clone_paragraphs(paragraphs, target, threshold)
            assert ours == literal_clones(paragraphs, target, threshold)
            found += len(ours)
    assert found > 100  # the draw has clones to find
    # exactly 0.8 is kept ("higher than 0.8"): 4 of the target's 5 bigrams
    target = "a b c d e f".split()
    assert clone_paragraphs(["a b c d e".split()], target) == []
    assert clone_paragraphs(["a b c d e f".split()], target) == [0]


def write_raw(folder):
    folder.mkdir()
    (folder / "test.src").write_text(
        "the title <P> a b c d e f g <P> x y z <P>  <P> A B C D E F G h\n"
        "t2 <P> p q r s\n")
    (folder / "test.tgt").write_text("a b c d e f g\np q r\n")


def test_raw_filter_removes_clones_by_default(tmp_path, caplog):
    write_raw(tmp_path / "crawl")
    with caplog.at_level(logging.INFO):
        assert cli_main(["--input-dir", str(tmp_path / "crawl"), "--output-dir",
                         str(tmp_path / "out"), "--splits", "test"]) == 0
    assert (tmp_path / "out" / "test.src").read_text() == "the title <P> x y z\nt2\n"
    assert (tmp_path / "out" / "test.tgt").read_text() == "a b c d e f g\np q r\n"
    assert ("clone paragraphs removed (bigram recall against the target > 0.8): 3"
            in caplog.text)
    assert "empty paragraphs dropped: 1" in caplog.text
    assert cli_main(["--input-dir", str(tmp_path / "crawl"), "--output-dir",
                     str(tmp_path / "keep"), "--splits", "test", "--clone-recall", "1"]) == 0
    assert (tmp_path / "keep" / "test.src").read_text().splitlines()[1] == "t2 <P> p q r s"


@pytest.mark.parametrize("argv, message", [
    ([], "give either --input-prefix (the published shards) or --input-dir"),
    (["--input-dir", "r", "--input-prefix", "p"], "give either --input-prefix"),
    (["--input-prefix", "p"], "--input-prefix needs --spm"),
    (["--input-dir", "r", "--clone-recall", "1.5"], "--clone-recall must be in [0, 1] (a bigram "
                                              "recall), got 1.5"),
])
def test_one_line_errors(tmp_path, capsys, argv, message):
    assert cli_main([*argv, "--output-dir", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"fairseq-hier-to-raw: error: {message}") and "\n" not in err


def test_shards_keep_their_paragraphs_unless_asked(tmp_path, caplog):
    import sentencepiece as spm

    from wikisum_samples import spm_model

    # hiersumm's spm9998_3.model where ../shared/wikisum has it, else a small one with its pieces
    model = spm_model(tmp_path)
    sp = spm.SentencePieceProcessor(model_file=str(model))
    t, s, e, q = (sp.piece_to_id(p) for p in ("<T>", "<S>", "</S>", "<Q>"))
    title = sp.encode("the bridge")
    summary = sp.encode("the castle was built near the coast in 1850 . the village is known by "
                        "the lake in 1901 .")
    other = sp.encode("the school was opened on the hill in 1999 .")
    src = [title + [t] + summary, title + [t] + other, title + [t] + summary[:4]]
    tgt = [s] + summary + [q] + sp.encode("the road") + [e]
    torch.save([{"src": src, "tgt": tgt, "tgt_str": "<t> x </t>"}], tmp_path / "WIKI.test.0.pt")
    for recall, kept in ((None, 3), (0.8, 2)):
        caplog.clear()
        conv = Converter(str(model), clone_recall=recall)
        out = tmp_path / f"out{recall}"
        out.mkdir()
        with caplog.at_level(logging.INFO):
            conv.convert_split(str(tmp_path / "WIKI"), "test", str(out))
        line = (out / "test.src").read_text().splitlines()[0]
        assert len(line.split(" <P> ")) == 1 + kept
        key = "clone paragraphs removed (bigram recall against the target > 0.8)"
        assert conv.counts[key] == (0 if recall is None else 1)
        assert (key in conv.counts) == (recall is not None)
