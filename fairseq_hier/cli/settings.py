"""``fairseq-hier settings``: an architecture's paper settings, scaled to your data and GPUs, as
fairseq arguments (one per line, for ``mapfile -t``).

    fairseq-hier settings ARCH --stage train|generate|facts|batch|paper-train|paper-decode|
        paper-batch [--examples N] [--gpus N] [--targets FILE] [-- FAIRSEQ_ARGS]

Arguments after ``--`` replace the setting of their name; how each number was chosen goes to
stderr. Specification: docs/commands.md, section settings (the table:
``recipes/architectures.py``; the scaling: ``recipes/settings.py``). Imports the library packages
it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional, Tuple

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.io import read_lines
from fairseq_hier.recipes.architectures import PAPER_SETTINGS, variant
from fairseq_hier.recipes.settings import (PAPERS, check_train_options, count_gpus, facts,
                                           generation_settings, keep_effective_batch, merge,
                                           paper, shell_assignments, train_settings)

PROG = "fairseq-hier-settings"
PAPER_STAGES = ("paper-train", "paper-decode", "paper-batch")


def run(args) -> None:
    if args.stage == "batch":
        batch(args)
        return
    if args.dataset is not None and args.stage not in PAPER_STAGES:
        raise HierError("--dataset: only with --stage paper-train, paper-decode, paper-batch or "
                        "batch")
    if args.arch is None:
        raise HierError(f"--stage {args.stage} needs ARCH (one of {', '.join(PAPERS)})")
    if args.stage == "paper-batch":
        option, size, gpus, freq = paper_batch(args)
        sys.stdout.write(f"{option}\n{size}\n--paper-gpus\n{gpus}\n--paper-update-freq\n{freq}\n")
        return
    if args.stage == "facts":
        sys.stdout.write(shell_assignments(facts(args.arch)))
        return
    if args.stage in PAPER_STAGES:
        row = variant(args.arch, args.dataset)
        ours = row.paper_train() if args.stage == "paper-train" else list(row.generation)
        options, _ = merge(ours, args.fairseq_args)
        if args.fairseq_args:
            check_paper_options(row, args.stage, options, args.fairseq_args)
        sys.stdout.write("".join(f"{word}\n" for word in options))
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


def check_paper_options(row, stage: str, options: List[str], yours: List[str]) -> None:
    """:func:`check_options` for the paper stages: the paper's training options are parsed with
    its model (``--arch`` and shape) in front, its decoding options for its task."""
    if stage == "paper-train":
        model = list(row.model) if "--arch" in row.model else ["--arch", row.arch, *row.model]
        check_train_options(row.arch, [*model, *options], yours, task=row.task)
        return
    from fairseq_hier.inference.record import check_generation  # lazily, as check_options

    check_generation("DATA_BIN", row.task, options, label="fairseq options after --")


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


def paper_batch(args) -> Tuple[str, int, int, int]:
    """(--batch-size or --max-tokens, the paper's per-GPU batch, its GPUs, its accumulation):
    those given, else ARCH's (of --dataset), else 1 GPU and no accumulation."""
    paper_gpus, paper_update_freq = args.paper_gpus or 1, args.paper_update_freq or 1
    if args.arch is not None:  # the paper's batch, where the recipe gives none of its own
        row = variant(args.arch, args.dataset)
        if args.batch_size is None and args.max_tokens is None:
            setattr(args, row.batch_option[2:].replace("-", "_"), row.batch)
        paper_gpus, paper_update_freq = args.paper_gpus or row.gpus, (args.paper_update_freq
                                                                      or row.update_freq)
    elif args.dataset is not None:
        raise HierError("--dataset needs ARCH")
    if args.batch_size is None and args.max_tokens is None:
        raise HierError(f"--stage {args.stage} needs the paper's per-GPU --batch-size or "
                        f"--max-tokens")
    option, size = (("--batch-size", args.batch_size) if args.batch_size is not None
                    else ("--max-tokens", args.max_tokens))
    return option, size, paper_gpus, paper_update_freq


def batch(args) -> None:
    """--stage batch: a recipe's own paper batch kept on this machine's GPUs."""
    option, size, paper_gpus, paper_update_freq = paper_batch(args)
    gpus = args.gpus if args.gpus is not None else count_gpus()
    # one example at the cut, but never more than the paper's batch
    per_gpu, freq, note = keep_effective_batch(option, size, paper_gpus, paper_update_freq, gpus,
                                               min(args.smallest, size),
                                               your_update_freq=args.update_freq)
    print(f"{PROG}: {note}", file=sys.stderr)
    if args.log:  # the run's train.log, which fairseq-train's output then extends
        with open(args.log, "a", encoding="utf-8") as f:
            f.write(f"{PROG}: {note}\n")
    sys.stdout.write(f"{option}\n{per_gpu}\n--update-freq\n{freq}\n")


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("arch", nargs="?", metavar="ARCH",
                   help=f"one of {', '.join(PAPERS)} (optional with --stage batch; the paper "
                        f"stages and batch also: "
                        f"{', '.join(a for a in PAPER_SETTINGS if a not in PAPERS)})")
    p.add_argument("--stage", choices=("train", "generate", "facts", "batch") + PAPER_STAGES,
                   required=True,
                   help="train: fairseq-train's options; generate: fairseq-generate's; facts: "
                        "shell assignments for the other steps; batch: a paper's batch "
                        "(--batch-size or --max-tokens, --paper-gpus, --paper-update-freq; "
                        "ARCH's where not given) on --gpus GPUs; paper-train, paper-decode, "
                        "paper-batch: the paper's own optimisation, decoding or batch options, "
                        "unscaled")
    p.add_argument("--dataset", default=None,
                   help="the paper stages and batch: the settings of this data set where "
                        "a recipe has its own (e.g. hat_bart_large: arxiv, cnndm, samsum, ami, "
                        "icsi)")
    p.add_argument("--examples", type=positive_int, default=None,
                   help="train: the training split's examples (the updates scale with them)")
    p.add_argument("--gpus", type=positive_int, default=None,
                   help="train: the GPUs of one run (default: those torch sees, at least 1)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="batch, paper-batch: the paper's examples per GPU")
    p.add_argument("--max-tokens", type=positive_int, default=None,
                   help="batch, paper-batch: the paper's tokens per GPU")
    p.add_argument("--paper-gpus", type=positive_int, default=None,
                   help="batch: the paper's GPUs (default: ARCH's, else 1)")
    p.add_argument("--paper-update-freq", type=positive_int, default=None,
                   help="batch: the paper's accumulation (--update-freq; default: ARCH's, else 1)")
    p.add_argument("--update-freq", type=positive_int, default=None,
                   help="batch: yours, kept (default: the one that keeps the paper's batch)")
    p.add_argument("--smallest", type=positive_int, default=1,
                   help="batch: the smallest per-GPU batch (tokens: one example at the cut; "
                        "at most the paper's batch)")
    p.add_argument("--log", default=None, metavar="FILE",
                   help="batch: also append the log line to FILE (a run's train.log)")
    p.add_argument("--targets", default=None,
                   help="generate: the training targets in subword tokens, one per line "
                        "(decoding lengths from them; default: the paper's lengths)")
    p.epilog = "-- FAIRSEQ_ARGS: your fairseq options; each replaces the setting of its name"
    p.checks.append(_check_arch)
    return p


def _check_arch(p, args) -> None:
    known = PAPER_SETTINGS if args.stage in PAPER_STAGES + ("batch",) else PAPERS
    if args.arch is not None and args.arch not in known:  # as argparse's choices say it
        p.error(f"argument ARCH: invalid choice: {args.arch!r} (choose from "
                f"{', '.join(map(repr, known))})")


def cli_main(argv: Optional[List[str]] = None) -> int:
    # what follows "--" is fairseq's, passed on as given
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = get_parser().parse_args(argv[:cut])
    args.fairseq_args = argv[cut + 1:]
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
