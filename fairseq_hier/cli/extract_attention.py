"""``fairseq-hier extract-attention``: attention-alignment labels from a trained PHT or VHT (001
Sec. 4.2.1, step 1 of 3), for ``fairseq-train --task attention_prediction``.

    fairseq-hier extract-attention data-bin --path runs/pht/checkpoint_best.pt \\
        --output-dir labels --splits train valid

The label eta (Eq. 14-16) and the predictor's input Phi (Eq. 6), in the format of
docs/data-formats.md ("Attention-alignment labels"): :mod:`fairseq_hier.preparation.
attention_labels`. Specification: docs/commands.md, section extract-attention. Imports the
library packages it calls and ``fairseq_hier.cli.common`` (fairseq inside a function).
"""

import logging
import sys

from fairseq_hier.cli.common import command_parser, positive_int, renamed, run_command
from fairseq_hier.preparation.attention_labels import extract_labels

PROG = "fairseq-hier-extract-attention"


def run(args) -> dict:
    return extract_labels(args.data, args.path, args.output_dir, splits=args.splits,
                          batch_size=args.batch_size, max_paragraphs=args.max_paragraphs,
                          max_paragraph_tokens=args.max_paragraph_tokens, cpu=args.cpu,
                          trust_checkpoint=args.trust_checkpoint)


def get_parser():
    parser = command_parser(PROG, __doc__)
    parser.add_argument("data", help="data-bin of the hierarchical_summarization task")
    parser.add_argument("--path", required=True, help="trained PHT/VHT checkpoint")
    parser.add_argument("--output-dir", required=True, help="label directory to write")
    renamed(parser, "--output-dir", "--destdir")
    parser.add_argument("--splits", nargs="+", default=["train", "valid"],
                        help="splits to extract (default: train valid)")
    parser.add_argument("--batch-size", type=positive_int, default=32,
                        help="examples per forward pass")
    parser.add_argument("--max-paragraphs", type=positive_int, default=None,
                        help="override the checkpoint's paragraph count")
    parser.add_argument("--max-paragraph-tokens", type=positive_int, default=None,
                        help="override the checkpoint's paragraph length")
    parser.add_argument("--cpu", action="store_true", help="do not use a GPU")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="load a checkpoint that holds objects beyond weights and options "
                             "(torch.load(weights_only=False): it may run code; only for files "
                             "you trust)")
    return parser


def _drop_tensorboardx_notice(record: logging.LogRecord) -> bool:
    """Logging filter: ``import fairseq`` imports fairseq/tasks/text_to_speech.py, which logs
    "Please install tensorboardX" when that package is missing; this command writes no
    TensorBoard logs, so the notice is noise here (scripts/install.sh installs tensorboardX,
    which silences it for fairseq's own commands too)."""
    return not record.getMessage().startswith("Please install tensorboardX")


def cli_main(argv=None) -> int:
    # scoped to the one fairseq logger that prints it, before fairseq is imported (in run)
    logging.getLogger("fairseq.tasks.text_to_speech").addFilter(_drop_tensorboardx_notice)
    args = get_parser().parse_args(argv)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
