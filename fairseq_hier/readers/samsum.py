"""SAMSum, ``{train,val,test}.json``: one JSON list of dialogues with their summaries, a
dialogue as ``Speaker: utterance`` lines (docs/data-formats.md#samsum). Imports the
standard library and the shared parts of this package (:mod:`.lines`, :mod:`.records`).
"""

import collections
import re
from typing import Iterator, List, Optional, Tuple

from fairseq_hier.readers.lines import (ReaderError, check_object, json_document, json_type,
                                        typed_field)
from fairseq_hier.readers.records import (Record, add_count, collapse, drop_t_tags, skip_empty,
                                          summary_fields, turn_text)

SAMSUM_KEYS = ("id", "summary", "dialogue")
_DIALOGUE_LINE_END = re.compile(r"\r?\n")


def read_samsum(path: str, *, stats: Optional[collections.Counter] = None,
                skipped: Optional[List[str]] = None) -> Iterator[Record]:
    """Records of a SAMSum ``{train,val,test}.json`` (one JSON list of dialogues).
    ``where`` is ``"path:item N (id '...')"``, N the 0-based index into the list (``jq '.[N]'``)."""
    stats = collections.Counter() if stats is None else stats
    items = json_document(path)
    if not isinstance(items, list):
        raise ReaderError(f"{path}:1: the file holds a JSON {json_type(items)} (expected a "
                          f"JSON list of objects with keys {', '.join(SAMSUM_KEYS)})")
    for index, item in enumerate(items):
        where = f"{path}:item {index}"
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            where = f"{where} (id {item['id']!r})"
        check_object(item, SAMSUM_KEYS, where, "a JSON object")
        dialogue_id = typed_field(item, "id", str, where, "the dialogue id (str)")
        summary, summary_sentences = summary_fields(
            typed_field(item, "summary", str, where, "the summary (str)"), stats)
        dialogue = typed_field(item, "dialogue", str, where, "'Speaker: utterance' lines (str)")
        speakers, sentences = parse_dialogue(dialogue, stats)
        if skip_empty(where, sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=dialogue_id, where=where, sentences=sentences, text=None,
                     speakers=speakers, summary=summary, summary_sentences=summary_sentences)


def parse_dialogue(dialogue: str, stats: collections.Counter) -> Tuple[List[str], List[str]]:
    """(speakers, sentences) of a ``Speaker: utterance`` dialogue, with the module's policy for
    empty lines, lines without a colon and empty utterances (docs/data-formats.md, section
    "SAMSum")."""
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
    add_count(stats, "t_tagged_sources", int(tagged))
    add_count(stats, "unknown_speaker", sum(1 for speaker, _ in turns if not speaker))
    add_count(stats, "empty_utterances", sum(1 for _, utterance in turns if not utterance))
    return [s for s, _ in turns], [turn_text(s, u) for s, u in turns]

