"""The one tf-idf (fairseq_hier/text/tfidf.py) against a literal implementation written here with
plain loops (terms, counts, idf, cosines); ``fairseq-hier-rank apply --method tfidf`` writes
the order that ``fairseq-hier-rank eval`` scores as ``similarity``, through the real commands;
the summarizer's record option rank=tfidf orders new text as the command does."""

import json
import math
import random
import subprocess

import numpy as np
import pytest

from conftest import BIN, WORDS, run_cli
from fairseq_hier.data.paragraphs import split_source
from fairseq_hier.ranking.evaluation import evaluate_example
from fairseq_hier.text.tfidf import (cosine_matrix, query_cosines, similarity_order, terms,
                                     tfidf_vectors)


# ------------------------------------------------------------------------- the literal oracle
def literal_terms(tokens):
    out = []
    for token in tokens:
        if any(c.isalnum() for c in token):
            out.append(token.lower())
    return out


def literal_vectors(documents):
    """Per document a dict term -> count x idf / norm, and the idf of every term."""
    docs = [literal_terms(d) for d in documents]
    df = {}
    for doc in docs:
        for term in set(doc):
            df[term] = df.get(term, 0) + 1
    idf = {term: math.log((1 + len(docs)) / (1 + n)) + 1 for term, n in df.items()}
    vectors = []
    for doc in docs:
        weights = {}
        for term in doc:
            weights[term] = weights.get(term, 0.0) + idf[term]
        norm = math.sqrt(sum(w * w for w in weights.values()))
        vectors.append({t: w / norm for t, w in weights.items()} if norm else {})
    return vectors, idf


def literal_cosine(a, b):
    dot = sum(w * b.get(t, 0.0) for t, w in a.items())
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


def literal_query_cosines(paragraphs, query):
    vectors, idf = literal_vectors(paragraphs)
    q = {}
    for term in literal_terms(query):
        if term in idf:
            q[term] = q.get(term, 0.0) + idf[term]
    if not q:  # the centroid
        for v in vectors:
            for t, w in v.items():
                q[t] = q.get(t, 0.0) + w
    return [literal_cosine(v, q) for v in vectors]


def literal_cosine_matrix(paragraphs):
    vectors, _ = literal_vectors(paragraphs)
    return [[(1.0 if vectors[i] else 0.0) if i == j else literal_cosine(vectors[i], vectors[j])
             for j in range(len(vectors))] for i in range(len(vectors))]


# paragraphs with distinct cosines: repeated terms, case, punctuation, terms in 1, 2 and 3 of the
# 5 paragraphs (idf 1 + ln(6/2), 1 + ln(6/3), 1 + ln(6/4)), a paragraph without any term
PARAGRAPHS = [["Rivers", "flow", "rivers", ",", "flow", "."], ["rivers", "meet", "the", "sea"],
              ["The", "sea", "is", "salt", "salt", "Flow"], ["!", "--"], ["snow", "in", "2019"]]


def test_terms_rule():
    assert terms(["The", ",", "a-b", "--", "▁", "▁sea", "2019", "x."]) == \
        ["the", "a-b", "▁sea", "2019", "x."]


def test_cosine_matrix_matches_the_literal_loops():
    got = cosine_matrix(PARAGRAPHS)
    assert got.dtype == np.float32 and got.shape == (5, 5)
    expected = literal_cosine_matrix(PARAGRAPHS)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    off = [expected[i][j] for i in range(3) for j in range(3) if i < j]
    assert len(set(np.round(off, 6))) == 3 and min(off) > 0  # distinct, non-trivial values
    assert got[3].tolist() == [0.0] * 5  # no term: similar to nothing, itself included


@pytest.mark.parametrize("query", [["RIVERS", "sea"], ["salt", ",", "flow", "snow"], ["unknown"],
                                   []])
def test_query_cosines_match_the_literal_loops(query):
    got = query_cosines(PARAGRAPHS, query)
    expected = literal_query_cosines(PARAGRAPHS, query)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert got[3] == 0.0 and len(set(np.round(expected, 9))) >= 4


def test_tfidf_vectors_match_the_literal_loops():
    documents = PARAGRAPHS + [["Salt", "rivers"]]
    vectors, _ = literal_vectors(documents)
    vocabulary = sorted({t for v in vectors for t in v})
    expected = [[v.get(t, 0.0) for t in vocabulary] for v in vectors]
    np.testing.assert_allclose(tfidf_vectors(documents), expected, atol=1e-12)
    assert tfidf_vectors([[","], []]).shape == (2, 0)


@pytest.mark.parametrize("seed", range(10))
def test_random_examples_match_the_literal_loops(seed):
    rng = random.Random(seed)
    vocab = list(WORDS[:10]) + ["The", "A", ",", "."]
    paragraphs = [rng.choices(vocab, k=rng.randint(0, 8)) for _ in range(rng.randint(1, 6))]
    query = rng.choices(vocab, k=rng.randint(0, 3))
    np.testing.assert_allclose(cosine_matrix(paragraphs), literal_cosine_matrix(paragraphs),
                               atol=1e-6)
    np.testing.assert_allclose(query_cosines(paragraphs, query),
                               literal_query_cosines(paragraphs, query), atol=1e-12)


def test_order_descending_ties_in_input_order():
    assert similarity_order([0.2, 0.5, 0.2, 0.0, 0.5]) == [1, 4, 0, 2, 3]
    assert query_cosines([[","], ["."]], ["a"]).tolist() == [0.0, 0.0]


