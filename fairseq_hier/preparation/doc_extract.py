"""The ``fairseq-hier-doc extract`` step: the documents of one split of a document-translation
corpus, read from the published layouts' inputs (:mod:`fairseq_hier.readers.doc_mt`: WMT
SGML/XML, IWSLT TED XML/tags, document-split corpora, JSON lines), in the command line's order,
with their docids checked unique across the inputs, and written in our raw layout
(:mod:`fairseq_hier.readers.documents`; ``fairseq-hier-doc extract`` documents the formats,
options and errors); and every split of a published data set at once
(:func:`extract_dataset`, its files: :mod:`fairseq_hier.readers.doc_mt.datasets`).

May import: :mod:`fairseq_hier.readers`, :mod:`fairseq_hier.data` (shards), ``errors``, ``io``.
"""

import glob
import logging
import os
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from fairseq_hier.readers.doc_mt.doc_split import read_doc_split
from fairseq_hier.readers.doc_mt.folders import (DOC_FOLDER_REF, DOC_FOLDER_SRC,
                                                 find_document_folders, folder_direction,
                                                 is_document_folder_pair, read_doc_folders,
                                                 relative_names)
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import write_text
from fairseq_hier.readers.doc_mt.datasets import DATASETS, SplitFiles, dataset_splits
from fairseq_hier.readers.doc_mt.layouts import FORMATS, INPUT_KINDS, Input  # noqa: F401
from fairseq_hier.readers.documents import Document, split_paths, write_documents

logger = logging.getLogger(__name__)

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


def extract_split(inputs: Sequence[Input], layout: str, output: str, src_lang: str,
                  tgt_lang: str, shard: Optional[Shard] = None,
                  report: Callable[[str], None] = logger.info, **options) -> int:
    """Read every input, check docids across them, write the split ``output`` (or its
    ``shard``); ``report`` gets a line per input and the total; ``options``: those of
    :func:`read_inputs`. Returns the number of documents written."""
    docs, paths = [], []
    for item, read in collect_documents(inputs, layout, output, src_lang, tgt_lang, **options):
        paths.extend(item.paths)
        report(f"{item.label}: {len(read)} documents, {sum(len(d.src) for d in read)} sentences")
        docs.extend(read)
    label, n, sentences = write_shard(output, src_lang, tgt_lang, docs, paths, shard)
    report(f"{label}total: {n} documents, {sentences} sentences -> "
           f"{', '.join(split_paths(output, src_lang, tgt_lang))}")
    return n


def _extracted_as(output_dir: str, name: str) -> Optional[str]:
    """The ``test*.name`` file of ``output_dir`` that names ``name`` (a set extracted by an
    earlier run as a testN), or None."""
    for path in sorted(glob.glob(os.path.join(glob.escape(output_dir), "test*.name"))):
        with open(path, encoding="utf-8") as f:
            if name in f.read().splitlines():
                return path
    return None


def _next_test(output_dir: str) -> str:
    """The first free test set after ``test``: test1, test2, ..."""
    i = 1
    while os.path.isfile(f"{output_dir}/test{i}.docids"):
        i += 1
    return f"test{i}"


def _done(output_dir: str, found: SplitFiles) -> bool:
    return found.split is not None and os.path.isfile(f"{output_dir}/{found.split}.docids")


def extract_dataset(dataset: str, input_dir: str, output_dir: str,
                    test_suite: Optional[str] = None, skip_bad: bool = False,
                    report: Callable[[str], None] = logger.info) -> int:
    """Every split of ``dataset`` (:data:`~fairseq_hier.readers.doc_mt.datasets.DATASETS`)
    found in ``input_dir`` -> ``OUTPUT_DIR/SPLIT.{src,tgt,docids}`` and ``SPLIT.name``, in the
    layout's order; a split already extracted is skipped. Before any work, one HierError
    naming the missing files of every required split still to extract; a missing optional test
    set is one ``report`` line. ``skip_bad``: the training corpora's bad sentence pairs are
    dropped. Returns the number of splits written."""
    langs = DATASETS[dataset]
    found = dataset_splits(dataset, input_dir, test_suite)
    errors = [s.error for s in found if s.error and not _done(output_dir, s)]
    if errors:
        raise HierError("; ".join(errors))
    os.makedirs(output_dir, exist_ok=True)
    written = 0
    for s in found:
        if _done(output_dir, s):
            report(f"split {s.split}: {output_dir}/{s.split}.docids exists, not extracted again")
            continue
        earlier = _extracted_as(output_dir, s.name) if s.split is None else None
        if earlier:
            report(f"{s.name}: extracted before ({earlier}), not extracted again")
            continue
        if s.note:
            report(s.note)
            continue
        split = s.split or _next_test(output_dir)
        prefix = f"{output_dir}/{split}"
        report(f"split {split}" + (f" ({s.name})" if s.name else "") + ":")
        extract_split(s.inputs, s.format, prefix, langs.src_lang, langs.tgt_lang, report=report,
                      columns=s.columns, skip_bad=skip_bad and s.skip_bad)
        if s.name:
            write_text(f"{prefix}.name", s.name + "\n")
        written += 1
    return written
