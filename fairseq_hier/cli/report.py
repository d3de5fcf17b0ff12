"""``fairseq-hier report``: one self-contained HTML page (and Markdown) about trained systems.

    fairseq-hier report work/runs/transformer work/runs/pht \\
        --baseline transformer --output-dir work/report

Specification: docs/commands.md, section report. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import logging
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.report.inputs import DEFAULT_SUBSET, METRICS, load_runs, reported_files
from fairseq_hier.report.render import check_report_outputs, write_report
from fairseq_hier.report.sections import ReportOptions, build_report

PROG = "fairseq-hier-report"
logger = logging.getLogger("fairseq_hier.report")


def run(args) -> None:
    inputs = [args.reference, args.gpt2_encoder_json]
    check_report_outputs(args.output_dir, inputs)  # before any score is computed
    runs = load_runs(args.run_dirs, args.subset)
    empty = [r.path for r in runs if r.is_empty]
    files = ", ".join(reported_files(args.subset))
    if len(empty) == len(runs):
        raise HierError(f"nothing to report: {', '.join(empty)} hold(s) none of {files} (is "
                        f"RUN_DIR the folder of a trained system?)")
    for path in empty:
        print(f"{PROG}: warning: {path} holds none of {files}; the report only notes what it "
              f"lacks", file=sys.stderr)
    opt = ReportOptions(reference=args.reference, metric=args.metric, baseline=args.baseline,
                        heatmaps=args.heatmaps, samples=args.samples, seed=args.seed,
                        tgt_lang=args.tgt_lang, encoder_json=args.gpt2_encoder_json)
    blocks = build_report(runs, opt)
    html, md = write_report(blocks, args.output_dir, args.title, inputs=inputs)
    images = sum(type(b).__name__ == "Image" for b in blocks)
    logger.info(f"{len(runs)} runs, {images} images -> {html} and {md}")
    print(html)


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="one folder per system")
    p.add_argument("--subset", default=DEFAULT_SUBSET,
                   help="the scored split: RUN_DIR/SUBSET.hyp, SUBSET.ref, ... (default test)")
    p.add_argument("--reference", default=None,
                   help="score every run against this file instead of each run's own "
                        "SUBSET.refs.jsonl / SUBSET.ref: one reference per line, or (ROUGE) "
                        "multiple references (docs/data-formats.md#multiple-references)")
    p.add_argument("--metric", choices=METRICS, default=None,
                   help="rouge: RUN_DIR/SUBSET.hyp (or generate-SUBSET.txt's D- lines); bleu: "
                        "document BLEU of RUN_DIR/SUBSET.docs (default: run.json's metric, else "
                        "rouge)")
    p.add_argument("--baseline", default=None,
                   help="the system the others are tested against (default: the first scored)")
    p.add_argument("--heatmaps", type=count, default=3,
                   help="attention heatmaps per run: its first K examples (default 3)")
    p.add_argument("--samples", type=positive_int, default=1000,
                   help="bootstrap resamples of the significance test (default 1000)")
    p.add_argument("--seed", type=int, default=None,
                   help="bootstrap seed (default: 0 for ROUGE, 12345 for BLEU: sacreBLEU's)")
    p.add_argument("--tgt-lang", default="en",
                   help="BLEU's target language (zh: sacreBLEU's zh tokenizer, else 13a)")
    p.add_argument("--gpt2-encoder-json", default=None,
                   help="GPT-2's encoder.json: label HAT-BART's sentence-attention rows with "
                        "text pieces (its H- tokens are BPE ids)")
    p.add_argument("--title", default="fairseq-hier report", help="the page's heading")
    p.add_argument("--output-dir", required=True,
                   help="write report.html, report.md and report_files/ here")
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
