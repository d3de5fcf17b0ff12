"""One RUN_DIR (one trained system) as the report reads it, with its optional files checked.

    run = load_run("demo_work/checkpoints/pht")
    run.name, run.arch, run.hypotheses(), run.efficiency, run.attention

Files of a RUN_DIR (all optional; what is missing becomes a note in the report):

- ``run.json``: ``{"name": "PHT", "arch": "pht"}``; name defaults to the folder name, arch to
  the folder name too (the demo's layout is ``checkpoints/<arch>/``).
- ``train.log``: fairseq-train's output (:mod:`fairseq_hier.report.logs`).
- ``test.hyp`` (one detokenised output per line) or else ``generate-test.txt``
  (``fairseq-generate --results-path``; its ``D-`` lines): the scored summaries.
- ``test.docs``: one detokenised document per line (``fairseq-hier-doc-bleu --output-dir``'s
  ``NAME.docs``): the scored translations of ``--metric bleu``.
- ``generate-test.txt`` with ``A-`` lines (``fairseq-generate --print-sentence-attention``,
  HAT): sentence-attention heatmaps.
- ``efficiency.json`` (``fairseq-hier-efficiency --output``)::

    {"device": "cpu", "tokens": 1600, "budget_gib": 11.0, "dtype": "fp32", "layers": 3,
     "embed_dim": 256, "heads": 4, "data": null,
     "rows": [{"arch": "pht", "params": 123, "params_mb": 0.5, "max_batch": 8,
               "max_batch_at_limit": false, "max_batch_method": "cpu search (peak allocations)",
               "peak_mem_mb": 12.5, "peak_batch": 1, "valid_seconds": 3.2,
               "valid_examples": 200, "valid_note": "synthetic"}, ...]}

  (the full description: :mod:`fairseq_hier.analysis.efficiency`).

- ``attention.json`` (``fairseq-hier-attention-cosine --output``)::

    {"kind": "paragraph", "arch": "pht", "checkpoint": "...", "split": "test", "examples": N,
     "cosine": {"mean": m, "low": lo, "high": hi}, "per_example": [...],
     "heatmaps": [{"id": 0, "rows": [tokens..., "</s>"], "cols": ["P1", ...],
                   "weights": [[P floats] per row], "gold": [P floats]}, ...]}

A file that is present but malformed (not JSON, a field of the wrong type, a heatmap whose
weights do not match its labels) is a ValueError naming the file and the field.
"""

import json
import os
from dataclasses import dataclass
from numbers import Number
from typing import List, Optional

from fairseq_hier.analysis.generate_log import read_hypotheses
from fairseq_hier.io import read_lines

from ..errors import HierError

HYP_FILES = ("test.hyp", "generate-test.txt")
GENERATE = "generate-test.txt"
# the files a report reads from a RUN_DIR (run.json only names the run)
REPORTED_FILES = ("train.log", *HYP_FILES, "test.docs", "efficiency.json", "attention.json")


