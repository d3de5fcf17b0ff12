"""CNN/DailyMail (and XSum) as fairseq's BART recipe has them, ``{prefix}.source`` /
``{prefix}.target``, and CNN/DailyMail as PreSumm's json shards ``{prefix}.N.json``
(docs/data-formats.md, sections "CNN/DailyMail and XSum: source and target" and "CNN/DailyMail:
PreSumm's json shards"). Imports the standard library, :mod:`fairseq_hier.io` and the shared
parts of this package (:mod:`.lines`, :mod:`.records`).
"""

import collections
import os
import re
from typing import Iterator, List, Optional

from fairseq_hier.io import check_parallel, read_lines
from fairseq_hier.readers.lines import (ReaderError, check_object, json_document, json_type,
                                        typed_field)
from fairseq_hier.readers.records import (MAX_SPAN_WORDS, Record, article_fields, collapse,
                                          count_tagged, skip_empty, split_t_tagged,
                                          summary_fields)

PRESUMM_KEYS = ("src", "tgt")


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
        if skip_empty(where, text if sentences is None else sentences, summary, stats, skipped):
            continue
        stats["records"] += 1
        yield Record(id=f"{name}:{lineno}", where=where, sentences=sentences, text=text,
                     speakers=None, summary=summary, summary_sentences=summary_sentences)



def read_presumm(prefix: str, *, stats: Optional[collections.Counter] = None,
                 skipped: Optional[List[str]] = None,
                 max_span_words: int = MAX_SPAN_WORDS) -> Iterator[Record]:
    """Records of PreSumm's json shards ``{prefix}.0.json``, ``{prefix}.1.json``, ... in
    numeric shard order (:func:`presumm_shards`; ``prefix`` may also name one shard file).
    ``where`` is ``"path:item N"``, N the 0-based index into the shard's list (``jq '.[N]'``)."""
    stats = collections.Counter() if stats is None else stats
    for path in presumm_shards(prefix):
        items = json_document(path)
        if not isinstance(items, list):
            raise ReaderError(f"{path}:1: the file holds a JSON {json_type(items)} (expected a "
                              f"JSON list of objects with keys src, tgt)")
        stats["shards"] += 1
        name = os.path.basename(path)
        for index, item in enumerate(items):
            where = f"{path}:item {index}"
            check_object(item, PRESUMM_KEYS, where, "a JSON object")
            sentences = count_tagged(split_t_tagged(
                _token_sentences(item, "src", where, stats, "empty_sentences_dropped"),
                max_span_words, stats), stats, "t_tagged_sources")
            summary_sentences = count_tagged(split_t_tagged(
                _token_sentences(item, "tgt", where, stats, "empty_summary_sentences_dropped")),
                stats, "t_tagged_summaries")
            summary = " ".join(summary_sentences)
            if skip_empty(where, sentences, summary, stats, skipped):
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
    for j, tokens in enumerate(typed_field(item, key, list, where, expected)):
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

