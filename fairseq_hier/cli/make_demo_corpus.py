"""Generate the demo's synthetic multi-document summarisation corpus (deterministic per seed),
with the ground truth of every summary's facts.

    fairseq-hier-demo-corpus --out-dir demo/raw --seed 1 --train 6000 --valid 200 --test 200

Writes ``OUT_DIR/{train,valid,test}.{src,tgt,facts.jsonl}`` together or not at all, and prints
each split's sizes. The corpus (entities, relevant and distractor paragraphs, the summary
template, the ground truth's format): :mod:`fairseq_hier.demo.corpus`.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, ranged, run_command
from fairseq_hier.demo.corpus import ATTRIBUTES, MAX_VALUES, NAMES, PHRASES, write_corpus

PROG = "fairseq-hier-demo-corpus"


def get_parser() -> argparse.ArgumentParser:
    parser = command_parser(PROG, __doc__)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train", type=count, default=6000, help="number of training examples")
    parser.add_argument("--valid", type=count, default=200)
    parser.add_argument("--test", type=count, default=200)
    parser.add_argument("--names", type=ranged(int, 2, len(NAMES)), default=8,
                        help=f"distinct place names (at most {len(NAMES)}); the title and the "
                             "other places of an example are drawn from the first N")
    parser.add_argument("--values", type=ranged(int, 2, MAX_VALUES), default=8,
                        help=f"distinct values per attribute (at most {MAX_VALUES}); fewer values "
                             "are learnt faster, more make guessing harder")
    parser.add_argument("--phrasings", type=ranged(int, 1, min(len(p) for p in PHRASES.values())),
                        default=1, help="source phrasings per attribute (at most 4)")
    parser.add_argument("--min-facts", type=ranged(int, 1, len(ATTRIBUTES)),
                        default=len(ATTRIBUTES),
                        help="facts per summary (kind always, then a random subset of the others)")
    parser.add_argument("--max-facts", type=ranged(int, 1, len(ATTRIBUTES)),
                        default=len(ATTRIBUTES))
    parser.add_argument("--max-facts-per-paragraph", type=positive_int, default=2)
    parser.add_argument("--other-entities", type=count, default=2,
                        help="other places per example whose facts (the same attributes, other "
                             "values) are stated in distractor paragraphs")
    parser.add_argument("--mentions", type=count, default=1,
                        help="paragraphs per example that mention the entity without a fact")
    parser.add_argument("--fillers", type=count, default=0,
                        help="filler-only paragraphs per example")
    parser.add_argument("--min-paragraph-tokens", type=positive_int, default=6)
    parser.add_argument("--max-paragraph-tokens", type=positive_int, default=12)
    parser.add_argument("--repeat-prob", type=ranged(float, 0, 1), default=0.3,
                        help="probability of an extra relevant paragraph restating a fact")
    parser.add_argument("--rank-noise", type=ranged(float, 0), default=2.0,
                        help="std of the ranking noise (relevant paragraphs score 1, others 0)")
    return parser


def check_args(parser: argparse.ArgumentParser, args) -> None:
    """The rules between options (each option's own range is checked when parsed)."""
    if args.min_facts > args.max_facts:
        parser.error(f"--min-facts {args.min_facts} must be <= --max-facts {args.max_facts}")
    if args.other_entities >= args.names:
        parser.error(f"--other-entities {args.other_entities} must be < --names {args.names}")
    if args.min_paragraph_tokens > args.max_paragraph_tokens:
        parser.error(f"--min-paragraph-tokens {args.min_paragraph_tokens} must be <= "
                     f"--max-paragraph-tokens {args.max_paragraph_tokens}")


def run(args) -> None:
    stats_of, vocab = write_corpus(args)
    for split, stats in stats_of:
        print(f"[{split}] {stats['examples']} examples, {stats['paragraphs']:.1f} paragraphs, "
              f"{stats['src_tokens']:.1f} source / {stats['tgt_tokens']:.1f} target tokens on "
              f"average")
    print(f"wrote {args.out_dir}/{{train,valid,test}}.{{src,tgt,facts.jsonl}}; "
          f"vocabulary {vocab} words")


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
