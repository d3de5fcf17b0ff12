"""Convert Multi-News or WCEP, as published, to fairseq-hier's raw format (RAW/{split}.src/.tgt).

    fairseq-hier-mds-to-raw --dataset {multi_news,multi_news_preprocessed,wcep} \\
        --input-dir DIR --output-dir RAW [--splits train,valid,test] [--max-articles N] \\
        [--with-titles]

Input layouts (``fairseq_hier/data/mds_readers.py``): Multi-News raw ``{train,val,test}.src`` /
``.tgt`` (also the cleaned re-release), the preprocessed Multi-News
``{split}.txt.src.tokenized.fixed.cleaned.final.truncated.txt`` / ``.tgt...``, WCEP
``{train,val,test}.jsonl(.gz)``. The publishers' ``val`` is written as ``valid`` (fairseq's name).

Output: ``RAW/{split}.src`` (``<P> document 1 <P> document 2 ...``: no title, each document one
paragraph, untokenised) and ``RAW/{split}.tgt`` (one summary per line). A split's files appear
only once the whole split has been read (a malformed record leaves none behind). Per split, one
log line counts examples, documents, empty documents dropped, examples skipped, documents beyond
``--max-articles`` (WCEP-10 / WCEP-100: 10 / 100), literal ``<P>`` escaped, ``<t>`` sentence
tags dropped; the lines of skipped examples are listed (the first 10). Markup left in the targets
(``<unk>``, ``<br>``: ROUGE-1.5.5 reads a sentence only up to its first ``<``) is counted and
named in a warning; the targets keep it (it is the dataset's text). Malformed input: one line
``PROG: error: path:line: ...``, exit status 1.
"""

import collections
import logging
import os
import sys

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.data.markup import describe_markup, markup_counts
from fairseq_hier.data.mds_readers import (DATASETS, PUBLISHED_SPLIT, describe_skipped,
                                           format_counts, input_paths, read_split, source_line)
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs

PROG = "fairseq-hier-mds-to-raw"
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


def convert_split(args, split: str) -> collections.Counter:
    """Read one split and write ``RAW/{split}.src/.tgt``; return its counts."""
    stats, skipped = collections.Counter(), []
    examples = read_split(args.dataset, args.input_dir, split, stats=stats, skipped=skipped,
                          max_articles=args.max_articles, with_titles=args.with_titles)
    outputs = [os.path.join(args.output_dir, f"{split}.{ext}") for ext in ("src", "tgt")]
    markup, with_markup = collections.Counter(), 0
    # refused when the published files are the outputs (Multi-News's are train.src ...)
    with atomic_outputs(outputs, inputs=input_paths(args.dataset, args.input_dir, split)) as (
            src, tgt):
        for ex in examples:
            src.write(source_line(ex.documents) + "\n")
            tgt.write(ex.summary + "\n")
            found = markup_counts([ex.summary])
            markup.update(found)
            with_markup += bool(found)
    logger.info(f"[{split}] {outputs[0]}, {outputs[1]}: {format_counts(stats)}")
    if markup:
        logger.warning(f"[{split}] {outputs[1]}: {with_markup} of {stats['examples']} targets "
                       f"hold markup that ROUGE-1.5.5 reads only up to its '<' (kept: it is the "
                       f"dataset's text): {describe_markup(markup)}")
    if skipped:
        logger.warning(f"[{split}] {len(skipped)} examples skipped (no non-empty document or an "
                       f"empty summary): {describe_skipped(skipped)}")
    return stats


def run(args) -> None:
    for split in parse_splits(args.splits):
        convert_split(args, split)


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("--dataset", required=True, choices=DATASETS,
                   help="the published layout to read (see the module docstring)")
    p.add_argument("--input-dir", required=True, help="folder of the published files")
    p.add_argument("--output-dir", required=True, help="folder for {split}.src and {split}.tgt")
    p.add_argument("--splits", default="train,valid,test",
                   help="comma-separated splits, our names (default: train,valid,test; the "
                        "published val is read for valid)")
    p.add_argument("--max-articles", type=positive_int, default=None, metavar="N",
                   help="keep the first N documents of each example in file order, before empty "
                        "ones are dropped (WCEP-10: 10, WCEP-100: 100; default: all)")
    p.add_argument("--with-titles", action="store_true",
                   help="wcep: each document is 'title text' instead of the text alone")
    return p


def cli_main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
