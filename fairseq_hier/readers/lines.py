"""Lines and JSON lines of the published layouts: numbered text lines (gzip-compressed or not),
line counts, two line-aligned files, and the JSON checks whose errors name file and line.

One name per contract: :func:`numbered_lines` (published layouts: ``(n, text)``, gzip read,
:class:`ReaderError`), :func:`line_texts` (our plain UTF-8 files: the texts only),
:func:`count_lines` (checked, raises) and :func:`progress_total` (a progress bar's guess, None
when unreadable). :func:`fairseq_hier.io.iter_lines` keeps each line's end (io is below us).

Imports the standard library, :mod:`fairseq_hier.errors` and :mod:`fairseq_hier.io` only.
"""

import collections
import gzip
import json
from typing import Callable, Iterator, List, Optional, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.io import iter_lines, strip_bom

GZIP_MAGIC = b"\x1f\x8b"


class ReaderError(HierError):
    """A malformed file or record; the message is one line ``"path:line: what is wrong"``."""


# ---------------------------------------------------------------------------------------------
# text lines
# ---------------------------------------------------------------------------------------------

def numbered_lines(path: str) -> Iterator[Tuple[int, str]]:
    """(1-based line number, line without ``\\n`` / ``\\r\\n``), read lazily (the arXiv
    training file holds gigabytes); only ``\\n`` ends a line. A UTF-8 BOM at the start is
    removed with a warning (:func:`fairseq_hier.io.strip_bom`, as the text readers do); a
    non-UTF-8 line is an error naming it. A gzip-compressed file (recognised by its
    magic bytes, not its name: WCEP's ``.jsonl.gz``) is read through its decompressed stream
    (:func:`gzip_lines`)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ReaderError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        if f.read(2) == GZIP_MAGIC:
            yield from gzip_lines(path)
            return
        f.seek(0)
        for n, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ReaderError(f"{path}:{n}: not UTF-8 text ({e.reason} at byte {e.start} "
                                  f"of the line)") from None
            yield n, (strip_bom(path, line) if n == 1 else line).rstrip("\n").rstrip("\r")


def gzip_lines(path: str) -> Iterator[Tuple[int, str]]:
    """:func:`numbered_lines` of a gzip-compressed file; a non-UTF-8 byte is reported after the
    last good line (the stream is decoded in blocks)."""
    n = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
            for n, line in enumerate(f, start=1):
                yield n, (strip_bom(path, line) if n == 1 else line).rstrip("\n").rstrip("\r")
    except UnicodeDecodeError as e:
        raise ReaderError(f"{path}:{n + 1}: not UTF-8 text after the decompression ({e.reason}; "
                          f"the bad byte is on this line or a later one)") from None
    except (OSError, EOFError) as e:  # a truncated or corrupt gzip stream
        raise ReaderError(f"{path}:{n + 1}: cannot decompress ({e})") from None


def line_texts(path: str) -> Iterator[str]:
    """The lines of a plain UTF-8 file (the raw files our steps write) without their ends,
    streamed (only ``\\n`` ends a line, as :func:`fairseq_hier.io.read_lines`). HierError naming
    the file (and line) if it cannot be read."""
    for _, line in iter_lines(path):
        yield line.rstrip("\n").rstrip("\r")


def count_lines(path: str) -> int:
    """The lines of ``path`` (ending at ``\\n`` only), each checked to be UTF-8; HierError
    naming the file (and line) if it cannot be read, is not UTF-8 or is empty."""
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


def progress_total(path: str) -> Optional[int]:
    """The number of ``\\n`` in a file (a progress bar's total), None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    except OSError:
        return None


def aligned_lines(src_path: str, tgt_path: str,
                  mismatch: Callable[[int, int], ReaderError]) -> Iterator[Tuple[int, str, str]]:
    """(line number, source line, target line) of two line-aligned files
    (:func:`numbered_lines`); once the shorter one has ended, raises ``mismatch(source lines,
    target lines)`` (each layout words its own error)."""
    sources, targets = numbered_lines(src_path), numbered_lines(tgt_path)
    n = 0
    for n, source in sources:
        target = next(targets, None)
        if target is None:
            raise mismatch(n + sum(1 for _ in sources), n - 1)
        yield n, source, target[1]
    rest = sum(1 for _ in targets)
    if rest:
        raise mismatch(n, n + rest)


# ---------------------------------------------------------------------------------------------
# JSON lines and JSON checks
# ---------------------------------------------------------------------------------------------

def json_type(value) -> str:
    """The JSON name of a decoded value's type, for messages ("object", "list", "null" ...)."""
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null",
            int: "number", float: "number"}.get(type(value), type(value).__name__)


