"""The chunk map of a document-translation split (paper 004 Sec. 4.2): which document, chunk and
sentences each binarized example is, so that the chunks' translations are concatenated back into
documents for document BLEU. Read by ``document_translation`` (checked against the binarized
split), document BLEU and the ``doc_chunks`` pipeline; written by
:mod:`fairseq_hier.preparation.doc_chunk`. The format: docs/data-formats.md, section
"Document chunks and the chunk map".

May import: ``errors`` and the standard library.
"""

import os
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from ..errors import HierError


@dataclass
class ChunkRow:
    """One line of a chunk map."""
    docid: str
    chunk: int
    first: int
    last: int

    def line(self) -> str:
        return f"{self.docid}\t{self.chunk}\t{self.first}\t{self.last}\n"


def read_chunk_map(path: str, expected: int = None) -> List[ChunkRow]:
    """Read and check a chunk map: four tab-separated fields a line; per document (contiguous
    lines) chunk indices 0, 1, ... and sentence spans that tile 0..n-1. ValueError naming the file
    and line otherwise, or if it has not ``expected`` lines (the binarized examples)."""
    if not os.path.exists(path):
        raise HierError(f"{path} not found (the chunk map fairseq-hier-doc chunk writes; copy it "
                        f"next to the binarized data)")
    rows: List[ChunkRow] = []
    finished = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4 or not all(x.isdigit() for x in fields[1:]) or not fields[0]:
                raise HierError(f"{path}:{n}: expected docid<TAB>chunk<TAB>first<TAB>last, got "
                                f"{line.rstrip()!r}")
            row = ChunkRow(fields[0], *map(int, fields[1:]))
            prev = rows[-1] if rows else None
            if prev is not None and prev.docid != row.docid:
                finished.add(prev.docid)
            if row.docid in finished:
                raise HierError(f"{path}:{n}: document {row.docid!r} continues after another "
                                f"document began (its chunks must be contiguous)")
            same = prev is not None and prev.docid == row.docid
            want_chunk, want_first = (prev.chunk + 1, prev.last + 1) if same else (0, 0)
            if row.chunk != want_chunk or row.first != want_first or row.last < row.first:
                raise HierError(f"{path}:{n}: document {row.docid!r} chunk {row.chunk} covers "
                                f"sentences {row.first}-{row.last}; expected chunk {want_chunk} "
                                f"starting at sentence {want_first}")
            rows.append(row)
    if expected is not None and len(rows) != expected:
        raise HierError(f"{path} has {len(rows)} chunks, the binarized split has {expected} "
                        f"examples")
    return rows


def documents_of(rows: Sequence[ChunkRow]) -> List[Tuple[str, List[int], int]]:
    """Per document in map order: ``(docid, indices of its chunks, its number of sentences)``."""
    docs: List[Tuple[str, List[int], int]] = []
    for i, row in enumerate(rows):
        if not docs or docs[-1][0] != row.docid:
            docs.append((row.docid, [], 0))
        docid, chunks, _ = docs[-1]
        chunks.append(i)
        docs[-1] = (docid, chunks, row.last + 1)
    return docs


def reassemble(rows: Sequence[ChunkRow], chunk_texts: Sequence[str]) -> List[Tuple[str, str]]:
    """Chunk outputs (one per map row, in map order) -> ``(docid, text)`` per document, in the
    original document order, the chunks' texts joined by a space (the paper's concatenation).
    The chunk <-> document alignment comes from the map alone, so a chunk's hypothesis may hold
    more or fewer sentences than its source span."""
    if len(chunk_texts) != len(rows):
        raise HierError(f"{len(chunk_texts)} chunk outputs for {len(rows)} chunks in the map")
    return [(docid, " ".join(t for t in (chunk_texts[i].strip() for i in chunks) if t))
            for docid, chunks, _ in documents_of(rows)]
