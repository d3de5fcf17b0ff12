"""``fairseq-hier COMMAND ...``: the front command, which runs any fairseq-hier command by name.

``fairseq-hier --help`` (or no argument) lists every command with a one-line summary, grouped as
the work goes: prepare, train/decode, score, analyse, report. ``fairseq-hier COMMAND ARGS`` is
the same as ``fairseq-hier-COMMAND ARGS`` (same options, output, messages and exit status): each
command keeps its own name in its usage and error lines, so that what it prints names a command
the user can type. An old name runs its new command line (:mod:`~.aliases`) and is not listed.
An unknown command is one line naming the closest command, exit status 2.

Start-up stays light: a command's module is imported only when that command runs, and the
summaries are read from the modules' source (their docstrings) without importing them, so that
``fairseq-hier --help`` and the scoring commands never import torch or fairseq.
"""

import ast
import difflib
import importlib
import importlib.util
import os
import re
import sys
from typing import Dict, List, Optional, Tuple

from fairseq_hier import __version__
from fairseq_hier.cli.aliases import ALIASES, run_alias

PROG = "fairseq-hier"

#: every command, by group: (name, module under fairseq_hier.cli). The console script
#: ``fairseq-hier-NAME`` of each runs it too (pyproject.toml, [project.scripts]); the old names
#: are aliases (:mod:`~.aliases`), run but not listed.
GROUPS: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = tuple(
    (group, tuple((name, name.replace("-", "_")) for name in names)) for group, names in (
        ("prepare", ("demo", "to-raw", "doc", "sentence-bos", "bart", "parse", "spm",
                     "graph", "rank", "record")),
        ("train/decode", ("settings", "extract-attention", "summarize", "baseline", "decode",
                          "score")),
        ("score", ("ptb-tokenize", "rouge", "doc-bleu", "significance")),
        ("analyse", ("analyse",)),
        ("report", ("report",)),
    ))
COMMANDS: Dict[str, str] = {name: f"fairseq_hier.cli.{module}"
                            for _, commands in GROUPS for name, module in commands}
SUMMARY_WIDTH = 76


def summary(module: str) -> str:
    """The first sentence of ``module``'s docstring, read from its source (the module is not
    imported), without a leading ````command ARGS``:`` and made to fit one line of the listing:
    parentheses dropped first, then words."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return "(not installed)"
    with open(spec.origin, encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read(), spec.origin)) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    if text.startswith("``") and "``: " in text:
        text = text.split("``: ", 1)[1]
    text = re.split(r"\.\s+(?=[A-Z])", text, maxsplit=1)[0].rstrip(".").replace("``", "")
    text = text[:1].upper() + text[1:]
    while len(text) > SUMMARY_WIDTH and re.search(r" \([^()]*\)", text):
        text = re.sub(r" \([^()]*\)", "", text, count=1)
    if len(text) > SUMMARY_WIDTH:
        text = text[:SUMMARY_WIDTH - 4].rsplit(" ", 1)[0].rstrip(",;:") + " ..."
    return text


USAGE = f"""\
usage: {PROG} COMMAND [ARGS ...]
       {PROG} COMMAND --help
       {PROG} --version
       {PROG} --user-dir

Hierarchical Transformers for long and multi-document inputs, as a fairseq plugin: the commands
around fairseq-train and fairseq-generate, which load the models with --user-dir (the folder
that '{PROG} --user-dir' prints). Each command
is also installed as {PROG}-COMMAND; a command with subcommands lists them with
{PROG} COMMAND --help.
"""


def help_text() -> str:
    """The usage and the listing: every command of :data:`GROUPS` with its :func:`summary`."""
    width = max(map(len, COMMANDS))
    lines = [USAGE.rstrip("\n")]
    for group, commands in GROUPS:
        lines += ["", f"{group}:"]
        lines += [f"  {name:<{width}}  {summary(COMMANDS[name])}" for name, _ in commands]
    return "\n".join(lines) + "\n"


def unknown(name: str) -> str:
    """The one line for a command we do not have, with the closest one we do."""
    close = difflib.get_close_matches(name, [*COMMANDS, *ALIASES], n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"'{PROG} --help' lists the commands"
    return f"{PROG}: error: unknown command '{name}' ({hint})"


def cli_main(argv: Optional[List[str]] = None) -> int:
    """Run ``argv[0]``'s ``cli_main(argv[1:])``; each command returns
    ``fairseq_hier.cli.common.run_command(...)``, so its exit status is returned as is."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(help_text())
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"{PROG} {__version__}")
        return 0
    if argv[0] == "--user-dir":  # fairseq's --user-dir: the package's folder
        print(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return 0
    if argv[0] in ALIASES and argv[0] not in COMMANDS:
        return run_alias(argv[0], argv[1:])
    if argv[0] not in COMMANDS:
        print(unknown(argv[0]), file=sys.stderr)
        return 2
    # imported here, not above: only the command that runs is imported (start-up stays light)
    command = importlib.import_module(COMMANDS[argv[0]])
    return command.cli_main(argv[1:])


if __name__ == "__main__":
    sys.exit(cli_main())
