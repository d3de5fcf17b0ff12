"""Task ``document_translation``: document-level translation in chunks of whole sentences with a
BOS marker at every source sentence (HAT, paper 004 Sec. 4.2), on ``fairseq-preprocess
--joined-dictionary`` output of ``fairseq-hier-doc chunk``.

Data layout, options and checks: docs/models.md, section fairseq_hier.tasks.document_translation.
Imports ``models``, ``generation``, ``data``, ``modules``, ``io``, ``errors``; fairseq.
"""

import logging
import os
from dataclasses import dataclass, field

import numpy as np
from fairseq.tasks import register_task

from ..data.chunk_map import documents_of, read_chunk_map
from ..data.sentence_dataset import check_sentences
from ..errors import HierError
from ..generation.checks import check_generation_options
from .hat_summarization import HATSummarizationConfig, HATSummarizationTask

logger = logging.getLogger(__name__)


@dataclass
class DocumentTranslationConfig(HATSummarizationConfig):
    max_chunk_tokens: int = field(
        default=512, metadata={"help": "most tokens of a chunk on either side, EOS not counted "
                                       "(the source's BOS markers are): the limit "
                                       "fairseq-hier-doc chunk cut the documents to (004: 512); "
                                       "every split is checked against it before training"})


@register_task("document_translation", dataclass=DocumentTranslationConfig)
class DocumentTranslationTask(HATSummarizationTask):
    """fairseq's translation task over document chunks, checked against their chunk map."""

    cfg: DocumentTranslationConfig
    task_name = "document_translation"
    cut_by = "fairseq-hier-doc chunk --max-chunk-tokens"
    option_ranges = dict(HATSummarizationTask.option_ranges, max_chunk_tokens=(1, False, None))
    checkpoint_options = ("max_chunk_tokens", "max_source_positions", "max_target_positions")

    def __init__(self, cfg, src_dict, tgt_dict):
        super().__init__(cfg, src_dict, tgt_dict)
        self.check_chunk_room()

    def check_chunk_room(self) -> None:
        """``--max-source-positions`` / ``--max-target-positions`` hold a chunk and its EOS."""
        cfg = self.cfg
        need = cfg.max_chunk_tokens + 1
        for name, value in (("--max-source-positions", cfg.max_source_positions),
                            ("--max-target-positions", cfg.max_target_positions)):
            if value < need:
                raise HierError(f"document_translation: {name} {value} cannot hold a chunk of "
                                f"--max-chunk-tokens {cfg.max_chunk_tokens} and its EOS")

    def training_cuts_taken(self, names):
        """The limits taken from the checkpoint still hold a chunk."""
        self.check_chunk_room()

    def sentence_counts(self, data_path: str, split: str, examples: int):
        path = os.path.join(data_path, f"{split}.chunks")
        rows = read_chunk_map(path, examples)
        logger.info(f"{path}: {len(rows)} chunks of {len(documents_of(rows))} documents")
        return np.asarray([r.last - r.first + 1 for r in rows], np.int64), path

    def check_split(self, dataset, src_path: str, counts, counts_path: str) -> None:
        limit = self.cfg.max_chunk_tokens + 1
        check_sentences(dataset.src, self.src_dict.bos(), counts, limit, src_path, counts_path,
                        limit_name="(--max-chunk-tokens + EOS)", cut_by=self.cut_by)
        if dataset.tgt is not None:
            sizes = np.asarray(dataset.tgt_sizes, np.int64)
            bad = np.flatnonzero(sizes > limit)
            if len(bad):
                tgt_path = src_path[: -len(self.cfg.source_lang)] + self.cfg.target_lang
                shown = "; ".join(f"example {i + 1}: {sizes[i]} tokens" for i in bad[:3])
                raise HierError(f"{tgt_path}: {len(bad)} target(s) longer than "
                                f"(--max-chunk-tokens + EOS) {limit}: {shown}; chunk the "
                                f"documents with {self.cut_by} {self.cfg.max_chunk_tokens}")

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, **kwargs):
        """fairseq's generator; warns when the length limit may stop a chunk's translation
        before its EOS (004 generates "until we encounter an EOS token"; fairseq-generate's
        defaults, --max-len-a 0 --max-len-b 200, would cut long chunks: fairseq#4470).
        Decoding options out of range are refused first."""
        check_generation_options(args, models)
        cap = getattr(args, "max_len_a", 0) * self.cfg.max_chunk_tokens + getattr(
            args, "max_len_b", 200)
        if cap < 1.5 * self.cfg.max_chunk_tokens:  # a translation may run longer than its source
            logger.warning(f"--max-len-a {getattr(args, 'max_len_a', 0)} --max-len-b "
                           f"{getattr(args, 'max_len_b', 200)} allow {cap:g} tokens for a chunk of "
                           f"up to {self.cfg.max_chunk_tokens} source tokens: long chunks may be "
                           f"cut before EOS (the recipes use --max-len-a 0 --max-len-b 1023)")
        return super().build_generator(models, args, seq_gen_cls, extra_gen_cls_kwargs, **kwargs)

    def encode_sentence(self, i: int, sentence: str, encode_fn) -> str:
        """Each sentence is tokenised on its own (fairseq-hier-doc tokenize): no leading space."""
        return encode_fn(sentence)

    def inference_limit(self):
        return self.cfg.max_chunk_tokens + 1, "(--max-chunk-tokens + EOS)"
