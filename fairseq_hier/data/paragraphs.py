"""The paragraphs of a source line ``title <P> paragraph_1 <P> paragraph_2 ...``: the title joins
paragraph 0, empty paragraphs are dropped, each example keeps its first ``max_paragraphs``
paragraphs of ``max_paragraph_tokens`` tokens, and a line without paragraph is an error (the
rules: docs/data-formats.md#our-raw-format).

:func:`segment` applies them to binarized lines, vectorised over many examples (the dataset, once
over the split and again per example); raw text lines are split once, by :func:`separated`, then
read by :func:`text_paragraphs` (the same rules, no cuts: paragraph graphs, LexRank) or by
:func:`split_source` (the title kept apart: the paragraph ranker, its labels, 002 Table 1).

May import: numpy. Legend: N examples, M total tokens of the chunk (EOS included).
"""

from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import numpy as np

# error kinds, in the order they are reported
NO_TOKENS = "the line holds only paragraph separators (or nothing)"
NO_PARAGRAPH = "no paragraph: the line has a title but no paragraph separator"
ALL_EMPTY = "every paragraph is empty (only separators after the title)"
NO_EOS = "the binarized line does not end with EOS"


@dataclass
class Segmentation:
    """Result of :func:`segment` for N examples with M tokens in total.

    Per token (M): ``keep`` (token kept in the hierarchical layout), ``paragraph`` (rank of its
    paragraph within its example, after dropping empty ones) and ``position`` (index inside that
    paragraph). Per example (N): counts used for sizes and logging, and ``error`` ('' if valid).
    """

    keep: np.ndarray
    paragraph: np.ndarray
    position: np.ndarray
    num_paragraphs: np.ndarray  # kept paragraphs
    max_paragraph_len: np.ndarray  # longest kept paragraph, after the cut
    kept_tokens: np.ndarray
    empty_paragraphs: np.ndarray
    cut_paragraphs: np.ndarray
    cut_tokens: np.ndarray  # tokens in cut paragraphs + tokens beyond max_paragraph_tokens
    error: List[str] = field(default_factory=list)


@dataclass
class LineTokens:
    """:func:`split_lines` of N binarized lines with M tokens in total."""

    n: int
    starts: np.ndarray  # N: offset of each line's first token
    example: np.ndarray  # M: line of each token
    nonempty: np.ndarray  # N: the line has at least one token
    has_eos: np.ndarray  # N: the line ends with EOS
    is_sep: np.ndarray  # M: a paragraph separator
    is_text: np.ndarray  # M: neither separator nor the closing EOS
    segment_id: np.ndarray  # M: separators before it in its line (0 = title)
    num_seps: np.ndarray  # N


