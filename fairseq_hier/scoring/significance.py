"""Paired bootstrap significance between two systems scored on the same documents.

The test (Koehn 2004), its resampling, the p-value, sets of decodings, and the ROUGE and BLEU
scorers it resamples: docs/evaluation.md, section fairseq_hier.scoring.significance.
Imports ``scoring``, ``errors``; numpy, rouge-score and sacreBLEU inside functions.
"""

import json
import os
import re
import sys
from typing import Dict, List, Optional, Sequence, Union

from . import rouge
from ..errors import HierError
from ..io import check_parallel, read_lines
from .bleu import bleu_metric, default_tokenize
from .bootstrap import ROUGE_SEED, SAMPLES, bootstrap_indices

METRICS = ("rouge-1", "rouge-2", "rouge-l")
BLEU_SEED = 12345
# ROUGE-1.5.5 -d: "1 ROUGE-1 Eval 3.1 R:0.50000 P:0.40000 F:0.44444" (EVAL ID 3, peer 1)
EVAL_LINE = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.\S+ R:([\d.]+) P:([\d.]+) F:([\d.]+)$")


class HypothesisSet(list):
    """Several hypothesis lists of one system (its members), with their names (file paths)."""

    def __init__(self, members: Sequence[Sequence[str]], names: Optional[Sequence[str]] = None):
        super().__init__(list(m) for m in members)
        if not self:
            raise HierError("a set of hypothesis files needs at least one member")
        self.names = list(names) if names is not None else [f"#{k + 1}" for k in range(len(self))]


def members_of(hyps: "Sequence[str] | HypothesisSet") -> List[Sequence[str]]:
    """The hypothesis lists of a system: a set's members, or the single list."""
    return list(hyps) if isinstance(hyps, HypothesisSet) else [hyps]


def compare(score_a: float, score_b: float, resampled_a, resampled_b) -> dict:
    """``delta``, its 95% percentile interval and the one-sided p-value (module docstring) from
    two systems' scores on all documents and on the same resamples."""
    import numpy as np  # lazy, as everywhere in this module: the commands' --help stays light

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
        raise HierError(f"paired scores need the same documents: got {a.size} and {b.size} scores")
    idx = bootstrap_indices(len(a), samples, seed)  # samples x N
    return {"mean_a": float(a.mean()), "mean_b": float(b.mean()),
            **compare(a.mean(), b.mean(), a[idx].mean(axis=1), b[idx].mean(axis=1))}


def check_systems(refs: Sequence[str], systems: Dict[str, Sequence[str]], baseline: str,
                  ref_name: str = "the references", min_systems: int = 2) -> None:
    """At least two systems (``min_systems``), the baseline among them, every one with a line
    per reference."""
    if baseline not in systems:
        raise HierError(f"baseline {baseline!r} is not among the systems {sorted(systems)}")
    if len(systems) < min_systems:
        raise HierError("a significance test needs at least two systems (the baseline first)")
    if not refs:
        raise HierError(f"{ref_name} is empty: no document to compare on")
    for name, hyps in systems.items():
        for member in members_of(hyps):
            if len(member) != len(refs):
                raise HierError(f"line counts differ: {ref_name} has {len(refs)} lines, system "
                                f"{name!r} has {len(member)} lines (one document per line is "
                                f"expected)")


# ----------------------------------------------------------------------------- ROUGE
def parse_per_document(report: str, n: int) -> Dict[str, List[float]]:
    """Per-document F of every metric from a ROUGE-1.5.5 ``-d`` report over ``n`` documents
    written by :func:`fairseq_hier.scoring.rouge.write_rouge_inputs`: its EVAL ``k`` (1-based) is
    the k-th document in pyrouge's lexicographic file-name order (``s.0.txt``, ``s.1.txt``,
    ``s.10.txt``, ``s.11.txt``, ``s.2.txt``, ...), mapped back to document order here."""
    order = rouge.eval_order(range(n))  # EVAL k+1 -> document order[k]
    scores = {m: [None] * n for m in METRICS}
    for line in report.splitlines():
        match = EVAL_LINE.match(line.strip())
        if match and match.group(1).lower() in scores:
            scores[match.group(1).lower()][order[int(match.group(2)) - 1]] = float(match.group(5))
    for metric, values in scores.items():
        missing = [i + 1 for i, v in enumerate(values) if v is None]
        if missing:
            raise HierError(f"ROUGE-1.5.5's -d report has no {metric} score for document(s) "
                            f"{missing[:5]} of {n}")
    return scores


