"""The preprocessing record of a data-bin as a file and as checkpoint state: its layout, its
assets, and what a task keeps of it in every checkpoint.

:func:`read_record` checks the layout of ``DATA_BIN/hier_preprocess.json``, :func:`generation_for`
picks an architecture's decoding options, :func:`keep_in_task_state` and :func:`restore` carry
the record in checkpoints. The layout and its rules:
docs/data-formats.md#the-preprocessing-record. Standard library only; it never
imports the pipelines (:mod:`fairseq_hier.inference`), which sit above the tasks that import it.
"""

import hashlib
import json
import os
from typing import Callable, Dict, List, Optional, Tuple

from ..errors import HierError
from ..io import staged_outputs

RECORD_FILE = "hier_preprocess.json"
ASSETS_DIR = "hier_assets"
STATE_KEY = "hier_preprocess"  # key in the task's checkpoint state
FORMAT = 1
KEYS = ("task", "pipeline", "options", "assets", "generation")


class RecordError(HierError):
    """A missing or malformed preprocessing record (one-line message)."""


def sha256(path: str) -> str:
    """The hex SHA-256 of a file (an asset's checksum in the record)."""
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


def check_layout(record: dict, where: str) -> dict:
    """Refuse a record that is not of this format or lacks one of its keys; return it."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f"{where}: not a fairseq-hier preprocessing record of format {FORMAT}")
    for key in KEYS:
        if key not in record:
            raise RecordError(f"{where}: the record has no {key!r}")
    if not isinstance(record["generation"], list) or not all(
            isinstance(a, str) for a in record["generation"]):
        raise RecordError(f"{where}: 'generation' must be a list of fairseq-generate arguments")
    per_arch = record.get("generation_for", {})
    if not isinstance(per_arch, dict):
        raise RecordError(f"{where}: 'generation_for' must map architecture names to lists of "
                          f"fairseq-generate arguments, not a {type(per_arch).__name__}")
    for arch, options in per_arch.items():
        if not arch or not isinstance(options, list) or not all(isinstance(a, str)
                                                               for a in options):
            raise RecordError(f"{where}: 'generation_for' entry {arch!r} must be a list of "
                              f"fairseq-generate arguments")
    return record


def generation_for(record: dict, arch: Optional[str]) -> List[str]:
    """The decoding options a record gives a checkpoint of ``arch``: its ``generation_for``
    entry when it has one, else ``generation``."""
    return list(record.get("generation_for", {}).get(arch, record["generation"]))


def read_record(folder: str,
                check: Callable[[dict, str], dict] = check_layout) -> Optional[dict]:
    """The record of a data-bin (or restored folder), checked by ``check`` (the layout; the
    inference side passes its full check), with every asset present; None when it has none."""
    path = os.path.join(folder, RECORD_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: unreadable preprocessing record ({e})") from None
    check(record, path)
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
        if sha256(os.path.join(folder, a["file"])) != a["sha256"]:
            raise RecordError(f"asset {name} of the checkpoint's record does not match its sha256")
    return record, Assets.of(record, folder)


def keep_in_task_state(task, data_path: str) -> None:
    """Put the data-bin's record into ``task``'s checkpoint state (if it has one). A record
    already in the state (from a checkpoint) is replaced only by a data-bin that has its own."""
    state = record_state(data_path)
    if state is not None:
        task.state.merge_state_dict({STATE_KEY: state})
