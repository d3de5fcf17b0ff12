"""Your own data (the JSON-lines schema, read by :mod:`fairseq_hier.readers.own_data`) converted
to fairseq-hier's hierarchical raw format, one split at a time. The files written, the counts
and the errors: docs/data-formats.md#what-each-command-writes.
"""

import collections
import json
import logging
import os
from typing import Dict, List, Optional, Sequence, Tuple

from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.preparation.mds import log_split, parse_splits
from fairseq_hier.readers.markup import markup_counts
from fairseq_hier.readers.mds import SEPARATOR, clean, source_line
from fairseq_hier.readers.own_data import has_several_summaries, read_examples, split_paragraphs
from fairseq_hier.readers.records import summary_fields

logger = logging.getLogger("fairseq_hier.jsonl_to_raw")

SPLITS = ("train", "valid", "test")
# the file names of a split in --input-dir, in the order they are looked for
SPLIT_FILES = {"train": ("train",), "valid": ("valid", "val"), "test": ("test",)}
EXTENSIONS = (".jsonl", ".jsonl.gz")
OUTPUTS = ("src", "tgt", "ids")
REFS = "refs.jsonl"


def split_files(input_dir: Optional[str], splits: Optional[str],
                files: Dict[str, Optional[str]]) -> List[Tuple[str, str]]:
    """(split, file) to convert: ``input_dir``'s ``{split}.jsonl`` (``.jsonl.gz``; ``val`` for
    valid) of the ``splits``, or the files given per split (``--train F ...``)."""
    given = [(split, path) for split, path in files.items() if path]
    if input_dir is None:
        if not given:
            raise HierError("no input: give --input-dir DIR, or one or more of --train, "
                            "--valid, --test")
        if splits is not None:
            raise HierError("--splits chooses the files of --input-dir; with --train/--valid/"
                            "--test, the files given are the splits")
        return given
    if given:
        raise HierError(f"--input-dir and --{given[0][0]} exclude each other (give the folder, "
                        f"or each split's file)")
    out = []
    for split in parse_splits(splits or ",".join(SPLITS)):
        names = [f"{n}{ext}" for n in SPLIT_FILES[split] for ext in EXTENSIONS]
        found = [os.path.join(input_dir, n) for n in names
                 if os.path.isfile(os.path.join(input_dir, n))]
        if not found:
            raise HierError(f"{os.path.join(input_dir, names[0])} not found (the {split} split; "
                            f"also looked for {', '.join(names[1:])}; --splits chooses the "
                            f"splits)")
        if len(found) > 1:
            logger.info(f"[{split}] reading {found[0]}, not {', '.join(found[1:])}")
        out.append((split, found[0]))
    return out


def convert_split(path: str, split: str, output_dir: str, paragraphs: str = "documents",
                  max_documents: int = 0, shard: Optional[Shard] = None) -> collections.Counter:
    """Convert one split file of the schema (or its ``shard``, a block of its examples:
    :mod:`fairseq_hier.data.shards`) to ``output_dir/{split}.src/.tgt/.ids`` (and
    ``.refs.jsonl`` where an example of the file has several summaries); logs and returns its
    counts."""
    selection = select(shard, [path], lambda: sum(1 for _ in read_examples(
        path, collections.Counter(), log_unknown=False)))
    several = has_several_summaries(path)
    names = [*OUTPUTS, *([REFS] if several else [])]
    outputs = [os.path.join(output_dir, f"{split}.{name}") for name in names]
    stats, skipped = collections.Counter(), []
    markup, with_markup = collections.Counter(), 0
    with atomic_outputs(outputs, inputs=[path]) as handles:
        files = dict(zip(names, handles))
        for example in selection.take(read_examples(path, stats)):
            source = _source_line(example, paragraphs, max_documents, stats)
            if source is None:
                stats["skipped_no_paragraph"] += 1
                skipped.append(example.line)
                continue
            # <t> sentence tags are boundaries, not text (ROUGE-1.5.5 would read a tagged
            # reference as empty): dropped as every reader drops them, counted
            summaries = [clean(summary_fields(s, stats)[0], stats) for s in example.summaries]
            files["src"].write(source + "\n")
            files["tgt"].write(summaries[0] + "\n")
            files["ids"].write(example.id + "\n")
            if several:
                files[REFS].write(json.dumps(summaries, ensure_ascii=False) + "\n")
            stats["examples"] += 1
            stats["summaries"] += len(summaries)
            if len(summaries) > 1:
                stats["examples_with_several_summaries"] += 1
            found = markup_counts(summaries)
            markup.update(found)
            with_markup += bool(found)
        if not stats["examples"]:
            raise HierError(f"{path}: no example to write (every example of it is skipped: "
                            f"no non-empty paragraph)" if skipped else f"{path}: no example")
    stale = os.path.join(output_dir, f"{split}.{REFS}")
    if not several and os.path.isfile(stale):  # an earlier conversion's: not these examples'
        os.remove(stale)
        logger.info(f"[{split}] removed {stale}: no example of {path} has several summaries")
    mark_outputs([os.path.join(output_dir, f"{split}.{name}") for name in (*OUTPUTS, REFS)],
                 selection)
    log_split(logger, split, f"{selection.label}{path} -> {', '.join(outputs)}", outputs[1],
              stats, skipped, markup, with_markup, "no non-empty paragraph")
    return stats


def _source_line(example, paragraphs: str, max_documents: int,
                 stats: collections.Counter) -> Optional[str]:
    """The raw source line of an example (its title, or the empty title slot, then its
    paragraphs), or None when no paragraph is left."""
    empty_before = stats["empty_documents"]
    texts = split_paragraphs(example.documents, paragraphs, stats, max_documents)
    if not texts:
        return None
    kept = len(example.documents[:max_documents or None])
    stats["documents"] += kept - (stats["empty_documents"] - empty_before)
    stats["paragraphs"] += len(texts)
    title = clean(example.title or "", stats)
    if title:
        stats["titles"] += 1
        return f"{title} {SEPARATOR} " + f" {SEPARATOR} ".join(texts)
    return source_line(texts)


def convert(files: Sequence[Tuple[str, str]], output_dir: str, paragraphs: str = "documents",
            max_documents: int = 0,
            shard: Optional[Shard] = None) -> Dict[str, collections.Counter]:
    """Convert every (split, file), or the ``shard`` of each; the counts per split."""
    return {split: convert_split(path, split, output_dir, paragraphs, max_documents, shard)
            for split, path in files}
