"""Multi-News (raw, cleaned and preprocessed releases) and WCEP (``.jsonl``, ``.jsonl.gz``) as
their publishers ship them -> examples of our raw format (``<P> document 1 <P> document 2 ...``
and one summary per line), for ParsingSum (paper 003 Sec. 3.2) and any model of
``--task hierarchical_summarization``. The layouts and the policies (what is cleaned, dropped
and counted) are in docs/data-formats.md#multi-news-and-wcep.

Imports the standard library and the shared parts of this package (:mod:`.lines`,
:mod:`.records`, :mod:`.markup`).
"""

import collections
import logging
import os
import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.readers import lines
from fairseq_hier.readers.lines import ReaderError, check_object, json_lines, typed_field
from fairseq_hier.readers.markup import t_sentences
from fairseq_hier.readers.records import collapse

logger = logging.getLogger(__name__)

SEPARATOR = "<P>"
ESCAPED_SEPARATOR = "< P >"
WORD_MARKER = "\u2581"  # sentencepiece's "▁"
MULTI_NEWS_END = "|||||"
STORY_SEPARATOR = "story_separator_special_tag"
SUMMARY_DASH = "\u2013 "  # "– ", the start of every Multi-News summary
LOGGED_LINES = 10  # line numbers of skipped examples listed in the log, per split
DATASETS = ("multi_news", "multi_news_preprocessed", "wcep")
# our split names -> the publishers'
PUBLISHED_SPLIT = {"train": "train", "valid": "val", "test": "test"}
PREPROCESSED_SUFFIX = "tokenized.fixed.cleaned.final.truncated.txt"
_NEWLINE_CHAR = re.compile("NEWLINE_CHAR")
_NEWLINE_CHAR_ANY_CASE = re.compile("newline_char", re.IGNORECASE)


@dataclass
class Example:
    """One example: ``line`` (1-based, in the source file), its non-empty ``documents`` (clean
    text, one line each) and its ``summary``."""

    line: int
    documents: List[str]
    summary: str


def clean(text: str, stats: collections.Counter) -> str:
    """``text`` on one line, whitespace collapsed, with no ``<P>`` and no U+2581 left."""
    text = collapse(text)
    n = text.count(SEPARATOR)
    if n:
        stats["separators_escaped"] += n
        text = text.replace(SEPARATOR, ESCAPED_SEPARATOR)
    n = text.count(WORD_MARKER)
    if n:
        stats["word_markers_replaced"] += n
        text = text.replace(WORD_MARKER, "_")
    return text


def source_line(documents: Sequence[str]) -> str:
    """Our raw source line: the empty title slot, then the documents as paragraphs."""
    return f"{SEPARATOR} " + f" {SEPARATOR} ".join(documents)


# ---------------------------------------------------------------------------------------------
# line-level I/O
# ---------------------------------------------------------------------------------------------

def aligned_lines(src_path: str, tgt_path: str) -> Iterator[Tuple[int, str, str]]:
    """(line number, source line, target line) of two line-aligned files; once the shorter one
    ends, an error naming both files and their line counts."""

    def mismatch(n_src: int, n_tgt: int) -> ReaderError:
        shorter = tgt_path if n_tgt < n_src else src_path
        return ReaderError(f"{shorter}:{min(n_src, n_tgt) + 1}: line counts differ: {src_path} "
                           f"has {n_src} lines, {tgt_path} has {n_tgt} (one example per line "
                           f"on both sides)")

    return lines.aligned_lines(src_path, tgt_path, mismatch)


# ---------------------------------------------------------------------------------------------
# Multi-News
# ---------------------------------------------------------------------------------------------

def read_multi_news(src_path: str, tgt_path: str, *, stats: collections.Counter,
                    skipped: List[int], max_articles: Optional[int] = None) -> Iterator[Example]:
    """Examples of a raw Multi-News ``{split}.src`` / ``.tgt`` pair (or the cleaned re-release)."""
    for n, source, target in aligned_lines(src_path, tgt_path):
        pieces = [_count_sub(_NEWLINE_CHAR, p, stats) for p in source.split(MULTI_NEWS_END)]
        if not pieces[-1].strip():  # after the last article's terminator (or an empty line)
            pieces.pop()
        summary = _strip_dash(_count_sub(_NEWLINE_CHAR, target, stats), stats)
        example = _example(n, pieces, summary, stats, skipped, max_articles)
        if example is not None:
            yield example