def fallback_per_document(pairs, eos: str, stemming: bool) -> Dict[str, List[float]]:
    """rouge-score's per-document F of ROUGE-1/2/Lsum, read as ``rouge``'s fallback
    (:func:`fairseq_hier.scoring.rouge.run_fallback`) reads the summaries: its sentence split, each
    sentence cut at its first ``<`` (:func:`fairseq_hier.scoring.rouge.fallback_text`); several
    references per summary: the best per metric (rouge-score's ``score_multi``)."""
    keys = {"rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-l": "rougeLsum"}
    scorer = rouge.rouge_score_scorer(keys.values(), stemming)
    scores = [scorer.score_multi([rouge.fallback_text(r, eos) for r in refs],
                                 rouge.fallback_text(hyp, eos))
              for _, refs, hyp in pairs]
    return {metric: [s[key].fmeasure for s in scores] for metric, key in keys.items()}


def rouge_run(refs: "Sequence[str | Sequence[str]]", hyps: Sequence[str], eos: str = ".", *,
              stemming: bool = True, fallback: bool = False, ref_name: str = "the references",
              hyp_name: str = "the summaries"):
    """One ROUGE run of ``hyps`` against ``refs``: (per-document F as :func:`rouge_per_document`,
    the report's averages as :func:`fairseq_hier.scoring.rouge.parse_report` gives them, whether the
    official ROUGE-1.5.5 ran). ``refs[i]``: the reference of document ``i``, or a list of its
    references (ROUGE-1.5.5's multi-model scoring, as ``rouge REF1 REF2 ... HYP``)."""
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


def rouge_per_document(refs: "Sequence[str | Sequence[str]]", hyps: Sequence[str],
                       eos: str = ".", *, stemming: bool = True, fallback: bool = False,
                       ref_name: str = "the references",
                       hyp_name: str = "the summaries") -> Dict[str, List[float]]:
    """``{"rouge-1": [F of document 1, ...], "rouge-2": [...], "rouge-l": [...]}`` (0..1) of
    ``hyps`` against ``refs``, one ROUGE-1.5.5 run (``rouge``'s files and arguments, plus
    ``-d``). Empty summaries score 0 (``rouge -zs``); an empty reference is an error. ``refs[i]``
    may be a list of references (as for :func:`rouge_run`)."""
    return rouge_run(refs, hyps, eos, stemming=stemming, fallback=fallback, ref_name=ref_name,
                     hyp_name=hyp_name)[0]


def rouge_significance(refs: "Sequence[str | Sequence[str]]",
                       systems: "Dict[str, Sequence[str] | HypothesisSet]",
                       baseline: str, samples: int = SAMPLES, seed: Optional[int] = ROUGE_SEED,
                       eos: str = ".", *,
                       stemming: bool = True, fallback: bool = False,
                       ref_name: str = "the references", min_systems: int = 2) -> dict:
    """Every system against ``baseline`` on ROUGE-1/2/L F (one ROUGE run per hypothesis file, one
    index matrix for all). Returns ``{"metric": "rouge", "documents", "baseline", "samples",
    "seed", "official", "systems": {name: {"rouge-1": {"f", "reported_f", "delta", "low", "high",
    "p_value", "samples", "per_document"}, ...}}, "reported": {name: ...}}``: ``f`` the plain
    mean of the per-document F, ``reported_f`` ROUGE-1.5.5's printed average (module docstring),
    all 0..1; the baseline's entries have no delta. ``reported[name]``: the whole printed report
    of that run (:func:`fairseq_hier.scoring.rouge.parse_report`: R, P, F and their 95% intervals,
    what ``rouge_scores`` gives), so a caller needs no second ROUGE run for the scores; for a
    :class:`HypothesisSet`, the list of its members' reports (its entries: module docstring).
    ``seed`` None: :data:`ROUGE_SEED`. ``min_systems=1`` allows one system alone (its scores
    and, for a set, its interval)."""
    import numpy as np

    seed = ROUGE_SEED if seed is None else seed
    check_systems(refs, systems, baseline, ref_name, min_systems)
    runs = {name: [rouge_run(refs, member, eos, stemming=stemming, fallback=fallback,
                             ref_name=ref_name, hyp_name=f"system {name!r}")
                   for member in members_of(hyps)]
            for name, hyps in systems.items()}
    # a system's per-document F: the mean over its members (a single file: its own)
    per_doc = {name: {m: np.mean([run[0][m] for run in member_runs], axis=0) for m in METRICS}
               for name, member_runs in runs.items()}
    idx = bootstrap_indices(len(refs), samples, seed)  # samples x N, shared by every comparison
    out = {}
    for name, hyps in systems.items():
        out[name] = {}
        for metric in METRICS:
            a, b = per_doc[baseline][metric], per_doc[name][metric]
            entry = {"f": float(b.mean()),
                     "reported_f": float(np.mean([run[1][metric]["f"] for run in runs[name]]))}
            if name != baseline:
                entry.update(compare(a.mean(), b.mean(), a[idx].mean(1), b[idx].mean(1)))
            if isinstance(hyps, HypothesisSet):
                low, high = np.percentile(b[idx].mean(1), [2.5, 97.5])
                entry.update(f_low=float(low), f_high=float(high), members=[
                    {"name": member, "f": float(np.mean(run[0][metric])),
                     "reported_f": run[1][metric]["f"]}
                    for member, run in zip(hyps.names, runs[name])])
            entry["per_document"] = [float(x) for x in b]
            out[name][metric] = entry
    reported = {name: [run[1] for run in runs[name]] if isinstance(hyps, HypothesisSet)
                else runs[name][0][1] for name, hyps in systems.items()}
    return {"metric": "rouge", "documents": len(refs), "baseline": baseline, "samples": samples,
            "seed": seed, "official": all(run[2] for member_runs in runs.values()
                                          for run in member_runs),
            "systems": out, "reported": reported}


