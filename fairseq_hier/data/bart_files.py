"""BART's fairseq tokenizer files (``dict.txt``, ``encoder.json``, ``vocab.bpe``) derived from a
Hugging Face BART directory's ``vocab.json`` and ``merges.txt``.

The derived files compose to exactly the Hugging Face map ``text -> id``; what cannot be mapped
is a one-line error naming the file and the entry. The files and the rules:
docs/data-formats.md#bart-tokenizer-files.
Standard library only: the commands that derive the files start without torch or fairseq.
"""

import importlib
import importlib.util
import json
import logging
import os
import sys
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from ..errors import HierError
from ..io import atomic_outputs, read_json_object, read_lines

logger = logging.getLogger(__name__)

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq's Dictionary: indices 0, 1, 2, 3
MASK = "<mask>"  # added by BART's tasks after dict.txt's symbols: the last row
HOLE = "madeupword{:04d}"  # fairseq's own placeholder for rows without a symbol
MERGES_HEADER = "#version: 0.2"
FILES = ("encoder.json", "vocab.bpe", "dict.txt")  # written in this order: dict.txt last


def bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's byte -> printable character table (the 256 base symbols of byte-level BPE), as
    fairseq's ``gpt2_bpe_utils.bytes_to_unicode`` builds it (copied here to stay light)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(2 ** 8):
        if b not in bs:
            bs.append(b)
            cs.append(2 ** 8 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def is_hf_tokenizer_dir(folder: str) -> bool:
    """True for a folder holding Hugging Face's ``vocab.json`` and ``merges.txt``."""
    return all(os.path.isfile(os.path.join(folder, f)) for f in ("vocab.json", "merges.txt"))


@dataclass
class BartFiles:
    """The derived files' content.

    encoder: ``encoder.json``, BPE token -> id (= fairseq index = Hugging Face id)
    merges: ``vocab.bpe``'s merges, in rank order
    symbols: ``dict.txt``'s words for fairseq indices 4, 5, ... (``<mask>`` excluded)
    holes: how many of those rows have no token (``madeupword`` placeholders)
    mask: ``<mask>``'s row, or None when ``vocab.json`` has none
    """

    encoder: Dict[str, int]
    merges: List[Tuple[str, str]]
    symbols: List[str]
    holes: int
    mask: Optional[int]

    def describe(self) -> str:
        mask = f"<mask> at {self.mask}" if self.mask is not None else "no <mask>"
        return (f"{len(self.encoder)} BPE tokens, {len(SPECIALS)} specials, {mask}, "
                f"{self.holes} rows without a token; {len(self.merges)} merges; dict.txt "
                f"{len(self.symbols)} symbols (a fairseq dictionary of "
                f"{len(SPECIALS) + len(self.symbols)})")


def gpt2_encoder(encoder_json: str, vocab_bpe: str):
    """fairseq's own GPT-2 byte-level BPE (``fairseq.data.encoders.gpt2_bpe_utils.get_encoder``)
    for these files. That module needs only ``json`` and ``regex``: where fairseq is not imported
    yet, it is loaded from fairseq's installed file alone, without the ``fairseq`` package (whose
    import brings torch: seconds per command), so that the commands that only encode text start
    light. Where fairseq is imported already, its module is used as it is."""
    name = "fairseq.data.encoders.gpt2_bpe_utils"
    if "fairseq" in sys.modules:
        module = importlib.import_module(name)
    else:
        fairseq = importlib.util.find_spec("fairseq")  # finds the package, runs none of it
        path = os.path.join(fairseq.submodule_search_locations[0], "data", "encoders",
                            "gpt2_bpe_utils.py")
        spec = importlib.util.spec_from_file_location("gpt2_bpe_utils", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.get_encoder(encoder_json, vocab_bpe)


def check_gpt2_files(encoder_json: Optional[str], vocab_bpe: Optional[str]) -> None:
    """``encoder.json``: a JSON object, BPE token -> integer id >= 0; ``vocab.bpe``: a
    ``#version`` line, then ``LEFT RIGHT`` merges. HierError naming the file (and line)."""
    if encoder_json and "://" not in encoder_json:  # fairseq downloads URLs itself
        encoder = read_json_object(encoder_json, "a GPT-2 encoder.json (a JSON object BPE token "
                                                 "-> id)")
        if not encoder:
            raise HierError(f"{encoder_json}: expected a GPT-2 encoder.json (a JSON object BPE "
                            f"token -> id), got an empty object")
        for token, i in encoder.items():
            if isinstance(i, bool) or not isinstance(i, int) or i < 0:
                raise HierError(f"{encoder_json}: not a GPT-2 encoder.json (token {token!r} has "
                                f"id {i!r}, expected an integer >= 0)")
    if vocab_bpe and "://" not in vocab_bpe:
        lines = read_lines(vocab_bpe)  # HierError for a file that cannot be read / is not UTF-8
        for lineno, line in enumerate(lines[1:], 2):  # line 1: "#version: 0.2"
            if line and len(line.split()) != 2:
                raise HierError(f"{vocab_bpe}:{lineno}: not a GPT-2 vocab.bpe line (expected "
                                f"'LEFT RIGHT', a merge of two symbols), got {line[:60]!r}")


def read_vocab(path: str) -> Dict[str, int]:
    """``vocab.json``: a JSON object, BPE token -> non-negative integer id."""
    vocab = read_json_object(path, "a JSON object (token -> id)")
    for token, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise HierError(f"{path}: token {token!r} has id {i!r} (expected an integer >= 0)")
    return vocab


def read_merges(path: str) -> List[Tuple[str, str]]:
    """``merges.txt``: an optional ``#version`` line, then one ``LEFT RIGHT`` merge per line."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise HierError(f"{path}: cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise HierError(f"{path}: not UTF-8 ({e})") from None
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    merges = []
    for lineno, line in enumerate(lines, start=1):
        if lineno == 1 and line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise HierError(f"{path}:{lineno}: expected two symbols separated by one space, "
                            f"got {line!r}")
        merges.append((parts[0], parts[1]))
    return merges


def _rows(vocab: Dict[str, int], path: str, vocab_size: Optional[int],
          config_path: str = "config.json") -> Dict[int, str]:
    """id -> token, checked: one token per id, specials at 0-3, ``<mask>`` last, ids in range
    (``config_path``'s ``vocab_size``: named when it is the one that disagrees)."""
    rows: Dict[int, str] = {}
    for token, i in vocab.items():
        if i in rows:
            raise HierError(f"{path}: {rows[i]!r} and {token!r} share id {i}")
        rows[i] = token
    for index, special in enumerate(SPECIALS):
        if vocab.get(special) != index:
            where = f"has id {vocab[special]}" if special in vocab else "is missing"
            raise HierError(f"{path}: {special!r} {where}; fairseq's dictionary has it at {index}")
    last = max(rows)
    fits = f"vocab_size is {vocab_size}, which does not fit {path}: its last token"
    if vocab_size is not None and last >= vocab_size:
        raise HierError(f"{config_path}: {fits} {rows[last]!r} has id {last} (vocab_size "
                        f"{last + 1} expected)")
    end = vocab_size - 1 if vocab_size is not None else last
    if MASK in vocab and vocab[MASK] != end and vocab[MASK] == last:  # the config disagrees
        raise HierError(f"{config_path}: {fits} {MASK!r} has id {last}, and BART's tasks add "
                        f"<mask> as the last row (vocab_size {last + 1} expected)")
    if MASK in vocab and vocab[MASK] != end:
        raise HierError(f"{path}: {MASK!r} has id {vocab[MASK]}, not the last id {end}: BART's "
                        f"tasks add <mask> after dict.txt's symbols")
    return rows


def derive(vocab: Dict[str, int], merges: List[Tuple[str, str]], vocab_path: str = "vocab.json",
           merges_path: str = "merges.txt", vocab_size: Optional[int] = None,
           config_path: str = "config.json") -> BartFiles:
    """fairseq's files for a Hugging Face BART vocabulary (see the module docstring).

    Args:
        vocab: ``vocab.json`` (:func:`read_vocab`); merges: ``merges.txt`` (:func:`read_merges`)
        vocab_size: ``config.json``'s, the model's rows; rows past the last id are holes.
            None: the largest id is the last row.
    """
    rows = _rows(vocab, vocab_path, vocab_size, config_path)
    missing = [c for c in bytes_to_unicode().values() if c not in vocab]
    if missing:
        raise HierError(f"{vocab_path}: no token for the byte symbol {missing[0]!r} "
                        f"({len(missing)} of GPT-2's 256 missing; its byte-level BPE needs all)")
    for lineno, (left, right) in enumerate(merges, start=1):
        for part in (left, right, left + right):
            if part not in vocab:
                raise HierError(f"{merges_path}: merge {lineno} ({left!r} {right!r}) needs "
                                f"{part!r}, which {os.path.basename(vocab_path)} lacks")
    mask = vocab.get(MASK)
    end = (vocab_size if vocab_size is not None else max(rows) + 1) - (mask is not None)
    symbols, holes = [], 0
    for i in range(len(SPECIALS), end):
        if i in rows:
            symbols.append(str(i))
        else:
            symbols.append(HOLE.format(holes))
            holes += 1
    encoder = {token: i for i, token in sorted(rows.items())
               if i >= len(SPECIALS) and token != MASK}
    return BartFiles(encoder=encoder, merges=list(merges), symbols=symbols, holes=holes, mask=mask)


def read_vocab_size(folder: str) -> Optional[int]:
    """``config.json``'s ``vocab_size`` when the folder has a config (None otherwise)."""
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):
        return None
    size = read_json_object(path).get("vocab_size")
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size <= len(SPECIALS):
        raise HierError(f"{path}: vocab_size is {size!r} (expected an integer > 4)")
    return size


def derive_from_dir(folder: str) -> BartFiles:
    """:func:`derive` for a Hugging Face BART directory (``vocab.json``, ``merges.txt`` and, when
    present, ``config.json``'s ``vocab_size``)."""
    for name in ("vocab.json", "merges.txt"):
        if not os.path.isfile(os.path.join(folder, name)):
            raise HierError(f"{folder}: no {name} (a Hugging Face BART directory holds "
                            f"vocab.json and merges.txt)")
    vocab_path, merges_path = os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt")
    return derive(read_vocab(vocab_path), read_merges(merges_path), vocab_path, merges_path,
                  read_vocab_size(folder), os.path.join(folder, "config.json"))


def texts(files: BartFiles) -> Dict[str, str]:
    """The content of ``encoder.json``, ``vocab.bpe`` and ``dict.txt``, by file name."""
    return {  # encoder.json in ASCII escapes: fairseq reads it in any locale
        "encoder.json": json.dumps(files.encoder),
        "vocab.bpe": MERGES_HEADER + "\n" + "".join(f"{a} {b}\n" for a, b in files.merges),
        "dict.txt": "".join(f"{symbol} {0 if symbol.startswith('madeupword') else 1}\n"
                            for symbol in files.symbols)}


def write(files: BartFiles, out_dir: str, inputs: Iterable[str] = ()) -> List[str]:
    """Writes ``encoder.json``, ``vocab.bpe`` and ``dict.txt`` into ``out_dir`` (all or none;
    none may be one of ``inputs``); returns their paths."""
    paths = [os.path.join(out_dir, name) for name in FILES]
    content = texts(files)
    with atomic_outputs(paths, inputs) as handles:
        for name, handle in zip(FILES, handles):
            handle.write(content[name])
    return paths


def write_from_dir(folder: str, out_dir: str) -> BartFiles:
    """Derives and writes the files of a Hugging Face BART directory; logs what was read."""
    files = derive_from_dir(folder)
    write(files, out_dir, inputs=[os.path.join(folder, name) for name in
                                  ("vocab.json", "merges.txt", "config.json")])
    logger.info(f"{folder}: vocab.json and merges.txt -> {out_dir}/{{{','.join(FILES)}}}: "
                f"{files.describe()}")
    return files


def gpt2_bpe_files(bart_dir: str, scratch: str) -> Tuple[str, str]:
    """``(encoder.json, vocab.bpe)`` of a BART directory in either layout: fairseq's (the files
    themselves) or Hugging Face's (derived into ``scratch``)."""
    fairseq_files = [os.path.join(bart_dir, f) for f in ("encoder.json", "vocab.bpe")]
    if all(os.path.isfile(p) for p in fairseq_files):
        return fairseq_files[0], fairseq_files[1]
    if not is_hf_tokenizer_dir(bart_dir):
        raise HierError(f"{bart_dir}: neither fairseq's BART files (encoder.json, vocab.bpe) "
                        f"nor Hugging Face's (vocab.json, merges.txt)")
    write_from_dir(bart_dir, scratch)
    return os.path.join(scratch, "encoder.json"), os.path.join(scratch, "vocab.bpe")
