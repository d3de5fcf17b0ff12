"""Readers of the published summarization layouts used by the HAT recipes (004 Sec. 4.1).

One generator per layout, each yielding :class:`Record`\\ s in file order. Standard library
only: importing this module imports neither torch, numpy nor fairseq, so the recipes' conversion
commands start in well under a second.

Layouts, exactly as their publishers ship them (see ``shared/formats/README.md`` beside this repository):

- :func:`read_cohan` -- arXiv and PubMed (Cohan et al. 2018), ``{train,val,test}.txt``: one JSON
  object per line with ``article_id`` (str), ``article_text`` (list of sentences, lowercased and
  tokenised), ``abstract_text`` (list of strings, each wrapped as ``<S> ... </S>``; one string may
  hold several ``<S> ... </S>`` spans), ``labels``, ``section_names`` and ``sections`` (not read).
  ``sentences`` = the ``article_text`` sentences; ``summary_sentences`` = every ``<S> ... </S>``
  span; ``summary`` = those spans joined with " " (markers removed). Text of an
  ``abstract_text`` string outside any ``<S> ... </S>`` span (or around an unmatched marker) is
  kept as a sentence of its own and counted (``abstract_text_outside_markers``).
- :func:`read_source_target` -- CNN/DailyMail and XSum as fairseq's BART recipe has them:
  ``{prefix}.source`` (one untokenised article per line) and ``{prefix}.target`` (its summary on
  the same line number). ``text`` = the article, ``sentences`` = None (no segmentation is
  published), ``summary_sentences`` = ``[summary]``; a line with ``<t>`` tags gives sentences
  instead (see the policies).
- :func:`read_presumm` -- CNN/DailyMail as PreSumm's json shards, ``--input PREFIX`` (e.g.
  ``DIR/cnndm.train``) reading ``PREFIX.0.json``, ``PREFIX.1.json``, ... in numeric order (``.10``
  after ``.9``; a gap or no shard is an error), or one shard file named as itself. Each shard is
  one JSON list of ``{"src": [[token, ...], ...], "tgt": [[token, ...], ...]}``, one inner list
  per sentence of lowercased PTB tokens; other keys are not read. There are no ids: ``id`` is
  ``"<shard basename>:item N"``. ``sentences`` = the ``src`` sentences, tokens joined with " "
  (the dataset's own segmentation: no sentence splitter runs); ``summary_sentences`` = the
  ``tgt`` sentences; ``summary`` = those joined with " ". Tokens are kept exactly as published,
  PTB escapes included (``-lrb-``, ``-rrb-``, ```` `` ````, ``''``): they are the text of
  PreSumm's published references, which CNN/DM scores on this layout are computed against.
  PreSumm names its validation split ``valid``.
- :func:`read_samsum` -- SAMSum, ``{train,val,test}.json``: one JSON list of
  ``{"id": str, "summary": str, "dialogue": str}``; the dialogue is ``Speaker: utterance`` lines
  separated by ``\\n`` or ``\\r\\n``. A line is split at its first ":" into speaker and utterance;
  ``sentences`` = ``"Speaker: utterance"`` per turn (role string + utterance, 004 Sec. 4.1),
  ``speakers`` = the speaker of each turn. Placeholders such as ``<file_gif>`` stay as they are.
- :func:`read_qmsum` -- AMI as in QMSum, ``*.jsonl``: one meeting per line with
  ``meeting_transcripts`` (list of ``{"speaker": str, "content": str}``), ``topic_list``,
  ``general_query_list`` and ``specific_query_list`` (items with ``query``/``answer``).
  ``sentences`` = ``"speaker: content"`` per turn, ``speakers`` = the speaker of each turn,
  ``summary`` = the answer of the general query asking to "summarize the whole meeting".

Policies (nothing is dropped silently; every reader takes ``stats``, a
:class:`collections.Counter` it adds to, and ``skipped``, a list it appends ``"where: why"`` to):

- Malformed records raise :class:`ReaderError`, a ValueError with one line
  ``"path:line: what is wrong (expected ...)"``: invalid JSON, a non-UTF-8 line, a missing key,
  a value of the wrong type (an id, sentence or summary that is not a string ...), a meeting
  without any general query. Records read before the bad one have already been yielded: callers
  write their outputs to a temporary name and rename them once the reader is exhausted.
- Well-formed records with an empty source (no non-empty sentence, empty text, no turn) or an
  empty summary are skipped and counted (``skipped_empty_source``, ``skipped_empty_summary``):
  the published arXiv, PubMed and SAMSum releases contain a few. ``records`` counts the yielded
  records.
- Whitespace inside a sentence, speaker or summary (newlines included) is collapsed to single
  spaces, so every sentence and summary fits on one line; the characters this changes in
  articles and summaries are counted (``whitespace_chars_collapsed``; a dialogue's line breaks
  are its turns' structure, not counted). Empty sentences inside
  ``article_text`` or PreSumm's ``src`` are dropped (``empty_sentences_dropped``), as are empty
  ``<S> </S>`` spans and empty ``tgt`` sentences (``empty_summary_sentences_dropped``). Blank
  lines between JSON lines are skipped (``blank_lines_skipped``). PreSumm shards read are
  counted in ``shards``.
- Dialogues (SAMSum): empty lines are skipped; a line without a colon continues the previous
  turn, appended with a space (``continuation_lines``); if the dialogue's first non-empty line has
  no colon (or a line starts with ":"), its turn gets the speaker "" (``unknown_speaker``) and its
  sentence is the utterance alone (no leading ": "). A turn with nothing after its colon is kept
  (``empty_utterances``): continuation lines may follow it.
  The split is at the first ":" whatever follows, as the layout prescribes: a continuation line
  that holds a colon itself ("see you at 10:30") starts a turn of speaker "see you at 10".
- Meetings (QMSum): the target is the answer of the first general query whose text contains
  "summarize the whole meeting" (case-insensitive; a second such query is counted in
  ``several_whole_meeting_queries``); without one, the first general query's answer
  (``summary_from_first_general_query``: it may be another kind of query). ``filler_words``
  (e.g. :data:`AMI_FILLERS`, the small lexicon of 004 Sec. 4.1 "that filters out meaningless
  words") removes every filler token of a content together with the punctuation it leaves alone
  (:func:`filter_fillers` gives the rule: ``"Um , I'm here ."`` -> ``"I'm here ."``,
  ``"the , um , price"`` -> ``"the , price"``, ``"so , um ."`` -> ``"so ."``), counted in
  ``filler_tokens_dropped`` and ``filler_punctuation_dropped``. A turn left empty, or left with
  punctuation only once fillers were dropped from it, is dropped (``turns_dropped``), as is a
  turn whose content is empty to begin with. A turn with an empty speaker keeps the content
  alone as its sentence (``unknown_speaker``).
- ``<t> ... </t>`` sentence tags (REALSumm, hiersumm's ``tgt_str`` and many CNN/DM dumps wrap
  every sentence as ``<t> sentence </t>``), in every reader and every text: the tags are
  sentence boundaries, never text (:func:`fairseq_hier.data.markup.t_sentences`; text outside
  any span, or after an unmatched tag, is a sentence of its own, an empty piece is left out).
  A tagged summary gives ``summary_sentences`` = its sentences and ``summary`` = them joined
  with " ", tags gone (so a written reference never holds ``<t>``); a tagged unsegmented source
  (a ``.source`` line) gives ``sentences`` = its sentences and ``text`` = None, so no sentence
  splitter runs on it; a tagged sentence of a segmented text (``article_text`` and the
  ``<S> ... </S>`` spans of arXiv/PubMed, PreSumm's ``src`` and ``tgt``) is split into its
  tagged sentences. A dialogue turn (a SAMSum line, a QMSum content) stays one sentence (the turn
  is the unit that gets a BOS): its tags are dropped. Counted per record in
  ``t_tagged_sources`` and ``t_tagged_summaries``. Other markup (``<unk>``, ``<file_gif>``) is
  the dataset's text and is kept: ``fairseq-hier-sentence-bos`` counts and names what reaches a
  reference.
- A tagged source sentence of more than ``max_span_words`` whitespace words (default
  :data:`MAX_SPAN_WORDS`; REALSumm's ``src.txt`` wraps a whole article as one ``<t>`` span) is a
  text, not a sentence: pysbd splits it (:func:`split_long_spans`), counted in
  ``long_spans_split`` and ``long_span_sentences`` (``long_spans_kept_whole`` when pysbd finds
  no boundary). Summaries are never split.
- Reference sentences reach ROUGE: ``Record.reference``, the line written for scoring, holds
  the ``summary_sentences`` separated by `` <q> `` (PreSumm's separator, which ``rouge`` splits
  at), so every layout that marks its summary's sentences (``<S>`` spans, PreSumm's ``tgt``,
  ``<t>`` tags) keeps them through to summary-level ROUGE-L; ``summary`` (the training target)
  joins them with " ".
"""

