"""ParsingSum recipes, step 8: one table of the run folders WORK/runs/RUN/, next to 003's
numbers (ROUGE-1.5.5 F1 x 100; 95% bootstrap interval of ROUGE-1 in brackets).

    python examples/mds_common/table.py WORK [--subset test] [--paper multi_news|wcep]

Columns: R-1, R-2, R-L over whole summaries (decode.sh's SUBSET.rouge_whole.txt: the scale of
003's R-L) and R-Lsum, ROUGE-1.5.5's summary-level ROUGE-L over sentences (SUBSET.rouge.txt). A
run folder without them (trained, not decoded on SUBSET yet) is listed as not scored.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from fairseq_hier.scoring.rouge import parse_report  # noqa: E402

# 003 Table 2 (Multi-News test) and Table 3 (WCEP-100 test), R-L
PAPER = {
    "multi_news": {"transformer": (42.98, 14.48, 20.06), "liu_ht": (36.09, 12.64, 20.10),
                   "parsingsum_ht": (37.34, 13.00, 20.42), "parsingsum_ft": (44.32, 15.35, 20.72)},
    "wcep": {"liu_ht": (23.20, 5.78, 17.45), "transformer": (23.41, 6.64, 17.93),
             "parsingsum_ht": (24.03, 6.42, 18.31), "parsingsum_ft": (26.45, 7.06, 18.98)},
}
ORDER = ("transformer", "parsingsum_ft", "liu_ht", "parsingsum_ht")


def scores(path):
    """The F1 of ROUGE-1/2/L (x 100) and ROUGE-1's interval from a report, or None if missing."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        report = parse_report(f.read())
    if not {"rouge-1", "rouge-2", "rouge-l"} <= set(report):
        raise SystemExit(f"table.py: error: {path} holds no ROUGE-1.5.5 report (rerun decode.sh)")
    return {k: 100 * v["f"] for k, v in report.items()} | {
        "r1_low": 100 * report["rouge-1"]["f_low"], "r1_high": 100 * report["rouge-1"]["f_high"]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("work", help="the recipe's WORK folder")
    p.add_argument("--subset", default="test", help="decoded split (default test)")
    p.add_argument("--paper", choices=sorted(PAPER), help="add 003's numbers for this dataset")
    args = p.parse_args(argv)
    folder = os.path.join(args.work, "runs")
    runs = [r for r in (os.listdir(folder) if os.path.isdir(folder) else [])
            if os.path.isdir(os.path.join(folder, r))]
    runs.sort(key=lambda r: (ORDER.index(r) if r in ORDER else 9, r))
    if not runs:
        raise SystemExit(f"table.py: error: no run folder in {folder} (run train.sh and "
                         f"decode.sh first)")
    paper = PAPER.get(args.paper, {}) if args.subset == "test" else {}
    print(f"{'system':<24} {'R-1 [95% CI]':<22} {'R-2':>6} {'R-L':>6} {'R-Lsum':>7}"
          f"{'   003: R-1 / R-2 / R-L' if paper else ''}")
    for run in runs:
        whole = scores(os.path.join(folder, run, f"{args.subset}.rouge_whole.txt"))
        split = scores(os.path.join(folder, run, f"{args.subset}.rouge.txt"))
        if whole is None or split is None:
            print(f"{run:<24} (not scored on {args.subset} yet: decode.sh)")
            continue
        r1 = f"{whole['rouge-1']:.2f} [{whole['r1_low']:.2f}, {whole['r1_high']:.2f}]"
        ref = paper.get(run)
        print(f"{run:<24} {r1:<22} {whole['rouge-2']:6.2f} {whole['rouge-l']:6.2f} "
              f"{split['rouge-l']:7.2f}" + (f"   {ref[0]:.2f} / {ref[1]:.2f} / {ref[2]:.2f}"
                                             if ref else ""))


if __name__ == "__main__":
    main()
