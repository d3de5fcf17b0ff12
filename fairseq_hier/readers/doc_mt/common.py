"""What the document-MT readers share: a sentence of our raw layout on one line
(docs/data-formats.md, section "Text policy"), two line-aligned files, the counts each reader
logs. Imports the standard library and :mod:`fairseq_hier.readers`
(:mod:`~fairseq_hier.readers.lines`, :mod:`~fairseq_hier.readers.records`,
:mod:`~fairseq_hier.readers.documents`).
"""

import collections
import logging
import re
from typing import Iterator, List, Tuple

from fairseq_hier.readers import lines
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError
from fairseq_hier.readers.records import collapse

logger = logging.getLogger(__name__)

# how many locations of dropped records the log lists
LOGGED_LOCATIONS = 5
# the numeric id of a <seg> (mteval and WMT XML)
SEG_ID = re.compile(r"[0-9]+")
# ASCII whitespace: what one line of our raw layout cannot hold inside or around a sentence
_ASCII_WHITESPACE = " \t\n\r\f\v"
_ASCII_SPACE_RUN = re.compile(r"[ \t\n\r\f\v]+")


def one_line(text: str, counts: collections.Counter, unicode_spaces: bool = False) -> str:
    """``text`` as one sentence of our raw layout: surrounding whitespace removed and every inner
    run of it replaced by one space. Whitespace is ASCII whitespace only (the published text
    is kept, Unicode spaces included), or with ``unicode_spaces`` every whitespace character
    (sacreBLEU's ``Dataset._clean``). Adds to ``counts`` (``sentences_trimmed``,
    ``sentences_whitespace_collapsed``) when a non-empty result differs from ``text``."""
    if unicode_spaces:
        stripped = text.strip()
        out = collapse(stripped)
    else:
        stripped = text.strip(_ASCII_WHITESPACE)
        out = _ASCII_SPACE_RUN.sub(" ", stripped)
    if out.strip():
        counts["sentences_trimmed"] += stripped != text
        counts["sentences_whitespace_collapsed"] += out != stripped
    return out

def aligned_lines(src_path: str, tgt_path: str) -> Iterator[Tuple[int, str, str]]:
    """(line number, source line, target line) of two line-aligned files; raises, naming the
    first unpaired line, once the shorter file has ended."""

    def mismatch(n_src: int, n_tgt: int) -> ReaderError:
        (longer, n_long), (shorter, n_short) = sorted(((src_path, n_src), (tgt_path, n_tgt)),
                                                      key=lambda side: -side[1])
        return ReaderError(f"{longer}:{n_short + 1}: line counts differ: {longer} has {n_long} "
                           f"lines, {shorter} has {n_short} (the two files must be line-aligned)")

    return lines.aligned_lines(src_path, tgt_path, mismatch)


def log_counts(label: str, docs: List[Document], skipped: collections.Counter) -> None:
    """One log line: the documents and sentence pairs read, and every count of what was dropped."""
    sentences = sum(len(d.src) for d in docs)
    dropped = "".join(f"; {key}={value}" for key, value in sorted(skipped.items()) if value)
    logger.info(f"{label}: {len(docs)} documents, {sentences} sentence pairs{dropped}")


def count_bad(where: str, problem: str, counts: collections.Counter,
              first_bad: List[str]) -> None:
    """Count a bad pair dropped with ``skip_bad``; keep the first few ``"where: problem"``."""
    counts["bad_pairs_skipped"] += 1
    if len(first_bad) < LOGGED_LOCATIONS:
        first_bad.append(f"{where}: {problem}")
