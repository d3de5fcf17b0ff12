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
  published), ``summary_sentences`` = ``[summary]``.
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
  spaces, so every sentence and summary fits on one line. Empty sentences inside
  ``article_text`` are dropped (``empty_sentences_dropped``), as are empty ``<S> </S>`` spans
  (``empty_summary_sentences_dropped``). Blank lines between JSON lines are skipped
  (``blank_lines_skipped``).
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
  words") drops every whitespace token of a content whose lowercase form, with trailing
  ``, . ? !`` stripped, is in the lexicon (``filler_tokens_dropped``); a turn left empty, or
  left with punctuation only once fillers were dropped from it (QMSum writes "Mm-hmm ." with the
  full stop as a token of its own), is dropped (``turns_dropped``), as is a turn whose content is
  empty to begin with. A turn with an empty speaker keeps the content alone as its
  sentence (``unknown_speaker``).
"""

import collections
import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from fairseq_hier.io import check_parallel, read_lines

GZIP_MAGIC = b"\x1f\x8b"

# The braces markup of QMSum's AMI transcripts and the commonest fillers (lowercase).
AMI_FILLERS: FrozenSet[str] = frozenset({
    "{vocalsound}", "{disfmarker}", "{gap}", "{pause}", "{nonvocalsound}", "{comment}",
    "um", "uh", "uhm", "hmm", "mm", "mm-hmm", "uh-huh",
})
WHOLE_MEETING_QUERY = "summarize the whole meeting"
COHAN_KEYS = ("article_id", "article_text", "abstract_text")
SAMSUM_KEYS = ("id", "summary", "dialogue")
QMSUM_KEYS = ("meeting_transcripts", "general_query_list")
_SENTENCE_SPAN = re.compile(r"<S>(.*?)</S>", re.DOTALL)
_SENTENCE_MARKER = re.compile(r"</?S>")
_DIALOGUE_LINE_END = re.compile(r"\r?\n")


class ReaderError(ValueError):
    """A malformed file or record; the message is one line ``"path:line: what is wrong"``."""


@dataclass
class Record:
    """One example of a published dataset, in the reader's common form.

    ``id``: the dataset's own id (arXiv/PubMed ``article_id``, SAMSum ``id``), else
    ``"<basename>:<line>"``. ``where``: ``"path:line"`` (1-based) or, for SAMSum's JSON list,
    ``"path:item N (id '...')"``, for messages. ``sentences``: the dataset's own segmentation
    (article sentences; dialogue/meeting turns as ``"Speaker: utterance"``), None for unsegmented
    sources, whose text is ``text``. ``speakers``: the speaker of each turn (dialogues and
    meetings only, ``len(speakers) == len(sentences)``), else None. ``summary``: the reference on
    one line; ``summary_sentences``: its sentences where the dataset marks them, else
    ``[summary]``.
    """

    id: str
    where: str
    sentences: Optional[List[str]]
    text: Optional[str]
    speakers: Optional[List[str]]
    summary: str
    summary_sentences: List[str]


def format_stats(stats: Dict[str, int]) -> str:
    """The counters on one line for logs: ``records=N`` first, then the others by name."""
    keys = sorted(stats, key=lambda k: (k != "records", k))
    return " ".join(f"{k}={stats[k]}" for k in keys) if keys else "records=0"


def collapse(text: str) -> str:
    """``text`` with every whitespace run (newlines and Unicode separators included) turned
    into one space and no leading/trailing space."""
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# arXiv / PubMed (Cohan et al. 2018)
# ---------------------------------------------------------------------------------------------

def read_cohan(path: str, *, stats: Optional[collections.Counter] = None,
               skipped: Optional[List[str]] = None) -> Iterator[Record]:
    """Records of an arXiv/PubMed ``{train,val,test}.txt`` (one JSON object per line)."""
    stats = collections.Counter() if stats is None else stats
    for lineno, obj in _json_lines(path, COHAN_KEYS, stats):
        where = f"{path}:{lineno}"
        article_id = _typed(obj, "article_id", str, where, "the article id (str)")
        article = _str_list(obj, "article_text", where, "a list of sentences (str)")
        abstract = _str_list(obj, "abstract_text", where,
                             "a list of '<S> ... </S>' strings")
        sentences = [collapse(s) for s in article]
        _add(stats, "empty_sentences_dropped", sum(1 for s in sentences if not s))
        sentences = [s for s in sentences if s]
        summary_sentences = _abstract_sentences(abstract, stats)
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
                       skipped: Optional[List[str]] = None) -> Iterator[Record]:
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
        text, summary = collapse(source), collapse(target)
        if _skip_empty(where, text, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=f"{name}:{lineno}", where=where, sentences=None, text=text,
                     speakers=None, summary=summary, summary_sentences=[summary])


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
        raise ReaderError(f"{path}:1: the file holds a JSON {_json_type(items)} (expected a "
                          f"JSON list of objects with keys {', '.join(SAMSUM_KEYS)})")
    for index, item in enumerate(items):
        where = f"{path}:item {index}"
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            where = f"{where} (id {item['id']!r})"
        _check_object(item, SAMSUM_KEYS, where, "a JSON object")
        dialogue_id = _typed(item, "id", str, where, "the dialogue id (str)")
        summary = collapse(_typed(item, "summary", str, where, "the summary (str)"))
        dialogue = _typed(item, "dialogue", str, where, "'Speaker: utterance' lines (str)")
        speakers, sentences = parse_dialogue(dialogue, stats)
        if _skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=dialogue_id, where=where, sentences=sentences, text=None,
                     speakers=speakers, summary=summary, summary_sentences=[summary])


def parse_dialogue(dialogue: str, stats: collections.Counter) -> Tuple[List[str], List[str]]:
    """(speakers, sentences) of a ``Speaker: utterance`` dialogue, with the module's policy for
    empty lines, lines without a colon and empty utterances (see the module docstring)."""
    turns: List[List[str]] = []  # [speaker, utterance]
    for line in _DIALOGUE_LINE_END.split(dialogue):
        line = collapse(line)
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
        summary = collapse(_meeting_summary(obj, where, stats))
        if _skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=f"{name}:{lineno}", where=where, sentences=sentences, text=None,
                     speakers=speakers, summary=summary, summary_sentences=[summary])


def _meeting_turns(obj: dict, where: str, lexicon: FrozenSet[str],
                   stats: collections.Counter) -> Tuple[List[str], List[str]]:
    """(speakers, sentences) of ``meeting_transcripts``, fillers and emptied turns dropped."""
    transcript = _typed(obj, "meeting_transcripts", list, where,
                        "a list of {'speaker': str, 'content': str}")
    speakers, sentences = [], []
    for j, turn in enumerate(transcript):
        what = f"'meeting_transcripts' item {j}"
        _check_object(turn, ("speaker", "content"), where, "a JSON object", what)
        speaker = collapse(_typed(turn, "speaker", str, where, "str", what))
        content, dropped = filter_fillers(_typed(turn, "content", str, where, "str", what),
                                          lexicon)
        _add(stats, "filler_tokens_dropped", dropped)
        if not content or (dropped and not any(c.isalnum() for c in content)):
            stats["turns_dropped"] += 1
            continue
        if not speaker:
            stats["unknown_speaker"] += 1
        speakers.append(speaker)
        sentences.append(_turn_text(speaker, content))
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


def filter_fillers(content: str, lexicon: FrozenSet[str]) -> Tuple[str, int]:
    """(content without its filler tokens, number of tokens dropped). A whitespace token is a
    filler if its lowercase form, trailing ``, . ? !`` stripped, is in ``lexicon`` (lowercase).
    Whitespace is collapsed either way."""
    tokens = content.split()
    kept = [t for t in tokens if t.lower().rstrip(",.?!") not in lexicon] if lexicon else tokens
    return " ".join(kept), len(tokens) - len(kept)


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


def _add(stats: collections.Counter, key: str, n: int) -> None:
    """``stats[key] += n``, creating no zero entry (so the counters logged are the events)."""
    if n:
        stats[key] += n


def _json_type(value) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null",
            int: "number", float: "number"}.get(type(value), type(value).__name__)


def _check_object(obj, keys: Tuple[str, ...], where: str, expected: str,
                  what: str = "the record") -> None:
    if not isinstance(obj, dict):
        raise ReaderError(f"{where}: {what} is a JSON {_json_type(obj)} (expected {expected} "
                          f"with keys {', '.join(keys)})")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ReaderError(f"{where}: {what} lacks the key(s) {', '.join(missing)} (expected "
                          f"keys {', '.join(keys)}; has {', '.join(sorted(obj)) or 'none'})")


def _typed(obj: dict, key: str, kind: type, where: str, expected: str, what: str = ""):
    value = obj[key]
    if not isinstance(value, kind):
        name = f"{what} '{key}'" if what else f"'{key}'"
        raise ReaderError(f"{where}: {name} is a JSON {_json_type(value)} (expected {expected})")
    return value


def _str_list(obj: dict, key: str, where: str, expected: str) -> List[str]:
    value = _typed(obj, key, list, where, expected)
    for j, item in enumerate(value):
        if not isinstance(item, str):
            raise ReaderError(f"{where}: '{key}' item {j} is a JSON {_json_type(item)} "
                              f"(expected {expected})")
    return value


def numbered_lines(path: str) -> Iterator[Tuple[int, str]]:
    """(1-based line number, line without ``\\n`` / ``\\r\\n``), read lazily (the arXiv
    training file holds gigabytes); only ``\\n`` ends a line. A UTF-8 BOM at the start is
    dropped; a non-UTF-8 line is an error naming it. A gzip-compressed file (recognised by its
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
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise ReaderError(f"{path}:{n}: not UTF-8 text ({e.reason} at byte {e.start} "
                                  f"of the line)") from None
            yield n, line.rstrip("\n").rstrip("\r")


def _gzip_lines(path: str) -> Iterator[Tuple[int, str]]:
    """:func:`numbered_lines` of a gzip-compressed file."""
    import gzip

    n = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8-sig", newline="\n") as f:
            for n, line in enumerate(f, start=1):
                yield n, line.rstrip("\n").rstrip("\r")
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
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReaderError(f"{path}:{lineno}: invalid JSON ({e.msg} at column {e.colno}; "
                              f"expected {expected})") from None
        _check_object(obj, keys, f"{path}:{lineno}", expected, what)
        yield lineno, obj


def _json_document(path: str):
    """The value of a whole-file JSON document; errors name the line and column."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except OSError as e:
        raise ReaderError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ReaderError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReaderError(f"{path}:{e.lineno}: invalid JSON ({e.msg} at column {e.colno}; "
                          f"expected one JSON list)") from None
