"""``fairseq-hier-report``: one self-contained HTML page (and Markdown) about trained systems.

    fairseq-hier-report demo_work/checkpoints/transformer demo_work/checkpoints/pht \\
        --reference demo_work/raw/test.tgt --baseline transformer --output-dir demo_work/report

Each RUN_DIR is one system (``train.log``, ``test.hyp`` or ``generate-test.txt``, optional
``run.json``, ``efficiency.json``, ``attention.json``; see :mod:`fairseq_hier.report.inputs`).
Writes OUTPUT_DIR/report.html (images inlined: one file to archive or mail), OUTPUT_DIR/report.md
and OUTPUT_DIR/report_files/*.png (the Markdown's images). Sections: the runs; scores (ROUGE-1/2/L
F1 x100 with ROUGE-1.5.5's 95% intervals, or document BLEU with ``--metric bleu`` from each run's
``test.docs``), marked † / ‡ where a one-sided paired bootstrap finds the system better than the
baseline at p < 0.05 / 0.01; efficiency (efficiency.json); training and validation loss and
learning-rate curves (train.log, all runs overlaid); attention cosine and heatmaps (paragraph
attention from attention.json, HAT's sentence attention from generate-test.txt's A- lines).
What a RUN_DIR lacks becomes a note saying how to produce it; a malformed file is a one-line
error naming it (exit status 1). A RUN_DIR holding none of the files above is named in a warning
on stderr; when every RUN_DIR is such, there is nothing to report: a one-line error, exit status
1, nothing written.

For ``--metric bleu`` the reference holds one document per line, or, if it has empty lines,
``fairseq-hier-doc-extract``'s target file (one sentence per line, documents separated by one
empty line; a document is its sentences joined by spaces, as ``fairseq-hier-doc-bleu`` joins
them). ``scripts/report_check.sh`` (``make report-check``) opens the page in headless Chromium
and fails unless every image loads.
"""

import logging
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.report.inputs import REPORTED_FILES, load_runs
from fairseq_hier.report.render import write_report
from fairseq_hier.report.sections import ReportOptions, build_report

PROG = "fairseq-hier-report"
logger = logging.getLogger("fairseq_hier.report")


def run(args) -> None:
    runs = load_runs(args.run_dirs)
    empty = [r.path for r in runs if r.is_empty]
    if len(empty) == len(runs):
        raise HierError(f"nothing to report: {', '.join(empty)} hold(s) none of "
                        f"{', '.join(REPORTED_FILES)} (is RUN_DIR the folder of a trained system?)")
    for path in empty:
        print(f"{PROG}: warning: {path} holds none of {', '.join(REPORTED_FILES)}; the report "
              f"only notes what it lacks", file=sys.stderr)
    opt = ReportOptions(reference=args.reference, metric=args.metric, baseline=args.baseline,
                        heatmaps=args.heatmaps, samples=args.samples, seed=args.seed,
                        tgt_lang=args.tgt_lang, encoder_json=args.gpt2_encoder_json)
    blocks = build_report(runs, opt)
    html, md = write_report(blocks, args.output_dir, args.title,
                            inputs=[args.reference, args.gpt2_encoder_json])
    images = sum(type(b).__name__ == "Image" for b in blocks)
    logger.info(f"{len(runs)} runs, {images} images -> {html} and {md}")
    print(html)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="one folder per system")
    p.add_argument("--reference", default=None,
                   help="the references of the scored split, one per line (no scores without)")
    p.add_argument("--metric", choices=("rouge", "bleu"), default="rouge",
                   help="rouge: RUN_DIR/test.hyp (or generate-test.txt's D- lines) against "
                        "--reference; bleu: document BLEU of RUN_DIR/test.docs (default rouge)")
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
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
