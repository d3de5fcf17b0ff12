"""Extract hypotheses from fairseq-generate's output, in example order (one per line).

    fairseq-hier-hypotheses GENERATE_LOG --expected N [-o OUT] [--lines D]

Checks that every example id 0..N-1 has exactly one ``H-`` line (fairseq prints them in batch
order, not input order), so that a silently dropped example cannot shift the ROUGE alignment,
and that no id lies beyond ``--expected`` (a log of another split or data set). An empty
hypothesis (``H-i<TAB>score<TAB>``) is kept as an empty line: it must be scored, not dropped.
``--lines D`` reads the detokenised ``D-`` lines instead (fairseq-generate run with ``--bpe``,
e.g. GPT-2 BPE for BART: ``H-`` then holds BPE ids). Bad input gives a one-line error and exit
status 1.
"""

import argparse
import re
import sys
from typing import List, Optional

PROG = "fairseq-hier-hypotheses"
H_LINE = re.compile(r"^H-(\d+)\t[^\t]*\t?(.*)$")


def _line_pattern(kind: str):
    return H_LINE if kind == "H" else re.compile(rf"^{kind}-(\d+)\t[^\t]*\t?(.*)$")


def read_hypotheses(path: str, expected: Optional[int] = None, kind: str = "H") -> List[str]:
    """The hypotheses of a fairseq-generate log (its ``H-`` lines, or ``D-`` with ``kind="D"``),
    ordered by example id; ValueError (one line, naming the file and line) if one is missing,
    doubled or beyond ``expected``."""
    hyps, lines = {}, {}
    pattern = _line_pattern(kind)
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, start=1):
                m = pattern.match(line.rstrip("\n"))
                if not m:
                    continue
                i = int(m.group(1))
                if i in hyps:
                    raise ValueError(f"{path} line {n}: a second hypothesis for example {i} "
                                     f"(first at line {lines[i]}; use --nbest 1)")
                if expected is not None and i >= expected:
                    raise ValueError(f"{path} line {n}: hypothesis for example {i}, but "
                                     f"--expected {expected} allows ids 0..{expected - 1}; "
                                     f"is this the log of another split?")
                hyps[i], lines[i] = m.group(2), n
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not hyps:
        raise ValueError(f"{path} holds no hypothesis line ({kind}-<id>\\t<score>\\t<text>); is it "
                         f"fairseq-generate's output?")
    n = expected if expected is not None else max(hyps) + 1
    missing = [i for i in range(n) if i not in hyps]
    if missing:
        raise ValueError(f"{path}: {len(missing)} of {n} examples have no hypothesis "
                         f"(first ids: {missing[:10]}); was a batch dropped or filtered?")
    return [hyps[i] for i in range(n)]


def cli_main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("log", help="fairseq-generate output (stdout)")
    parser.add_argument("--expected", type=int, default=None,
                        help="number of examples (ids 0..N-1 must each have one hypothesis; "
                             "default: up to the largest id found)")
    parser.add_argument("--output", "-o", default="-", help="output file (default stdout)")
    parser.add_argument("--lines", choices=("H", "D"), default="H",
                        help="H: hypotheses as printed (after --post-process); D: detokenised "
                             "(fairseq-generate --bpe ...)")
    args = parser.parse_args(argv)
    if args.expected is not None and args.expected < 1:
        parser.error("--expected must be at least 1")
    try:
        hyps = read_hypotheses(args.log, args.expected, args.lines)
        text = "".join(h + "\n" for h in hyps)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            with open(args.output, "w", encoding="utf-8") as out:
                out.write(text)
    except ValueError as e:
        sys.exit(f"{PROG}: error: {e}")
    except OSError as e:
        sys.exit(f"{PROG}: error: cannot write {args.output}: {e.strerror or e}")


if __name__ == "__main__":
    cli_main()