# ----------------------------------------------------------------------------- BLEU
def resampled_bleu(metric, hyps: Sequence[str], idx):
    """BLEU of ``hyps`` on all documents and on every resample (rows of ``idx``), computed as
    sacreBLEU's paired bootstrap computes them (its float32 sufficient statistics, summed);
    ``metric``: a sacreBLEU ``BLEU`` holding the references (tokenised once for every system)."""
    import numpy as np

    stats = metric._extract_corpus_statistics(list(hyps), None)
    full = metric._aggregate_and_compute(stats).score
    stats = np.array(stats, dtype="float32")
    return full, np.array([metric._compute_score_from_stats(s.sum(0)).score for s in stats[idx]])


def reference_streams(refs: "Sequence[str | Sequence[str]]") -> List[List[str]]:
    """sacreBLEU's references: one stream (list over documents) per reference. ``refs[i]``:
    the reference of document ``i``, or the list of its references (the same number for every
    document, as :func:`read_inputs` gives them for several reference files)."""
    if all(isinstance(r, str) for r in refs):
        return [list(refs)]
    counts = {len(r) for r in refs}
    if len(counts) != 1 or any(isinstance(r, str) for r in refs):
        raise HierError(f"every document needs the same number of references (got "
                        f"{sorted(counts)})")
    return [list(stream) for stream in zip(*refs)]


def bleu_significance(refs: "Sequence[str | Sequence[str]]", systems: Dict[str, Sequence[str]],
                      baseline: str, tgt_lang: str = "en", samples: int = SAMPLES,
                      seed: Optional[int] = BLEU_SEED,
                      tokenize: Optional[str] = None, ref_name: str = "the references",
                      min_systems: int = 2) -> dict:
    """Every system against ``baseline`` on document BLEU (segments = whole documents, one per
    line). ``refs[i]``: the reference of document ``i``, or the list of its references (several
    reference files: BLEU counts n-gram matches against all of them, as ``sacrebleu REF1 REF2
    -i SYS`` and its ``--paired-bs`` do). Returns ``{"metric": "bleu", "signature",
    "documents", "baseline", "samples", "seed", "systems": {name: {"bleu", "sacrebleu_mean",
    "sacrebleu_ci95", "delta", "low", "high", "p_value"}}}`` (BLEU points; the baseline has no
    delta, ``p_value`` None). ``seed`` None: :data:`BLEU_SEED`. ``min_systems=1`` allows one
    system (its interval only)."""
    from sacrebleu.significance import estimate_ci  # lazy: only the BLEU paths load sacreBLEU

    seed = BLEU_SEED if seed is None else seed
    check_systems(refs, systems, baseline, ref_name, min_systems)
    if seed == 0:
        raise HierError("BLEU's seed must not be 0: sacreBLEU's paired test reads 0 as "
                        "unseeded and could not reproduce the resamples")
    tokenize = tokenize or default_tokenize(tgt_lang)
    idx = bootstrap_indices(len(refs), samples, seed)
    # the reference streams given to the metric once, as sacreBLEU's command gives them
    # (sacrebleu/sacrebleu.py: metric_args['references'] = refs)
    metric = bleu_metric(tokenize, reference_streams(refs))
    runs = {name: resampled_bleu(metric, hyps, idx) for name, hyps in systems.items()}
    base_full, base_resampled = runs[baseline]
    out = {}
    for name, (full, resampled) in runs.items():
        mean, half = estimate_ci(resampled)
        entry = {"bleu": full, "sacrebleu_mean": float(mean), "sacrebleu_ci95": float(half)}
        if name == baseline:
            entry["p_value"] = None
        else:
            entry.update(compare(base_full, full, base_resampled, resampled))
        out[name] = entry
    signature = metric.get_signature()
    signature.update("bs", samples)
    signature.update("seed", seed)
    return {"metric": "bleu", "signature": str(signature),
            "documents": len(refs), "baseline": baseline, "samples": samples, "seed": seed,
            "systems": out}


