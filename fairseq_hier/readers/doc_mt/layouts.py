"""The registry of the document-MT layouts: ``fairseq-hier-doc extract --format`` name -> reader,
and the inputs each reads (:class:`Input`: ``--pair``, ``--file``, ``--folder``). Each reader
returns the documents of its input as a list of
:class:`~fairseq_hier.readers.documents.Document` (docid, aligned ``src`` / ``tgt`` sentences),
ready for :func:`~fairseq_hier.readers.documents.write_documents`. Imports the reader modules of
this package.
"""

from typing import Callable, Dict, List, NamedTuple

from fairseq_hier.readers.doc_mt.doc_split import read_doc_split
from fairseq_hier.readers.doc_mt.jsonl import read_doc_jsonl
from fairseq_hier.readers.doc_mt.mteval import read_mteval
from fairseq_hier.readers.doc_mt.ted_tags import read_ted_tags
from fairseq_hier.readers.doc_mt.wmt_xml import read_wmt_xml
from fairseq_hier.readers.documents import Document

FORMATS: Dict[str, Callable[..., List[Document]]] = {
    "wmt-sgml": read_mteval,
    "ted-xml": read_mteval,
    "wmt-xml": read_wmt_xml,
    "doc-split": read_doc_split,
    "ted-tags": read_ted_tags,
    "jsonl": read_doc_jsonl,
}

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
    """One input of a split: its option (``pair``, ``file``, ``folder``) and paths."""
    kind: str
    paths: List[str]

    @property
    def label(self) -> str:
        return " + ".join(self.paths)
