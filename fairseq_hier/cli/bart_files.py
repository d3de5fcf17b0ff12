"""``fairseq-hier-bart-files``: fairseq's BART tokenizer files (``dict.txt``, ``encoder.json``,
``vocab.bpe``) derived from a Hugging Face BART directory's ``vocab.json`` and ``merges.txt``.

    fairseq-hier-bart-files hf/bart-large work/bart_files

With them, fairseq's GPT-2 BPE and dictionary (``fairseq-hier-sentence-bos``,
``fairseq-preprocess --srcdict``, ``fairseq-generate --bpe gpt2``) give every text exactly the ids
of the Hugging Face tokenizer, which are the rows of the directory's weights
(:mod:`fairseq_hier.data.bart_files`). The three files are written together or not at all.
Errors (a vocabulary that cannot be mapped, a missing file): one line, exit 1.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, run_command
from fairseq_hier.data.bart_files import write_from_dir

PROG = "fairseq-hier-bart-files"


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("hf_dir", metavar="HF_DIR",
                   help="Hugging Face BART directory (vocab.json, merges.txt; config.json's "
                        "vocab_size when present)")
    p.add_argument("out_dir", metavar="OUT_DIR",
                   help="where dict.txt, encoder.json and vocab.bpe go")
    return p


def run(args) -> None:
    write_from_dir(args.hf_dir, args.out_dir)


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