def system_paths(name: str, spec: str) -> List[str]:
    """The hypothesis files of one ``NAME=...``: one path, several joined by commas (a set), or a
    directory (a set: every ``*.hyp`` file directly in it, in name order)."""
    if "," in spec:
        paths = spec.split(",")
        if not all(paths):
            raise HierError(f"system {name!r}: an empty path in {spec!r} (expected "
                            f"NAME=A.hyp,B.hyp,...)")
        return paths
    if os.path.isdir(spec):
        paths = sorted(os.path.join(spec, f) for f in os.listdir(spec) if f.endswith(".hyp"))
        if not paths:
            raise HierError(f"system {name!r}: directory {spec} holds no *.hyp file")
        return paths
    return [spec]


def read_systems(specs: List[str]):
    """``NAME=PATH``, ``NAME=A,B,...`` or ``NAME=DIR`` -> ({name: lines or
    :class:`HypothesisSet`}, {name: path or list of paths}), in the order given; one-line
    errors."""
    systems: Dict[str, Union[List[str], HypothesisSet]] = {}
    paths: Dict[str, Union[str, List[str]]] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise HierError(f"bad system {spec!r}: expected NAME=PATH (e.g. PHT=pht/test.hyp)")
        if name in systems:
            raise HierError(f"two systems named {name!r} ({paths[name]} and {path})")
        files = system_paths(name, path)
        if len(files) == 1 and not os.path.isdir(path):
            systems[name], paths[name] = read_lines(path), path
        else:
            systems[name], paths[name] = HypothesisSet([read_lines(f) for f in files], files), files
    return systems, paths


def split_inputs(metric: str, inputs: List[str]):
    """``REF [REF ...] NAME=PATH NAME=PATH ...`` -> (reference files, system specs): the
    references come first (one or several, for ``metric`` rouge and bleu alike), each system
    is NAME=PATH."""
    first = next((k for k, item in enumerate(inputs) if "=" in item), len(inputs))
    ref_files, specs = inputs[:first], inputs[first:]
    if not ref_files:
        raise HierError("give the reference file(s) first, then the systems as NAME=PATH")
    return ref_files, specs


def read_inputs(metric: str, inputs: List[str]):
    """The inputs of ``fairseq-hier-significance METRIC REF... NAME=PATH...``: (references,
    {name: lines or :class:`HypothesisSet`}, reference name), checked: no empty file, equal line
    counts (naming both files), two systems at least (or one set, ROUGE). Several reference
    files (ROUGE and BLEU): line i of each is a reference of document i."""
    ref_files, specs = split_inputs(metric, inputs)
    ref_lines = [read_lines(path) for path in ref_files]
    systems, paths = read_systems(specs)
    sets = [name for name, hyps in systems.items() if isinstance(hyps, HypothesisSet)]
    if sets and metric != "rouge":
        raise HierError(f"system {sets[0]!r} is a set of hypothesis files: sets are scored on "
                        f"rouge only")
    if len(systems) < 2 and not sets:
        raise HierError("give at least two systems, NAME=PATH each (the first is the baseline), "
                        "or one set of hypothesis files (NAME=A.hyp,B.hyp,... or NAME=DIR)")
    files = [(paths[n], s) for n, s in systems.items() if not isinstance(s, HypothesisSet)]
    files += [(path, member) for n in sets for path, member in zip(paths[n], systems[n])]
    for path, lines in [*zip(ref_files, ref_lines), *files]:
        if not lines:
            raise HierError(f"{path} is empty: one document per line is expected")
    for path, lines in zip(ref_files[1:], ref_lines[1:]):
        check_parallel(ref_files[0], ref_lines[0], path, lines)
    for path, lines in files:
        check_parallel(ref_files[0], ref_lines[0], path, lines)
    refs = ref_lines[0] if len(ref_files) == 1 else [list(r) for r in zip(*ref_lines)]
    return refs, systems, ref_files[0] if len(ref_files) == 1 else ref_files


def dumps(result: dict) -> str:
    """One JSON line without the per-document lists (the command's last line)."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "per_document"}
        return value

    return json.dumps(strip(result))
