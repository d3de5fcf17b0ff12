"""The ``fairseq-hier-doc chunk`` step (paper 004 Sec. 4.2: "we split documents into chunks of at
most 512 tokens. We only split at segment boundaries"): tokenised parallel documents -> BPE'd
chunks with a ``<s>`` before every source sentence, and the chunk map. :func:`chunk_spans` is the
one chunking rule (greedy over sentences, both sides within the limit, an over-long sentence
alone and truncated), used here and by the ``doc_chunks`` pipeline of new text.

Files written: docs/data-formats.md, section "Document chunks and the chunk map" (the map is read
through :mod:`fairseq_hier.data.chunk_map`).

May import: :mod:`fairseq_hier.data`, :mod:`fairseq_hier.readers`, ``io``, ``errors``; tqdm inside
the function that shows it.
"""

import logging
from typing import Iterable, List, Optional, Sequence, Tuple

from fairseq_hier.data.bpe_codes import apply_bpe, check_codes
from fairseq_hier.data.chunk_map import ChunkRow
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.readers.documents import read_documents, split_paths

logger = logging.getLogger("fairseq_hier.doc_chunk")
SHOWN = 5  # truncated sentences named in the log
BOS = "<s>"
SPECIAL_SYMBOLS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq's Dictionary specials


def chunk_spans(src_lengths: Sequence[int], tgt_lengths: Sequence[int],
                limit: int) -> Tuple[List[Tuple[int, int]], List[int]]:
    """Greedy chunking of one document at sentence boundaries.

    Args:
        src_lengths, tgt_lengths: BPE tokens of every sentence (source without its BOS).
        limit: the most tokens of a chunk on either side (source BOS markers included).
    Returns:
        ``spans``: ``(first, last)`` sentence indices (inclusive) of each chunk, covering
        ``0..n-1`` in order, each sentence once; ``overlong``: the sentences that alone exceed the
        limit on a side (each is its own chunk, to be truncated).
    """
    if limit < 2:
        raise HierError(f"--max-chunk-tokens must be at least 2 (a BOS and a token), got {limit}")
    spans: List[Tuple[int, int]] = []
    overlong: List[int] = []
    first, src_used, tgt_used = 0, 0, 0
    for i, (s, t) in enumerate(zip(src_lengths, tgt_lengths)):
        s += 1  # its BOS marker
        if i > first and (src_used + s > limit or tgt_used + t > limit):
            spans.append((first, i - 1))
            first, src_used, tgt_used = i, 0, 0
        if s > limit or t > limit:
            overlong.append(i)
        src_used, tgt_used = src_used + s, tgt_used + t
    if len(src_lengths):
        spans.append((first, len(src_lengths) - 1))
    # an over-long sentence closes the chunk before it (it cannot fit) and the one after it
    # (nothing fits after it): it is always alone
    return spans, overlong


def split_source_chunk(line: str) -> List[str]:
    """A source chunk line -> its sentences (the text after each ``<s>``)."""
    parts = f" {line.strip()} ".split(f" {BOS} ")
    if parts[0].strip():
        raise HierError(f"a source chunk must open with {BOS}: {line[:60]!r}")
    return [p.strip() for p in parts[1:]]


def write_chunks(out: str, src: str, tgt: str, chunks: Iterable[Tuple[ChunkRow, List[str],
                                                                       List[str]]],
                 inputs: Iterable[str] = ()) -> int:
    """Write ``OUT.{src,tgt,chunks}`` from ``(row, source sentences, target sentences)`` (BPE'd
    token strings, already cut to the limit), together once complete; none may be one of
    ``inputs`` (:func:`fairseq_hier.io.atomic_outputs`)."""
    n = 0
    with atomic_outputs((f"{out}.{src}", f"{out}.{tgt}", f"{out}.chunks"),
                        inputs) as (fs, ft, fm):
        for row, source, target in chunks:
            fs.write(" ".join(f"{BOS} {s}" for s in source) + "\n")
            ft.write(" ".join(target) + "\n")
            fm.write(row.line())
            n += 1
    return n


def sentence_lines(docs) -> List[int]:
    """The line of every sentence in the raw layout's files (an empty line ends each document;
    both sides are line-aligned), in document order."""
    lines, n = [], 0
    for d in docs:
        lines.extend(range(n + 1, n + len(d.src) + 1))
        n += len(d.src) + 1
    return lines


