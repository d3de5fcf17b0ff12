"""Lead baseline (Liu & Lapata 2019; Ma & Zong 2020): the first K tokens of the title followed by
the ranked paragraphs, where K is the token length of that example's reference summary.

Sources are raw lines of the task's format, ``title <P> paragraph 1 <P> paragraph 2 ...``,
whitespace-tokenized; the paragraph separator (``--paragraph-separator``, default ``<P>``) is a
token of its own and is removed, so the title and the paragraphs are read in order as one text.
K counts the whitespace tokens of the reference line as it is. Line counts must be equal.

An empty source line (no token besides separators) or an empty reference gets an empty summary;
the log counts each kind and names their first lines, as it counts the sources shorter than
their reference (whose summary is the whole source).
"""

import logging
from typing import List

from fairseq_hier.io import atomic_outputs, check_parallel, read_lines
from fairseq_hier.readers.mds import describe_skipped

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
    short, empty_sources, empty_references = 0, [], []
    with atomic_outputs([output_path], inputs=[source_path, reference_path]) as (f,):
        for n, (source, reference) in enumerate(zip(sources, references), 1):
            summary = lead(source, reference, separator)
            k = len(reference.split())
            if not k:
                empty_references.append(n)
            elif not lead_tokens(source, 1, separator):
                empty_sources.append(n)
            else:
                short += len(summary.split()) < k
            f.write(summary + "\n")
    if short:
        logger.warning(f"{short} source(s) are shorter than their reference: "
                       f"their Lead summary is the whole source")
    for lines, path, what in ((empty_sources, source_path, f" (no token besides {separator})"),
                              (empty_references, reference_path, "")):
        if lines:
            logger.warning(f"{path}: {len(lines)} empty line(s){what}: {describe_skipped(lines)}; "
                           f"their Lead summary is empty")
    return len(sources)
