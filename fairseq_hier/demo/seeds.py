"""Demo systems compared over several training seeds, with intervals and a rule for orderings.

Seed folders, the metrics (ratios of sums over test examples), the per-seed and seed-stratified
bootstrap intervals and the ordering rule: docs/evaluation.md, section fairseq_hier.demo.seeds.
Imports ``fairseq_hier.demo``, ``scoring``, ``io``, ``errors``; numpy inside functions.
"""

import json
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import HierError
from ..io import check_parallel, read_lines
from ..scoring.bootstrap import bootstrap_indices
from ..scoring.significance import rouge_per_document
from .facts import read_facts, score_example

METRICS = ("facts", "rouge-2", "rouge-l", "cosine")
LEVEL = 0.95


@dataclass
class Ratio:
    """One metric of one system on one seed's test set, per example: ``sum(num) / sum(den)``."""
    num: List[float]
    den: List[float]

    @property
    def value(self) -> float:
        den = sum(self.den)
        return sum(self.num) / den if den else float("nan")


def _ratios_of_resamples(ratio: Ratio, idx):
    """``samples`` ratios of sums, one per row of the index matrix ``idx`` (``samples x n``)."""
    import numpy as np  # lazy: scoring commands start without numpy

    num, den = np.asarray(ratio.num, float), np.asarray(ratio.den, float)
    d = den[idx].sum(axis=1)
    return np.divide(num[idx].sum(axis=1), d, out=np.full(len(d), np.nan), where=d > 0)


def _percentiles(values, level: float = LEVEL) -> Tuple[float, float]:
    import numpy as np

    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(values, [tail, 100 - tail])
    return float(low), float(high)


def seed_interval(ratio: Ratio, samples: int = 1000, seed: int = 1) -> Tuple[float, float, float]:
    """(value, low, high) of one seed's metric, resampling its examples."""
    idx = bootstrap_indices(len(ratio.num), samples, seed)
    return (ratio.value, *_percentiles(_ratios_of_resamples(ratio, idx)))


def stratified_interval(per_seed: Sequence[Ratio], samples: int = 1000,
                        seed: int = 1) -> Tuple[float, float, float]:
    """(mean over seeds of each seed's value, low, high): every resample draws each seed's
    examples independently and averages the seeds' ratios."""
    import numpy as np

    rng = np.random.default_rng(seed)
    # one generator draws every seed's resamples in turn: seeds x samples ratios
    stacked = np.stack([_ratios_of_resamples(r, rng.integers(0, len(r.num),
                                                             size=(samples, len(r.num))))
                        for r in per_seed])
    value = float(np.mean([r.value for r in per_seed]))
    return (value, *_percentiles(stacked.mean(axis=0)))


def paired_interval(a: Ratio, b: Ratio, samples: int = 1000,
                    seed: int = 1) -> Tuple[float, float, float]:
    """(A - B, low, high) on one seed: both systems on the same resampled examples."""
    if len(a.num) != len(b.num):
        raise HierError(f"paired comparison of {len(a.num)} and {len(b.num)} examples")
    idx = bootstrap_indices(len(a.num), samples, seed)
    diff = _ratios_of_resamples(a, idx) - _ratios_of_resamples(b, idx)
    return (a.value - b.value, *_percentiles(diff))


def ordering(differences: Sequence[Tuple[float, float, float]]) -> str:
    """``">"``, ``"<"`` or ``"not shown"`` from the per-seed paired intervals of ``A - B``."""
    if differences and all(low > 0 for _, low, _ in differences):
        return ">"
    if differences and all(high < 0 for _, _, high in differences):
        return "<"
    return "not shown"


# ----------------------------------------------------------------------------------------------
# reading seed folders


def _facts_ratio(truths: Sequence[dict], hyps: Sequence[str]) -> Ratio:
    counts = [score_example(t, h) for t, h in zip(truths, hyps)]
    return Ratio([c["correct"] for c in counts], [c["gold"] for c in counts])


def _cosine_ratio(path: str, n: int) -> Ratio:
    try:
        with open(path, encoding="utf-8") as f:
            per_example = json.load(f)["per_example"]
    except (OSError, ValueError, KeyError) as e:
        raise HierError(f"{path}: not an attention.json of fairseq-hier-analyse attention-cosine "
                        f"({e.__class__.__name__}: {e})") from None
    if len(per_example) != n:
        raise HierError(f"{path}: {len(per_example)} examples, the test set has {n}")
    return Ratio([c or 0.0 for c in per_example], [0.0 if c is None else 1.0 for c in per_example])


def read_seed(seed_dir: str, systems: Dict[str, str]) -> Dict[str, Dict[str, Ratio]]:
    """``{system: {metric: Ratio}}`` of one seed folder; ``systems`` maps a name to its run
    folder relative to ``seed_dir``. ``cosine`` is present for systems with an attention.json."""
    refs_path = os.path.join(seed_dir, "raw", "test.tgt")
    facts_path = os.path.join(seed_dir, "raw", "test.facts.jsonl")
    refs, truths = read_lines(refs_path), read_facts(facts_path)
    check_parallel(refs_path, refs, facts_path, truths)
    out = {}
    for name, run in systems.items():
        hyp_path = os.path.join(seed_dir, run, "test.hyp")
        hyps = read_lines(hyp_path)
        check_parallel(refs_path, refs, hyp_path, hyps)
        rouge = rouge_per_document(refs, hyps, ref_name=refs_path, hyp_name=hyp_path)
        metrics = {"facts": _facts_ratio(truths, hyps)}
        for key in ("rouge-2", "rouge-l"):
            metrics[key] = Ratio(list(rouge[key]), [1.0] * len(hyps))
        attention = os.path.join(seed_dir, run, "attention.json")
        if os.path.exists(attention):
            metrics["cosine"] = _cosine_ratio(attention, len(hyps))
        out[name] = metrics
    return out


