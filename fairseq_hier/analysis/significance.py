"""Paired bootstrap significance between two systems scored on the same documents.

The test (Koehn 2004, "Statistical significance tests for machine translation evaluation";
Berg-Kirkpatrick et al. 2012, "An empirical investigation of statistical significance in NLP"):
draw ``samples`` resamples of the N document indices with replacement (one numpy
``default_rng(seed)``, the SAME indices for both systems: the pairing), and compute in each
resample the score of system A and of system B. Reported, for ``delta = B - A``:

- ``delta``: B's score minus A's on all documents (no resampling);
- ``low``, ``high``: the 2.5th and 97.5th percentiles of the resampled deltas (numpy's linear
  interpolation): the 95% percentile interval of the improvement;
- ``p_value``: the share of resamples in which B does NOT beat A (``resampled delta <= 0``): a
  one-sided test of "B is better than A", no +1 smoothing. B better on every document gives 0,
  two identical systems give 1 (a tie never counts as a win). ``p_value < 0.05``: significant.

ROUGE (:func:`rouge_per_document`, :func:`rouge_significance`): the per-document F1 of ROUGE-1,
ROUGE-2 and ROUGE-L from ONE run of the official ROUGE-1.5.5 per system, exactly as ``rouge`` /
files2rouge run it (:mod:`fairseq_hier.cli.rouge`: same files, same arguments) plus ROUGE's ``-d``
flag, which prints every evaluation's R/P/F after the averages. A system's score ``f`` here is
the plain mean of its per-document F, and a resample's score the mean over its documents. NOTE:
the "Average_F" that ROUGE-1.5.5 prints (``rouge``'s score, kept here as ``reported_f``) is NOT
that plain mean: ROUGE-1.5.5 reports the mean of its own 1000 bootstrap resample means (its line
``$ROUGEAverages->{"AvgF"}=$resampleAvgROUGE_F``; the plain mean is commented out), resamples
drawn with Perl's ``srand(i); int(rand(N))`` (drand48) over the 5-digit per-document scores. The
two differ by that bootstrap's noise, about sd / sqrt(1000 N) (per-document sd 0.2: ~3e-3 on
5 documents, ~6e-5 on 10,000); tests/test_significance.py re-computes ROUGE's printed average exactly from the
per-document scores parsed here. An empty summary scores 0 on every metric (``rouge -zs``):
the document stays in, so both systems are compared on the same documents. Without Perl's
XML::Parser (or with ``fallback``) the ``rouge-score`` package scores each document instead,
announced with ``rouge``'s loud banner: NOT ROUGE-1.5.5 numbers (there ``reported_f`` is the
plain mean, as ``rouge``'s fallback reports it).

BLEU (:func:`bleu_significance`): corpus BLEU whose segments are whole documents (what
``fairseq-hier-doc-bleu`` calls document BLEU), from sacreBLEU's own sufficient statistics. The
paired bootstrap is sacreBLEU's (``sacrebleu.significance.PairedTest``, ``test_type="bs"``,
through :func:`fairseq_hier.cli.doc_bleu.score`), whose mean, 95% half-width and p-value are
reported as ``sacrebleu_*``: sacreBLEU's p-value is Moses' two-sided test (``(1 + #{|d*| -
mean|d*| > |d|}) / (S + 1)``). sacreBLEU does not give the interval of the delta, so we re-score
the same resamples (sacreBLEU draws ``default_rng(seed).choice(N, (S, N))``, which is our index
matrix: the resampled scores are identical, a test checks it) and report ``delta``, ``low``,
``high`` and the one-sided ``p_value`` defined above, as for ROUGE. sacreBLEU treats seed 0 as
"unseeded", so BLEU's seed must not be 0 (default 12345, sacreBLEU's).

    from fairseq_hier.analysis.significance import rouge_significance
    result = rouge_significance(refs, {"PHT": pht_hyps, "PHT+align": aligned_hyps}, "PHT")
    result["systems"]["PHT+align"]["rouge-l"]  # {"f", "delta", "low", "high", "p_value"}

Command line: ``fairseq-hier-significance`` (:mod:`fairseq_hier.cli.significance`).
"""

import json
import os
import re
import sys
from contextlib import contextmanager
from typing import Dict, List, Optional, Sequence

METRICS = ("rouge-1", "rouge-2", "rouge-l")
SAMPLES, ROUGE_SEED, BLEU_SEED = 1000, 0, 12345
# ROUGE-1.5.5 -d: "1 ROUGE-1 Eval 3.1 R:0.50000 P:0.40000 F:0.44444" (EVAL ID 3, peer 1)
EVAL_LINE = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.\S+ R:([\d.]+) P:([\d.]+) F:([\d.]+)$")


