"""``fairseq-hier record``: a data-bin's preprocessing record and a run folder's run.json: data,
run.

    fairseq-hier record data work/data-bin --task hierarchical_summarization \\
        --pipeline paragraphs --option subword=sentencepiece --asset spm.model=work/spm/spm.model
    fairseq-hier record run work/runs/pht --name pht --arch pht \\
        --task hierarchical_summarization --metric rouge

Specification: docs/commands.md, section record. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import json
import sys
from typing import List

from fairseq_hier.cli.common import (family_commands, run_subcommand, subcommand)
from fairseq_hier.errors import HierError, shell_words
from fairseq_hier.inference.pipelines import PIPELINES
from fairseq_hier.inference.record import checkpoint_arch, recorded_generation, write_record
from fairseq_hier.recipes.settings import check_arch_and_task
from fairseq_hier.report.inputs import METRICS, inherit_run_json, write_run_json
from fairseq_hier.safe_loading import trusting

PROG = "fairseq-hier-record"


def _pairs(values: List[str], flag: str) -> dict:
    out = {}
    for item in values:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise HierError(f"{flag} {item!r}: expected NAME=VALUE")
        out[key] = value
    return out


def _json_or_string(value: str):
    try:
        return json.loads(value)
    except ValueError:
        return value


def list_pipelines() -> str:
    lines = []
    for name, cls in sorted(PIPELINES.items()):
        lines.append(f"{name}  (tasks: {', '.join(cls.TASKS)}; assets: "
                     f"{', '.join(cls.ASSETS) or 'by options'})")
        for key, (default, help_text) in cls.OPTIONS.items():
            lines.append(f"  {key} = {json.dumps(default)}: {help_text}")
    return "\n".join(lines)


def data(args) -> None:
    if args.list:
        print(list_pipelines())
        return
    if args.print_arch:
        with trusting(args.trust_checkpoint):
            print(checkpoint_arch(args.print_arch))
        return
    if args.print_generation:
        if not args.data_bin:
            raise HierError("--print-generation ARCH reads DATA_BIN's record: give DATA_BIN")
        for arg in recorded_generation(args.data_bin, args.print_generation):
            print(arg)
        return
    if not (args.data_bin and args.task and args.pipeline):
        raise HierError("DATA_BIN, --task and --pipeline are required (or --list)")
    options = {k: _json_or_string(v) for k, v in _pairs(args.option, "--option").items()}
    archs = [item.partition("=")[0] for item in args.generation_for]
    doubled = sorted({a for a in archs if archs.count(a) > 1})
    if doubled:
        raise HierError(f"--generation-for {doubled[0]} is given twice")
    per_arch = {}
    for arch, text in _pairs(args.generation_for, "--generation-for").items():
        per_arch[arch] = shell_words(f"--generation-for {arch}", text)
    path = write_record(args.data_bin, args.task, args.pipeline, options,
                        _pairs(args.asset, "--asset"), shell_words("--generation", args.generation), per_arch)
    print(f"{args.command_prog}: wrote {path}")


def run_json(args) -> None:
    if args.inherit:
        print(inherit_run_json(args.run_dir, args.inherit, args.task, args.metric,
                               check_arch_and_task))
        return
    missing = [f"--{k}" for k in ("name", "arch") if not getattr(args, k)]
    if missing:
        raise HierError(f"{' and '.join(missing)} needed (or --inherit TRAINED_DIR)")
    print(write_run_json(args.run_dir, args.name, args.arch, args.task, args.metric,
                         check_arch_and_task))


def _add_data(sub) -> None:
    p = subcommand(sub, "data", data, "write a data-bin's preprocessing record (how the recipe "
                   "made its raw lines), so that checkpoints trained on it summarise raw "
                   "documents (fairseq-hier summarize)")
    p.add_argument("data_bin", nargs="?", metavar="DATA_BIN", help="the fairseq-preprocess output")
    p.add_argument("--task", help="the fairseq task the data-bin is for")
    p.add_argument("--pipeline", help="how raw documents became its raw lines (--list)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a pipeline option (repeatable)")
    p.add_argument("--asset", action="append", default=[], metavar="NAME=PATH",
                   help="a file the pipeline needs, copied into the data-bin (repeatable)")
    p.add_argument("--generation", default="",
                   help="the recipe's fairseq-generate options, one shell-quoted string")
    p.add_argument("--generation-for", action="append", default=[], metavar="ARCH=OPTIONS",
                   help="fairseq-generate options of one architecture, replacing --generation "
                        "for its checkpoints (repeatable)")
    p.add_argument("--print-generation", metavar="ARCH",
                   help="print the options DATA_BIN's record gives ARCH, one per line")
    p.add_argument("--print-arch", metavar="CHECKPOINT", help="print a checkpoint's architecture")
    p.add_argument("--trust-checkpoint", action="store_true",
                   help="--print-arch: load the checkpoint with torch.load(weights_only=False): "
                        "it may run code; only for files you trust")
    p.add_argument("--list", action="store_true", help="list the pipelines and their options")


def _add_run(sub) -> None:
    p = subcommand(sub, "run", run_json, "write a run folder's run.json, what fairseq-hier report "
                   "reads of the run besides its files")
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


get_parser, cli_main = family_commands(PROG, __doc__, (_add_data, _add_run), default="data")
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
