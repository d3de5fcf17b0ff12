"""``fairseq-hier parse``: ParsingSum's dependency parse (003): spacy (a raw split parsed with
spaCy), project (a parse projected onto the pieces of a binarized source).

    fairseq-hier parse spacy --input raw/train.src --output-prefix parsed/train --workers 2
    fairseq-hier parse project --conllu parsed/train.conllu --source bpe/train.src \\
        --subword sentencepiece --output-prefix data-bin/train.parse.spacy

Specification: docs/commands.md, section parse (the codes: :mod:`fairseq_hier.data.
dependency_codes`). Imports the library packages it calls and ``fairseq_hier.cli.common``;
nothing imports it.
"""

import sys

from fairseq_hier.cli.common import (add_shard_argument, family_commands, positive_int,
                                     run_subcommand, subcommand)
from fairseq_hier.preparation.dependencies import SUBWORD_SCHEMES, project_dependencies
from fairseq_hier.preparation.parse import DEFAULT_MODEL, parse_file

PROG = "fairseq-hier-parse"


def spacy(args) -> None:
    parse_file(args.input, args.output_prefix, model=args.model, separator=args.separator,
               batch_size=args.batch_size, workers=args.workers,
               progress_bar=not args.no_progress_bar, shard=args.shard)


def project(args) -> None:
    project_dependencies(args.conllu, args.source, args.subword, args.output_prefix,
                         separator=args.separator, shard=args.shard)


def _add_spacy(sub) -> None:
    p = subcommand(sub, "spacy", spacy, "parse a raw source split with spaCy: PREFIX.conllu "
                   "(the parse) and PREFIX.tok (the source tokenised as parsed)")
    p.add_argument("-i", "--input", required=True,
                   help="raw source lines of one split: title <P> paragraph 1 <P> ...")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.conllu (the parse) and PREFIX.tok (the tokenised source)")
    p.add_argument("--separator", default="<P>",
                   help="segment separator (default <P>, the task's paragraph separator)")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"spaCy pipeline: installed package name or path (default {DEFAULT_MODEL})")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="parsing processes, each with its own spaCy pipeline (default 1)")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="segments per nlp.pipe batch (default 64)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)


def _add_project(sub) -> None:
    p = subcommand(sub, "project", project, "project a dependency parse onto the pieces of a "
                   "binarized source: PREFIX.{bin,idx}, one int16 code per source token and EOS")
    p.add_argument("--conllu", required=True,
                   help="the split's parse (parse spacy's PREFIX.conllu or any CoNLL-U with "
                        "'# newdoc' per example)")
    p.add_argument("--source", required=True,
                   help="the split's subword source, as given to fairseq-preprocess")
    p.add_argument("--subword", required=True, choices=SUBWORD_SCHEMES,
                   help="how the source's pieces make words: sentencepiece (U+2581 starts a "
                        "word), bpe (@@ continues), none (one token, one word)")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.{bin,idx}; the task reads DATA/SPLIT.parse.NAME")
    p.add_argument("--separator", default="<P>",
                   help="paragraph separator token of the source (default <P>); never a word")
    add_shard_argument(p)


get_parser, cli_main = family_commands(PROG, __doc__, (_add_spacy, _add_project), default="spacy")
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
