"""Pipeline ``doc_chunks`` (task ``document_translation``, paper 004 Sec. 4.2): a raw source
document -> the source chunk lines ``fairseq-hier-doc tokenize`` + ``fairseq-hier-doc chunk``
write for it, and the chunk translations -> the document as ``fairseq-hier-doc-bleu`` puts it
together.

The record's options, ``encode`` and ``decode``: docs/inference.md, section
fairseq_hier.inference.doc_mt_pipeline.
Imports ``preparation.doc_chunk``, ``data``, ``text.tokenizers``, ``scoring.bleu``, ``inference``,
``errors``.
"""

import logging
from typing import Callable, List

from ..data.bpe_codes import apply_bpe
from ..data.chunk_map import ChunkRow, reassemble
from ..preparation.doc_chunk import BOS, SPECIAL_SYMBOLS, chunk_spans
from ..scoring.bleu import postprocess_hypotheses
from ..text.tokenizers import TOKENIZERS, choose_tokenizer, tokenizer
from .pipeline_base import (InputError, Pipeline, RawExample, RecordError, choice,
                            register_pipeline)

logger = logging.getLogger(__name__)


@register_pipeline
class DocChunksPipeline(Pipeline):
    """A raw document -> its source chunk lines; the chunks' translations -> the document."""

    name = "doc_chunks"
    TASKS = ("document_translation",)
    OPTIONS = {
        "src_lang": ("en", "source language (fairseq-hier-doc tokenize --src-lang)"),
        "tgt_lang": ("de", "target language (detokenisation of the translations)"),
        "src_tokenizer": ("auto", "fairseq-hier-doc tokenize --src-tokenizer: auto, moses, "
                                  "jieba or none"),
        "tgt_tokenizer": ("auto", "fairseq-hier-doc tokenize --tgt-tokenizer (its inverse "
                                  "detokenises the translations)"),
        "max_chunk_tokens": (512, "fairseq-hier-doc chunk --max-chunk-tokens: most source "
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
        for i in overlong:  # fairseq-hier-doc chunk's cut: the source keeps its BOS
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
