"""JSON lines, the document-MT layout of a corpus of one's own: one document per line, its
source and target sentences aligned (docs/data-formats.md#document-translation-inputs and
#json-lines-the-checks). Imports the standard library and
:mod:`fairseq_hier.readers`.
"""

import collections
import logging
import os
from typing import Dict, List, Optional

from fairseq_hier.readers.doc_mt.common import log_counts, one_line
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError, json_id, json_line, json_type, numbered_lines

logger = logging.getLogger(__name__)


JSONL_EXPECTED = 'one document per line: {"id": ..., "src": [sentences], "tgt": [sentences]}'
JSONL_KEYS = ("id", "src", "tgt")


def read_doc_jsonl(path: str, name: Optional[str] = None) -> List[Document]:
    """Documents of a JSON-lines file, one per line (the module docstring gives the layout and
    the checks); docids the ``id`` fields, else ``{name}:{line}`` (``name`` defaults to the
    file's base name)."""
    name = os.path.basename(path) if name is None else name
    docs: List[Document] = []
    first_line: Dict[str, int] = {}
    counts, unknown = collections.Counter(), collections.Counter()
    for n, line in numbered_lines(path):
        if not line.strip():
            counts["blank_lines_skipped"] += 1
            continue
        where = f"{path}:{n}"
        obj = _jsonl_object(line, where)
        docid = json_id(obj, where) or f"{name}:{n}"
        if docid in first_line:
            first = first_line[docid]
            why = "" if "id" in obj else f" (line {n} has no 'id': {docid!r} is its default id)"
            raise ReaderError(f"{where}: id {docid!r} is also the id of line {first}{why} "
                              f"(expected a different id on every line)")
        first_line[docid] = n
        src, tgt = (_jsonl_sentences(obj, key, where) for key in ("src", "tgt"))
        if len(src) != len(tgt):
            raise ReaderError(f"{where}: 'src' has {len(src)} sentences but 'tgt' has "
                              f"{len(tgt)} (they must be aligned sentence by sentence)")
        unknown.update(k for k in obj if k not in JSONL_KEYS)
        doc = Document(docid)
        for i, (a, b) in enumerate(zip(src, tgt)):
            a, b = (t if t.strip() else "" for t in (one_line(a, counts), one_line(b, counts)))
            if not a and not b:
                counts["empty_line_pairs_skipped"] += 1
            elif not a or not b:
                empty, full = ("src", "tgt") if not a else ("tgt", "src")
                raise ReaderError(f"{where}: {empty!r} item {i} is empty but {full!r} item {i} "
                                  f"is not (a pair of sentences is empty on both sides or on "
                                  f"neither)")
            else:
                doc.src.append(a)
                doc.tgt.append(b)
        if doc.src:
            docs.append(doc)
        else:
            counts["documents_without_sentences_skipped"] += 1
    if unknown:
        named = ", ".join(f"'{k}' ({n} document{'s' if n > 1 else ''})"
                          for k, n in sorted(unknown.items()))
        logger.info(f"{path}: unknown key(s) not read: {named}")
    log_counts(path, docs, counts)
    return docs


def _jsonl_object(line: str, where: str) -> dict:
    obj = json_line(line, where, JSONL_EXPECTED)
    if not isinstance(obj, dict):
        raise ReaderError(f"{where}: the line holds a JSON {json_type(obj)} (expected "
                          f"{JSONL_EXPECTED})")
    return obj


def _jsonl_sentences(obj: dict, key: str, where: str) -> List[str]:
    side = "source" if key == "src" else "target"
    if key not in obj:
        raise ReaderError(f"{where}: {key!r} is missing (expected the document's {side} "
                          f"sentences, a list of strings; {JSONL_EXPECTED})")
    value = obj[key]
    if not isinstance(value, list):
        raise ReaderError(f"{where}: {key!r} is a JSON {json_type(value)} (expected the "
                          f"document's {side} sentences, a list of strings)")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ReaderError(f"{where}: {key!r} item {i} is a JSON {json_type(item)} "
                              f"(expected a sentence, a string)")
    return value
