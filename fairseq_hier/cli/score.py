"""``fairseq-hier score``: score a decoded run folder by the evaluation of the paper it
follows (ROUGE-1.5.5 after a protocol's normalisation, or document BLEU), and print the scores
with their 95% intervals.

    fairseq-hier score work/runs/pht --protocol plain

Specification: docs/run-folder.md, section score. Imports ``fairseq_hier.runs`` and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.runs.protocols import PROTOCOLS
from fairseq_hier.runs.score import ScoreRequest, score
from fairseq_hier.scoring.bootstrap import SAMPLES

PROG = "fairseq-hier-score"


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder decoded by fairseq-hier decode")
    p.add_argument("--subset", default="test", help="the decoded split (default test)")
    p.add_argument("--protocol", default=None, metavar="{" + ",".join(PROTOCOLS) + "}",
                   help="the paper's ROUGE evaluation (default plain): "
                        + "; ".join(f"{p.name}: {p.paper}" for p in PROTOCOLS.values()))
    p.add_argument("--samples", type=positive_int, default=SAMPLES,
                   help=f"bootstrap resamples of the 95%% intervals (default {SAMPLES})")
    p.add_argument("--seed", type=int, default=None,
                   help="document BLEU's resampling seed (default sacreBLEU's)")
    p.add_argument("--tgt-lang", default=None,
                   help="document BLEU's target language (default: the decoding's "
                        "--target-lang)")
    p.add_argument("--references", default=None, metavar="FILE",
                   help="the references, instead of those the decoding names (a folder of "
                        "hypotheses written otherwise, SUBSET.hyp.raw without "
                        "SUBSET.decode.json, needs them)")
    p.add_argument("--multi-references", default=None, metavar="FILE.jsonl",
                   help="with --references: several references per example, one JSON list a "
                        "line")
    return p


def run(args) -> None:
    for line in score(ScoreRequest(args.run_dir, args.subset, args.protocol, args.samples,
                                   args.seed, args.tgt_lang, args.references,
                                   args.multi_references)):
        print(line)


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