import collections
import functools
import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.data.markup import join_sentences, t_sentences
from fairseq_hier.io import check_parallel, read_lines, strip_bom

GZIP_MAGIC = b"\x1f\x8b"
#: the default of ``max_span_words`` (``fairseq-hier-sentence-bos --max-span-words``): a source
#: sentence given by ``<t>`` tags with more whitespace words than this is a text, not a sentence,
#: and pysbd splits it (:func:`split_long_spans`); 0 splits none
MAX_SPAN_WORDS = 150
#: the readers that take ``max_span_words`` (their sources may hold ``<t>`` spans)
SPAN_READERS = ("cohan", "source_target", "presumm")

# The braces markup of QMSum's AMI transcripts and the commonest fillers (lowercase).
AMI_FILLERS: FrozenSet[str] = frozenset({
    "{vocalsound}", "{disfmarker}", "{gap}", "{pause}", "{nonvocalsound}", "{comment}",
    "um", "uh", "uhm", "hmm", "mm", "mm-hmm", "uh-huh",
})
WHOLE_MEETING_QUERY = "summarize the whole meeting"
COHAN_KEYS = ("article_id", "article_text", "abstract_text")
SAMSUM_KEYS = ("id", "summary", "dialogue")
QMSUM_KEYS = ("meeting_transcripts", "general_query_list")
PRESUMM_KEYS = ("src", "tgt")
_SENTENCE_SPAN = re.compile(r"<S>(.*?)</S>", re.DOTALL)
_SENTENCE_MARKER = re.compile(r"</?S>")
# filter_fillers: what is stripped before the lexicon look-up, and the two kinds of marks
_FILLER_TRAILING = ",;:.?!\u2026"
_PAUSE_CHARS = frozenset(",;:-\u2013\u2014")
_ATTACHED_PAUSE = ",;:"
_END_CHARS = frozenset(".?!\u2026")
_DIALOGUE_LINE_END = re.compile(r"\r?\n")


