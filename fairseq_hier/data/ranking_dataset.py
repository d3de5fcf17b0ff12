"""Examples of Liu & Lapata's paragraph ranker (002 Sec. 3.1): a title, paragraphs, one label each.

The raw source ``title <P> paragraph <P> paragraph ...``, its segmentation rules
(:func:`segment_ranking`; docs/data-formats.md#our-raw-format) and the ``{split}.labels`` file
(docs/data-formats.md#paragraph-ranker-labels-and-scores). Legend and batch keys: the
comment below. Imports ``data``, ``io``, ``errors``; numpy, torch.
"""
# Legend: B batch, P paragraphs (the most of any example of the batch), L tokens per paragraph,
# Lt title tokens, N examples / M tokens of a segmented chunk. Padding: ``pad`` in token tensors,
# length 0 for an absent paragraph.
#
# Batch keys (:func:`collate_rankings`, the collater):
#     id                        B
#     nsentences                int   B
#     ntokens                   int   kept tokens (paragraphs and titles)
#     net_input.src_tokens      B x P x L   paragraph p of example b in row [b, p], right-padded
#     net_input.src_lengths     B x P       tokens of each paragraph, 0 = absent paragraph
#     net_input.title_tokens    B x Lt      right-padded (Lt >= 1: all padding when every title
#                                           is empty)
#     net_input.title_lengths   B           0 = empty title
#     target                    B x P       float labels, 0 at absent paragraphs (training only)

import logging
import os
from dataclasses import dataclass, field
from typing import Dict, List, Sequence

import numpy as np
import torch

from ..errors import HierError
from ..io import read_lines
from .hierarchical_dataset import token_buffer, token_chunks
from .paragraphs import split_lines
from .sized_dataset import SizedDataset

logger = logging.getLogger(__name__)

NO_EOS = "the binarized line does not end with EOS"
NO_SEPARATOR = "no paragraph: the line has no paragraph separator (all title)"
ALL_EMPTY = "no paragraph: every segment after the title is empty"


@dataclass
class RankingSegmentation:
    """:func:`segment_ranking` of N examples with M tokens in total.

    Per token (M): ``paragraph`` (index of its paragraph in its example, -1 for title, separator,
    EOS), ``position`` (index in its paragraph, or in the title), ``keep_paragraph`` and
    ``keep_title`` (kept under the cuts). Per example (N): counts and ``error`` ('' if valid)."""

    paragraph: np.ndarray
    position: np.ndarray
    keep_paragraph: np.ndarray
    keep_title: np.ndarray
    num_paragraphs: np.ndarray  # non-empty paragraphs, before the cut (= labels per line)
    kept_paragraphs: np.ndarray
    max_paragraph_len: np.ndarray  # longest kept paragraph, after the cut
    title_len: np.ndarray  # after the cut
    empty_paragraphs: np.ndarray
    cut_tokens: np.ndarray  # paragraph and title tokens beyond the cuts (cut paragraphs included)
    error: List[str] = field(default_factory=list)


def segment_ranking(tokens, lengths, sep: int, eos: int, max_paragraphs: int,
                    max_paragraph_tokens: int) -> RankingSegmentation:
    """Segment N concatenated binarised lines (``tokens``: M ids, ``lengths``: N) at once."""
    lines = split_lines(tokens, lengths, sep, eos)
    n, m = lines.n, len(lines.example)
    starts, example, nonempty, has_eos = lines.starts, lines.example, lines.nonempty, lines.has_eos
    is_sep, is_text, num_seps = lines.is_sep, lines.is_text, lines.num_seps
    segment = lines.segment_id
    index = np.arange(m)

    # a paragraph opens at a text token right after a separator (segments are contiguous)
    after_sep = np.zeros(m, dtype=bool)
    after_sep[1:] = is_sep[:-1]
    is_par = is_text & (segment > 0)
    opens = is_par & after_sep
    open_cum = np.cumsum(opens)  # global paragraph number + 1 of every paragraph token
    opens_before = np.zeros(n, dtype=np.int64)
    opens_before[nonempty] = (open_cum - opens)[starts[nonempty]]
    paragraph = np.where(is_par, open_cum - 1 - opens_before[example], -1)
    open_at = np.flatnonzero(opens)  # global start of every paragraph
    par_start = open_at[np.maximum(open_cum - 1, 0)] if len(open_at) else np.zeros_like(index)
    # paragraph tokens: offset from their paragraph's start; title tokens: from the line's
    position = np.where(is_par, index - par_start, index - starts[example])
    is_title = is_text & (segment == 0)
    keep_paragraph = is_par & (paragraph < max_paragraphs) & (position < max_paragraph_tokens)
    keep_title = is_title & (position < max_paragraph_tokens)

    num_paragraphs = np.bincount(example[opens], minlength=n)
    max_len = np.zeros(n, dtype=np.int64)
    np.maximum.at(max_len, example[keep_paragraph], position[keep_paragraph] + 1)
    kept = keep_paragraph | keep_title
    errors = [""] * n
    for i in np.flatnonzero(num_paragraphs == 0):
        errors[i] = NO_SEPARATOR if num_seps[i] == 0 else ALL_EMPTY
    for i in np.flatnonzero(~has_eos):
        errors[i] = NO_EOS
    return RankingSegmentation(
        paragraph=paragraph, position=position, keep_paragraph=keep_paragraph,
        keep_title=keep_title, num_paragraphs=num_paragraphs,
        kept_paragraphs=np.minimum(num_paragraphs, max_paragraphs), max_paragraph_len=max_len,
        title_len=np.bincount(example[keep_title], minlength=n),
        empty_paragraphs=num_seps - num_paragraphs,
        cut_tokens=np.bincount(example[(is_par | is_title) & ~kept], minlength=n), error=errors)


