"""Your own data: the JSON-lines schema that training and inference share (one example per
line), its one reader, and the one function that turns documents into paragraphs (and the one
into sentences).

Read by ``fairseq-hier-to-raw --format jsonl`` (:mod:`fairseq_hier.preparation.own_data`),
``fairseq-hier-sentence-bos --format jsonl`` (:func:`read_sentence_records`) and
``fairseq-hier-summarize`` (:mod:`fairseq_hier.inference.inputs`), so a checkpoint sees at
inference what the converter wrote for training. The schema and its errors:
docs/data-formats.md#your-own-data-the-json-lines-schema. Imports the standard
library and the shared parts of this package (:mod:`.lines`, :mod:`.records`, :mod:`.mds`).
"""

import collections
import logging
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

from fairseq_hier.readers.lines import (ReaderError, check_object, json_id, json_line, json_type,
                                        numbered_lines, str_list)
from fairseq_hier.readers.mds import clean
from fairseq_hier.readers.records import Record, article_fields, collapse, summary_fields

logger = logging.getLogger(__name__)

FIELDS = ("id", "title", "documents", "summary")
EXPECTED = "one example per line, a JSON object"
OBJECT = "one example: a JSON object"
#: the values of ``--paragraphs`` (fairseq-hier-to-raw --format jsonl) and of the ``paragraphs``
#: pipeline's record option: what becomes a paragraph of the hierarchical raw format
PARAGRAPH_MODES = ("documents", "blocks", "lines")
_LINE_END = re.compile(r"\r?\n")
# a blank line: a line end, then a line of nothing but spaces and tabs, then its line end
_BLANK_LINE = re.compile(r"\r?\n(?:[ \t\f\v]*\r?\n)+")
NO_SUMMARY_HINT = ("summaries are needed to train and to score; to summarise documents without "
                   "summaries, use fairseq-hier summarize")


@dataclass
class Example:
    """One example of the schema: ``id`` (the file's id as text, else the line number),
    ``title`` (None when absent or null), ``documents`` as in the file (line breaks kept),
    ``summaries`` (the references in file order; [] where summaries are not read), ``line``
    (1-based) and ``where`` (``path:line``, with ``(id ...)`` when the example has an id)."""

    id: str
    title: Optional[str]
    documents: List[str]
    summaries: List[str]
    line: int
    where: str


def read_examples(path: str, stats: collections.Counter, summaries: bool = True,
                  bare_lists: bool = False, log_unknown: bool = True) -> Iterator[Example]:
    """The examples of a JSON-lines file of the schema, in file order (docs/data-formats.md,
    section "Your own data: the JSON-lines schema").

    Args:
        path: the file (gzip-compressed or not)
        stats: counts added to (``blank_lines_skipped``)
        summaries: True: every example must have a summary (checked, and returned in
            ``Example.summaries``); False: ``summary`` is not read (inference)
        bare_lists: also take a line holding a bare JSON list of strings as the documents of
            one example (``fairseq-hier-summarize``'s shorthand)
        log_unknown: name the unknown keys in the log once the file is read (False for a
            second reading of a file)
    """
    ids = {}  # id -> (line of its first example, whether that line has an "id")
    seen_summary = False
    unknown = collections.Counter()
    lines = numbered_lines(path)
    for lineno, line in lines:
        if not line.strip():
            stats["blank_lines_skipped"] += 1
            continue
        where = f"{path}:{lineno}"
        obj = json_line(line, where, EXPECTED)
        if bare_lists and isinstance(obj, list):
            obj = {"documents": obj}
        if not isinstance(obj, dict):
            check_object(obj, ("documents",), where, OBJECT, "the line")
        example_id, where = _example_id(obj, lineno, where, ids)
        check_object(obj, ("documents",), where, OBJECT, "the example")
        documents = str_list(obj, "documents", where, "a list of documents",
                             "a string: a document")
        if not documents:
            raise ReaderError(f"{where}: 'documents' is empty (expected at least one document)")
        title = obj.get("title")
        if title is not None and not isinstance(title, str):
            raise ReaderError(f"{where}: 'title' is a JSON {json_type(title)} (expected a "
                              f"string or null)")
        found = []
        if summaries:
            found = _summaries(obj, where)
            if found is None:
                _missing_summary(where, path, lineno, lines, seen_summary)
            seen_summary = True
        unknown.update(k for k in obj if k not in FIELDS)
        yield Example(example_id, title, documents, found, lineno, where)
    if unknown and log_unknown:
        named = ", ".join(f"'{k}' ({n} example{'s' if n > 1 else ''})"
                          for k, n in sorted(unknown.items()))
        logger.info(f"{path}: unknown key(s) ignored: {named}")


