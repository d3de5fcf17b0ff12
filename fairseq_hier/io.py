"""Line-aligned text files: the small I/O helpers shared by the commands (``fairseq_hier/cli``),
the decoder's side files (``fairseq_hier/generation``) and the recipes.

Standard library only: importing this module imports neither torch nor fairseq, so the scoring
commands that use it start in well under a second.
"""

import fcntl
import json
import logging
import os
import stat
import tempfile
from contextlib import contextmanager
from typing import IO, Iterable, Iterator, List, Optional, Sequence, Tuple

from .errors import HierError

logger = logging.getLogger(__name__)
BOM = "\ufeff"


def iter_lines(path: str) -> Iterator[Tuple[int, str]]:
    """``(1-based line number, text with its line end)`` of each line of a UTF-8 file, streamed.
    Only ``\\n`` ends a line (as :func:`read_lines`). Raises HierError naming the file (and
    the line, for one that is not UTF-8)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise HierError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        for lineno, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise HierError(f"{path}:{lineno}: not UTF-8 text ({e.reason} at byte "
                                f"{e.start} of the line)") from None
            yield lineno, (strip_bom(path, text) if lineno == 1 else text)


_BOM_LOGGED = set()  # the files whose byte-order mark was logged (once per file and process)


def strip_bom(path: str, first_line: str) -> str:
    """``first_line`` without a leading UTF-8 byte-order mark (Windows editors write one), which
    would otherwise stick to the first token; logs that it was removed, once per file however
    often the file is read."""
    if first_line.startswith(BOM):
        if path not in _BOM_LOGGED:
            _BOM_LOGGED.add(path)
            logger.warning(f"{path}: removed the UTF-8 byte-order mark at the start of line 1")
        return first_line[1:]
    return first_line


def read_lines(path: str) -> List[str]:
    """The lines of a UTF-8 file, without their line ends.

    Only ``\\n`` (and ``\\r\\n``) end a line: unlike ``str.splitlines``, Unicode separators such
    as U+2028 inside a summary do not split it, so line ``i`` stays example ``i``.
    Raises HierError naming the file if it cannot be read or is not UTF-8.
    """
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            lines = [line.rstrip("\n").rstrip("\r") for line in f]
    except OSError as e:
        raise HierError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise HierError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if lines:
        lines[0] = strip_bom(path, lines[0])
    return lines


def batches(items: Iterable, size: int) -> Iterator[List]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    batch: List = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def check_parallel(path_a: str, lines_a: List[str], path_b: str, lines_b: List[str]) -> None:
    """Raise HierError naming both files and their line counts unless they are equal."""
    if len(lines_a) != len(lines_b):
        raise HierError(f"line counts differ: {path_a} has {len(lines_a)} lines, "
                        f"{path_b} has {len(lines_b)} lines (one example per line is expected)")


# ------------------------------------------------------------------------------------ outputs
def _is_stream(path: str) -> bool:
    """True for an existing FIFO, character device or socket (a named pipe, ``/dev/null``) and
    for anything under ``/dev`` or ``/proc`` (``/dev/stdout`` redirected to a file is a link to
    that file): written directly, appending, never replaced."""
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return os.path.exists(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _nearest_existing(path: str) -> str:
    """``path`` or its nearest ancestor that exists, named as ``path`` names it (relative or
    not); ``""`` for the current folder."""
    while path and not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _file_in_the_way(folder: str) -> Optional[str]:
    """The nearest existing ancestor of ``folder`` (itself included) when it is not a folder:
    what stops the folder from being created."""
    existing = _nearest_existing(folder)
    return existing if existing and not os.path.isdir(existing) else None


def check_output_folder(option: str, path: str) -> None:
    """Raise :class:`HierError` naming ``option`` unless ``path`` is a folder this process can
    write into, or one it can create: a file there or in place of one of its parent folders, or
    a folder it may not write to, is refused before any work."""
    blocking = _file_in_the_way(path)
    if blocking is not None:
        where = ("is a file" if os.path.normpath(blocking) == os.path.normpath(path)
                 else f"cannot be made: {blocking} is a file")
        raise HierError(f"{option} {path}: {where} (a folder is expected)")
    existing = _nearest_existing(path) or "."
    if not os.access(existing, os.W_OK | os.X_OK):
        raise HierError(f"{option} {path}: {existing} is not writable")


def check_outputs(option: str, folder: str, paths: Iterable[str],
                  inputs: Iterable[str] = ()) -> None:
    """The checks of :class:`OutputSet`, made before any work: ``folder`` (the value of
    ``option``) can hold the outputs (:func:`check_output_folder`), and no output is an existing
    folder or one of ``inputs``."""
    check_output_folder(option, folder)
    inputs = [os.path.realpath(p) for p in inputs if p is not None]
    for path in paths:
        if os.path.isdir(path):
            raise HierError(f"{option} {folder}: {path} is a folder (the command writes a file "
                            f"there)")
        if os.path.realpath(path) in inputs:
            raise HierError(f"{option} {folder}: {path} is also an input of this command: it "
                            f"would be overwritten; choose another {option}")


class OutputSet:
    """The one way fairseq-hier writes files: a set of outputs written under unique temporary
    names in their targets' folders (``.NAME.XXXX.part``) and moved into place together by
    :meth:`commit`, or removed by :meth:`abort`.

    - Two runs writing the same outputs never share a temporary file; their commits are
      serialised (a lock on each target folder), so every output set on disk comes whole from one
      run: the last to finish.
    - All files of the set or none: a failed move puts back the files the set had replaced.
    - An output that is one of the command's ``inputs``, the same path twice, or an existing
      folder is refused (:class:`HierError`) before anything is written.
    - A symlink is written through (its target is replaced); a FIFO or character device
      (``/dev/stdout``) is written directly and never replaced.

    Use as a context manager (an exception, Ctrl-C included, aborts) or through
    :func:`atomic_outputs` / :func:`staged_outputs`. Creates the targets' parent folders.
    """

    def __init__(self, paths: Sequence[str], inputs: Iterable[str] = ()):
        self.paths = [os.fspath(p) for p in paths]
        inputs = [os.fspath(p) for p in inputs if p is not None]
        for i, path in enumerate(self.paths):
            for src in inputs:
                if _same_file(path, src):
                    raise HierError(f"output {path} is also an input of this command: "
                                    "it would be overwritten; choose another output path")
            for other in self.paths[:i]:
                if _same_file(path, other):
                    raise HierError(f"output {path} is given twice")
            if os.path.isdir(path):
                raise HierError(f"output {path} is a folder (a file path is expected)")
        # a symlink is written through: its final target is the file to replace
        self.targets = [path if _is_stream(path) else os.path.realpath(path)
                        for path in self.paths]
        self.staged: List[str] = []
        try:
            for target in self.targets:
                if _is_stream(target):
                    self.staged.append(target)
                    continue
                folder = os.path.dirname(target)
                blocking = _file_in_the_way(os.path.dirname(path))
                if blocking is not None:
                    raise HierError(f"cannot write {path}: {blocking} is a file, not a folder")
                try:
                    os.makedirs(folder, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.",
                                               suffix=".part")
                except OSError as e:  # name the output, not a temporary name
                    raise type(e)(e.errno, e.strerror, path) from None
                os.close(fd)
                self.staged.append(tmp)
        except BaseException:
            self.abort()
            raise
        self.done = False

    def _temporaries(self) -> List[Tuple[str, str]]:
        return [(tmp, target) for tmp, target in zip(self.staged, self.targets) if tmp != target]

    def abort(self) -> None:
        """Remove every temporary file (an aborted set leaves nothing behind)."""
        for tmp, _ in self._temporaries():
            try:
                os.remove(tmp)
            except FileNotFoundError:
                pass
            except OSError as e:  # the others still go; the one left is named
                logger.warning(f"could not remove the temporary file {tmp}: {e.strerror or e}")
        self.done = True

    def commit(self) -> None:
        """Move every temporary file into place, all or none (see the class doc)."""
        pending = self._temporaries()
        folders = sorted({os.path.dirname(target) for _, target in pending})
        locks = []
        backups: List[Tuple[str, str]] = []  # (backup, target) of the files replaced so far
        created: List[str] = []
        try:
            for folder in folders:  # sorted: two sets over the same folders cannot deadlock
                fd = os.open(folder, os.O_RDONLY)
                locks.append(fd)
                fcntl.flock(fd, fcntl.LOCK_EX)
            for tmp, target in pending:
                backup = None
                try:  # the mode a plain open() would have given (mkstemp makes 0600)
                    os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
                except FileNotFoundError:
                    os.chmod(tmp, 0o666 & ~_umask())
                if os.path.lexists(target):
                    backup = tmp + ".old"
                    try:
                        os.link(target, backup)
                    except OSError:  # no hard links on this file system: no rollback for it
                        backup = None
                os.replace(tmp, target)
                (backups.append((backup, target)) if backup else created.append(target))
        except BaseException:
            for backup, target in backups:
                os.replace(backup, target)
            for target in created:
                os.remove(target)
            self.abort()
            raise
        finally:
            for fd in locks:
                os.close(fd)  # releases the lock
        for backup, _ in backups:
            os.remove(backup)
        self.done = True

    def __enter__(self) -> "OutputSet":
        return self

    def name_outputs(self, exc: Optional[BaseException]) -> None:
        """Make an ``OSError`` raised while writing or moving the set (a full disk) name the
        outputs, not a temporary name (or no file at all, as a failed ``write`` does)."""
        if isinstance(exc, OSError) and (exc.filename is None or str(exc.filename) in self.staged):
            exc.filename = ", ".join(self.paths)
            exc.filename2 = None

    def __exit__(self, exc_type, exc, tb) -> None:
        self.name_outputs(exc)
        if self.done:
            return
        if exc_type is None:
            try:
                self.commit()
            except OSError as e:
                self.name_outputs(e)
                raise
        else:
            self.abort()


_FD_LINKS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def _open_output(path: str, binary: bool, stream: bool) -> IO:
    """A staged file opened for writing; a stream (:func:`_is_stream`) is appended to, and
    ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and ``/proc/self/fd/N`` write to that very
    descriptor (its offset shared with the shell's, as ``cmd > file`` expects)."""
    kwargs = {} if binary else {"encoding": "utf-8", "newline": "\n"}
    mode = "wb" if binary else "w"
    if stream:
        mode = mode.replace("w", "a")
        fd = _FD_LINKS.get(path)
        for prefix in ("/dev/fd/", "/proc/self/fd/"):
            if path.startswith(prefix) and path[len(prefix):].isdigit():
                fd = int(path[len(prefix):])
        if fd is not None:
            return open(os.dup(fd), mode, **kwargs)
    return open(path, mode, **kwargs)


def close_all(files: Iterable[IO]) -> Optional[OSError]:
    """Close every file of ``files``, also when closing one fails (on a full disk each close
    fails to flush, and still releases its descriptor); returns the first error, if any."""
    first = None
    for f in files:
        try:
            f.close()
        except OSError as e:
            first = first or e
    return first


@contextmanager
def staged_outputs(paths: Sequence[str], inputs: Iterable[str] = ()) -> Iterator[List[str]]:
    """The temporary paths to write ``paths`` under (for writers that take a path: numpy,
    matplotlib, fairseq's dataset builders); moved into place when the block completes, removed
    if it fails (see :class:`OutputSet`)."""
    with OutputSet(paths, inputs) as out:
        yield list(out.staged)


@contextmanager
def atomic_outputs(paths: Sequence[str], inputs: Iterable[str] = (),
                   binary: bool = False) -> Iterator[List[IO]]:
    """Files opened for writing (UTF-8 text with ``\\n`` line ends, or ``binary``) and moved to
    ``paths`` only when the block completes: a failed or interrupted run leaves no file that a
    recipe would take for a finished step, and an output that is one of ``inputs`` is refused
    before anything is written (see :class:`OutputSet`)."""
    with OutputSet(paths, inputs) as out:
        handles: List[IO] = []
        try:
            for tmp in out.staged:
                handles.append(_open_output(tmp, binary, stream=tmp in out.targets))
            yield handles
        except BaseException:
            close_all(handles)  # the block's error is the one to report
            raise
        error = close_all(handles)
        if error is not None:
            raise error


def write_text(path: str, text: str, inputs: Iterable[str] = ()) -> None:
    """Write one whole text file through :func:`atomic_outputs`."""
    with atomic_outputs([path], inputs) as (f,):
        f.write(text)


class StagedWriter:
    """Base of the streaming writers of an output set (fairseq's dataset builders, numpy files):
    a subclass writes ``self.staged[path]`` and completes them in :meth:`finish`; :meth:`close`
    then moves the set into place (:class:`OutputSet`), :meth:`abort` removes it, whatever
    closing the open files raises (a full disk fails each flush). As a context manager, an
    exception aborts; an ``OSError`` names the outputs, not their temporary files."""

    def __init__(self, paths: Sequence[str], inputs: Iterable[str] = ()):
        self._outputs = OutputSet(paths, inputs)
        self.staged = dict(zip(self._outputs.paths, self._outputs.staged))

    def finish(self) -> None:
        """Complete the staged files (flush, write footers and indexes)."""

    def open_files(self) -> List[IO]:
        """The files a subclass has open on the staged paths (closed before they are removed)."""
        return []

    @contextmanager
    def removed_on_failure(self) -> Iterator[None]:
        """A block that opens, writes or completes the staged files: any exception (a full disk)
        removes them (:meth:`abort`) and, an ``OSError``, names the outputs."""
        try:
            yield
        except BaseException as e:
            self._outputs.name_outputs(e)
            self.abort()
            raise

    def close(self) -> None:
        """Finish and move the files into place (idempotent)."""
        if self._outputs.done:
            return
        with self.removed_on_failure():
            self.finish()
            self._outputs.commit()

    def abort(self) -> None:
        """Remove the unfinished files (idempotent)."""
        if self._outputs.done:
            return
        close_all(self.open_files())
        self._outputs.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self._outputs.name_outputs(exc)
            self.abort()


def read_json_object(path: str, what: str = "a JSON object") -> dict:
    """The JSON object in ``path`` (``config.json``, ``vocab.json``, a shard marker); one-line
    errors."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except OSError as e:
        raise HierError(f"{path}: cannot read ({e.strerror or e})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HierError(f"{path}: not a JSON file ({e})") from None
    if not isinstance(value, dict):
        raise HierError(f"{path}: expected {what}, got a {type(value).__name__}")
    return value
