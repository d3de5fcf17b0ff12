"""Pipeline ``doc_chunks`` (task ``document_translation``, paper 004 Sec. 4.2): a raw source
document -> the source chunk lines ``fairseq-hier-doc-tokenize`` + ``fairseq-hier-doc-chunk``
write for it, and the chunk translations -> the document as ``fairseq-hier-doc-bleu`` puts it
together.

The record's options are the prepare step's (``examples/doc_mt_common/prepare.sh`` records them):

    fairseq-hier-record DATA_BIN --task document_translation --pipeline doc_chunks \\
        --option src_lang=en --option tgt_lang=de --option max_chunk_tokens=512 \\
        --option src_tokenizer=auto --option tgt_tokenizer=auto \\
        --asset bpe.codes=work/bpe.codes --generation "--beam 4 --max-len-a 0 --max-len-b 1023"

``src_tokenizer`` / ``tgt_tokenizer`` are ``fairseq-hier-doc-tokenize``'s choices of the prepare
step (``auto``, ``moses``, ``jieba``, ``none``; a record without them reads as ``auto``).

encode (``RawExample.documents``: exactly one document, one sentence per non-blank line, as the
raw layout of :mod:`fairseq_hier.data.documents`): every sentence through
:func:`~fairseq_hier.data.doc_chunks.tokenizer` for ``src_lang`` and ``src_tokenizer``, the
recorded joint fastBPE codes (:func:`fairseq_hier.data.doc_chunks.apply_bpe`, which checks the
codes first), then :func:`~fairseq_hier.data.doc_chunks.chunk_spans` and one ``<s>``-marked line
per chunk. At inference there is no target: chunks are
cut by the source side alone (target lengths 0), so they equal the prepare step's whenever the
source side bound its cut, and are never larger than ``max_chunk_tokens``. A sentence longer
than the limit is its own chunk, cut to it as ``fairseq-hier-doc-chunk`` cuts it (counted).

decode: the chunk hypotheses (``H-`` strings) -> BPE removed, stray ``<s>``/``</s>`` dropped,
detokenised for ``tgt_lang`` and ``tgt_tokenizer``
(:func:`fairseq_hier.scoring.bleu.postprocess_hypotheses`) -> joined in order
(:func:`~fairseq_hier.data.doc_chunks.reassemble`).
"""

import logging
from typing import Callable, List

from ..data.doc_chunks import (BOS, SPECIAL_SYMBOLS, TOKENIZERS, ChunkRow, apply_bpe, chunk_spans,
                               choose_tokenizer, reassemble, tokenizer)
from ..scoring.bleu import postprocess_hypotheses
from .pipeline_base import (InputError, Pipeline, RawExample, RecordError, choice,
                            register_pipeline)

logger = logging.getLogger(__name__)


@register_pipeline
class DocChunksPipeline(Pipeline):
    """A raw document -> its source chunk lines; the chunks' translations -> the document."""

    name = "doc_chunks"
    TASKS = ("document_translation",)
    OPTIONS = {
        "src_lang": ("en", "source language (fairseq-hier-doc-tokenize --src-lang)"),
        "tgt_lang": ("de", "target language (detokenisation of the translations)"),
        "src_tokenizer": ("auto", "fairseq-hier-doc-tokenize --src-tokenizer: auto, moses, "
                                  "jieba or none"),
        "tgt_tokenizer": ("auto", "fairseq-hier-doc-tokenize --tgt-tokenizer (its inverse "
                                  "detokenises the translations)"),
        "max_chunk_tokens": (512, "fairseq-hier-doc-chunk --max-chunk-tokens: most source "
                                  "tokens of a chunk, its BOS markers included, EOS not"),
    }
    ASSETS = ("bpe.codes",)

    @classmethod
    def check_options(cls, options: dict, where: str) -> None:
        n = options["max_chunk_tokens"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise RecordError(f"{where}: option max_chunk_tokens must be an integer >= 2, "
                              f"got {n!r}")
        for key in ("src_lang", "tgt_lang"):
            if not isinstance(options[key], str) or not options[key]:
                raise RecordError(f"{where}: option {key} must be a language code")
        for key in ("src_tokenizer", "tgt_tokenizer"):
            choice(options, key, TOKENIZERS, where)

    def __init__(self, options: dict, assets):
        super().__init__(options, assets)
        self._tokenize = None

    def source_tokenizer(self) -> Callable[[str], str]:
        """The prepare step's tokenizer of the source language (logged once, with the
        fallback's warning where ``auto`` found no rules for the language)."""
        lang, chosen = self.options["src_lang"], self.options["src_tokenizer"]
        resolved = choose_tokenizer(lang, chosen)
        if resolved.fallback:
            logger.warning(resolved.warning())
        logger.info(f"tokenizer for {lang} (src_tokenizer {chosen} of the record): "
                    f"{resolved.describe()}")
        return tokenizer(lang, chosen)

    def sentences(self, example: RawExample) -> List[str]:
        """The document's sentences (its non-blank lines: only ``\n`` ends a line, as in the
        raw layout, so U+2028 and other Unicode separators stay inside a sentence), tokenised."""
        if len(example.documents) != 1:
            raise InputError(f"{example.where}: {len(example.documents)} documents; "
                             f"document_translation translates one document per example")
        if example.title:
            self.counts["titles ignored (a document has no title slot)"] += 1
        raw = [line.rstrip("\r") for line in example.documents[0].split("\n") if line.strip()]
        if not raw:
            raise InputError(f"{example.where}: the document has no sentence")
        if self._tokenize is None:
            self._tokenize = self.source_tokenizer()
        return [self._tokenize(s) for s in raw]

    def encode(self, example: RawExample) -> List[str]:
        bpe = [s.split() for s in apply_bpe(self.assets.path("bpe.codes"),
                                            self.sentences(example))]
        for i, tokens in enumerate(bpe):
            bad = set(tokens) & set(SPECIAL_SYMBOLS)
            if bad:
                raise InputError(f"{example.where}: sentence {i + 1} holds {sorted(bad)[0]!r}, "
                                 f"one of fairseq's special symbols {SPECIAL_SYMBOLS}: escape or "
                                 f"remove it")
        limit = self.options["max_chunk_tokens"]
        spans, overlong = chunk_spans([len(s) for s in bpe], [0] * len(bpe), limit)
        for i in overlong:  # fairseq-hier-doc-chunk's cut: the source keeps its BOS
            logger.info(f"{example.where}: sentence {i + 1} has {len(bpe[i]) + 1} tokens with "
                        f"its BOS > max_chunk_tokens {limit}: its own chunk, cut to {limit}")
            bpe[i] = bpe[i][: limit - 1]
        self.counts["sentences longer than max_chunk_tokens, cut"] += len(overlong)
        self.counts["chunks"] += len(spans)
        return [" ".join(f"{BOS} {' '.join(s)}" for s in bpe[a:b + 1]) for a, b in spans]

    def decode(self, outputs: List[str]) -> str:
        chunks, _ = postprocess_hypotheses(list(outputs), self.options["tgt_lang"],
                                           source="doc_chunks decode",
                                           tokenizer=self.options["tgt_tokenizer"])
        rows = [ChunkRow("document", k, k, k) for k in range(len(chunks))]
        ((_, text),) = reassemble(rows, chunks)
        return text
