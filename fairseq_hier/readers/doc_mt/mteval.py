"""WMT newstest "fake SGML" up to WMT20 and the IWSLT17 TED dev/test XML (mteval layouts): one tag
per line, segments taken exactly as sacreBLEU takes them (docs/data-formats.md, section "WMT
fake SGML and IWSLT TED XML"). Imports the standard library and :mod:`fairseq_hier.readers`.
"""

import collections
import logging
import re
from typing import Dict, List, NamedTuple, Optional

from fairseq_hier.readers.doc_mt.common import SEG_ID, log_counts, one_line
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError, numbered_lines

logger = logging.getLogger(__name__)


_ATTRIBUTE = re.compile(r'([A-Za-z_][\w.:-]*)="([^"]*)"')
# sacreBLEU: re.sub(r"<seg.*?>(.*)</seg>.*?", "\\1", line), then whitespace collapsed
_SEG_LINE = re.compile(r"<seg\b([^>]*)>(.*)</seg>")
_DOC_LINE = re.compile(r"<doc\b([^>]*)>")
_SET_LINE = re.compile(r"<\?xml\b.*\?>|</?(?:mteval|srcset|refset|tstset)\b[^>]*>")
_BLOCK_LINE = re.compile(r"</?(?:p|hl)>")
_METADATA_LINE = re.compile(r"<([A-Za-z][\w-]*)\b[^>]*>.*</\1>")
# a language code in an mteval set line (en, zh-cn, pt_BR), not a language name
_LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?")


def _attributes(text: str) -> Dict[str, str]:
    """``name="value"`` pairs of a tag's attribute text (values taken as written)."""
    return dict(_ATTRIBUTE.findall(text))


class _MtevalDoc(NamedTuple):
    docid: str
    line: int
    segments: List[str]


def _read_mteval_file(path: str, counts: collections.Counter,
                      lang: Optional[str] = None) -> List[_MtevalDoc]:
    """The documents of one mteval file, in file order (checks in the module docstring); with
    ``lang``, the file's language must be ``lang`` (:func:`_check_set_language`)."""
    docs: List[_MtevalDoc] = []
    first_line: Dict[str, int] = {}
    doc: Optional[_MtevalDoc] = None
    for n, line in numbered_lines(path):
        s = line.strip()
        where = f"{path}:{n}"
        if not s:
            continue
        if s.startswith(("<seg ", "<seg>")):
            if doc is None:
                raise ReaderError(f"{where}: <seg> outside a <doc>")
            doc.segments.append(_mteval_segment(s, where, len(doc.segments) + 1, counts))
        elif s.startswith(("<doc ", "<doc>")):
            if doc is not None:
                raise _unclosed_doc(path, doc, n, s)
            m = _DOC_LINE.fullmatch(s)
            if m is None:
                raise ReaderError(f"{where}: malformed <doc> line (expected <doc docid=\"...\" "
                                  f"...> on one line)")
            docid = _attributes(m.group(1)).get("docid", "")
            if not docid:
                raise ReaderError(f"{where}: missing docid (<doc> without a docid attribute)")
            if docid in first_line:
                raise ReaderError(f"{where}: repeated docid {docid!r} (first at line "
                                  f"{first_line[docid]})")
            first_line[docid] = n
            doc = _MtevalDoc(docid, n, [])
        elif s == "</doc>":
            if doc is None:
                raise ReaderError(f"{where}: </doc> without <doc>")
            docs.append(doc)
            doc = None
        elif doc is not None and _SET_LINE.fullmatch(s):
            raise _unclosed_doc(path, doc, n, s)
        elif lang is not None and s.startswith(("<srcset", "<refset")):
            _check_set_language(s, f"{path}:{n}", lang)
        elif not _mteval_structure_line(s, inside=doc is not None):
            inside = "inside" if doc is not None else "outside"
            raise ReaderError(f"{where}: unexpected line {s[:60]!r} {inside} a <doc> (expected "
                              f"one tag per line: <doc>, <p>, <hl>, <seg id=\"N\">text</seg> or "
                              f"a one-line metadata element)")
    if doc is not None:
        raise ReaderError(f"{path}:{doc.line}: <doc> not closed before the end of the file")
    if not docs:
        raise ReaderError(f"{path}: no <doc> in the file")
    return docs


