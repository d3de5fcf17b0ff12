"""``fairseq-hier rank``: the paragraph ranker of Liu & Lapata 2019 (002 Sec. 3.1): apply,
labels, eval.

    fairseq-hier rank apply --path checkpoints/checkpoint_best.pt --input R/test.src \\
        --output ranked/test.src [--keep 40] [--scores]
    fairseq-hier rank labels --source R/train.src --target R/train.tgt -o RB/train.labels
    fairseq-hier rank eval --source R/test.src --target R/test.tgt \\
        --ranked ranker=ranked/test.src --L 5 10 20 40

Specification: docs/commands.md, section rank. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import json
import sys

from fairseq_hier.cli.common import (add_shard_argument, count, family_commands, positive_int,
                                     renamed, run_subcommand, subcommand)
from fairseq_hier.preparation.rank_labels import write_labels
from fairseq_hier.ranking.evaluation import evaluate_rankings
from fairseq_hier.ranking.runtime import rank_file
from fairseq_hier.ranking.tfidf import rank_file_tfidf

PROG = "fairseq-hier-rank"


def apply(args) -> int:
    scores_out = args.scores_out or (f"{args.output}.scores" if args.scores else None)
    if args.method == "tfidf":
        return rank_file_tfidf(args.input, args.output, keep=args.keep, scores_out=scores_out,
                               separator=args.paragraph_separator or "<P>")
    return rank_file(args.path, args.input, args.output, input_format=args.input_format,
                     spm_model=args.spm_model, keep=args.keep, scores_out=scores_out,
                     batch_size=args.batch_size, max_paragraph_tokens=args.max_paragraph_tokens,
                     paragraph_separator=args.paragraph_separator, data=args.data, cpu=args.cpu,
                     trust_checkpoint=args.trust_checkpoint,
                     progress_bar=not args.no_progress_bar)


def labels(args) -> int:
    return write_labels(args.source, args.target, args.output,
                        separator=args.paragraph_separator, lowercase=args.lowercase, n=args.n,
                        workers=args.workers, progress_bar=not args.no_progress_bar,
                        shard=args.shard)


def evaluate(args) -> dict:
    table, result = evaluate_rankings(
        args.source, args.target, args.ranked or [], args.L, lowercase=args.lowercase,
        separator=args.paragraph_separator, similarity=not args.no_similarity,
        bootstrap=args.bootstrap, seed=args.seed, workers=args.workers,
        progress_bar=not args.no_progress_bar)
    print(table)
    print(json.dumps(result))
    sys.stdout.flush()
    return result


def _check_apply(parser: argparse.ArgumentParser, args) -> None:
    if args.method == "ranker" and not args.path:
        parser.error("--method ranker needs --path (the ranker's checkpoint)")
    if args.method == "tfidf" and (args.path or args.input_format != "raw"):
        parser.error("--method tfidf ranks raw input (title <P> paragraph ...) without a model: no "
                     "--path, no --input-format jsonl")
    if args.spm_model and args.input_format != "jsonl":
        parser.error("--spm-model tokenises jsonl input (--input-format jsonl); raw input is "
                     "already tokenised")


def _add_apply(sub) -> None:
    p = subcommand(sub, "apply", apply, "order every example's paragraphs by a trained paragraph "
                   "ranker (or tf-idf), writing the raw sources of the summarisation task")
    p.add_argument("--method", choices=("ranker", "tfidf"), default="ranker",
                   help="ranker: a trained paragraph ranker (--path); tfidf: tf-idf similarity "
                        "to the title, else to the example's paragraphs (no model; raw input)")
    p.add_argument("--path", help="checkpoint of fairseq-train --task paragraph_ranking --arch "
                                  "paragraph_ranker (--method ranker)")
    p.add_argument("-i", "--input", required=True, help="examples to rank (see --input-format)")
    renamed(p, "--input", "--source")
    p.add_argument("-o", "--output", required=True,
                   help="ranked raw sources: title <P> best paragraph <P> next ...")
    p.add_argument("--input-format", choices=("raw", "jsonl"), default="raw",
                   help="raw: title <P> paragraph <P> ... per line; jsonl: JSON lines of your "
                        "own data (docs/data-formats.md#your-own-data-the-json-lines-schema), "
                        "paragraphs at line breaks")
    p.add_argument("--spm-model", help="jsonl: tokenise into the pieces of this sentencepiece "
                                       "model (default: whitespace tokens)")
    p.add_argument("--keep", type=count, default=0,
                   help="write only the N best paragraphs of each example (default 0: all)")
    p.add_argument("--scores", action="store_true",
                   help="also write OUTPUT.scores: the scores of the written paragraphs, in "
                        "their written order, one line per example")
    renamed(p, "--scores", "--scores-out", dest="scores_out", nargs=None, metavar="FILE")
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
    p.set_defaults(scores_out=None)
    p.checks.append(_check_apply)


def _add_labels(sub) -> None:
    p = subcommand(sub, "labels", labels, "the ranker's training labels: the ROUGE-2 recall of "
                   "each paragraph against the target summary (002 Sec. 3.1 and 4)")
    p.add_argument("--source", required=True,
                   help="raw sources, one example per line: title <P> paragraph <P> ...")
    p.add_argument("--target", required=True, help="target summaries, one per line")
    p.add_argument("-o", "--output", required=True,
                   help="labels: one line per example, one ROUGE-2 recall per paragraph")
    p.add_argument("--lowercase", action="store_true", help="lowercase sources and targets first")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>)")
    p.add_argument("-n", type=positive_int, default=2,
                   help="n of the ROUGE-N recall (002: ROUGE-2; default 2)")
    p.add_argument("--workers", type=positive_int, default=1, help="processes computing labels")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)


def _add_eval(sub) -> None:
    p = subcommand(sub, "eval", evaluate, "how much of the target the first L paragraphs of a "
                   "ranking cover (002 Table 1: ROUGE-L recall, x100, with bootstrap intervals)",
                   "ROUGE-L recall of the concatenated L best paragraphs against the gold target, "
                   "averaged over examples (x100), for the original order, the tf-idf similarity "
                   "to the title (rank apply --method tfidf's order) and each --ranked NAME=FILE.")
    p.add_argument("--source", required=True,
                   help="raw sources in their original order: title <P> paragraph <P> ...")
    p.add_argument("--target", required=True, help="target summaries, one per line")
    p.add_argument("--ranked", nargs="+", metavar="NAME=FILE", action="extend",
                   help="ranked versions of --source (rank apply's output), by name")
    p.add_argument("--L", nargs="+", type=positive_int, default=[5, 10, 20, 40],
                   help="numbers of leading paragraphs measured (002 Table 1: 5 10 20 40)")
    p.add_argument("--lowercase", action="store_true", help="lowercase every side first")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>)")
    p.add_argument("--no-similarity", action="store_true",
                   help="skip the tf-idf similarity ranking (the slowest part)")
    p.add_argument("--bootstrap", type=count, default=1000,
                   help="bootstrap resamples for the 95%% intervals (0: none)")
    p.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    p.add_argument("--workers", type=positive_int, default=1, help="processes scoring examples")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")


get_parser, cli_main = family_commands(
    PROG, __doc__, (_add_apply, _add_labels, _add_eval), default="apply")
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
