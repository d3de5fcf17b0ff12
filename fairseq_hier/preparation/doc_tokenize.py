"""Tokenisation of a split of parallel documents (paper 004 Sec. 4.2: "We use Moses for
preprocessing the English, German and Czech text and Jieba for tokenizing the Chinese text"):
every sentence of our raw layout (:mod:`fairseq_hier.data.documents`) through
:func:`fairseq_hier.data.doc_chunks.tokenizer`, in worker processes (``fairseq-hier-doc-tokenize``
documents the files).
"""

import logging
import time
from typing import List

from fairseq_hier.data.doc_chunks import tokenizer
from fairseq_hier.data.documents import Document, read_documents, split_paths, write_documents
from fairseq_hier.data.sentence_bos import encode_records

logger = logging.getLogger("fairseq_hier.doc_tokenize")


class SentenceTokenizer:
    """Picklable ``sentence -> tokens`` for one language (built lazily in each worker)."""

    def __init__(self, lang: str):
        self.lang = lang
        self._fn = None

    def __getstate__(self):
        return {"lang": self.lang, "_fn": None}

    def __call__(self, sentence: str) -> str:
        if self._fn is None:
            self._fn = tokenizer(self.lang)
        return self._fn(sentence)


def tokenize_sentences(sentences: List[str], lang: str, workers: int, progress: bool) -> List[str]:
    tokenizer(lang)  # an unknown language fails here, before any worker starts
    return list(encode_records(SentenceTokenizer(lang), sentences, workers=workers, chunk=256,
                               progress=progress, total=len(sentences), desc=f"tokenize {lang}"))


def tokenize_split(input_prefix: str, output_prefix: str, src_lang: str, tgt_lang: str,
                   workers: int = 1, progress_bar: bool = True) -> int:
    """Tokenise every sentence of the split ``input_prefix.{src,tgt,docids}`` into
    ``output_prefix.*`` (same layout); logs the rate and returns the number of documents."""
    docs = read_documents(input_prefix, src_lang, tgt_lang)
    start = time.perf_counter()
    sides = {}
    for lang, get in ((src_lang, lambda d: d.src), (tgt_lang, lambda d: d.tgt)):
        flat = [s for d in docs for s in get(d)]
        sides[lang] = iter(tokenize_sentences(flat, lang, workers, progress_bar))
    out = [Document(d.docid, [next(sides[src_lang]) for _ in d.src],
                    [next(sides[tgt_lang]) for _ in d.tgt]) for d in docs]
    write_documents(output_prefix, src_lang, tgt_lang, out,
                    inputs=split_paths(input_prefix, src_lang, tgt_lang))
    seconds = time.perf_counter() - start
    sentences = sum(len(d.src) for d in docs)
    logger.info(f"tokenised {input_prefix} -> {output_prefix}: {len(docs)} documents, {sentences} "
                f"sentence pairs in {seconds:.1f} s ({2 * sentences / max(seconds, 1e-9):.0f} "
                f"sentences/s with {workers} worker(s))")
    return len(docs)
