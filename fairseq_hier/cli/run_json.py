"""``fairseq-hier-run-json RUN_DIR --name N --arch A --task T --metric rouge|bleu``: write a run
folder's ``run.json``, what ``fairseq-hier-report`` reads of the run besides its files.

    fairseq-hier-run-json work/runs/pht --name pht --arch pht \
        --task hierarchical_summarization --metric rouge

``--inherit`` and the checks: docs/commands.md, section fairseq_hier.cli.run_json. Imports the
library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.recipes.settings import check_arch_and_task
from fairseq_hier.report.inputs import METRICS, inherit_run_json, write_run_json

PROG = "fairseq-hier-run-json"


def run(args) -> None:
    if args.inherit:
        print(inherit_run_json(args.run_dir, args.inherit, args.task, args.metric,
                               check_arch_and_task))
        return
    missing = [f"--{k}" for k in ("name", "arch") if not getattr(args, k)]
    if missing:
        raise HierError(f"{' and '.join(missing)} needed (or --inherit TRAINED_DIR)")
    print(write_run_json(args.run_dir, args.name, args.arch, args.task, args.metric,
                         check_arch_and_task))


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run folder")
    p.add_argument("--name", help="the run's name in the report (e.g. its folder's name)")
    p.add_argument("--arch", help="the trained architecture, one of fairseq-train --arch's "
                                  "(e.g. pht), or a baseline's name (lead, lexrank)")
    p.add_argument("--task", required=True,
                   help="the fairseq task, one of fairseq-train --task's (e.g. hat_summarization)")
    p.add_argument("--metric", required=True, choices=METRICS,
                   help="what the report scores: rouge (SUBSET.hyp) or bleu (SUBSET.docs)")
    p.add_argument("--inherit", metavar="TRAINED_DIR",
                   help="name and arch from a trained run's folder (a decoding of its checkpoint)")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
