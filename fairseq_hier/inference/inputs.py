"""The raw inputs of the summarizer read from files: ``.jsonl`` files of examples and cluster
files whose documents are separated by ``|||||`` lines, directories of them read in name order
(``fairseq-hier-summarize`` documents the formats and errors).
"""

import json
import os
from typing import List, Tuple

from ..errors import HierError
from .pipeline_base import RawExample
from .summarizer import as_example

DOCUMENT_SEPARATOR = "|||||"


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


def read_inputs(paths: List[str], progress: bool):
    """[(source file, [RawExample, ...])] in input order (``paths``: files and directories of
    them; see ``fairseq-hier-summarize`` for the formats)."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if not n.startswith("."))
            files += [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
            if not names:
                raise HierError(f"{path}: empty directory")
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
        text = read_text(path)
        if path.endswith(".jsonl"):
            examples = []
            for number, line in enumerate(text_lines(text), start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise HierError(f"{path}:{number}: not JSON ({e})") from None
                where = f"{path}:{number}"
                if isinstance(obj, list):
                    obj = {"documents": obj}
                if not isinstance(obj, dict):
                    raise HierError(f'{where}: expected {{"title": str, "documents": [str, ...]}}')
                examples.append(as_example(obj, where))
            if not examples:
                raise HierError(f"{path}: no example")
        else:
            examples = [RawExample(cluster_documents(text), None, path)]
        out.append((path, examples))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out
