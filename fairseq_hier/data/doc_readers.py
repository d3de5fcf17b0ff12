"""Readers of the published document-level MT layouts (paper 004 Sec. 4.2), and of a JSON-lines
layout for any corpus of one's own -> :class:`Document`.

Each reader returns the documents of its input as a list of
:class:`fairseq_hier.data.documents.Document` (``docid``, aligned ``src`` / ``tgt`` sentences),
ready for :func:`fairseq_hier.data.documents.write_documents`. Standard library only (the XML
is parsed with ``xml.parsers.expat``, so errors name the line).

Layouts, exactly as their publishers ship them (see ``shared/formats/README.md`` and
``MORE_LAYOUTS.md``):

- :func:`read_mteval` -- WMT newstest "fake SGML" up to WMT20 (``newstest2020-ende-src.en.sgm``
  / ``newstest2020-ende-ref.de.sgm``) and the IWSLT17 TED dev/test XML
  (``IWSLT17.TED.tst2015.zh-en.zh.xml`` / ``...en.xml``): one tag per line, ``<srcset>`` or
  ``<refset>`` (IWSLT: inside ``<mteval>``) > ``<doc docid=...>`` > optional ``<p>``/``<hl>``
  blocks and one-line metadata elements (IWSLT: ``<url>``, ``<description>``, ``<keywords>``,
  ``<talkid>``, ``<title>``) > ``<seg id="N">text</seg>``, ids 1..n in every document. Segment
  text is taken exactly as sacreBLEU takes it (``sacrebleu/dataset/fake_sgml.py``: what lies
  between ``<seg ...>`` and the last ``</seg>`` of the line, cleaned by ``Dataset._clean``:
  every run of whitespace, Unicode spaces such as U+00A0 included, becomes one space; entities
  such as ``&amp;`` are left as they are), so our references equal sacreBLEU's. Source and
  reference documents are paired by docid, in source order. Docid: the ``docid`` attribute.
  Given the languages asked for, each file's stated language code (``<srcset srclang>``,
  ``<refset trglang>``; ``any`` and language names are not checked) must be its side's: a file
  of the other side or direction is an error naming it.
- :func:`read_wmt_xml` -- the WMT21+ XML (``<dataset>`` > ``<collection>`` >
  ``<doc id origlang [domain] [testsuite]>`` > ``<src lang>`` / ``<ref lang translator>`` /
  ``<hyp system>`` > ``<p>`` > ``<seg id>``). The text of a segment is what sacreBLEU's reader
  (``WMTXMLDataset._unwrap_wmt21_or_later``, lxml's ``seg.text``) returns: entities unescaped,
  non-breaking and other Unicode spaces kept. As sacreBLEU: documents with a ``testsuite``
  attribute are skipped, ``<hyp>`` blocks are ignored, a segment without reference text (from
  any translator) is skipped, the reference is the chosen translator's (default: the first
  translator in file order). Docid: the ``<doc>``'s ``id``. Where we differ from that reader,
  on purpose and counted or refused: ASCII whitespace follows the text policy below (sacreBLEU
  returns a segment spread over lines as it is); a segment whose chosen reference is empty is
  skipped (sacreBLEU returns it with an empty reference); a comment or processing instruction
  inside a ``<seg>`` (where lxml's ``seg.text`` stops) and a ``<ref>`` whose segment ids differ
  from its ``<src>``'s are errors.
- :func:`read_doc_split` -- WMT20 training data with document boundaries (News Commentary v15,
  Europarl v10, Rapid 2019): a TSV file ``src<TAB>tgt`` (column languages stated by the caller)
  or two line-aligned plain files. A document boundary is a line empty (or whitespace only) on
  both sides; several in a row are one boundary. Docids ``{name}:{k}``, ``k`` the 1-based number
  of the document in that file (counted before any bad pair is dropped, so ids stay stable) and
  ``name`` given by the caller (``fairseq-hier-doc-extract``: the file's path relative to the
  common parent of its inputs, see :func:`relative_names`; default: the file's base name).
- :func:`read_doc_folders` -- doc-split folders (the WMT20 test suites): one folder per
  document, each holding ``src.txt`` and ``ref.txt`` (the names are parameters) with one
  paragraph or sentence per line, line-aligned, and other files (system outputs) that are not
  read. The folder is one document, whatever its files hold; lines empty on both sides are
  dropped (counted). Docid: the folder's name as given by the caller (``fairseq-hier-doc-extract``:
  its path relative to the common parent of its inputs). :func:`find_document_folders` lists
  the document folders of a folder of them; a suite may hold both directions, so a folder named
  for the other direction of the requested pair (``cs-en``, ``csen`` in its name, or in the
  suite's, for ``en`` -> ``cs``) is not read (counted), see :func:`folder_direction`.
- :func:`read_doc_jsonl` -- JSON lines, the layout of any corpus of one's own: one document
  per line, a JSON object ``{"id": "doc7", "src": ["sentence", ...], "tgt": ["sentence",
  ...]}``, ``src`` and ``tgt`` lists of strings of the same length, aligned sentence by
  sentence (``src[i]`` translates to ``tgt[i]``); ``id`` (a string, or an integer, written as
  its decimal digits) is optional; other keys are not read (named in the log).
  Docid: ``id``, else ``{name}:{line}``, ``line`` the document's 1-based line number and
  ``name`` as for doc-split (given by the caller, ``fairseq-hier-doc-extract``: the file's path
  relative to the common parent of its inputs; default: the file's base name), e.g.
  ``news.jsonl:3``. Every id must be unique in the file. Errors, one line each naming the file,
  the line and the field: a line that is not JSON or not an object; ``src`` / ``tgt`` missing,
  not a list, or with an item that is not a string; ``src`` and ``tgt`` of different lengths
  (both given); an ``id`` that is neither a string nor an integer, or empty, spanning lines,
  holding a tab or surrounding spaces; an id used twice (both lines named); a pair empty on one
  side only. Pairs empty on both sides, documents left without a sentence and blank lines are
  dropped (counted).
- :func:`read_ted_tags` -- IWSLT17 ``train.tags.zh-en.zh`` / ``train.tags.zh-en.en``: two
  line-aligned files; a talk starts with tag lines (``<url>``, ``<keywords>``, ``<speaker>``,
  ``<talkid>``, ``<title>``, ``<description>``, sometimes ``<reviewer ...>``,
  ``<translator ...>``; ``<doc ...>`` and ``</doc>`` are accepted too), then its sentences one
  per line; a tag line after sentences (or a second ``<talkid>`` before any) begins the next
  talk, ``</doc>`` ends one. Tag lines must face tag lines. Docid: the talk's ``<talkid>``, the
  same in both files.

Text policy: our raw layout holds one sentence per line, so a sentence can hold neither a
newline nor a tab, and has no surrounding space. The mteval readers clean the text as sacreBLEU
does (above). The other readers keep the published text exactly, except ASCII whitespace (space,
tab, CR, LF, VT, FF): surrounding ASCII whitespace is removed and every inner run of it becomes
one space; non-breaking spaces and the other Unicode spaces stay as they are. A sentence of
whitespace only (Unicode spaces included, as :func:`str.strip` sees it) is empty. Each change is
counted in the log: ``sentences_trimmed`` (surrounding whitespace removed) and
``sentences_whitespace_collapsed`` (an inner run of whitespace replaced by one space), source
and target sentences counted separately.

Malformed input raises :class:`fairseq_hier.data.readers.ReaderError` (a ValueError) with one
line ``"path:line: what is wrong"``. Nothing is dropped without a count in the log: documents
without segments, skipped testsuite documents and segments without reference (WMT XML), pairs
empty on both sides (TED, document folders, JSON lines), bad pairs dropped with ``skip_bad``
(doc-split).
A doc-split input that holds ``<talkid>``, ``<doc>`` or ``<seg>`` lines is an error naming the
format that reads it, so that no talk or document of those layouts loses its own id.
"""

