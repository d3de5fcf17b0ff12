"""Print the demo's table: one row per system, fact accuracy from the corpus generator's ground
truth (``fairseq-hier-demo facts``) and official ROUGE-1.5.5 F1, each with its 95% interval
(facts: bootstrap over examples; ROUGE: ROUGE-1.5.5's own ``-c 95 -r 1000`` bootstrap). All x100.

    python examples/demo/score_table.py --facts test.facts.jsonl REFS NAME=HYPS [NAME=HYPS ...]

Columns: ``facts`` = correct gold facts / gold facts; ``wrong`` = stated facts that are not the
title entity's / stated facts; ``confused`` = stated facts of a distractor place / gold facts.
"""

import argparse

from fairseq_hier.demo.facts import fact_scores, read_facts
from fairseq_hier.io import check_parallel, read_lines
from fairseq_hier.scoring.rouge import rouge_scores

METRICS = (("rouge-1", "ROUGE-1"), ("rouge-2", "ROUGE-2"), ("rouge-l", "ROUGE-L"))


def interval(value: float, low: float, high: float, width: int = 5) -> str:
    return f"{100 * value:{width}.1f} [{100 * low:{width}.1f},{100 * high:{width}.1f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", required=True, help="{split}.facts.jsonl of the references")
    parser.add_argument("refs", help="reference summaries, one per line")
    parser.add_argument("systems", nargs="+", metavar="NAME=HYPS")
    args = parser.parse_args(argv)
    refs = read_lines(args.refs)
    truths = read_facts(args.facts)
    check_parallel(args.refs, refs, args.facts, truths)
    header = f"{'system':<15}{'facts [95% CI]':>19}{'wrong':>7}{'confused':>9}"
    header += "".join(f"{name + ' [95% CI]':>21}" for _, name in METRICS)
    print(header)
    for item in args.systems:
        name, path = item.split("=", 1)
        hyps = read_lines(path)
        check_parallel(args.refs, refs, path, hyps)
        f = fact_scores(truths, hyps)
        r = rouge_scores(refs, hyps)
        row = f"{name:<15}  {interval(f['accuracy'], f['low'], f['high'])}"
        row += f"{100 * f['wrong_rate']:>7.1f}{100 * f['confused_rate']:>9.1f}"
        row += "".join("  " + interval(r[k]["f"], r[k]["f_low"], r[k]["f_high"]) for k, _ in METRICS)
        print(row)


if __name__ == "__main__":
    main()
