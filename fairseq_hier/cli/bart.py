"""``fairseq-hier bart``: BART folders for the HAT recipes: files, random, convert.

    fairseq-hier bart files hf/bart-large --output-dir work/bart_files
    fairseq-hier bart random --output-dir bart-tiny [--layout fairseq|huggingface] \\
        [--size tiny|base|large] [--text train.txt ...] [--seed 1]
    fairseq-hier bart convert --input-dir bart.large --output-dir bart-large-hf --to huggingface

``files`` derives fairseq's tokenizer files (``dict.txt``, ``encoder.json``, ``vocab.bpe``) from a
Hugging Face BART directory; ``random`` writes a BART with random weights; ``convert`` writes a
BART folder in the other layout. Every folder is written whole or not at all. Specification:
docs/commands.md, section bart. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import sys

from fairseq_hier.cli.common import (family_commands, positive_int, renamed_positional,
                                     run_subcommand, subcommand)
from fairseq_hier.data.bart_files import write_from_dir

PROG = "fairseq-hier-bart"
SIZES = ("tiny", "base", "large")  # fairseq_hier.pretrained.bart.SIZES (not imported: light)
LAYOUTS = ("fairseq", "huggingface")


def files(args) -> None:
    write_from_dir(args.hf_dir, args.output_dir)


def random(args) -> None:
    # imported here: it builds the model with torch and fairseq (bart files starts without them)
    from fairseq_hier.pretrained.bart import write_random

    write_random(args.output_dir, layout=args.layout, size=args.size, texts=args.text or (),
                 seed=args.seed, max_merges=args.merges)


def convert(args) -> None:
    # imported here: it reads the weights with torch and fairseq (bart files starts without them)
    from fairseq_hier.pretrained.bart import convert as convert_folder

    convert_folder(args.input_dir, args.output_dir, args.to)


def _add_files(sub) -> None:
    p = subcommand(sub, "files", files, "fairseq's BART tokenizer files (dict.txt, encoder.json, "
                   "vocab.bpe) from a Hugging Face BART directory's vocab.json and merges.txt",
                   "With them, fairseq's GPT-2 BPE and dictionary give every text exactly the ids "
                   "of the Hugging Face tokenizer; the three files are written together or not at "
                   "all.")
    p.add_argument("hf_dir", metavar="HF_DIR",
                   help="Hugging Face BART directory (vocab.json, merges.txt; config.json's "
                        "vocab_size when present)")
    p.add_argument("--output-dir", required=True,
                   help="where dict.txt, encoder.json and vocab.bpe go")
    renamed_positional(p, "OUT_DIR", "--output-dir")


def _add_random(sub) -> None:
    p = subcommand(sub, "random", random, "a BART with random weights, to try the HAT recipes on "
                   "a CPU", "A BART of fairseq's bart_base (tiny, base) or bart_large (large) "
                   "with random weights, over GPT-2's byte-level BPE of the 256 byte symbols plus "
                   "merges for the most frequent words of --text: it encodes any text. fairseq's "
                   "layout: model.pt, dict.txt, encoder.json, vocab.bpe; Hugging Face's: "
                   "config.json, model.safetensors, vocab.json, merges.txt.")
    p.add_argument("--output-dir", required=True, help="the BART folder to write")
    p.add_argument("--layout", choices=LAYOUTS, default="fairseq",
                   help="fairseq's release layout or Hugging Face's (default fairseq)")
    p.add_argument("--size", choices=SIZES, default="tiny",
                   help="tiny: 2+2 layers of width 16 (trains on a CPU in seconds); base, large: "
                        "fairseq's bart_base, bart_large (default tiny)")
    p.add_argument("--text", nargs="+", action="extend", metavar="FILE",
                   help="UTF-8 text files whose most frequent words become BPE tokens (default: "
                        "none, the 256 byte symbols only)")
    p.add_argument("--merges", type=positive_int, default=1000,
                   help="at most this many BPE merges learnt from --text (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="the weights' random seed (default 1)")


def _add_convert(sub) -> None:
    p = subcommand(sub, "convert", convert, "a BART folder in the other layout: fairseq's release "
                   "<-> Hugging Face's", "Weights by the key table of "
                   "fairseq_hier.models.hf_bart, the options from model.pt's args <-> config.json, "
                   "the vocabulary so that fairseq's index of every token is Hugging Face's id "
                   "(dict.txt + encoder.json + vocab.bpe <-> vocab.json + merges.txt).")
    p.add_argument("--input-dir", required=True,
                   help="a BART folder: fairseq's layout (model.pt, dict.txt, encoder.json, "
                        "vocab.bpe) with --to huggingface; Hugging Face's (config.json, "
                        "model.safetensors or pytorch_model.bin, vocab.json, merges.txt) with "
                        "--to fairseq")
    p.add_argument("--output-dir", required=True, help="the BART folder to write")
    p.add_argument("--to", required=True, choices=LAYOUTS, help="the layout to write")


get_parser, cli_main = family_commands(PROG, __doc__, (_add_files, _add_random, _add_convert))
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