# ------------------------------------------------------------------------------------ labels
class ParagraphLabels:
    """The labels of one split, read and validated once: float32 values of every example in a
    flat array, ``offsets`` (N+1) delimiting each example's."""

    def __init__(self, path: str):
        self.path = path
        counts, values = [], []
        for number, line in enumerate(read_lines(path), start=1):
            try:
                row = np.array(line.split(), dtype=np.float64)
            except ValueError as e:
                raise HierError(f"{path}:{number}: labels must be numbers ({e})") from None
            bad = ~np.isfinite(row) | (row < 0) | (row > 1)
            if bad.any():
                raise HierError(f"{path}:{number}: label {line.split()[int(np.argmax(bad))]} of "
                                f"paragraph {int(np.argmax(bad)) + 1} is outside [0, 1]")
            counts.append(len(row))
            values.append(row.astype(np.float32))
        self.counts = np.asarray(counts, dtype=np.int64)  # N
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)])  # N + 1
        self.values = np.concatenate(values) if values else np.zeros(0, np.float32)

    def __len__(self):
        return len(self.counts)

    def __getitem__(self, index) -> np.ndarray:
        return self.values[self.offsets[index]: self.offsets[index + 1]]

    def check(self, num_paragraphs: np.ndarray, split: str, src_path: str) -> None:
        """Same number of examples, and of paragraphs in every example, as the source."""
        if len(self) != len(num_paragraphs):
            raise HierError(f"split '{split}': {self.path} has {len(self)} lines, {src_path} has "
                            f"{len(num_paragraphs)} examples (one label line per example)")
        wrong = np.flatnonzero(self.counts != num_paragraphs)
        if len(wrong):
            i = int(wrong[0])
            raise HierError(f"split '{split}': {self.path}:{i + 1}: {self.counts[i]} labels for "
                            f"{num_paragraphs[i]} non-empty paragraphs in example {i + 1} of "
                            f"{src_path} ({len(wrong)} lines disagree; were the labels made "
                            f"from this source with the same --paragraph-separator?)")


