"""``fairseq-hier bart-files``: fairseq's BART tokenizer files (``dict.txt``, ``encoder.json``,
``vocab.bpe``) derived from a Hugging Face BART directory's ``vocab.json`` and ``merges.txt``.

    fairseq-hier bart-files hf/bart-large --output-dir work/bart_files

With them, fairseq's GPT-2 BPE and dictionary give every text exactly the ids of the Hugging Face
tokenizer (:mod:`fairseq_hier.data.bart_files`); the three files are written together or not at
all. Specification: docs/commands.md, section bart-files. Imports the library packages it calls
and ``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, renamed_positional, run_command
from fairseq_hier.data.bart_files import write_from_dir

PROG = "fairseq-hier-bart-files"


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("hf_dir", metavar="HF_DIR",
                   help="Hugging Face BART directory (vocab.json, merges.txt; config.json's "
                        "vocab_size when present)")
    p.add_argument("--output-dir", required=True,
                   help="where dict.txt, encoder.json and vocab.bpe go")
    renamed_positional(p, "OUT_DIR", "--output-dir")
    return p


def run(args) -> None:
    write_from_dir(args.hf_dir, args.output_dir)


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
