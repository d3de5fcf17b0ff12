"""``fairseq-hier-doc-chunk``: tokenised documents -> BPE'd chunks of at most ``--max-chunk-tokens``
tokens with a BOS marker per source sentence, and the chunk map (paper 004 Sec. 4.2).

    fairseq-hier-doc-chunk --input work/tok/train --output work/chunks/train \\
        --src-lang en --tgt-lang de --codes work/bpe.codes --max-chunk-tokens 512

Reads ``INPUT.{src,tgt,docids}`` (``fairseq-hier-doc-tokenize`` output), applies the joint fastBPE
codes (learnt with ``fastbpe learnbpe N train.tok.src train.tok.tgt``, as the paper's 40000) to
both sides, cuts every document at sentence boundaries (:func:`~fairseq_hier.data.doc_chunks.
chunk_spans`) and writes ``OUTPUT.{src,tgt,chunks}`` for ``fairseq-preprocess --joined-dictionary``
(layout in :mod:`fairseq_hier.data.doc_chunks`). A sentence longer than the limit on a side is
its own chunk, truncated on that side: the log counts them and names the first ones by file and
line. A token that is one of fairseq's special symbols (``<s>`` ...) is an error naming its line.
"""

import logging
import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_split_arguments, command_parser, ranged, run_command
from fairseq_hier.data.doc_chunks import apply_bpe, check_codes  # noqa: F401  (also used here)
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.doc_chunk")
PROG = "fairseq-hier-doc-chunk"
SHOWN = 5  # truncated sentences named in the log


def sentence_lines(docs) -> List[int]:
    """The line of every sentence in the raw layout's files (an empty line ends each document;
    both sides are line-aligned), in document order."""
    lines, n = [], 0
    for d in docs:
        lines.extend(range(n + 1, n + len(d.src) + 1))
        n += len(d.src) + 1
    return lines


def run(args):
    from tqdm import tqdm

    from fairseq_hier.data.doc_chunks import (SPECIAL_SYMBOLS, ChunkRow, chunk_spans,
                                              write_chunks)
    from fairseq_hier.data.documents import read_documents, split_paths

    check_codes(args.codes)  # before the documents are read: fastBPE crashes on bad codes
    docs = read_documents(args.input, args.src_lang, args.tgt_lang)
    paths = dict(zip(("src", "tgt"), split_paths(args.input, args.src_lang, args.tgt_lang)))
    limit = args.max_chunk_tokens
    lines = sentence_lines(docs)
    bpe = {}
    for side in ("src", "tgt"):
        flat = [s for d in docs for s in getattr(d, side)]
        bpe[side] = [s.split() for s in apply_bpe(args.codes, flat)]
        for tokens, n in zip(bpe[side], lines):
            bad = set(tokens) & set(SPECIAL_SYMBOLS)
            if bad:
                raise HierError(f"{paths[side]}:{n}: the sentence holds {sorted(bad)[0]!r}, one "
                                f"of fairseq's special symbols {SPECIAL_SYMBOLS}: escape or "
                                f"remove it before chunking")
    truncated, stats = [], {"sentences": 0, "src_tokens": 0, "tgt_tokens": 0}

    def chunks():
        start = 0  # flat index of the document's first sentence
        for d in tqdm(docs, unit="doc", disable=args.no_progress_bar, mininterval=1.0,
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

    n = write_chunks(args.output, args.src_lang, args.tgt_lang, chunks(),
                     inputs=[*split_paths(args.input, args.src_lang, args.tgt_lang), args.codes])
    if truncated:
        logger.warning(f"{len(truncated)} sentence(s) longer than --max-chunk-tokens {limit} on a "
                       f"side: each is its own chunk, cut to {limit} tokens on that side; first: "
                       + "; ".join(truncated[:SHOWN]))
    logger.info(f"wrote {args.output}.{{{args.src_lang},{args.tgt_lang},chunks}}: {len(docs)} "
                f"documents, {n} chunks, {stats['sentences']} sentences, "
                f"{stats['src_tokens'] / max(n, 1):.1f} source tokens (BOS included) and "
                f"{stats['tgt_tokens'] / max(n, 1):.1f} target tokens per chunk, "
                f"{len(truncated)} truncated sentence(s)")
    return n, truncated


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    add_split_arguments(p, "prefix of the tokenised INPUT.{src,tgt,docids}",
                        "prefix of OUTPUT.{src,tgt,chunks}")
    p.add_argument("--codes", required=True, help="joint fastBPE codes (fastbpe learnbpe)")
    p.add_argument("--max-chunk-tokens", type=ranged(int, 2), default=512,
                   help="most BPE tokens of a chunk on either side, the source's BOS markers "
                        "included, EOS not (004: 512; at least 2: a BOS and a token)")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
