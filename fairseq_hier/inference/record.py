"""The preprocessing record of a data-bin: how a recipe turned raw documents into the lines that
``fairseq-preprocess`` binarized, so a checkpoint trained on it can summarise new raw documents.

    fairseq-hier-record DATA_BIN --task hierarchical_summarization --pipeline paragraphs \\
        --option subword=sentencepiece --asset spm.model=work/spm/spm.model \\
        --generation "--beam 5 --lenpen 1.0 --max-len-b 200 --no-repeat-ngram-size 3"

Written next to the binarized data (the recipes call it right after ``fairseq-preprocess``):

    DATA_BIN/hier_preprocess.json   {"format": 1, "task": ..., "pipeline": ..., "options": {...},
                                     "assets": {name: {"file": "hier_assets/NAME",
                                                       "sha256": ...}},
                                     "generation": ["--beam", "5", ...]}
    DATA_BIN/hier_assets/NAME       copies of the files the pipeline needs (sentencepiece model,
                                    GPT-2 BPE files, BPE codes, a paragraph ranker checkpoint)

``pipeline`` names a :class:`~fairseq_hier.inference.pipelines.Pipeline`; its ``OPTIONS`` and
``ASSETS`` are checked here, so a wrong record fails at preprocessing time, not at inference.
``generation`` holds the recipe's tuned ``fairseq-generate`` options (overridable at inference);
:func:`write_record` parses them with fairseq-interactive's own parser, as the summarizer will,
and checks their ranges (:func:`check_generation`). The record and its assets are written
together or not at all (:class:`fairseq_hier.io.OutputSet`).

Our tasks put the record, the bytes of its assets and the data-bin's dictionaries into their
checkpoint state (:func:`record_state`, saved by fairseq as ``task_state`` in every checkpoint),
so a checkpoint is self-describing: :func:`restore` writes them back into a folder that serves as
the task's ``data`` at inference, wherever the original data-bin went.
"""

import hashlib
import json
import os
import shutil
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import HierError
from ..io import staged_outputs
from .pipeline_base import RecordError
from .pipelines import PIPELINES

RECORD_FILE = "hier_preprocess.json"
ASSETS_DIR = "hier_assets"
STATE_KEY = "hier_preprocess"  # key in the task's checkpoint state
FORMAT = 1


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Assets:
    """The asset files of a record, by name."""

    def __init__(self, files: Dict[str, str]):
        self.files = dict(files)

    def path(self, name: str) -> str:
        if name not in self.files:
            raise RecordError(f"the preprocessing record has no asset {name!r} "
                              f"(it has: {', '.join(sorted(self.files)) or 'none'})")
        return self.files[name]

    @classmethod
    def of(cls, record: dict, folder: str) -> "Assets":
        return cls({name: os.path.join(folder, a["file"])
                    for name, a in record.get("assets", {}).items()})