# ----------------------------------------------------------------------- through the commands
def write_examples(folder, n=40, seed=3):
    """Titles in any case (some empty, some sharing no term with the paragraphs), paragraphs
    with punctuation and capitals, targets of random words; an empty paragraph now and then."""
    rng = random.Random(seed)
    vocab = list(WORDS[:14])
    sources, targets = [], []
    for i in range(n):
        paragraphs = []
        for _ in range(rng.randint(2, 6)):
            words = rng.choices(vocab, k=rng.randint(1, 7))
            words = [w.upper() if rng.random() < 0.2 else w for w in words]
            paragraphs.append(" ".join(words + rng.choices([",", ".", ""], k=2)).strip())
        title = "" if i % 5 == 0 else ("zzz" if i % 7 == 0 else
                                       " ".join(rng.choices(vocab, k=rng.randint(1, 3))).title())
        sources.append(" <P> ".join([title] + paragraphs + ([""] if i % 6 == 0 else [])).strip())
        targets.append(" ".join(rng.choices(vocab, k=10)))
    (folder / "test.src").write_text("\n".join(sources) + "\n")
    (folder / "test.tgt").write_text("\n".join(targets) + "\n")
    return sources, targets


def test_rank_eval_similarity_is_the_order_rank_writes(tmp_path):
    sources, targets = write_examples(tmp_path)
    run_cli("fairseq-hier-rank", "apply", "--method", "tfidf", "-i", tmp_path / "test.src",
            "--output", tmp_path / "ranked.src")
    ranked = (tmp_path / "ranked.src").read_text().splitlines()
    ls = [1, 2, 3, 4, 5, 6]
    evaluation = run_cli("fairseq-hier-rank", "eval", "--source", tmp_path / "test.src",
                         "--target", tmp_path / "test.tgt", "--ranked",
                         f"tfidf={tmp_path / 'ranked.src'}", "--L", *ls, "--bootstrap", "50",
                         "--no-progress-bar")
    table = json.loads(evaluation.stdout.strip().splitlines()[-1])
    assert table["similarity"] == table["tfidf"]
    assert table["ci95"]["similarity"] == table["ci95"]["tfidf"]
    assert table["similarity"] != table["original"]  # the orders matter on this data
    # and example by example, through the function the command runs
    moved = 0
    for source, target, line in zip(sources, targets, ranked):
        recalls, fault, _ = evaluate_example((source, target, [line], "<P>", False, ls, True))
        assert fault is None
        original, similarity, written = recalls
        np.testing.assert_array_equal(similarity, written)
        title, paragraphs, _ = split_source(source)
        order = similarity_order(query_cosines(paragraphs, title))
        assert split_source(line)[1] == [paragraphs[i] for i in order]
        moved += order != sorted(order)
    assert moved >= len(sources) // 2


def test_command_orders_by_cosine_and_the_pipeline_agrees(tmp_path):
    from fairseq_hier.inference.pipelines import ParagraphPipeline, RawExample
    from fairseq_hier.inference.record import Assets

    lines = ["cats dogs <P> the weather is nice <P> cats and dogs play <P> dogs bark",
             "<P> a b c <P> a b <P> z", "t <P> x", "Dogs , <P> . , <P> the dogs <P> CATS !"]
    (tmp_path / "in.src").write_text("\n".join(lines) + "\n")
    proc = run_cli("fairseq-hier-rank", "apply", "--method", "tfidf", "-i", tmp_path / "in.src",
                   "-o", tmp_path / "out.src", "--scores",
                   "--keep", "2")
    out = (tmp_path / "out.src").read_text().splitlines()
    # the title's words: "cats and dogs play" shares both, "dogs bark" one, the weather none
    assert out[0] == "cats dogs <P> cats and dogs play <P> dogs bark"
    # no title: the centroid; ties keep the input order
    assert out[1] == "<P> a b c <P> a b"
    assert out[2] == "t <P> x"
    # terms are lowercased, punctuation is no term: "Dogs ," matches "the dogs", not ". ,"
    assert out[3] == "Dogs , <P> the dogs <P> . ,"
    scores = [[float(x) for x in line.split()]
              for line in (tmp_path / "out.src.scores").read_text().splitlines()]
    for line, row in zip(lines, scores):
        title, paragraphs, _ = split_source(line)
        expected = sorted(literal_query_cosines(paragraphs, title), reverse=True)[:2]
        np.testing.assert_allclose(row, expected, atol=1e-6)
    assert "4 examples, 10 paragraphs ranked by tf-idf" in proc.stdout
    assert "3 paragraphs cut by --keep" in proc.stdout
    pipeline = ParagraphPipeline({"rank": "tfidf", "keep": 2, "paragraphs": "documents"},
                                 Assets({}))
    for line, ranked in zip(lines, out):
        title, paragraphs, _ = split_source(line)
        encoded, = pipeline.encode(RawExample([" ".join(p) for p in paragraphs],
                                              " ".join(title)))
        assert encoded.split() == ranked.split()


def test_tfidf_takes_no_model_and_no_jsonl(tmp_path):
    proc = subprocess.run([str(BIN / "fairseq-hier-rank"), "apply", "--method", "tfidf", "--path",
                           "x.pt", "-i", "a", "-o", "b"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("fairseq-hier-rank apply: error: --method tfidf ranks raw input (title "
                           "<P> "
                           "paragraph ...) without a model: no --path, no --input-format jsonl\n")
