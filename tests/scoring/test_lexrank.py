"""The LexRank baseline of 002: scores checked against a stationary distribution solved by hand,
the summary text of a tiny example checked literally, and the command's errors."""

import logging
import math

import numpy as np
import pytest

from conftest import run_cli
from fairseq_hier.baselines.lexrank import lexrank, lexrank_scores, rank_paragraphs
from fairseq_hier.cli import baseline
from fairseq_hier.data.paragraphs import text_paragraphs
from fairseq_hier.text.tfidf import cosine_matrix

# paragraphs [alpha beta] [alpha] [beta] (empty title): alpha and beta have the same idf, so
# cos(0, 1) = cos(0, 2) = 1 / sqrt(2) = r and cos(1, 2) = 0
HAND = "<P> alpha beta <P> alpha <P> beta"
R = 1 / math.sqrt(2)
HAND_SIMILARITY = [[1, R, R], [R, 1, 0], [R, 0, 1]]


def cli_main(argv):
    """``fairseq-hier-baseline lexrank ARGV`` in-process: its exit status."""
    return baseline.cli_main(["lexrank", *argv])


def test_hand_similarity_matrix():
    np.testing.assert_allclose(cosine_matrix(text_paragraphs(HAND)), HAND_SIMILARITY, atol=1e-6)


def test_continuous_lexrank_by_hand():
    """M = the rows of S over their sums (1 + 2r, 1 + r, 1 + r). Column 0 of M is
    (1 / (1 + 2r), r / (1 + r), r / (1 + r)) = (sqrt(2) - 1) * (1, 1, 1), since 1 + 2r = 1 +
    sqrt(2) and r / (1 + r) = 1 / (sqrt(2) + 1). So (M^T p)_0 = sqrt(2) - 1 for any distribution
    p: p0 = (1 - d) / 3 + d (sqrt(2) - 1), and p1 = p2 = (1 - p0) / 2 by symmetry."""
    s = np.array(HAND_SIMILARITY)
    # d = 0.85: p0 = 0.05 + 0.85 * 0.41421356 = 0.40208153, p1 = p2 = 0.29895924
    np.testing.assert_allclose(lexrank_scores(s, 0.85), [0.40208153, 0.29895924, 0.29895924],
                               atol=1e-7)
    # d = 1 (no jumps): the degree distribution of a symmetric S, p0 = sqrt(2) - 1
    np.testing.assert_allclose(lexrank_scores(s, 1.0), [0.41421356, 0.29289322, 0.29289322],
                               atol=1e-7)
    assert rank_paragraphs(lexrank_scores(s)) == [0, 1, 2]  # tie 1 = 2: earlier first


def test_threshold_lexrank_by_hand():
    """T = 0.5: binary edges where cos > 0.5, S = [[1,1,1],[1,1,0],[1,0,1]], degrees 3, 2, 2;
    p1 = (1 - d)/3 + d (p0/3 + p1/2) with p0 = 1 - 2 p1 gives p1 = 2 / (6 + d)."""
    s = np.array(HAND_SIMILARITY)
    np.testing.assert_allclose(lexrank_scores(s, 0.85, threshold=0.5),
                               [2.85 / 6.85, 2 / 6.85, 2 / 6.85], atol=1e-7)
    # T = 0.75 keeps the self-loops only: the uniform distribution
    np.testing.assert_allclose(lexrank_scores(s, 0.85, threshold=0.75), [1 / 3] * 3, atol=1e-9)


def test_zero_row_links_uniformly():
    # paragraph 1 has no term: its row is uniform, the rest as a 2-node graph of weight 1
    s = np.array([[1.0, 0, 1.0], [0, 0, 0], [1.0, 0, 1.0]])
    p = lexrank_scores(s, 0.85)
    np.testing.assert_allclose(p.sum(), 1.0)
    assert p[0] == pytest.approx(p[2]) and p[1] < p[0]


def test_summary_text_literally():
    # the central paragraph [beta alpha] comes first, then [alpha] before [beta] (tie)
    paragraphs = text_paragraphs("<P> alpha <P> beta <P> beta alpha")
    assert lexrank(paragraphs, 2) == ["beta", "alpha"]
    assert lexrank(paragraphs, 3) == ["beta", "alpha", "alpha"]
    assert lexrank(paragraphs, 4) == ["beta", "alpha", "alpha", "beta"]
    assert lexrank(paragraphs, 9) == ["beta", "alpha", "alpha", "beta"]
    assert lexrank(paragraphs, 0) == []


def test_cli_writes_one_summary_per_line(tmp_path, caplog):
    src, ref, out = tmp_path / "test.src", tmp_path / "test.tgt", tmp_path / "lexrank.hyp"
    # line 2: title 'my title' opens paragraph 0; paragraph [x y z] shares x with both others
    src.write_text("<P> alpha <P> beta <P> beta alpha\nmy title <P> x y z <P> x <P> y q\n"
                   "t <P> a b\n", encoding="utf-8")
    ref.write_text("r r r\nr r r r r\n\n", encoding="utf-8")
    with caplog.at_level(logging.INFO):
        assert cli_main(["--source", str(src), "--reference", str(ref), "--output", str(out),
                         "--no-progress-bar"]) == 0
    assert out.read_text(encoding="utf-8") == "beta alpha alpha\nmy title x y z\n\n"
    assert f"wrote 3 LexRank summaries (continuous, damping 0.85) to {out}" in caplog.text
    assert "1 reference(s) are empty" in caplog.text


def test_cli_counts_short_sources(tmp_path, caplog):
    src, ref, out = tmp_path / "test.src", tmp_path / "test.tgt", tmp_path / "lexrank.hyp"
    src.write_text("t <P> a b\n", encoding="utf-8")
    ref.write_text("r r r r r\n", encoding="utf-8")
    with caplog.at_level(logging.INFO):
        cli_main(["--source", str(src), "--reference", str(ref), "--output", str(out)])
    assert out.read_text(encoding="utf-8") == "t a b\n"
    assert "1 source(s) are shorter than their reference" in caplog.text


def test_cli_errors_are_one_line(tmp_path, capsys):
    src, ref = tmp_path / "test.src", tmp_path / "test.tgt"
    src.write_text("t <P> a\nt <P> b\n", encoding="utf-8")
    ref.write_text("a b c\n", encoding="utf-8")
    out = tmp_path / "lexrank.hyp"
    proc = run_cli("fairseq-hier-baseline", "lexrank", "--source", src, "--reference", ref,
                   "--output", out,
                   check=False)
    assert proc.returncode == 1 and not out.exists()
    assert proc.stdout == (f"fairseq-hier-baseline lexrank: error: line counts differ: {src} has "
                           f"2 lines, "
                           f"{ref} has 1 lines (one example per line is expected)\n")
    ref.write_text("a\nb\n", encoding="utf-8")
    src.write_text("t <P> a\nonly a title\n", encoding="utf-8")
    args = ["--source", str(src), "--reference", str(ref), "--output", str(out)]
    assert cli_main(args) == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-baseline lexrank: error: {src}:2: no paragraph (expected 'title <P> paragraph 1 "
        f"<P> ...' with at least one non-empty paragraph)\n")
    with pytest.raises(SystemExit) as e:
        cli_main(args + ["--damping", "0"])
    assert e.value.code == 2 and capsys.readouterr().err == (
        "fairseq-hier-baseline lexrank: error: argument --damping: must be > 0 and <= 1, got 0.0\n")
    assert not out.exists()