def check_record(record: dict, where: str) -> dict:
    """Validate a record (its pipeline, options and assets); return it."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f"{where}: not a fairseq-hier preprocessing record of format {FORMAT}")
    for key in ("task", "pipeline", "options", "assets", "generation"):
        if key not in record:
            raise RecordError(f"{where}: the record has no {key!r}")
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
    if not isinstance(record["generation"], list) or not all(
            isinstance(a, str) for a in record["generation"]):
        raise RecordError(f"{where}: 'generation' must be a list of fairseq-generate arguments")
    return record


def check_generation(data_bin: str, task: str, generation: Sequence[str]) -> None:
    """Parse a record's ``generation`` options with fairseq-interactive's parser for ``task``
    (the one the summarizer parses them with) and check the decoding options' ranges
    (:func:`fairseq_hier.generation.checks.check_generation_options`). :class:`RecordError`
    naming the option: an unknown one, a malformed value, ``--beam -3``."""
    # fairseq is imported only here: reading a record (and --help) stays light
    from fairseq import options as fairseq_options

    from .. import register
    from ..generation.checks import check_generation_options

    register()  # our tasks' options, as --user-dir would add them

    def error(message: str):
        raise RecordError(f"--generation {' '.join(generation)!r}: {message}")

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


def write_record(data_bin: str, task: str, pipeline: str, options: Optional[dict] = None,
                 assets: Optional[Dict[str, str]] = None,
                 generation: Sequence[str] = ()) -> str:
    """Check and write ``DATA_BIN/hier_preprocess.json``, copying the assets beside it; the
    record and the copies appear together once all are written."""
    if not os.path.isdir(data_bin):
        raise RecordError(f"{data_bin}: no such data-bin directory (run fairseq-preprocess first)")
    assets = dict(assets or {})
    for name, src in assets.items():
        if os.sep in name or name in ("", ".", ".."):
            raise RecordError(f"asset name {name!r} must be a plain file name")
        if not os.path.isfile(src):
            raise RecordError(f"asset {name}: {src} is not a file")
    record = {"format": FORMAT, "task": task, "pipeline": pipeline, "options": dict(options or {}),
              "assets": {n: {"file": f"{ASSETS_DIR}/{n}", "sha256": _sha256(p)}
                         for n, p in assets.items()},
              "generation": list(generation)}
    path = os.path.join(data_bin, RECORD_FILE)
    check_record(record, path)
    check_generation(data_bin, task, record["generation"])
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


def read_record(folder: str) -> Optional[dict]:
    """The checked record of a data-bin (or restored folder), or None when it has none."""
    path = os.path.join(folder, RECORD_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: unreadable preprocessing record ({e})") from None
    check_record(record, path)
    for name, a in record["assets"].items():
        file = os.path.join(folder, a["file"])
        if not os.path.isfile(file):
            raise RecordError(f"{path}: asset {name} is missing ({file})")
    return record


def dictionary_files(folder: str) -> List[str]:
    """The fairseq dictionaries of a data-bin (``dict*.txt``)."""
    return sorted(f for f in os.listdir(folder) if f.startswith("dict") and f.endswith(".txt"))


def record_state(data_bin: str) -> Optional[dict]:
    """What a task keeps in its checkpoint state: the record, its assets' bytes and the
    dictionaries of the data-bin; None when the data-bin has no record."""
    record = read_record(data_bin)
    if record is None:
        return None
    files = {}
    for a in record["assets"].values():
        with open(os.path.join(data_bin, a["file"]), "rb") as f:
            files[a["file"]] = f.read()
    for name in dictionary_files(data_bin):
        with open(os.path.join(data_bin, name), "rb") as f:
            files[name] = f.read()
    return {"record": record, "files": files}


def restore(state: dict, folder: str) -> Tuple[dict, Assets]:
    """Write a checkpoint's record state into ``folder`` (record, assets, dictionaries)."""
    record = state["record"]
    for rel in state["files"]:  # names from a checkpoint: they stay inside ``folder``
        if (not isinstance(rel, str) or os.path.isabs(rel)
                or os.path.normpath(rel).split(os.sep)[0] in ("..", "")):
            raise RecordError(f"its preprocessing record holds the file {rel!r}, a path outside "
                              "the record's folder")
    files = {os.path.join(folder, rel): data for rel, data in state["files"].items()}
    with staged_outputs([*files, os.path.join(folder, RECORD_FILE)]) as staged:
        for tmp, data in zip(staged, files.values()):
            with open(tmp, "wb") as f:
                f.write(data)
        with open(staged[-1], "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, ensure_ascii=False)
    for name, a in record["assets"].items():
        if _sha256(os.path.join(folder, a["file"])) != a["sha256"]:
            raise RecordError(f"asset {name} of the checkpoint's record does not match its sha256")
    return record, Assets.of(record, folder)


def keep_in_task_state(task, data_path: str) -> None:
    """Put the data-bin's record into ``task``'s checkpoint state (if it has one). A record
    already in the state (from a checkpoint) is replaced only by a data-bin that has its own."""
    state = record_state(data_path)
    if state is not None:
        task.state.merge_state_dict({STATE_KEY: state})