def read_multi_news_preprocessed(src_path: str, tgt_path: str, *, stats: collections.Counter,
                                 skipped: List[int],
                                 max_articles: Optional[int] = None) -> Iterator[Example]:
    """Examples of the preprocessed Multi-News ``{split}.txt.src.tokenized...truncated.txt`` /
    ``.tgt...`` pair (documents separated by ``story_separator_special_tag``)."""
    for n, source, target in aligned_lines(src_path, tgt_path):
        pieces = [_count_sub(_NEWLINE_CHAR_ANY_CASE, p, stats)
                  for p in source.split(STORY_SEPARATOR)]
        summary = _strip_dash(_count_sub(_NEWLINE_CHAR_ANY_CASE, target, stats), stats)
        example = _example(n, pieces, summary, stats, skipped, max_articles)
        if example is not None:
            yield example


def _count_sub(pattern: re.Pattern, text: str, stats: collections.Counter) -> str:
    """``text`` with every ``NEWLINE_CHAR`` replaced by a space (counted)."""
    text, n = pattern.subn(" ", text)
    if n:
        stats["newline_chars"] += n
    return text


def _strip_dash(summary: str, stats: collections.Counter) -> str:
    """The summary without its leading "– "; a summary without one is counted."""
    summary = collapse(summary)
    if summary.startswith(SUMMARY_DASH) or summary == SUMMARY_DASH.strip():
        return summary[len(SUMMARY_DASH):]
    stats["summaries_without_dash"] += 1
    return summary


# ---------------------------------------------------------------------------------------------
# WCEP
# ---------------------------------------------------------------------------------------------

def read_wcep(path: str, *, stats: collections.Counter, skipped: List[int],
              max_articles: Optional[int] = None, with_titles: bool = False) -> Iterator[Example]:
    """Examples of a WCEP ``{split}.jsonl(.gz)``: one cluster per line."""
    for n, cluster in json_lines(path, ("summary", "articles"), stats,
                                  "one cluster, a JSON object, per line", "the cluster"):
        where = f"{path}:{n}"
        summary = typed_field(cluster, "summary", str, where, "a string", "the cluster")
        articles = typed_field(cluster, "articles", list, where, "a list of articles",
                               "the cluster")
        documents = [_article_text(a, j, where, with_titles) for j, a in enumerate(articles)]
        example = _example(n, documents, summary, stats, skipped, max_articles)
        if example is not None:
            yield example


def _article_text(article, j: int, where: str, with_titles: bool) -> str:
    """The text of article ``j`` (0-based), ``title text`` with titles; '' if its text is empty."""
    what = f"article {j}"
    check_object(article, ("title", "text") if with_titles else ("text",), where,
                  "a JSON object", what)
    text = _nullable_text(article, "text", where, what)
    if with_titles and collapse(text):
        text = f"{_nullable_text(article, 'title', where, what)} {text}"
    return text


def _nullable_text(obj: dict, key: str, where: str, what: str) -> str:
    """``obj[key]``, a string, or '' for a JSON null."""
    if obj[key] is None:
        return ""
    return typed_field(obj, key, str, where, "a string or null", what)


# ---------------------------------------------------------------------------------------------
# shared
# ---------------------------------------------------------------------------------------------

def _untag(text: str, stats: collections.Counter, key: str) -> str:
    """``text`` without its ``<t>``/``</t>`` sentence tags (its sentences joined with " ",
    counted in ``key``), else ``text``. For a summary, a sentence before the last that does not
    end in ``.`` is counted in ``t_summary_boundaries_unmarked`` (``rouge -e .`` on the
    tokenised target cannot see its end)."""
    sentences = t_sentences(text)
    if sentences is None:
        return text
    stats[key] += 1
    if key == "t_tagged_summaries":
        unmarked = sum(1 for s in sentences[:-1] if not s.endswith("."))
        if unmarked:
            stats["t_summary_boundaries_unmarked"] += unmarked
    return " ".join(sentences)


