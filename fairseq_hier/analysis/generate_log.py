"""fairseq-generate's output (its log): the hypotheses, in example order.

fairseq-generate prints, per example and in batch order (not input order), ``S-i``, ``T-i``,
``H-i<TAB>score<TAB>hypothesis``, ``D-i`` (detokenised, with ``--bpe`` / ``--post-process``) and
``P-i`` lines; once every batch is decoded, it prints its closing line
``Generate SUBSET with beam=K: BLEU4 = ...`` (when the split has targets) and logs
``Translated N sentences ...`` (in the same file when stderr goes there too). A log without
either after its last hypothesis comes from a run that did not finish (killed, out of memory, a
full disk) or was cut when copied: its last batch may be missing, or its last line may be cut
inside a hypothesis. Such a log is refused, as is one whose last line has no line end.

Standard library only.
"""

import re
from typing import List, Optional

from ..errors import HierError

H_LINE = re.compile(r"^H-(\d+)\t[^\t]*\t?(.*)$")
# what fairseq_cli/generate.py writes once every batch is decoded
FOOTER = re.compile(r"^Generate \S+ with beam=\d+: "
                    r"|fairseq_cli\.generate\W+Translated [\d,]+ sentences")


def _line_pattern(kind: str):
    return H_LINE if kind == "H" else re.compile(rf"^{kind}-(\d+)\t[^\t]*\t?(.*)$")


def read_hypotheses(path: str, expected: Optional[int] = None, kind: str = "H") -> List[str]:
    """The hypotheses of a fairseq-generate log (its ``H-`` lines, or ``D-`` with ``kind="D"``),
    ordered by example id. :class:`HierError` (one line, naming the file and line) if one is
    missing, doubled or beyond ``expected``, or if the log is not complete (module doc)."""
    hyps, lines = {}, {}
    pattern = _line_pattern(kind)
    last_hypothesis = footer = 0
    n = 0
    line = "\n"
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            for n, line in enumerate(f, start=1):
                if FOOTER.search(line):
                    footer = n
                m = pattern.match(line.rstrip("\n"))
                if not m:
                    continue
                i = int(m.group(1))
                if i in hyps:
                    raise HierError(f"{path} line {n}: a second hypothesis for example {i} "
                                    f"(first at line {lines[i]}; use --nbest 1)")
                if expected is not None and i >= expected:
                    raise HierError(f"{path} line {n}: hypothesis for example {i}, but "
                                    f"--expected {expected} allows ids 0..{expected - 1}; "
                                    f"is this the log of another split?")
                hyps[i], lines[i] = m.group(2), n
                last_hypothesis = n
    except OSError as e:
        raise HierError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise HierError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not hyps:
        raise HierError(f"{path} holds no hypothesis line ({kind}-<id>\\t<score>\\t<text>); is it "
                        f"fairseq-generate's output?")
    if not line.endswith("\n"):
        raise HierError(f"{path} line {n}: the file ends inside this line (no line end): "
                        f"fairseq-generate's output is cut")
    if footer < last_hypothesis:
        raise HierError(f"{path}: no 'Generate ... with beam=' line after the last hypothesis "
                        f"(line {last_hypothesis}): fairseq-generate did not finish, or its "
                        f"output is cut")
    n = expected if expected is not None else max(hyps) + 1
    missing = [i for i in range(n) if i not in hyps]
    if missing:
        raise HierError(f"{path}: {len(missing)} of {n} examples have no hypothesis "
                        f"(first ids: {missing[:10]}); was a batch dropped or filtered?")
    return [hyps[i] for i in range(n)]
