"""Up-front checks shared by the tasks: everything that can be refused before the first update
or the first decoded batch is refused there, in one line naming the option, file or line.

What is checked: docs/models.md, section fairseq_hier.tasks.checks. Imports ``data``, ``io``,
``errors``; numpy (fairseq inside functions).
"""

import logging
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..data.bart_files import check_gpt2_files
from ..data.bpe_codes import check_codes
from ..errors import HierError, check_range
from ..io import read_lines

logger = logging.getLogger(__name__)

#: option (field name) -> (lowest allowed, strictly above it, highest allowed or None)
Ranges = Dict[str, Tuple[object, bool, Optional[object]]]
OVERWRITE_FLAG = "#fairseq:overwrite"  # fairseq's flag that lets a dict.txt line redefine a symbol


def flag(name: str) -> str:
    """``max_paragraphs`` -> ``--max-paragraphs``."""
    return "--" + name.replace("_", "-")


def check_options(cfg, ranges: Ranges) -> None:
    """Raise :class:`HierError` for the first option of ``cfg`` (a task dataclass, DictConfig or
    Namespace) out of its range in ``ranges``; options that are absent or None pass."""
    for name, (low, low_open, high) in ranges.items():
        value = getattr(cfg, name, None)
        if value is not None:
            check_range(flag(name), value, low, high, low_open)


# ---------------------------------------------------------------------------- dictionaries
def load_dictionary(path: str):
    """A fairseq ``Dictionary`` from ``path`` with one-line errors (see the module docstring).
    The format is fairseq's: ``<symbol> <count>`` per line, optionally followed by
    ``#fairseq:overwrite``; the symbol may hold spaces (the count is the last field)."""
    from fairseq.data import Dictionary  # fairseq's dictionary, built from the checked lines

    dictionary = Dictionary()
    first_line: Dict[str, int] = {}
    # read_lines: HierError for a file that cannot be read or is not UTF-8; strips a BOM (warning)
    for lineno, line in enumerate(read_lines(path), 1):
        symbol, count, overwrite = _dictionary_entry(path, lineno, line)
        if symbol in dictionary and not overwrite:
            where = (f"line {first_line[symbol]}" if symbol in first_line
                     else "one of fairseq's special symbols")
            raise HierError(f"{path}:{lineno}: duplicate symbol {symbol!r} (already {where}; "
                            f"end the line with {OVERWRITE_FLAG} to redefine it)")
        first_line.setdefault(symbol, lineno)
        dictionary.add_symbol(symbol, n=count, overwrite=overwrite)
    return dictionary


def _dictionary_entry(path: str, lineno: int, line: str) -> Tuple[str, int, bool]:
    """``(symbol, count, overwrite)`` of one ``dict.txt`` line, or a HierError naming it."""
    text = line.rstrip()
    overwrite = text.endswith(" " + OVERWRITE_FLAG)
    if overwrite:
        text = text[: -len(OVERWRITE_FLAG) - 1]
    symbol, _, count = text.rpartition(" ")
    if not symbol:
        shown = repr(line) if line.strip() else "an empty line"
        raise HierError(f"{path}:{lineno}: expected '<symbol> <count>' (a fairseq dictionary "
                        f"line), got {shown}")
    try:
        return symbol, int(count), overwrite
    except ValueError:
        raise HierError(f"{path}:{lineno}: the count of {symbol!r} must be an integer, got "
                        f"{count!r}") from None


def separator_index(dictionary, separator: str, data: str) -> int:
    """The index of the paragraph separator ``separator`` (``--paragraph-separator``) in the
    source ``dictionary`` of the data-bin ``data``; HierError when it is not there."""
    if separator not in dictionary.indices:
        raise HierError(f"paragraph separator {separator!r} (--paragraph-separator) is not in the "
                        f"source dictionary of {data}: were the raw sources written with it?")
    return dictionary.index(separator)


