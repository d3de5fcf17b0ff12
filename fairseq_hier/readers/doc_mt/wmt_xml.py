"""The WMT21+ XML test sets (``<dataset>`` > ``<collection>`` > ``<doc>`` > ``<src>`` / ``<ref>`` >
``<p>`` > ``<seg>``), read with expat so that errors name the line, segments as sacreBLEU's
reader returns them (docs/data-formats.md, section "WMT21+ XML"). Imports the standard library
and :mod:`fairseq_hier.readers`.
"""

import collections
import xml.parsers.expat
from typing import Dict, List, NamedTuple, Optional, Tuple

from fairseq_hier.readers.doc_mt.common import SEG_ID, log_counts, one_line
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError


class _Block(NamedTuple):
    """One ``<src>``/``<ref>``/``<hyp>`` of a document: segment id -> (line, raw text)."""
    kind: str
    line: int
    translator: str
    segments: Dict[int, Tuple[int, str]]


class _XmlDoc(NamedTuple):
    docid: str
    line: int
    testsuite: bool
    blocks: List[_Block]


class _WmtXmlParser:
    """expat callbacks collecting the documents of a WMT21+ XML file (structure checks only)."""

    def __init__(self, path: str, src_lang: Optional[str], tgt_lang: Optional[str]):
        self.path = path
        self.langs = {"src": src_lang, "ref": tgt_lang}
        self.lang_given = {"src": src_lang is not None, "ref": tgt_lang is not None}
        self.docs: List[_XmlDoc] = []
        self.translators: List[str] = []  # in file order
        self.doc: Optional[_XmlDoc] = None
        self.block: Optional[_Block] = None
        self.seg: Optional[Tuple[int, int]] = None  # (id, line) of the open <seg>
        self.text: List[str] = []
        self.parser = xml.parsers.expat.ParserCreate()
        self.parser.buffer_text = True
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.characters
        # lxml's seg.text (sacreBLEU) stops at a comment or processing instruction: refuse them
        self.parser.CommentHandler = self.markup_in_text
        self.parser.ProcessingInstructionHandler = self.markup_in_text

    def parse(self) -> List[_XmlDoc]:
        try:
            with open(self.path, "rb") as f:
                self.parser.ParseFile(f)
        except OSError as e:
            raise ReaderError(f"cannot read {self.path}: {e.strerror or e}") from None
        except xml.parsers.expat.ExpatError as e:
            raise ReaderError(f"{self.path}:{e.lineno}: malformed XML "
                              f"({xml.parsers.expat.ErrorString(e.code)} at column "
                              f"{e.offset + 1})") from None
        return self.docs

    def error(self, message: str) -> ReaderError:
        return ReaderError(f"{self.path}:{self.parser.CurrentLineNumber}: {message}")

    def start(self, name: str, attrs: Dict[str, str]) -> None:
        line = self.parser.CurrentLineNumber
        if self.seg is not None:
            raise self.error(f"<{name}> inside a <seg> (expected text only)")
        if name == "doc":
            if self.doc is not None:
                raise self.error(f"<doc> inside the <doc> of line {self.doc.line}")
            if not attrs.get("id"):
                raise self.error("missing docid (<doc> without an id attribute)")
            self.doc = _XmlDoc(attrs["id"], line, "testsuite" in attrs, [])
        elif name in ("src", "ref", "hyp"):
            if self.doc is None or self.block is not None:
                raise self.error(f"<{name}> outside a <doc> or inside another block")
            if name != "hyp":
                self.check_lang(name, attrs.get("lang"))
            translator = attrs.get("translator", "")
            if name == "ref" and translator not in self.translators:
                self.translators.append(translator)
            for other in self.doc.blocks:
                if other.kind == name and (name == "src" or other.translator == translator):
                    raise self.error(f"a second <{name}>{_translator(name, translator)} in "
                                     f"document {self.doc.docid!r} (first at line {other.line})")
            self.block = _Block(name, line, translator, {})
        elif name == "seg":
            if self.block is None:
                raise self.error("<seg> outside <src>, <ref> or <hyp>")
            seg_id = attrs.get("id", "")
            if not SEG_ID.fullmatch(seg_id):
                raise self.error(f"<seg> without a numeric id (id={seg_id!r})")
            if int(seg_id) in self.block.segments:
                first = self.block.segments[int(seg_id)][0]
                raise self.error(f"segment id {seg_id} repeats line {first} in this "
                                 f"<{self.block.kind}>")
            self.seg, self.text = (int(seg_id), line), []

    def end(self, name: str) -> None:
        if name == "seg" and self.seg is not None:
            seg_id, line = self.seg
            self.block.segments[seg_id] = (line, "".join(self.text))
            self.seg = None
        elif name in ("src", "ref", "hyp") and self.block is not None:
            if name != "hyp":
                self.doc.blocks.append(self.block)
            self.block = None
        elif name == "doc" and self.doc is not None:
            self.docs.append(self.doc)
            self.doc = None

    def characters(self, data: str) -> None:
        if self.seg is not None:
            self.text.append(data)

    def markup_in_text(self, *_) -> None:
        if self.seg is not None:
            raise self.error("a comment or processing instruction inside a <seg> (expected "
                             "text only)")

    def check_lang(self, kind: str, lang: Optional[str]) -> None:
        """Every <src> (<ref>) holds the stated language, else the first one's."""
        if self.langs[kind] is None:
            self.langs[kind] = lang
        elif lang != self.langs[kind]:
            expected = ("the language asked for" if self.lang_given[kind]
                        else f"that of the first <{kind}>")
            raise self.error(f"<{kind}> lang {lang!r} (expected {self.langs[kind]!r}, "
                             f"{expected})")


