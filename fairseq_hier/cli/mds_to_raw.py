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

import sys

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.data.mds_readers import DATASETS
from fairseq_hier.preparation.mds import convert_split, parse_splits

PROG = "fairseq-hier-mds-to-raw"


def run(args) -> None:
    for split in parse_splits(args.splits):
        convert_split(args.dataset, args.input_dir, args.output_dir, split,
                      max_articles=args.max_articles, with_titles=args.with_titles,
                      shard=args.shard)


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
    add_shard_argument(p)
    return p


def cli_main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