# ----------------------------------------------------------------------------- the bootstrap
def bootstrap_indices(n: int, samples: int = SAMPLES, seed: Optional[int] = ROUGE_SEED):
    """``samples x n`` document indices drawn with replacement by ``default_rng(seed)``; the
    same draw as sacreBLEU's ``rng.choice(n, size=(samples, n), replace=True)``. ``seed`` None:
    :data:`ROUGE_SEED` (never an unseeded draw)."""
    import numpy as np

    seed = ROUGE_SEED if seed is None else seed

    if n < 1:
        raise ValueError("the bootstrap needs at least one document")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    return np.random.default_rng(seed).integers(0, n, size=(samples, n))


def mean_interval(values: Sequence[float], samples: int = SAMPLES, seed: Optional[int] = ROUGE_SEED,
                  level: float = 0.95):
    """Mean of per-document ``values`` and its percentile-bootstrap interval (``level``) ->
    ``(mean, low, high)``: the draw of :func:`bootstrap_indices`, taken 100 resamples at a time
    (the same indices, in bounded memory on a large split)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        raise ValueError("bootstrap interval of no values")
    seed = ROUGE_SEED if seed is None else seed
    rng = np.random.default_rng(seed)
    means = np.concatenate([
        values[rng.integers(0, len(values), size=(min(100, samples - start), len(values)))]
        .mean(axis=1) for start in range(0, samples, 100)])
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(values.mean()), float(low), float(high)


def compare(score_a: float, score_b: float, resampled_a, resampled_b) -> dict:
    """``delta``, its 95% percentile interval and the one-sided p-value (module docstring) from
    two systems' scores on all documents and on the same resamples."""
    import numpy as np

    deltas = np.asarray(resampled_b, dtype=float) - np.asarray(resampled_a, dtype=float)
    low, high = np.percentile(deltas, [2.5, 97.5])
    return {"delta": float(score_b - score_a), "low": float(low), "high": float(high),
            "p_value": float(np.mean(deltas <= 0)), "samples": int(len(deltas))}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], samples: int = SAMPLES,
                     seed: Optional[int] = ROUGE_SEED) -> dict:
    """Paired bootstrap of two systems' per-document scores (``a[i]``, ``b[i]``: document i);
    a resample's score is the mean over its documents. Returns ``{"mean_a", "mean_b", "delta",
    "low", "high", "p_value", "samples"}`` (definitions in the module docstring)."""
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores need the same documents: got {a.size} and {b.size} scores")
    idx = bootstrap_indices(len(a), samples, seed)  # samples x N
    return {"mean_a": float(a.mean()), "mean_b": float(b.mean()),
            **compare(a.mean(), b.mean(), a[idx].mean(axis=1), b[idx].mean(axis=1))}


def check_systems(refs: Sequence[str], systems: Dict[str, Sequence[str]], baseline: str,
                  ref_name: str = "the references") -> None:
    """At least two systems, the baseline among them, every one with a line per reference."""
    if baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not among the systems {sorted(systems)}")
    if len(systems) < 2:
        raise ValueError("a significance test needs at least two systems (the baseline first)")
    if not refs:
        raise ValueError(f"{ref_name} is empty: no document to compare on")
    for name, hyps in systems.items():
        if len(hyps) != len(refs):
            raise ValueError(f"line counts differ: {ref_name} has {len(refs)} lines, system "
                             f"{name!r} has {len(hyps)} lines (one document per line is expected)")


# ----------------------------------------------------------------------------- ROUGE
def parse_per_document(report: str, n: int) -> Dict[str, List[float]]:
    """Per-document F of every metric from a ROUGE-1.5.5 ``-d`` report over ``n`` documents
    written by :func:`fairseq_hier.cli.rouge.write_rouge_inputs`: its EVAL ``k`` (1-based) is the
    k-th document in pyrouge's lexicographic file-name order (``s.0.txt``, ``s.1.txt``,
    ``s.10.txt``, ``s.11.txt``, ``s.2.txt``, ...), mapped back to document order here."""
    order = sorted(range(n), key=lambda i: f"s.{i}.txt")  # EVAL k+1 -> document order[k]
    scores = {m: [None] * n for m in METRICS}
    for line in report.splitlines():
        match = EVAL_LINE.match(line.strip())
        if match and match.group(1).lower() in scores:
            scores[match.group(1).lower()][order[int(match.group(2)) - 1]] = float(match.group(5))
    for metric, values in scores.items():
        missing = [i + 1 for i, v in enumerate(values) if v is None]
        if missing:
            raise RuntimeError(f"ROUGE-1.5.5's -d report has no {metric} score for document(s) "
                               f"{missing[:5]} of {n}")
    return scores


