"""Convert your own data (one JSON object per line) to fairseq-hier's raw format
(RAW/{split}.src/.tgt/.ids), for every model of ``--task hierarchical_summarization``.

    fairseq-hier-jsonl-to-raw --input-dir DATA --output-dir RAW [--splits train,valid,test] \\
        [--paragraphs documents|blocks|lines] [--max-documents N]
    fairseq-hier-jsonl-to-raw --train a.jsonl --valid b.jsonl --test c.jsonl --output-dir RAW

Input (``fairseq_hier/data/own_data.py``, docs/data-formats.md "Your own data"): one example per
line, ``{"id"?: str|int, "title"?: str|null, "documents": [str, ...], "summary": str | [str,
...]}``; ``--input-dir`` holds ``{train,valid,test}.jsonl`` (``val.jsonl`` for valid; ``.jsonl.gz``
too). Every example needs a summary: a file of documents without summaries is summarised by
``fairseq-hier summarize`` on a trained checkpoint, not converted.

What becomes a paragraph (``--paragraphs``, the record option ``paragraphs`` of the inference
pipeline, which splits the same way): ``documents`` (default: each document is one paragraph,
its line breaks become spaces), ``blocks`` (each block of a document between blank lines),
``lines`` (each non-empty line). ``--max-documents N`` keeps the first N documents of an example.

Output per split: ``RAW/{split}.src`` (``title <P> paragraph 1 <P> paragraph 2 ...``; without a
title, ``<P> paragraph 1 ...``), ``RAW/{split}.tgt`` (the first summary), ``RAW/{split}.ids``
(the example's id, else its 1-based line number) and, only where some example of the split has
several summaries, ``RAW/{split}.refs.jsonl`` (one JSON list of all its summaries per line, for
``fairseq-hier-rouge``'s multi-reference scoring; a stale one of an earlier conversion is
removed). Text is cleaned onto one line: whitespace collapsed, a literal ``<P>`` written as
``< P >``, U+2581 as ``_``; a summary's ``<t> ... </t>`` sentence tags are dropped (counted).
A split's files appear only once the whole split has been read. Per split, one log line
counts examples, documents, paragraphs, summaries, empty documents and paragraphs dropped,
examples skipped (no non-empty paragraph: their lines are listed), documents beyond
``--max-documents``, escapes; unknown keys are named once with their count. A bad line:
one line ``PROG: error: FILE:LINE (id ...): 'FIELD' ...``, exit status 1, no file written.
"""

import sys

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.data.own_data import PARAGRAPH_MODES
from fairseq_hier.preparation.own_data import convert, split_files

PROG = "fairseq-hier-jsonl-to-raw"


def run(args) -> None:
    files = split_files(args.input_dir, args.splits,
                        {"train": args.train, "valid": args.valid, "test": args.test})
    convert(files, args.output_dir, args.paragraphs, args.max_documents or 0, args.shard)


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("--input-dir", help="folder of {train,valid,test}.jsonl (val.jsonl for "
                                       "valid; .jsonl.gz too)")
    p.add_argument("--splits", default=None,
                   help="with --input-dir: comma-separated splits (default: train,valid,test)")
    for split in ("train", "valid", "test"):
        p.add_argument(f"--{split}", metavar="FILE", help=f"the {split} split's file (instead "
                                                          f"of --input-dir)")
    p.add_argument("--output-dir", required=True,
                   help="folder for {split}.src, .tgt, .ids (and .refs.jsonl)")
    p.add_argument("--paragraphs", choices=PARAGRAPH_MODES, default="documents",
                   help="what becomes a paragraph: each document (default), each block between "
                        "blank lines, or each non-empty line")
    p.add_argument("--max-documents", type=positive_int, default=None, metavar="N",
                   help="keep the first N documents of each example, before empty ones are "
                        "dropped (default: all)")
    add_shard_argument(p)
    return p


def cli_main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
