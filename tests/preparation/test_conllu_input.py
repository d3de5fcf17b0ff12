"""Any parser's CoNLL-U through ``fairseq-hier-parse project`` (docs/data-formats.md, "CoNLL-U from any
parser"): a file in the form Stanza writes (``# text``/``# sent_id`` comments, MISC offsets,
multiword tokens, ``# newdoc``/``# newpar`` added per example and segment) gives the same codes as
the spaCy path (:func:`fairseq_hier.preparation.parse.write_example`) on the same tokens and trees,
and the arcs written by hand."""

from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli
from fairseq_hier.data.dependency_codes import CONTINUATION, NOT_A_WORD, DependencyParses, decode
from fairseq_hier.preparation.dependencies import read_conllu
from fairseq_hier.preparation.parse import ParseCounts, write_example

N, C = NOT_A_WORD, CONTINUATION

# Stanza's CoNLL-U ("{:C}".format(doc)) of two examples, one Document per segment, with the
# '# newdoc id' and '# newpar' lines that the conversion in the docs adds; example 2 is an empty
# source line (no sentence) and example 3 a multi-document line (empty title slot).
# "don't" and "dámelo" are multiword tokens: their syntactic words share one surface token.
STANZA = """\
# newdoc id = 1
# newpar
# text = Cats don't sleep.
# sent_id = 0
1\tCats\tcat\tNOUN\tNNS\tNumber=Plur\t4\tnsubj\t_\tstart_char=0|end_char=4
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\tstart_char=5|end_char=10
2\tdo\tdo\tAUX\tVBP\tMood=Ind\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tsleep\tsleep\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tstart_char=11|end_char=16
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\tstart_char=16|end_char=17|SpaceAfter=No

# text = They nap.
# sent_id = 1
1\tThey\tthey\tPRON\tPRP\tCase=Nom\t2\tnsubj\t_\tstart_char=18|end_char=22
2\tnap\tnap\tVERB\tVBP\t_\t0\troot\t_\tstart_char=23|end_char=26
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\tstart_char=26|end_char=27|SpaceAfter=No

# newpar
# text = Dogs bark.
# sent_id = 0
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\tstart_char=0|end_char=4
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tstart_char=5|end_char=9
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\tstart_char=9|end_char=10|SpaceAfter=No

# newdoc id = 2
# newdoc id = 3
# newpar
# text = dámelo ahora
# sent_id = 0
1-3\tdámelo\t_\t_\t_\t_\t_\t_\t_\tstart_char=0|end_char=6
1\tda\tdar\tVERB\t_\t_\t0\troot\t_\t_
2\tme\tyo\tPRON\t_\t_\t1\tiobj\t_\t_
3\tlo\tél\tPRON\t_\t_\t1\tobj\t_\t_
4\tahora\tahora\tADV\t_\t_\t3\tadvmod\t_\tstart_char=7|end_char=12

"""

# The same examples on the spaCy path: segments (None: an empty segment) of (words, heads as
# spaCy's absolute indices, a root its own head). A multiword token is one spaCy token; its head
# is that of its syntactic word whose head lies outside the token (dámelo: da, the root;
# "ahora" attaches to "lo", inside dámelo).
SPACY = [
    [[("Cats", 2), ("don't", 2), ("sleep", 2), (".", 2), ("They", 5), ("nap", 5), (".", 5)],
     [("Dogs", 1), ("bark", 1), (".", 1)]],
    [None],
    [None, [("dámelo", 0), ("ahora", 0)]],
]
TOK = ["Cats don't sleep . They nap . <P> Dogs bark .", "", "<P> dámelo ahora"]
# per example, per word: its head word (-1: root), counted across the example's sentences
ARCS = [[2, 2, -1, 2, 5, -1, 5, 8, -1, 8], [], [-1, 0]]


def spacy_conllu(path: Path) -> None:
    """The spaCy path's CoNLL-U (fairseq-hier-parse spacy's writer) of :data:`SPACY`."""
    import io

    import spacy
    from spacy.tokens import Doc

    vocab = spacy.blank("en").vocab
    out, counts = io.StringIO(), ParseCounts()
    for n, segments in enumerate(SPACY, 1):
        docs = []
        for seg in segments:
            words = [w for w, _ in seg] if seg else []
            heads = [h for _, h in seg] if seg else []
            deps = ["ROOT" if h == i else "dep" for i, h in enumerate(heads)]
            docs.append(Doc(vocab, words=words, heads=heads, deps=deps))
        write_example(out, None, n, docs, "<P>", counts)
    path.write_text(out.getvalue(), encoding="utf-8")


def pieces(line: str) -> str:
    """A sentencepiece-like source line: each word cut into pieces of 2 characters, the first
    opening with U+2581; separators kept."""
    out = []
    for w in line.split():
        if w == "<P>":
            out.append(w)
            continue
        parts = [w[i:i + 2] for i in range(0, len(w), 2)]
        out += ["\u2581" + parts[0], *parts[1:]]
    return " ".join(out)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """(folder, codes per example from the Stanza file, codes from the spaCy file)."""
    d = tmp_path_factory.mktemp("conllu")
    (d / "stanza.conllu").write_text(STANZA, encoding="utf-8")
    spacy_conllu(d / "spacy.conllu")
    (d / "train.src").write_text("\n".join(pieces(t) for t in TOK) + "\n", encoding="utf-8")
    codes = {}
    for name in ("stanza", "spacy"):
        proc = run_cli("fairseq-hier-parse", "project", "--conllu", d / f"{name}.conllu",
                       "--source",
                       d / "train.src", "--subword", "sentencepiece", "--output-prefix",
                       d / f"train.parse.{name}")
        assert "wrote 3 examples (12 words, 25 pieces, 2 separators, 8 arcs, 4 roots)" \
            in proc.stdout, proc.stdout
        parses = DependencyParses(str(d / f"train.parse.{name}"))
        codes[name] = [parses.codes(i).tolist() for i in range(len(parses))]
    return d, codes["stanza"], codes["spacy"]


def test_tokens_are_the_surface_forms(both):
    d, _, _ = both
    for name in ("stanza", "spacy"):
        examples = list(read_conllu(str(d / f"{name}.conllu")))
        assert [e.tokens for e in examples] == [
            [w for w in t.split() if w != "<P>"] for t in TOK]
        assert [e.heads for e in examples] == ARCS


def test_stanza_file_gives_the_spacy_codes(both):
    _, stanza, spacy_codes = both
    assert stanza == spacy_codes
    # "Cats" = ▁Ca ts, "don't" = ▁do n' t, ...: first piece codes the offset to the head word
    assert stanza[0] == [2, C, 1, C, C, 0, C, C, -1, 1, C, 0, C, -1, N, 1, C, 0, C, -1, N]
    assert stanza[1] == [N]
    assert stanza[2] == [N, 0, C, C, -1, C, C, N]


def test_arcs_decoded_per_piece(both):
    _, stanza, _ = both
    for codes, arcs in zip(stanza, ARCS):
        word, head = decode(np.array(codes, dtype=np.int16))
        is_word = word >= 0
        assert [arcs[w] for w in word[is_word]] == head[is_word].tolist()
