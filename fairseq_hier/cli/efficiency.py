"""``fairseq-hier-efficiency``: the computational-efficiency table of paper 000 (Table 4, Sec. 5.4)
for our architectures at the same widths: parameters, peak training memory, the largest batch
under a memory budget, validation time; written as efficiency.json for the report.

Its ``--help`` prints the usage, the measuring rules and the output (:data:`EPILOG`); every
column and the JSON schema: :mod:`fairseq_hier.analysis.efficiency`. Imports
``fairseq_hier.analysis``, ``io``, ``errors`` and ``fairseq_hier.cli.common`` (torch inside a
function).
"""

# the --help text after the description: usage, rules and output
EPILOG = """    fairseq-hier-efficiency --archs transformer pht vht liu_ht --tokens 1600 \\
        --memory-budget-gib 11 --layers 3 --embed-dim 256 --output efficiency.json [--cpu]
    fairseq-hier-efficiency --archs transformer pht vht --data demo_work/data-bin \\
        --output demo_work/checkpoints/pht/efficiency.json     # valid time on a real split

Every column, the rows and the JSON schema are described in :mod:`fairseq_hier.analysis.efficiency`.
On CUDA (the default when present) the max batch is searched with real out-of-memory under a
capped allocator; on CPU (``--cpu`` or no GPU) on the measured peak allocations of each tried
batch, which costs one training step per try: at 000's widths that is minutes per model on a
few cores (use ``--max-batch-limit``, smaller ``--tokens`` / ``--embed-dim``, or
``--no-max-batch``). Prints the table, then the JSON as its last line; ``--output`` is checked
before anything is measured and written whole or not at all.
"""

import argparse
import json
import os
import sys
from typing import List, Optional

from fairseq_hier.analysis import efficiency as eff
from fairseq_hier.cli.common import (command_parser, positive_int, ranged, run_command,
                                     split_option)
from fairseq_hier.errors import shell_words
from fairseq_hier.io import atomic_outputs

PROG = "fairseq-hier-efficiency"
ARCHS = eff.TABLE_ARCHS  # the rows --archs may name


def build_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.epilog = EPILOG
    p.add_argument("--archs", nargs="+", choices=ARCHS, default=list(ARCHS), metavar="ARCH",
                   help=f"rows, in order (default: all of {', '.join(ARCHS)})")
    p.add_argument("--tokens", type=ranged(int, 100), default=1600,
                   help="source tokens, a multiple of 100 (paragraphs of 100); 000: 1600")
    p.add_argument("--memory-budget-gib", type=ranged(float, 0, low_open=True), default=11.0,
                   help="memory budget of the max-batch search (000: an 11 GB 2080 Ti)")
    p.add_argument("--layers", type=positive_int, default=3, help="encoder and decoder layers (000: 3)")
    p.add_argument("--embed-dim", type=positive_int, default=256,
                   help="model dimension d (FFN 4d; 000: 256)")
    p.add_argument("--heads", type=positive_int, default=4, help="attention heads (000: 4)")
    p.add_argument("--vocab", type=ranged(int, 8), default=None,
                   help="symbols of the synthetic dictionary (default 32000; with --data: the "
                        "data-bin's dictionary)")
    p.add_argument("--batch-size", type=positive_int, default=1,
                   help="batch of the peak-memory column (default 1)")
    p.add_argument("--max-batch-limit", type=positive_int, default=1024,
                   help="largest batch the search tries")
    p.add_argument("--no-max-batch", action="store_true", help="skip the max-batch search")
    p.add_argument("--valid-examples", type=positive_int, default=64,
                   help="synthetic validation examples (without --data)")
    p.add_argument("--valid-batch-size", type=positive_int, default=8, help="validation batch size")
    p.add_argument("--valid-repeats", type=positive_int, default=1,
                   help="timed validation passes; the fastest counts (default 1)")
    p.add_argument("--data", default=None, metavar="DATA_BIN",
                   help="time validation on this data-bin's valid split (hierarchical_"
                        "summarization task); the models then use its dictionary")
    p.add_argument("--dependency-parse", default=None, metavar="NAME",
                   help="with --data: the parse ParsingSum's rows read (valid.parse.NAME.*)")
    p.add_argument("--task-args", default="",
                   help="with --data: more task flags, one string (e.g. \"--paragraph-separator "
                        "'<P>'\"); they come after the ones set from --tokens")
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                   help="fp32 or bf16 autocast (weights and Adam stay fp32)")
    p.add_argument("--cpu", action="store_true", help="measure on CPU even if CUDA is present")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="torch CPU threads (1 on a shared machine: several threads slow down "
                        "unevenly when other processes take cores)")
    p.add_argument("--output", default=None, help="write efficiency.json here")
    return p


def check_args(parser: argparse.ArgumentParser, args) -> None:
    """The rules between options (each option's own range is checked when parsed)."""
    if args.tokens % 100:
        parser.error(f"--tokens must be a positive multiple of 100, got {args.tokens}")
    if args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} is not divisible by --heads {args.heads}")
    if args.data is not None and not os.path.isdir(args.data):
        parser.error(f"--data {args.data}: no such directory")
    if (args.dependency_parse or args.task_args) and args.data is None:
        parser.error("--dependency-parse and --task-args need --data")
    split_option(parser, "--task-args", args.task_args)
    if len(set(args.archs)) != len(args.archs):
        parser.error(f"--archs: an architecture is given twice: {' '.join(args.archs)}")


def run(args) -> dict:
    if args.output:  # a bad --output is refused before minutes of measuring
        with atomic_outputs([args.output]) as (f,):
            result = measure(args)
            json.dump(result, f, indent=1)
            f.write("\n")
        print(f"wrote {args.output}")
    else:
        result = measure(args)
    print(json.dumps(result))
    return result


def measure(args) -> dict:
    """Measure the table and print it."""
    import torch  # lazy: --help and the option checks start without torch

    if args.threads:
        torch.set_num_threads(args.threads)
    device = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    result = eff.efficiency_table(
        args.archs, args.tokens, args.memory_budget_gib, args.layers, args.embed_dim, device,
        args.dtype, args.batch_size, args.valid_examples, args.valid_batch_size,
        args.max_batch_limit, args.data, args.dependency_parse,
        shell_words("--task-args", args.task_args),
        args.vocab, args.heads, not args.no_max_batch, eff.log_stderr, args.valid_repeats)
    print(eff.format_table(result))
    return result


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
