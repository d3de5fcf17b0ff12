"""Paragraph graphs of 002 (Eq. 24): the dataset's paragraphs from raw text, the tf-idf graph and
the approximate discourse graph checked by hand, their files (round trip, crop, checks) and the
``fairseq-hier-graph`` command end to end."""

import pickle
import random

import numpy as np
import pytest

from conftest import run_cli
from fairseq_hier.data.paragraph_graph import (ParagraphGraphs, ParagraphGraphWriter,
                                               write_paragraph_graphs)
from fairseq_hier.data.paragraphs import segment, text_paragraphs
from fairseq_hier.errors import HierError
from fairseq_hier.text.graphs import (DISCOURSE_MARKERS, adg_graph, detokenize, load_ner,
                                      opening_markers, tfidf_graph)

SEP, EOS = 7, 2
IDS = {"a": 10, "b": 11, "c": 12, "t": 13, "<P>": SEP}
# title 'summit' shares paragraph 0; entities: Merkel, Macron, Paris | Merkel, Berlin (opens with
# "However") | Macron, Paris (opens with "Meanwhile"); the DATEs (Monday, 2019) do not count
ADG_LINE = ("summit <P> Angela Merkel met Emmanuel Macron in Paris on Monday . <P> However , "
            "Angela Merkel flew back to Berlin in 2019 . <P> Meanwhile , Emmanuel Macron stayed "
            "in Paris until 2019 .")
ADG_SPM = ("▁summit <P> ▁Angel a ▁Mer kel ▁met ▁Emmanuel ▁Mac ron ▁in ▁Paris ▁on ▁Monday . <P> "
           "▁However , ▁Angel a ▁Mer kel ▁flew ▁back ▁to ▁Berlin ▁in ▁20 19 . <P> ▁Meanwhile , "
           "▁Emmanuel ▁Mac ron ▁stayed ▁in ▁Paris ▁until ▁20 19 .")
# shared entities: (0,1) merkel; (0,2) macron, paris; (1,2) none; markers: +1 on (0,1), (1,2)
ADG_EXPECTED = [[0, 2, 2],
                [2, 0, 1],
                [2, 1, 0]]
# paragraphs [alpha beta .] [ALPHA gamma ,] [alpha] (title 'alpha' opens paragraph 0, an empty
# paragraph dropped); idf(alpha) = ln(4/4) + 1 = 1, idf(beta) = idf(gamma) = ln(4/2) + 1 = u;
# cos(0, 1) = 1 / (1 + u^2), cos(0, 2) = cos(1, 2) = 1 / sqrt(1 + u^2)
TFIDF_LINE = "alpha <P> beta . <P> ALPHA gamma , <P> <P> alpha"
TFIDF_EXPECTED = [[1.0, 0.2586153, 0.5085423],
                  [0.2586153, 1.0, 0.5085423],
                  [0.5085423, 0.5085423, 1.0]]


@pytest.fixture(scope="module")
def nlp():
    return load_ner()


# ------------------------------------------------------------------ paragraphs from raw text
def test_text_paragraphs_rules():
    assert text_paragraphs("my title <P> a b <P> c") == [["my", "title", "a", "b"], ["c"]]
    assert text_paragraphs("t <P> <P> a <P>") == [["t"], ["a"]]  # title alone fills slot 0
    assert text_paragraphs("<P> <P> a b <P> c") == [["a", "b"], ["c"]]
    assert text_paragraphs("t ||| a <P> b ||| c", "|||") == [["t", "a", "<P>", "b"], ["c"]]
    for invalid in ("", "title only", "<P> <P>", "t <P>", "t <P> <P>"):
        assert text_paragraphs(invalid) == []


def _random_line(rng):
    line = " ".join(rng.choices(["a", "b", "c", "<P>"], weights=[3, 2, 2, 3], k=rng.randint(0, 12)))
    edge = rng.random()
    if edge < 0.15:
        line = "<P> " + line  # empty title
    elif edge < 0.3:
        line = "t <P> <P> " + line  # empty first paragraph
    elif edge < 0.4:
        line += " <P> <P>"  # trailing separators
    return line


