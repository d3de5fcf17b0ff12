"""One RUN_DIR (one trained system) as the report reads it, with its optional files checked.

    run = load_run("work/runs/pht", subset="test")
    run.name, run.arch, run.metric, run.hypotheses(), run.reference_file("rouge"), run.efficiency

:func:`load_run`, :func:`load_references`, :func:`write_run_json`. The RUN_DIR's files
(``run.json``, hypotheses, references, score reports, ``efficiency.json``, ``attention.json``)
and their checks: docs/data-formats.md#the-run-folder. Imports
``analysis.generate_log``, ``io``, ``errors``.
"""

import json
import os
import re
from dataclasses import dataclass
from numbers import Number
from typing import Callable, List, Optional, Tuple

from fairseq_hier.analysis.generate_log import read_hypotheses
from fairseq_hier.io import check_output_folder, read_lines, write_text

from ..errors import HierError

METRICS = ("rouge", "bleu")
DEFAULT_SUBSET = "test"
#: what makes a folder a trained run: run.json, fairseq-train's log or a checkpoint
TRAINED_RUN = re.compile(r"run\.json|train\.log|checkpoint.*\.pt")


def hyp_files(subset: str) -> Tuple[str, str]:
    """The files of the scored summaries, the first found read: ``SUBSET.hyp``, else
    ``generate-SUBSET.txt``'s D- lines."""
    return f"{subset}.hyp", generate_file(subset)


def generate_file(subset: str) -> str:
    """fairseq-generate's output of the split (``--results-path RUN_DIR``)."""
    return f"generate-{subset}.txt"


def reference_files(subset: str, metric: str) -> Tuple[str, ...]:
    """The run's references of the split for ``metric``, the first found read: ROUGE
    ``SUBSET.refs.jsonl`` (several references per example) else ``SUBSET.ref``; BLEU
    ``SUBSET.ref`` (one reference document per line)."""
    return (f"{subset}.refs.jsonl", f"{subset}.ref") if metric == "rouge" else (f"{subset}.ref",)


def reported_files(subset: str) -> Tuple[str, ...]:
    """The files a report reads from a RUN_DIR besides run.json (which only names the run) and
    the references (which score the others)."""
    return ("train.log", *hyp_files(subset), f"{subset}.docs", "efficiency.json",
            "attention.json")


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
    """One RUN_DIR, its optional JSON files read and checked; ``subset``: the scored split."""

    path: str
    name: str
    arch: str
    subset: str = DEFAULT_SUBSET
    task: Optional[str] = None
    metric: Optional[str] = None  # run.json's: what the run is scored by
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
        return not any(map(self.file, reported_files(self.subset)))

    @property
    def hyp_file(self) -> Optional[str]:
        return next((p for p in map(self.file, hyp_files(self.subset)) if p), None)

    @property
    def generate_file(self) -> Optional[str]:
        return self.file(generate_file(self.subset))

    @property
    def docs_file(self) -> Optional[str]:
        return self.file(f"{self.subset}.docs")

    def scored_file(self, metric: str) -> Optional[str]:
        """What ``metric`` scores: the summaries (ROUGE) or the documents (BLEU)."""
        return self.hyp_file if metric == "rouge" else self.docs_file

    def reference_file(self, metric: str) -> Optional[str]:
        """The run's own references for ``metric`` (:func:`reference_files`), or None."""
        return next((p for p in map(self.file, reference_files(self.subset, metric)) if p), None)

    @property
    def scores_files(self) -> List[str]:
        """The score reports the run holds: ``SUBSET.rouge.txt``, ``SUBSET.rouge_KIND.txt``,
        ``SUBSET.bleu.txt``."""
        prefix = f"{self.subset}.rouge_"
        kinds = sorted(n for n in os.listdir(self.path)
                       if n.startswith(prefix) and n.endswith(".txt"))
        names = [f"{self.subset}.rouge.txt", *kinds, f"{self.subset}.bleu.txt"]
        return [p for p in map(self.file, names) if p]

    def hypotheses(self) -> List[str]:
        """The scored summaries: SUBSET.hyp's lines, else generate-SUBSET.txt's D- lines."""
        path = self.hyp_file
        if path is None:
            raise HierError(f"{self.path} has no {' or '.join(hyp_files(self.subset))}")
        if os.path.basename(path) == generate_file(self.subset):
            return read_hypotheses(path, kind="D")
        return read_lines(path)


