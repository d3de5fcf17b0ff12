"""Print the demo's ROUGE table: one row per system, official ROUGE-1.5.5 F1 (x100).

    python examples/demo/score_table.py REFS NAME=HYPS [NAME=HYPS ...]
"""

import sys

from fairseq_hier.cli._text import check_parallel, read_lines
from fairseq_hier.cli.rouge import rouge_scores


def main(argv):
    refs_path, systems = argv[0], [a.split("=", 1) for a in argv[1:]]
    refs = read_lines(refs_path)
    print(f"{'system':<14}{'ROUGE-1':>9}{'ROUGE-2':>9}{'ROUGE-L':>9}")
    for name, path in systems:
        hyps = read_lines(path)
        check_parallel(refs_path, refs, path, hyps)
        s = rouge_scores(refs, hyps)
        print(f"{name:<14}" + "".join(f"{100 * s[k]['f']:>9.2f}" for k in ("rouge-1", "rouge-2", "rouge-l")))


if __name__ == "__main__":
    main(sys.argv[1:])
