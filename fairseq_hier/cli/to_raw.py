"""``fairseq-hier to-raw``: a published summarisation dataset, or your own JSON lines, in
fairseq-hier's raw format (OUTPUT_DIR/{split}.src/.tgt).

    fairseq-hier to-raw --format wikisum --input-prefix ranked_abs3_fast_b40/WIKI \\
        --spm spm9998_3.model --output-dir wikisum_raw
    fairseq-hier to-raw --format {multi_news,multi_news_preprocessed,wcep} --input-dir DIR \\
        --output-dir RAW [--splits train,valid,test] [--max-articles N] [--with-titles]
    fairseq-hier to-raw --format jsonl --input-dir DATA --output-dir RAW \\
        [--paragraphs documents|blocks|lines] [--max-documents N]

Specification: docs/commands.md, section to-raw (the layouts read and the raw format written:
docs/data-formats.md#the-formats). Imports the
library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import (add_shard_argument, command_parser, positive_int, renamed,
                                     run_command)
from fairseq_hier.errors import HierError
from fairseq_hier.preparation import mds, own_data, wikisum
from fairseq_hier.readers.mds import DATASETS
from fairseq_hier.readers.own_data import PARAGRAPH_MODES

PROG = "fairseq-hier-to-raw"
FORMATS = ("wikisum",) + DATASETS + ("jsonl",)
#: the options that apply to some formats only (the others apply to every format)
ONLY = {"--input-prefix": ("wikisum",), "--spm": ("wikisum",), "--title-placement": ("wikisum",),
        "--clone-recall": ("wikisum",), "--paragraph-separator": ("wikisum",),
        "--max-articles": DATASETS, "--with-titles": DATASETS,
        "--train": ("jsonl",), "--valid": ("jsonl",), "--test": ("jsonl",),
        "--paragraphs": ("jsonl",), "--max-documents": ("jsonl",)}


def _splits(args) -> Optional[List[str]]:
    """--splits as names (given space- or comma-separated), None when not given."""
    if args.splits is None:
        return None
    return [s for item in args.splits for s in item.split(",") if s.strip()]


def run(args) -> None:
    splits = _splits(args)
    if args.format == "wikisum":
        splits = splits or list(wikisum.SPLITS)
        if (args.input_dir is None) == (args.input_prefix is None):
            raise HierError("give either --input-prefix (the published shards) or --input-dir "
                            "(raw WikiSum in our raw format)")
        if args.input_dir is not None:
            recall = wikisum.CLONE_RECALL if args.clone_recall is None else args.clone_recall
            wikisum.remove_clones_raw(args.input_dir, args.output_dir, splits,
                                      args.paragraph_separator, recall, shard=args.shard)
            return
        if args.spm is None:
            raise HierError("--input-prefix needs --spm (hiersumm's spm9998_3.model)")
        wikisum.convert(args.input_prefix, args.spm, args.output_dir, splits,
                        args.paragraph_separator, args.title_placement, args.clone_recall,
                        shard=args.shard)
    elif args.format == "jsonl":
        files = own_data.split_files(args.input_dir, None if splits is None else ",".join(splits),
                                     {"train": args.train, "valid": args.valid,
                                      "test": args.test})
        own_data.convert(files, args.output_dir, args.paragraphs, args.max_documents or 0,
                         args.shard)
    else:
        if args.input_dir is None:
            raise HierError(f"--format {args.format} reads --input-dir (the published files)")
        for split in mds.parse_splits(",".join(splits or ["train", "valid", "test"])):
            mds.convert_split(args.format, args.input_dir, args.output_dir, split,
                              max_articles=args.max_articles, with_titles=args.with_titles,
                              shard=args.shard)


def _check(parser: argparse.ArgumentParser, args) -> None:
    """Options of another format are usage errors."""
    for option, formats in ONLY.items():
        action = parser._option_string_actions[option]
        if getattr(args, action.dest) not in (None, False, action.default) \
                and args.format not in formats:
            parser.error(f"{option} applies to --format {' or '.join(formats)} only")


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("--format", required=True, choices=FORMATS,
                   help="the layout read: wikisum (Liu & Lapata's ranked shards, or raw WikiSum "
                        "with --input-dir), Multi-News or WCEP as published, or jsonl (JSON "
                        "lines of your own data: "
                        "docs/data-formats.md#your-own-data-the-json-lines-schema)")
    renamed(p, "--format", "--dataset")
    p.add_argument("--input-dir", help="folder of the published files (jsonl: {train,valid,test}"
                                       ".jsonl; wikisum: raw WikiSum in our raw format, DIR/SPLIT."
                                       "src and .tgt, written without clone paragraphs)")
    renamed(p, "--input-dir", "--raw")
    p.add_argument("--input-prefix", help="wikisum: shard prefix, e.g. ranked_abs3_fast_b40/WIKI "
                                          "(reads PREFIX.SPLIT.N.pt, else PREFIX.SPLIT.pt)")
    renamed(p, "--input-prefix", "--data-prefix")
    p.add_argument("--output-dir", required=True,
                   help="folder for {split}.src, .tgt (wikisum: .ref, dict.txt; jsonl: .ids, "
                        ".refs.jsonl)")
    renamed(p, "--output-dir", "--out-dir")
    p.add_argument("--splits", nargs="+", default=None,
                   help="splits to convert, space- or comma-separated (default: train valid "
                        "test; the published val is read for valid)")
    p.add_argument("--spm", help="wikisum: hiersumm's spm9998_3.model (with --input-prefix)")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="wikisum: piece written between the title and paragraphs (default <P>)")
    p.add_argument("--title-placement", choices=wikisum.TITLE_PLACEMENTS, default="first",
                   help="wikisum: first: the title once, as the first segment (the papers' text); "
                        "every: keep 'title <T>' in front of every paragraph as the shards have "
                        "it (the authors' code)")
    p.add_argument("--clone-recall", type=float, default=None, metavar="R",
                   help="wikisum: drop paragraphs whose bigram recall against the target is above "
                        f"R (002: {wikisum.CLONE_RECALL}); default {wikisum.CLONE_RECALL} with "
                        "--input-dir, none for the published shards")
    p.add_argument("--max-articles", type=positive_int, default=None, metavar="N",
                   help="multi_news, wcep: keep the first N documents of each example in file "
                        "order, before empty ones are dropped (WCEP-10: 10, WCEP-100: 100)")
    p.add_argument("--with-titles", action="store_true",
                   help="wcep: each document is 'title text' instead of the text alone")
    for split in ("train", "valid", "test"):
        p.add_argument(f"--{split}", metavar="FILE",
                       help=f"jsonl: the {split} split's file (instead of --input-dir)")
    p.add_argument("--paragraphs", choices=PARAGRAPH_MODES, default="documents",
                   help="jsonl: what becomes a paragraph: each document (default), each block "
                        "between blank lines, or each non-empty line")
    p.add_argument("--max-documents", type=positive_int, default=None, metavar="N",
                   help="jsonl: keep the first N documents of each example, before empty ones "
                        "are dropped (default: all)")
    add_shard_argument(p)
    p.checks.append(_check)
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
