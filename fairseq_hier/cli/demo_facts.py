"""Fact accuracy of demo summaries against the corpus generator's ground truth
(``{split}.facts.jsonl`` of ``fairseq-hier-demo-corpus``), and the fact baselines.

Definitions (per test set; ``gold`` = the facts of the title's entity that the reference states):

- a hypothesis *states* value ``v`` for attribute ``a`` when token ``v`` of ``a``'s closed
  vocabulary occurs in it (the attributes' vocabularies are disjoint, so this needs no parsing of
  the template and is blind to phrasing);
- a gold fact ``(a, v)`` is *correct* when the hypothesis states ``v`` for ``a`` and no other value
  for ``a`` (hedging with two values is not rewarded);
- **fact accuracy** = correct gold facts / gold facts (micro average over the test set);
- **wrong-fact rate** = stated (attribute, value) pairs that are not gold / stated pairs;
- **confusions** = stated pairs that are a *distractor* place's fact in that example's source,
  as a share of the gold facts (reading the wrong paragraph);
- 95% interval of the fact accuracy: percentile bootstrap over examples (1000 resamples, fixed
  seed), the way ROUGE-1.5.5 resamples summaries for its ``-c 95`` intervals.

    fairseq-hier-demo-facts score test.facts.jsonl HYPS [NAME=HYPS ...]
    fairseq-hier-demo-facts baseline frequent --facts test.facts.jsonl \\
        --train-facts train.facts.jsonl --output frequent.hyp
    fairseq-hier-demo-facts baseline first --facts test.facts.jsonl --source test.src --output first.hyp

Baselines (summaries in the reference template, with the title's name):
``frequent`` fills every attribute with its most frequent training value; ``first`` with the
first value of that attribute stated anywhere in the ranked source (trusting the ranking, not
the name).
"""

import argparse
import json
import random
import sys
from collections import Counter
from typing import Dict, List, Optional, Sequence

from fairseq_hier.cli import make_demo_corpus as corpus
from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, check_parallel, read_lines

PROG = "fairseq-hier-demo-facts"

VALUE_ATTR: Dict[str, str] = {v: a for a, vs in corpus.VALUES.items() for v in vs}


def read_facts(path: str) -> List[dict]:
    """The ground truth of ``fairseq-hier-demo-corpus``: one dict per example, checked."""
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
            raise HierError(f"{path}:{number}: not a ground-truth line of fairseq-hier-demo-corpus "
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


def get_parser() -> argparse.ArgumentParser:
    parser = command_parser(PROG, __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="fact accuracy of hypothesis files")
    score.add_argument("facts", help="{split}.facts.jsonl of fairseq-hier-demo-corpus")
    score.add_argument("hyps", nargs="+", metavar="[NAME=]HYPS", help="one summary per line")
    score.add_argument("--resamples", type=positive_int, default=1000,
                       help="bootstrap resamples")
    score.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    base = sub.add_parser("baseline", help="write a baseline's summaries")
    base.add_argument("kind", choices=["frequent", "first"])
    base.add_argument("--facts", required=True, help="ground truth of the split to summarise")
    base.add_argument("--train-facts", help="train.facts.jsonl (frequent)")
    base.add_argument("--source", help="the split's .src (first)")
    base.add_argument("--output", required=True)
    return parser


def score(args) -> None:
    truths = read_facts(args.facts)
    print(f"{'system':<16}{'facts % [95% CI]':>22}{'wrong %':>9}{'confused %':>12}")
    for item in args.hyps:
        name, path = item.split("=", 1) if "=" in item else (item, item)
        hyps = read_lines(path)
        if len(hyps) != len(truths):
            raise HierError(f"line counts differ: {args.facts} has {len(truths)} lines, "
                            f"{path} has {len(hyps)} lines (one example per line is expected)")
        s = fact_scores(truths, hyps, args.resamples, args.seed)
        print(f"{name:<16}{100 * s['accuracy']:>7.1f} [{100 * s['low']:5.1f}, "
              f"{100 * s['high']:5.1f}]{100 * s['wrong_rate']:>9.1f}"
              f"{100 * s['confused_rate']:>12.1f}")


def baseline(args) -> None:
    inputs = [args.facts, args.train_facts if args.kind == "frequent" else args.source]
    with atomic_outputs([args.output], inputs=inputs) as (f,):
        truths = read_facts(args.facts)
        if args.kind == "frequent":
            lines = frequent_summaries(truths, read_facts(args.train_facts))
        else:
            sources = read_lines(args.source)
            check_parallel(args.facts, truths, args.source, sources)
            lines = first_summaries(truths, sources)
        f.writelines(line + "\n" for line in lines)


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    if args.command == "baseline":
        if args.kind == "frequent" and not args.train_facts:
            parser.error("baseline frequent needs --train-facts")
        if args.kind == "first" and not args.source:
            parser.error("baseline first needs --source")
    return run_command(PROG, score if args.command == "score" else baseline, args)


if __name__ == "__main__":
    sys.exit(cli_main())
