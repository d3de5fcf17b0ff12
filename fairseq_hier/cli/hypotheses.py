"""Extract hypotheses from fairseq-generate's output, in example order (one per line).

    fairseq-hier-hypotheses GENERATE_LOG --expected N [--post-process-q]

Checks that every example id 0..N-1 has exactly one ``H-`` line (fairseq prints them in batch
order, not input order), so that a silently dropped example cannot shift the ROUGE alignment.
"""

import argparse
import re
import sys


def read_hypotheses(path, expected=None):
    hyps = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^H-(\d+)\t[^\t]*\t?(.*)$", line.rstrip("\n"))
            if m:
                i = int(m.group(1))
                if i in hyps:
                    raise ValueError(f"{path}: two hypotheses for example {i} (use --nbest 1)")
                hyps[i] = m.group(2)
    n = expected if expected is not None else (max(hyps) + 1 if hyps else 0)
    missing = [i for i in range(n) if i not in hyps]
    if missing:
        raise ValueError(f"{path}: {len(missing)} of {n} examples have no hypothesis "
                         f"(first ids: {missing[:10]}); was a batch dropped or filtered?")
    return [hyps[i] for i in range(n)]


def cli_main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", help="fairseq-generate output (stdout)")
    parser.add_argument("--expected", type=int, default=None, help="number of examples")
    parser.add_argument("--output", "-o", default="-", help="output file (default stdout)")
    args = parser.parse_args(argv)
    hyps = read_hypotheses(args.log, args.expected)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    out.write("".join(h + "\n" for h in hyps))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    cli_main()