def compare_seeds(seed_dirs: Sequence[str], systems: Dict[str, str],
                  groups: Sequence[Sequence[str]], samples: int = 1000, seed: int = 1) -> dict:
    """The comparison as a JSON-ready dict: per system and metric the value over seeds with its
    interval and the per-seed values with theirs; per group, every pair's per-seed paired
    differences and the ordering (:func:`ordering`)."""
    if len(seed_dirs) < 1:
        raise HierError("at least one seed folder is needed")
    for group in groups:
        unknown = [s for s in group if s not in systems]
        if unknown:
            raise HierError(f"--compare names {', '.join(unknown)}, which is not a system "
                            f"(systems: {', '.join(systems)})")
    runs = [read_seed(d, systems) for d in seed_dirs]
    table = {}
    for name in systems:
        table[name] = {}
        for metric in METRICS:
            per_seed = [run[name].get(metric) for run in runs]
            if any(r is None for r in per_seed):
                continue
            value, low, high = stratified_interval(per_seed, samples, seed)
            table[name][metric] = {
                "mean": value, "low": low, "high": high,
                "seeds": [dict(zip(("value", "low", "high"), seed_interval(r, samples, seed)))
                          for r in per_seed]}
    pairs = []
    for group in groups:
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                for metric in METRICS:
                    if metric not in table[a] or metric not in table[b]:
                        continue
                    diffs = [paired_interval(run[a][metric], run[b][metric], samples, seed)
                             for run in runs]
                    pairs.append({"a": a, "b": b, "metric": metric, "ordering": ordering(diffs),
                                  "seeds": [dict(zip(("diff", "low", "high"), d))
                                            for d in diffs]})
    return {"seed_dirs": list(seed_dirs), "samples": samples, "level": LEVEL,
            "systems": table, "pairs": pairs}


def format_comparison(result: dict) -> str:
    """The comparison as text: a table of means over seeds (x100, [95% interval]) with the
    per-seed values, then one line per pair and metric."""
    scale = {"cosine": 1.0}
    lines = []
    seeds = len(result["seed_dirs"])
    header = f"{'system':<14}" + "".join(f"{m + ' [95% CI]':>24}" for m in METRICS)
    lines.append(header)
    for name, metrics in result["systems"].items():
        row, per_seed = f"{name:<14}", f"{'  per seed':<14}"
        for m in METRICS:
            if m not in metrics:
                row += f"{'-':>24}"
                per_seed += f"{'':>24}"
                continue
            k = scale.get(m, 100.0)
            s = metrics[m]
            fmt = ".3f" if m == "cosine" else ".1f"
            cell = f"{k * s['mean']:{fmt}} [{k * s['low']:{fmt}}, {k * s['high']:{fmt}}]"
            row += cell.rjust(24)
            per_seed += " / ".join(f"{k * x['value']:{fmt}}" for x in s["seeds"]).rjust(24)
        lines += [row, per_seed]
    lines.append("")
    lines.append(f"orderings (claimed only when the paired 95% interval of A - B excludes 0 "
                 f"on the same side in all {seeds} seeds):")
    for p in result["pairs"]:
        m = p["metric"]
        k = scale.get(m, 100.0)
        fmt = ".3f" if m == "cosine" else ".1f"
        diffs = "; ".join(f"{k * d['diff']:+{fmt}} [{k * d['low']:{fmt}}, {k * d['high']:{fmt}}]"
                          for d in p["seeds"])
        verdict = f"{p['a']} {p['ordering']} {p['b']}" if p["ordering"] != "not shown" \
            else f"{p['a']} vs {p['b']}: not shown"
        lines.append(f"  {m:<8} {verdict:<32} per-seed A-B: {diffs}")
    return "\n".join(lines)


def parse_systems(specs: Sequence[str]) -> Dict[str, str]:
    """``NAME=RUN_DIR`` items -> ``{name: run_dir}``; one-line errors for malformed items."""
    systems = {}
    for spec in specs:
        name, sep, run = spec.partition("=")
        if not sep or not name or not run:
            raise HierError(f"system {spec!r}: expected NAME=RUN_DIR (the run folder relative to "
                            f"each seed folder)")
        if name in systems:
            raise HierError(f"system {name!r} is named twice")
        systems[name] = run
    return systems


def parse_groups(specs: Optional[Sequence[str]], systems: Dict[str, str]) -> List[List[str]]:
    """``--compare A,B,C`` items -> groups of system names (default: all systems, one group)."""
    if not specs:
        return [list(systems)]
    groups = [[s.strip() for s in spec.split(",") if s.strip()] for spec in specs]
    for spec, group in zip(specs, groups):
        if len(group) < 2:
            raise HierError(f"--compare {spec!r}: name at least two systems, comma-separated")
    return groups
