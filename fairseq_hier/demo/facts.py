"""Fact accuracy of demo summaries against the corpus generator's ground truth
(``{split}.facts.jsonl`` of :mod:`fairseq_hier.demo.corpus`), and the fact baselines
(``fairseq-hier-demo facts`` defines fact accuracy, the wrong-fact rate, confusions and the
baselines).
"""

import json
import random
from collections import Counter
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from fairseq_hier.demo import corpus
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, check_parallel, read_lines

VALUE_ATTR: Dict[str, str] = {v: a for a, vs in corpus.VALUES.items() for v in vs}


def read_facts(path: str) -> List[dict]:
    """The ground truth of ``fairseq-hier-demo corpus``: one dict per example, checked."""
    truths = []
    for number, line in enumerate(read_lines(path), start=1):
        try:
            truth = json.loads(line)
            facts = truth["facts"]
            if not isinstance(truth["entity"], str) or not facts:
                raise HierError("empty entity or facts")
            for a, f in facts.items():
                if a not in corpus.VALUES or VALUE_ATTR.get(f["value"]) != a:
                    raise HierError(f"unknown fact {a} = {f['value']!r}")
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            what = str(e) if isinstance(e, HierError) else f"{type(e).__name__}: {e}"
            raise HierError(f"{path}:{number}: not a ground-truth line of fairseq-hier-demo corpus "
                            f"({what})") from None
        truths.append(truth)
    return truths


def stated_facts(hypothesis: str) -> Dict[str, set]:
    """attribute -> the set of its values that ``hypothesis`` states."""
    stated: Dict[str, set] = {}
    for w in hypothesis.split():
        if w in VALUE_ATTR:
            stated.setdefault(VALUE_ATTR[w], set()).add(w)
    return stated


def score_example(truth: dict, hypothesis: str) -> Dict[str, int]:
    """Counts for one example: ``gold``, ``correct``, ``stated``, ``wrong``, ``confused``."""
    gold = {a: f["value"] for a, f in truth["facts"].items()}
    stated = stated_facts(hypothesis)
    pairs = {(a, v) for a, vs in stated.items() for v in vs}
    distractor = {(d["attribute"], d["value"]) for d in truth.get("distractors", [])}
    wrong = {p for p in pairs if gold.get(p[0]) != p[1]}
    return {"gold": len(gold),
            "correct": sum(stated.get(a) == {v} for a, v in gold.items()),
            "stated": len(pairs), "wrong": len(wrong), "confused": len(wrong & distractor)}


def bootstrap_interval(numerators: Sequence[float], denominators: Sequence[float],
                       resamples: int = 1000, seed: int = 1, level: float = 0.95):
    """Percentile bootstrap interval of sum(num) / sum(den), resampling examples."""
    rng = random.Random(seed)
    n = len(numerators)
    ratios = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        den = sum(denominators[i] for i in idx)
        ratios.append(sum(numerators[i] for i in idx) / den if den else 0.0)
    ratios.sort()
    lo = ratios[int((1 - level) / 2 * resamples)]
    hi = ratios[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi


def fact_scores(truths: Sequence[dict], hypotheses: Sequence[str], resamples: int = 1000,
                seed: int = 1) -> Dict[str, float]:
    """Fact accuracy (with ``low``/``high``, its 95% bootstrap interval), wrong-fact rate and
    confusion rate, all as fractions (see the module docstring)."""
    if len(truths) != len(hypotheses):
        raise HierError(f"{len(truths)} ground-truth examples but {len(hypotheses)} hypotheses")
    if not truths:
        raise HierError("no examples to score")
    counts = [score_example(t, h) for t, h in zip(truths, hypotheses)]
    total = {k: sum(c[k] for c in counts) for k in counts[0]}
    low, high = bootstrap_interval([c["correct"] for c in counts], [c["gold"] for c in counts],
                                   resamples, seed)
    return {"accuracy": total["correct"] / total["gold"], "low": low, "high": high,
            "wrong_rate": total["wrong"] / total["stated"] if total["stated"] else 0.0,
            "confused_rate": total["confused"] / total["gold"], "examples": len(counts), **total}


# ----------------------------------------------------------------------------------------------
# baselines


def frequent_summaries(truths: Sequence[dict], train_truths: Sequence[dict]) -> List[str]:
    """The reference template with the title's name and each attribute's most frequent training
    value (ties: the value seen first), for every attribute the corpus has."""
    counts: Dict[str, Counter] = {a: Counter() for a in corpus.ATTRIBUTES}
    for t in train_truths:
        for a, f in t["facts"].items():
            counts[a][f["value"]] += 1
    best = {a: c.most_common(1)[0][0] for a, c in counts.items() if c}
    return [corpus.summary(t["entity"], best) for t in truths]


def first_summaries(truths: Sequence[dict], sources: Sequence[str]) -> List[str]:
    """The reference template with the title's name and, per attribute, the first value stated
    in the ranked source, whichever place it belongs to (kind: most common kind if none)."""
    out = []
    for t, source in zip(truths, sources):
        found: Dict[str, str] = {}
        for w in source.split():
            if w in VALUE_ATTR:
                found.setdefault(VALUE_ATTR[w], w)
        found.setdefault("kind", corpus.KINDS[0])
        out.append(corpus.summary(t["entity"], found))
    return out


def score_files(facts: str, hyps: Sequence[str], resamples: int = 1000,
                seed: int = 1) -> Iterator[Tuple[str, dict]]:
    """(name, :func:`fact_scores`) of each ``[NAME=]PATH`` of ``hyps`` against ``facts``, one
    at a time (``facts`` is read and checked first; a file whose line count differs is an error
    when its turn comes)."""
    truths = read_facts(facts)
    return _score_each(truths, facts, hyps, resamples, seed)


def _score_each(truths: List[dict], facts: str, hyps: Sequence[str], resamples: int,
                seed: int) -> Iterator[Tuple[str, dict]]:
    for item in hyps:
        name, path = item.split("=", 1) if "=" in item else (item, item)
        lines = read_lines(path)
        if len(lines) != len(truths):
            raise HierError(f"line counts differ: {facts} has {len(truths)} lines, "
                            f"{path} has {len(lines)} lines (one example per line is expected)")
        yield name, fact_scores(truths, lines, resamples, seed)


def write_baseline(kind: str, facts: str, output: str, train_facts: Optional[str] = None,
                   source: Optional[str] = None) -> None:
    """Write the ``frequent`` (needs ``train_facts``) or ``first`` (needs ``source``) baseline's
    summaries of the examples of ``facts`` to ``output``."""
    inputs = [facts, train_facts if kind == "frequent" else source]
    with atomic_outputs([output], inputs=inputs) as (f,):
        truths = read_facts(facts)
        if kind == "frequent":
            lines = frequent_summaries(truths, read_facts(train_facts))
        else:
            sources = read_lines(source)
            check_parallel(facts, truths, source, sources)
            lines = first_summaries(truths, sources)
        f.writelines(line + "\n" for line in lines)
