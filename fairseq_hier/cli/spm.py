"""``fairseq-hier spm``: sentencepiece models that keep the separators whole: train, encode.

    fairseq-hier spm train --input PARSED/train.tok --output-prefix SPM/spm --vocab-size 32000
    fairseq-hier spm encode --model SPM/spm.model --input PARSED/train.tok -o BPE/train.src

Specification: docs/commands.md, section spm. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import os
import sys

from fairseq_hier.cli.common import (add_shard_argument, count, family_parser, positive_int,
                                     ranged, renamed, run_command, run_subcommand, subcommand)
from fairseq_hier.preparation.spm import encode_file, train_model

PROG = "fairseq-hier-spm"


def train(args) -> None:
    train_model(args.input, args.output_prefix, args.vocab_size, model_type=args.model_type,
                character_coverage=args.character_coverage,
                input_sentence_size=args.input_sentence_size, separator=args.separator,
                threads=args.threads, verbose=args.verbose)


def encode(args) -> None:
    encode_file(args.model, args.input, args.output, separator=args.separator,
                progress_bar=not args.no_progress_bar, shard=args.shard)


def get_parser() -> argparse.ArgumentParser:
    p, sub = family_parser(PROG, __doc__)
    t = subcommand(sub, "train", train, "train a sentencepiece model on tokenised text",
                   "train a sentencepiece model on the parse step's tokens")
    t.add_argument("--input", required=True, nargs="+", metavar="F",
                   help="tokenised text (PARSED/train.tok; targets too for a joined vocabulary)")
    t.add_argument("--output-prefix", required=True, metavar="P", help="writes P.model, P.vocab")
    renamed(t, "--output-prefix", "--model-prefix")
    t.add_argument("--vocab-size", required=True, type=positive_int, metavar="N",
                   help="pieces wanted (fewer on a small corpus)")
    t.add_argument("--model-type", default="unigram", choices=("unigram", "bpe"),
                   help="sentencepiece's algorithm (default unigram, sentencepiece's default)")
    t.add_argument("--character-coverage", type=ranged(float, 0, 1, low_open=True),
                   default=0.9995,
                   help="share of characters covered by the model (sentencepiece's default "
                        "0.9995; the rest come out as themselves and become <unk> in fairseq)")
    t.add_argument("--input-sentence-size", type=count, default=10_000_000, metavar="N",
                   help="train on a random sample of N chunks (0: all; default 10M)")
    t.add_argument("--separator", default="<P>", help="separator left out of the training text")
    t.add_argument("--threads", type=positive_int, default=os.cpu_count() or 1,
                   help="sentencepiece trainer threads (default: all cores)")
    t.add_argument("--verbose", action="store_true", help="sentencepiece's own progress log")
    e = subcommand(sub, "encode", encode, "encode text, keeping separators as single tokens",
                   "encode every segment separately; separators kept")
    e.add_argument("--model", required=True, help="P.model written by the train sub-command")
    e.add_argument("--input", required=True, help="tokenised text, one example per line")
    e.add_argument("-o", "--output", required=True,
                   help="pieces joined by spaces, one line per line")
    e.add_argument("--separator", default="<P>", help="segment separator kept as one token")
    e.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(e)
    return p


run = run_subcommand


def cli_main(argv=None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
