"""Parallel documents in our raw layout (task ``document_translation``, paper 004 Sec. 4.2): the
:class:`Document` record that the document-MT readers (:mod:`fairseq_hier.readers.doc_mt`) return,
and the writer and readers of a split ``PREFIX.{src,tgt,docids}`` (docs/data-formats.md, section
"Document translation inputs"). Imports the standard library, :mod:`fairseq_hier.errors` and
:mod:`fairseq_hier.io`: readers and recipes import it without fairseq or torch.
"""

import os
from dataclasses import dataclass, field
from typing import Iterable, List

from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, iter_lines, read_lines


@dataclass
class Document:
    """One parallel document: ``src[i]`` translates to ``tgt[i]``."""
    docid: str
    src: List[str] = field(default_factory=list)
    tgt: List[str] = field(default_factory=list)


def split_paths(prefix: str, src: str, tgt: str):
    return f"{prefix}.{src}", f"{prefix}.{tgt}", f"{prefix}.docids"


def write_documents(prefix: str, src: str, tgt: str, docs: Iterable[Document],
                    inputs: Iterable[str] = ()) -> int:
    """Write ``docs`` as ``PREFIX.{src,tgt,docids}``, the three together once complete (none may
    be one of ``inputs``: :func:`fairseq_hier.io.atomic_outputs`); returns the number of
    documents. HierError (naming the document) on an empty document, an empty or multi-line
    sentence, unequal sides or a repeated docid."""
    paths = split_paths(prefix, src, tgt)
    seen = set()
    n = 0
    with atomic_outputs(paths, inputs) as (fs, ft, fd):
        for doc in docs:
            where = f"document {n + 1} ({doc.docid!r})"
            if doc.docid in seen:
                raise HierError(f"{paths[2]}: docid {doc.docid!r} occurs twice ({where})")
            if not doc.docid or doc.docid != doc.docid.strip() or "\n" in doc.docid \
                    or "\t" in doc.docid:
                raise HierError(f"{paths[2]}: {where}: a docid must be non-empty, one line, "
                                f"no tab, no surrounding spaces")
            if not doc.src or len(doc.src) != len(doc.tgt):
                raise HierError(f"{prefix}: {where} has {len(doc.src)} source and "
                                f"{len(doc.tgt)} target sentences")
            for side in (doc.src, doc.tgt):
                for i, s in enumerate(side):
                    if not s.strip() or "\n" in s or "\r" in s:
                        raise HierError(f"{prefix}: {where} sentence {i + 1} is empty or spans "
                                        f"lines: {s!r}")
            seen.add(doc.docid)
            sep = "\n" if n else ""
            fs.write(sep + "".join(s + "\n" for s in doc.src))
            ft.write(sep + "".join(s + "\n" for s in doc.tgt))
            fd.write(doc.docid + "\n")
            n += 1
    return n


def read_sentence_blocks(path: str) -> List[List[str]]:
    """A side of a split: its documents as lists of sentences (ValueError naming the file and
    line on an empty document, i.e. two empty lines in a row, or a leading/trailing empty line)."""
    if not os.path.exists(path):
        raise HierError(f"{path} not found")
    docs: List[List[str]] = [[]]
    last_blank = 0
    for n, line in iter_lines(path):  # HierError naming the line if it is not UTF-8
        line = line.rstrip("\n")
        if line.strip():
            docs[-1].append(line)
            continue
        if not docs[-1]:
            raise HierError(f"{path}:{n}: empty document (an empty line must follow a "
                            f"sentence: documents are separated by exactly one empty line)")
        docs.append([])
        last_blank = n
    if not docs[-1]:
        if len(docs) == 1:
            raise HierError(f"{path} holds no sentence")
        raise HierError(f"{path}:{last_blank}: empty line after the last document")
    return docs


def read_documents(prefix: str, src: str, tgt: str) -> List[Document]:
    """``PREFIX.{src,tgt,docids}`` -> documents, checking that both sides have the same documents
    and sentence counts and that every document has a unique docid."""
    src_path, tgt_path, ids_path = split_paths(prefix, src, tgt)
    sources, targets = read_sentence_blocks(src_path), read_sentence_blocks(tgt_path)
    if not os.path.exists(ids_path):
        raise HierError(f"{ids_path} not found (one docid per document)")
    docids = read_lines(ids_path)
    if not (len(sources) == len(targets) == len(docids)):
        raise HierError(f"{prefix}: {len(sources)} source documents ({src_path}), "
                        f"{len(targets)} target documents ({tgt_path}), {len(docids)} docids "
                        f"({ids_path}): all three must agree")
    seen = {}
    docs = []
    for i, (d, s, t) in enumerate(zip(docids, sources, targets)):
        if not d.strip() or "\t" in d:
            raise HierError(f"{ids_path}:{i + 1}: a docid must be non-empty, without a tab: {d!r}")
        if d in seen:
            raise HierError(f"{ids_path}:{i + 1}: docid {d!r} repeats line {seen[d]}")
        seen[d] = i + 1
        if len(s) != len(t):
            raise HierError(f"{prefix}: document {i + 1} ({d!r}) has {len(s)} source sentences "
                            f"({src_path}) but {len(t)} target sentences ({tgt_path})")
        docs.append(Document(d, s, t))
    return docs