# ------------------------------------------------------------------------------------ batches
def paragraph_block(paragraphs: Sequence[Sequence[int]], pad: int, max_tokens: int):
    """Token-id lists of one example's paragraphs -> (``P x L`` LongTensor padded with pad, each
    paragraph cut to ``max_tokens``; ``P`` lengths). For inference (``fairseq-hier-rank apply``)."""
    lengths = np.fromiter((min(len(p), max_tokens) for p in paragraphs), np.int64,
                          len(paragraphs))
    flat = np.fromiter((t for p in paragraphs for t in p[:max_tokens]), np.int64,
                       int(lengths.sum()))
    block = np.full((len(paragraphs), int(lengths.max(initial=0))), pad, dtype=np.int64)
    # P x L <- flat: row of each token, then its position in the row
    rows = np.repeat(np.arange(len(paragraphs)), lengths)
    block[rows, np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = flat
    return torch.from_numpy(block), torch.from_numpy(lengths)


def collate_rankings(samples: List[Dict], pad: int) -> Dict:
    """Samples (``title``: Lt_i, ``paragraphs``: P_i x L_i, ``lengths``: P_i, optional
    ``labels``: P_i, ``id``) -> the batch of the module docstring."""
    if not samples:
        return {}
    bsz = len(samples)
    num_p = max(s["paragraphs"].size(0) for s in samples)
    num_l = max(s["paragraphs"].size(1) for s in samples)
    num_lt = max(1, max(s["title"].numel() for s in samples))
    src_tokens = torch.full((bsz, num_p, num_l), pad, dtype=torch.long)  # B x P x L
    src_lengths = torch.zeros(bsz, num_p, dtype=torch.long)  # B x P
    title_tokens = torch.full((bsz, num_lt), pad, dtype=torch.long)  # B x Lt
    target = torch.zeros(bsz, num_p)  # B x P
    for b, s in enumerate(samples):  # one copy per example, never per paragraph
        block = s["paragraphs"]
        src_tokens[b, : block.size(0), : block.size(1)] = block
        src_lengths[b, : block.size(0)] = s["lengths"]
        title_tokens[b, : s["title"].numel()] = s["title"]
        if "labels" in s:
            target[b, : block.size(0)] = s["labels"]
    title_lengths = torch.tensor([s["title"].numel() for s in samples])  # B
    batch = {
        "id": torch.LongTensor([s["id"] for s in samples]),
        "nsentences": bsz,
        "ntokens": int(src_lengths.sum() + title_lengths.sum()),
        "net_input": {"src_tokens": src_tokens, "src_lengths": src_lengths,
                      "title_tokens": title_tokens, "title_lengths": title_lengths},
    }
    if all("labels" in s for s in samples):
        batch["target"] = target
    return batch


class ParagraphRankingDataset(SizedDataset):
    """Binarised sources and their paragraph labels; see the module docstring.

    Args:
        src: indexed dataset of the binarised source lines (EOS-terminated)
        labels: :class:`ParagraphLabels` of the same split
        src_dict: the source dictionary (pad, eos)
        separator: index of the paragraph separator in ``src_dict``
        max_paragraphs, max_paragraph_tokens: the training cut
        src_path, split: names for errors and log lines
        shuffle: shuffle before sorting by size in :meth:`ordered_indices`
    """

    def __init__(self, src, labels: ParagraphLabels, src_dict, separator: int,
                 max_paragraphs: int, max_paragraph_tokens: int, src_path: str, split: str,
                 shuffle: bool = True):
        self.src, self.labels, self.src_dict = src, labels, src_dict
        self.separator = separator
        self.max_paragraphs, self.max_paragraph_tokens = max_paragraphs, max_paragraph_tokens
        self.split, self.shuffle = split, shuffle
        self._scan(src_path)
        labels.check(self.num_paragraphs, split, src_path)

    def _segment(self, tokens, lengths) -> RankingSegmentation:
        return segment_ranking(tokens, lengths, self.separator, self.src_dict.eos(),
                               self.max_paragraphs, self.max_paragraph_tokens)

    def _scan(self, src_path: str) -> None:
        """Segment the whole split once (in chunks): validate, record sizes, log the cuts."""
        n = len(self.src)
        self.num_paragraphs = np.zeros(n, np.int64)
        kept, max_len, title_len = (np.zeros(n, np.int64) for _ in range(3))
        empty = cut_tokens = 0
        errors: List[str] = []
        for start, stop in token_chunks(self.src.sizes):
            seg = self._segment(*token_buffer(self.src, start, stop))
            self.num_paragraphs[start:stop] = seg.num_paragraphs
            kept[start:stop], max_len[start:stop] = seg.kept_paragraphs, seg.max_paragraph_len
            title_len[start:stop] = seg.title_len
            empty += int(seg.empty_paragraphs.sum())
            cut_tokens += int(seg.cut_tokens.sum())
            errors.extend(seg.error)
        if any(errors):
            first = next(i for i, e in enumerate(errors) if e)
            raise HierError(f"split '{self.split}': {src_path} example {first + 1} (line "
                            f"{first + 1} of the raw source): {errors[first]} "
                            f"({sum(map(bool, errors))} invalid examples)")
        cut = self.num_paragraphs - kept
        # padded cost of an example in the batch: P x L paragraph slots plus its title
        self._sizes = kept * max_len + title_len  # padded cost: what --max-tokens limits
        logger.info(f"[{self.split}] {n} examples, {int(self.num_paragraphs.sum())} paragraphs "
                    f"({self.num_paragraphs.mean() if n else 0:.1f} per example); cut to "
                    f"{self.max_paragraphs} paragraphs x {self.max_paragraph_tokens} tokens: "
                    f"{int((cut > 0).sum())} examples and {int(cut.sum())} paragraphs cut, "
                    f"{cut_tokens} tokens cut; {empty} empty paragraphs dropped; "
                    f"{int((title_len == 0).sum())} empty titles")

    def __getitem__(self, index):
        tokens = self.src[index].numpy().astype(np.int64)
        seg = self._segment(tokens, np.array([len(tokens)]))
        num_p, num_l = int(seg.kept_paragraphs[0]), int(seg.max_paragraph_len[0])
        block = np.full((num_p, num_l), self.src_dict.pad(), dtype=np.int64)  # P x L
        keep = seg.keep_paragraph
        block[seg.paragraph[keep], seg.position[keep]] = tokens[keep]
        lengths = np.bincount(seg.paragraph[keep], minlength=num_p)  # P
        labels = self.labels[index][:num_p]
        return {"id": index, "title": torch.from_numpy(tokens[seg.keep_title]),
                "paragraphs": torch.from_numpy(block), "lengths": torch.from_numpy(lengths),
                "labels": torch.from_numpy(labels.astype(np.float32))}

    def __len__(self):
        return len(self.src)

    def collater(self, samples):
        return collate_rankings(samples, self.src_dict.pad())



def read_labels(path: str) -> ParagraphLabels:
    """:class:`ParagraphLabels` of ``path``, with a one-line error when it is missing."""
    if not os.path.exists(path):
        raise HierError(f"labels {path} not found (write them with "
                                f"fairseq-hier-rank labels --source SPLIT.src --target "
                                f"SPLIT.tgt --output {path})")
    return ParagraphLabels(path)