def fallback_per_document(pairs, eos: str, stemming: bool) -> Dict[str, List[float]]:
    """rouge-score's per-document F of ROUGE-1/2/Lsum, read as ``rouge``'s fallback
    (:func:`fairseq_hier.cli.rouge.run_fallback`) reads the summaries: its sentence split, each
    sentence cut at its first ``<``."""
    from rouge_score import rouge_scorer

    from fairseq_hier.cli.rouge import split_sentences

    keys = {"rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-l": "rougeLsum"}
    scorer = rouge_scorer.RougeScorer(list(keys.values()), use_stemmer=stemming)

    def seen(text: str) -> str:
        return "\n".join(s.split("<")[0] for s in split_sentences(text, eos))

    scores = [scorer.score(seen(ref), seen(hyp)) for _, ref, hyp in pairs]
    return {metric: [s[key].fmeasure for s in scores] for metric, key in keys.items()}


def rouge_run(refs: Sequence[str], hyps: Sequence[str], eos: str = ".", *, stemming: bool = True,
              fallback: bool = False, ref_name: str = "the references",
              hyp_name: str = "the summaries"):
    """One ROUGE run of ``hyps`` against ``refs``: (per-document F as :func:`rouge_per_document`,
    the report's averages as :func:`fairseq_hier.cli.rouge.parse_report` gives them, whether the
    official ROUGE-1.5.5 ran)."""
    from fairseq_hier.cli import rouge

    pairs, _ = rouge.select_pairs(refs, hyps, ref_name, hyp_name, zero_empty_summary=True)
    rouge.warn_markup(pairs, eos)
    rouge.warn_unsplit(pairs, eos)
    reason = "fallback was asked for" if fallback else rouge.official_unavailable()
    if reason is not None:
        print(rouge.FALLBACK_BANNER.format(reason=reason), file=sys.stderr)
        report = rouge.run_fallback(pairs, eos, stemming=stemming)  # rouge_scores' averages
        return fallback_per_document(pairs, eos, stemming), rouge.parse_report(report), False
    report = rouge.run_official(pairs, eos, rouge.default_rouge_args() + " -d", stemming)
    return parse_per_document(report, len(pairs)), rouge.parse_report(report), True


def rouge_per_document(refs: Sequence[str], hyps: Sequence[str], eos: str = ".", *,
                       stemming: bool = True, fallback: bool = False,
                       ref_name: str = "the references",
                       hyp_name: str = "the summaries") -> Dict[str, List[float]]:
    """``{"rouge-1": [F of document 1, ...], "rouge-2": [...], "rouge-l": [...]}`` (0..1) of
    ``hyps`` against ``refs``, one ROUGE-1.5.5 run (``rouge``'s files and arguments, plus
    ``-d``). Empty summaries score 0 (``rouge -zs``); an empty reference is an error."""
    return rouge_run(refs, hyps, eos, stemming=stemming, fallback=fallback, ref_name=ref_name,
                     hyp_name=hyp_name)[0]


def rouge_significance(refs: Sequence[str], systems: Dict[str, Sequence[str]], baseline: str,
                       samples: int = SAMPLES, seed: Optional[int] = ROUGE_SEED,
                       eos: str = ".", *,
                       stemming: bool = True, fallback: bool = False,
                       ref_name: str = "the references") -> dict:
    """Every system against ``baseline`` on ROUGE-1/2/L F (one ROUGE run per system, one index
    matrix for all). Returns ``{"metric": "rouge", "documents", "baseline", "samples", "seed",
    "official", "systems": {name: {"rouge-1": {"f", "reported_f", "delta", "low", "high",
    "p_value", "samples", "per_document"}, ...}}, "reported": {name: ...}}``: ``f`` the plain
    mean of the per-document F, ``reported_f`` ROUGE-1.5.5's printed average (module docstring),
    all 0..1; the baseline's entries have no delta. ``reported[name]``: the whole printed report
    of that run (:func:`fairseq_hier.cli.rouge.parse_report`: R, P, F and their 95% intervals,
    what ``rouge_scores`` gives), so a caller needs no second ROUGE run for the scores.
    ``seed`` None: :data:`ROUGE_SEED`."""
    import numpy as np

    seed = ROUGE_SEED if seed is None else seed
    check_systems(refs, systems, baseline, ref_name)
    runs = {name: rouge_run(refs, hyps, eos, stemming=stemming, fallback=fallback,
                            ref_name=ref_name, hyp_name=f"system {name!r}")
            for name, hyps in systems.items()}
    idx = bootstrap_indices(len(refs), samples, seed)  # samples x N, shared by every comparison
    out = {}
    for name, (per_doc, reported, _) in runs.items():
        out[name] = {}
        for metric in METRICS:
            a, b = np.asarray(runs[baseline][0][metric]), np.asarray(per_doc[metric])
            entry = {"f": float(b.mean()), "reported_f": reported[metric]["f"]}
            if name != baseline:
                entry.update(compare(a.mean(), b.mean(), a[idx].mean(1), b[idx].mean(1)))
            entry["per_document"] = [float(x) for x in b]
            out[name][metric] = entry
    return {"metric": "rouge", "documents": len(refs), "baseline": baseline, "samples": samples,
            "seed": seed, "official": all(official for _, _, official in runs.values()),
            "systems": out, "reported": {name: run[1] for name, run in runs.items()}}


