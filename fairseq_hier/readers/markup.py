"""Markup in summary text, one definition for the readers (which drop or count it) and for
``rouge`` (which names it before scoring): ``<t> ... </t>`` sentence tags, the ``<q>`` separator
of a reference's sentences on one line, and any other tag-like token that would reach a ROUGE
reference (ROUGE-1.5.5 reads a sentence only up to its first ``<``). The rules are in
docs/data-formats.md, section "Markup in summaries". Standard library only.
"""

import re
from collections import Counter
from typing import Iterable, List, Optional

T_OPEN, T_CLOSE = "<t>", "</t>"
_T_TAG = re.compile(r"</?t>")
#: the separator of a reference's sentences on its one line (PreSumm's ``<q>``)
SENTENCE_SEPARATOR = "<q>"
MARKUP = re.compile(r"<[^<>\s]{1,40}>")


def has_t_tags(text: str) -> bool:
    """Whether ``text`` holds a ``<t>`` or ``</t>`` tag."""
    return T_OPEN in text or T_CLOSE in text


def t_sentences(text: str) -> Optional[List[str]]:
    """The sentences of a ``<t>``-tagged text, tags dropped and whitespace collapsed; None when
    ``text`` holds no ``<t>``/``</t>`` tag. Every tag is a sentence boundary, so text outside
    any ``<t> ... </t>`` span (or after an unmatched tag) is a sentence of its own; empty pieces
    are left out: ``"<t> a b . </t> <t> c . </t>"`` -> ``["a b .", "c ."]``."""
    if not has_t_tags(text):
        return None
    pieces = (" ".join(p.split()) for p in _T_TAG.split(text))
    return [p for p in pieces if p]


def join_sentences(sentences: Iterable[str]) -> str:
    """A reference's sentences on one line, separated by `` <q> ``: ``["a b .", "c"]`` ->
    ``"a b . <q> c"`` (one sentence: itself)."""
    return f" {SENTENCE_SEPARATOR} ".join(sentences)


def separated_sentences(text: str) -> Optional[List[str]]:
    """The sentences of a line holding the ``<q>`` separator, whitespace collapsed, empty pieces
    left out (PreSumm's split on ``<q>``, spaces around it or not); None when it holds none."""
    if SENTENCE_SEPARATOR not in text:
        return None
    pieces = (" ".join(p.split()) for p in text.split(SENTENCE_SEPARATOR))
    return [p for p in pieces if p]


def markup_counts(texts: Iterable[str]) -> Counter:
    """How often each tag-like token (:data:`MARKUP`) occurs in ``texts``; the sentence separator
    ``<q>`` is not counted (``rouge`` splits there: no sentence is cut by it)."""
    counts: Counter = Counter()
    for text in texts:
        if "<" in text:
            counts.update(MARKUP.findall(text))
    counts.pop(SENTENCE_SEPARATOR, None)
    return counts


def describe_markup(counts: Counter, limit: int = 5) -> str:
    """``"12 x <unk>, 3 x <file_gif>"``: the ``limit`` most frequent, then ``"and N more
    kinds"``."""
    items = [f"{n} x {tag}" for tag, n in counts.most_common(limit)]
    if len(counts) > limit:
        items.append(f"and {len(counts) - limit} more kinds")
    return ", ".join(items)
