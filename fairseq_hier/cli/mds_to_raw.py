"""Convert Multi-News or WCEP, as published, to fairseq-hier's raw format (RAW/{split}.src/.tgt).

    fairseq-hier-mds-to-raw --dataset {multi_news,multi_news_preprocessed,wcep} \\
        --input-dir DIR --output-dir RAW [--splits train,valid,test] [--max-articles N] \\
        [--with-titles]

Input layouts, output and what is logged: docs/commands.md, section fairseq_hier.cli.mds_to_raw;
the layouts: docs/data-formats.md, section "Multi-News and WCEP".
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.preparation.mds import convert_split, parse_splits
from fairseq_hier.readers.mds import DATASETS

PROG = "fairseq-hier-mds-to-raw"


def run(args) -> None:
    for split in parse_splits(args.splits):
        convert_split(args.dataset, args.input_dir, args.output_dir, split,
                      max_articles=args.max_articles, with_titles=args.with_titles,
                      shard=args.shard)


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("--dataset", required=True, choices=DATASETS,
                   help="the published layout to read (see the module docstring)")
    p.add_argument("--input-dir", required=True, help="folder of the published files")
    p.add_argument("--output-dir", required=True, help="folder for {split}.src and {split}.tgt")
    p.add_argument("--splits", default="train,valid,test",
                   help="comma-separated splits, our names (default: train,valid,test; the "
                        "published val is read for valid)")
    p.add_argument("--max-articles", type=positive_int, default=None, metavar="N",
                   help="keep the first N documents of each example in file order, before empty "
                        "ones are dropped (WCEP-10: 10, WCEP-100: 100; default: all)")
    p.add_argument("--with-titles", action="store_true",
                   help="wcep: each document is 'title text' instead of the text alone")
    add_shard_argument(p)
    return p


def cli_main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
