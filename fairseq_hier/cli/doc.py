"""``fairseq-hier doc``: the document-translation preparation (paper 004 Sec. 4.2): extract,
tokenize, chunk.

    fairseq-hier doc extract --format wmt-sgml --src-lang en --tgt-lang de \\
        --output-prefix raw/test20 --pair newstest2020-ende-src.en.sgm newstest2020-ende-ref.de.sgm
    fairseq-hier doc extract --dataset wmt20-en-de --input-dir DATA --output-dir work/raw
    fairseq-hier doc tokenize --input-prefix work/raw/train --output-prefix work/tok/train \\
        --src-lang en --tgt-lang de --workers 8
    fairseq-hier doc chunk --input-prefix work/tok/train --output-prefix work/chunks/train \\
        --src-lang en --tgt-lang de --codes work/bpe.codes --max-chunk-tokens 512

Specification: docs/commands.md, section doc (the layouts: docs/data-formats.md, "Document
translation inputs" and "Document chunks and the chunk map"). Imports the library packages it
calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys

from fairseq_hier.cli.common import (add_shard_argument, add_split_arguments, family_commands,
                                     positive_int, ranged, renamed, run_subcommand, subcommand)
from fairseq_hier.preparation.doc_chunk import chunk_split
from fairseq_hier.preparation.doc_extract import (INPUT_KINDS, Input, extract_dataset,
                                                  extract_split)
from fairseq_hier.preparation.doc_tokenize import tokenize_split
from fairseq_hier.readers.doc_mt.datasets import DATASETS
from fairseq_hier.readers.doc_mt.folders import DOC_FOLDER_REF, DOC_FOLDER_SRC
from fairseq_hier.readers.doc_mt.layouts import FORMATS
from fairseq_hier.text.tokenizers import TOKENIZERS

PROG = "fairseq-hier-doc"


class _AppendInput(argparse.Action):
    """Appends ``Input(const, values)`` to one list, so that the inputs keep the command line's
    order whatever their option."""

    def __call__(self, parser, namespace, values, option_string=None):
        inputs = list(getattr(namespace, self.dest) or [])
        inputs.append(Input(self.const, list(values)))
        setattr(namespace, self.dest, inputs)


def _check_dataset(parser: argparse.ArgumentParser, args) -> None:
    """Usage errors of ``--dataset``: its folders given, no option of one split."""
    missing = [o for o, v in (("--input-dir", args.input_dir), ("--output-dir", args.output_dir))
               if v is None]
    if missing:
        parser.error(f"--dataset needs {' and '.join(missing)}")
    for option, value in (("--format", args.format), ("--src-lang", args.src_lang),
                          ("--tgt-lang", args.tgt_lang), ("--output-prefix", args.output_prefix),
                          ("--pair/--file/--folder", args.inputs), ("--columns", args.columns),
                          ("--src-name", args.src_name != DOC_FOLDER_SRC),
                          ("--ref-name", args.ref_name != DOC_FOLDER_REF),
                          ("--translator", args.translator), ("--shard", args.shard)):
        if value:
            parser.error(f"{option} applies to one split (--format), not to --dataset")
    if not args.dataset.startswith("wmt20-"):
        for option, value in (("--test-suite", args.test_suite), ("--skip-bad", args.skip_bad)):
            if value:
                parser.error(f"{option} applies to the wmt20 data sets, not {args.dataset}")


def _check_extract(parser: argparse.ArgumentParser, args) -> None:
    """Usage errors (exit status 2): inputs of the wrong kind, options of another format."""
    if args.dataset is not None:
        return _check_dataset(parser, args)
    missing = [o for o, v in (("--format", args.format), ("--src-lang", args.src_lang),
                              ("--tgt-lang", args.tgt_lang),
                              ("--output-prefix", args.output_prefix)) if v is None]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)} (or "
                     f"--dataset with --input-dir and --output-dir)")
    for option, value in (("--input-dir", args.input_dir), ("--output-dir", args.output_dir),
                          ("--test-suite", args.test_suite)):
        if value is not None:
            parser.error(f"{option} applies to --dataset only")
    if not args.inputs:
        parser.error("give at least one input (--pair SRC REF, --file F or --folder DIR)")
    kinds = INPUT_KINDS[args.format]
    for item in args.inputs:
        if item.kind not in kinds:
            expected = " or ".join(f"--{k}" for k in kinds)
            parser.error(f"--format {args.format} reads {expected} inputs, not --{item.kind} "
                         f"{' '.join(item.paths)}")
    for option, value, fmt in (("--columns", args.columns, "doc-split"),
                               ("--src-name", args.src_name != DOC_FOLDER_SRC, "doc-split"),
                               ("--ref-name", args.ref_name != DOC_FOLDER_REF, "doc-split"),
                               ("--translator", args.translator, "wmt-xml"),
                               ("--skip-bad", args.skip_bad, "doc-split")):
        if value and args.format != fmt:
            parser.error(f"{option} applies to --format {fmt} only")


def extract(args) -> int:
    """One split from its inputs (returns the documents written), or every split of a data
    set (returns the splits written)."""
    if args.dataset is not None:
        return extract_dataset(args.dataset, args.input_dir, args.output_dir,
                               test_suite=args.test_suite, skip_bad=args.skip_bad, report=print)
    return extract_split(args.inputs, args.format, args.output_prefix, args.src_lang,
                         args.tgt_lang, shard=args.shard, report=print, columns=args.columns,
                         src_name=args.src_name, ref_name=args.ref_name,
                         translator=args.translator, skip_bad=args.skip_bad)


def tokenize(args) -> int:
    return tokenize_split(args.input_prefix, args.output_prefix, args.src_lang, args.tgt_lang,
                          workers=args.workers, progress_bar=not args.no_progress_bar,
                          src_tokenizer=args.src_tokenizer or args.tokenizer,
                          tgt_tokenizer=args.tgt_tokenizer or args.tokenizer, shard=args.shard)


def chunk(args):
    return chunk_split(args.input_prefix, args.output_prefix, args.src_lang, args.tgt_lang,
                       args.codes, max_chunk_tokens=args.max_chunk_tokens,
                       progress_bar=not args.no_progress_bar, shard=args.shard)


def _add_extract(sub) -> None:
    p = subcommand(sub, "extract", extract, "published document-level MT data -> our raw split "
                   "PREFIX.{src,tgt,docids}")
    p.add_argument("--dataset", choices=sorted(DATASETS), default=None,
                   help="every split of a published data set, its files found in --input-dir "
                        "(docs/commands.md, doc extract), instead of --format and inputs")
    p.add_argument("--input-dir", default=None, metavar="DIR",
                   help="--dataset: the folder of the files as published")
    p.add_argument("--output-dir", default=None, metavar="DIR",
                   help="--dataset: write DIR/SPLIT.{src,tgt,docids} (and SPLIT.name) for "
                        "train, valid, test, test1, ...; a split already there is skipped")
    p.add_argument("--test-suite", default=None, metavar="DIR",
                   help="--dataset wmt20-*: a WMT20 test suite (one folder per document), "
                        "extracted as the next free testN")
    p.add_argument("--format", default=None, choices=sorted(FORMATS),
                   help="published layout of the inputs (see fairseq_hier/readers/doc_mt/)")
    p.add_argument("--src-lang", default=None, help="source language code (output suffix)")
    p.add_argument("--tgt-lang", default=None, help="target language code (output suffix)")
    p.add_argument("--output-prefix", default=None, metavar="PREFIX",
                   help="write PREFIX.{src-lang}, PREFIX.{tgt-lang} and PREFIX.docids")
    renamed(p, "--output-prefix", "--output")
    p.add_argument("--pair", nargs=2, action=_AppendInput, const="pair", dest="inputs",
                   metavar=("SRC", "REF"),
                   help="a source and a reference (or target) file; repeatable")
    p.add_argument("--file", nargs=1, action=_AppendInput, const="file", dest="inputs",
                   metavar="F", help="one file holding both sides (wmt-xml, doc-split TSV, "
                                     "jsonl); repeatable")
    p.add_argument("--folder", nargs=1, action=_AppendInput, const="folder", dest="inputs",
                   metavar="DIR", help="doc-split: a document folder, or a folder of them; "
                                       "repeatable")
    p.add_argument("--columns", default=None,
                   help="doc-split TSV: the language of each column in the file's order, "
                        "e.g. de,en")
    p.add_argument("--src-name", default=DOC_FOLDER_SRC,
                   help=f"doc-split document folders: the source file's name "
                        f"(default {DOC_FOLDER_SRC})")
    p.add_argument("--ref-name", default=DOC_FOLDER_REF,
                   help=f"doc-split document folders: the reference file's name "
                        f"(default {DOC_FOLDER_REF})")
    p.add_argument("--translator", default=None,
                   help="wmt-xml: the translator whose references to use (default: the first "
                        "in the file)")
    p.add_argument("--skip-bad", action="store_true",
                   help="doc-split (with --dataset wmt20-*: the training corpora): drop bad "
                        "sentence pairs (counted in the log) instead of stopping at the first")
    add_shard_argument(p)
    p.checks.append(_check_extract)


def _add_tokenize(sub) -> None:
    p = subcommand(sub, "tokenize", tokenize, "tokenise a split of parallel documents (Moses; "
                   "Jieba for Chinese), for any language pair")
    add_split_arguments(p, "prefix of INPUT.{src,tgt,docids}",
                        "prefix of the tokenised OUTPUT.{src,tgt,docids}")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    p.add_argument("--tokenizer", choices=TOKENIZERS, default="auto",
                   help="both sides' tokenizer (default auto: jieba for zh, Moses otherwise, "
                        "with language-independent rules where sacremoses has none)")
    p.add_argument("--src-tokenizer", choices=TOKENIZERS, default=None,
                   help="the source side's tokenizer (default: --tokenizer)")
    p.add_argument("--tgt-tokenizer", choices=TOKENIZERS, default=None,
                   help="the target side's tokenizer (default: --tokenizer)")
    add_shard_argument(p)


def _add_chunk(sub) -> None:
    p = subcommand(sub, "chunk", chunk, "tokenised documents -> BPE'd chunks of at most "
                   "--max-chunk-tokens tokens with a BOS marker per source sentence, and the "
                   "chunk map",
                   "Reads INPUT.{src,tgt,docids} (doc tokenize's output), applies the joint "
                   "fastBPE codes to both sides, cuts every document at sentence boundaries and "
                   "writes OUTPUT.{src,tgt,chunks} for fairseq-preprocess --joined-dictionary.")
    add_split_arguments(p, "prefix of the tokenised INPUT.{src,tgt,docids}",
                        "prefix of OUTPUT.{src,tgt,chunks}")
    p.add_argument("--codes", required=True, help="joint fastBPE codes (fastbpe learnbpe)")
    p.add_argument("--max-chunk-tokens", type=ranged(int, 2), default=512,
                   help="most BPE tokens of a chunk on either side, the source's BOS markers "
                        "included, EOS not (004: 512; at least 2: a BOS and a token)")
    add_shard_argument(p)


get_parser, cli_main = family_commands(PROG, __doc__, (_add_extract, _add_tokenize, _add_chunk))
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