import collections
import logging
import os
import re
import xml.parsers.expat
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from fairseq_hier.data.documents import Document
from fairseq_hier.data.readers import (ReaderError, collapse, json_id, json_line, json_type,
                                       numbered_lines)
from ..errors import HierError

logger = logging.getLogger(__name__)

# how many locations of dropped records the log lists
LOGGED_LOCATIONS = 5
# the file names of a doc-split document folder (WMT20 test suites)
DOC_FOLDER_SRC = "src.txt"
DOC_FOLDER_REF = "ref.txt"
# ASCII whitespace: what one line of our raw layout cannot hold inside or around a sentence
_ASCII_WHITESPACE = " \t\n\r\f\v"
_ASCII_SPACE_RUN = re.compile(r"[ \t\n\r\f\v]+")


def one_line(text: str, counts: collections.Counter, unicode_spaces: bool = False) -> str:
    """``text`` as one sentence of our raw layout: surrounding whitespace removed and every inner
    run of it replaced by one space. Whitespace is ASCII whitespace only (the published text
    is kept, Unicode spaces included), or with ``unicode_spaces`` every whitespace character
    (sacreBLEU's ``Dataset._clean``). Adds to ``counts`` (module docstring) when a non-empty
    result differs from ``text``."""
    if unicode_spaces:
        stripped = text.strip()
        out = collapse(stripped)
    else:
        stripped = text.strip(_ASCII_WHITESPACE)
        out = _ASCII_SPACE_RUN.sub(" ", stripped)
    if out.strip():
        counts["sentences_trimmed"] += stripped != text
        counts["sentences_whitespace_collapsed"] += out != stripped
    return out


