"""Lead baseline (Liu & Lapata 2019; Ma & Zong 2020): the first K tokens of the title followed by
the ranked paragraphs, where K is the token length of that example's reference summary.

Sources are raw lines of the task's format, ``title <P> paragraph 1 <P> paragraph 2 ...``,
whitespace-tokenized; the paragraph separator (``--paragraph-separator``, default ``<P>``) is a
token of its own and is removed, so the title and the paragraphs are read in order as one text.
K counts the whitespace tokens of the reference line as it is. Line counts must be equal.
"""

import logging
from typing import List

from fairseq_hier.io import atomic_outputs, check_parallel, read_lines

logger = logging.getLogger("fairseq_hier.lead")


def lead_tokens(source: str, k: int, separator: str = "<P>") -> List[str]:
    """The first ``k`` tokens of ``source`` (title first, then the paragraphs), separators removed."""
    return [t for t in source.split() if t != separator][:k]


def lead(source: str, reference: str, separator: str = "<P>") -> str:
    """The Lead summary of one example: as many source tokens as ``reference`` has."""
    return " ".join(lead_tokens(source, len(reference.split()), separator))


def lead_file(source_path: str, reference_path: str, output_path: str,
              separator: str = "<P>") -> int:
    """Write one Lead summary per line of ``source_path`` (all or nothing; an output that is one
    of the inputs is refused); return the number written."""
    sources, references = read_lines(source_path), read_lines(reference_path)
    check_parallel(source_path, sources, reference_path, references)
    short = 0
    with atomic_outputs([output_path], inputs=[source_path, reference_path]) as (f,):
        for source, reference in zip(sources, references):
            summary = lead(source, reference, separator)
            short += len(summary.split()) < len(reference.split())
            f.write(summary + "\n")
    if short:
        logger.warning(f"{short} source(s) are shorter than their reference: "
                       f"their Lead summary is the whole source")
    empty = sum(not r.split() for r in references)
    if empty:
        logger.warning(f"{empty} reference(s) are empty: their Lead summary is empty")
    return len(sources)
