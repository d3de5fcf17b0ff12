"""Re-scoring a recipe's written files, for the recipe tests: the scores a recipe printed (its
``rouge.txt``) must equal the files it wrote, scored again independently of the recipe:

- ROUGE-1.5.5: :func:`fairseq_hier.scoring.rouge.rouge_scores` with the recipe's own flags (``-e``,
  ``-zs``), whose output tests/test_rouge.py compares with a direct run of the official perl;
- rouge-score (the ``--also-rouge-score`` block): Google's own ``RougeScorer`` on texts built
  here (the summaries' sentences on newlines).
"""

from typing import Dict, List

from fairseq_hier.scoring import rouge
from fairseq_hier.io import read_lines

RSCORE_KEYS = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def newline_sentences(text: str, eos: str) -> str:
    """The summary's sentences one per line, split on `` eos`` (the marker dropped)."""
    return "\n".join(p.strip() for p in text.split(f" {eos}") if p.strip())


def rouge_score_oracle(refs: List[str], hyps: List[str], eos: str,
                       stemming: bool = True) -> Dict[str, float]:
    """Mean F1 of rouge-score's RougeScorer over the pairs, rounded as ``rouge`` prints it."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(RSCORE_KEYS, use_stemmer=stemming)
    scores = [scorer.score(newline_sentences(r, eos), newline_sentences(h, eos))
              for r, h in zip(refs, hyps)]
    return {k: float(f"{sum(s[k].fmeasure for s in scores) / len(scores):.5f}")
            for k in RSCORE_KEYS}


def assert_rescored(printed: str, ref_path, hyp_path, eos: str = ".",
                    zero_empty_summary: bool = True, rouge_score: bool = True) -> None:
    """The R, P and F of ROUGE-1/2/L in ``printed`` (a ``rouge`` output) equal the written
    files re-scored to 5 decimals, and so does its rouge-score block (when ``rouge_score``)."""
    refs, hyps = read_lines(str(ref_path)), read_lines(str(hyp_path))
    expected = rouge.rouge_scores(refs, hyps, eos, zero_empty_summary=zero_empty_summary)
    got = rouge.parse_report(printed)
    assert set(got) == {"rouge-1", "rouge-2", "rouge-l"}, printed[-2000:]
    for metric in got:
        for key in "rpf":
            assert round(got[metric][key], 5) == round(expected[metric][key], 5), (metric, key)
    if rouge_score:
        assert rouge.parse_rouge_score(printed) == rouge_score_oracle(refs, hyps, eos), \
            printed[-2000:]
