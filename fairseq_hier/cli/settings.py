"""``fairseq-hier-settings ARCH --stage train|generate|facts ... [-- FAIRSEQ_ARGS]``: an
architecture's paper settings, scaled to your data and GPUs, as fairseq arguments.

``--stage train`` prints fairseq-train's options (one argument per line, for the shell's
``mapfile``): the paper's model, input cut, optimiser, schedule and criterion;
its updates scaled to ``--examples`` (the same epochs); its effective batch kept on ``--gpus``
through ``--update-freq``. ``--stage generate`` prints fairseq-generate's options: the paper's
decoding rules, with lengths from ``--targets`` (the training targets in subword tokens) where
given. ``--stage facts`` prints shell assignments (``TASK``, ``SUBWORD``: sentencepiece or gpt2,
``PARSE``: 1 when spaCy's dependency parse is needed, ``PRETRAINED``: bart.large / bart.base or
empty, ``SRC``/``TGT``: the binarized suffixes, ``PAPER``). ``--stage batch`` (no ARCH) keeps a
recipe's own paper batch on this machine's GPUs: given the paper's per-GPU ``--batch-size`` or
``--max-tokens``, ``--paper-gpus`` and ``--paper-update-freq``, it prints the per-GPU batch and
``--update-freq`` for ``--gpus``. Arguments after ``--`` are yours:
each replaces the setting of the same name (a new per-GPU batch keeps the effective batch
through ``--update-freq`` unless you give that too); they are parsed with fairseq's own parser
for the task (fairseq-train's or fairseq-generate's), so an unknown option or a malformed value
is a one-line error before anything is printed. How every number was chosen goes to stderr.

    SETTINGS=$(fairseq-hier settings pht --stage train --examples 50000 -- --lr 3e-4)
    mapfile -t ARGS <<< "$SETTINGS"   # (a refusal stops a set -e script here; < <(...) would not)
    fairseq-train data-bin --user-dir ... "${ARGS[@]}" --save-dir runs/pht

Rules and sources: :mod:`fairseq_hier.recipes.settings` and ``examples/own_data/README.md``.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.io import read_lines
from fairseq_hier.recipes.settings import (PAPERS, check_train_options, count_gpus, facts,
                                           generation_settings, keep_effective_batch, paper,
                                           shell_assignments, train_settings)

PROG = "fairseq-hier-settings"


def run(args) -> None:
    if args.stage == "batch":
        batch(args)
        return
    if args.arch is None:
        raise HierError(f"--stage {args.stage} needs ARCH (one of {', '.join(PAPERS)})")
    if args.stage == "facts":
        sys.stdout.write(shell_assignments(facts(args.arch)))
        return
    if args.stage == "train":
        if args.examples is None:
            raise HierError("--stage train needs --examples (the training examples)")
        gpus = args.gpus if args.gpus is not None else count_gpus()
        options, notes = train_settings(args.arch, args.examples, gpus, args.fairseq_args)
    else:
        lengths = None
        if args.targets:
            lengths = [len(line.split()) for line in read_lines(args.targets)]
        options, notes = generation_settings(args.arch, lengths, args.fairseq_args)
    if args.fairseq_args:
        check_options(args.arch, args.stage, options, args.fairseq_args)
    for note in notes:
        print(f"{PROG}: {note}", file=sys.stderr)
    sys.stdout.write("".join(f"{word}\n" for word in options))


def check_options(arch: str, stage: str, options: List[str], yours: List[str]) -> None:
    """Your fairseq arguments ``yours`` (merged into ``options``) parsed as fairseq-train or
    fairseq-generate will parse them; generation options by the one check of decoding options
    (:func:`fairseq_hier.inference.record.check_generation`, ranges included)."""
    if stage == "train":
        check_train_options(arch, options, yours)
        return
    # lazily: fairseq's parser, only for options you give
    from fairseq_hier.inference.record import check_generation

    check_generation("DATA_BIN", paper(arch).task, options, label="fairseq options after --")


def batch(args) -> None:
    """--stage batch: a recipe's own paper batch kept on this machine's GPUs."""
    if args.batch_size is None and args.max_tokens is None:
        raise HierError("--stage batch needs the paper's per-GPU --batch-size or --max-tokens")
    option, size = (("--batch-size", args.batch_size) if args.batch_size is not None
                    else ("--max-tokens", args.max_tokens))
    gpus = args.gpus if args.gpus is not None else count_gpus()
    per_gpu, freq, note = keep_effective_batch(option, size, args.paper_gpus,
                                               args.paper_update_freq, gpus, args.smallest,
                                               your_update_freq=args.update_freq)
    print(f"{PROG}: {note}", file=sys.stderr)
    if args.log:  # the run's train.log, which fairseq-train's output then extends
        with open(args.log, "a", encoding="utf-8") as f:
            f.write(f"{PROG}: {note}\n")
    sys.stdout.write(f"{option}\n{per_gpu}\n--update-freq\n{freq}\n")


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("arch", nargs="?", choices=list(PAPERS), metavar="ARCH",
                   help=f"one of {', '.join(PAPERS)} (not with --stage batch)")
    p.add_argument("--stage", choices=("train", "generate", "facts", "batch"), required=True,
                   help="train: fairseq-train's options; generate: fairseq-generate's; facts: "
                        "shell assignments for the other steps; batch: a paper's batch "
                        "(--batch-size or --max-tokens, --paper-gpus, --paper-update-freq) on "
                        "--gpus GPUs")
    p.add_argument("--examples", type=positive_int, default=None,
                   help="train: the training split's examples (the updates scale with them)")
    p.add_argument("--gpus", type=positive_int, default=None,
                   help="train: the GPUs of one run (default: those torch sees, at least 1)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="batch: the paper's examples per GPU")
    p.add_argument("--max-tokens", type=positive_int, default=None,
                   help="batch: the paper's tokens per GPU")
    p.add_argument("--paper-gpus", type=positive_int, default=1, help="batch: the paper's GPUs")
    p.add_argument("--paper-update-freq", type=positive_int, default=1,
                   help="batch: the paper's accumulation (--update-freq)")
    p.add_argument("--update-freq", type=positive_int, default=None,
                   help="batch: yours, kept (default: the one that keeps the paper's batch)")
    p.add_argument("--smallest", type=positive_int, default=1,
                   help="batch: the smallest per-GPU batch (tokens: one example at the cut)")
    p.add_argument("--log", default=None, metavar="FILE",
                   help="batch: also append the log line to FILE (a run's train.log)")
    p.add_argument("--targets", default=None,
                   help="generate: the training targets in subword tokens, one per line "
                        "(decoding lengths from them; default: the paper's lengths)")
    p.epilog = "-- FAIRSEQ_ARGS: your fairseq options; each replaces the setting of its name"
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    args.fairseq_args = argv[cut + 1:]
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
