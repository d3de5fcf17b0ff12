"""``fairseq-hier-rank --method tfidf`` (fairseq_hier/ranking/tfidf.py): cosines equal
scikit-learn's TfidfVectorizer on the same paragraphs, the file is ordered by them, and the
summarizer's record option rank=tfidf orders new text as the command does."""

import random
import subprocess

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from conftest import BIN, WORDS
from fairseq_hier.data.rouge_ngrams import split_source
from fairseq_hier.ranking.tfidf import tfidf_scores


def sklearn_scores(title, paragraphs):
    """The rule with scikit-learn's own vectorizer: fit on the paragraphs (smooth idf, l2),
    the title (else the sum of the paragraph vectors) as query, cosine."""
    vec = TfidfVectorizer(tokenizer=str.split, token_pattern=None, lowercase=True)
    m = vec.fit_transform([" ".join(p) for p in paragraphs]).toarray()
    if any(t.lower() in vec.vocabulary_ for t in title):
        q = vec.transform([" ".join(title)]).toarray()[0]
    else:
        q = m.sum(axis=0)
    n = np.linalg.norm(q)
    return m @ (q / n) if n else np.zeros(len(paragraphs))


@pytest.mark.parametrize("seed", range(20))
def test_cosines_equal_scikit_learns(seed):
    rng = random.Random(seed)
    paragraphs = [[rng.choice(WORDS[:12]).upper() if rng.random() < 0.2 else rng.choice(WORDS[:12])
                   for _ in range(rng.randint(1, 8))] for _ in range(rng.randint(1, 6))]
    title = [rng.choice(WORDS) for _ in range(rng.randint(0, 3))]
    np.testing.assert_allclose(tfidf_scores(title, paragraphs), sklearn_scores(title, paragraphs),
                               atol=1e-12)


def test_command_orders_by_cosine_and_the_pipeline_agrees(tmp_path):
    from fairseq_hier.inference.pipelines import ParagraphPipeline, RawExample
    from fairseq_hier.inference.record import Assets

    lines = ["cats dogs <P> the weather is nice <P> cats and dogs play <P> dogs bark",
             "<P> a b c <P> a b <P> z", "t <P> x"]
    (tmp_path / "in.src").write_text("\n".join(lines) + "\n")
    proc = subprocess.run([str(BIN / "fairseq-hier-rank"), "--method", "tfidf", "--source",
                           str(tmp_path / "in.src"), "--output", str(tmp_path / "out.src"),
                           "--scores-out", str(tmp_path / "out.scores"), "--keep", "2"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "out.src").read_text().splitlines()
    # the title's words: "cats and dogs play" shares both, "dogs bark" one, the weather none
    assert out[0] == "cats dogs <P> cats and dogs play <P> dogs bark"
    # no title: the centroid; ties keep the input order
    assert out[1] == "<P> a b c <P> a b"
    assert out[2] == "t <P> x"
    scores = [[float(x) for x in line.split()]
              for line in (tmp_path / "out.scores").read_text().splitlines()]
    for line, row in zip(lines, scores):
        title, paragraphs, _ = split_source(line)
        expected = sorted(sklearn_scores(title, paragraphs), reverse=True)[:2]
        np.testing.assert_allclose(row, expected, atol=1e-6)
    assert "3 examples, 7 paragraphs ranked by tf-idf" in proc.stderr
    assert "2 paragraphs cut by --keep" in proc.stderr
    pipeline = ParagraphPipeline({"rank": "tfidf", "keep": 2, "paragraphs": "documents"},
                                 Assets({}))
    for line, ranked in zip(lines, out):
        title, paragraphs, _ = split_source(line)
        encoded, = pipeline.encode(RawExample([" ".join(p) for p in paragraphs],
                                              " ".join(title)))
        assert encoded.split() == ranked.split()


def test_tfidf_takes_no_model_and_no_jsonl(tmp_path):
    proc = subprocess.run([str(BIN / "fairseq-hier-rank"), "--method", "tfidf", "--path", "x.pt",
                           "--source", "a", "--output", "b"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("fairseq-hier-rank: error: --method tfidf ranks raw input (title <P> "
                           "paragraph ...) without a model: no --path, no --input-format jsonl\n")
