"""Paragraph-attention cosine of a trained system against the reference's tf-idf distribution.

    fairseq-hier-attention-cosine DATA_BIN --path RUN/checkpoint_best.pt \
        --generate-log RUN/generate-test.txt --subset test --output RUN/attention.json

The command (options, output JSON, errors): docs/commands.md, section
fairseq_hier.cli.attention_cosine; the metric's readings:
:mod:`fairseq_hier.analysis.attention_cosine`. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import json
import sys
from typing import List, Optional, Tuple

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.safe_loading import UnreadableCheckpoint, trusting

PROG = "fairseq-hier-attention-cosine"


def run(args) -> dict:
    # refused before the model is loaded when --output is one of the inputs
    with atomic_outputs([args.output], inputs=[args.generate_log, args.path]) as (f,), \
            trusting(args.trust_checkpoint):
        record, n = score(args)
        json.dump(record, f, indent=1)
    print_summary(args, record, n)
    return record


def score(args) -> Tuple[dict, int]:
    """The attention.json record of the system, and the number of examples of the split."""
    # imported here, not at the top: the analysis imports torch and fairseq; --help stays light
    from fairseq_hier.analysis.attention_cosine import score_system

    cut = {name: getattr(args, name) for name in
           ("max_paragraphs", "max_paragraph_tokens", "max_source_positions")
           if getattr(args, name) is not None}
    try:
        return score_system(args.path, args.data, args.subset, args.generate_log, cut,
                            args.batch_size, args.heatmaps, cpu=args.cpu,
                            bootstrap_samples=args.bootstrap_samples, seed=args.seed)
    except UnreadableCheckpoint as e:
        raise HierError(f"--path {args.path}: not a fairseq checkpoint ({e})") from None


def print_summary(args, record: dict, n: int) -> None:
    c, excluded = record["cosine"], record["excluded"]["zero_gold"]
    print(f"{args.output}: {record['arch']} ({record['attention']} attention), split "
          f"{args.subset}, {record['examples']} of {n} examples scored, "
          f"{len(excluded)} excluded (gold all zero), {len(record['heatmaps'])} heatmaps")
    print(f"paragraph-attention cosine {c['mean']:.4f} (95% CI {c['low']:.4f}-{c['high']:.4f}, "
          f"{record['examples']} examples)")


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("data", help="data-bin of the hierarchical_summarization task")
    p.add_argument("--path", required=True, help="the system's checkpoint")
    p.add_argument("--generate-log", required=True,
                   help="fairseq-generate's output for --subset (its H- lines are read)")
    p.add_argument("--subset", default="test", help="split of the data-bin (default: test)")
    p.add_argument("--output", required=True, help="attention.json to write")
    p.add_argument("--heatmaps", type=count, default=3,
                   help="store the per-step attention of the first K examples (default 3)")
    p.add_argument("--batch-size", type=positive_int, default=16,
                   help="examples per forward pass")
    p.add_argument("--max-paragraphs", type=positive_int, default=None,
                   help="override the checkpoint's paragraph count")
    p.add_argument("--max-paragraph-tokens", type=positive_int, default=None,
                   help="override the checkpoint's paragraph length")
    p.add_argument("--max-source-positions", type=positive_int, default=None,
                   help="override the checkpoint's flat cut (flat models)")
    p.add_argument("--bootstrap-samples", type=positive_int, default=1000,
                   help="bootstrap resamples of the 95%% interval (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--cpu", action="store_true", help="do not use a GPU")
    p.add_argument("--trust-checkpoint", action="store_true",
                   help="load a checkpoint that holds objects beyond weights and options "
                        "(torch.load(weights_only=False): it may run code; only for files you "
                        "trust)")
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
