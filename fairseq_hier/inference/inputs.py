"""The raw inputs of the summarizer read from files: ``.jsonl`` files of examples (the
JSON-lines schema, read by :mod:`fairseq_hier.readers.own_data`) and cluster files, directories
of them read in name order. The formats: docs/data-formats.md#your-own-data-the-json-lines-schema
and docs/data-formats.md#cluster-files.
"""

import collections
import logging
import os
from typing import List, Tuple

from ..errors import HierError
from ..readers.own_data import read_examples
from .pipeline_base import InputError, RawExample

logger = logging.getLogger(__name__)

DOCUMENT_SEPARATOR = "|||||"
JSONL = (".jsonl", ".jsonl.gz")


def read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise HierError(f"{path}: cannot read ({e.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise HierError(f"{path}:{line}: not UTF-8 (byte {e.start}: {data[e.start:e.start + 1]!r})"
                        ) from None


def text_lines(text: str) -> List[str]:
    """The lines of a file's text, without their ends: only ``\n`` (and ``\r\n``) end a line,
    unlike ``str.splitlines``, which also splits at U+2028, U+0085, form feeds ... that valid
    JSON strings and sentences may hold."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final line end
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def cluster_documents(text: str) -> List[str]:
    """A cluster file's documents: the text between ``|||||`` lines."""
    docs, current = [], []
    for line in text_lines(text):
        if line.strip() == DOCUMENT_SEPARATOR:
            docs.append("\n".join(current))
            current = []
        else:
            current.append(line)
    docs.append("\n".join(current))
    return docs


def is_jsonl(path: str) -> bool:
    """Whether an input file holds examples of the JSON-lines schema (by its name)."""
    return path.endswith(JSONL)


def read_jsonl(path: str) -> List[RawExample]:
    """The examples of a JSON-lines file, read by the schema's one reader
    (:func:`~fairseq_hier.readers.own_data.read_examples`: its errors, one line naming file, line,
    id and field); ``summary`` is not read, and a line holding a bare list of strings is the
    documents of one example. An empty document is dropped (logged with its count), as the
    converters drop it; an example whose every document is empty is an error."""
    stats = collections.Counter()
    examples = []
    for x in read_examples(path, stats, summaries=False, bare_lists=True):
        documents = [d for d in x.documents if d.strip()]
        if not documents:
            raise InputError(f"{x.where}: every document is empty (nothing to summarise)")
        stats["empty documents dropped"] += len(x.documents) - len(documents)
        examples.append(RawExample(documents, x.title, x.where))
    if not examples:
        raise HierError(f"{path}: no example")
    if stats["empty documents dropped"]:
        logger.info(f"{path}: {stats['empty documents dropped']} empty document(s) dropped")
    return examples


def folder_inputs(folder: str) -> List[str]:
    """The input files of a folder: its top-level files in name order, hidden ones skipped
    (subfolders are not read); a folder without one is a HierError naming it."""
    names = sorted(os.listdir(folder))
    files = [os.path.join(folder, n) for n in names
             if not n.startswith(".") and os.path.isfile(os.path.join(folder, n))]
    if not files:
        skipped = [f"{n}/" if os.path.isdir(os.path.join(folder, n)) else n for n in names]
        held = f"it holds only {', '.join(skipped[:3])}{' ...' if len(skipped) > 3 else ''}" \
            if skipped else "it is empty"
        raise HierError(f"{folder}: no input file at its top level ({held}); expected cluster "
                        f"files or .jsonl files directly in it (subfolders and hidden files are "
                        f"not read)")
    return files


def read_inputs(paths: List[str], progress: bool):
    """[(source file, [RawExample, ...])] in input order (``paths``: files and directories of
    them; see ``fairseq-hier-summarize`` for the formats)."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += folder_inputs(path)
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise HierError(f"{path}: no such file or directory")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(files), unit="file", desc="read")
    out: List[Tuple[str, list]] = []
    for path in files:
        if is_jsonl(path):
            examples = read_jsonl(path)
        else:
            examples = [RawExample(cluster_documents(read_text(path)), None, path)]
        out.append((path, examples))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out
