"""``fairseq-hier-doc-extract``: published document-level MT data -> our raw split
``PREFIX.{src,tgt,docids}`` (paper 004 Sec. 4.2; layout in :mod:`fairseq_hier.readers.documents`).

    fairseq-hier-doc-extract --format wmt-sgml --src-lang en --tgt-lang de --output raw/test20 \\
        --pair newstest2020-ende-src.en.sgm newstest2020-ende-ref.de.sgm

Formats, document ids, more examples and errors: docs/commands.md, section
fairseq_hier.cli.doc_extract; the layouts: docs/data-formats.md, section "Document translation
inputs". Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, run_command
from fairseq_hier.preparation.doc_extract import INPUT_KINDS, Input, collect_documents, write_shard
from fairseq_hier.readers.doc_mt.folders import DOC_FOLDER_REF, DOC_FOLDER_SRC
from fairseq_hier.readers.doc_mt.layouts import FORMATS
from fairseq_hier.readers.documents import split_paths

PROG = "fairseq-hier-doc-extract"


class _AppendInput(argparse.Action):
    """Appends ``Input(const, values)`` to one list, so that the inputs keep the command line's
    order whatever their option."""

    def __call__(self, parser, namespace, values, option_string=None):
        inputs = list(getattr(namespace, self.dest) or [])
        inputs.append(Input(self.const, list(values)))
        setattr(namespace, self.dest, inputs)


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("--format", required=True, choices=sorted(FORMATS),
                   help="published layout of the inputs (see fairseq_hier/readers/doc_mt/)")
    p.add_argument("--src-lang", required=True, help="source language code (output suffix)")
    p.add_argument("--tgt-lang", required=True, help="target language code (output suffix)")
    p.add_argument("--output", required=True, metavar="PREFIX",
                   help="write PREFIX.{src-lang}, PREFIX.{tgt-lang} and PREFIX.docids")
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
                   help="doc-split: drop bad sentence pairs (counted in the log) instead of "
                        "stopping at the first")
    add_shard_argument(p)
    return p


def check_args(parser: argparse.ArgumentParser, args) -> None:
    """Usage errors (exit status 2): inputs of the wrong kind, options of another format."""
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


def run(args) -> int:
    """Read every input, check docids across them, write the split; returns the number of
    documents written."""
    docs, inputs = [], []
    for item, read in collect_documents(
            args.inputs, args.format, args.output, args.src_lang, args.tgt_lang,
            columns=args.columns, src_name=args.src_name, ref_name=args.ref_name,
            translator=args.translator, skip_bad=args.skip_bad):
        inputs.extend(item.paths)
        print(f"{item.label}: {len(read)} documents, {sum(len(d.src) for d in read)} sentences")
        docs.extend(read)
    label, n, sentences = write_shard(args.output, args.src_lang, args.tgt_lang, docs, inputs,
                                      args.shard)
    print(f"{label}total: {n} documents, {sentences} sentences -> "
          f"{', '.join(split_paths(args.output, args.src_lang, args.tgt_lang))}")
    return n


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
