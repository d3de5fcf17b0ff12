"""Convert your own data (one JSON object per line) to fairseq-hier's raw format
(RAW/{split}.src/.tgt/.ids), for every model of ``--task hierarchical_summarization``.

    fairseq-hier-jsonl-to-raw --input-dir DATA --output-dir RAW [--splits train,valid,test] \\
        [--paragraphs documents|blocks|lines] [--max-documents N]

Input, paragraphs, output and errors: docs/commands.md, section fairseq_hier.cli.jsonl_to_raw;
the schema: docs/data-formats.md, section "Your own data: the JSON-lines schema".
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.preparation.own_data import convert, split_files
from fairseq_hier.readers.own_data import PARAGRAPH_MODES

PROG = "fairseq-hier-jsonl-to-raw"


def run(args) -> None:
    files = split_files(args.input_dir, args.splits,
                        {"train": args.train, "valid": args.valid, "test": args.test})
    convert(files, args.output_dir, args.paragraphs, args.max_documents or 0, args.shard)


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("--input-dir", help="folder of {train,valid,test}.jsonl (val.jsonl for "
                                       "valid; .jsonl.gz too)")
    p.add_argument("--splits", default=None,
                   help="with --input-dir: comma-separated splits (default: train,valid,test)")
    for split in ("train", "valid", "test"):
        p.add_argument(f"--{split}", metavar="FILE", help=f"the {split} split's file (instead "
                                                          f"of --input-dir)")
    p.add_argument("--output-dir", required=True,
                   help="folder for {split}.src, .tgt, .ids (and .refs.jsonl)")
    p.add_argument("--paragraphs", choices=PARAGRAPH_MODES, default="documents",
                   help="what becomes a paragraph: each document (default), each block between "
                        "blank lines, or each non-empty line")
    p.add_argument("--max-documents", type=positive_int, default=None, metavar="N",
                   help="keep the first N documents of each example, before empty ones are "
                        "dropped (default: all)")
    add_shard_argument(p)
    return p


def cli_main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