def chunk_split(input_prefix: str, output_prefix: str, src_lang: str, tgt_lang: str, codes: str,
                max_chunk_tokens: int = 512, progress_bar: bool = True,
                shard: Optional[Shard] = None) -> Tuple[int, List[str]]:
    """BPE and chunk the tokenised split ``input_prefix.{src,tgt,docids}`` (or its ``shard``, a
    block of whole documents: :mod:`fairseq_hier.data.shards`) into
    ``output_prefix.{src,tgt,chunks}`` (``fairseq-hier-doc chunk`` documents the rules); logs the
    counts and returns (chunks written, the truncated sentences named)."""
    from tqdm import tqdm

    check_codes(codes)  # before the documents are read: fastBPE crashes on bad codes
    docs = read_documents(input_prefix, src_lang, tgt_lang)
    inputs = split_paths(input_prefix, src_lang, tgt_lang)  # src, tgt, docids
    paths = dict(zip(("src", "tgt"), inputs))
    selection = select(shard, inputs, lambda: len(docs), unit="documents")
    lines = sentence_lines(docs)[sum(len(d.src) for d in docs[:selection.first]):]
    docs = selection.slice(docs)
    limit = max_chunk_tokens
    bpe = {}
    for side in ("src", "tgt"):
        flat = [s for d in docs for s in getattr(d, side)]
        bpe[side] = [s.split() for s in apply_bpe(codes, flat)]
        for tokens, n in zip(bpe[side], lines):
            bad = set(tokens) & set(SPECIAL_SYMBOLS)
            if bad:
                raise HierError(f"{paths[side]}:{n}: the sentence holds {sorted(bad)[0]!r}, one "
                                f"of fairseq's special symbols {SPECIAL_SYMBOLS}: escape or "
                                f"remove it before chunking")
    truncated, stats = [], {"sentences": 0, "src_tokens": 0, "tgt_tokens": 0}

    def chunks():
        start = 0  # flat index of the document's first sentence
        for d in tqdm(docs, unit="doc", disable=not progress_bar, mininterval=1.0,
                      desc="chunk"):
            stop = start + len(d.src)
            src, tgt = bpe["src"][start:stop], bpe["tgt"][start:stop]
            spans, overlong = chunk_spans([len(s) for s in src], [len(t) for t in tgt], limit)
            for i in overlong:
                where = [f"{paths[side]}:{lines[start + i]} ({n} tokens)" for side, n in (
                    ("src", len(src[i]) + 1), ("tgt", len(tgt[i]))) if n > limit]
                truncated.append(f"{d.docid} sentence {i}: " + ", ".join(where))
                src[i], tgt[i] = src[i][: limit - 1], tgt[i][:limit]
            for k, (a, b) in enumerate(spans):
                stats["sentences"] += b - a + 1
                stats["src_tokens"] += sum(len(s) + 1 for s in src[a:b + 1])
                stats["tgt_tokens"] += sum(len(t) for t in tgt[a:b + 1])
                yield (ChunkRow(d.docid, k, a, b), [" ".join(s) for s in src[a:b + 1]],
                       [" ".join(t) for t in tgt[a:b + 1]])
            start = stop

    n = write_chunks(output_prefix, src_lang, tgt_lang, chunks(),
                     inputs=[*inputs, codes])
    mark_outputs([f"{output_prefix}.{src_lang}", f"{output_prefix}.{tgt_lang}",
                  f"{output_prefix}.chunks"], selection)
    if truncated:
        logger.warning(f"{len(truncated)} sentence(s) longer than --max-chunk-tokens {limit} on a "
                       f"side: each is its own chunk, cut to {limit} tokens on that side; first: "
                       + "; ".join(truncated[:SHOWN]))
    logger.info(f"{selection.label}wrote {output_prefix}.{{{src_lang},{tgt_lang},chunks}}: "
                f"{len(docs)} documents, {n} chunks, {stats['sentences']} sentences, "
                f"{stats['src_tokens'] / max(n, 1):.1f} source tokens (BOS included) and "
                f"{stats['tgt_tokens'] / max(n, 1):.1f} target tokens per chunk, "
                f"{len(truncated)} truncated sentence(s)")
    return n, truncated
