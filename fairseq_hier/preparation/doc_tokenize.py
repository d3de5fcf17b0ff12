"""Tokenisation of a split of parallel documents (paper 004 Sec. 4.2: "We use Moses for
preprocessing the English, German and Czech text and Jieba for tokenizing the Chinese text"):
every sentence of our raw layout (:mod:`fairseq_hier.readers.documents`) through
:func:`fairseq_hier.text.tokenizers.tokenizer` for its language and the chosen tokenizer
(``auto``, ``moses``, ``jieba``, ``none``: :func:`fairseq_hier.text.tokenizers.choose_tokenizer`),
in worker processes (``fairseq-hier-doc tokenize`` documents the files).
"""

import logging
import time
from typing import List, Optional

from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.preparation.sentence_bos import encode_records
from fairseq_hier.readers.documents import Document, read_documents, split_paths, write_documents
from fairseq_hier.text.tokenizers import choose_tokenizer, tokenizer

logger = logging.getLogger("fairseq_hier.doc_tokenize")


class SentenceTokenizer:
    """Picklable ``sentence -> tokens`` for one language and tokenizer choice (built lazily in
    each worker)."""

    def __init__(self, lang: str, choice: str = "auto"):
        self.lang = lang
        self.choice = choice
        self._fn = None

    def __getstate__(self):
        return {"lang": self.lang, "choice": self.choice, "_fn": None}

    def __call__(self, sentence: str) -> str:
        if self._fn is None:
            self._fn = tokenizer(self.lang, self.choice)
        return self._fn(sentence)


def tokenize_sentences(sentences: List[str], lang: str, workers: int, progress: bool,
                       choice: str = "auto") -> List[str]:
    """``sentences`` tokenised for ``lang`` with ``choice``; logs the tokenizer once (and the
    fallback's warning, :meth:`fairseq_hier.text.tokenizers.TokenizerChoice.warning`)."""
    chosen = choose_tokenizer(lang, choice)  # a bad choice fails here, before any worker starts
    if chosen.fallback:
        logger.warning(chosen.warning())
    logger.info(f"tokenizer for {lang} ({choice}): {chosen.describe()}")
    tokenizer(lang, choice)  # a missing package fails here too
    return list(encode_records(SentenceTokenizer(lang, choice), sentences, workers=workers,
                               chunk=256, progress=progress, total=len(sentences),
                               desc=f"tokenize {lang}"))


def tokenize_split(input_prefix: str, output_prefix: str, src_lang: str, tgt_lang: str,
                   workers: int = 1, progress_bar: bool = True, src_tokenizer: str = "auto",
                   tgt_tokenizer: str = "auto", shard: Optional[Shard] = None) -> int:
    """Tokenise every sentence of the split ``input_prefix.{src,tgt,docids}`` (or of its
    ``shard``, a block of whole documents: :mod:`fairseq_hier.data.shards`) into
    ``output_prefix.*`` (same layout), each side with its tokenizer choice; logs the rate and
    returns the number of documents."""
    docs = read_documents(input_prefix, src_lang, tgt_lang)
    inputs = split_paths(input_prefix, src_lang, tgt_lang)
    selection = select(shard, inputs, lambda: len(docs), unit="documents")
    docs = selection.slice(docs)
    start = time.perf_counter()
    src = tokenize_sentences([s for d in docs for s in d.src], src_lang, workers, progress_bar,
                             src_tokenizer)
    tgt = tokenize_sentences([s for d in docs for s in d.tgt], tgt_lang, workers, progress_bar,
                             tgt_tokenizer)
    sides = iter(src), iter(tgt)
    out = [Document(d.docid, [next(sides[0]) for _ in d.src], [next(sides[1]) for _ in d.tgt])
           for d in docs]
    write_documents(output_prefix, src_lang, tgt_lang, out, inputs=inputs)
    mark_outputs(split_paths(output_prefix, src_lang, tgt_lang), selection)
    seconds = time.perf_counter() - start
    sentences = sum(len(d.src) for d in docs)
    logger.info(f"{selection.label}tokenised {input_prefix} -> {output_prefix}: {len(docs)} "
                f"documents, {sentences} sentence pairs in {seconds:.1f} s "
                f"({2 * sentences / max(seconds, 1e-9):.0f} sentences/s with {workers} worker(s))")
    return len(docs)
