"""``fairseq-hier-doc-tokenize``: tokenise a split of parallel documents (paper 004 Sec. 4.2: "We
use Moses for preprocessing the English, German and Czech text and Jieba for tokenizing the
Chinese text").

    fairseq-hier-doc-tokenize --input work/raw/train --output work/tok/train \\
        --src-lang en --tgt-lang de --workers 8

Reads ``INPUT.{src,tgt,docids}`` (our raw layout, :mod:`fairseq_hier.data.documents`, written by
``fairseq-hier-doc-extract``) and writes ``OUTPUT.{src,tgt,docids}`` in the same layout, every
sentence tokenised (:func:`fairseq_hier.data.doc_chunks.tokenizer`: sacremoses normalisation and
tokenisation with ``@-@`` hyphen splits for Moses languages, jieba for ``zh``). Prints the rate
(sentences per second) that the recipes' time estimates come from. Errors: one line, exit 1.
"""

import logging
import sys
import time
from typing import List, Optional

from fairseq_hier.cli.common import add_split_arguments, command_parser, positive_int, run_command

logger = logging.getLogger("fairseq_hier.doc_tokenize")
PROG = "fairseq-hier-doc-tokenize"


class SentenceTokenizer:
    """Picklable ``sentence -> tokens`` for one language (built lazily in each worker)."""

    def __init__(self, lang: str):
        self.lang = lang
        self._fn = None

    def __getstate__(self):
        return {"lang": self.lang, "_fn": None}

    def __call__(self, sentence: str) -> str:
        if self._fn is None:
            from fairseq_hier.data.doc_chunks import tokenizer

            self._fn = tokenizer(self.lang)
        return self._fn(sentence)


def tokenize_sentences(sentences: List[str], lang: str, workers: int, progress: bool) -> List[str]:
    from fairseq_hier.data.doc_chunks import tokenizer
    from fairseq_hier.data.sentence_bos import encode_records

    tokenizer(lang)  # an unknown language fails here, before any worker starts
    return list(encode_records(SentenceTokenizer(lang), sentences, workers=workers, chunk=256,
                               progress=progress, total=len(sentences), desc=f"tokenize {lang}"))


def run(args) -> int:
    from fairseq_hier.data.documents import (Document, read_documents, split_paths,
                                             write_documents)

    docs = read_documents(args.input, args.src_lang, args.tgt_lang)
    start = time.perf_counter()
    sides = {}
    for lang, get in ((args.src_lang, lambda d: d.src), (args.tgt_lang, lambda d: d.tgt)):
        flat = [s for d in docs for s in get(d)]
        sides[lang] = iter(tokenize_sentences(flat, lang, args.workers, not args.no_progress_bar))
    out = [Document(d.docid, [next(sides[args.src_lang]) for _ in d.src],
                    [next(sides[args.tgt_lang]) for _ in d.tgt]) for d in docs]
    write_documents(args.output, args.src_lang, args.tgt_lang, out,
                    inputs=split_paths(args.input, args.src_lang, args.tgt_lang))
    seconds = time.perf_counter() - start
    sentences = sum(len(d.src) for d in docs)
    logger.info(f"tokenised {args.input} -> {args.output}: {len(docs)} documents, {sentences} "
                f"sentence pairs in {seconds:.1f} s ({2 * sentences / max(seconds, 1e-9):.0f} "
                f"sentences/s with {args.workers} worker(s))")
    return len(docs)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    add_split_arguments(p, "prefix of INPUT.{src,tgt,docids}",
                        "prefix of the tokenised OUTPUT.{src,tgt,docids}")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
