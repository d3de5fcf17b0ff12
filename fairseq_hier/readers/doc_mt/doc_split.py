"""WMT20 training data with document boundaries (News Commentary v15, Europarl v10, Rapid 2019):
a TSV file ``src<TAB>tgt`` or two line-aligned plain files, a line empty on both sides ending a
document (docs/data-formats.md, section "Document-split files"). Imports the standard library
and :mod:`fairseq_hier.readers`.
"""

import collections
import logging
import os
import re
from typing import Iterator, List, Optional, Sequence, Tuple

from fairseq_hier.readers.doc_mt.common import aligned_lines, count_bad, log_counts, one_line
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError, numbered_lines

logger = logging.getLogger(__name__)


# (where, source, target, problem): a boundary has both sides empty; a bad pair has a problem
Pair = Tuple[str, str, str, Optional[str]]
# lines of the layouts whose documents carry their own ids (TED train.tags, mteval, WMT XML)
_FOREIGN_LINE = re.compile(r"<(talkid|doc|seg)\b[^>]*>")
_FOREIGN_FORMAT = {"talkid": "an IWSLT train.tags line: read it with --format ted-tags",
                   "doc": "mteval or WMT XML markup: read it with --format wmt-sgml, ted-xml or "
                          "wmt-xml",
                   "seg": "mteval or WMT XML markup: read it with --format wmt-sgml, ted-xml or "
                          "wmt-xml"}


def read_doc_split(paths: Sequence[str], src_lang: str, tgt_lang: str,
                   columns: Optional[Sequence[str]] = None, skip_bad: bool = False,
                   name: Optional[str] = None) -> List[Document]:
    """Documents of a document-split training corpus: ``paths`` is one TSV file (then
    ``columns`` names the language of each column, e.g. ``("de", "en")``) or a source and a
    target plain file, line-aligned. Docids ``{name}:{k}`` (``name`` defaults to the base name
    of ``paths[0]``). A bad pair (one side empty, a TSV line without exactly one tab) is an
    error; with ``skip_bad`` it is dropped and counted in the log with the first locations.
    Different line counts of the plain files are always an error (a shift somewhere has
    misaligned every later pair)."""
    counts = collections.Counter()
    if len(paths) == 1:
        (path,) = paths
        pairs = _tsv_pairs(path, src_lang, tgt_lang, _tsv_swap(path, src_lang, tgt_lang, columns),
                           counts)
    elif len(paths) == 2:
        if columns is not None:
            raise ReaderError(f"{paths[0]}: columns apply to a TSV file, not to a pair of plain "
                              f"files (given in the order source, target)")
        pairs = plain_pairs(*paths, counts)
    else:
        raise ReaderError(f"read_doc_split takes one TSV file or a source and a target file, "
                          f"not {len(paths)} paths")
    label = " + ".join(paths)
    name = os.path.basename(paths[0]) if name is None else name
    docs, first_bad = _split_documents(pairs, name, skip_bad, counts)
    if first_bad:
        logger.warning(f"{label}: skipped {counts['bad_pairs_skipped']} bad sentence pairs "
                       f"(first: {'; '.join(first_bad)})")
    log_counts(label, docs, counts)
    return docs


def _tsv_swap(path: str, src_lang: str, tgt_lang: str,
              columns: Optional[Sequence[str]]) -> bool:
    """True if the TSV's first column holds the target language."""
    if columns is None or sorted(columns) != sorted((src_lang, tgt_lang)) or src_lang == tgt_lang:
        raise ReaderError(f"{path}: columns {tuple(columns) if columns else None} must name the "
                          f"language of each TSV column, {src_lang!r} and {tgt_lang!r} in the "
                          f"file's order")
    return columns[0] != src_lang


def _tsv_pairs(path: str, src_lang: str, tgt_lang: str, swap: bool,
               counts: collections.Counter) -> Iterator[Pair]:
    for n, line in numbered_lines(path):
        where = f"{path}:{n}"
        if not line.strip():  # empty, a tab only, whitespace only
            yield where, "", "", None
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            yield where, "", "", (f"{len(fields) - 1} tabs (expected source<TAB>target: "
                                  f"exactly one tab)")
            continue
        src, tgt = (_sentence(f, where, counts) for f in (fields[::-1] if swap else fields))
        yield where, src, tgt, _unbalanced(src, tgt, f"the {src_lang} column",
                                           f"the {tgt_lang} column")


def plain_pairs(src_path: str, tgt_path: str, counts: collections.Counter) -> Iterator[Pair]:
    """The sentence pairs of two line-aligned plain files (also a document folder's files)."""
    for n, a, b in aligned_lines(src_path, tgt_path):
        src, tgt = _sentence(a, f"{src_path}:{n}", counts), _sentence(b, f"{tgt_path}:{n}", counts)
        yield f"{src_path}:{n}", src, tgt, _unbalanced(src, tgt, f"{src_path}:{n}",
                                                       f"{tgt_path}:{n}")


def _sentence(text: str, where: str, counts: collections.Counter) -> str:
    """A doc-split sentence (docs/data-formats.md, section "Text policy"; "" if empty); refuses the
    lines of the layouts whose documents have ids of their own."""
    out = one_line(text, counts)
    m = _FOREIGN_LINE.match(out)
    if m:
        raise ReaderError(f"{where}: a <{m.group(1)}> line is {_FOREIGN_FORMAT[m.group(1)]}, "
                          f"not doc-split")
    return out if out.strip() else ""


def _unbalanced(src: str, tgt: str, src_name: str, tgt_name: str) -> Optional[str]:
    if bool(src) == bool(tgt):
        return None
    empty, full = (src_name, tgt_name) if not src else (tgt_name, src_name)
    return (f"unbalanced: {empty} is empty but {full} is not (a document boundary is empty on "
            f"both sides)")


def _split_documents(pairs: Iterator[Pair], name: str, skip_bad: bool,
                     counts: collections.Counter) -> Tuple[List[Document], List[str]]:
    """Group pairs into documents at the boundaries: (documents with ids ``name:k``, ``k``
    counting every block of non-boundary lines in the file; the first few ``"where: problem"``
    of the bad pairs dropped). What was dropped is added to ``counts``."""
    docs: List[Document] = []
    first_bad: List[str] = []
    current: Optional[Document] = None
    k = 0

    def close() -> None:
        if current is None:
            return
        if current.src:
            docs.append(current)
        else:
            counts["documents_left_empty_skipped"] += 1

    for where, src, tgt, problem in pairs:
        if problem is None and not src and not tgt:
            close()
            current = None
            continue
        if current is None:
            k += 1
            current = Document(f"{name}:{k}")
        if problem is not None:
            if not skip_bad:
                raise ReaderError(f"{where}: {problem}")
            count_bad(where, problem, counts, first_bad)
            continue
        current.src.append(src)
        current.tgt.append(tgt)
    close()
    return docs, first_bad
