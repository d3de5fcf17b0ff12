"""What every fairseq-hier command does alike: its parser (the module docstring's first paragraph
as description), its log lines on stderr, and how it fails (:func:`fairseq_hier.errors.run_main`:
a ``HierError`` or ``OSError`` becomes ``PROG: error: message`` on stderr and exit status 1, no
traceback; Ctrl-C prints ``PROG: interrupted`` and exits with 130)."""

import argparse
import logging
import math
import sys
from typing import Callable, List, Optional, Sequence

from fairseq_hier.data.shards import parse_shard
from fairseq_hier.errors import HierError, check_range, run_main, shell_words
# the significance level and the tables of the scoring commands, as the library prints them
from fairseq_hier.scoring.bootstrap import ALPHA, text_table  # noqa: F401


def note(prog: str, message: str) -> None:
    """One line on stderr for the user (an old name or spelling that still works)."""
    print(f"{prog}: {message}", file=sys.stderr, flush=True)


class CommandParser(argparse.ArgumentParser):
    """argparse, with a bad option answered in one line (``PROG: error: argument --x: ...``,
    exit status 2) instead of the usage text followed by the error; with the old spellings of
    its options (:attr:`renames`, see :func:`renamed`), the checks between options run after
    parsing (:attr:`checks`), and a family's default subcommand (:attr:`default_subcommand`),
    which an old command line without a subcommand runs after one line on stderr."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.renames = {}  # old spelling -> new, for every hidden old option or positional
        self.checks = []  # check(parser, args) after parsing: parser.error on a bad combination
        self.default_subcommand = None
        self.required = []  # required options with old spellings: checked after parsing

    def _as_required(self, method):
        """``method()`` with :attr:`required` shown as required (usage and help)."""
        for action in self.required:
            action.required = True
        try:
            return method()
        finally:
            for action in self.required:
                action.required = False

    def format_usage(self):
        return self._as_required(super().format_usage)

    def format_help(self):
        return self._as_required(super().format_help)

    def subcommands(self) -> dict:
        """The subparsers of a family, by name (empty for a single command)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        subcommands = self.subcommands()
        if self.default_subcommand and (not args or (args[0] not in subcommands
                                                     and args[0] not in ("-h", "--help"))):
            new = subcommands[self.default_subcommand].prog.replace("fairseq-hier-",
                                                                   "fairseq-hier ", 1)
            note(self.prog, f"now '{new}' (give the subcommand; this form will go)")
            args.insert(0, self.default_subcommand)
        namespace, extras = super().parse_known_args(args, namespace)
        for check in self.checks:
            check(self, namespace)
        return namespace, extras

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _OldSpelling(argparse.Action):
    """An old spelling of an option, hidden from --help: stores into the new option's
    destination after one line on stderr naming the new spelling."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        note(parser.prog, f"'{option_string}' is now '{self.new}' (this spelling will go)")
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)


def _require(parser: "CommandParser", action: argparse.Action) -> None:
    """A check: ``action``'s option (or one of its old spellings) was given; shown as required."""
    dest = action.dest
    parser.required.append(action)

    def check(p, args):
        if getattr(args, dest, None) is None:  # argparse's own words for a missing option
            p.error(f"the following arguments are required: {'/'.join(action.option_strings)}")
    parser.checks.append(check)


def renamed(parser: "CommandParser", new: str, *old: str, **kwargs) -> None:
    """Accept ``old`` spellings of the option ``new`` (already added): hidden, they store into
    its destination (same type, choices, nargs; ``kwargs`` override, ``dest`` included) and
    print one line naming ``new``. A required ``new`` is then checked after parsing, so that an
    old spelling counts."""
    action = parser._option_string_actions[new]
    if action.required:
        action.required = False
        _require(parser, action)
    settings = dict(type=action.type, choices=action.choices, nargs=action.nargs,
                    metavar=action.metavar)
    if action.nargs == 0:
        settings = dict(nargs=0, const=action.const)
    settings.update(kwargs)
    dest = settings.pop("dest", action.dest)
    parser.add_argument(*old, dest=dest, action=_OldSpelling, new=new,
                        help=argparse.SUPPRESS, **settings)
    for spelling in old:
        parser.renames[spelling] = new


