"""Multi-News and WCEP, as published, converted to fairseq-hier's raw format: each document one
paragraph of ``<P> document 1 <P> document 2 ...``, one summary per line
(:mod:`fairseq_hier.readers.mds` reads the layouts; ``fairseq-hier-to-raw --format multi_news``
documents the files, counts and errors).
"""

import collections
import logging
import os
from typing import List, Optional

from fairseq_hier.readers.markup import describe_markup, markup_counts
from fairseq_hier.readers.mds import (PUBLISHED_SPLIT, describe_skipped, format_counts,
                                      input_paths, read_split, source_line)
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs

logger = logging.getLogger("fairseq_hier.mds_to_raw")


def parse_splits(text: str):
    """``train,valid,test`` -> our split names (the publishers' ``val`` is accepted)."""
    splits = []
    for name in (s.strip() for s in text.split(",")):
        name = "valid" if name == "val" else name
        if name not in PUBLISHED_SPLIT:
            raise HierError(f"--splits {text}: unknown split {name!r} (expected a comma-separated "
                            f"list of train, valid, test)")
        if name not in splits:
            splits.append(name)
    return splits


def convert_split(dataset: str, input_dir: str, output_dir: str, split: str,
                  max_articles: Optional[int] = None,
                  with_titles: bool = False, shard: Optional[Shard] = None) -> collections.Counter:
    """Read one split of ``dataset`` (published in ``input_dir``) and write
    ``output_dir/{split}.src/.tgt``, only the examples of ``shard`` when given (a block of the
    examples the reader yields: :mod:`fairseq_hier.data.shards`); logs and returns its counts."""
    stats, skipped = collections.Counter(), []
    options = dict(max_articles=max_articles, with_titles=with_titles)
    selection = select(shard, input_paths(dataset, input_dir, split), lambda: sum(
        1 for _ in read_split(dataset, input_dir, split, stats=collections.Counter(),
                              skipped=[], **options)))
    examples = selection.take(read_split(dataset, input_dir, split, stats=stats,
                                         skipped=skipped, **options))
    outputs = [os.path.join(output_dir, f"{split}.{ext}") for ext in ("src", "tgt")]
    markup, with_markup = collections.Counter(), 0
    # refused when the published files are the outputs (Multi-News's are train.src ...)
    with atomic_outputs(outputs, inputs=input_paths(dataset, input_dir, split)) as (
            src, tgt):
        for ex in examples:
            src.write(source_line(ex.documents) + "\n")
            tgt.write(ex.summary + "\n")
            found = markup_counts([ex.summary])
            markup.update(found)
            with_markup += bool(found)
    mark_outputs(outputs, selection)
    log_split(logger, split, f"{selection.label}{outputs[0]}, {outputs[1]}", outputs[1], stats,
              skipped, markup, with_markup, "no non-empty document or an empty summary")
    return stats


def log_split(log: logging.Logger, split: str, what: str, targets: str,
              stats: collections.Counter, skipped: List[int], markup: collections.Counter,
              with_markup: int, why_skipped: str) -> None:
    """The log of one converted split (to the command's logger ``log``): its counts, the targets
    holding markup that ROUGE-1.5.5 reads only up to its '<' (kept: they are the data's text),
    the skipped examples' lines."""
    log.info(f"[{split}] {what}: {format_counts(stats)}")
    if markup:
        log.warning(f"[{split}] {targets}: {with_markup} of {stats['examples']} targets hold "
                    f"markup that ROUGE-1.5.5 reads only up to its '<' (kept: it is the "
                    f"dataset's text): {describe_markup(markup)}")
    if skipped:
        log.warning(f"[{split}] {len(skipped)} examples skipped ({why_skipped}): "
                    f"{describe_skipped(skipped)}")
