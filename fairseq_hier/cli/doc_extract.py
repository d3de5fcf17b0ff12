"""``fairseq-hier-doc-extract``: published document-level MT data -> our raw split
``PREFIX.{src,tgt,docids}`` (paper 004 Sec. 4.2; layout in :mod:`fairseq_hier.data.documents`).

    fairseq-hier-doc-extract --format wmt-sgml --src-lang en --tgt-lang de --output raw/test20 \\
        --pair newstest2020-ende-src.en.sgm newstest2020-ende-ref.de.sgm
    fairseq-hier-doc-extract --format wmt-xml --src-lang en --tgt-lang de --output raw/test21 \\
        --file newstest2021.en-de.xml --translator A
    fairseq-hier-doc-extract --format doc-split --src-lang en --tgt-lang de --output raw/train \\
        --columns de,en --file news-commentary-v15.de-en.tsv --file europarl-v10.de-en.tsv
    fairseq-hier-doc-extract --format doc-split --src-lang en --tgt-lang cs --output raw/suite \\
        --folder testsuites/elitr
    fairseq-hier-doc-extract --format ted-tags --src-lang zh --tgt-lang en --output raw/train \\
        --pair train.tags.zh-en.zh train.tags.zh-en.en
    fairseq-hier-doc-extract --format ted-xml --src-lang zh --tgt-lang en --output raw/valid \\
        --pair IWSLT17.TED.dev2010.zh-en.zh.xml IWSLT17.TED.dev2010.zh-en.en.xml \\
        --pair IWSLT17.TED.tst2010.zh-en.zh.xml IWSLT17.TED.tst2010.zh-en.en.xml
    fairseq-hier-doc-extract --format jsonl --src-lang fr --tgt-lang en --output raw/train \\
        --file mine/train.jsonl

Formats (:mod:`fairseq_hier.data.doc_readers`): ``wmt-sgml`` and ``ted-xml`` (mteval source /
reference files, ``--pair``; the language code each file states, ``<srcset srclang>`` or ``<refset
trglang>``, must be ``--src-lang`` for SRC and ``--tgt-lang`` for REF; ``any`` and language
names are not checked), ``wmt-xml`` (WMT21+ XML, ``--file``; ``--translator`` picks the
reference), ``doc-split`` (see below; ``--skip-bad`` drops bad pairs, counted), ``ted-tags``
(IWSLT ``train.tags`` pair, ``--pair``), ``jsonl`` (``--file``, repeatable: one document per
line, ``{"id": "doc7", "src": [sentences], "tgt": [sentences]}``, ``id`` optional, ``src`` and
``tgt`` aligned sentence by sentence; :func:`fairseq_hier.data.doc_readers.read_doc_jsonl`).
The inputs are read in the order given and concatenated.

Document ids: a format's own id where it has one (mteval ``docid``, WMT XML ``id``, TED
``<talkid>``, a JSON line's ``id``), kept as published; a JSON line without ``id`` gets
``PATH:LINE``, PATH as below and LINE its 1-based line number (``train.jsonl:3``). doc-split inputs
have none, so their ids come from their paths, relative to the common parent of the run's inputs
(the folder that holds them all, for inputs in one folder their base names):

- a corpus, ``--file F`` (a TSV file, ``--columns`` names its languages) or ``--pair SRC TGT``
  (two line-aligned plain files), documents separated by empty lines: ``PATH:k`` for its k-th
  document, PATH the TSV or source file's relative path (``news-commentary-v15.de-en.tsv:3``;
  two ``train.tsv`` in folders ``a`` and ``b`` give ``a/train.tsv:1`` and ``b/train.tsv:1``);
- document folders (the WMT20 test-suite layout: one folder per document holding ``src.txt``,
  ``ref.txt`` and system outputs, not read): ``--folder DIR``, where DIR is one document folder
  or a folder of them (its subfolders holding ``src.txt``, in name order), or ``--pair
  DIR/src.txt DIR/ref.txt``; ``--src-name``/``--ref-name`` give other file names. Each folder
  is one document, its id the folder's relative path (``--folder suites/elitr`` with
  subfolders ``doc1``, ``doc2`` -> ``doc1``, ``doc2``; ``--pair docs/e1/src.txt docs/e1/ref.txt
  --pair docs/e2/src.txt docs/e2/ref.txt`` -> ``e1``, ``e2``). A test suite may hold both
  directions: a document folder whose name (or, failing that, the ``--folder``'s name) names the
  other direction of ``--src-lang``/``--tgt-lang`` (``cs-en``, ``cs_en`` or ``csen`` between
  non-letters, for ``--src-lang en --tgt-lang cs``) is not read, and counted in the log; a
  ``--folder`` with nothing left, or a ``--pair`` in such a folder, is an error. Folders named
  for neither direction are read.

Docids must be unique across the inputs: two inputs with the same id (e.g. one TED talk in two
test sets) stop the run with one line naming both. Every input must exist before anything is
read (else one line naming the split and the file). Prints one line per input (documents,
sentences) and a total; bad input gives a one-line error naming the file and line and exit
status 1; the split's files are written under temporary names and renamed when complete.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, run_command
from fairseq_hier.data.doc_readers import DOC_FOLDER_REF, DOC_FOLDER_SRC, FORMATS
from fairseq_hier.data.documents import split_paths
from fairseq_hier.preparation.documents import INPUT_KINDS, Input, collect_documents, write_shard

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
                   help="published layout of the inputs (see fairseq_hier/data/doc_readers.py)")
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
