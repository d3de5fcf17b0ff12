"""Paired dataset of (ranked paragraphs, summary) over standard ``fairseq-preprocess`` output.

One data-bin serves both kinds of model: the ``hierarchical`` layout (``pht``, ``vht``:
``src_tokens`` ``B x P x L``) and the ``flat`` layout (fairseq's ``transformer``: the kept
paragraphs joined by the separator, ``B x S``); the layouts: docs/models.md, section
fairseq_hier.data.hierarchical_dataset. Paragraph cuts:
:mod:`fairseq_hier.data.paragraphs`. Batch keys: the comment below.
Imports ``data``, ``errors``; numpy, torch, fairseq.
"""
# Batch keys (collater):
#     id                      B
#     nsentences, ntokens     ints (ntokens = target tokens)
#     net_input.src_tokens    B x P x L  (hierarchical) or B x S (flat), padded with pad
#     net_input.src_lengths   B          source tokens kept per example
#     net_input.paragraph_graph  B x P x P  (hierarchical layout, only when ``graphs`` is set and
#                             ``use_graphs`` is on) the external paragraph graph of each example,
#                             cropped to its kept paragraphs, zeros elsewhere (002 Eq. 24)
#     net_input.src_words, net_input.src_heads  (only when ``parses`` is set and ``use_parses`` is
#                             on) int64, the shape of src_tokens: per piece, its word index in the
#                             example and the word index of that word's syntactic head (-1: the
#                             root, a separator, EOS, padding), from the dependency parse
#                             (:mod:`fairseq_hier.data.dependency_codes`), decoded on the whole line
#                             before the cuts, so a cut keeps every arc between kept pieces and
#                             drops the arcs to cut ones (ParsingSum, 003)
#     net_input.prev_output_tokens  B x T  target shifted right (EOS first)
#     target                  B x T
# (a dataset without targets, built for inference, has neither: ``target`` is None, ntokens 0)

import logging

import numpy as np
import torch
from fairseq.data import FairseqDataset, data_utils

from ..errors import HierError
from .dependency_codes import decode
from .paragraphs import segment, summarize_errors

logger = logging.getLogger(__name__)

LAYOUTS = ("hierarchical", "flat")
_CHUNK_TOKENS = 20_000_000  # tokens segmented at once by the up-front scan (~0.5 GB of temporaries)


def token_chunks(sizes, chunk_tokens: int = _CHUNK_TOKENS):
    """``(start, stop)`` ranges of consecutive examples covering a split, each as many examples
    as fit in ``chunk_tokens`` tokens (at least one): up-front scans in bounded memory."""
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64))  # token offset after each example
    start, n = 0, len(ends)
    while start < n:
        done = ends[start - 1] if start else 0
        stop = min(n, max(start + 1, int(np.searchsorted(ends, done + chunk_tokens, "right"))))
        yield start, stop
        start = stop


def token_buffer(dataset, start: int, stop: int):
    """Tokens of examples [start, stop) as one numpy array, plus their lengths."""
    sizes = np.asarray(dataset.sizes[start:stop], dtype=np.int64)
    if hasattr(dataset, "_bin_buffer") and hasattr(dataset, "_index"):
        # MMapIndexedDataset: examples are contiguous in the .bin file (fast path)
        ptr = int(dataset._index._pointers[start]) if stop > start else 0
        dtype = dataset._index.dtype
        buf = np.frombuffer(dataset._bin_buffer, dtype=dtype, count=int(sizes.sum()),
                            offset=ptr)
        return buf.astype(np.int64), sizes
    parts = [dataset[i].numpy() for i in range(start, stop)]
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), sizes


