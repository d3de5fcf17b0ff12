"""The WikiSum runs side by side: official ROUGE-1.5.5 F1 x100 with ROUGE-1.5.5's own 95%
interval, then, right of the ``|``, Google's rouge-score F1 x100 (the ``--also-rouge-score`` block
of the report; ``-`` when it has none): a different scorer, not comparable with ROUGE-1.5.5.

    python examples/wikisum/table.py WORK_DIR [RUN ...] [--subset test]

Reads WORK_DIR/runs/RUN/SUBSET.rouge.txt (default: every run folder that has one).
"""

import argparse
import os

from fairseq_hier.scoring.rouge import parse_report, parse_rouge_score

FORMAT = "{:<16} {:<24} {:<24} {:<24} | {:<7} {:<7} {:<7} {:<9}"
ROUGE_SCORE = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def row(name: str, text: str) -> str:
    report, other = parse_report(text), parse_rouge_score(text)
    official = [f"{100 * report[k]['f']:5.2f} [{100 * report[k]['f_low']:5.2f}, "
                f"{100 * report[k]['f_high']:5.2f}]" for k in ("rouge-1", "rouge-2", "rouge-l")]
    return FORMAT.format(name, *official, *(f"{100 * other[k]:5.2f}" if k in other else "-"
                                            for k in ROUGE_SCORE))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", help="the recipe's WORK_DIR")
    parser.add_argument("runs", nargs="*", help="run folders of WORK_DIR/runs (default: all scored)")
    parser.add_argument("--subset", default="test")
    args = parser.parse_args(argv)
    folder = os.path.join(args.work, "runs")
    name = f"{args.subset}.rouge.txt"
    runs = args.runs or sorted(r for r in (os.listdir(folder) if os.path.isdir(folder) else [])
                               if os.path.isfile(os.path.join(folder, r, name)))
    if not runs:
        raise SystemExit(f"table.py: error: no {folder}/*/{name} (run decode.sh first)")
    print(f"{'':<16} {'ROUGE-1.5.5 (official)':<74} | rouge-score (Google; not comparable)")
    print(FORMAT.format("system", "ROUGE-1 F [95% CI]", "ROUGE-2 F [95% CI]", "ROUGE-L F [95% CI]",
                        *ROUGE_SCORE))
    for run in runs:
        path = os.path.join(folder, run, name)
        if not os.path.isfile(path):
            raise SystemExit(f"table.py: error: {path} not found (score {run} first)")
        with open(path, encoding="utf-8") as f:
            print(row(run, f.read()))


if __name__ == "__main__":
    main()