def split_lines(tokens: np.ndarray, lengths: np.ndarray, sep: int, eos: int) -> LineTokens:
    """The part of reading a binarized line that every reader of our raw format shares (the
    summarisation dataset, :func:`segment`, and the ranker's): which tokens are separators, text
    or the EOS that closes a line, and which segment (title, paragraph k) each token is in."""
    tokens = np.asarray(tokens, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n, m = len(lengths), len(tokens)
    starts = np.cumsum(lengths) - lengths  # N
    example = np.repeat(np.arange(n), lengths)  # M: example id of each token

    # EOS closes each line; it is not part of any paragraph
    last = starts + lengths - 1
    has_eos = np.zeros(n, dtype=bool)
    nonempty = lengths > 0
    has_eos[nonempty] = tokens[last[nonempty]] == eos
    is_eos = np.zeros(m, dtype=bool)
    is_eos[last[has_eos]] = True

    is_sep = tokens == sep
    is_text = ~is_sep & ~is_eos
    # segment id: 0 = title, k = k-th paragraph (number of separators before, per example)
    sep_cum = np.cumsum(is_sep)
    sep_before_line = np.zeros(n, dtype=np.int64)
    sep_before_line[nonempty] = (sep_cum - is_sep)[starts[nonempty]]
    return LineTokens(n=n, starts=starts, example=example, nonempty=nonempty, has_eos=has_eos,
                      is_sep=is_sep, is_text=is_text,
                      segment_id=sep_cum - sep_before_line[example],  # M
                      num_seps=np.bincount(example[is_sep], minlength=n))


def segment(
    tokens: np.ndarray,
    lengths: np.ndarray,
    sep: int,
    eos: int,
    max_paragraphs: int,
    max_paragraph_tokens: int,
) -> Segmentation:
    """Segment N concatenated binarized source lines (``tokens``: M, ``lengths``: N)."""
    lines = split_lines(tokens, lengths, sep, eos)
    n, example, is_text = lines.n, lines.example, lines.is_text
    has_eos, segment_id, num_seps = lines.has_eos, lines.segment_id, lines.num_seps
    # the title (segment 0) is concatenated before the first paragraph: slot = paragraph slot
    slot = np.maximum(segment_id - 1, 0)

    # one row per (example, slot); example i owns num_seps[i] + 1 rows (the last is spare)
    slot_base = np.cumsum(num_seps + 1) - (num_seps + 1)  # N
    slot_key = slot_base[example] + slot  # M
    num_slots = int((num_seps + 1).sum())
    slot_tokens = np.bincount(slot_key[is_text], minlength=num_slots)
    slot_example = np.repeat(np.arange(n), num_seps + 1)
    slot_index = np.arange(num_slots) - slot_base[slot_example]
    real_slot = slot_index < np.maximum(num_seps, 1)[slot_example]
    slot_nonempty = (slot_tokens > 0) & real_slot
    # rank of each non-empty slot inside its example (empty paragraphs are dropped)
    before = np.cumsum(slot_nonempty) - slot_nonempty
    rank_of_slot = before - before[slot_base][slot_example]
    paragraphs_total = np.bincount(slot_example[slot_nonempty], minlength=n)
    paragraph_slots = np.bincount(slot_example[real_slot], minlength=n)

    paragraph = rank_of_slot[slot_key]  # M
    # position = number of text tokens before it in its slot (separators do not count)
    text_before = np.cumsum(is_text) - is_text
    position = text_before - _first_value_of(slot_key, text_before, is_text, num_slots)[slot_key]
    keep = is_text & (paragraph < max_paragraphs) & (position < max_paragraph_tokens)

    num_paragraphs = np.minimum(paragraphs_total, max_paragraphs)
    kept_len = np.bincount(slot_key[keep], minlength=num_slots)
    max_paragraph_len = np.zeros(n, dtype=np.int64)
    np.maximum.at(max_paragraph_len, slot_example, kept_len)
    kept_tokens = np.bincount(example[keep], minlength=n)
    text_tokens = np.bincount(example[is_text], minlength=n)

    errors = [""] * n
    for i in np.flatnonzero(~has_eos):
        errors[i] = NO_EOS
    for i in np.flatnonzero(has_eos & (text_tokens == 0)):
        errors[i] = NO_TOKENS
    for i in np.flatnonzero((text_tokens > 0) & (num_seps == 0)):
        errors[i] = errors[i] or NO_PARAGRAPH
    # all paragraphs empty: nothing after the title
    title_tokens = np.bincount(example[is_text & (segment_id == 0)], minlength=n)
    first_tokens = np.bincount(example[is_text & (segment_id == 1)], minlength=n)
    all_empty = (text_tokens > 0) & (num_seps > 0) & (text_tokens == title_tokens)
    # an empty first paragraph after a title leaves the title's slot non-empty: dropped too
    empty_first = (title_tokens > 0) & (first_tokens == 0) & (num_seps > 0)
    for i in np.flatnonzero(all_empty):
        errors[i] = errors[i] or ALL_EMPTY

    return Segmentation(
        keep=keep,
        paragraph=paragraph,
        position=position,
        num_paragraphs=num_paragraphs,
        max_paragraph_len=max_paragraph_len,
        kept_tokens=kept_tokens,
        empty_paragraphs=paragraph_slots - paragraphs_total + empty_first,
        cut_paragraphs=paragraphs_total - num_paragraphs,
        cut_tokens=text_tokens - kept_tokens,
        error=errors,
    )


def separated(line: str, separator: str) -> List[List[str]]:
    """The whitespace tokens of ``line`` as segments between separators (``n`` separators give
    ``n + 1`` segments, empty ones included)."""
    out: List[List[str]] = [[]]
    for token in line.split():
        if token == separator:
            out.append([])
        else:
            out[-1].append(token)
    return out


def text_paragraphs(line: str, separator: str = "<P>") -> List[List[str]]:
    """The token lists of the paragraphs of one raw line by the rules of :func:`segment` without
    its cuts: the title's tokens open paragraph 0, empty paragraphs are dropped. Returns ``[]``
    for a line that :func:`segment` rejects (nothing but separators, no separator, or every
    paragraph empty)."""
    segments = separated(line, separator)
    if len(segments) == 1:  # title only: no paragraph
        return []
    title, first, rest = segments[0], segments[1], segments[2:]
    if not first and not any(rest):  # every paragraph empty (the title alone is no paragraph)
        return []
    return [p for p in [title + first, *rest] if p]


def split_source(line: str, separator: str = "<P>",
                 lowercase: bool = False) -> Tuple[List[str], List[List[str]], int]:
    """The ranker's split of a raw line ``title <P> p1 <P> p2 ...``: ``(title, paragraphs,
    empty)``, the tokens before the first separator (possibly none), the non-empty segments after
    it in line order, and how many empty segments (two separators in a row, a trailing
    separator) were dropped. A line without separator is all title and has no paragraph.
    ``lowercase`` lowercases the tokens (the separator is matched before lowercasing)."""
    segments = separated(line, separator)
    if lowercase:
        segments = [[t.lower() for t in segment] for segment in segments]
    title, rest = segments[0], segments[1:]
    paragraphs = [segment for segment in rest if segment]
    return title, paragraphs, len(rest) - len(paragraphs)


def _first_value_of(key: np.ndarray, value: np.ndarray, valid: np.ndarray, size: int) -> np.ndarray:
    """For each key, the smallest ``value`` among the valid entries with that key."""
    first = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, key[valid], value[valid])
    return first


def summarize_errors(errors: List[str], path: str, limit: int = 10, first_line: int = 1) -> str:
    """Format per-example errors as one message naming the file and line numbers (example 0 is
    line ``first_line``)."""
    by_kind: Dict[str, List[int]] = {}
    for i, e in enumerate(errors):
        if e:
            by_kind.setdefault(e, []).append(i + first_line)
    parts = []
    for kind, lines in by_kind.items():
        shown = ", ".join(str(x) for x in lines[:limit])
        more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
        parts.append(f"  {len(lines)} example(s): {kind}; line(s) {shown}{more}")
    return f"invalid source examples in {path}:\n" + "\n".join(parts)
