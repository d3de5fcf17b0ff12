"""Convert ranked WikiSum (Liu & Lapata 2019, nlpyang/hiersumm) to fairseq-hier's raw format.

    fairseq-hier-wikisum-to-raw --data-prefix ranked_abs3_fast_b40/WIKI --spm spm9998_3.model \\
        --out-dir wikisum_raw

Input shards, output files, title placement, clone paragraphs and errors: docs/commands.md,
section fairseq_hier.cli.wikisum_to_raw.
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.preparation.wikisum import (CLONE_RECALL, SPLITS, TITLE_PLACEMENTS, convert,
                                              remove_clones_raw)

PROG = "fairseq-hier-wikisum-to-raw"


def run(args) -> None:
    if (args.raw is None) == (args.data_prefix is None):
        raise HierError("give either --data-prefix (the published shards) or --raw (raw WikiSum "
                        "in our raw format)")
    if args.raw is not None:
        recall = CLONE_RECALL if args.clone_recall is None else args.clone_recall
        remove_clones_raw(args.raw, args.out_dir, args.splits, args.paragraph_separator, recall,
                          shard=args.shard)
        return
    if args.spm is None:
        raise HierError("--data-prefix needs --spm (hiersumm's spm9998_3.model)")
    convert(args.data_prefix, args.spm, args.out_dir, args.splits, args.paragraph_separator,
            args.title_placement, args.clone_recall, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = command_parser(PROG, __doc__)
    parser.add_argument("--data-prefix",
                        help="shard prefix, e.g. ranked_abs3_fast_b40/WIKI (reads "
                             "PREFIX.SPLIT.N.pt, else PREFIX.SPLIT.pt)")
    parser.add_argument("--raw", metavar="DIR",
                        help="instead of shards: raw WikiSum in our raw format (DIR/SPLIT.src, "
                             "DIR/SPLIT.tgt), written to --out-dir without clone paragraphs")
    parser.add_argument("--spm", help="hiersumm's spm9998_3.model (with --data-prefix)")
    parser.add_argument("--out-dir", required=True, help="folder for SPLIT.{src,tgt,ref}, dict.txt")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS),
                        help="splits to convert (default: train valid test)")
    parser.add_argument("--paragraph-separator", default="<P>",
                        help="piece written between the title and paragraphs (default <P>)")
    parser.add_argument("--title-placement", choices=TITLE_PLACEMENTS, default="first",
                        help="first: the title once, as the first segment (the papers' text; the "
                             "task puts it before paragraph 1); every: keep 'title <T>' in front "
                             "of every paragraph as the shards have it (the authors' code)")
    parser.add_argument("--clone-recall", type=float, default=None, metavar="R",
                        help="drop paragraphs whose bigram recall against the target is above R "
                             f"(002: {CLONE_RECALL}); default {CLONE_RECALL} with --raw, none "
                             "for the published shards (002's dataset, built after that removal)")
    add_shard_argument(parser)
    return run_command(PROG, run, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
