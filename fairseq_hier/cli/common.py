"""What every fairseq-hier data command does alike: its parser (the module docstring's first
paragraph as description), its log lines on stderr, and one-line errors (a ValueError from our
checks and readers becomes ``PROG: error: message`` on stderr and exit status 1, no traceback)."""

import argparse
import logging
import sys
from typing import Callable


def command_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def run_command(prog: str, run: Callable, args) -> int:
    """``run(args)``; returns the exit status."""
    logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                        level=logging.INFO, stream=sys.stderr)
    try:
        run(args)
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    return 0


def add_split_arguments(p: argparse.ArgumentParser, input_help: str, output_help: str) -> None:
    """The options of a command that turns one split of parallel documents into another."""
    p.add_argument("--input", required=True, help=input_help)
    p.add_argument("--output", required=True, help=output_help)
    p.add_argument("--src-lang", required=True, help="source language (zh: jieba; else Moses)")
    p.add_argument("--tgt-lang", required=True, help="target language")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