def test_text_paragraphs_agree_with_segment():
    """Same paragraphs, tokens and errors as the dataset's vectorised rules, on random lines."""
    rng = random.Random(5)
    lines = [_random_line(rng) for _ in range(400)]
    ids = [[IDS[t] for t in line.split()] + [EOS] for line in lines]
    tokens = np.concatenate([np.array(x) for x in ids])
    lengths = np.array([len(x) for x in ids])
    full = segment(tokens, lengths, SEP, EOS, 10 ** 6, 10 ** 6)
    cut = segment(tokens, lengths, SEP, EOS, 2, 3)
    name = {v: k for k, v in IDS.items()}
    start = 0
    for i, line in enumerate(lines):
        expected = text_paragraphs(line)
        sl = slice(start, start + lengths[i])
        start += lengths[i]
        assert bool(full.error[i]) == (expected == []), line
        if full.error[i]:
            continue
        got = [[] for _ in range(full.num_paragraphs[i])]
        for t, p, keep in zip(tokens[sl], full.paragraph[sl], full.keep[sl]):
            if keep:
                got[p].append(name[int(t)])
        assert got == expected, line
        assert full.num_paragraphs[i] + full.cut_paragraphs[i] == len(expected)
        assert cut.num_paragraphs[i] + cut.cut_paragraphs[i] == len(expected)


# --------------------------------------------------------------------------------- builders
def test_tfidf_graph_by_hand():
    np.testing.assert_allclose(tfidf_graph(text_paragraphs(TFIDF_LINE)), TFIDF_EXPECTED,
                               atol=1e-6)


def test_tfidf_paragraph_without_terms_is_linked_to_nothing():
    np.testing.assert_allclose(tfidf_graph([["x"], [".", ","], ["X", "!"]]),
                               [[1, 0, 1], [0, 0, 0], [1, 0, 1]], atol=1e-6)
    np.testing.assert_array_equal(tfidf_graph([[","], ["."]]), np.zeros((2, 2)))


def test_adg_by_hand_plain_and_sentencepiece(nlp):
    for line in (ADG_LINE, ADG_SPM):
        np.testing.assert_array_equal(adg_graph(text_paragraphs(line), nlp), ADG_EXPECTED)


def test_detokenize_and_markers():
    assert detokenize(["▁New", "▁Y", "ork", "."], True) == "New York."
    assert detokenize(["New", "York", "."], False) == "New York ."
    assert opening_markers("However, it rained.") == 1
    assert opening_markers("\"On the other hand\" ...") == 1
    assert opening_markers("Howevers are rare.") == 0
    assert opening_markers("It rained; however, ...") == 0
    # a paragraph opens with one marker at most
    for m in DISCOURSE_MARKERS:
        assert not any(o != m and o.startswith(m + " ") for o in DISCOURSE_MARKERS), m


# ---------------------------------------------------------------------------------- storage
MATRICES = [np.arange(9, dtype=np.float32).reshape(3, 3) / 8, np.array([[0.5]]),
            np.arange(16, dtype=np.float32).reshape(4, 4)]


def test_round_trip_and_crop(tmp_path):
    prefix = str(tmp_path / "d" / "test.graph.tfidf")
    assert write_paragraph_graphs(prefix, MATRICES) == 3
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "test.graph.tfidf.offsets.npy", "test.graph.tfidf.sizes.npy",
        "test.graph.tfidf.values.npy"]
    graphs = ParagraphGraphs(prefix)
    assert len(graphs) == 3 and graphs.sizes.tolist() == [3, 1, 4]
    assert graphs.offsets.tolist() == [0, 9, 10, 26] and graphs.values.dtype == np.float16
    for i, m in enumerate(MATRICES):
        got = graphs.matrix(i)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, m, rtol=1e-3)  # float16: 3 significant digits
    np.testing.assert_array_equal(graphs.matrix(2, max_paragraphs=2), [[0, 1], [4, 5]])
    np.testing.assert_array_equal(graphs.matrix(1, max_paragraphs=5), [[0.5]])
    graphs.check(np.array([3, 1, 4]), "data-bin/test.src-tgt.src")
    # a spawned data loader worker gets the prefix, not the data
    blob = pickle.dumps(graphs)
    assert len(blob) < 400 and pickle.loads(blob).matrix(2).tolist() == graphs.matrix(2).tolist()


