"""IWSLT17 TED training data, ``train.tags.L1-L2.L1`` / ``...L2``: two line-aligned files, each
talk opened by tag lines, its docid the ``<talkid>`` (docs/data-formats.md, section "IWSLT TED
train.tags"). Imports the standard library and :mod:`fairseq_hier.readers`.
"""

import collections
import re
from typing import Dict, List, Optional, Tuple

from fairseq_hier.readers.doc_mt.common import aligned_lines, log_counts, one_line
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError


_TED_TAG = re.compile(r"<(/?)(url|keywords|speaker|talkid|title|description|reviewer|translator"
                      r"|doc)\b[^>]*>")
_TALKID_LINE = re.compile(r"<talkid>\s*(.*?)\s*</talkid>")


class _Talk:
    """A talk being read: its first line, ``<talkid>`` per side (id, line) and sentences."""

    def __init__(self, line: int):
        self.line = line
        self.talkids: List[Optional[Tuple[str, int]]] = [None, None]
        self.doc = Document("")


def read_ted_tags(src_path: str, tgt_path: str) -> List[Document]:
    """Talks of an IWSLT ``train.tags`` pair (line-aligned), docid = ``<talkid>``. Lines empty
    on both sides and talks without sentences are dropped (counted)."""
    paths = (src_path, tgt_path)
    docs: List[Document] = []
    first_line: Dict[str, int] = {}
    skipped = collections.Counter()
    talk: Optional[_Talk] = None

    def finish() -> None:
        if talk is None:
            return
        if not talk.doc.src:
            skipped["talks_without_sentences_skipped"] += 1
            return
        talk.doc.docid = _talk_docid(talk, paths, first_line)
        docs.append(talk.doc)

    for n, a, b in aligned_lines(src_path, tgt_path):
        tags = (_TED_TAG.match(a.strip()), _TED_TAG.match(b.strip()))
        if bool(tags[0]) != bool(tags[1]):
            t = 0 if tags[0] else 1
            raise ReaderError(f"{paths[t]}:{n}: misaligned: a <{tags[t].group(2)}> line here but "
                              f"a sentence at {paths[1 - t]}:{n}")
        if tags[0]:
            if tags[0].group(1) and tags[0].group(2) == "doc":  # </doc> ends the talk
                finish()
                talk = None
                continue
            ids = [_talkid(tag, line, path, n) for tag, line, path in zip(tags, (a, b), paths)]
            if talk is None or talk.doc.src or any(
                    i is not None and old is not None for i, old in zip(ids, talk.talkids)):
                finish()
                talk = _Talk(n)
            talk.talkids = [old if i is None else (i, n) for i, old in zip(ids, talk.talkids)]
            continue
        src, tgt = (t if t.strip() else "" for t in (one_line(a, skipped), one_line(b, skipped)))
        if not src and not tgt:
            skipped["empty_line_pairs_skipped"] += 1
            continue
        if not src or not tgt:
            empty, full = (0, 1) if not src else (1, 0)
            raise ReaderError(f"{paths[empty]}:{n}: empty sentence on one side only "
                              f"({paths[full]}:{n} holds a sentence)")
        if talk is None:
            talk = _Talk(n)
        talk.doc.src.append(src)
        talk.doc.tgt.append(tgt)
    finish()
    if not docs:
        raise ReaderError(f"{src_path}: no talk with sentences in the file")
    log_counts(f"{src_path} + {tgt_path}", docs, skipped)
    return docs


def _talkid(tag: re.Match, line: str, path: str, n: int) -> Optional[str]:
    """The id of a ``<talkid>`` line, None for another tag."""
    if tag.group(2) != "talkid":
        return None
    m = _TALKID_LINE.fullmatch(line.strip())
    if m is None:
        raise ReaderError(f"{path}:{n}: malformed <talkid> line (expected <talkid>ID</talkid>)")
    return m.group(1)


def _talk_docid(talk: _Talk, paths: Tuple[str, str], first_line: Dict[str, int]) -> str:
    """The talk's ``<talkid>``, the same on both sides and not seen before."""
    for side, found in enumerate(talk.talkids):
        if found is None or not found[0]:
            raise ReaderError(f"{paths[side]}:{talk.line}: talk without <talkid> (missing docid)")
    (src_id, src_line), (tgt_id, tgt_line) = talk.talkids
    if src_id != tgt_id:
        raise ReaderError(f"{paths[0]}:{src_line}: talkid {src_id!r} but {paths[1]}:{tgt_line} "
                          f"has talkid {tgt_id!r}")
    if src_id in first_line:
        raise ReaderError(f"{paths[0]}:{src_line}: duplicated talkid {src_id!r} (first at line "
                          f"{first_line[src_id]})")
    first_line[src_id] = src_line
    return src_id
