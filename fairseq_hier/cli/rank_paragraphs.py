"""``fairseq-hier-rank``: order every example's paragraphs by a trained paragraph ranker (Liu &
Lapata 2019, paper 002 Sec. 3.1: "input paragraphs are ranked based on the model predicted
scores"), writing the raw sources of the summarisation task.

    fairseq-hier-rank --path checkpoints/checkpoint_best.pt --source R/test.src \
        --output ranked/test.src [--keep 40] [--scores-out ranked/test.scores]

Input formats, ``--method tfidf``, output and scoring: docs/commands.md, section
fairseq_hier.cli.rank_paragraphs. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.ranking.runtime import rank_file
from fairseq_hier.ranking.tfidf import rank_file_tfidf

PROG = "fairseq-hier-rank"


def run(args) -> int:
    if args.method == "tfidf":
        return rank_file_tfidf(args.source, args.output, keep=args.keep,
                               scores_out=args.scores_out,
                               separator=args.paragraph_separator or "<P>")
    return rank_file(args.path, args.source, args.output, input_format=args.input_format,
                     spm_model=args.spm_model, keep=args.keep, scores_out=args.scores_out,
                     batch_size=args.batch_size, max_paragraph_tokens=args.max_paragraph_tokens,
                     paragraph_separator=args.paragraph_separator, data=args.data, cpu=args.cpu,
                     trust_checkpoint=args.trust_checkpoint,
                     progress_bar=not args.no_progress_bar)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--method", choices=("ranker", "tfidf"), default="ranker",
                   help="ranker: a trained paragraph ranker (--path); tfidf: tf-idf similarity "
                        "to the title, else to the example's paragraphs (no model; raw input)")
    p.add_argument("--path", help="checkpoint of fairseq-train --task paragraph_ranking --arch "
                                  "paragraph_ranker (--method ranker)")
    p.add_argument("--source", required=True, help="examples to rank (see --input-format)")
    p.add_argument("--output", required=True,
                   help="ranked raw sources: title <P> best paragraph <P> next ...")
    p.add_argument("--input-format", choices=("raw", "jsonl"), default="raw",
                   help='raw: title <P> paragraph <P> ... per line; jsonl: the JSON-lines schema '
                        '({"title"?, "documents": [str, ...]}), paragraphs at line breaks')
    p.add_argument("--spm-model", help="jsonl: tokenise into the pieces of this sentencepiece "
                                       "model (default: whitespace tokens)")
    p.add_argument("--keep", type=count, default=0,
                   help="write only the N best paragraphs of each example (default 0: all)")
    p.add_argument("--scores-out", help="also write the scores of the written paragraphs, in "
                                        "their written order, one line per example")
    p.add_argument("--batch-size", type=positive_int, default=1000,
                   help="paragraphs scored per forward pass (default 1000)")
    p.add_argument("--max-paragraph-tokens", type=count, default=0,
                   help="score paragraphs and titles on their first N tokens (default 0: the "
                        "checkpoint task's --max-paragraph-tokens)")
    p.add_argument("--paragraph-separator", default="",
                   help="paragraph-boundary token (default: the checkpoint task's)")
    p.add_argument("--data", help="folder holding the ranker's dict.src.txt (default: the "
                                  "checkpoint's training data folder)")
    p.add_argument("--cpu", action="store_true", help="run on the CPU even if a GPU is there")
    p.add_argument("--trust-checkpoint", action="store_true",
                   help="load a checkpoint that holds objects beyond weights and options "
                        "(torch.load(weights_only=False): it may run code; only for files you "
                        "trust)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    args = p.parse_args(argv)
    if args.method == "ranker" and not args.path:
        p.error("--method ranker needs --path (the ranker's checkpoint)")
    if args.method == "tfidf" and (args.path or args.input_format != "raw"):
        p.error("--method tfidf ranks raw input (title <P> paragraph ...) without a model: no "
                "--path, no --input-format jsonl")
    if args.spm_model and args.input_format != "jsonl":
        p.error("--spm-model tokenises jsonl input (--input-format jsonl); raw input is already "
                "tokenised")
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
