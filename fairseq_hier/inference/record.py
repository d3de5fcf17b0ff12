"""Writing and checking the preprocessing record of a data-bin: how a recipe turned raw
documents into the lines that ``fairseq-preprocess`` binarized, so a checkpoint trained on it can
summarise new raw documents.

:func:`check_record` (the pipeline's ``OPTIONS`` and ``ASSETS``), :func:`check_generation` and
:func:`write_record` (record and assets together or not at all); the layout lives in
:mod:`fairseq_hier.data.preprocessing_record`. Details: docs/inference.md, section
fairseq_hier.inference.record.
Imports ``data``, ``generation``, ``safe_loading``, ``io``, ``errors``; fairseq inside functions.
"""

import json
import os
import shutil
from typing import Dict, Optional, Sequence, Tuple

from .. import register
from ..data.preprocessing_record import (ASSETS_DIR, FORMAT, RECORD_FILE, Assets,  # noqa: F401
                                         RecordError, check_layout, generation_for, read_record,
                                         sha256)
from ..errors import HierError
from ..generation.checks import check_generation_options
from ..io import staged_outputs
from ..safe_loading import check_fairseq_checkpoint, checkpoint_task_and_arch, load
from .pipelines import PIPELINES


def check_record(record: dict, where: str) -> dict:
    """Validate a record (its layout, pipeline, options and assets); return it."""
    check_layout(record, where)
    name = record["pipeline"]
    if name not in PIPELINES:
        raise RecordError(f"{where}: unknown pipeline {name!r} (known: {', '.join(sorted(PIPELINES))})")
    cls = PIPELINES[name]
    if record["task"] not in cls.TASKS:
        raise RecordError(f"{where}: pipeline {name!r} prepares data for "
                          f"{', '.join(cls.TASKS)}, not for task {record['task']!r}")
    unknown = sorted(set(record["options"]) - set(cls.OPTIONS))
    if unknown:
        raise RecordError(f"{where}: pipeline {name!r} has no option {unknown[0]!r} "
                          f"(its options: {', '.join(sorted(cls.OPTIONS)) or 'none'})")
    options = cls.resolve_options(record["options"])
    cls.check_options(options, where)
    missing = [a for a in cls.required_assets(options) if a not in record["assets"]]
    if missing:
        raise RecordError(f"{where}: pipeline {name!r} needs the asset {missing[0]!r} "
                          f"(--asset {missing[0]}=PATH)")
    return record


def check_generation(data_bin: str, task: str, generation: Sequence[str],
                     label: Optional[str] = None) -> None:
    """Parse a record's ``generation`` options with fairseq-interactive's parser for ``task``
    (the one the summarizer parses them with) and check the decoding options' ranges
    (:func:`fairseq_hier.generation.checks.check_generation_options`). :class:`RecordError`
    naming the option: an unknown one, a malformed value, ``--beam -3``; the message opens with
    ``label`` (default: ``--generation 'OPTIONS'``)."""
    from fairseq import options as fairseq_options  # lazily: keeps startup light

    register()  # our tasks' options, as --user-dir would add them
    label = label if label is not None else f"--generation {' '.join(generation)!r}"

    def error(message: str):
        raise RecordError(f"{label}: {message}")

    parser = fairseq_options.get_generation_parser(interactive=True, default_task=task)
    parser.error = error  # argparse's errors (a bad value or choice) exit the process otherwise
    args, unknown = fairseq_options.parse_args_and_arch(
        parser, [data_bin, "--task", task, *generation], parse_known=True)
    if unknown:
        error(f"unknown option(s) {' '.join(unknown)} (fairseq-generate's options and task "
              f"{task}'s are expected)")
    try:
        check_generation_options(args)
    except HierError as e:
        error(str(e))


