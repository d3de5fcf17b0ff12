"""The commands' old names: each one runs its new command line with the same arguments, after one
line on stderr naming it (``fairseq-hier-lead: now 'fairseq-hier baseline lead' (this name will
go)``). The console scripts ``fairseq-hier-OLD`` point at :data:`entry` (pyproject.toml), and
``fairseq-hier OLD ...`` runs :func:`run_alias` (:mod:`~.main`); neither is listed by
``fairseq-hier --help``. ``hypotheses`` is now a step of ``fairseq-hier decode``: its old command
line keeps working here. Old option spellings are the new commands' (``renamed`` in
:mod:`~.common`). Imports ``fairseq_hier.cli.common``, ``analysis``, ``io`` and the command it
runs (when it runs).
"""

import argparse
import importlib
import sys
from types import SimpleNamespace
from typing import Dict, List, Optional, Tuple

from fairseq_hier.analysis.generate_log import read_hypotheses
from fairseq_hier.cli.common import command_parser, note, positive_int, run_command
from fairseq_hier.io import atomic_outputs

#: old name -> the new command line it stands for (the command, then its first arguments)
ALIASES: Dict[str, Tuple[str, ...]] = {
    "demo-corpus": ("demo", "corpus"),
    "doc-demo-corpus": ("demo", "doc-corpus"),
    "demo-facts": ("demo", "facts"),
    "wikisum-to-raw": ("to-raw", "--format", "wikisum"),
    "mds-to-raw": ("to-raw",),  # its --dataset X is to-raw's old spelling of --format X
    "jsonl-to-raw": ("to-raw", "--format", "jsonl"),
    "doc-extract": ("doc", "extract"),
    "doc-tokenize": ("doc", "tokenize"),
    "doc-chunk": ("doc", "chunk"),
    "bart-files": ("bart", "files"),
    "deps": ("parse", "project"),
    "rank-labels": ("rank", "labels"),
    "rank-eval": ("rank", "eval"),
    "run-json": ("record", "run"),
    "lead": ("baseline", "lead"),
    "lexrank": ("baseline", "lexrank"),
    "attention-cosine": ("analyse", "attention-cosine"),
    "heatmap": ("analyse", "heatmap"),
    "efficiency": ("analyse", "efficiency"),
    "hypotheses": ("decode",),  # a step of decode now: its own old command line, below
}


def module_of(command: str) -> str:
    """The module of a (new) command: ``fairseq_hier.cli.NAME``, dashes as underscores."""
    return f"fairseq_hier.cli.{command.replace('-', '_')}"


def run_alias(old: str, argv: Optional[List[str]] = None) -> int:
    """Run the old command ``old`` with ``argv`` (default: this process's arguments)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = f"fairseq-hier-{old}"
    if old == "hypotheses":
        note(prog, "now a step of 'fairseq-hier decode' (this name will go)")
        return run_command(HYPOTHESES_PROG, hypotheses, hypotheses_parser().parse_args(argv))
    new = ALIASES[old]
    note(prog, f"now 'fairseq-hier {' '.join(new)}' (this name will go)")
    # imported here: only the command that runs is imported (start-up stays light)
    command = importlib.import_module(module_of(new[0]))
    return command.cli_main([*new[1:], *argv])


def _entry(old: str):
    def main(argv: Optional[List[str]] = None) -> int:
        return run_alias(old, argv)
    main.__name__ = old.replace("-", "_")
    return main


#: the console scripts' entry points: ``fairseq-hier-lead`` runs ``entry.lead()``
entry = SimpleNamespace(**{old.replace("-", "_"): _entry(old) for old in ALIASES})


# fairseq-hier-hypotheses' old command line (decode reads the hypotheses itself)
HYPOTHESES_PROG = "fairseq-hier-hypotheses"
HYPOTHESES_DOC = """Extract hypotheses from fairseq-generate's output, in example order (one per
line): every example id 0..N-1 has exactly one H- line, none lies beyond --expected, the log is
complete (fairseq_hier.analysis.generate_log.read_hypotheses); an empty hypothesis is kept as an
empty line. Now a step of fairseq-hier decode.
"""


def hypotheses(args) -> None:
    if args.output != "-":  # refused before the log is read when it is the log itself
        with atomic_outputs([args.output], inputs=[args.log]) as (out,):
            out.writelines(h + "\n" for h in read_hypotheses(args.log, args.expected, args.lines))
    else:
        sys.stdout.writelines(h + "\n" for h in read_hypotheses(args.log, args.expected,
                                                                 args.lines))


def hypotheses_parser() -> argparse.ArgumentParser:
    parser = command_parser(HYPOTHESES_PROG, HYPOTHESES_DOC)
    parser.add_argument("log", help="fairseq-generate output (stdout)")
    parser.add_argument("--expected", type=positive_int, default=None,
                        help="number of examples (ids 0..N-1 must each have one hypothesis; "
                             "default: up to the largest id found)")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    parser.add_argument("--lines", choices=("H", "D"), default="H",
                        help="H: hypotheses as printed (after --post-process); D: detokenised "
                             "(fairseq-generate --bpe ...)")
    return parser
