"""The ``fairseq-hier-doc-extract`` step: the documents of one split of a document-translation
corpus, read from the published layouts' inputs (:mod:`fairseq_hier.readers.doc_mt`: WMT
SGML/XML, IWSLT TED XML/tags, document-split corpora, JSON lines), in the command line's order,
with their docids checked unique across the inputs, and written in our raw layout
(:mod:`fairseq_hier.readers.documents`; ``fairseq-hier-doc-extract`` documents the formats,
options and errors).

May import: :mod:`fairseq_hier.readers`, :mod:`fairseq_hier.data` (shards), ``errors``.
"""

import os
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

from fairseq_hier.readers.doc_mt.doc_split import read_doc_split
from fairseq_hier.readers.doc_mt.folders import (DOC_FOLDER_REF, DOC_FOLDER_SRC,
                                                 find_document_folders, folder_direction,
                                                 is_document_folder_pair, read_doc_folders,
                                                 relative_names)
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.readers.doc_mt.layouts import FORMATS
from fairseq_hier.readers.documents import Document, split_paths, write_documents

# the inputs each format reads: "pair" (--pair SRC REF), "file" (--file F), "folder" (--folder D)
INPUT_KINDS = {
    "wmt-sgml": ("pair",),
    "ted-xml": ("pair",),
    "ted-tags": ("pair",),
    "wmt-xml": ("file",),
    "doc-split": ("pair", "file", "folder"),
    "jsonl": ("file",),
}


class Input(NamedTuple):
    """One input of the command line: its option (``pair``, ``file``, ``folder``) and paths."""
    kind: str
    paths: List[str]

    @property
    def label(self) -> str:
        return " + ".join(self.paths)


def check_inputs_exist(inputs: Sequence[Input], layout: str, output: str) -> None:
    """One line naming the split and the first input that is missing (or of the wrong kind),
    before anything is read."""
    for item in inputs:
        for path in item.paths:
            if item.kind == "folder":
                if not os.path.isdir(path):
                    what = "not a folder" if os.path.exists(path) else "not found"
                    raise HierError(f"{path}: {what} (--folder of split {output})")
            elif not os.path.isfile(path):
                what = "a folder, not a file" if os.path.isdir(path) else "not found"
                hint = ("; document folders are read with --folder"
                        if os.path.isdir(path) and layout == "doc-split" else "")
                raise HierError(f"{path}: {what} (--{item.kind} of split {output}{hint})")


def document_folders(inputs: Sequence[Input], layout: str, src_name: str,
                     ref_name: str, langs: Optional[Tuple[str, str]] = None
                     ) -> List[List[str]]:
    """The document folders of each input (``--folder``, or a ``--pair`` of one folder's
    ``--src-name`` and ``--ref-name``); [] for a corpus or another format. With ``langs``
    (source, target), a ``--folder``'s folders named for the other direction are skipped
    (counted), and a ``--pair`` in such a folder is refused."""
    out = []
    for item in inputs:
        if layout != "doc-split":
            out.append([])
        elif item.kind == "folder":
            out.append(find_document_folders(item.paths[0], src_name, ref_name, langs))
        elif item.kind == "pair" and is_document_folder_pair(*item.paths, src_name,
                                                              ref_name):
            folder = os.path.dirname(item.paths[0]) or "."
            if langs is not None and folder_direction(folder, folder, *langs) is False:
                raise HierError(f"{item.paths[0]}: its folder is named for {langs[1]}-{langs[0]}, "
                                f"the other direction of --src-lang {langs[0]} --tgt-lang "
                                f"{langs[1]}")
            out.append([folder])
        else:
            out.append([])
    return out


def read_inputs(inputs: Sequence[Input], layout: str, src_lang: str, tgt_lang: str,
                columns: Optional[str] = None, src_name: str = DOC_FOLDER_SRC,
                ref_name: str = DOC_FOLDER_REF, translator: Optional[str] = None,
                skip_bad: bool = False) -> Iterator[Tuple[Input, list]]:
    """(input, its documents: a list of :class:`~fairseq_hier.readers.documents.Document`) of
    every input, in command-line order, each read when asked for."""
    folders = document_folders(inputs, layout, src_name, ref_name, (src_lang, tgt_lang))
    # doc-split and jsonl docids: the relative path of each input's location (its TSV, source
    # or JSON-lines file, each of its document folders)
    locations = [p for item, f in zip(inputs, folders) for p in (f or item.paths[:1])]
    names = iter(relative_names(locations))
    for item, item_folders in zip(inputs, folders):
        if item_folders:
            docids = [next(names) for _ in item_folders]
            docs = read_doc_folders(item_folders, docids, src_name, ref_name, skip_bad,
                                    item.label)
        elif layout == "doc-split":
            item_columns = (tuple(c.strip() for c in columns.split(","))
                            if columns is not None and item.kind == "file" else None)
            docs = read_doc_split(item.paths, src_lang, tgt_lang, columns=item_columns,
                                  skip_bad=skip_bad, name=next(names))
        elif layout == "jsonl":
            docs = FORMATS["jsonl"](item.paths[0], name=next(names))
        elif layout == "wmt-xml":
            docs = FORMATS["wmt-xml"](item.paths[0], src_lang, tgt_lang, translator)
        elif layout in ("wmt-sgml", "ted-xml"):
            docs = FORMATS[layout](*item.paths, src_lang, tgt_lang)
        else:
            docs = FORMATS[layout](*item.paths)
        yield item, docs


def collect_documents(inputs: Sequence[Input], layout: str, output: str, src_lang: str,
                      tgt_lang: str, **options) -> Iterator[Tuple[Input, list]]:
    """Check that every input exists, then (input, its documents) of each in command-line
    order, docids checked unique across the inputs; ``options``: those of
    :func:`read_inputs`. ``output``: the split's prefix, named in errors."""
    check_inputs_exist(inputs, layout, output)
    origin = {}  # docid -> the input it came from
    for item, read in read_inputs(inputs, layout, src_lang, tgt_lang, **options):
        if not read:
            raise HierError(f"{item.label}: no document left to write (see the log for what "
                            f"was skipped)")
        for doc in read:
            if doc.docid in origin:
                raise HierError(f"{item.label}: docid {doc.docid!r} was already read from "
                                f"{origin[doc.docid]} (docids must be unique across inputs)")
            origin[doc.docid] = item.label
        yield item, read


def write_shard(output: str, src_lang: str, tgt_lang: str, docs: List[Document],
                inputs: Sequence[str], shard: Optional[Shard] = None) -> Tuple[str, int, int]:
    """Write ``docs`` (all read inputs, in order) as the split ``output.{src,tgt,docids}``, or
    only the documents of ``shard`` (:mod:`fairseq_hier.data.shards`; docids were checked
    across all of them); returns (``shard K/N `` or empty, documents and sentences written)."""
    selection = select(shard, inputs, lambda: len(docs), unit="documents")
    docs = selection.slice(docs)
    n = write_documents(output, src_lang, tgt_lang, docs, inputs=inputs)
    mark_outputs(split_paths(output, src_lang, tgt_lang), selection)
    return selection.label, n, sum(len(d.src) for d in docs)
