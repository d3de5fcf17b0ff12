"""``fairseq-hier-doc-chunk``: tokenised documents -> BPE'd chunks of at most ``--max-chunk-tokens``
tokens with a BOS marker per source sentence, and the chunk map (paper 004 Sec. 4.2).

    fairseq-hier-doc-chunk --input work/tok/train --output work/chunks/train \\
        --src-lang en --tgt-lang de --codes work/bpe.codes --max-chunk-tokens 512

Reads ``INPUT.{src,tgt,docids}`` (``fairseq-hier-doc-tokenize`` output), applies the joint fastBPE
codes (learnt with ``fastbpe learnbpe N train.tok.src train.tok.tgt``, as the paper's 40000) to
both sides, cuts every document at sentence boundaries (:func:`~fairseq_hier.preparation.
doc_chunk.chunk_spans`) and writes ``OUTPUT.{src,tgt,chunks}`` for ``fairseq-preprocess
--joined-dictionary`` (layout in docs/data-formats.md, "Document chunks and the chunk map"). A
sentence longer than the limit on a side is its own chunk, truncated on that side: the log counts
them and names the first ones by file and line. A token that is one of fairseq's special symbols
(``<s>`` ...) is an error naming its line.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import (add_shard_argument, add_split_arguments, command_parser,
                                     ranged, run_command)
from fairseq_hier.preparation.doc_chunk import chunk_split

PROG = "fairseq-hier-doc-chunk"


def run(args):
    return chunk_split(args.input, args.output, args.src_lang, args.tgt_lang, args.codes,
                       max_chunk_tokens=args.max_chunk_tokens,
                       progress_bar=not args.no_progress_bar, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    add_split_arguments(p, "prefix of the tokenised INPUT.{src,tgt,docids}",
                        "prefix of OUTPUT.{src,tgt,chunks}")
    p.add_argument("--codes", required=True, help="joint fastBPE codes (fastbpe learnbpe)")
    p.add_argument("--max-chunk-tokens", type=ranged(int, 2), default=512,
                   help="most BPE tokens of a chunk on either side, the source's BOS markers "
                        "included, EOS not (004: 512; at least 2: a BOS and a token)")
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
