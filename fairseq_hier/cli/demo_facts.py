"""Fact accuracy of demo summaries against the corpus generator's ground truth
(``{split}.facts.jsonl`` of ``fairseq-hier-demo-corpus``), and the fact baselines.

    fairseq-hier-demo-facts score test.facts.jsonl HYPS [NAME=HYPS ...]

The definitions (fact accuracy, wrong-fact rate, confusions), the baselines and ``seeds``:
docs/commands.md, section fairseq_hier.cli.demo_facts. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import json
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.demo.facts import score_files, write_baseline
from fairseq_hier.demo.seeds import compare_seeds, format_comparison, parse_groups, parse_systems
from fairseq_hier.io import atomic_outputs

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
    seeds = sub.add_parser("seeds", help="compare systems over several seeds of the demo")
    seeds.add_argument("--seed-dir", action="append", required=True,
                       help="one demo run (its WORK folder); repeat for every seed")
    seeds.add_argument("systems", nargs="+", metavar="NAME=RUN_DIR",
                       help="a system's run folder (test.hyp, attention.json), relative to each "
                            "seed folder")
    seeds.add_argument("--compare", action="append",
                       help="systems to order pairwise, comma-separated (repeatable; default: "
                            "all systems)")
    seeds.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples")
    seeds.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    seeds.add_argument("--json", help="also write the comparison as JSON here")
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


def seeds(args) -> None:
    systems = parse_systems(args.systems)
    groups = parse_groups(args.compare, systems)
    result = compare_seeds(args.seed_dir, systems, groups, args.resamples, args.seed)
    print(format_comparison(result))
    if args.json:
        with atomic_outputs([args.json]) as (f,):
            json.dump(result, f, indent=1)


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    if args.command == "baseline":
        if args.kind == "frequent" and not args.train_facts:
            parser.error("baseline frequent needs --train-facts")
        if args.kind == "first" and not args.source:
            parser.error("baseline first needs --source")
    commands = {"score": score, "baseline": baseline, "seeds": seeds}
    return run_command(PROG, commands[args.command], args)


if __name__ == "__main__":
    sys.exit(cli_main())