def _example_id(obj: dict, lineno: int, where: str, ids: dict) -> Tuple[str, str]:
    """(the example's id as text, ``where`` naming it); an id seen before is an error naming
    both lines."""
    key = json_id(obj, where)
    if key is None:
        key = str(lineno)
    else:
        where = f"{where} (id {obj['id']!r})"
    first, explicit = ids.setdefault(key, (lineno, "id" in obj))
    if first != lineno:
        by_line = [n for n, has_id in ((first, explicit), (lineno, "id" in obj)) if not has_id]
        why = "".join(f" (line {n} has no 'id': its line number is its id)" for n in by_line)
        raise ReaderError(f"{where}: id {key!r} is also the id of line {first}{why} (expected "
                          f"a different id on every line)")
    return key, where


def _summaries(obj: dict, where: str) -> Optional[List[str]]:
    """The references of an example (a string, or a list of at least one), None if it has
    none."""
    value = obj.get("summary")
    if value is None:
        return None
    if isinstance(value, str):
        found = [value]
    elif isinstance(value, list):
        found = str_list(obj, "summary", where, "a list of summaries", "a string: a summary")
        if not found:
            raise ReaderError(f"{where}: 'summary' is an empty list (expected at least one "
                              f"summary)")
    else:
        raise ReaderError(f"{where}: 'summary' is a JSON {json_type(value)} (expected a "
                          f"string or a list of strings)")
    for k, text in enumerate(found):
        if not text.strip():
            item = f"'summary' item {k}" if isinstance(value, list) else "'summary'"
            raise ReaderError(f"{where}: {item} is empty (expected the text of a summary)")
    return found


def _missing_summary(where: str, path: str, lineno: int, rest, seen_summary: bool) -> None:
    """Raise the error of an example without a summary where summaries are required: for the
    whole file when no example of it has one (the ``rest`` of its lines are looked at)."""
    if not seen_summary and not any(_has_summary(line) for _, line in rest):
        raise ReaderError(f"{path}: no example has a 'summary' ({NO_SUMMARY_HINT})")
    raise ReaderError(f"{where}: 'summary' is missing (expected a string or a list of strings, "
                      f"as other examples of the file have)")


def _has_summary(line: str) -> bool:
    """Whether a line holds an example with a summary (a line that is not one: False)."""
    try:
        obj = json_line(line, "", EXPECTED) if line.strip() else None
    except ReaderError:
        return False
    return isinstance(obj, dict) and obj.get("summary") is not None


def has_several_summaries(path: str) -> bool:
    """Whether an example of the file has more than one summary: a first reading, before the
    outputs are opened, so that ``SPLIT.refs.jsonl`` is written only where it is needed (it
    also finds a malformed line before any output is written)."""
    return any(len(x.summaries) > 1
               for x in read_examples(path, collections.Counter(), log_unknown=False))


# ---------------------------------------------------------------------------------------------
# documents -> paragraphs (the hierarchical raw format) and sentences (sentence-BOS formats)
# ---------------------------------------------------------------------------------------------

