"""What every fairseq-hier command does alike: its parser (the module docstring's first paragraph
as description), its log lines on stderr, and how it fails (:func:`fairseq_hier.errors.run_main`:
a ``HierError`` or ``OSError`` becomes ``PROG: error: message`` on stderr and exit status 1, no
traceback; Ctrl-C prints ``PROG: interrupted`` and exits with 130)."""

import argparse
import logging
import math
import sys
from typing import Callable

from fairseq_hier.data.shards import parse_shard
from fairseq_hier.errors import HierError, check_range, run_main, shell_words


class CommandParser(argparse.ArgumentParser):
    """argparse, with a bad option answered in one line (``PROG: error: argument --x: ...``,
    exit status 2) instead of the usage text followed by the error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    return CommandParser(prog=prog, description=doc.split("\n\n")[0],
                         formatter_class=argparse.RawDescriptionHelpFormatter)


def ranged(kind: Callable, low=None, high=None, low_open: bool = False) -> Callable:
    """An argparse ``type`` that parses with ``kind`` (int, float) and refuses values out of
    range while the options are parsed: ``ranged(int, 1)`` answers ``--workers -3`` with
    ``argument --workers: must be >= 1, got -3``."""

    def parse(text: str):
        value = kind(text)
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        try:
            return check_range("", value, low, high, low_open)
        except HierError as e:
            raise argparse.ArgumentTypeError(str(e).lstrip()) from None

    parse.__name__ = kind.__name__  # argparse names the type in "invalid int value: 'x'"
    return parse


def split_option(parser: argparse.ArgumentParser, option: str, text) -> list:
    """The value of ``option`` split as a shell line (:func:`fairseq_hier.errors.shell_words`),
    checked while the options are parsed: an unbalanced quote is the parser's one-line error
    naming ``option`` (exit status 2)."""
    try:
        return shell_words(option, text)
    except HierError as e:
        parser.error(str(e))


#: the usual argparse types of counts: ``type=positive_int`` (>= 1), ``type=count`` (>= 0)
positive_int = ranged(int, 1)
count = ranged(int, 0)


#: the significance level the scoring commands mark with ``*``
ALPHA = 0.05


def text_table(rows) -> str:
    """Rows of strings as left-aligned columns two spaces apart (the scoring commands' tables)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def run_command(prog: str, run: Callable, args) -> int:
    """``run(args)`` as the command ``prog``; returns the exit status."""
    logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                        level=logging.INFO, stream=sys.stderr)
    return run_main(prog, lambda: run(args))


def add_split_arguments(p: argparse.ArgumentParser, input_help: str, output_help: str) -> None:
    """The options of a command that turns one split of parallel documents into another."""
    p.add_argument("--input", required=True, help=input_help)
    p.add_argument("--output", required=True, help=output_help)
    p.add_argument("--src-lang", required=True, help="source language code (any)")
    p.add_argument("--tgt-lang", required=True, help="target language code (any)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")


def shard_type(text: str):
    """argparse ``type`` of ``--shard K/N`` (:func:`fairseq_hier.data.shards.parse_shard`)."""
    try:
        return parse_shard(text)
    except HierError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


shard_type.__name__ = "shard"


def add_shard_argument(p: argparse.ArgumentParser) -> None:
    """``--shard K/N``, the option every preparation step takes (fairseq_hier.data.shards)."""
    p.add_argument("--shard", type=shard_type, default=None, metavar="K/N",
                   help="process shard K of N (0 <= K < N): the examples [K*n//N, (K+1)*n//N) "
                        "of the n of the input, for a job array; the shards' outputs "
                        "concatenated in order are the whole run's. Refused on an input that "
                        "is already a shard (FILE.shard beside it): such an input is processed "
                        "whole without --shard (docs/data-formats.md, 'Shards')")