def _example(line: int, pieces: List[str], summary: str, stats: collections.Counter,
             skipped: List[int], max_articles: Optional[int]) -> Optional[Example]:
    """The example of ``line`` from its documents as published (the cap first, then empty ones
    dropped), or None if it is skipped (counted, its line kept in ``skipped``)."""
    if max_articles is not None and len(pieces) > max_articles:
        stats["documents_beyond_cap"] += len(pieces) - max_articles
        stats["examples_cut_by_cap"] += 1
        pieces = pieces[:max_articles]
    documents = [_untag(clean(p, stats), stats, "t_tagged_documents") for p in pieces]
    kept = [d for d in documents if d]
    if len(kept) < len(documents):
        stats["empty_documents"] += len(documents) - len(kept)
    summary = _untag(clean(summary, stats), stats, "t_tagged_summaries")
    why = "no_document" if not kept else "empty_summary" if not summary else None
    if why is not None:
        stats[f"skipped_{why}"] += 1
        skipped.append(line)
        return None
    stats["examples"] += 1
    stats["documents"] += len(kept)
    return Example(line, kept, summary)


def input_paths(dataset: str, input_dir: str, split: str) -> Tuple[str, ...]:
    """The published files of our ``split`` (train, valid, test): (source, target) for Multi-News,
    (jsonl,) for WCEP (``.jsonl`` first, else ``.jsonl.gz``). Error if they are missing."""
    name = PUBLISHED_SPLIT[split]
    if dataset == "multi_news":
        source = _first_file(input_dir, [f"{name}.src", f"{name}.src.cleaned"],
                             f"Multi-News's {split} sources")
        targets = [f"{name}.tgt"]
    elif dataset == "multi_news_preprocessed":
        source = _first_file(input_dir, [f"{name}.txt.src.{PREPROCESSED_SUFFIX}"],
                             f"preprocessed Multi-News's {split} sources")
        targets = [f"{name}.txt.tgt.{PREPROCESSED_SUFFIX}"]
    elif dataset == "wcep":
        return (_first_file(input_dir, [f"{name}.jsonl", f"{name}.jsonl.gz"],
                            f"WCEP's {split} split"),)
    else:
        raise HierError(f"unknown dataset {dataset!r} (expected one of {', '.join(DATASETS)})")
    return source, _first_file(input_dir, targets, f"{dataset}'s {split} targets")


def _first_file(folder: str, names: List[str], what: str) -> str:
    """The first of ``folder/names`` that exists (logged if another one does too)."""
    paths = [os.path.join(folder, n) for n in names]
    found = [p for p in paths if os.path.isfile(p)]
    if not found:
        raise ReaderError(f"{' or '.join(paths)} not found ({what})")
    if len(found) > 1:
        logger.info(f"reading {found[0]}, not {', '.join(found[1:])}")
    return found[0]


def read_split(dataset: str, input_dir: str, split: str, *, stats: collections.Counter,
               skipped: List[int], max_articles: Optional[int] = None,
               with_titles: bool = False) -> Iterator[Example]:
    """The examples of one split of ``dataset`` (our split names: train, valid, test)."""
    paths = input_paths(dataset, input_dir, split)
    options = dict(stats=stats, skipped=skipped, max_articles=max_articles)
    if dataset == "wcep":
        return read_wcep(*paths, with_titles=with_titles, **options)
    if with_titles:
        raise HierError(f"--with-titles applies to wcep only ({dataset} has no article titles)")
    reader = read_multi_news if dataset == "multi_news" else read_multi_news_preprocessed
    return reader(*paths, **options)


def format_counts(stats: Dict[str, int]) -> str:
    """The counters on one line: examples and documents first, then the others by name."""
    first = ("examples", "documents")
    keys = list(first) + sorted(k for k in stats if k not in first)
    return " ".join(f"{k}={stats.get(k, 0)}" for k in keys)


def describe_skipped(skipped: Sequence[int]) -> str:
    """``"lines 3, 9, ..."`` for the log: the first :data:`LOGGED_LINES` of them."""
    listed = ", ".join(map(str, skipped[:LOGGED_LINES]))
    more = f" (first {LOGGED_LINES} of {len(skipped)})" if len(skipped) > LOGGED_LINES else ""
    return f"line{'s' if len(skipped) > 1 else ''} {listed}{more}"