def test_writer_leaves_nothing_on_failure(tmp_path):
    prefix = str(tmp_path / "test.graph.x")
    with pytest.raises(ValueError, match=r"graph 2: .* square P x P matrix, got shape \(2, 3\)"):
        with ParagraphGraphWriter(prefix) as w:
            w.add(np.eye(2))
            w.add(np.zeros((2, 3)))
    assert list(tmp_path.iterdir()) == []


def test_check_and_missing_file_messages(tmp_path):
    prefix = str(tmp_path / "test.graph.adg")
    with pytest.raises(HierError) as e:
        ParagraphGraphs(prefix)
    assert (f"no paragraph graphs at {prefix}" in str(e.value) and
            f"fairseq-hier-graph --source RAW/SPLIT.src --kind adg --output-prefix {prefix}"
            in str(e.value))
    write_paragraph_graphs(prefix, MATRICES)
    graphs = ParagraphGraphs(prefix)
    with pytest.raises(ValueError, match=rf"{prefix}\.sizes\.npy has 3 examples, data/t\.src has "
                                         r"2; write the graphs again"):
        graphs.check(np.array([3, 1]), "data/t.src")
    with pytest.raises(ValueError, match=rf"the example on line 2 has 1 graph nodes in {prefix}\."
                                         r"sizes\.npy but 2 paragraphs in data/t\.src \(2 of 3 "
                                         r"examples differ\)"):
        graphs.check(np.array([3, 2, 5]), "data/t.src")


# ---------------------------------------------------------------------------------- command
@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("graph") / "test.src"
    path.write_text(f"{ADG_LINE}\n{TFIDF_LINE}\n{ADG_SPM}\nt <P> a b <P> b c <P> c d\n",
                    encoding="utf-8")
    return path


def test_command_tfidf_with_workers(source, tmp_path):
    out = run_cli("fairseq-hier-graph", "--input", source, "--kind", "tfidf", "--output-prefix",
                  tmp_path / "w2" / "test.graph.tfidf", "--workers", "2", "--batch-size", "1",
                  "--no-progress-bar").stdout
    assert "wrote 4 tfidf graphs (12 paragraphs)" in out and "examples/s" in out
    graphs = ParagraphGraphs(str(tmp_path / "w2" / "test.graph.tfidf"))
    lines = source.read_text(encoding="utf-8").splitlines()
    assert graphs.sizes.tolist() == [len(text_paragraphs(line)) for line in lines]
    for i, line in enumerate(lines):
        np.testing.assert_allclose(graphs.matrix(i), tfidf_graph(text_paragraphs(line)),
                                   atol=1e-3)


def test_command_adg(source, tmp_path, nlp):
    out = run_cli("fairseq-hier-graph", "--input", source, "--kind", "adg", "--output-prefix",
                  tmp_path / "test.graph.adg", "--batch-size", "3", "--no-progress-bar").stdout
    assert "wrote 4 adg graphs (12 paragraphs)" in out and "paragraphs/s with 1 worker(s)" in out
    graphs = ParagraphGraphs(str(tmp_path / "test.graph.adg"))
    np.testing.assert_array_equal(graphs.matrix(0), ADG_EXPECTED)
    np.testing.assert_array_equal(graphs.matrix(2), ADG_EXPECTED)
    lines = source.read_text(encoding="utf-8").splitlines()
    np.testing.assert_array_equal(graphs.matrix(1), adg_graph(text_paragraphs(lines[1]), nlp))


def test_command_one_line_errors(tmp_path):
    bad = tmp_path / "bad.src"
    bad.write_text("t <P> a\nt <P> b\njust a title\nt <P> c\n", encoding="utf-8")
    latin = tmp_path / "latin.src"
    latin.write_bytes(b"t <P> a\nt <P> caf\xe9\n")
    prefix = tmp_path / "out" / "test.graph.tfidf"
    cases = [(bad, f"{bad}:3: no paragraph (expected 'title <P> paragraph 1 <P> ...'"),
             (latin, f"{latin}:2: not UTF-8 text (invalid continuation byte"),
             (tmp_path / "none.src", f"cannot read {tmp_path / 'none.src'}: No such file")]
    for path, message in cases:
        proc = run_cli("fairseq-hier-graph", "--input", path, "--kind", "tfidf",
                       "--output-prefix", prefix, check=False)
        assert proc.returncode == 1
        assert proc.stdout.count("\n") == 1, proc.stdout
        assert proc.stdout.startswith(f"fairseq-hier-graph: error: {message}"), proc.stdout
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
