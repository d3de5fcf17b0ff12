"""Paragraph-attention cosine of a trained system against the reference's tf-idf distribution.

    fairseq-generate DATA_BIN --path RUN/checkpoint_best.pt --gen-subset test \\
        --results-path RUN ...                       # writes RUN/generate-test.txt
    fairseq-hier-attention-cosine DATA_BIN --path RUN/checkpoint_best.pt \\
        --generate-log RUN/generate-test.txt --subset test --output RUN/attention.json

000 Table 1 / Sec. 5.1 and 001 Table 4: the system is teacher-forced on its own generated
summaries (the log's ``H-`` lines, one per example id; run fairseq-generate without
``--post-process``), its attention is read per paragraph (``pht``/``vht``: their paragraph
attention; ``liu_ht``/``parsingsum_ht`` and flat models such as ``transformer``: the token
attention summed per paragraph), and compared by cosine with the normalised tf-idf
similarities of the reference to each paragraph. The readings (title in paragraph 1, tf-idf
terms and idf, excluded examples) are documented in :mod:`fairseq_hier.analysis.attention_cosine`.

Output (``--output``, the RUN_DIR's ``attention.json``): ``kind``, ``arch``, ``checkpoint``,
``split``, ``examples`` (scored), ``cosine`` {mean, low, high} (95% bootstrap interval over
examples), ``per_example`` (split order; ``null`` for an excluded example), ``excluded``
{zero_gold: ids}, ``heatmaps`` (the first ``--heatmaps`` examples: rows = hypothesis tokens and
"</s>", cols = P1..Pn, each row normalised over paragraphs, and the ``gold`` vector). Prints a
summary line, then the headline as the last line. Pass the paragraph cut given to
fairseq-generate (default: the checkpoint's). ``--output`` is written whole or not at all, never
over an input. Bad input: one-line error, exit status 1. The checkpoint is loaded without
running code (:mod:`fairseq_hier.safe_loading`); ``--trust-checkpoint`` loads one that holds more
than weights and options, as the other commands that load checkpoints do.
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
