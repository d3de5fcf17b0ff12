"""``fairseq-hier-deps``: a dependency parse projected onto the pieces of a binarized source, for
ParsingSum (003): ``PREFIX.{bin,idx}``, one int16 code per source token and EOS.

    fairseq-hier-deps --conllu parsed/train.conllu --source bpe/train.src \\
        --subword sentencepiece --output-prefix data-bin/train.parse.spacy

Reads the CoNLL-U (``fairseq-hier-parse``'s or any parser's: ``# newdoc`` starts an example)
and the subword source that fairseq-preprocess binarized, both streaming. Each source line's
words are rebuilt from its pieces by the ``--subword`` scheme (separators are not words) and
must equal the example's tokens one by one; each word's head becomes the code of its first
piece (:mod:`fairseq_hier.data.dependency` for the rules and codes). Errors, one line (exit 1):
a malformed CoNLL-U line (file and line), the first token that differs (example, token index,
both tokens), different numbers of examples; an interrupted run leaves no output file. Logs
examples, words, pieces, separators and arcs written.
"""

import logging
import sys
import time
from itertools import zip_longest
from typing import Iterator, List, Optional

from fairseq_hier.cli.common import command_parser, run_command
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.dependencies")
PROG = "fairseq-hier-deps"


def source_lines(path: str) -> Iterator[List[str]]:
    """The whitespace tokens of each line of ``path`` (lines end at ``\\n`` only)."""
    from fairseq_hier.io import iter_lines

    for _, line in iter_lines(path):
        yield line.split()


def _count_rest(iterator) -> int:
    return sum(1 for _ in iterator)


def run(args) -> None:
    import numpy as np

    from fairseq_hier.data.dependency import (DependencyWriter, match_words, project_heads,
                                              read_conllu, source_words)

    examples = words = pieces = separators = arcs = 0
    parses, sources = read_conllu(args.conllu), source_lines(args.source)
    with DependencyWriter(args.output_prefix, inputs=[args.conllu, args.source]) as writer:
        start = time.perf_counter()
        for n, (parse, tokens) in enumerate(zip_longest(parses, sources), 1):
            if parse is None or tokens is None:
                have_parse = n - 1 + (parse is not None) + _count_rest(parses)
                have_source = n - 1 + (tokens is not None) + _count_rest(sources)
                raise HierError(f"{args.conllu} has {have_parse} examples ('# newdoc' lines), "
                                f"{args.source} has {have_source} lines: one example per "
                                f"source line is expected")
            line_words, piece_word = source_words(tokens, args.subword, args.separator)
            diff = match_words(parse.tokens, line_words, args.separator)
            if diff is not None:
                raise HierError(f"{args.conllu} example {n} (# newdoc on line {parse.line}) "
                                f"does not match {args.source} line {n}: {diff}")
            writer.add(project_heads(piece_word, parse.heads, n))
            examples += 1
            words += len(line_words)
            separators += int(np.count_nonzero(piece_word < 0))
            pieces += len(tokens)
            arcs += sum(h >= 0 for h in parse.heads)
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"wrote {examples} examples ({words} words, {pieces - separators} pieces, "
                f"{separators} separators, {arcs} arcs, {words - arcs} roots) to "
                f"{args.output_prefix}.{{bin,idx}} in {seconds:.1f} s")


def cli_main(argv: Optional[List[str]] = None) -> int:
    from fairseq_hier.data.dependency import SUBWORD_SCHEMES

    p = command_parser(PROG, __doc__)
    p.add_argument("--conllu", required=True,
                   help="the split's parse (fairseq-hier-parse's PREFIX.conllu or any CoNLL-U "
                        "with '# newdoc' per example)")
    p.add_argument("--source", required=True,
                   help="the split's subword source, as given to fairseq-preprocess")
    p.add_argument("--subword", required=True, choices=SUBWORD_SCHEMES,
                   help="how the source's pieces make words: sentencepiece (U+2581 starts a "
                        "word), bpe (@@ continues), none (one token, one word)")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.{bin,idx}; the task reads DATA/SPLIT.parse.NAME")
    p.add_argument("--separator", default="<P>",
                   help="paragraph separator token of the source (default <P>); never a word")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
