"""The report's scores table: every system's score with its 95% interval, and a significance mark
from the paired bootstrap against the baseline.

    table = rouge_table(refs, {"transformer": hyps_a, "pht": hyps_b}, baseline="transformer")

ROUGE and BLEU columns, the rouge-score table beside them and the marks: docs/evaluation.md,
section fairseq_hier.report.scores.
Imports ``scoring``, ``readers``, ``io``, ``errors``.
"""

import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from fairseq_hier.io import read_lines

from ..errors import HierError
from ..readers.documents import read_sentence_blocks
from ..scoring.bleu import default_tokenize, metrics
from ..scoring.rouge import (ROUGE_SCORE_KEYS, official_unavailable, parse_report,
                             read_references, rouge_score_f1, rouge_score_version, rouge_scores)
from ..scoring.significance import bleu_significance, rouge_significance

# the references of one example: one string (BLEU, and ROUGE's --reference of one file), or the
# tuple of all its references (ROUGE: fairseq_hier.scoring.rouge.read_references)
Reference = Union[str, Tuple[str, ...]]

MARKS = ((0.01, "\u2021"), (0.05, "\u2020"))  # ‡, †: the smaller threshold first
ROUGE_COLUMNS = (("rouge-1", "ROUGE-1"), ("rouge-2", "ROUGE-2"), ("rouge-l", "ROUGE-L"))


def mark(p_value: Optional[float]) -> str:
    """``‡`` for p < 0.01, ``†`` for p < 0.05, else the empty string."""
    if p_value is None:
        return ""
    return next((m for threshold, m in MARKS if p_value < threshold), "")


@dataclass
class Cell:
    value: float
    low: Optional[float] = None
    high: Optional[float] = None
    mark: str = ""


@dataclass
class Comparison:
    delta: float
    low: float
    high: float
    p_value: float


