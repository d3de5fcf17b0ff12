"""GPT-2 byte-level BPE vocabularies for BART, laid out as fairseq's release and as Hugging Face's.

:func:`vocabulary` builds one over GPT-2's 256 byte symbols (so it encodes any text), plus the
merges that make words whole tokens: the words of text files, most frequent first
(:func:`words_of_files`), or a given list. :func:`fairseq_texts` lays it out as fairseq's
``encoder.json``, ``vocab.bpe`` and ``dict.txt``; :func:`hf_vocab` maps fairseq's files to
Hugging Face's ``vocab.json`` (the token at fairseq index i has id i), the inverse of
:func:`fairseq_hier.data.bart_files.derive`. The layouts: docs/models.md, section
fairseq_hier.pretrained. Imports ``data.bart_files``, ``io``, ``errors``; regex.
"""

import json
import os
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import regex

from ..data.bart_files import HOLE, MASK, MERGES_HEADER, SPECIALS, bytes_to_unicode, \
    check_gpt2_files
from ..errors import HierError
from ..io import atomic_outputs, iter_lines, read_json_object, read_lines

#: GPT-2's pre-tokenizer (fairseq's ``gpt2_bpe_utils.Encoder.pat``): BPE never merges across it
PRETOKENIZER = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                             r"""|\s+(?!\S)|\s+""")
MAX_MERGES = 1000  # bart random's default: enough for the words of a small corpus


@dataclass
class Vocabulary:
    """A byte-level BPE in GPT-2's release form.

    encoder: ``encoder.json``, BPE token -> GPT-2 id (the 256 byte symbols 0-255 in byte order,
        then one id per merged token)
    merges: ``vocab.bpe``'s merges, in rank order
    """

    encoder: Dict[str, int]
    merges: List[Tuple[str, str]]