def json_line(line: str, where: str, expected: str):
    """The JSON value of one line; invalid JSON is a :class:`ReaderError` naming ``where``
    (``path:line``), the column and what was ``expected``."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise ReaderError(f"{where}: invalid JSON ({e.msg} at column {e.colno}; "
                          f"expected {expected})") from None


def json_lines(path: str, keys: Tuple[str, ...], stats: collections.Counter,
               expected: str = "one JSON object per line",
               what: str = "the record") -> Iterator[Tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON-lines file (:func:`numbered_lines`);
    each line must be one JSON object with ``keys`` (JSON columns count within the line).
    ``expected`` / ``what`` word the errors (e.g. "one cluster, a JSON object, per line", "the
    cluster"). Blank lines are counted in ``blank_lines_skipped``."""
    for lineno, line in numbered_lines(path):
        if not line.strip():
            stats["blank_lines_skipped"] += 1
            continue
        obj = json_line(line, f"{path}:{lineno}", expected)
        check_object(obj, keys, f"{path}:{lineno}", expected, what)
        yield lineno, obj


def json_document(path: str):
    """The value of a whole-file JSON document (a BOM removed as :func:`numbered_lines`
    removes it); errors name the line and column."""
    try:
        with open(path, encoding="utf-8") as f:
            text = strip_bom(path, f.read())
    except OSError as e:
        raise ReaderError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ReaderError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReaderError(f"{path}:{e.lineno}: invalid JSON ({e.msg} at column {e.colno}; "
                          f"expected one JSON list)") from None


def check_object(obj, keys: Tuple[str, ...], where: str, expected: str,
                 what: str = "the record") -> None:
    """``obj`` must be a JSON object holding ``keys``, else one error naming ``where``."""
    if not isinstance(obj, dict):
        raise ReaderError(f"{where}: {what} is a JSON {json_type(obj)} (expected {expected} "
                          f"with keys {', '.join(keys)})")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ReaderError(f"{where}: {what} lacks the key(s) {', '.join(missing)} (expected "
                          f"keys {', '.join(keys)}; has {', '.join(sorted(obj)) or 'none'})")


def typed_field(obj: dict, key: str, kind: type, where: str, expected: str, what: str = ""):
    """``obj[key]``, which must be a ``kind``, else one error naming ``where``, ``what`` and the
    key."""
    value = obj[key]
    if not isinstance(value, kind):
        name = f"{what} '{key}'" if what else f"'{key}'"
        raise ReaderError(f"{where}: {name} is a JSON {json_type(value)} (expected {expected})")
    return value


def str_list(obj: dict, key: str, where: str, expected: str,
             item: Optional[str] = None) -> List[str]:
    """``obj[key]``, a list of strings; errors name ``expected`` (the list) and ``item`` (one of
    its strings; default: ``expected``)."""
    value = typed_field(obj, key, list, where, expected)
    for j, text in enumerate(value):
        if not isinstance(text, str):
            raise ReaderError(f"{where}: '{key}' item {j} is a JSON {json_type(text)} "
                              f"(expected {item or expected})")
    return value


def json_id(obj: dict, where: str) -> Optional[str]:
    """An object's ``id`` as text (a string, or an integer written in decimal), None when it has
    none; an id that is empty, or holds a tab, a line break or surrounding spaces, is an error
    (ids are written one per line)."""
    if "id" not in obj:
        return None
    value = obj["id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ReaderError(f"{where}: 'id' is a JSON {json_type(value)} (expected a string or an "
                          f"integer)")
    text = str(value)
    if not text or text != text.strip() or any(c in text for c in "\t\n\r\x0b\x0c"):
        raise ReaderError(f"{where}: 'id' {text!r} is empty, or holds a tab, a line break or "
                          f"surrounding spaces (expected an id on one line, or an integer)")
    return text
