"""AMI and ICSI meetings as QMSum publishes them, ``*.jsonl`` (one meeting per line), and the
filler words dropped from their turns (docs/data-formats.md, section "QMSum meetings (AMI,
ICSI)"; :func:`filter_fillers` states the rule). Imports the standard library,
:mod:`fairseq_hier.io` and the shared parts of this package (:mod:`.lines`, :mod:`.records`).
"""

import collections
import os
from typing import FrozenSet, Iterable, Iterator, List, Optional, Tuple

from fairseq_hier.io import read_lines
from fairseq_hier.readers.lines import ReaderError, check_object, json_lines, typed_field
from fairseq_hier.readers.records import (Record, add_count, collapse, drop_t_tags, skip_empty,
                                          summary_fields, turn_text)

# The braces markup of QMSum's AMI transcripts and the commonest fillers (lowercase).
AMI_FILLERS: FrozenSet[str] = frozenset({
    "{vocalsound}", "{disfmarker}", "{gap}", "{pause}", "{nonvocalsound}", "{comment}",
    "um", "uh", "uhm", "hmm", "mm", "mm-hmm", "uh-huh",
})
WHOLE_MEETING_QUERY = "summarize the whole meeting"
QMSUM_KEYS = ("meeting_transcripts", "general_query_list")
# filter_fillers: what is stripped before the lexicon look-up, and the two kinds of marks
_FILLER_TRAILING = ",;:.?!\u2026"
_PAUSE_CHARS = frozenset(",;:-\u2013\u2014")
_ATTACHED_PAUSE = ",;:"
_END_CHARS = frozenset(".?!\u2026")


def read_qmsum(path: str, filler_words: Iterable[str] = frozenset(), *,
               stats: Optional[collections.Counter] = None,
               skipped: Optional[List[str]] = None) -> Iterator[Record]:
    """Records of a QMSum ``*.jsonl`` (one meeting per line); ``filler_words`` is the lexicon
    of tokens dropped from the turns' contents (empty: none dropped; see :data:`AMI_FILLERS`)."""
    stats = collections.Counter() if stats is None else stats
    lexicon = frozenset(w.lower() for w in filler_words)
    name = os.path.basename(path)
    for lineno, obj in json_lines(path, QMSUM_KEYS, stats):
        where = f"{path}:{lineno}"
        speakers, sentences = meeting_turns(obj, where, lexicon, stats)
        summary, summary_sentences = summary_fields(_meeting_summary(obj, where, stats), stats)
        if skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=f"{name}:{lineno}", where=where, sentences=sentences, text=None,
                     speakers=speakers, summary=summary, summary_sentences=summary_sentences)


def meeting_turns(obj: dict, where: str, lexicon: FrozenSet[str],
                  stats: collections.Counter) -> Tuple[List[str], List[str]]:
    """(speakers, sentences) of ``meeting_transcripts``, fillers and emptied turns dropped."""
    transcript = typed_field(obj, "meeting_transcripts", list, where,
                        "a list of {'speaker': str, 'content': str}")
    speakers, sentences = [], []
    tagged = False
    for j, turn in enumerate(transcript):
        what = f"'meeting_transcripts' item {j}"
        check_object(turn, ("speaker", "content"), where, "a JSON object", what)
        speaker = collapse(typed_field(turn, "speaker", str, where, "str", what))
        content, tags = drop_t_tags(typed_field(turn, "content", str, where, "str", what))
        tagged |= tags
        content, fillers, punctuation = filter_fillers(content, lexicon)
        add_count(stats, "filler_tokens_dropped", fillers)
        add_count(stats, "filler_punctuation_dropped", punctuation)
        if not content or (fillers and not any(c.isalnum() for c in content)):
            stats["turns_dropped"] += 1
            continue
        if not speaker:
            stats["unknown_speaker"] += 1
        speakers.append(speaker)
        sentences.append(turn_text(speaker, content))
    add_count(stats, "t_tagged_sources", int(tagged))
    return speakers, sentences


def _meeting_summary(obj: dict, where: str, stats: collections.Counter) -> str:
    """The answer of the whole-meeting general query, else of the first general query."""
    queries = typed_field(obj, "general_query_list", list, where, "a list of {'query', 'answer'}")
    if not queries:
        raise ReaderError(f"{where}: 'general_query_list' is empty (expected at least one "
                          f"general query, the whole-meeting summary)")
    pairs = []
    for j, item in enumerate(queries):
        what = f"'general_query_list' item {j}"
        check_object(item, ("query", "answer"), where, "a JSON object", what)
        pairs.append((typed_field(item, "query", str, where, "str", what),
                      typed_field(item, "answer", str, where, "str", what)))
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