def byte_symbols(text: str) -> str:
    """``text``'s UTF-8 bytes as GPT-2's byte symbols (a space is ``Ġ``)."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in text.encode("utf-8"))


def words_of_files(paths: Sequence[str]) -> List[str]:
    """The pre-tokens of the text files (GPT-2's, as byte symbols) of two symbols or more, most
    frequent first (ties: first seen first). A file that cannot be read or is not UTF-8: one line
    naming it (and the line)."""
    counts: Counter = Counter()
    for path in paths:
        for _, line in iter_lines(path):
            counts.update(byte_symbols(w) for w in PRETOKENIZER.findall(line))
    order = {word: i for i, word in enumerate(counts)}  # Counter keeps first-seen order
    return sorted((w for w in counts if len(w) > 1), key=lambda w: (-counts[w], order[w]))


def vocabulary(words: Iterable[str] = (), max_merges: Optional[int] = MAX_MERGES) -> Vocabulary:
    """The 256 byte symbols, then for each word (a string of byte symbols, :func:`byte_symbols`)
    the merges that build it left to right (``Ġ`` ``t`` -> ``Ġt``, ``Ġt`` ``h`` -> ``Ġth`` ...),
    until ``max_merges`` (None: no limit). GPT-2's BPE applies the merges by rank, so a word
    whose pairs an earlier word merged differently may stay in a few pieces: every text is
    encoded all the same, down to single bytes."""
    table = bytes_to_unicode()
    encoder = {table[b]: i for i, b in enumerate(sorted(table))}
    merges: List[Tuple[str, str]] = []
    seen = set()
    for word in words:
        left = word[0]
        for right in word[1:]:
            if (left, right) not in seen:
                if max_merges is not None and len(merges) >= max_merges:
                    return Vocabulary(encoder, merges)
                seen.add((left, right))
                merges.append((left, right))
                encoder.setdefault(left + right, len(encoder))
            left += right
    return Vocabulary(encoder, merges)


def fairseq_texts(vocab: Vocabulary) -> Dict[str, str]:
    """fairseq's release files of ``vocab``: ``encoder.json``, ``vocab.bpe`` and ``dict.txt``
    (the GPT-2 ids as words, in id order, with descending counts as fairseq sorts them)."""
    ids = sorted(vocab.encoder.values())
    return {"encoder.json": json.dumps(vocab.encoder),
            "vocab.bpe": MERGES_HEADER + "\n" + "".join(f"{a} {b}\n" for a, b in vocab.merges),
            "dict.txt": "".join(f"{i} {len(ids) - n}\n" for n, i in enumerate(ids))}


def write_fairseq_files(out_dir: str, vocab: Vocabulary) -> List[str]:
    """Writes :func:`fairseq_texts` into ``out_dir`` (all three files or none); their paths."""
    content = fairseq_texts(vocab)
    paths = [os.path.join(out_dir, name) for name in content]
    with atomic_outputs(paths) as handles:
        for text, handle in zip(content.values(), handles):
            handle.write(text)
    return paths


def read_dict_symbols(path: str) -> List[str]:
    """``dict.txt``'s words (fairseq indices 4, 5, ...): ``WORD COUNT`` lines (a trailing
    ``#fairseq:overwrite`` flag allowed)."""
    symbols = []
    for lineno, line in enumerate(read_lines(path), 1):
        fields = line.rstrip("\r").split(" ")
        if fields[-1] == "#fairseq:overwrite":
            fields = fields[:-1]
        if len(fields) != 2 or not fields[1].lstrip("-").isdigit():
            raise HierError(f"{path}:{lineno}: expected 'WORD COUNT' (a fairseq dict.txt), got "
                            f"{line[:60]!r}")
        symbols.append(fields[0])
    return symbols


def read_fairseq_files(folder: str) -> Tuple[Vocabulary, List[str]]:
    """``(vocabulary, dict.txt's words)`` of a fairseq BART release folder."""
    paths = [os.path.join(folder, name) for name in ("encoder.json", "vocab.bpe", "dict.txt")]
    missing = [os.path.basename(p) for p in paths if not os.path.isfile(p)]
    if missing:
        raise HierError(f"{folder}: no {', '.join(missing)} (a fairseq BART release folder holds "
                        f"model.pt, dict.txt, encoder.json and vocab.bpe)")
    check_gpt2_files(paths[0], paths[1])
    encoder = read_json_object(paths[0])
    merges = [tuple(line.split()) for line in read_lines(paths[1])[1:] if line]
    return Vocabulary(encoder, merges), read_dict_symbols(paths[2])


def hf_vocab(vocab: Vocabulary, symbols: List[str], rows: int,
             folder: str = ".") -> Dict[str, int]:
    """Hugging Face's ``vocab.json`` for fairseq's files: the specials at 0-3, the token of
    ``dict.txt``'s word at fairseq index i (a GPT-2 id of ``encoder.json``) at id i, no token at a
    ``madeupword`` row, ``<mask>`` at the last of the model's ``rows`` when they are one more than
    the dictionary. Refused in one line: a word that is no id of encoder.json, a token of
    encoder.json that dict.txt lacks (fairseq would read it as ``<unk>``), rows that fit neither."""
    dict_txt, encoder_json = os.path.join(folder, "dict.txt"), os.path.join(folder, "encoder.json")
    size = len(SPECIALS) + len(symbols)
    if rows not in (size, size + 1):
        raise HierError(f"{os.path.join(folder, 'model.pt')}: the token embeddings have {rows} "
                        f"rows, {dict_txt} gives {size} symbols (expected {size}, or {size + 1} "
                        f"with <mask>)")
    token_of = {i: token for token, i in vocab.encoder.items()}
    out = {special: i for i, special in enumerate(SPECIALS)}
    for n, symbol in enumerate(symbols):
        if symbol.startswith(HOLE[:len("madeupword")]):
            continue
        token = token_of.get(int(symbol)) if symbol.isdigit() else None
        if token is None:
            raise HierError(f"{dict_txt}:{n + 1}: {symbol!r} is not an id of {encoder_json} (a "
                            f"BART dict.txt lists GPT-2 ids)")
        if token in out:
            raise HierError(f"{dict_txt}:{n + 1}: id {symbol} ({token!r}) is listed twice")
        out[token] = len(SPECIALS) + n
    missing = [token for token in vocab.encoder if token not in out]
    if missing:
        raise HierError(f"{encoder_json}: {len(missing)} tokens have no row in {dict_txt} (e.g. "
                        f"{missing[0]!r}, id {vocab.encoder[missing[0]]}): fairseq reads them as "
                        f"<unk>, which Hugging Face's tokenizer cannot do")
    if rows == size + 1:
        out[MASK] = size
    return out


def hf_texts(vocab: Vocabulary, symbols: List[str], rows: int,
             folder: str = ".") -> Dict[str, str]:
    """Hugging Face's ``vocab.json`` (:func:`hf_vocab`) and ``merges.txt`` (the same merges)."""
    return {"vocab.json": json.dumps(hf_vocab(vocab, symbols, rows, folder), ensure_ascii=False),
            "merges.txt": MERGES_HEADER + "\n" + "".join(f"{a} {b}\n" for a, b in vocab.merges)}