def renamed_positional(parser: "CommandParser", metavar: str, new: str) -> None:
    """Accept a positional ``metavar`` (hidden; after the command's other positionals) as the old
    spelling of the option ``new`` (already added), with one line naming ``new``; giving both is
    an error."""
    action = parser._option_string_actions[new]
    old_dest = f"old_{action.dest}"
    required, action.required = action.required, False
    if required:
        parser.required.append(action)
    parser.add_argument(old_dest, nargs="?", metavar=metavar, help=argparse.SUPPRESS,
                        type=action.type)
    parser.renames[metavar] = new

    def check(p, args):
        value = getattr(args, old_dest, None)
        if value is not None:
            if getattr(args, action.dest, None) is not None:
                p.error(f"give {new} only (positional {metavar} is its old spelling)")
            note(p.prog, f"positional {metavar} is now '{new} {metavar}' (this spelling will go)")
            setattr(args, action.dest, value)
        if hasattr(args, old_dest):
            delattr(args, old_dest)
        if required and getattr(args, action.dest, None) is None:
            p.error(f"the following arguments are required: {'/'.join(action.option_strings)}")
    parser.checks.append(check)


def family_parser(prog: str, doc: str, default: str = None) -> tuple:
    """A family's parser and its subparsers action (:func:`subcommand` adds to it);
    ``default``: the subcommand an old command line without one runs."""
    parser = command_parser(prog, doc)
    parser.default_subcommand = default
    sub = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
    return parser, sub


def subcommand(sub, name: str, run: Callable, summary: str,
               description: str = None) -> "CommandParser":
    """A family's subcommand ``name``: its parser (prog ``PROG NAME``, the prefix of its error
    lines), listed with ``summary``, running ``run(args)``."""
    p = sub.add_parser(name, help=summary, description=description or summary,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(run=run, command_prog=p.prog)
    return p


def run_subcommand(args):
    """A family's :func:`run`: the chosen subcommand's."""
    return args.run(args)


def family_commands(prog: str, doc: str, adders: Sequence[Callable],
                    default: str = None) -> tuple:
    """A family module's ``get_parser`` and ``cli_main``: its :func:`family_parser` with the
    subcommands that each of ``adders`` adds (``adder(sub)``), run by :func:`run_subcommand`."""

    def get_parser() -> argparse.ArgumentParser:
        parser, sub = family_parser(prog, doc, default)
        for add in adders:
            add(sub)
        return parser

    def cli_main(argv: Optional[List[str]] = None) -> int:
        return run_command(prog, run_subcommand, get_parser().parse_args(argv))

    return get_parser, cli_main


def command_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """A command's parser, described by its module docstring's first paragraph (without its
    leading ````fairseq-hier NAME``: `` and the reST quotes)."""
    text = doc.split("\n\n")[0]
    if text.startswith("``") and "``: " in text:
        text = text.split("``: ", 1)[1]
        text = text[:1].upper() + text[1:]
    return CommandParser(prog=prog, description=text.replace("``", ""),
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


def run_command(prog: str, run: Callable, args) -> int:
    """``run(args)`` as the command ``prog`` (a family's subcommand: ``PROG SUB``, its errors'
    prefix); returns the exit status."""
    logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                        level=logging.INFO, stream=sys.stderr)
    return run_main(getattr(args, "command_prog", prog), lambda: run(args))


def add_split_arguments(p: argparse.ArgumentParser, input_help: str, output_help: str) -> None:
    """The options of a command that turns one split of parallel documents into another."""
    p.add_argument("--input-prefix", required=True, help=input_help)
    p.add_argument("--output-prefix", required=True, help=output_help)
    renamed(p, "--input-prefix", "--input")
    renamed(p, "--output-prefix", "--output")
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