def read_json(path: str) -> dict:
    """A JSON object from a file; ValueError naming the file (and line) otherwise."""
    text = "\n".join(read_lines(path))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise HierError(f"{path}:{e.lineno}: not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(value, dict):
        raise HierError(f"{path}: a JSON object is expected, got {type(value).__name__}")
    return value


def _field(obj: dict, key: str, kind, path: str, where: str = "", optional: bool = False):
    """``obj[key]`` checked to be of ``kind`` (None allowed when ``optional``)."""
    value = obj.get(key)
    if value is None and optional:
        return None
    ok = isinstance(value, kind) and not (kind is Number and isinstance(value, bool))
    if not ok:
        label = {Number: "a number", str: "a string", dict: "an object", list: "a list",
                 int: "an integer", bool: "true or false"}[kind]
        raise HierError(f"{path}: {where}{key} must be {label}, got {value!r:.60}")
    return value


def check_efficiency(data: dict, path: str) -> dict:
    """efficiency.json's schema: ``rows`` of objects with an ``arch``, numbers or null else."""
    rows = _field(data, "rows", list, path)
    for i, row in enumerate(rows):
        where = f"rows[{i}]."
        if not isinstance(row, dict):
            raise HierError(f"{path}: rows[{i}] must be an object")
        _field(row, "arch", str, path, where)
        for key in ("params", "params_mb", "max_batch", "peak_mem_mb", "peak_batch",
                    "valid_seconds", "valid_examples"):
            _field(row, key, Number, path, where, optional=True)
        for key in ("max_batch_method", "valid_note"):
            _field(row, key, str, path, where, optional=True)
        _field(row, "max_batch_at_limit", bool, path, where, optional=True)
    return data


def check_heatmap(h: dict, path: str, i: int) -> dict:
    where = f"heatmaps[{i}]."
    if not isinstance(h, dict):
        raise HierError(f"{path}: heatmaps[{i}] must be an object")
    rows = _field(h, "rows", list, path, where)
    cols = _field(h, "cols", list, path, where)
    weights = _field(h, "weights", list, path, where)
    if not rows or not cols:
        raise HierError(f"{path}: {where}rows and cols must not be empty")
    if len(weights) != len(rows):
        raise HierError(f"{path}: {where}weights has {len(weights)} rows, rows names "
                        f"{len(rows)} (one per target token)")
    for t, w in enumerate(weights):
        if (not isinstance(w, list) or len(w) != len(cols)
                or not all(isinstance(x, Number) for x in w)):
            raise HierError(f"{path}: {where}weights[{t}] must be {len(cols)} numbers (one per "
                            f"column of cols)")
    gold = h.get("gold")
    if gold is not None and (not isinstance(gold, list) or len(gold) != len(cols)
                             or not all(isinstance(x, Number) for x in gold)):
        raise HierError(f"{path}: {where}gold must be {len(cols)} numbers (one per column)")
    return h


def check_attention(data: dict, path: str) -> dict:
    """attention.json's schema (see the module docstring)."""
    cosine = _field(data, "cosine", dict, path)
    for key in ("mean", "low", "high"):
        _field(cosine, key, Number, path, "cosine.")
    _field(data, "examples", int, path)
    for i, h in enumerate(_field(data, "heatmaps", list, path, optional=True) or []):
        check_heatmap(h, path, i)
    return data


@dataclass
class Run:
    """One RUN_DIR, its optional JSON files read and checked."""

    path: str
    name: str
    arch: str
    efficiency: Optional[dict] = None
    attention: Optional[dict] = None

    def file(self, name: str) -> Optional[str]:
        path = os.path.join(self.path, name)
        return path if os.path.isfile(path) else None

    @property
    def train_log(self) -> Optional[str]:
        return self.file("train.log")

    @property
    def is_empty(self) -> bool:
        """True when the RUN_DIR holds none of the files the report reads."""
        return not any(map(self.file, REPORTED_FILES))

    @property
    def hyp_file(self) -> Optional[str]:
        return next((p for p in map(self.file, HYP_FILES) if p), None)

    def hypotheses(self) -> List[str]:
        """The scored summaries: test.hyp's lines, else generate-test.txt's D- lines."""
        path = self.hyp_file
        if path is None:
            raise HierError(f"{self.path} has no {' or '.join(HYP_FILES)}")
        if os.path.basename(path) == GENERATE:
            return read_hypotheses(path, kind="D")
        return read_lines(path)


def load_run(path: str) -> Run:
    """A RUN_DIR; ValueError if it is not a folder or one of its JSON files is malformed."""
    if not os.path.isdir(path):
        raise HierError(f"{path} is not a folder (a RUN_DIR: one trained system)")
    folder = os.path.basename(os.path.normpath(path))
    name, arch = folder, folder
    meta_path = os.path.join(path, "run.json")
    if os.path.isfile(meta_path):
        meta = read_json(meta_path)
        name = _field(meta, "name", str, meta_path, optional=True) or name
        arch = _field(meta, "arch", str, meta_path, optional=True) or arch
    run = Run(path, name, arch)
    eff = run.file("efficiency.json")
    run.efficiency = check_efficiency(read_json(eff), eff) if eff else None
    att = run.file("attention.json")
    run.attention = check_attention(read_json(att), att) if att else None
    return run


def load_runs(paths: List[str]) -> List[Run]:
    runs = [load_run(p) for p in paths]
    names = [r.name for r in runs]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise HierError(f"two RUN_DIRs are named {doubled[0]!r}: give one a run.json "
                        f"{{\"name\": ...}}")
    return runs
