"""ParsingSum's dependency data (003): ``fairseq-hier-parse spacy`` (spaCy -> CoNLL-U + tokenised
source), the CoNLL-U reader, the projection of word heads onto subword pieces, the int16 codes
and their ``.bin/.idx`` files, and ``fairseq-hier-parse project``'s errors."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairseq_hier.data.dependency_codes import CONTINUATION, NOT_A_WORD, DependencyParses, decode
from fairseq_hier.preparation.dependencies import (DependencyWriter, match_words, project_heads,
                                                   read_conllu, source_words)
from fairseq_hier.errors import HierError
from fairseq_hier.preparation.parse import ParseCounts, conllu_sentences

ROOT = Path(__file__).resolve().parents[2]
N = NOT_A_WORD
C = CONTINUATION


def run_module(name, *args):
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", f"fairseq_hier.cli.{name}", *map(str, args)],
                          cwd=ROOT, env=env, text=True, capture_output=True)


def deps_main(*args):
    from fairseq_hier.cli.parse import cli_main

    return cli_main(["project", *map(str, args)])


@pytest.fixture(scope="module")
def nlp():
    from fairseq_hier.preparation.parse import DEFAULT_MODEL, load_parser

    return load_parser(DEFAULT_MODEL)


def conllu(*sentences):
    """A CoNLL-U text from ``(ID, FORM, HEAD)`` rows; ``"doc"`` opens an example."""
    lines = []
    for s in sentences:
        if s == "doc":
            lines.append("# newdoc")
            continue
        for wid, form, head in s:
            lines.append("\t".join([wid, form, "_", "_", "_", "_", head, "dep", "_", "_"]))
        lines.append("")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- fairseq-hier-parse spacy
RAW = [
    "The cat sat on the mat. It was happy! <P> Dogs don't bark at night.",
    "<P> First doc here. <P>  \t <P> Third doc, with a\u00a0space.",
    "",
]
TOK = [
    "The cat sat on the mat . It was happy ! <P> Dogs do n't bark at night .",
    "<P> First doc here . <P> <P> Third doc , with a space .",
    "",
]


def check_conllu(path):
    """Every sentence: IDs 1..n, heads in 0..n, exactly one HEAD 0. Returns the tokens per
    example (``# newdoc``) and the sentence count."""
    examples, sentences, rows = [], 0, []
    for line in Path(path).read_text(encoding="utf-8").split("\n"):
        if line.startswith("# newdoc id = "):
            assert int(line.split("= ")[1]) == len(examples) + 1
            examples.append([])
        elif line.startswith("#"):
            continue
        elif line:
            cols = line.split("\t")
            assert len(cols) == 10
            rows.append(cols)
        elif rows:
            assert [int(c[0]) for c in rows] == list(range(1, len(rows) + 1))
            heads = [int(c[6]) for c in rows]
            assert all(0 <= h <= len(rows) for h in heads) and heads.count(0) == 1, rows
            examples[-1] += [c[1] for c in rows]
            sentences, rows = sentences + 1, []
    return examples, sentences


def test_parse_cli(tmp_path):
    (tmp_path / "train.src").write_text("\n".join(RAW) + "\n", encoding="utf-8")
    proc = run_module("parse", "spacy", "--input", tmp_path / "train.src", "--output-prefix",
                      tmp_path / "parsed" / "train", "--no-progress-bar")
    assert proc.returncode == 0, proc.stderr
    assert "parsed 3 lines (7 segments, 5 sentences, 29 tokens)" in proc.stderr
    assert "sentences/s with 1 worker(s)" in proc.stderr
    tok = (tmp_path / "parsed" / "train.tok").read_text(encoding="utf-8")
    assert tok.split("\n") == TOK + [""]
    tokens, sentences = check_conllu(tmp_path / "parsed" / "train.conllu")
    assert sentences == 5
    assert tokens == [[w for w in line.split() if w != "<P>"] for line in TOK]
    # the reader gets the same examples, one root per sentence
    parsed = list(read_conllu(str(tmp_path / "parsed" / "train.conllu")))
    assert [p.tokens for p in parsed] == tokens
    assert [p.heads.count(-1) for p in parsed] == [3, 2, 0]

    # parse project on the tokenised lines themselves (--subword none): one word per token
    prefix = tmp_path / "bin" / "train.parse.spacy"
    assert deps_main("--conllu", tmp_path / "parsed" / "train.conllu", "--source",
                     tmp_path / "parsed" / "train.tok", "--subword", "none",
                     "--output-prefix", prefix) == 0
    parses = DependencyParses(str(prefix))
    assert list(parses.sizes) == [len(line.split()) + 1 for line in TOK]
    for i, p in enumerate(parsed):
        word, head = decode(parses.codes(i))
        is_word = word >= 0
        assert list(word[is_word]) == list(range(len(p.tokens)))
        assert list(head[is_word]) == p.heads


def test_parse_lines_whitespace_and_separators(nlp, tmp_path):
    import io

    conllu_out, tok_out, counts = io.StringIO(), io.StringIO(), ParseCounts()
    lines = ["<P>  <P> \n", "Hello  world .\n", "A\tB <P>   <P>C"]
    from fairseq_hier.preparation.parse import parse_lines

    n = parse_lines(iter(lines), nlp, conllu_out, tok_out, batch_size=2, counts=counts)
    assert tok_out.getvalue() == "<P> <P>\nHello world .\nA B <P> <P> C\n"
    assert n == counts.sentences == conllu_out.getvalue().count("# sent_id =")
    assert (counts.lines, counts.segments) == (3, 7)
    text = conllu_out.getvalue()
    assert text.startswith("# newdoc id = 1\n# newdoc id = 2\n# newpar\n# sent_id = 2-1\n")
    path = tmp_path / "p.conllu"
    path.write_text(text, encoding="utf-8")
    assert [e.tokens for e in read_conllu(str(path))] == [[], ["Hello", "world", "."],
                                                          ["A", "B", "C"]]


def test_space_head_gets_root(nlp):
    from spacy.tokens import Doc

    # "world" depends on the newline token, which is dropped: HEAD 0, counted
    doc = Doc(nlp.vocab, words=["Hello", "\n", "world", "!"], spaces=[False, False, False, False],
              heads=[0, 0, 1, 0], deps=["ROOT", "dep", "dep", "punct"])
    counts = ParseCounts()
    blocks, kept = conllu_sentences(doc, 4, 2, counts)
    assert kept == ["Hello", "world", "!"]
    assert counts.space_heads == 1 and counts.sentences == 1 and counts.tokens == 3
    rows = [line.split("\t") for line in blocks[0].strip().split("\n") if line[0] != "#"]
    assert blocks[0].startswith("# sent_id = 4-2\n# text = Hello world!\n")
    assert [(r[0], r[1], r[6], r[9]) for r in rows] == [
        ("1", "Hello", "0", "_"), ("2", "world", "0", "SpaceAfter=No"), ("3", "!", "1", "_")]


# ------------------------------------------------------------------------ words from pieces
def test_source_words_sentencepiece():
    pieces = ("\u2581The \u2581c at \u2581sat <P> \u2581 ! \u2581don ' t \u2581caf\u00e9 "
              "<0x21>").split()
    words, piece_word = source_words(pieces, "sentencepiece")
    assert words == ["The", "cat", "sat", "!", "don't", "caf\u00e9!"]
    assert piece_word.tolist() == [0, 1, 1, 2, -1, 3, 3, 4, 4, 4, 5, 5]
    # a bare U+2581 joins the next piece even when that one starts a word itself
    words, piece_word = source_words(["\u2581", "\u2581x", "<P>", "y"], "sentencepiece")
    assert (words, piece_word.tolist()) == (["x", "y"], [0, 0, -1, 1])


def test_source_words_bpe_and_none():
    words, piece_word = source_words("<P> The ca@@ t sa@@ t . <P> do n@@ 't".split(), "bpe")
    assert words == ["The", "cat", "sat", ".", "do", "n't"]
    assert piece_word.tolist() == [-1, 0, 1, 1, 2, 2, 3, -1, 4, 5, 5]
    words, piece_word = source_words("a@@ <P> b".split(), "bpe")  # a separator ends a word
    assert (words, piece_word.tolist()) == (["a", "b"], [0, -1, 1])
    words, piece_word = source_words("ca@@ t <P> .".split(), "none")
    assert (words, piece_word.tolist()) == (["ca@@", "t", "."], [0, 1, -1, 2])


# ------------------------------------------------------------------- projection and decode
def test_projection_and_decode_bpe():
    # "The cat sat . <P> do n't": The->cat, cat->sat, sat root, .->sat, do->n't?, n't root
    _, piece_word = source_words("The ca@@ t sat . <P> do n@@ 't".split(), "bpe")
    codes = project_heads(piece_word, [1, 2, -1, 2, 5, -1])
    assert codes.dtype == np.int16
    assert codes.tolist() == [1, 1, C, 0, -1, N, 1, 0, C, N]
    word, head = decode(codes)
    assert word.dtype == head.dtype == np.int64
    assert word.tolist() == [0, 1, 1, 2, 3, -1, 4, 5, 5, -1]
    assert head.tolist() == [1, 2, 2, -1, 2, -1, 5, -1, -1, -1]


MWT = conllu(
    "doc",
    [("1", "The", "2"), ("2", "cat", "3"), ("3", "sat", "0"), ("4", ".", "3")],
    [("1-2", "don't", "_"), ("1", "do", "3"), ("2", "n't", "3"), ("3", "stop", "0"),
     ("4", "!", "3")],
    "doc",
    # dámelo = da (root) + me + lo, both attached to da; "ahora" attaches to a word of the range
    [("1-3", "dámelo", "_"), ("1", "da", "0"), ("2", "me", "1"), ("3", "lo", "1"),
     ("4", "ahora", "1"), ("4.1", "da", "_"), ("5", ".", "1")],
    # a range whose second word is the root and whose first word points at it
    [("1-2", "Bye", "_"), ("1", "By", "2"), ("2", "e", "0")],
)
MWT_SOURCE = [
    "\u2581The \u2581c at \u2581sat \u2581. <P> \u2581don ' t \u2581stop \u2581 !",
    "<P> \u2581dá me lo \u2581ahora \u2581. <P> <P> \u2581Bye",
]


def test_multiword_tokens_empty_nodes_and_decode(tmp_path):
    (tmp_path / "p.conllu").write_text(MWT, encoding="utf-8")
    (tmp_path / "train.src").write_text("\n".join(MWT_SOURCE) + "\n", encoding="utf-8")
    examples = list(read_conllu(str(tmp_path / "p.conllu")))
    assert [(e.tokens, e.heads, e.line) for e in examples] == [
        (["The", "cat", "sat", ".", "don't", "stop", "!"], [1, 2, -1, 2, 5, -1, 5], 1),
        (["dámelo", "ahora", ".", "Bye"], [-1, 0, 0, -1], 13)]

    prefix = tmp_path / "bin" / "train.parse.spacy"
    assert deps_main("--conllu", tmp_path / "p.conllu", "--source", tmp_path / "train.src",
                     "--subword", "sentencepiece", "--output-prefix", prefix) == 0
    parses = DependencyParses(str(prefix))
    assert len(parses) == 2 and parses.sizes.tolist() == [13, 10]
    codes = [parses.codes(i) for i in range(2)]
    assert all(c.dtype == np.int16 for c in codes)
    assert codes[0].tolist() == [1, 1, C, 0, -1, N, 1, C, C, 0, -1, C, N]
    assert codes[1].tolist() == [N, 0, C, C, -1, -2, N, N, 0, N]
    assert [a.tolist() for a in decode(codes[0])] == [
        [0, 1, 1, 2, 3, -1, 4, 4, 4, 5, 6, 6, -1],
        [1, 2, 2, -1, 2, -1, 5, 5, 5, -1, 5, 5, -1]]
    assert [a.tolist() for a in decode(codes[1])] == [
        [-1, 0, 0, 0, 1, 2, -1, -1, 3, -1],
        [-1, -1, -1, -1, 0, 0, -1, -1, -1, -1]]


# ----------------------------------------------------------------------------- the errors
def test_token_mismatch_error(tmp_path, capsys):
    (tmp_path / "p.conllu").write_text(MWT, encoding="utf-8")
    source = [MWT_SOURCE[0].replace("' t", "\u2581' t"), MWT_SOURCE[1]]
    (tmp_path / "train.src").write_text("\n".join(source) + "\n", encoding="utf-8")
    prefix = tmp_path / "train.parse.spacy"
    assert deps_main("--conllu", tmp_path / "p.conllu", "--source", tmp_path / "train.src",
                     "--subword", "sentencepiece", "--output-prefix", prefix) == 1
    err = capsys.readouterr().err.strip().split("\n")[-1]
    assert err == (f"fairseq-hier-parse project: error: {tmp_path}/p.conllu example 1 (# newdoc "
                   f"on line "
                   f"1) does not match {tmp_path}/train.src line 1: token 5 is 'don't' in the "
                   f"parse, 'don' in the source")
    assert not list(tmp_path.glob("train.parse.spacy*"))  # nothing left, not even .tmp files

    # a separator in the parse is never a word
    assert match_words(["a", "<P>", "b"], ["a", "b"]) == (
        "token 2 is '<P>' in the parse, 'b' in the source (the separator '<P>' is never a "
        "word: it must not be a token of the parse)")
    assert match_words(["a"], ["a", "b"]) == (
        "token 2 is 'b' in the source, missing in the parse (1 tokens, 2 words in the source)")
    assert match_words(["\uff21"], ["A"]) is None  # NFKC, as sentencepiece normalises


def test_example_count_mismatch(tmp_path, capsys):
    (tmp_path / "p.conllu").write_text(MWT, encoding="utf-8")
    (tmp_path / "train.src").write_text("\n".join(MWT_SOURCE + ["\u2581x", "\u2581y"]) + "\n",
                                          encoding="utf-8")
    assert deps_main("--conllu", tmp_path / "p.conllu", "--source", tmp_path / "train.src",
                     "--subword", "sentencepiece", "--output-prefix", tmp_path / "d") == 1
    assert capsys.readouterr().err.strip().split("\n")[-1] == (
        f"fairseq-hier-parse project: error: {tmp_path}/p.conllu has 2 examples ('# newdoc' lines), "
        f"{tmp_path}/train.src has 4 lines: one example per source line is expected")
    assert not list(tmp_path.glob("d.*"))


@pytest.mark.parametrize("text,message", [
    (conllu([("1", "a", "0")]), "1: a sentence before the first '# newdoc' line (each example "
                                "must start with '# newdoc')"),
    ("# newdoc\n1\ta\t_\t_\t_\t_\t0\t_\t_\n",
     "2: expected 10 tab-separated columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS "
     "MISC), got 9"),
    (conllu("doc", [("1", "a", "0"), ("2", "b", "one")]), "3: HEAD 'one' is not an integer"),
    (conllu("doc", [("1", "a", "0"), ("2", "b", "3")]),
     "3: HEAD 3 is outside the sentence (its words are 1..2, 0 for the root)"),
    (conllu("doc", [("1", "a", "0"), ("3", "b", "1")]),
     "3: ID '3' where word 2 was expected (IDs are N, N-M for a multiword token or N.M for an "
     "empty node)"),
])
def test_malformed_conllu(tmp_path, text, message):
    path = tmp_path / "bad.conllu"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as e:
        list(read_conllu(str(path)))
    assert str(e.value) == f"{path}:{message}"


def test_offset_beyond_int16():
    with pytest.raises(ValueError, match=r"example 3: word 1 is 32767 words from its head"):
        project_heads(np.arange(32768), [32767] + [-1] * 32767, example=3)
    assert project_heads(np.arange(32767), [32766] + [-1] * 32766)[0] == 32766


# --------------------------------------------------------------------------- .bin and .idx
def test_int16_round_trip_and_check(tmp_path):
    from fairseq.data.indexed_dataset import MMapIndexedDataset

    prefix = str(tmp_path / "valid.parse.spacy")
    arrays = [np.array([N, 1, C, 0, -32766, 32766, N], dtype=np.int16),
              np.array([N], dtype=np.int16), np.array([0, -1, N], dtype=np.int16)]
    with DependencyWriter(prefix) as writer:
        for a in arrays:
            writer.add(a)
    assert sorted(os.listdir(tmp_path)) == ["valid.parse.spacy.bin", "valid.parse.spacy.idx"]
    assert os.path.getsize(prefix + ".bin") == 2 * sum(len(a) for a in arrays)  # 2 bytes a code
    parses = DependencyParses(prefix)
    assert len(parses) == 3 and parses.sizes.tolist() == [7, 1, 3]
    for i, a in enumerate(arrays):
        assert parses.codes(i).dtype == np.int16
        assert np.array_equal(parses.codes(i), a)
    fairseq_view = MMapIndexedDataset(prefix)  # fairseq's own reader: int64 tensors
    assert fairseq_view._index.dtype == np.int16
    assert fairseq_view[0].tolist() == arrays[0].tolist()

    parses.check(np.array([7, 1, 3]), "data-bin/valid.src-tgt.src")
    with pytest.raises(ValueError) as e:
        parses.check(np.array([7, 1, 3, 4]), "data-bin/valid.src-tgt.src")
    assert str(e.value) == (
        f"dependency parse does not match the source: {prefix}.idx has 3 examples, "
        f"data-bin/valid.src-tgt.src has 4 (rerun fairseq-hier-parse project on the source you "
        f"binarized)")
    with pytest.raises(ValueError) as e:
        parses.check(np.array([7, 2, 2]), "data-bin/valid.src-tgt.src")
    assert str(e.value) == (
        f"dependency parse does not match the source: {prefix}.idx example 2 (line 2): 1 codes "
        f"in the parse, 2 tokens in data-bin/valid.src-tgt.src (2 of 3 examples differ); rerun "
        f"fairseq-hier-parse project on the source you binarized")
    with pytest.raises(HierError, match="write it with fairseq-hier-parse project"):
        DependencyParses(str(tmp_path / "missing"))


def test_interrupted_writer_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with DependencyWriter(str(tmp_path / "x")) as writer:
            writer.add(np.array([0, N], dtype=np.int16))
            raise RuntimeError("interrupted")
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------- one-line CLI errors
def test_cli_errors_are_one_line(tmp_path):
    (tmp_path / "a.src").write_text("One line.\n", encoding="utf-8")
    proc = run_module("parse", "spacy", "--input", tmp_path / "a.src", "--output-prefix",
                      tmp_path / "p",
                      "--model", "no_such_spacy_model", "--no-progress-bar")
    assert proc.returncode == 1
    assert proc.stderr == ("fairseq-hier-parse spacy: error: spaCy model 'no_such_spacy_model' is "
                           "not "
                           "installed (pip install it, or name another with --model)\n")
    assert not list(tmp_path.glob("p.*"))
    (tmp_path / "bad.conllu").write_text("# newdoc id = 1\n1\ta\t_\t_\t_\t_\tx\t_\t_\t_\n",
                                         encoding="utf-8")
    proc = run_module("parse", "project", "--conllu", tmp_path / "bad.conllu", "--source",
                      tmp_path / "a.src", "--subword", "none", "--output-prefix", tmp_path / "d")
    assert proc.returncode == 1
    assert proc.stderr == f"fairseq-hier-parse project: error: {tmp_path}/bad.conllu:2: HEAD 'x' is not " \
                          f"an integer\n"
    assert not list(tmp_path.glob("d.*"))
