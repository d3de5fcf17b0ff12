"""arXiv and PubMed as Cohan et al. (2018) publish them: ``{train,val,test}.txt``, one JSON
object per line (docs/data-formats.md, section "arXiv and PubMed"). Imports the standard
library and the shared parts of this package (:mod:`.lines`, :mod:`.records`).
"""

import collections
import re
from typing import Iterator, List, Optional

from fairseq_hier.readers.lines import json_lines, str_list, typed_field
from fairseq_hier.readers.records import (MAX_SPAN_WORDS, Record, add_count, collapse,
                                          count_tagged, skip_empty, split_t_tagged)

COHAN_KEYS = ("article_id", "article_text", "abstract_text")
_SENTENCE_SPAN = re.compile(r"<S>(.*?)</S>", re.DOTALL)
_SENTENCE_MARKER = re.compile(r"</?S>")


def read_cohan(path: str, *, stats: Optional[collections.Counter] = None,
               skipped: Optional[List[str]] = None,
               max_span_words: int = MAX_SPAN_WORDS) -> Iterator[Record]:
    """Records of an arXiv/PubMed ``{train,val,test}.txt`` (one JSON object per line)."""
    stats = collections.Counter() if stats is None else stats
    for lineno, obj in json_lines(path, COHAN_KEYS, stats):
        where = f"{path}:{lineno}"
        article_id = typed_field(obj, "article_id", str, where, "the article id (str)")
        article = str_list(obj, "article_text", where, "a list of sentences (str)")
        abstract = str_list(obj, "abstract_text", where, "a list of '<S> ... </S>' strings")
        sentences = [collapse(s, stats) for s in article]
        add_count(stats, "empty_sentences_dropped", sum(1 for s in sentences if not s))
        sentences = count_tagged(split_t_tagged((s for s in sentences if s), max_span_words,
                                                stats), stats, "t_tagged_sources")
        summary_sentences = count_tagged(split_t_tagged(_abstract_sentences(abstract, stats)),
                                         stats, "t_tagged_summaries")
        summary = " ".join(summary_sentences)
        if skip_empty(where, sentences, summary, stats, skipped):
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