def _translator(kind: str, translator: str) -> str:
    return f" translator={translator!r}" if kind == "ref" else ""


def read_wmt_xml(path: str, src_lang: Optional[str] = None, tgt_lang: Optional[str] = None,
                 translator: Optional[str] = None) -> List[Document]:
    """Documents of a WMT21+ XML test set, with the references of ``translator`` (default: the
    first translator in file order). ``src_lang``/``tgt_lang``, when given, must be the ``lang``
    of every ``<src>``/``<ref>``."""
    parsed = _WmtXmlParser(path, src_lang, tgt_lang)
    xml_docs = parsed.parse()
    if not xml_docs:
        raise ReaderError(f"{path}: no <doc> in the file")
    if not parsed.translators:
        raise ReaderError(f"{path}: no <ref> in the file")
    if translator is None:
        translator = parsed.translators[0]
    elif translator not in parsed.translators:
        available = ", ".join(repr(t) for t in parsed.translators)
        raise ReaderError(f"{path}: no reference by translator {translator!r} (available: "
                          f"{available})")
    docs, first_line, skipped = [], {}, collections.Counter()
    for doc in xml_docs:
        if doc.testsuite:
            skipped["testsuite_documents_skipped"] += 1
            continue
        if doc.docid in first_line:
            raise ReaderError(f"{path}:{doc.line}: repeated docid {doc.docid!r} (first at line "
                              f"{first_line[doc.docid]})")
        first_line[doc.docid] = doc.line
        kept = _wmt_xml_document(path, doc, translator, skipped)
        if kept.src:
            docs.append(kept)
        else:
            skipped["documents_without_reference_skipped"] += 1
    log_counts(f"{path} (translator {translator!r})", docs, skipped)
    return docs


def _wmt_xml_document(path: str, doc: _XmlDoc, translator: str,
                      skipped: collections.Counter) -> Document:
    """The segments of one document that have a reference by ``translator`` (sacreBLEU's rule:
    a segment without reference text by any translator is skipped)."""
    sources = [b for b in doc.blocks if b.kind == "src"]
    if not sources:
        raise ReaderError(f"{path}:{doc.line}: document {doc.docid!r} has no <src>")
    src = sources[0]
    refs = [b for b in doc.blocks if b.kind == "ref"]
    for ref in refs:
        if set(ref.segments) != set(src.segments):
            differ = sorted(set(ref.segments) ^ set(src.segments))[0]
            raise ReaderError(f"{path}:{ref.line}: segment ids of <ref "
                              f"translator={ref.translator!r}> do not match the <src> of line "
                              f"{src.line} in document {doc.docid!r} (first difference: id "
                              f"{differ})")
    chosen = next((r for r in refs if r.translator == translator), None)
    out = Document(doc.docid)
    for seg_id in sorted(src.segments):
        if not any(r.segments[seg_id][1] for r in refs):
            skipped["segments_without_reference_skipped"] += 1
            continue
        reference = (one_line(chosen.segments[seg_id][1], skipped) if chosen is not None
                     else "")
        if not reference.strip():  # sacreBLEU keeps it, with an empty reference
            skipped["segments_without_reference_by_translator_skipped"] += 1
            continue
        line, text = src.segments[seg_id]
        source = one_line(text, skipped)
        if not source.strip():
            raise ReaderError(f"{path}:{line}: empty source segment (id {seg_id}) in document "
                              f"{doc.docid!r}")
        out.src.append(source)
        out.tgt.append(reference)
    return out