@dataclass
class ScoreTable:
    """Rows in the systems' order; ``comparisons[name][column]`` for every non-baseline system
    when a significance test ran (two systems or more)."""

    metric: str
    columns: List[str]
    rows: List[Tuple[str, List[Cell]]]
    baseline: Optional[str] = None
    samples: int = 0
    comparisons: Dict[str, Dict[str, Comparison]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    # the same systems by a different scorer, shown as its own table (ROUGE: rouge-score's F1)
    second: Optional["ScoreTable"] = None


def read_bleu_references(path: str) -> List[str]:
    """Reference documents for BLEU: one document per line, or, when the file has an empty
    line, ``fairseq-hier-doc extract``'s target file (one sentence per line, documents separated
    by one empty line), each document its sentences joined by spaces (as doc-bleu joins them)."""
    lines = read_lines(path)
    if any(not line.strip() for line in lines):
        return [" ".join(block) for block in read_sentence_blocks(path)]
    return lines


def load_references(path: str, metric: str) -> List[Reference]:
    """The references of a scored split. ROUGE: a tuple per example,
    :func:`fairseq_hier.scoring.rouge.read_references` (one reference per line, or a ``.jsonl``
    of one JSON list of references per line); BLEU: :func:`read_bleu_references`."""
    if metric == "bleu":
        return read_bleu_references(path)
    return read_references([path])


def most_references(refs: Sequence[Reference]) -> int:
    """The largest number of references of one example (1 for plain strings)."""
    return max((1 if isinstance(r, str) else len(r) for r in refs), default=0)


def _as_tuple(ref: Reference) -> Tuple[str, ...]:
    return (ref,) if isinstance(ref, str) else tuple(ref)


def first_difference(a: Sequence[Reference], b: Sequence[Reference]) -> Optional[int]:
    """The 0-based index of the first example whose references differ in ``a`` and ``b`` (the
    shorter's length when one is the start of the other); None when they are the same."""
    for i, (x, y) in enumerate(zip(a, b)):
        if _as_tuple(x) != _as_tuple(y):
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def describe_difference(a: Sequence[Reference], b: Sequence[Reference], i: int,
                        width: int = 60) -> Tuple[str, str]:
    """Example ``i`` of ``a`` and of ``b`` for a message, where they differ: the text (cut to
    ``width`` characters), ``reference K of N: text`` when an example has several, ``no line``
    past the end."""
    x = _as_tuple(a[i]) if i < len(a) else None
    y = _as_tuple(b[i]) if i < len(b) else None
    k = next((k for k, (p, q) in enumerate(zip(x or (), y or ())) if p != q),
             min(len(x or ()), len(y or ())))
    several = len(x or ()) > 1 or len(y or ()) > 1

    def describe(refs: Optional[Tuple[str, ...]]) -> str:
        if refs is None:
            return "no line"
        if k >= len(refs):
            return f"{len(refs)} reference{'s' * (len(refs) > 1)}"
        text = refs[k] if len(refs[k]) <= width else refs[k][: width - 3] + "..."
        return f"reference {k + 1} of {len(refs)}: {text!r}" if several else repr(text)

    return describe(x), describe(y)


def scores_file_headline(path: str) -> str:
    """What a run's score report says, in one line: ROUGE-1.5.5's F1 x100 of a ROUGE report
    (``fairseq-hier-rouge``), the document BLEU of every system of a ``fairseq-hier-doc-bleu``
    output (its last line, JSON); the file's name alone when neither is found."""
    name = os.path.basename(path)
    lines = read_lines(path)
    report = parse_report("\n".join(lines))
    if all(k in report and "f" in report[k] for k, _ in ROUGE_COLUMNS):
        return (f"{name}: ROUGE-1/2/L F1 x100 "
                + " / ".join(f"{100 * report[k]['f']:.2f}" for k, _ in ROUGE_COLUMNS))
    try:
        systems = json.loads(lines[-1])["systems"] if lines else None
        bleu = {n: float(e["doc_bleu"]) for n, e in systems.items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return name
    return f"{name}: doc BLEU " + ", ".join(f"{n} {v:.2f}" for n, v in bleu.items())


def _check_counts(refs: Sequence[Reference], systems: Dict[str, Sequence[str]], ref_name: str,
                  sources: Dict[str, str]) -> None:
    for name, hyps in systems.items():
        if len(hyps) != len(refs):
            raise HierError(f"line counts differ: {ref_name} has {len(refs)} lines, "
                            f"{sources.get(name, name)} has {len(hyps)} (one per line)")


def rouge_table(refs: Sequence[Reference], systems: Dict[str, List[str]], baseline: str,
                samples: int = 1000, seed: int = 0, ref_name: str = "the reference",
                sources: Optional[Dict[str, str]] = None) -> ScoreTable:
    """ROUGE-1/2/L F1 x100 [95% interval] of every system, marks against ``baseline``; and, as
    ``table.second``, rouge-score's F1 x100 of every system (:func:`rouge_score_table`)."""
    sources = sources or {}
    _check_counts(refs, systems, ref_name, sources)
    table = ScoreTable("rouge", [label for _, label in ROUGE_COLUMNS], [], samples=samples)
    result = None
    if len(systems) >= 2:  # its ROUGE run per system also gives the printed scores
        result = rouge_significance(refs, systems, baseline, samples, seed, ref_name=ref_name)
    for name, hyps in systems.items():
        s = (result["reported"][name] if result is not None
             else rouge_scores(refs, hyps, zero_empty_summary=True))
        table.rows.append((name, [Cell(100 * s[k]["f"], 100 * s[k]["f_low"], 100 * s[k]["f_high"])
                                  for k, _ in ROUGE_COLUMNS]))
    table.second = rouge_score_table(refs, systems)
    if official_unavailable() is not None:
        table.notes.append(f"NOT ROUGE-1.5.5: the rouge-score fallback scored these "
                           f"({official_unavailable()}).")
    if result is None:
        table.notes.append("One system: no significance test.")
        return table
    table.baseline = baseline
    for name, cells in table.rows:
        if name == baseline:
            continue
        entries = result["systems"][name]
        table.comparisons[name] = {}
        for cell, (key, label) in zip(cells, ROUGE_COLUMNS):
            e = entries[key]
            cell.mark = mark(e["p_value"])
            table.comparisons[name][label] = Comparison(100 * e["delta"], 100 * e["low"],
                                                        100 * e["high"], e["p_value"])
    return table


def rouge_score_table(refs: Sequence[Reference], systems: Dict[str, List[str]]) -> ScoreTable:
    """rouge-score's mean F1 x100 (rouge1, rouge2, rougeL, rougeLsum) of every system, as
    ``rouge --also-rouge-score -zs`` prints it; ``metric`` names the scorer and its version."""
    table = ScoreTable(f"rouge-score {rouge_score_version()}", list(ROUGE_SCORE_KEYS), [])
    for name, hyps in systems.items():
        f1 = rouge_score_f1(refs, hyps, zero_empty_summary=True)
        table.rows.append((name, [Cell(100 * f1[k]) for k in ROUGE_SCORE_KEYS]))
    return table


def bleu_table(refs: Sequence[str], systems: Dict[str, List[str]], baseline: str,
               tgt_lang: str = "en", samples: int = 1000, seed: int = 12345,
               ref_name: str = "the reference",
               sources: Optional[Dict[str, str]] = None) -> ScoreTable:
    """Document BLEU [sacreBLEU bootstrap 95% interval] and document chrF of every system, marks
    vs ``baseline`` from the paired test of
    :func:`fairseq_hier.scoring.significance.bleu_significance` (``fairseq-hier-doc-bleu``'s and
    ``fairseq-hier-significance bleu``'s)."""
    sources = sources or {}
    _check_counts(refs, systems, ref_name, sources)
    table = ScoreTable("bleu", ["doc BLEU", "doc chrF"], [], samples=samples)
    tokenize = default_tokenize(tgt_lang)
    result = bleu_significance(refs, systems, baseline, tgt_lang, samples, seed, tokenize,
                               ref_name=ref_name, min_systems=1)
    chrf = metrics(tokenize)[1]
    for name, hyps in systems.items():
        e = result["systems"][name]
        mean, half = e["sacrebleu_mean"], e["sacrebleu_ci95"]
        cell = Cell(e["bleu"], mean - half, mean + half)
        chrf_cell = Cell(chrf.corpus_score(list(hyps), [list(refs)]).score)
        if len(systems) > 1 and name != baseline:
            cell.mark = mark(e["p_value"])
            table.comparisons.setdefault(name, {})["doc BLEU"] = Comparison(
                e["delta"], e["low"], e["high"], e["p_value"])
        table.rows.append((name, [cell, chrf_cell]))
    table.notes.append(f"BLEU: sacreBLEU {result['signature']}; the interval is sacreBLEU's "
                       f"bootstrap mean \u00b1 95% half-width.")
    table.notes.append(f"chrF: sacreBLEU {chrf.get_signature()}; no interval or test.")
    if len(systems) < 2:
        table.notes.append("One system: no significance test.")
        return table
    table.baseline = baseline
    return table