# ---------------------------------------------------------------------------- lengths
def check_lengths(split: str, sizes, limit: Optional[int], option: str, what: str,
                  path: str) -> int:
    """How many examples of ``split`` have ``sizes`` above ``limit`` (``option``'s value);
    HierError when every one has. ``what`` says what is measured (``a target with its EOS``),
    ``path`` where the split lives."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if limit is None or len(sizes) == 0:
        return 0
    over = int((sizes > limit).sum())
    longest = int(sizes.max())
    if over == len(sizes):
        raise HierError(f"split '{split}' ({path}): all {len(sizes)} examples are longer than "
                        f"{option} {limit}, so none would be kept: the longest has {longest} "
                        f"tokens ({what}); raise {option} (to {longest} to keep them all)")
    if over:
        logger.warning(f"split '{split}' ({path}): {over} of {len(sizes)} examples are longer "
                       f"than {option} {limit} (the longest has {longest} tokens: {what}); fairseq "
                       f"skips them in training, and stops on them in a valid/test split "
                       f"unless --skip-invalid-size-inputs-valid-test")
    return over


def filter_indices_by_size(task, indices, dataset, max_positions, ignore_invalid_inputs: bool):
    """fairseq's ``FairseqTask.filter_indices_by_size`` with one-line errors: an example over
    ``max_positions`` (the task's and the model's limits) where fairseq may not skip it (a
    valid/test split without ``--skip-invalid-size-inputs-valid-test``, an interactive input),
    or a split of which every example is over, names the split and the example (its input
    line for raw inference input)."""
    indices, ignored = dataset.filter_indices_by_size(indices, max_positions)
    if len(ignored) == 0:
        return indices
    where = _split_name(task, dataset)
    first = int(min(ignored))  # the first in file order (batching order is shuffled)
    example = (f"input line {getattr(dataset, 'first_line', 1) + first}" if where is None
               else f"example {first + 1}")
    where = where or "the input"
    if not ignore_invalid_inputs or len(indices) == 0:
        reason = ("all of its examples are" if len(indices) == 0 else
                  f"{len(ignored)} example(s) are")
        skip = ("" if len(indices) == 0 else
                ", or skip such examples with --skip-invalid-size-inputs-valid-test")
        raise HierError(f"{where}: {reason} over the length limits (source, target) "
                        f"{_limits(max_positions)} of the task's and the model's "
                        f"--max-source-positions / --max-target-positions; {example} has "
                        f"{_limits(dataset.size(first))}: raise the limits{skip}")
    logger.warning(f"{where}: {len(ignored)} example(s) over the length limits (source, target) "
                   f"{_limits(max_positions)} are skipped ({example} has "
                   f"{_limits(dataset.size(first))})")
    return indices


def _split_name(task, dataset) -> Optional[str]:
    for name, loaded in getattr(task, "datasets", {}).items():
        if loaded is dataset:
            return f"split '{name}'"
    return None


def _limits(sizes) -> str:
    if isinstance(sizes, (tuple, list)):
        return "(" + ", ".join(str(int(x)) if x is not None else "none" for x in sizes) + ")"
    return str(sizes)


# ---------------------------------------------------------------------------- BPE files
def check_bpe(bpe_cfg) -> None:
    """Check the local files of fairseq's ``--bpe`` before fairseq's encoder reads them
    (``bpe_cfg``: fairseq's ``cfg.bpe``): ``gpt2``'s ``encoder.json`` and ``vocab.bpe``,
    ``fastbpe``'s codes (fastBPE crashes the process on a malformed file)."""
    name = getattr(bpe_cfg, "_name", None) if bpe_cfg is not None else None
    if name == "gpt2":
        check_gpt2_files(getattr(bpe_cfg, "gpt2_encoder_json", None),
                         getattr(bpe_cfg, "gpt2_vocab_bpe", None))
    elif name == "fastbpe":
        codes = getattr(bpe_cfg, "bpe_codes", None)
        if _local(codes):
            check_codes(codes)


def _local(path: Optional[str]) -> bool:
    return bool(path) and "://" not in path  # fairseq downloads URLs itself


# ---------------------------------------------------------------------------- raw inference lines
class InputLines:
    """Numbers raw inference lines over the whole input and counts the tokens that became
    ``<unk>``. fairseq-interactive calls the task's ``get_interactive_tokens_and_lengths`` and
    then ``build_dataset_for_inference`` once per ``--buffer-size`` buffer: :meth:`encode`
    (the first) remembers where the buffer starts, :meth:`take_first` (the second) reads it.
    Numbering starts again at 1 when ``seen`` is set to 0 (the summarisation API does, for each
    of its calls)."""

    def __init__(self):
        self.seen = 0  # lines handed over so far
        self.pending: Optional[int] = None  # number of the next dataset's first line

    def take_first(self) -> int:
        """The 1-based number of the first line of the dataset being built (1 for a dataset
        built from tokens that :meth:`encode` did not see)."""
        first, self.pending = self.pending or 1, None
        return first

    def encode(self, dictionary, texts: Sequence[str]) -> List:
        """``texts`` (already through ``--tokenizer`` / ``--bpe``) -> 1-D LongTensors with EOS,
        as fairseq's ``encode_line``; logs how many tokens became ``<unk>``."""
        first = self.seen + 1
        self.seen += len(texts)
        self.pending = first
        unknown: List[List[str]] = []
        tokens = []
        for text in texts:
            words: List[str] = []
            tokens.append(dictionary.encode_line(
                text, add_if_not_exist=False,
                consumer=lambda w, i: words.append(w) if i == dictionary.unk_index else None,
            ).long())
            unknown.append([w for w in words if w != dictionary.unk_word])
        report = unknown_report(dictionary, unknown)
        if report:
            last = first + len(texts) - 1
            where = f"input line {first}" if last == first else f"input lines {first}-{last}"
            logger.warning(f"{where}: {report}")
        return tokens


def unknown_report(dictionary, unknown: Sequence[Sequence[str]], shown: int = 10
                   ) -> Optional[str]:
    """``3 tokens of 2 lines became <unk> (characters not in the dictionary: '😀', '中')`` for the
    unknown tokens of each line (None when there are none): the characters that no symbol of
    the dictionary holds, else the unknown tokens themselves."""
    total = sum(len(words) for words in unknown)
    if not total:
        return None
    lines = sum(1 for words in unknown if words)
    known = _dictionary_characters(dictionary)
    chars: List[str] = []
    others: List[str] = []
    for word in (w for words in unknown for w in words):
        new = [c for c in word if c not in known and c not in chars]
        chars.extend(new)
        if all(c in known for c in word) and word not in others:
            others.append(word)
    parts = []
    if chars:
        parts.append("characters not in the dictionary: " + _listing(chars, shown))
    if others:
        parts.append("tokens not in the dictionary: " + _listing(others, shown))
    return (f"{total} token{'s' * (total != 1)} of {lines} line{'s' * (lines != 1)} became "
            f"{dictionary.unk_word} ({'; '.join(parts)})")


def _listing(items: Sequence[str], shown: int) -> str:
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(repr(x) for x in items[:shown]) + more


def _dictionary_characters(dictionary) -> frozenset:
    """Every character of every symbol of ``dictionary`` (cached on it)."""
    cached = getattr(dictionary, "_fairseq_hier_chars", None)
    if cached is None or cached[0] != len(dictionary):
        cached = (len(dictionary), frozenset("".join(dictionary.symbols)))
        dictionary._fairseq_hier_chars = cached
    return cached[1]