def _check_set_language(s: str, where: str, lang: str) -> None:
    """An mteval set line's language (``<srcset srclang>``, ``<refset trglang>``) must be
    ``lang`` (as base languages: ``zh`` matches ``zh-cn``), else one error line: the file of
    the other side or direction. Only a language code is checked: ``any`` (WMT20's source files)
    and names (``chinese``, ``English``: mteval allows them) are not."""
    kind, attr = ("srcset", "srclang") if s.startswith("<srcset") else ("refset", "trglang")
    stated = _attributes(s[len(kind) + 1:]).get(attr, "")
    if not _LANGUAGE_CODE.fullmatch(stated) or stated.lower() == "any":
        return
    if re.split(r"[-_]", stated.lower())[0] != re.split(r"[-_]", lang.lower())[0]:
        raise ReaderError(f"{where}: <{kind}> {attr}={stated!r} but this file should hold "
                          f"{lang!r} (the file of the other side or of the other direction?)")


def _unclosed_doc(path: str, doc: _MtevalDoc, n: int, s: str) -> ReaderError:
    return ReaderError(f"{path}:{doc.line}: <doc> not closed before line {n} ({s[:60]!r})")


def _mteval_structure_line(s: str, inside: bool) -> bool:
    """True for the lines that hold no segment: ``<p>``, ``<hl>`` and one-line metadata elements
    inside a document; the XML declaration and the set tags outside."""
    if inside:
        return bool(_BLOCK_LINE.fullmatch(s) or _METADATA_LINE.fullmatch(s))
    return bool(_SET_LINE.fullmatch(s))


def _mteval_segment(s: str, where: str, expected_id: int, counts: collections.Counter) -> str:
    """The text of a ``<seg id="N">text</seg>`` line, sacreBLEU's way; checks the id."""
    m = _SEG_LINE.fullmatch(s)
    if m is None:
        raise ReaderError(f"{where}: malformed <seg> line (expected <seg id=\"N\">text</seg> on "
                          f"one line)")
    seg_id = _attributes(m.group(1)).get("id", "")
    if not SEG_ID.fullmatch(seg_id):
        raise ReaderError(f"{where}: <seg> without a numeric id")
    if int(seg_id) != expected_id:
        raise ReaderError(f"{where}: segment id {seg_id} (expected {expected_id}: ids run 1..n "
                          f"in every document)")
    text = one_line(m.group(2), counts, unicode_spaces=True)
    if not text:
        raise ReaderError(f"{where}: empty segment (id {seg_id})")
    return text


def read_mteval(src_path: str, ref_path: str, src_lang: Optional[str] = None,
                tgt_lang: Optional[str] = None) -> List[Document]:
    """Documents of an mteval source/reference pair (WMT fake SGML or IWSLT XML), paired by
    docid in source order. Documents without any segment on either side are dropped (counted).
    ``src_lang``/``tgt_lang``, when given, must be the languages the files' set lines state
    (:func:`_check_set_language`)."""
    skipped = collections.Counter()
    sources = _read_mteval_file(src_path, skipped, src_lang)
    references = _read_mteval_file(ref_path, skipped, tgt_lang)
    by_docid = {d.docid: d for d in references}
    source_ids = {d.docid for d in sources}
    for doc in sources:
        if doc.docid not in by_docid:
            raise ReaderError(f"{src_path}:{doc.line}: docid {doc.docid!r} has no document in "
                              f"{ref_path}")
    for doc in references:
        if doc.docid not in source_ids:
            raise ReaderError(f"{ref_path}:{doc.line}: docid {doc.docid!r} has no document in "
                              f"{src_path}")
    docs = []
    for src in sources:
        ref = by_docid[src.docid]
        if len(src.segments) != len(ref.segments):
            raise ReaderError(f"{src_path}:{src.line}: segment count mismatch for docid "
                              f"{src.docid!r}: {len(src.segments)} segments here, "
                              f"{len(ref.segments)} in {ref_path}:{ref.line}")
        if not src.segments:
            skipped["documents_without_segments"] += 1
            continue
        docs.append(Document(src.docid, src.segments, ref.segments))
    if [d.docid for d in sources] != [d.docid for d in references]:
        logger.info(f"{ref_path}: documents in another order than in {src_path}; paired by "
                    f"docid")
    log_counts(f"{src_path} + {ref_path}", docs, skipped)
    return docs
