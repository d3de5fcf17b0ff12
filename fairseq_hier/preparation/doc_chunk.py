"""Tokenised parallel documents -> BPE'd chunks of at most ``max_chunk_tokens`` tokens with a BOS
marker per source sentence, and the chunk map (paper 004 Sec. 4.2): the joint fastBPE codes
applied to both sides, every document cut at sentence boundaries
(:func:`fairseq_hier.data.doc_chunks.chunk_spans`), overlong sentences truncated and counted
(``fairseq-hier-doc-chunk`` documents the files and errors).
"""

import logging
from typing import List, Optional, Tuple

from fairseq_hier.data.doc_chunks import (SPECIAL_SYMBOLS, ChunkRow, apply_bpe, check_codes,
                                          chunk_spans, write_chunks)
from fairseq_hier.data.documents import read_documents, split_paths
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.doc_chunk")
SHOWN = 5  # truncated sentences named in the log


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
    ``output_prefix.{src,tgt,chunks}`` (``fairseq-hier-doc-chunk`` documents the rules); logs the
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