class ReaderError(HierError):
    """A malformed file or record; the message is one line ``"path:line: what is wrong"``."""


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
    the layout has several (the JSON-lines schema of :mod:`fairseq_hier.data.own_data`), else
    None (``summary`` is the one reference). ``reference``: the line ROUGE scores, the
    ``summary_sentences`` separated by `` <q> `` (:func:`~fairseq_hier.data.markup.
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
        _add(stats, "whitespace_chars_collapsed",
             sum(map(len, _WHITESPACE_RUN.findall(text))) - kept)
    return out


_WHITESPACE_RUN = re.compile(r"\s+")


# ---------------------------------------------------------------------------------------------
# <t> ... </t> sentence tags (every reader)
# ---------------------------------------------------------------------------------------------

def split_t_tagged(sentences: Iterable[str], max_words: int = 0,
                   stats: Optional[collections.Counter] = None) -> Tuple[List[str], bool]:
    """(sentences, whether any held a tag): every sentence holding ``<t>``/``</t>`` replaced by
    the sentences its tags delimit (:func:`~fairseq_hier.data.markup.t_sentences`: tags
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
        pieces = _pysbd_sentences(sentence) if len(sentence.split()) > max_words else None
        if pieces is None or len(pieces) < 2:
            _add(stats, "long_spans_kept_whole", int(pieces is not None))
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


def _pysbd_sentences(text: str) -> List[str]:
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
# arXiv / PubMed (Cohan et al. 2018)
# ---------------------------------------------------------------------------------------------

def read_cohan(path: str, *, stats: Optional[collections.Counter] = None,
               skipped: Optional[List[str]] = None,
               max_span_words: int = MAX_SPAN_WORDS) -> Iterator[Record]:
    """Records of an arXiv/PubMed ``{train,val,test}.txt`` (one JSON object per line)."""
    stats = collections.Counter() if stats is None else stats
    for lineno, obj in _json_lines(path, COHAN_KEYS, stats):
        where = f"{path}:{lineno}"
        article_id = _typed(obj, "article_id", str, where, "the article id (str)")
        article = str_list(obj, "article_text", where, "a list of sentences (str)")
        abstract = str_list(obj, "abstract_text", where,
                             "a list of '<S> ... </S>' strings")
        sentences = [collapse(s, stats) for s in article]
        _add(stats, "empty_sentences_dropped", sum(1 for s in sentences if not s))
        sentences = _count_tagged(split_t_tagged((s for s in sentences if s), max_span_words,
                                                 stats), stats, "t_tagged_sources")
        summary_sentences = _count_tagged(split_t_tagged(_abstract_sentences(abstract, stats)),
                                          stats, "t_tagged_summaries")
        summary = " ".join(summary_sentences)
        if _skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=article_id, where=where, sentences=sentences, text=None, speakers=None,
                     summary=summary, summary_sentences=summary_sentences)


def _abstract_sentences(abstract: List[str], stats: collections.Counter) -> List[str]:
    """Every ``<S> ... </S>`` span of ``abstract_text``, in order, markers removed; text
    outside the spans (or after an unmatched marker) becomes a sentence too, counted."""
    out = []
    for item in abstract:
        # split with a group: outside, span, outside, span, ..., outside
        for k, piece in enumerate(_SENTENCE_SPAN.split(item)):
            inside = k % 2 == 1
            sentence = collapse(piece if inside else _SENTENCE_MARKER.sub(" ", piece))
            if sentence:
                out.append(sentence)
                if not inside:
                    stats["abstract_text_outside_markers"] += 1
            elif inside:
                stats["empty_summary_sentences_dropped"] += 1
    return out


# ---------------------------------------------------------------------------------------------
# CNN/DailyMail, XSum (fairseq's BART recipe)
# ---------------------------------------------------------------------------------------------

def read_source_target(prefix: str, *, stats: Optional[collections.Counter] = None,
                       skipped: Optional[List[str]] = None,
                       max_span_words: int = MAX_SPAN_WORDS) -> Iterator[Record]:
    """Records of ``{prefix}.source`` / ``{prefix}.target`` (one example per line, same line
    numbers). Both files are read and their line counts compared before the first record."""
    stats = collections.Counter() if stats is None else stats
    source_path, target_path = f"{prefix}.source", f"{prefix}.target"
    try:
        sources, targets = read_lines(source_path), read_lines(target_path)
        check_parallel(source_path, sources, target_path, targets)
    except ValueError as e:
        raise ReaderError(str(e)) from None
    name = os.path.basename(source_path)
    for lineno, (source, target) in enumerate(zip(sources, targets), start=1):
        where = f"{source_path}:{lineno}"
        sentences, text = article_fields(source, stats, max_span_words)
        summary, summary_sentences = summary_fields(target, stats)
        if _skip_empty(where, text if sentences is None else sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=f"{name}:{lineno}", where=where, sentences=sentences, text=text,
                     speakers=None, summary=summary, summary_sentences=summary_sentences)


# ---------------------------------------------------------------------------------------------
# CNN/DailyMail as PreSumm's json shards
# ---------------------------------------------------------------------------------------------

def read_presumm(prefix: str, *, stats: Optional[collections.Counter] = None,
                 skipped: Optional[List[str]] = None,
                 max_span_words: int = MAX_SPAN_WORDS) -> Iterator[Record]:
    """Records of PreSumm's json shards ``{prefix}.0.json``, ``{prefix}.1.json``, ... in
    numeric shard order (:func:`presumm_shards`; ``prefix`` may also name one shard file).
    ``where`` is ``"path:item N"``, N the 0-based index into the shard's list (``jq '.[N]'``)."""
    stats = collections.Counter() if stats is None else stats
    for path in presumm_shards(prefix):
        items = _json_document(path)
        if not isinstance(items, list):
            raise ReaderError(f"{path}:1: the file holds a JSON {json_type(items)} (expected a "
                              f"JSON list of objects with keys src, tgt)")
        stats["shards"] += 1
        name = os.path.basename(path)
        for index, item in enumerate(items):
            where = f"{path}:item {index}"
            _check_object(item, PRESUMM_KEYS, where, "a JSON object")
            sentences = _count_tagged(split_t_tagged(
                _token_sentences(item, "src", where, stats, "empty_sentences_dropped"),
                max_span_words, stats), stats, "t_tagged_sources")
            summary_sentences = _count_tagged(split_t_tagged(
                _token_sentences(item, "tgt", where, stats, "empty_summary_sentences_dropped")),
                stats, "t_tagged_summaries")
            summary = " ".join(summary_sentences)
            if _skip_empty(where, sentences, summary, stats, skipped):
                continue
            stats["records"] += 1
            yield Record(id=f"{name}:item {index}", where=where, sentences=sentences, text=None,
                         speakers=None, summary=summary, summary_sentences=summary_sentences)


def presumm_shards(prefix: str) -> List[str]:
    """The shard files of ``prefix``: ``{prefix}.N.json`` for N = 0, 1, 2, ... in numeric order
    (``.10`` after ``.9``), or ``[prefix]`` when ``prefix`` is itself a file (one shard). No
    shard, a gap in the numbers or a number written twice (``.1`` and ``.01``) is an error:
    PreSumm numbers a split's shards from 0 without gaps."""
    if os.path.isfile(prefix):
        return [prefix]
    folder, base = os.path.split(prefix)
    pattern = re.compile(re.escape(base) + r"\.(\d+)\.json")
    try:
        names = os.listdir(folder or ".")
    except OSError as e:
        raise ReaderError(f"cannot read {folder or '.'}: {e.strerror or e}") from None
    numbered = sorted((int(m.group(1)), n) for n in names if (m := pattern.fullmatch(n)))
    expected = (f"expected PreSumm's json shards {prefix}.0.json, {prefix}.1.json, ..., or one "
                f"shard file")
    if not numbered:
        raise ReaderError(f"{prefix}: no shard {prefix}.N.json found ({expected})")
    numbers = [k for k, _ in numbered]
    if len(set(numbers)) < len(numbers):
        twice = sorted(k for k, n in collections.Counter(numbers).items() if n > 1)
        raise ReaderError(f"{prefix}: shard number(s) {', '.join(map(str, twice))} written "
                          f"twice ({expected})")
    missing = sorted(set(range(numbers[-1] + 1)) - set(numbers))
    if missing:
        raise ReaderError(f"{prefix}: shard(s) {', '.join(map(str, missing))} missing among "
                          f"{prefix}.0.json to .{numbers[-1]}.json (PreSumm numbers a split's "
                          f"shards from 0 without gaps; name one shard file to read it alone)")
    return [os.path.join(folder, n) for _, n in numbered]


def _token_sentences(item: dict, key: str, where: str, stats: collections.Counter,
                     empty_key: str) -> List[str]:
    """The sentences of a PreSumm ``src``/``tgt``: each list of tokens joined with " "
    (whitespace collapsed; an empty sentence dropped and counted in ``empty_key``)."""
    expected = "a list of sentences, each a list of tokens (str)"
    sentences = []
    for j, tokens in enumerate(_typed(item, key, list, where, expected)):
        if not isinstance(tokens, list):
            raise ReaderError(f"{where}: '{key}' sentence {j} is a JSON {json_type(tokens)} "
                              f"(expected a list of tokens (str))")
        for k, token in enumerate(tokens):
            if not isinstance(token, str):
                raise ReaderError(f"{where}: '{key}' sentence {j} token {k} is a JSON "
                                  f"{json_type(token)} (expected a token (str))")
        sentence = collapse(" ".join(tokens))
        if sentence:
            sentences.append(sentence)
        else:
            stats[empty_key] += 1
    return sentences


# ---------------------------------------------------------------------------------------------
# SAMSum
# ---------------------------------------------------------------------------------------------

def read_samsum(path: str, *, stats: Optional[collections.Counter] = None,
                skipped: Optional[List[str]] = None) -> Iterator[Record]:
    """Records of a SAMSum ``{train,val,test}.json`` (one JSON list of dialogues).
    ``where`` is ``"path:item N (id '...')"``, N the 0-based index into the list (``jq '.[N]'``)."""
    stats = collections.Counter() if stats is None else stats
    items = _json_document(path)
    if not isinstance(items, list):
        raise ReaderError(f"{path}:1: the file holds a JSON {json_type(items)} (expected a "
                          f"JSON list of objects with keys {', '.join(SAMSUM_KEYS)})")
    for index, item in enumerate(items):
        where = f"{path}:item {index}"
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            where = f"{where} (id {item['id']!r})"
        _check_object(item, SAMSUM_KEYS, where, "a JSON object")
        dialogue_id = _typed(item, "id", str, where, "the dialogue id (str)")
        summary, summary_sentences = summary_fields(
            _typed(item, "summary", str, where, "the summary (str)"), stats)
        dialogue = _typed(item, "dialogue", str, where, "'Speaker: utterance' lines (str)")
        speakers, sentences = parse_dialogue(dialogue, stats)
        if _skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=dialogue_id, where=where, sentences=sentences, text=None,
                     speakers=speakers, summary=summary, summary_sentences=summary_sentences)


def parse_dialogue(dialogue: str, stats: collections.Counter) -> Tuple[List[str], List[str]]:
    """(speakers, sentences) of a ``Speaker: utterance`` dialogue, with the module's policy for
    empty lines, lines without a colon and empty utterances (see the module docstring)."""
    turns: List[List[str]] = []  # [speaker, utterance]
    tagged = False
    for line in _DIALOGUE_LINE_END.split(dialogue):
        line, tags = drop_t_tags(line)
        tagged |= tags
        if not line:
            continue
        speaker, colon, utterance = line.partition(":")
        if colon:
            turns.append([collapse(speaker), collapse(utterance)])
        elif turns:
            stats["continuation_lines"] += 1
            turns[-1][1] = f"{turns[-1][1]} {line}".strip()
        else:
            turns.append(["", line])
    _add(stats, "t_tagged_sources", int(tagged))
    _add(stats, "unknown_speaker", sum(1 for speaker, _ in turns if not speaker))
    _add(stats, "empty_utterances", sum(1 for _, utterance in turns if not utterance))
    return [s for s, _ in turns], [_turn_text(s, u) for s, u in turns]


def _turn_text(speaker: str, utterance: str) -> str:
    """``"Speaker: utterance"``; the utterance alone for an unknown (empty) speaker."""
    if not speaker:
        return utterance
    return f"{speaker}: {utterance}" if utterance else f"{speaker}:"


# ---------------------------------------------------------------------------------------------
# AMI as in QMSum
# ---------------------------------------------------------------------------------------------

def read_qmsum(path: str, filler_words: Iterable[str] = frozenset(), *,
               stats: Optional[collections.Counter] = None,
               skipped: Optional[List[str]] = None) -> Iterator[Record]:
    """Records of a QMSum ``*.jsonl`` (one meeting per line); ``filler_words`` is the lexicon
    of tokens dropped from the turns' contents (empty: none dropped; see :data:`AMI_FILLERS`)."""
    stats = collections.Counter() if stats is None else stats
    lexicon = frozenset(w.lower() for w in filler_words)
    name = os.path.basename(path)
    for lineno, obj in _json_lines(path, QMSUM_KEYS, stats):
        where = f"{path}:{lineno}"
        speakers, sentences = _meeting_turns(obj, where, lexicon, stats)
        summary, summary_sentences = summary_fields(_meeting_summary(obj, where, stats), stats)
        if _skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=f"{name}:{lineno}", where=where, sentences=sentences, text=None,
                     speakers=speakers, summary=summary, summary_sentences=summary_sentences)


def _meeting_turns(obj: dict, where: str, lexicon: FrozenSet[str],
                   stats: collections.Counter) -> Tuple[List[str], List[str]]:
    """(speakers, sentences) of ``meeting_transcripts``, fillers and emptied turns dropped."""
    transcript = _typed(obj, "meeting_transcripts", list, where,
                        "a list of {'speaker': str, 'content': str}")
    speakers, sentences = [], []
    tagged = False
    for j, turn in enumerate(transcript):
        what = f"'meeting_transcripts' item {j}"
        _check_object(turn, ("speaker", "content"), where, "a JSON object", what)
        speaker = collapse(_typed(turn, "speaker", str, where, "str", what))
        content, tags = drop_t_tags(_typed(turn, "content", str, where, "str", what))
        tagged |= tags
        content, fillers, punctuation = filter_fillers(content, lexicon)
        _add(stats, "filler_tokens_dropped", fillers)
        _add(stats, "filler_punctuation_dropped", punctuation)
        if not content or (fillers and not any(c.isalnum() for c in content)):
            stats["turns_dropped"] += 1
            continue
        if not speaker:
            stats["unknown_speaker"] += 1
        speakers.append(speaker)
        sentences.append(_turn_text(speaker, content))
    _add(stats, "t_tagged_sources", int(tagged))
    return speakers, sentences


def _meeting_summary(obj: dict, where: str, stats: collections.Counter) -> str:
    """The answer of the whole-meeting general query, else of the first general query."""
    queries = _typed(obj, "general_query_list", list, where, "a list of {'query', 'answer'}")
    if not queries:
        raise ReaderError(f"{where}: 'general_query_list' is empty (expected at least one "
                          f"general query, the whole-meeting summary)")
    pairs = []
    for j, item in enumerate(queries):
        what = f"'general_query_list' item {j}"
        _check_object(item, ("query", "answer"), where, "a JSON object", what)
        pairs.append((_typed(item, "query", str, where, "str", what),
                      _typed(item, "answer", str, where, "str", what)))
    whole = [answer for query, answer in pairs if WHOLE_MEETING_QUERY in query.lower()]
    if len(whole) > 1:
        stats["several_whole_meeting_queries"] += 1
    if whole:
        return whole[0]
    stats["summary_from_first_general_query"] += 1
    return pairs[0][1]


def filter_fillers(content: str, lexicon: FrozenSet[str]) -> Tuple[str, int, int]:
    """(content without its fillers, fillers dropped, punctuation marks dropped with them).

    Tokens are whitespace tokens (whitespace is collapsed either way). A token is a filler if
    its lowercase form, stripped of a trailing run of ``, ; : . ? ! …``, is in ``lexicon``
    (lowercase); the run it was stripped of is the filler's *attached* punctuation. A *pause
    mark* is a comma, semicolon, colon or dash (a token of ``, ; : - – —`` only, or such
    attached characters), a *sentence end* is ``.``, ``?``, ``!``, ``...`` or ``…`` (a token of
    ``. ? ! …`` only, or such attached characters). A filler's *own marks* are its attached
    punctuation and the mark tokens right after it, up to the next other token. A filler is
    removed with the punctuation it leaves alone:

    1. Its own pause marks go with it (they set the filler off): ``"Um, I'm here."`` ->
       ``"I'm here."``; ``"Um , I'm here ."`` -> ``"I'm here ."``; ``"the , um , price"`` ->
       ``"the , price"`` (the comma before a filler inside a sentence stays: it may separate
       list items or clauses).
    2. Its own sentence end stays, in the filler's place (attached to the previous token if it
       was attached to the filler), and a pause mark right before the filler goes:
       ``"so , um ."`` -> ``"so ."``; ``"so, um."`` -> ``"so."``. The sentence end goes too when
       no word is left before it in its sentence (the turn's start or another sentence end):
       ``"Yeah . Mm-hmm ."`` -> ``"Yeah ."``; ``"Mm-hmm ."`` -> ``""``.
    3. Punctuation the removal leaves at the start of the content, or a pause mark it leaves at
       the end, goes: ``", um , I agree"`` -> ``"I agree"``; ``"so , um"`` -> ``"so"``.

    Other tokens (quotes, brackets, words) are never touched. An empty ``lexicon`` drops
    nothing. Each removed mark (a token, or a filler's attached run) counts once.
    """
    tokens = content.split()
    if not lexicon:
        return " ".join(tokens), 0, 0
    out: List[str] = []
    fillers = punctuation = 0
    ends_with_filler = False
    i = 0
    while i < len(tokens):
        core = tokens[i].rstrip(_FILLER_TRAILING)
        if not core or core.lower() not in lexicon:
            out.append(tokens[i])
            ends_with_filler = False
            i += 1
            continue
        fillers += 1
        marks = [(tokens[i][len(core):], True)] if len(core) < len(tokens[i]) else []
        i += 1
        while i < len(tokens) and _mark_kind(tokens[i]) is not None:
            marks.append((tokens[i], False))
            i += 1
        ends = [(m, glued) for m, glued in marks if _mark_kind(m) == "end"]
        punctuation += len(marks) - len(ends)  # rule 1
        if out and all(_mark_kind(t) is not None for t in out):  # rule 3: nothing but marks
            punctuation += len(out)
            out.clear()
        if ends:  # rule 2
            punctuation += _strip_pause(out)
            if not out or _ends_sentence(out[-1]):
                punctuation += len(ends)
            else:
                for mark, glued in ends:
                    mark = "".join(c for c in mark if c in _END_CHARS)
                    if glued:
                        out[-1] += mark
                    else:
                        out.append(mark)
        ends_with_filler = True
    if ends_with_filler:  # rule 3: a pause mark left at the end
        punctuation += _strip_pause(out)
    return " ".join(out), fillers, punctuation


def _mark_kind(token: str) -> Optional[str]:
    """``"pause"`` or ``"end"`` for a punctuation mark (:func:`filter_fillers`), else None. A
    mark mixing both kinds is a sentence end (``"?,"``; only its ``. ? ! …`` are kept)."""
    if not token:
        return None
    if all(c in _END_CHARS for c in token):
        return "end"
    if all(c in _PAUSE_CHARS for c in token):
        return "pause"
    if all(c in _END_CHARS or c in _PAUSE_CHARS for c in token):
        return "end"
    return None


def _ends_sentence(token: str) -> bool:
    return token[-1] in _END_CHARS


def _strip_pause(out: List[str]) -> int:
    """Remove a pause mark from the end of ``out`` (a token, or a word's attached ``, ; :``);
    1 if one was removed."""
    if not out:
        return 0
    if _mark_kind(out[-1]) == "pause":
        out.pop()
        return 1
    word = out[-1].rstrip(_ATTACHED_PAUSE)
    if word and word != out[-1]:
        out[-1] = word
        return 1
    return 0


def load_filler_words(path: str) -> FrozenSet[str]:
    """The lexicon in ``path``: one word per line, lowercased; ``#`` starts a comment, blank
    lines are ignored. A line holding two words is an error naming it."""
    try:
        lines = read_lines(path)
    except ValueError as e:
        raise ReaderError(str(e)) from None
    words = set()
    for lineno, line in enumerate(lines, start=1):
        fields = line.split("#", 1)[0].split()
        if len(fields) > 1:
            raise ReaderError(f"{path}:{lineno}: {len(fields)} words on one line (expected one "
                              f"word per line, '#' for comments)")
        words.update(f.lower() for f in fields)
    return frozenset(words)


READERS: Dict[str, Callable[..., Iterator[Record]]] = {
    "cohan": read_cohan,
    "source_target": read_source_target,
    "samsum": read_samsum,
    "qmsum": read_qmsum,
    "presumm": read_presumm,
}


# ---------------------------------------------------------------------------------------------
# shared checks
# ---------------------------------------------------------------------------------------------

def _skip_empty(where: str, source, summary: str, stats: collections.Counter,
                skipped: Optional[List[str]]) -> bool:
    """Count (and list) a record with an empty source or summary; True if it is skipped."""
    why = ("empty source" if not source else "empty summary" if not summary else None)
    if why is None:
        return False
    stats[f"skipped_{why.replace(' ', '_')}"] += 1
    if skipped is not None:
        skipped.append(f"{where}: {why}")
    return True


def _count_tagged(result: Tuple[List[str], bool], stats: collections.Counter,
                  key: str) -> List[str]:
    """The sentences of :func:`split_t_tagged`'s ``result``, counting one ``key`` if any held a
    tag."""
    sentences, tagged = result
    _add(stats, key, int(tagged))
    return sentences


def _add(stats: collections.Counter, key: str, n: int) -> None:
    """``stats[key] += n``, creating no zero entry (so the counters logged are the events)."""
    if n:
        stats[key] += n


def json_type(value) -> str:
    """The JSON name of a decoded value's type, for messages ("object", "list", "null" ...)."""
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null",
            int: "number", float: "number"}.get(type(value), type(value).__name__)


def _check_object(obj, keys: Tuple[str, ...], where: str, expected: str,
                  what: str = "the record") -> None:
    if not isinstance(obj, dict):
        raise ReaderError(f"{where}: {what} is a JSON {json_type(obj)} (expected {expected} "
                          f"with keys {', '.join(keys)})")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ReaderError(f"{where}: {what} lacks the key(s) {', '.join(missing)} (expected "
                          f"keys {', '.join(keys)}; has {', '.join(sorted(obj)) or 'none'})")


def _typed(obj: dict, key: str, kind: type, where: str, expected: str, what: str = ""):
    value = obj[key]
    if not isinstance(value, kind):
        name = f"{what} '{key}'" if what else f"'{key}'"
        raise ReaderError(f"{where}: {name} is a JSON {json_type(value)} (expected {expected})")
    return value


def json_id(obj: dict, where: str) -> Optional[str]:
    """An object's ``id`` as text (a string, or an integer written in decimal), None when it has
    none; an id that is empty, or holds a tab, a line break or surrounding spaces, is an error
    (ids are written one per line)."""
    if "id" not in obj:
        return None
    value = obj["id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ReaderError(f"{where}: 'id' is a JSON {json_type(value)} (expected a string or an "
                          f"integer)")
    text = str(value)
    if not text or text != text.strip() or any(c in text for c in "\t\n\r\x0b\x0c"):
        raise ReaderError(f"{where}: 'id' {text!r} is empty, or holds a tab, a line break or "
                          f"surrounding spaces (expected an id on one line, or an integer)")
    return text


def str_list(obj: dict, key: str, where: str, expected: str,
             item: Optional[str] = None) -> List[str]:
    """``obj[key]``, a list of strings; errors name ``expected`` (the list) and ``item`` (one of
    its strings; default: ``expected``)."""
    value = _typed(obj, key, list, where, expected)
    for j, text in enumerate(value):
        if not isinstance(text, str):
            raise ReaderError(f"{where}: '{key}' item {j} is a JSON {json_type(text)} "
                              f"(expected {item or expected})")
    return value


def numbered_lines(path: str) -> Iterator[Tuple[int, str]]:
    """(1-based line number, line without ``\\n`` / ``\\r\\n``), read lazily (the arXiv
    training file holds gigabytes); only ``\\n`` ends a line. A UTF-8 BOM at the start is
    removed with a warning (:func:`fairseq_hier.io.strip_bom`, as the text readers do); a
    non-UTF-8 line is an error naming it. A gzip-compressed file (recognised by its
    magic bytes, not its name: WCEP's ``.jsonl.gz``) is read through its decompressed stream;
    there a non-UTF-8 byte is reported after the last good line (the stream is decoded in
    blocks)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ReaderError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        if f.read(2) == GZIP_MAGIC:
            yield from _gzip_lines(path)
            return
        f.seek(0)
        for n, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ReaderError(f"{path}:{n}: not UTF-8 text ({e.reason} at byte {e.start} "
                                  f"of the line)") from None
            yield n, (strip_bom(path, line) if n == 1 else line).rstrip("\n").rstrip("\r")


def _gzip_lines(path: str) -> Iterator[Tuple[int, str]]:
    """:func:`numbered_lines` of a gzip-compressed file."""
    import gzip

    n = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
            for n, line in enumerate(f, start=1):
                yield n, (strip_bom(path, line) if n == 1 else line).rstrip("\n").rstrip("\r")
    except UnicodeDecodeError as e:
        raise ReaderError(f"{path}:{n + 1}: not UTF-8 text after the decompression ({e.reason}; "
                          f"the bad byte is on this line or a later one)") from None
    except (OSError, EOFError) as e:  # a truncated or corrupt gzip stream
        raise ReaderError(f"{path}:{n + 1}: cannot decompress ({e})") from None


def _json_lines(path: str, keys: Tuple[str, ...], stats: collections.Counter,
                expected: str = "one JSON object per line",
                what: str = "the record") -> Iterator[Tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON-lines file (:func:`numbered_lines`);
    each line must be one JSON object with ``keys`` (JSON columns count within the line).
    ``expected`` / ``what`` word the errors (e.g. "one cluster, a JSON object, per line", "the
    cluster")."""
    for lineno, line in numbered_lines(path):
        if not line.strip():
            stats["blank_lines_skipped"] += 1
            continue
        obj = json_line(line, f"{path}:{lineno}", expected)
        _check_object(obj, keys, f"{path}:{lineno}", expected, what)
        yield lineno, obj


def json_line(line: str, where: str, expected: str):
    """The JSON value of one line; invalid JSON is a :class:`ReaderError` naming ``where``
    (``path:line``), the column and what was ``expected``."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise ReaderError(f"{where}: invalid JSON ({e.msg} at column {e.colno}; "
                          f"expected {expected})") from None


def _json_document(path: str):
    """The value of a whole-file JSON document (a BOM removed as :func:`numbered_lines`
    removes it); errors name the line and column."""
    try:
        with open(path, encoding="utf-8") as f:
            text = strip_bom(path, f.read())
    except OSError as e:
        raise ReaderError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ReaderError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReaderError(f"{path}:{e.lineno}: invalid JSON ({e.msg} at column {e.colno}; "
                          f"expected one JSON list)") from None