def _aligned_lines(src_path: str, tgt_path: str) -> Iterator[Tuple[int, str, str]]:
    """(line number, source line, target line) of two line-aligned files; raises, naming the
    first unpaired line, once the shorter file has ended."""
    src_lines, tgt_lines = numbered_lines(src_path), numbered_lines(tgt_path)
    n = 0
    for n, a in src_lines:
        b = next(tgt_lines, None)
        if b is None:
            _line_count_mismatch(src_path, n + sum(1 for _ in src_lines), tgt_path, n - 1)
        yield n, a, b[1]
    rest = sum(1 for _ in tgt_lines)
    if rest:
        _line_count_mismatch(tgt_path, n + rest, src_path, n)


def _line_count_mismatch(longer: str, n_long: int, shorter: str, n_short: int) -> None:
    raise ReaderError(f"{longer}:{n_short + 1}: line counts differ: {longer} has {n_long} "
                      f"lines, {shorter} has {n_short} (the two files must be line-aligned)")


def _log_counts(label: str, docs: List[Document], skipped: collections.Counter) -> None:
    sentences = sum(len(d.src) for d in docs)
    dropped = "".join(f"; {key}={value}" for key, value in sorted(skipped.items()) if value)
    logger.info(f"{label}: {len(docs)} documents, {sentences} sentence pairs{dropped}")


# ---------------------------------------------------------------------------------------------
# WMT fake SGML (up to WMT20) and IWSLT TED dev/test XML
# ---------------------------------------------------------------------------------------------

_ATTRIBUTE = re.compile(r'([A-Za-z_][\w.:-]*)="([^"]*)"')
# sacreBLEU: re.sub(r"<seg.*?>(.*)</seg>.*?", "\\1", line), then whitespace collapsed
_SEG_LINE = re.compile(r"<seg\b([^>]*)>(.*)</seg>")
_DOC_LINE = re.compile(r"<doc\b([^>]*)>")
_SET_LINE = re.compile(r"<\?xml\b.*\?>|</?(?:mteval|srcset|refset|tstset)\b[^>]*>")
_BLOCK_LINE = re.compile(r"</?(?:p|hl)>")
_METADATA_LINE = re.compile(r"<([A-Za-z][\w-]*)\b[^>]*>.*</\1>")
_SEG_ID = re.compile(r"[0-9]+")
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
    if not _SEG_ID.fullmatch(seg_id):
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
    _log_counts(f"{src_path} + {ref_path}", docs, skipped)
    return docs


# ---------------------------------------------------------------------------------------------
# WMT21+ XML
# ---------------------------------------------------------------------------------------------

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
            if not _SEG_ID.fullmatch(seg_id):
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
    _log_counts(f"{path} (translator {translator!r})", docs, skipped)
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


# ---------------------------------------------------------------------------------------------
# WMT20 training data with document boundaries (News Commentary v15, Europarl v10, Rapid 2019)
# ---------------------------------------------------------------------------------------------

# (where, source, target, problem): a boundary has both sides empty; a bad pair has a problem
_Pair = Tuple[str, str, str, Optional[str]]
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
        pairs = _plain_pairs(*paths, counts)
    else:
        raise ReaderError(f"read_doc_split takes one TSV file or a source and a target file, "
                          f"not {len(paths)} paths")
    label = " + ".join(paths)
    name = os.path.basename(paths[0]) if name is None else name
    docs, first_bad = _split_documents(pairs, name, skip_bad, counts)
    if first_bad:
        logger.warning(f"{label}: skipped {counts['bad_pairs_skipped']} bad sentence pairs "
                       f"(first: {'; '.join(first_bad)})")
    _log_counts(label, docs, counts)
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
               counts: collections.Counter) -> Iterator[_Pair]:
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


def _plain_pairs(src_path: str, tgt_path: str, counts: collections.Counter) -> Iterator[_Pair]:
    for n, a, b in _aligned_lines(src_path, tgt_path):
        src, tgt = _sentence(a, f"{src_path}:{n}", counts), _sentence(b, f"{tgt_path}:{n}", counts)
        yield f"{src_path}:{n}", src, tgt, _unbalanced(src, tgt, f"{src_path}:{n}",
                                                       f"{tgt_path}:{n}")