def split_paragraphs(documents: Sequence[str], mode: str, stats: collections.Counter,
                     max_documents: int = 0) -> List[str]:
    """The paragraphs of an example's documents, each cleaned onto one line
    (:func:`~fairseq_hier.readers.mds.clean`: whitespace collapsed, a literal ``<P>``
    escaped, U+2581 replaced, counted).

    ``mode`` (:data:`PARAGRAPH_MODES`): ``documents``: each document is one paragraph (its line
    breaks become spaces); ``blocks``: each block of a document between blank lines is one;
    ``lines``: each non-empty line is one. Only ``\\n`` (and ``\\r\\n``) end a line.
    ``max_documents`` (0: all) keeps the first documents in file order, before empty ones are
    dropped (``documents_beyond_cap``, ``examples_cut_by_cap``). An empty document is dropped
    (``empty_documents``), as is an empty paragraph of a non-empty document
    (``empty_paragraphs``: blank lines, in ``lines`` mode, are not paragraphs and not counted).
    """
    if mode not in PARAGRAPH_MODES:
        raise ReaderError(f"paragraphs={mode!r} is not one of {', '.join(PARAGRAPH_MODES)}")
    if max_documents and len(documents) > max_documents:
        stats["documents_beyond_cap"] += len(documents) - max_documents
        stats["examples_cut_by_cap"] += 1
        documents = documents[:max_documents]
    paragraphs = []
    for document in documents:
        if not document.strip():
            stats["empty_documents"] += 1
            continue
        if mode == "documents":
            pieces = [document]
        elif mode == "blocks":
            pieces = _BLANK_LINE.split(document)
        else:
            pieces = [line for line in _LINE_END.split(document) if line.strip()]
        texts = [clean(piece, stats) for piece in pieces]
        empty = sum(1 for text in texts if not text)
        if empty:
            stats["empty_paragraphs"] += empty
        paragraphs.extend(text for text in texts if text)
    return paragraphs


def document_sentences(documents: Sequence[str],
                       stats: collections.Counter) -> Tuple[Optional[List[str]], Optional[str]]:
    """(``sentences``, ``text``) of an example's documents for the sentence-BOS encoder, each
    document as the ``source_target`` format reads a ``.source`` line
    (:func:`~fairseq_hier.readers.records.article_fields`: ``<t>`` sentences, else the text with
    whitespace collapsed, split by pysbd downstream). When every non-empty document holds
    ``<t>`` tags: their sentences and None; else None and the documents one per line (a tagged
    one as its sentences, one per line), so that no sentence spans two documents. Empty
    documents are dropped (``empty_documents``)."""
    pieces = []
    for document in documents:
        if not collapse(document):
            stats["empty_documents"] += 1
            continue
        pieces.append(article_fields(document, stats))
    if pieces and all(sentences is not None for sentences, _ in pieces):
        return [s for sentences, _ in pieces for s in sentences], None
    lines = [text if sentences is None else "\n".join(sentences) for sentences, text in pieces]
    return None, "\n".join(lines)


def read_sentence_records(path: str, *, stats: Optional[collections.Counter] = None,
                          skipped: Optional[List[str]] = None) -> Iterator[Record]:
    """The schema's examples as sentence-BOS reader records (``fairseq-hier-sentence-bos
    --format jsonl``): the documents as :func:`document_sentences` gives them, the first summary
    as the target (``<t>`` tags read as :func:`~fairseq_hier.readers.records.summary_fields`
    reads them), every summary so read in ``Record.summaries``. A title is not part of a
    sentence-BOS source (``titles_ignored``); an example left with no document is skipped
    (``skipped_empty_source``, its place listed in ``skipped``)."""
    stats = collections.Counter() if stats is None else stats
    for example in read_examples(path, stats):
        sentences, text = document_sentences(example.documents, stats)
        fields = [summary_fields(s, stats) for s in example.summaries]
        if example.title:
            stats["titles_ignored"] += 1
        if not (sentences or text):
            stats["skipped_empty_source"] += 1
            if skipped is not None:
                skipped.append(f"{example.where}: empty source")
            continue
        stats["records"] += 1
        yield Record(id=example.id, where=example.where, sentences=sentences, text=text,
                     speakers=None, summary=fields[0][0], summary_sentences=fields[0][1],
                     summaries=[summary for summary, _ in fields])
