"""``fairseq-hier decode``: decode one split with a trained checkpoint into its run folder
(fairseq-generate's log, the hypotheses in example order, what was decoded, run.json).

    fairseq-hier decode work/runs/pht --data work/spm/data-bin --references work/raw/test.tgt \
        -- --post-process sentencepiece

Specification: docs/run-folder.md, section decode. Imports ``fairseq_hier.runs`` and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, positive_int, run_command, split_option
from fairseq_hier.runs.decode import DEFAULT_BATCH_SIZE, DecodeRequest, decode

PROG = "fairseq-hier-decode"


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.usage = "%(prog)s RUN_DIR --data DATA_BIN --references FILE [options] [-- fairseq-generate args]"
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run folder (made if missing)")
    p.add_argument("--data", required=True, metavar="DATA_BIN", help="the data-bin to decode")
    p.add_argument("--references", required=True, metavar="FILE",
                   help="the split's references, one a line (a document-translation split: "
                        "the raw target documents)")
    p.add_argument("--multi-references", metavar="FILE.jsonl",
                   help="several references per example, one JSON list a line")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="the checkpoint (default RUN_DIR/checkpoint_best.pt)")
    p.add_argument("--subset", default="test", help="the split (default test)")
    p.add_argument("--task", help="fairseq task (default: the data-bin record's, else the "
                                  "checkpoint's)")
    p.add_argument("--task-args", default=None, metavar="\"ARGS\"",
                   help="the task's options, as shell words (e.g. \"--max-paragraphs 30\")")
    p.add_argument("--generation", default=None, metavar="\"ARGS\"",
                   help="decoding options, as shell words (default: those the data-bin "
                        "record gives the checkpoint's architecture)")
    batch = p.add_mutually_exclusive_group()
    batch.add_argument("--batch-size", type=positive_int, default=None,
                       help=f"sentences per batch (default {DEFAULT_BATCH_SIZE})")
    batch.add_argument("--max-tokens", type=positive_int, default=None,
                       help="tokens per batch, instead of --batch-size")
    p.add_argument("--lines", choices=("H", "D"), default=None,
                   help="hypotheses from H- lines, or D- (detokenised; the default with --bpe)")
    p.add_argument("--force", action="store_true",
                   help="decode again when RUN_DIR/generate-SUBSET.txt exists (else reused)")
    p.add_argument("--name", help="run.json's name (default: RUN_DIR's folder name)")
    p.add_argument("--arch", help="run.json's arch (default: the trained run's, else the "
                                  "checkpoint's)")
    return p


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """The options, and fairseq-generate's own arguments after ``--`` (``args.extra``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = get_parser()
    args = p.parse_args(argv)
    args.extra = extra
    args.task_args = split_option(p, "--task-args", args.task_args)
    if args.generation is not None:
        args.generation = split_option(p, "--generation", args.generation)
    return args


def run(args) -> None:
    facts = decode(DecodeRequest(
        args.run_dir, args.data, args.references, args.multi_references, args.checkpoint,
        args.subset, args.task, args.task_args, args.generation, args.batch_size,
        args.max_tokens, args.lines, args.force, args.name, args.arch, args.extra))
    print(f"{args.run_dir}: {facts['examples']} hypotheses ({facts['lines']} lines) of "
          f"{facts['task']} {facts['arch']} on {facts['data']} {facts['subset']}")


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
