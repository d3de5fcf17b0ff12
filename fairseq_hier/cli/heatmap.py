"""Heatmap of HAT's sentence attention for one generated example (paper 004, Sec. 6, Figs. 2-3).

    fairseq-generate data-bin --path hat.pt --print-sentence-attention ... > gen.out
    fairseq-hier-heatmap gen.out --id 3 --out example3.png [--gpt2-encoder-json encoder.json]

What it reads and draws: docs/commands.md, section fairseq_hier.cli.heatmap. Imports the standard
library and
``fairseq_hier.report`` (matplotlib only when drawing) and ``fairseq_hier.cli.common``.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.report.attention_heatmap import heatmap

PROG = "fairseq-hier-heatmap"


def run(args) -> None:
    steps, sentences = heatmap(args.generate_output, args.id, args.out, args.hypothesis,
                               args.gpt2_encoder_json, args.top_k, args.max_steps)
    print(f"{args.out}: {steps} target steps x {sentences} sentences")


def get_parser():
    parser = command_parser(PROG, __doc__)
    parser.add_argument("generate_output", help="fairseq-generate's output (stdout) with A- lines")
    parser.add_argument("--id", type=count, required=True, help="example id (the N of H-N)")
    parser.add_argument("--out", required=True,
                        help="image file to write (PNG; its extension names the format)")
    parser.add_argument("--hypothesis", type=count, default=0,
                        help="which hypothesis of the example with --nbest > 1 (default 0: the "
                             "first H- line of that id)")
    parser.add_argument("--gpt2-encoder-json", default=None,
                        help="GPT-2's encoder.json: label the H- tokens (BART: GPT-2 BPE ids) "
                             "with their text pieces")
    parser.add_argument("--top-k", type=count, default=0,
                        help="per target token keep the k largest sentence weights, renormalised "
                             "to sum 1 (default 0: all). The paper (004 Figs. 2-3) kept the top "
                             "16 BOS tokens across the heads; our weights are already averaged "
                             "over the heads")
    parser.add_argument("--max-steps", type=positive_int, default=None,
                        help="draw only the first M target steps (default: all)")
    return parser


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
