"""How fairseq-hier fails: one error class for what a user can fix, and one way to print it.

:class:`HierError` (a ``ValueError``) names the file, line, example or option and what is wrong;
:func:`run_main` turns it, an ``OSError`` or an interrupt into one line and an exit status;
:func:`install_excepthook` does the same inside fairseq's own commands. The rules: docs/design.md,
section fairseq_hier.errors.
Standard library only.
"""

import logging
import os
import shlex
import signal
import sys
from typing import Callable, List, Optional

#: environment variable: when set to 1, an uncaught HierError in fairseq's commands prints its
#: traceback too (for debugging the plugin).
TRACEBACK_ENV = "FAIRSEQ_HIER_TRACEBACK"


class HierError(ValueError):
    """An input, option, file or checkpoint that the user can fix; the message says where and
    what is wrong, in one line."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM, raised as an exception so that outputs being written are removed on the way out."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def describe(exc: BaseException) -> Optional[str]:
    """The one line for ``exc`` if it is one we print without a traceback, else None.

    ``OSError`` gets its reason and file: ``Permission denied (out/train.src)``."""
    if isinstance(exc, HierError):
        return " ".join(line.strip() for line in str(exc).splitlines()) or type(exc).__name__
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        names = [n for n in (exc.filename, getattr(exc, "filename2", None)) if n is not None]
        return f"{reason} ({' -> '.join(map(str, names))})" if names else reason
    return None


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


def _close_progress_bars() -> None:
    """Close the tqdm bars still open (an error raised mid-loop leaves its bar's line open), so
    that the error's line starts a line of its own. tqdm is not imported here."""
    tqdm = sys.modules.get("tqdm")
    for bar in list(getattr(getattr(tqdm, "tqdm", None), "_instances", None) or []):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 - a bar that cannot close is no reason to hide the error
            pass


def run_main(prog: str, main: Callable[[], object]) -> int:
    """Run ``main()`` as a command named ``prog``; returns its exit status (see the module doc)."""
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    except ValueError:  # not the main thread (a command called from a worker thread)
        pass
    try:
        main()
    except KeyboardInterrupt as e:
        _close_progress_bars()
        print(f"{prog}: interrupted", file=sys.stderr)
        return 128 + getattr(e, "signum", signal.SIGINT)
    except BrokenPipeError:  # `cmd | head`: the reader is gone, which is not our error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 141
    except (HierError, OSError) as e:
        _close_progress_bars()
        print(f"{prog}: error: {describe(e)}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


def install_excepthook() -> None:
    """Make an uncaught :class:`HierError` print one line, ``PROG: error: ...``, instead of a
    traceback (fairseq's commands; ``FAIRSEQ_HIER_TRACEBACK=1`` keeps the traceback). Other
    exceptions go to the hook that was installed before. Idempotent."""
    previous = sys.excepthook
    if getattr(previous, "_fairseq_hier", False):
        return

    def excepthook(exc_type, exc, tb):
        if isinstance(exc, HierError) and os.environ.get(TRACEBACK_ENV) != "1":
            prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
            logging.shutdown()
            print(f"{prog}: error: {describe(exc)}", file=sys.stderr)
            return
        previous(exc_type, exc, tb)

    excepthook._fairseq_hier = True
    sys.excepthook = excepthook


def check_range(option: str, value, low=None, high=None, low_open: bool = False):
    """Return ``value`` if ``low <= value <= high`` (``low < value`` with ``low_open``), else raise
    :class:`HierError` naming the option and the allowed range: ``--beam must be >= 1, got -3``.
    ``None`` (an option not given) passes."""
    if value is None:
        return value
    if low is not None and (value <= low if low_open else value < low):
        bound = f"> {low}" if low_open else f">= {low}"
        raise HierError(f"{option} must be {bound}" + (f" and <= {high}" if high is not None
                                                       else "") + f", got {value}")
    if high is not None and value > high:
        low_text = "" if low is None else (f"> {low} and " if low_open else f">= {low} and ")
        raise HierError(f"{option} must be {low_text}<= {high}, got {value}")
    return value


def shell_words(option: str, text: Optional[str]) -> List[str]:
    """``text`` split as a shell line (``shlex.split``): the value of an option that holds more
    options, such as ``--generation "--beam 5 --lenpen 0.4"``. An unbalanced quote or a trailing
    backslash is a :class:`HierError` naming ``option`` and the text. ``None`` gives ``[]``."""
    if text is None:
        return []
    try:
        return shlex.split(text)
    except ValueError as e:  # "No closing quotation", "No escaped character"
        raise HierError(f"{option}: cannot split {text!r} into arguments as a shell would "
                        f"({str(e)[:1].lower() + str(e)[1:]}): close the quote or escape it") \
            from None