# ----------------------------------------------------------------------------- BLEU
@contextmanager
def sacrebleu_seed(seed: int):
    """sacreBLEU reads its bootstrap seed from ``SACREBLEU_SEED`` when a test is built."""
    old = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        yield
    finally:
        if old is None:
            del os.environ["SACREBLEU_SEED"]
        else:
            os.environ["SACREBLEU_SEED"] = old


def resampled_bleu(refs: Sequence[str], hyps: Sequence[str], tokenize: str, idx):
    """BLEU of ``hyps`` on all documents and on every resample (rows of ``idx``), computed as
    sacreBLEU's paired bootstrap computes them (its float32 sufficient statistics, summed)."""
    import numpy as np
    from sacrebleu.metrics import BLEU

    metric = BLEU(tokenize=tokenize, references=[list(refs)])
    stats = metric._extract_corpus_statistics(list(hyps), None)
    full = metric._aggregate_and_compute(stats).score
    stats = np.array(stats, dtype="float32")
    return full, np.array([metric._compute_score_from_stats(s.sum(0)).score for s in stats[idx]])


def bleu_significance(refs: Sequence[str], systems: Dict[str, Sequence[str]], baseline: str,
                      tgt_lang: str = "en", samples: int = SAMPLES,
                      seed: Optional[int] = BLEU_SEED,
                      tokenize: Optional[str] = None, ref_name: str = "the references") -> dict:
    """Every system against ``baseline`` on document BLEU (segments = whole documents, one per
    line). Returns ``{"metric": "bleu", "signature", "documents", "baseline", "samples", "seed",
    "systems": {name: {"bleu", "sacrebleu_mean", "sacrebleu_ci95", "sacrebleu_p_value",
    "delta", "low", "high", "p_value"}}}`` (BLEU points; the baseline has no delta). ``seed``
    None: :data:`BLEU_SEED`."""
    from fairseq_hier.cli.doc_bleu import score

    seed = BLEU_SEED if seed is None else seed
    check_systems(refs, systems, baseline, ref_name)
    if seed == 0:
        raise ValueError("BLEU's seed must not be 0: sacreBLEU's paired test then runs unseeded")
    tokenize = tokenize or ("zh" if tgt_lang == "zh" else "13a")
    ordered = {baseline: systems[baseline], **systems}  # sacreBLEU's baseline comes first
    with sacrebleu_seed(seed):
        signature, results = score({n: (list(h), list(h)) for n, h in ordered.items()},
                                   list(refs), list(refs), tokenize, samples)
    idx = bootstrap_indices(len(refs), samples, seed)
    base_full, base_resampled = resampled_bleu(refs, systems[baseline], tokenize, idx)
    out = {}
    for name, hyps in systems.items():
        r = results[name]
        entry = {"bleu": r["doc_bleu"], "sacrebleu_mean": float(r["doc_bleu_mean"]),
                 "sacrebleu_ci95": float(r["doc_bleu_ci95"]),
                 "sacrebleu_p_value": r.get("p_value")}
        if name != baseline:
            full, resampled = resampled_bleu(refs, hyps, tokenize, idx)
            entry.update(compare(base_full, full, base_resampled, resampled))
            entry["resampled_mean"] = float(resampled.mean())
        out[name] = entry
    return {"metric": "bleu", "signature": signature, "documents": len(refs),
            "baseline": baseline, "samples": samples, "seed": seed, "systems": out}


def dumps(result: dict) -> str:
    """One JSON line without the per-document lists (the command's last line)."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "per_document"}
        return value

    return json.dumps(strip(result))
