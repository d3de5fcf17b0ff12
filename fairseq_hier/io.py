"""Line-aligned text files: the small I/O helpers shared by the commands (``fairseq_hier/cli``),
the decoder's side files (``fairseq_hier/generation``) and the recipes.

Standard library only: importing this module imports neither torch nor fairseq, so the scoring
commands that use it start in well under a second.
"""

import os
from contextlib import contextmanager
from typing import Iterator, List, Sequence, TextIO, Tuple


def iter_lines(path: str) -> Iterator[Tuple[int, str]]:
    """``(1-based line number, text with its line end)`` of each line of a UTF-8 file, streamed.
    Only ``\\n`` ends a line (as :func:`read_lines`). Raises ValueError naming the file (and
    the line, for one that is not UTF-8)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        for lineno, raw in enumerate(f, 1):
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not UTF-8 text ({e.reason} at byte "
                                 f"{e.start} of the line)") from None


class StagedWriter:
    """A writer of files under ``.tmp`` names: ``close()`` finishes and renames them, ``abort()``
    removes them. As a context manager, an exception aborts (so an interrupted run leaves no
    file that would pass for finished output)."""

    def close(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def read_lines(path: str) -> List[str]:
    """The lines of a UTF-8 file, without their line ends.

    Only ``\\n`` (and ``\\r\\n``) end a line: unlike ``str.splitlines``, Unicode separators such
    as U+2028 inside a summary do not split it, so line ``i`` stays example ``i``.
    Raises ValueError naming the file if it cannot be read or is not UTF-8.
    """
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            return [line.rstrip("\n").rstrip("\r") for line in f]
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None


def check_parallel(path_a: str, lines_a: List[str], path_b: str, lines_b: List[str]) -> None:
    """Raise ValueError naming both files and their line counts unless they are equal."""
    if len(lines_a) != len(lines_b):
        raise ValueError(f"line counts differ: {path_a} has {len(lines_a)} lines, "
                         f"{path_b} has {len(lines_b)} lines (one example per line is expected)")


@contextmanager
def atomic_outputs(paths: Sequence[str]) -> Iterator[List[TextIO]]:
    """Text files opened for writing under ``.tmp`` names and renamed to ``paths`` only when the
    block completes: a failed run (a bad record half-way) leaves no file that a recipe would take
    for a finished step. Creates the parent folders."""
    for p in paths:
        folder = os.path.dirname(os.path.abspath(p))
        os.makedirs(folder, exist_ok=True)
    handles = [open(p + ".tmp", "w", encoding="utf-8") for p in paths]
    done = False
    try:
        yield handles
        done = True
    finally:
        for p, h in zip(paths, handles):
            h.close()
            if done:
                os.replace(p + ".tmp", p)
            else:
                os.remove(p + ".tmp")