class HierarchicalSummarizationDataset(FairseqDataset):
    """Sources as ranked paragraphs (see module docstring); targets as in LanguagePairDataset.

    Args:
        src, tgt: indexed datasets of the binarized source and target lines
        src_dict, tgt_dict: fairseq dictionaries
        separator: index of the paragraph-boundary symbol in ``src_dict``
        max_paragraphs, max_paragraph_tokens: the hierarchical cut
        max_source_positions: the flat cut (EOS included)
        src_path, tgt_path: file names used in error messages
        split: split name used in log lines
        first_line: the line number of example 0 in error messages (raw inference input that
            fairseq-interactive hands over one buffer at a time)
    """

    def __init__(self, src, tgt, src_dict, tgt_dict, separator, max_paragraphs,
                 max_paragraph_tokens, max_source_positions, src_path, tgt_path, split,
                 layout="hierarchical", shuffle=True, first_line: int = 1):
        if tgt is not None and len(src) != len(tgt):
            raise HierError(
                f"source/target count mismatch in split '{split}': {src_path} has {len(src)} "
                f"examples, {tgt_path} has {len(tgt)}"
            )
        self.src, self.tgt = src, tgt
        self.src_dict, self.tgt_dict = src_dict, tgt_dict
        self.separator = separator
        self.max_paragraphs = max_paragraphs
        self.max_paragraph_tokens = max_paragraph_tokens
        self.max_source_positions = max_source_positions
        self.split = split
        self.shuffle = shuffle
        self.src_path, self.tgt_path = src_path, tgt_path
        self.first_line = first_line
        # no target: inference on sources alone (``build_dataset_for_inference``)
        self.tgt_sizes = (np.asarray(tgt.sizes, dtype=np.int64) if tgt is not None
                          else np.zeros(len(src), np.int64))
        self.graphs = None  # ParagraphGraphs (fairseq_hier.data.paragraph_graph), set by the task
        self.use_graphs = False  # the model reads them (liu_ht with --paragraph-graph)
        self.parses = None  # DependencyParses (fairseq_hier.data.dependency_codes), set by the task
        self.use_parses = False  # the model reads them (parsingsum_ft / parsingsum_ht)
        if tgt is not None:
            self._check_targets(tgt_path)
        self._scan_sources(src_path)
        self.layout = layout

    # ------------------------------------------------------------------ up-front checks
    def _check_targets(self, tgt_path):
        empty = np.flatnonzero(self.tgt_sizes <= 1)  # only EOS
        if len(empty):
            lines = ", ".join(str(i + 1) for i in empty[:10])
            raise HierError(f"{len(empty)} empty target summaries in {tgt_path}; line(s) {lines}")

    def _scan_sources(self, src_path):
        """Segment every example once: validate, record sizes, log what the cuts remove."""
        n = len(self.src)
        self.num_paragraphs = np.zeros(n, np.int64)
        self.total_paragraphs = np.zeros(n, np.int64)  # non-empty paragraphs before the cut
        self.max_paragraph_len = np.zeros(n, np.int64)
        kept = np.zeros(n, np.int64)
        totals = dict(empty=0, cut_paragraphs=0, cut_tokens=0, cut_examples=0)
        errors = []
        for start, stop in token_chunks(self.src.sizes):
            seg = self._segment(*token_buffer(self.src, start, stop))
            self.num_paragraphs[start:stop] = seg.num_paragraphs
            self.total_paragraphs[start:stop] = seg.num_paragraphs + seg.cut_paragraphs
            self.max_paragraph_len[start:stop] = seg.max_paragraph_len
            kept[start:stop] = seg.kept_tokens
            totals["empty"] += int(seg.empty_paragraphs.sum())
            totals["cut_paragraphs"] += int(seg.cut_paragraphs.sum())
            totals["cut_tokens"] += int(seg.cut_tokens.sum())
            totals["cut_examples"] += int(((seg.cut_paragraphs > 0) | (seg.cut_tokens > 0)).sum())
            errors.extend(seg.error)
        if any(errors):
            raise HierError(summarize_errors(errors, src_path, first_line=self.first_line))
        self.src_lengths = kept
        # flat layout: kept paragraphs joined by separators, then EOS
        self.flat_sizes_uncut = kept + np.maximum(self.num_paragraphs - 1, 0) + 1
        self.flat_sizes = np.minimum(self.flat_sizes_uncut, self.max_source_positions)
        flat_cut = self.flat_sizes_uncut - self.flat_sizes
        logger.info(
            f"[{self.split}] {n} examples; hierarchical cut to {self.max_paragraphs} paragraphs x "
            f"{self.max_paragraph_tokens} tokens: {totals['cut_examples']} examples cut, "
            f"{totals['cut_paragraphs']} paragraphs cut, {totals['cut_tokens']} tokens cut; "
            f"{totals['empty']} empty paragraphs dropped"
        )
        logger.info(
            f"[{self.split}] flat layout (concatenation cut to --max-source-positions "
            f"{self.max_source_positions}): {int((flat_cut > 0).sum())} examples cut, "
            f"{int(flat_cut.sum())} more tokens cut"
        )
        self.cut_stats = dict(totals, flat_cut_examples=int((flat_cut > 0).sum()),
                              flat_cut_tokens=int(flat_cut.sum()))

    def _segment(self, tokens, lengths):
        return segment(tokens, lengths, self.separator, self.src_dict.eos(),
                       self.max_paragraphs, self.max_paragraph_tokens)

    # ------------------------------------------------------------------ layout
    @property
    def layout(self):
        return self._layout

    @layout.setter
    def layout(self, value):
        if value not in LAYOUTS:
            raise HierError(f"source layout must be one of {LAYOUTS}, got {value!r}")
        self._layout = value
        if value == "hierarchical":
            # size for filtering = longest paragraph (per-paragraph positions); cost = P x L
            self.src_sizes = self.max_paragraph_len
            self.src_num_tokens = self.num_paragraphs * self.max_paragraph_len
        else:
            self.src_sizes = self.flat_sizes
            self.src_num_tokens = self.flat_sizes

    # ------------------------------------------------------------------ examples
    def paragraphs(self, index):
        """The kept paragraphs of one example: ``P_i x L_i`` LongTensor padded with pad."""
        return self._paragraph_rows(index)[0]

    def _paragraph_rows(self, index, per_token=()):
        """``P_i x L_i`` kept tokens of one example, and each array of ``per_token`` (one value
        per token of the binarized line) placed the same way, -1 elsewhere."""
        tokens = self.src[index].numpy().astype(np.int64)
        seg = self._segment(tokens, np.array([len(tokens)]))
        shape = (int(seg.num_paragraphs[0]), int(seg.max_paragraph_len[0]))
        where = (seg.paragraph[seg.keep], seg.position[seg.keep])
        out = []
        for values, fill in [(tokens, self.src_dict.pad())] + [(v, -1) for v in per_token]:
            rows = np.full(shape, fill, dtype=np.int64)
            rows[where] = values[seg.keep]
            out.append(torch.from_numpy(rows))
        return out

    def _flatten(self, rows, sep, eos, real=None):
        """``P x L`` -> the flat layout: rows joined by ``sep``, cut to
        ``max_source_positions - 1``, then ``eos``. ``real`` (``P x L`` bool, default: not pad)
        says which cells are tokens."""
        real = rows.ne(self.src_dict.pad()) if real is None else real
        # P x L -> P x (L + 1) with a separator column, flattened, padding and last sep removed
        with_sep = torch.cat([rows, rows.new_full((rows.size(0), 1), sep)], dim=1).view(-1)
        keep = torch.cat([real, real.new_ones((real.size(0), 1))], dim=1).view(-1)
        flat = with_sep[keep][:-1][: self.max_source_positions - 1]
        return torch.cat([flat, flat.new_tensor([eos])])

    def source_and_parse(self, index):
        """The source of one example in the current layout (``P_i x L_i`` or ``S_i``) and, when
        the parse is used, its (words, heads) laid out the same way (see the module docstring),
        from one segmentation of the line."""
        per_token = ()
        if self.use_parses:
            per_token = decode(self.parses.codes(index))
        rows, *parse = self._paragraph_rows(index, per_token)
        if self.layout == "hierarchical":
            return rows, parse
        real = rows.ne(self.src_dict.pad())
        return (self._flatten(rows, self.separator, self.src_dict.eos(), real),
                [self._flatten(values, -1, -1, real) for values in parse])

    def attach_parses(self, parses, data_path: str) -> None:
        """Use ``parses`` (:class:`~fairseq_hier.data.dependency_codes.DependencyParses`) for this
        split after checking them against it: same example count, one code per binarized token."""
        parses.check(np.asarray(self.src.sizes), data_path)
        self.parses = parses

    def attach_graphs(self, graphs, data_path: str) -> None:
        """Use ``graphs`` (:class:`~fairseq_hier.data.paragraph_graph.ParagraphGraphs`) for this
        split after checking them against it: same example count, and one node per non-empty
        paragraph of each example (before the ``max_paragraphs`` cut, which crops the matrix)."""
        graphs.check(self.total_paragraphs, data_path)
        self.graphs = graphs

    def __getitem__(self, index):
        source, parse = self.source_and_parse(index)
        item = {"id": index, "source": source,
                "target": self.tgt[index] if self.tgt is not None else None}
        if self.use_graphs and self.layout == "hierarchical":
            kept = int(self.num_paragraphs[index])
            item["graph"] = torch.from_numpy(self.graphs.matrix(index, kept))  # P_i x P_i
        if parse:
            item["words"], item["heads"] = parse
        return item

    def __len__(self):
        return len(self.src)

    def collater(self, samples):
        if len(samples) == 0:
            return {}
        pad, eos = self.src_dict.pad(), self.src_dict.eos()
        ids = torch.LongTensor([s["id"] for s in samples])
        if self.layout == "hierarchical":
            src_tokens = self._collate_paragraphs([s["source"] for s in samples], pad)
            src_lengths = src_tokens.ne(pad).long().sum((1, 2))
        else:
            src_tokens = data_utils.collate_tokens([s["source"] for s in samples], pad, eos)
            src_lengths = src_tokens.ne(pad).long().sum(1)
        net_input = {"src_tokens": src_tokens, "src_lengths": src_lengths}
        target = None
        if self.tgt is not None:
            target = data_utils.collate_tokens([s["target"] for s in samples], pad, eos)
            net_input["prev_output_tokens"] = data_utils.collate_tokens(
                [s["target"] for s in samples], pad, eos, move_eos_to_beginning=True
            )
        if "words" in samples[0]:
            for key, name in (("words", "src_words"), ("heads", "src_heads")):
                values = [s[key] for s in samples]
                net_input[name] = (self._collate_paragraphs(values, -1)
                                   if self.layout == "hierarchical"
                                   else data_utils.collate_tokens(values, -1))
        if self.layout == "hierarchical" and "graph" in samples[0]:
            net_input["paragraph_graph"] = self._collate_graphs([s["graph"] for s in samples],
                                                                src_tokens.size(1))
        return {
            "id": ids,
            "nsentences": len(samples),
            "ntokens": int(target.ne(pad).sum()) if target is not None else 0,
            "net_input": net_input,
            "target": target,
        }

    @staticmethod
    def _collate_graphs(graphs, num_paragraphs: int):
        """List of ``P_i x P_i`` -> ``B x P x P`` float32, zeros outside each example's block."""
        out = torch.zeros(len(graphs), num_paragraphs, num_paragraphs)
        for i, g in enumerate(graphs):
            out[i, : g.size(0), : g.size(1)] = g
        return out

    @staticmethod
    def _collate_paragraphs(blocks, pad):
        """List of ``P_i x L_i`` -> ``B x P x L`` padded with pad (absent paragraphs: all pad)."""
        num_p = max(b.size(0) for b in blocks)
        num_l = max(b.size(1) for b in blocks)
        out = blocks[0].new_full((len(blocks), num_p, num_l), pad)
        for i, b in enumerate(blocks):
            out[i, : b.size(0), : b.size(1)] = b
        return out

    # ------------------------------------------------------------------ sizes and order
    def num_tokens(self, index):
        return max(int(self.src_num_tokens[index]), int(self.tgt_sizes[index]))

    def num_tokens_vec(self, indices):
        return np.maximum(self.src_num_tokens[indices], self.tgt_sizes[indices])

    def size(self, index):
        return (int(self.src_sizes[index]), int(self.tgt_sizes[index]))

    @property
    def sizes(self):
        return np.stack([self.src_sizes, self.tgt_sizes], axis=1)

    def ordered_indices(self):
        order = np.random.permutation(len(self)) if self.shuffle else np.arange(len(self))
        order = order[np.argsort(self.tgt_sizes[order], kind="mergesort")]
        return order[np.argsort(self.src_num_tokens[order], kind="mergesort")]

    def filter_indices_by_size(self, indices, max_sizes):
        return data_utils.filter_paired_dataset_indices_by_size(
            self.src_sizes, self.tgt_sizes, indices, max_sizes
        )

    @property
    def supports_prefetch(self):
        return False
