"""What the HAT layout readers share: the :class:`Record` they yield, whitespace collapsing,
``<t>`` sentence tags, pysbd's splitting of over-long tagged spans, and the counting helpers.

The policies (what is skipped, collapsed, split and counted) are in docs/data-formats.md,
section "Published summarization layouts". Imports the standard library and :mod:`.markup`;
pysbd inside :func:`pysbd_segmenter`.
"""

import collections
import functools
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from fairseq_hier.readers.markup import join_sentences, t_sentences

#: the default of ``max_span_words`` (``fairseq-hier-sentence-bos --max-span-words``): a source
#: sentence given by ``<t>`` tags with more whitespace words than this is a text, not a sentence,
#: and pysbd splits it (:func:`split_long_spans`); 0 splits none
MAX_SPAN_WORDS = 150


@dataclass
class Record:
    """One example of a published dataset, in the reader's common form.

    ``id``: the dataset's own id (arXiv/PubMed ``article_id``, SAMSum ``id``), else
    ``"<basename>:<line>"`` (PreSumm: ``"<basename>:item N"``). ``where``: ``"path:line"``
    (1-based) or, for a JSON list, ``"path:item N"`` (SAMSum: ``"path:item N (id '...')"``), for
    messages. ``sentences``: the dataset's own segmentation (article sentences, ``<t>``-tagged
    sentences; dialogue/meeting turns as ``"Speaker: utterance"``), None for unsegmented
    sources, whose text is ``text`` (else None). ``speakers``: the speaker of each turn
    (dialogues and meetings only, ``len(speakers) == len(sentences)``), else None.
    ``summary``: the reference on one line; ``summary_sentences``: its sentences where the
    dataset marks them (``<S>`` spans, PreSumm's ``tgt``, ``<t>`` tags), else ``[summary]``.
    ``summaries``: every reference of the example, each on one line as ``summary`` is, where
    the layout has several (the JSON-lines schema of :mod:`fairseq_hier.readers.own_data`), else
    None (``summary`` is the one reference). ``reference``: the line ROUGE scores, the
    ``summary_sentences`` separated by `` <q> `` (:func:`~fairseq_hier.readers.markup.
    join_sentences`), so that the dataset's sentences reach summary-level ROUGE-L; ``summary``,
    the sentences joined with " ", is what the model learns.
    """

    id: str
    where: str
    sentences: Optional[List[str]]
    text: Optional[str]
    speakers: Optional[List[str]]
    summary: str
    summary_sentences: List[str]
    summaries: Optional[List[str]] = None

    @property
    def reference(self) -> str:
        return join_sentences(self.summary_sentences) if self.summary_sentences else self.summary


def format_stats(stats: Dict[str, int]) -> str:
    """The counters on one line for logs: ``records=N`` first, then the others by name."""
    keys = sorted(stats, key=lambda k: (k != "records", k))
    return " ".join(f"{k}={stats[k]}" for k in keys) if keys else "records=0"


def collapse(text: str, stats: Optional[collections.Counter] = None) -> str:
    """``text`` with every whitespace run (newlines and Unicode separators included) turned
    into one space and no leading/trailing space. ``stats``: the characters this changes are
    added to ``whitespace_chars_collapsed`` (a run inside the text counts its length unless it
    is one plain space; a leading or trailing run counts its length)."""
    out = " ".join(text.split())
    if stats is not None and out != text:
        kept = sum(run == " " for run in _WHITESPACE_RUN.findall(text.strip()))
        add_count(stats, "whitespace_chars_collapsed",
                  sum(map(len, _WHITESPACE_RUN.findall(text))) - kept)
    return out


_WHITESPACE_RUN = re.compile(r"\s+")


# ---------------------------------------------------------------------------------------------
# <t> ... </t> sentence tags (every reader)
# ---------------------------------------------------------------------------------------------

def split_t_tagged(sentences: Iterable[str], max_words: int = 0,
                   stats: Optional[collections.Counter] = None) -> Tuple[List[str], bool]:
    """(sentences, whether any held a tag): every sentence holding ``<t>``/``</t>`` replaced by
    the sentences its tags delimit (:func:`~fairseq_hier.readers.markup.t_sentences`: tags
    dropped, empty pieces left out), the others kept as they are. ``max_words`` > 0 (sources):
    a tagged sentence longer than that is split by pysbd (:func:`split_long_spans`, counted in
    ``stats``, then required)."""
    out, tagged = [], False
    for sentence in sentences:
        pieces = t_sentences(sentence)
        if pieces is None:
            out.append(sentence)
        else:
            tagged = True
            out.extend(split_long_spans(pieces, max_words, stats))
    return out, tagged


