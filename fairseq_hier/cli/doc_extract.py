"""``fairseq-hier-doc-extract``: published document-level MT data -> our raw split
``PREFIX.{src,tgt,docids}`` (paper 004 Sec. 4.2; layout in :mod:`fairseq_hier.data.documents`).

    fairseq-hier-doc-extract --format wmt-sgml --src-lang en --tgt-lang de --output raw/test20 \\
        --pair newstest2020-ende-src.en.sgm newstest2020-ende-ref.de.sgm
    fairseq-hier-doc-extract --format wmt-xml --src-lang en --tgt-lang de --output raw/test21 \\
        --file newstest2021.en-de.xml --translator A
    fairseq-hier-doc-extract --format doc-split --src-lang en --tgt-lang de --output raw/train \\
        --columns de,en --file news-commentary-v15.de-en.tsv --file europarl-v10.de-en.tsv
    fairseq-hier-doc-extract --format ted-tags --src-lang zh --tgt-lang en --output raw/train \\
        --pair train.tags.zh-en.zh train.tags.zh-en.en
    fairseq-hier-doc-extract --format ted-xml --src-lang zh --tgt-lang en --output raw/valid \\
        --pair IWSLT17.TED.dev2010.zh-en.zh.xml IWSLT17.TED.dev2010.zh-en.en.xml \\
        --pair IWSLT17.TED.tst2010.zh-en.zh.xml IWSLT17.TED.tst2010.zh-en.en.xml

Formats (:mod:`fairseq_hier.data.doc_readers`): ``wmt-sgml`` and ``ted-xml`` (mteval source /
reference files, ``--pair``), ``wmt-xml`` (WMT21+ XML, ``--file``; ``--translator`` picks the
reference), ``doc-split`` (a TSV file with ``--file`` and ``--columns``, or a source and a target
plain file with ``--pair``; ``--skip-bad`` drops bad pairs, counted), ``ted-tags`` (IWSLT
``train.tags`` pair, ``--pair``). The inputs are read in the order given and concatenated;
docids must be unique across them. Prints one line per input (documents, sentences) and a total;
bad input gives a one-line error naming the file and line and exit status 1.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, run_command

PROG = "fairseq-hier-doc-extract"
# the inputs each format reads: "pair" (--pair SRC REF), "file" (--file F) or both
INPUT_KINDS = {
    "wmt-sgml": ("pair",),
    "ted-xml": ("pair",),
    "ted-tags": ("pair",),
    "wmt-xml": ("file",),
    "doc-split": ("pair", "file"),
}


def get_parser() -> argparse.ArgumentParser:
    from fairseq_hier.data.doc_readers import FORMATS

    p = command_parser(PROG, __doc__)
    p.add_argument("--format", required=True, choices=sorted(FORMATS),
                   help="published layout of the inputs (see fairseq_hier/data/doc_readers.py)")
    p.add_argument("--src-lang", required=True, help="source language code (output suffix)")
    p.add_argument("--tgt-lang", required=True, help="target language code (output suffix)")
    p.add_argument("--output", required=True, metavar="PREFIX",
                   help="write PREFIX.{src-lang}, PREFIX.{tgt-lang} and PREFIX.docids")
    # both append to one list, so that the inputs keep the order of the command line
    p.add_argument("--pair", nargs=2, action="append", dest="inputs", metavar=("SRC", "REF"),
                   help="a source and a reference (or target) file; repeatable")
    p.add_argument("--file", nargs=1, action="append", dest="inputs", metavar="F",
                   help="one file holding both sides (wmt-xml, doc-split TSV); repeatable")
    p.add_argument("--columns", default=None,
                   help="doc-split TSV: the language of each column in the file's order, "
                        "e.g. de,en")
    p.add_argument("--translator", default=None,
                   help="wmt-xml: the translator whose references to use (default: the first "
                        "in the file)")
    p.add_argument("--skip-bad", action="store_true",
                   help="doc-split: drop bad sentence pairs (counted in the log) instead of "
                        "stopping at the first")
    return p


def check_args(parser: argparse.ArgumentParser, args) -> None:
    """Usage errors (exit status 2): inputs of the wrong kind, options of another format."""
    if not args.inputs:
        parser.error("give at least one input (--pair SRC REF or --file F)")
    kinds = INPUT_KINDS[args.format]
    for paths in args.inputs:
        kind = "pair" if len(paths) == 2 else "file"
        if kind not in kinds:
            parser.error(f"--format {args.format} reads --{kinds[0]} inputs, not --{kind} "
                         f"{' '.join(paths)}")
    for option, value, fmt in (("--columns", args.columns, "doc-split"),
                               ("--translator", args.translator, "wmt-xml"),
                               ("--skip-bad", args.skip_bad, "doc-split")):
        if value and args.format != fmt:
            parser.error(f"{option} applies to --format {fmt} only")


def read_input(args, paths: List[str]):
    """The documents of one input (a list of :class:`~fairseq_hier.data.documents.Document`)."""
    from fairseq_hier.data.doc_readers import FORMATS

    reader = FORMATS[args.format]
    if args.format == "wmt-xml":
        return reader(paths[0], args.src_lang, args.tgt_lang, args.translator)
    if args.format == "doc-split":  # --columns describe the TSV inputs (--file)
        columns = (tuple(c.strip() for c in args.columns.split(","))
                   if args.columns is not None and len(paths) == 1 else None)
        return reader(paths, args.src_lang, args.tgt_lang, columns=columns,
                      skip_bad=args.skip_bad)
    return reader(*paths)


def run(args) -> int:
    """Read every input, check docids across them, write the split; returns the number of
    documents written."""
    from fairseq_hier.data.documents import split_paths, write_documents

    docs, origin = [], {}  # origin: docid -> the input it came from
    for paths in args.inputs:
        label = " + ".join(paths)
        read = read_input(args, paths)
        if not read:
            raise ValueError(f"{label}: no document left to write (see the log for what was "
                             f"skipped)")
        for doc in read:
            if doc.docid in origin:
                raise ValueError(f"{label}: docid {doc.docid!r} was already read from "
                                 f"{origin[doc.docid]} (docids must be unique across inputs)")
            origin[doc.docid] = label
        print(f"{label}: {len(read)} documents, {sum(len(d.src) for d in read)} sentences")
        docs.extend(read)
    n = write_documents(args.output, args.src_lang, args.tgt_lang, docs)
    print(f"total: {n} documents, {sum(len(d.src) for d in docs)} sentences -> "
          f"{', '.join(split_paths(args.output, args.src_lang, args.tgt_lang))}")
    return n


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    return run_command(PROG, run, args)

if __name__ == "__main__":
    sys.exit(cli_main())
