"""fairseq-interactive's ``--input FILE`` read first through :func:`fairseq_hier.io.iter_lines`, so
that a missing or non-UTF-8 file is one line naming the file and the line. Why:
docs/fairseq-fixes.md, section "fairseq-interactive's --input". Imports ``io``; fairseq.
"""

import importlib

from ..io import iter_lines


def patch_interactive_input() -> None:
    """fairseq-interactive reads ``--input`` through ``fileinput`` as UTF-8, and a line that is
    not dies in a ``UnicodeDecodeError`` traceback that names neither the file nor the line.
    ``fairseq_cli.interactive.buffered_read`` first reads the file through
    :func:`fairseq_hier.io.iter_lines`: a missing or non-UTF-8 file is one line naming the file
    and the line. Scope: that one function. Idempotent."""
    module = importlib.import_module("fairseq_cli.interactive")
    original = module.buffered_read
    if getattr(original, "_fairseq_hier", False):
        return

    def buffered_read(input, buffer_size):
        if input != "-":  # standard input: decoded as Python decodes sys.stdin
            for _ in iter_lines(input):  # raises at the first line that is not UTF-8
                pass
        yield from original(input, buffer_size)

    buffered_read._fairseq_hier = True
    module.buffered_read = buffered_read