def load_run(path: str, subset: str = DEFAULT_SUBSET) -> Run:
    """A RUN_DIR; a one-line error if it is not a folder or one of its JSON files is malformed."""
    if not os.path.isdir(path):
        raise HierError(f"{path} is not a folder (a RUN_DIR: one trained system)")
    folder = os.path.basename(os.path.normpath(path))
    run = Run(path, folder, folder, subset)
    meta_path = os.path.join(path, "run.json")
    if os.path.isfile(meta_path):
        meta = read_json(meta_path)
        run.name = _field(meta, "name", str, meta_path, optional=True) or run.name
        run.arch = _field(meta, "arch", str, meta_path, optional=True) or run.arch
        run.task = _field(meta, "task", str, meta_path, optional=True)
        run.metric = _field(meta, "metric", str, meta_path, optional=True)
        if run.metric is not None and run.metric not in METRICS:
            raise HierError(f"{meta_path}: metric must be {' or '.join(METRICS)}, got "
                            f"{run.metric!r:.60}")
    eff = run.file("efficiency.json")
    run.efficiency = check_efficiency(read_json(eff), eff) if eff else None
    att = run.file("attention.json")
    run.attention = check_attention(read_json(att), att) if att else None
    return run


def load_runs(paths: List[str], subset: str = DEFAULT_SUBSET) -> List[Run]:
    runs = [load_run(p, subset) for p in paths]
    names = [r.name for r in runs]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise HierError(f"two RUN_DIRs are named {doubled[0]!r}: give one a run.json "
                        f"{{\"name\": ...}}")
    return runs


def write_run_json(run_dir: str, name: str, arch: str, task: str, metric: str,
                   check_names: Optional[Callable[[str, str], None]] = None) -> str:
    """Write ``RUN_DIR/run.json`` (docs/data-formats.md#the-run-folder, as :func:`load_run`
    reads it) through the one writer (:func:`fairseq_hier.io.write_text`), once
    the fields, RUN_DIR and ``check_names(arch, task)`` (which raises for a name fairseq does
    not know) have passed; returns its path. The recipes call it as ``fairseq-hier-record run``."""
    if metric not in METRICS:
        raise HierError(f"run.json: metric must be {' or '.join(METRICS)}, got {metric!r:.60}")
    for key, value in (("name", name), ("arch", arch), ("task", task)):
        if not value:
            raise HierError(f"run.json: {key} must not be empty")
    check_output_folder("RUN_DIR", run_dir)
    if check_names is not None:
        check_names(arch, task)
    path = os.path.join(run_dir, "run.json")
    write_text(path, json.dumps({"name": name, "arch": arch, "task": task, "metric": metric})
               + "\n")
    return path


def inherit_run_json(run_dir: str, trained_dir: str, task: str, metric: str,
                     check_names: Optional[Callable[[str, str], None]] = None) -> str:
    """Write ``RUN_DIR/run.json`` if it has none: a decoding of a checkpoint of ``trained_dir``
    into a run folder of its own, named after that folder, with the arch (and task) of
    ``trained_dir``'s run.json, else the trained folder's name (and ``task``), which must then
    hold a trained run (a checkpoint or train.log: :data:`TRAINED_RUN`) and be named after its
    architecture (``check_names``: :func:`write_run_json`'s). Returns its path. The same folder
    as ``trained_dir`` keeps the run.json training wrote."""
    path = os.path.join(run_dir, "run.json")
    if os.path.isfile(path):
        return path
    if not os.path.isdir(trained_dir):
        raise HierError(f"--inherit {trained_dir}: not a folder (the trained run's folder is "
                        f"expected)")
    if not any(TRAINED_RUN.fullmatch(n) for n in os.listdir(trained_dir)):
        raise HierError(f"--inherit {trained_dir}: holds no trained run (no run.json, "
                        f"train.log or checkpoint*.pt)")
    trained = os.path.join(trained_dir, "run.json")
    meta = read_json(trained) if os.path.isfile(trained) else {}
    arch = _field(meta, "arch", str, trained, optional=True)
    task = _field(meta, "task", str, trained, optional=True) or task
    if arch is None:
        arch = os.path.basename(os.path.normpath(trained_dir))
        try:
            if check_names is not None:
                check_names(arch, task)
        except HierError as e:
            if not str(e).startswith("--arch"):
                raise
            raise HierError(f"--inherit {trained_dir}: has no run.json, and its folder's name "
                            f"{arch!r} is no architecture: write its run.json first "
                            f"(fairseq-hier-record run {trained_dir} --name NAME --arch ARCH "
                            f"--task TASK --metric METRIC)") from None
    return write_run_json(run_dir, os.path.basename(os.path.normpath(run_dir)), arch, task,
                          metric, check_names)


def run_metric(runs: List[Run], metric: Optional[str] = None) -> str:
    """The metric of the report: ``metric`` when given, else the one the runs' run.json name
    (rouge when none does); runs naming different metrics are a one-line error."""
    if metric is not None:
        return metric
    named = [r for r in runs if r.metric is not None]
    other = next((r for r in named if r.metric != named[0].metric), None)
    if other is not None:
        first = named[0]
        raise HierError(f"{first.name} is scored by {first.metric} ({first.path}/run.json), "
                        f"{other.name} by {other.metric} ({other.path}/run.json): one report "
                        f"scores one metric; give --metric or report them apart")
    return named[0].metric if named else "rouge"