def check_generation_for(data_bin: str, task: str,
                         generation_for: Dict[str, Sequence[str]]) -> None:
    """Check the per-architecture decoding options: each name a registered architecture, each
    list as :func:`check_generation` checks ``generation``."""
    from fairseq.models import ARCH_MODEL_REGISTRY  # lazily: keeps startup light

    register()
    for arch, generation in generation_for.items():
        if arch not in ARCH_MODEL_REGISTRY:
            raise RecordError(f"--generation-for {arch}: no such architecture (fairseq-train "
                              f"--arch's choices, with fairseq-hier's registered)")
        try:
            check_generation(data_bin, task, generation)
        except RecordError as e:
            raise RecordError(f"--generation-for {arch}: {e}") from None


def write_record(data_bin: str, task: str, pipeline: str, options: Optional[dict] = None,
                 assets: Optional[Dict[str, str]] = None,
                 generation: Sequence[str] = (),
                 generation_for: Optional[Dict[str, Sequence[str]]] = None) -> str:
    """Check and write ``DATA_BIN/hier_preprocess.json``, copying the assets beside it; the
    record and the copies appear together once all are written. ``generation_for``: decoding
    options of named architectures, replacing ``generation`` for their checkpoints."""
    if not os.path.isdir(data_bin):
        raise RecordError(f"{data_bin}: no such data-bin directory (run fairseq-preprocess first)")
    assets = dict(assets or {})
    for name, src in assets.items():
        if os.sep in name or name in ("", ".", ".."):
            raise RecordError(f"asset name {name!r} must be a plain file name")
        if not os.path.isfile(src):
            raise RecordError(f"asset {name}: {src} is not a file")
    record = {"format": FORMAT, "task": task, "pipeline": pipeline, "options": dict(options or {}),
              "assets": {n: {"file": f"{ASSETS_DIR}/{n}", "sha256": sha256(p)}
                         for n, p in assets.items()},
              "generation": list(generation)}
    if generation_for:
        record["generation_for"] = {arch: list(g) for arch, g in generation_for.items()}
    path = os.path.join(data_bin, RECORD_FILE)
    check_record(record, path)
    check_generation(data_bin, task, record["generation"])
    check_generation_for(data_bin, task, record.get("generation_for", {}))
    # an asset already in place (DATA_BIN/hier_assets/NAME given as its own source) stays
    copies = {os.path.join(data_bin, ASSETS_DIR, name): src for name, src in assets.items()
              if not _same_file(src, os.path.join(data_bin, ASSETS_DIR, name))}
    with staged_outputs([*copies, path], inputs=copies.values()) as staged:
        for tmp, src in zip(staged, copies.values()):
            shutil.copyfile(src, tmp)
        with open(staged[-1], "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, ensure_ascii=False)
    return path


def _same_file(a: str, b: str) -> bool:
    return os.path.exists(b) and os.path.samefile(a, b)


def checkpoint_arch(path: str) -> str:
    """The architecture a checkpoint was trained with (read with the safe loader)."""
    return checkpoint_task_arch(path)[1]


def checkpoint_task_arch(path: str) -> Tuple[Optional[str], str]:
    """(task, architecture) a checkpoint was trained with (read with the safe loader; the task
    None when it names none)."""
    if not os.path.isfile(path):
        raise RecordError(f"{path}: no such checkpoint")
    state = load(path, map_location="cpu")
    check_fairseq_checkpoint(state, path)
    task, arch = checkpoint_task_and_arch(state)
    if not arch:
        raise RecordError(f"checkpoint {path} names no architecture (no cfg.model nor args.arch)")
    return task, arch


def recorded_generation(folder: str, arch: Optional[str]) -> list:
    """The decoding options the record of ``folder`` gives a checkpoint of ``arch``
    (:func:`fairseq_hier.data.preprocessing_record.generation_for`); one-line error when the
    folder has no record."""
    record = read_checked_record(folder)
    if record is None:
        raise RecordError(f"{folder} has no {RECORD_FILE} (write it with fairseq-hier-record data)")
    return generation_for(record, arch)


def read_checked_record(folder: str) -> Optional[dict]:
    """The record of a data-bin or folder with its pipeline's checks (:func:`check_record`), or
    None when it has none."""
    return read_record(folder, check=check_record)
