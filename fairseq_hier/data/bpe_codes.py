"""fastBPE's joint codes (paper 004 Sec. 4.2, as fairseq's WMT recipes learn them): the codes
file checked before fastBPE reads it (:func:`check_codes`, also by ``document_translation``
before its first update), applied (:func:`apply_bpe`) and undone (:func:`remove_bpe`). The
codes file: docs/data-formats.md, section "fastBPE codes".

May import: ``errors`` and the standard library; fastBPE inside the function that applies it.
"""

import os
import re
from typing import Dict, List, Tuple

from ..errors import HierError

BPE_CONTINUATION = "@@ "  # fastBPE's (and subword-nmt's) marker; fairseq's --remove-bpe default
CODES_LINE = re.compile(r"([^ \n]+) ([^ \n]+) ([0-9]+)")
LEARN_HINT = "learn them with: fastbpe learnbpe 40000 train.tok.SRC train.tok.TGT > CODES"
_checked_codes: Dict[str, Tuple[int, int]] = {}  # path -> (size, mtime) of codes found good


def remove_bpe(text: str) -> str:
    """Undo fastBPE: ``Te@@ st`` -> ``Test`` (also a trailing ``@@``)."""
    return (text + " ").replace(BPE_CONTINUATION, "").rstrip()


def check_codes(path: str) -> None:
    """Raise :class:`HierError` naming ``path`` (and the line) unless it holds fastBPE codes as
    ``fastbpe learnbpe`` writes them (docs/data-formats.md): a folder, an empty file, a line
    that is not ``LEFT RIGHT COUNT`` or not UTF-8, a count above the line before, a last line
    without its line end (a cut file)."""
    if os.path.isdir(path):
        raise HierError(f"{path}: is a folder, not fastBPE codes ({LEARN_HINT})")
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise HierError(f"{path} not found ({LEARN_HINT})") from None
    except OSError as e:
        raise HierError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        stamp = os.fstat(f.fileno())
        if _checked_codes.get(path) == (stamp.st_size, stamp.st_mtime_ns):
            return
        lineno, previous = 0, None
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.rstrip(b"\n").decode("utf-8")
            except UnicodeDecodeError as e:
                raise HierError(f"{path}:{lineno}: not UTF-8 ({e.reason} at byte {e.start} of "
                                f"the line): not fastBPE codes") from None
            match = CODES_LINE.fullmatch(line)
            if match is None:
                raise HierError(f"{path}:{lineno}: not a fastBPE codes line (expected 'LEFT RIGHT "
                                f"COUNT', single spaces), got {line[:60]!r}")
            if not raw.endswith(b"\n"):
                raise HierError(f"{path}:{lineno}: the last line has no line end: the codes file "
                                f"is cut (fastbpe learnbpe ends every line)")
            count = int(match.group(3))
            if previous is not None and count > previous:
                raise HierError(f"{path}:{lineno}: count {count} is above the line before's "
                                f"{previous}: fastbpe learnbpe writes its merges by decreasing "
                                f"count (are two codes files joined?)")
            previous = count
    if lineno == 0:
        raise HierError(f"{path}: empty file, not fastBPE codes ({LEARN_HINT})")
    _checked_codes[path] = (stamp.st_size, stamp.st_mtime_ns)


def apply_bpe(codes: str, sentences: List[str]) -> List[str]:
    """fastBPE's segmentation of whitespace-tokenised sentences with the codes ``codes``
    (checked first: :func:`check_codes`)."""
    check_codes(codes)
    import fastBPE  # lazy: a compiled extension only the BPE steps need

    return fastBPE.fastBPE(codes).apply(sentences)
