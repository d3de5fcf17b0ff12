"""fairseq-train's log -> training and validation curves.

    from fairseq_hier.report.logs import read_train_log
    log = read_train_log("runs/pht/train.log")
    log.series("train_inner", "loss")        # [(num_updates, loss), ...]

Which records are read (``--log-format simple`` or ``json``), what is skipped and the errors:
docs/evaluation.md, section fairseq_hier.report.logs. Imports ``io``, ``errors``.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from fairseq_hier.io import iter_lines
from ..errors import HierError

# "[2026-11-24 09:52:27 | ]INFO | train_inner | payload": logger names of the progress bar's
# records have no dots; module loggers (fairseq_cli.train, ...) do.
RECORD = re.compile(r"(?:^|\| )INFO \| ([A-Za-z0-9_-]+) \| (.*)$")
INNER = re.compile(r"^epoch (\d+):\s+(\d+) / (\d+) (.*)$")
SUMMARY = re.compile(r"^epoch (\d+) \| (.*)$")
VALID_PREFIX = re.compile(r"^valid on '([^']+)' subset$")
REQUIRED = ("loss", "num_updates")  # what every record must carry to be drawn


@dataclass
class TrainLog:
    """The records of one train.log, in file order; each record is ``{key: float}`` with at
    least ``epoch``, ``num_updates`` and ``loss``."""

    path: str
    train_inner: List[Dict[str, float]] = field(default_factory=list)
    train: List[Dict[str, float]] = field(default_factory=list)
    valid: Dict[str, List[Dict[str, float]]] = field(default_factory=dict)  # subset -> records
    log_format: Optional[str] = None  # "simple" or "json" (of the first record), None: none

    def series(self, kind: str, key: str, subset: str = "valid") -> List[Tuple[float, float]]:
        """``(num_updates, value)`` of ``key`` over the ``kind`` records ("train_inner", "train",
        "valid" for ``subset``), skipping records without that key."""
        records = self.valid.get(subset, []) if kind == "valid" else getattr(self, kind)
        return [(r["num_updates"], r[key]) for r in records if key in r]

    def counts(self) -> str:
        valid = ", ".join(f"{len(v)} {s}" for s, v in self.valid.items()) or "0 valid"
        return f"{len(self.train_inner)} train_inner, {len(self.train)} train, {valid} records"


def _number(value, where: str, key: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise HierError(f"{where}: {key} is {value!r}, not a number") from None


def _check(record: Dict[str, float], where: str, tag: str) -> Dict[str, float]:
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise HierError(f"{where}: the {tag} record has no {' or '.join(missing)}")
    return record


def parse_simple(tag: str, payload: str, where: str) -> Optional[Tuple[str, Dict[str, float]]]:
    """A ``--log-format simple`` record -> ``(kind, record)``; kind "train_inner", "train" or
    the validation subset; None if the payload is no progress-bar record of ``tag``."""
    if tag == "train_inner":
        m = INNER.match(payload)
        if not m:
            raise HierError(f"{where}: a train_inner record must read 'epoch N:  I / M "
                            f"key=value, ...', got {payload[:60]!r}")
        record = {"epoch": float(m.group(1))}
        for item in m.group(4).split(", "):
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise HierError(f"{where}: {item[:40]!r} is not key=value")
            record[key] = _number(value, where, key)
        return tag, _check(record, where, tag)
    m = SUMMARY.match(payload)
    if not m:
        if tag == "train":
            raise HierError(f"{where}: a train record must read 'epoch N | key value | ...', "
                            f"got {payload[:60]!r}")
        return None
    items = m.group(2).split(" | ")
    kind = "train"
    if tag != "train":
        valid = VALID_PREFIX.match(items[0])
        if not valid:
            return None
        kind, items = valid.group(1), items[1:]
    record = {"epoch": float(m.group(1))}
    for item in items:
        key, space, value = item.partition(" ")
        if not space or not key:
            raise HierError(f"{where}: {item[:40]!r} is not 'key value'")
        record[key] = _number(value, where, key)
    return kind, _check(record, where, tag)


def parse_json(tag: str, payload: str, where: str) -> Optional[Tuple[str, Dict[str, float]]]:
    """A ``--log-format json`` record -> ``(kind, record)`` as :func:`parse_simple`."""
    try:
        stats = json.loads(payload)
    except json.JSONDecodeError as e:
        raise HierError(f"{where}: the {tag} record is not JSON ({e.msg} at column "
                        f"{e.colno})") from None
    if not isinstance(stats, dict):
        raise HierError(f"{where}: the {tag} record is not a JSON object")
    prefix = "" if tag == "train_inner" else tag + "_"
    if tag not in ("train_inner", "train") and not any(k.startswith(prefix) for k in stats):
        return None  # some other JSON payload of a dotless logger
    record = {}
    for key, value in stats.items():
        if key == "update":  # json's fractional epoch, not an update count
            continue
        name = key[len(prefix):] if prefix and key.startswith(prefix) else key
        record[name] = _number(value, where, key)
    return tag, _check(record, where, tag)


def read_train_log(path: str) -> TrainLog:
    """All progress-bar records of a fairseq-train log; ValueError naming file and line."""
    log = TrainLog(path)
    for lineno, line in iter_lines(path):
        # tqdm redraws with '\r': the logging record, if any, is the last piece
        text = line.rstrip("\n").split("\r")[-1]
        m = RECORD.search(text)
        if not m:
            continue
        tag, payload = m.group(1), m.group(2).strip()
        where = f"{path}:{lineno}"
        if payload.startswith("{"):
            parsed, fmt = parse_json(tag, payload, where), "json"
        elif tag == "train_inner" or payload.startswith("epoch "):
            parsed, fmt = parse_simple(tag, payload, where), "simple"
        else:
            continue
        if parsed is None:
            continue
        kind, record = parsed
        log.log_format = log.log_format or fmt
        if kind in ("train_inner", "train"):
            getattr(log, kind).append(record)
        else:
            log.valid.setdefault(kind, []).append(record)
    return log
