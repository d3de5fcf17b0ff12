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
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.demo.facts import score_files, write_baseline

PROG = "fairseq-hier-demo-facts"


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
    scores = score_files(args.facts, args.hyps, args.resamples, args.seed)
    print(f"{'system':<16}{'facts % [95% CI]':>22}{'wrong %':>9}{'confused %':>12}")
    for name, s in scores:
        print(f"{name:<16}{100 * s['accuracy']:>7.1f} [{100 * s['low']:5.1f}, "
              f"{100 * s['high']:5.1f}]{100 * s['wrong_rate']:>9.1f}"
              f"{100 * s['confused_rate']:>12.1f}")


def baseline(args) -> None:
    write_baseline(args.kind, args.facts, args.output, train_facts=args.train_facts,
                   source=args.source)


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