def split_long_spans(sentences: List[str], max_words: int,
                     stats: collections.Counter) -> List[str]:
    """``sentences`` with each one of more than ``max_words`` whitespace words (a whole text
    wrapped as one ``<t>`` span, a one-line article) replaced by pysbd's sentences of it; 0
    splits none. Counted in ``stats``: ``long_spans_split`` and the ``long_span_sentences``
    they became; ``long_spans_kept_whole`` when pysbd finds no boundary in one."""
    if not max_words or all(len(s.split()) <= max_words for s in sentences):
        return sentences
    out = []
    for sentence in sentences:
        pieces = pysbd_sentences(sentence) if len(sentence.split()) > max_words else None
        if pieces is None or len(pieces) < 2:
            add_count(stats, "long_spans_kept_whole", int(pieces is not None))
            out.append(sentence)
            continue
        stats["long_spans_split"] += 1
        stats["long_span_sentences"] += len(pieces)
        out.extend(pieces)
    return out


@functools.lru_cache(maxsize=1)
def pysbd_segmenter():
    """pysbd's English segmenter, ``clean=False`` (the text kept as it is): the one sentence
    splitter of the readers, sentence-BOS and the PTB tokenizer; built once per process."""
    import pysbd  # lazy: only a long span needs it (this module imports the standard library)

    return pysbd.Segmenter(language="en", clean=False)


def pysbd_sentences(text: str) -> List[str]:
    """pysbd's English sentences of one line (``clean=False``: the text is kept as it is),
    whitespace collapsed, empty ones left out."""
    return [collapse(s) for s in pysbd_segmenter().segment(text) if s.strip()]


def article_fields(text: str, stats: collections.Counter, max_words: int = MAX_SPAN_WORDS
                   ) -> Tuple[Optional[List[str]], Optional[str]]:
    """(``sentences``, ``text``) of an unsegmented source: its ``<t>`` sentences and None when
    it holds ``<t>`` tags (counted in ``t_tagged_sources``; a tagged sentence longer than
    ``max_words`` is split by pysbd, :func:`split_long_spans`), else None and the text,
    whitespace collapsed (a sentence splitter segments it downstream)."""
    sentences = t_sentences(text)
    if sentences is None:
        return None, collapse(text, stats)
    stats["t_tagged_sources"] += 1
    return split_long_spans(sentences, max_words, stats), None


def summary_fields(text: str, stats: collections.Counter) -> Tuple[str, List[str]]:
    """(``summary``, ``summary_sentences``) of a one-string summary: its ``<t>`` sentences,
    joined with " " (counted in ``t_tagged_summaries``), else the text, whitespace collapsed, as
    its one sentence."""
    sentences = t_sentences(text)
    if sentences is None:
        summary = collapse(text, stats)
        return summary, [summary]
    stats["t_tagged_summaries"] += 1
    return " ".join(sentences), sentences


def drop_t_tags(text: str) -> Tuple[str, bool]:
    """(``text`` without its ``<t>``/``</t>`` tags, whitespace collapsed; whether it held any):
    for a unit that stays one piece whatever its tags say (a dialogue turn)."""
    sentences = t_sentences(text)
    return (collapse(text), False) if sentences is None else (" ".join(sentences), True)


# ---------------------------------------------------------------------------------------------
# shared checks and counts
# ---------------------------------------------------------------------------------------------

def skip_empty(where: str, source, summary: str, stats: collections.Counter,
               skipped: Optional[List[str]]) -> bool:
    """Count (and list) a record with an empty source or summary; True if it is skipped."""
    why = ("empty source" if not source else "empty summary" if not summary else None)
    if why is None:
        return False
    stats[f"skipped_{why.replace(' ', '_')}"] += 1
    if skipped is not None:
        skipped.append(f"{where}: {why}")
    return True


def count_tagged(result: Tuple[List[str], bool], stats: collections.Counter,
                 key: str) -> List[str]:
    """The sentences of :func:`split_t_tagged`'s ``result``, counting one ``key`` if any held a
    tag."""
    sentences, tagged = result
    add_count(stats, key, int(tagged))
    return sentences


def add_count(stats: collections.Counter, key: str, n: int) -> None:
    """``stats[key] += n``, creating no zero entry (so the counters logged are the events)."""
    if n:
        stats[key] += n


def turn_text(speaker: str, utterance: str) -> str:
    """``"Speaker: utterance"``; the utterance alone for an unknown (empty) speaker (a dialogue
    or meeting turn)."""
    if not speaker:
        return utterance
    return f"{speaker}: {utterance}" if utterance else f"{speaker}:"
