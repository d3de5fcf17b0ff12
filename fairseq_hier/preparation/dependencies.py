"""A dependency parse projected onto the pieces of a binarized source, for ParsingSum (003): the
CoNLL-U of an example and its subword source line are matched word by word, and each word's head
becomes the code of its first piece (:mod:`fairseq_hier.data.dependency` holds the rules and
codes; ``fairseq-hier-deps`` documents the errors). The summarizer projects the parse of new text
with the same function.
"""

import logging
import time
from itertools import zip_longest
from typing import Iterator, List, Optional

from fairseq_hier.data.shards import Shard, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import iter_lines

logger = logging.getLogger("fairseq_hier.dependencies")


def source_lines(path: str) -> Iterator[List[str]]:
    """The whitespace tokens of each line of ``path`` (lines end at ``\\n`` only)."""
    for _, line in iter_lines(path):
        yield line.split()


def _count_rest(iterator) -> int:
    return sum(1 for _ in iterator)


def project_dependencies(conllu: str, source: str, subword: str, output_prefix: str,
                         separator: str = "<P>", shard: Optional[Shard] = None) -> None:
    """Project the parse of ``conllu`` onto the pieces of ``source`` (one line per example, the
    pieces made words by the ``subword`` scheme) and write ``output_prefix.{bin,idx}``, for the
    examples of ``shard`` only when given (:mod:`fairseq_hier.data.shards`; both files are read
    whole and must still agree); logs examples, words, pieces, separators and arcs written."""
    import numpy as np  # imported here: keeps startup light

    from fairseq_hier.data.dependency import (DependencyWriter, match_words, project_heads,
                                              read_conllu, source_words)

    selection = select(shard, [source, conllu], lambda: _count_rest(source_lines(source)),
                       unit="lines")
    examples = words = pieces = separators = arcs = 0
    parses, sources = read_conllu(conllu), source_lines(source)
    with DependencyWriter(output_prefix, inputs=[conllu, source]) as writer:
        start = time.perf_counter()
        for n, (parse, tokens) in enumerate(zip_longest(parses, sources), 1):
            if parse is None or tokens is None:
                have_parse = n - 1 + (parse is not None) + _count_rest(parses)
                have_source = n - 1 + (tokens is not None) + _count_rest(sources)
                raise HierError(f"{conllu} has {have_parse} examples ('# newdoc' lines), "
                                f"{source} has {have_source} lines: one example per "
                                f"source line is expected")
            if not selection.contains(n - 1):
                continue
            line_words, piece_word = source_words(tokens, subword, separator)
            diff = match_words(parse.tokens, line_words, separator)
            if diff is not None:
                raise HierError(f"{conllu} example {n} (# newdoc on line {parse.line}) "
                                f"does not match {source} line {n}: {diff}")
            writer.add(project_heads(piece_word, parse.heads, n))
            examples += 1
            words += len(line_words)
            separators += int(np.count_nonzero(piece_word < 0))
            pieces += len(tokens)
            arcs += sum(h >= 0 for h in parse.heads)
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"{selection.label}wrote {examples} examples ({words} words, "
                f"{pieces - separators} pieces, {separators} separators, {arcs} arcs, "
                f"{words - arcs} roots) to {output_prefix}.{{bin,idx}} in {seconds:.1f} s")