def _sentence(text: str, where: str, counts: collections.Counter) -> str:
    """A doc-split sentence (the module's text policy; "" if empty); refuses the lines of the
    layouts whose documents have ids of their own."""
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


def _split_documents(pairs: Iterator[_Pair], name: str, skip_bad: bool,
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
            _count_bad(where, problem, counts, first_bad)
            continue
        current.src.append(src)
        current.tgt.append(tgt)
    close()
    return docs, first_bad


def _count_bad(where: str, problem: str, counts: collections.Counter,
               first_bad: List[str]) -> None:
    counts["bad_pairs_skipped"] += 1
    if len(first_bad) < LOGGED_LOCATIONS:
        first_bad.append(f"{where}: {problem}")


# ---------------------------------------------------------------------------------------------
# doc-split folders (WMT20 test suites): one folder per document
# ---------------------------------------------------------------------------------------------

def relative_names(paths: Sequence[str]) -> List[str]:
    """The name of each path relative to the common parent of their folders (``/``-separated),
    e.g. ``docs/elitr1``, ``docs/elitr2`` -> ``elitr1``, ``elitr2``; ``a/train.tsv``,
    ``b/train.tsv`` -> ``a/train.tsv``, ``b/train.tsv``; one path -> its base name. Names that
    are unique as paths stay unique."""
    full = [os.path.abspath(p) for p in paths]
    if not full:
        return []
    parent = os.path.commonpath([os.path.dirname(p) for p in full])
    return [os.path.relpath(p, parent).replace(os.sep, "/") for p in full]


def is_document_folder_pair(src_path: str, ref_path: str, src_name: str = DOC_FOLDER_SRC,
                            ref_name: str = DOC_FOLDER_REF) -> bool:
    """True if ``src_path`` and ``ref_path`` are a document folder's ``src_name`` and
    ``ref_name`` (the same folder)."""
    return (os.path.basename(src_path) == src_name and os.path.basename(ref_path) == ref_name
            and os.path.dirname(os.path.abspath(src_path))
            == os.path.dirname(os.path.abspath(ref_path)))


def named_direction(name: str, src_lang: str, tgt_lang: str) -> Optional[bool]:
    """True if the folder name ``name`` names the direction ``src_lang`` -> ``tgt_lang``
    (``en-cs``, ``en_cs`` or ``encs`` between non-letters, any case: ``doc3.en-cs``,
    ``newstest2020-encs``), False if it names the other direction (``cs-en``), None if neither
    or both."""
    found = set()
    for first, second, forward in ((src_lang, tgt_lang, True), (tgt_lang, src_lang, False)):
        pattern = rf"(?<![a-z]){re.escape(first.lower())}[-_]?{re.escape(second.lower())}(?![a-z])"
        if re.search(pattern, name.lower()):
            found.add(forward)
    return found.pop() if len(found) == 1 else None


def folder_direction(folder: str, root: str, src_lang: str, tgt_lang: str) -> Optional[bool]:
    """:func:`named_direction` of the innermost folder name, from ``folder`` up to ``root``
    (included), that names one direction of the pair; None if none does."""
    path = os.path.abspath(folder)
    top = os.path.dirname(os.path.abspath(root))
    while path != top and os.path.dirname(path) != path:
        direction = named_direction(os.path.basename(path), src_lang, tgt_lang)
        if direction is not None:
            return direction
        path = os.path.dirname(path)
    return None


def _other_direction(folders: Sequence[str], root: str, langs: Optional[Tuple[str, str]]
                     ) -> List[str]:
    """The folders of ``folders`` whose names (up to ``root``) name the direction opposite to
    ``langs`` (source, target); [] without ``langs``."""
    if langs is None:
        return []
    return [f for f in folders if folder_direction(f, root, *langs) is False]


def find_document_folders(path: str, src_name: str = DOC_FOLDER_SRC,
                          ref_name: str = DOC_FOLDER_REF,
                          langs: Optional[Tuple[str, str]] = None) -> List[str]:
    """``path`` itself if it is a document folder (it holds ``src_name``), else its immediate
    subfolders that hold ``src_name``, in name order; the subfolders without it are logged (a
    test suite folder may hold other things). Every document folder must hold ``ref_name``.
    With ``langs`` (source, target language), a folder whose name, or the name of ``path``,
    names the other direction (``cs-en`` for ``("en", "cs")``, :func:`folder_direction`) is
    not read (counted in the log; a test suite may hold both directions); when no folder is
    left, one error line says so."""
    if not os.path.isdir(path):
        raise ReaderError(f"{path}: not a folder (expected a document folder holding "
                          f"{src_name} and {ref_name}, or a folder of such folders)")
    if os.path.isfile(os.path.join(path, src_name)):
        folders = [path]
    else:
        subfolders = sorted(e.name for e in os.scandir(path) if e.is_dir())
        folders = [os.path.join(path, f) for f in subfolders
                   if os.path.isfile(os.path.join(path, f, src_name))]
        others = [f for f in subfolders if not os.path.isfile(os.path.join(path, f, src_name))]
        if others:
            logger.info(f"{path}: {len(others)} subfolders without {src_name} not read (first: "
                        f"{', '.join(others[:LOGGED_LOCATIONS])})")
        if not folders:
            raise ReaderError(f"{path}: no {src_name} in it or in any of its subfolders "
                              f"(expected a document folder holding {src_name} and {ref_name}, "
                              f"or a folder of such folders)")
    other = _other_direction(folders, path, langs)
    if other:
        src_lang, tgt_lang = langs
        names = ", ".join(relative_names(other)[:LOGGED_LOCATIONS])
        if len(other) == len(folders):
            raise ReaderError(f"{path}: every document folder is named for {tgt_lang}-{src_lang} "
                              f"(first: {names}), the other direction of --src-lang {src_lang} "
                              f"--tgt-lang {tgt_lang}")
        logger.info(f"{path}: {len(other)} document folders of the other direction "
                    f"({tgt_lang}-{src_lang}) not read (first: {names})")
        folders = [f for f in folders if f not in other]
    for folder in folders:
        if not os.path.isfile(os.path.join(folder, ref_name)):
            raise ReaderError(f"{os.path.join(folder, ref_name)}: not found (a document folder "
                              f"holds {src_name} and {ref_name})")
    return folders


def read_doc_folders(folders: Sequence[str], docids: Optional[Sequence[str]] = None,
                     src_name: str = DOC_FOLDER_SRC, ref_name: str = DOC_FOLDER_REF,
                     skip_bad: bool = False, label: Optional[str] = None) -> List[Document]:
    """One document per folder, its sentences the aligned lines of ``folder/src_name`` and
    ``folder/ref_name``; docids ``docids`` (default: :func:`relative_names` of ``folders``).
    Lines empty on both sides are dropped, and folders left without a sentence (counted); a line
    empty on one side only is an error, or with ``skip_bad`` dropped and counted."""
    docids = relative_names(folders) if docids is None else docids
    if len(docids) != len(folders):
        raise HierError(f"{len(folders)} document folders but {len(docids)} docids")
    docs: List[Document] = []
    counts = collections.Counter()
    first_bad: List[str] = []
    for folder, docid in zip(folders, docids):
        doc = Document(docid)
        src_path, ref_path = os.path.join(folder, src_name), os.path.join(folder, ref_name)
        for where, src, tgt, problem in _plain_pairs(src_path, ref_path, counts):
            if problem is not None:
                if not skip_bad:
                    raise ReaderError(f"{where}: {problem}")
                _count_bad(where, problem, counts, first_bad)
            elif not src:
                counts["empty_line_pairs_skipped"] += 1
            else:
                doc.src.append(src)
                doc.tgt.append(tgt)
        if doc.src:
            docs.append(doc)
        else:
            counts["document_folders_without_sentences_skipped"] += 1
    label = label or (folders[0] if len(folders) == 1 else
                      f"{len(folders)} document folders ({folders[0]} ...)")
    if first_bad:
        logger.warning(f"{label}: skipped {counts['bad_pairs_skipped']} bad sentence pairs "
                       f"(first: {'; '.join(first_bad)})")
    _log_counts(label, docs, counts)
    return docs


# ---------------------------------------------------------------------------------------------
# IWSLT17 TED training data (train.tags.L1-L2.L1)
# ---------------------------------------------------------------------------------------------

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

    for n, a, b in _aligned_lines(src_path, tgt_path):
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
    _log_counts(f"{src_path} + {tgt_path}", docs, skipped)
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


# ---------------------------------------------------------------------------------------------
# JSON lines: one document per line (any corpus of one's own)
# ---------------------------------------------------------------------------------------------

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
    _log_counts(path, docs, counts)
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


FORMATS: Dict[str, Callable[..., List[Document]]] = {
    "wmt-sgml": read_mteval,
    "ted-xml": read_mteval,
    "wmt-xml": read_wmt_xml,
    "doc-split": read_doc_split,
    "ted-tags": read_ted_tags,
    "jsonl": read_doc_jsonl,
}
