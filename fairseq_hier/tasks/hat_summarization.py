"""Task ``hat_summarization``: summarisation with a BOS symbol at every source sentence (HAT,
paper 004 Sec. 3.1 and 4.1), on standard ``fairseq-preprocess`` output with BART's dictionary.

Data layout, sidecar files, options and checks: docs/models.md, section
fairseq_hier.tasks.hat_summarization. Imports ``models``, ``generation``, ``data``, ``modules``,
``io``, ``errors``; fairseq.
"""

import logging
import os
import re
from dataclasses import dataclass, field
from typing import Optional

from fairseq import utils
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask

from ..data.preprocessing_record import keep_in_task_state
from ..data.shards import epoch_data_path
from ..data.sentence_dataset import (SentenceSegmentsDataset, check_sentences, max_segment,
                                     read_segments, read_sentence_counts)
from ..errors import HierError
from ..generation.checks import check_generation_options
from ..generation.sentence_attention import SentenceAttentionSequenceGenerator
from ..models.option_checks import check_model_fits_task, check_model_options
from .checks import (InputLines, check_bpe, check_lengths, check_options,
                     filter_indices_by_size, load_dictionary)
from .training_cuts import TrainingCuts

logger = logging.getLogger(__name__)


@dataclass
class HATSummarizationConfig(TranslationConfig):
    print_sentence_attention: bool = field(
        default=False, metadata={"help": "fairseq-generate prints the decoder's sentence "
                                         "attention (averaged over heads) as A- lines: per target "
                                         "token, comma-separated weights over the source sentences "
                                         "(HAT models; draw with fairseq-hier-analyse heatmap)"})
    sentence_attention_layer: int = field(
        default=-1, metadata={"help": "decoder layer whose sentence attention is printed "
                                      "(-1: the last; 004 Figs. 2-3 show every layer)"})


def empty_sentence(tokens, bos: int, eos: int) -> int:
    """The 1-based number of the first sentence of ``tokens`` (1-D, ending in EOS) whose BOS is
    followed at once by another BOS or by the EOS; 0 when every sentence holds a token."""
    starts = (tokens[:-1] == bos).nonzero().flatten()  # sentence starts, before the EOS
    following = tokens[starts + 1]
    empty = ((following == bos) | (following == eos)).nonzero().flatten()
    return int(empty[0]) + 1 if len(empty) else 0


@register_task("hat_summarization", dataclass=HATSummarizationConfig)
class HATSummarizationTask(TrainingCuts, TranslationTask):
    """fairseq's translation task with HAT's sentence checks and speaker segments."""

    cfg: HATSummarizationConfig
    task_name = "hat_summarization"
    #: the options that shape the data, taken from the checkpoint when decoding (training_cuts)
    checkpoint_options = ("max_source_positions", "max_target_positions")
    checkpoint_checked = ("source_lang", "target_lang")
    cut_by = "fairseq-hier-sentence-bos --max-source-positions"  # for messages
    #: numeric options checked when the task is set up: (lowest, strictly above it, highest)
    option_ranges = {
        "max_source_positions": (1, False, None),
        "max_target_positions": (1, False, None),
        "num_batch_buckets": (0, False, None),
        "required_seq_len_multiple": (1, False, None),
        "sentence_attention_layer": (-1, False, None),
    }

    def __init__(self, cfg, src_dict, tgt_dict):
        super().__init__(cfg, src_dict, tgt_dict)
        if cfg.truncate_source:
            raise HierError(f"{self.task_name}: --truncate-source would cut sentences and "
                            f"their BOS; cut sources at sentence boundaries with {self.cut_by} "
                            f"instead")
        self.model_segments: Optional[int] = None  # segment embeddings of the built model
        self.input_lines = InputLines()  # raw inference lines: numbering, <unk> counts

    @classmethod
    def setup_task(cls, cfg, **kwargs):
        check_options(cfg, cls.option_ranges)  # before reading anything
        upsample = getattr(cfg, "upsample_primary", None)
        if upsample is not None and upsample != -1 and upsample < 1:
            raise HierError(f"--upsample-primary must be >= 1 (or -1: off), got {upsample}")
        task = super().setup_task(cfg, **kwargs)
        keep_in_task_state(task, utils.split_paths(cfg.data)[0])  # the record goes into checkpoints
        task.remember_training_cuts(kwargs.get("from_checkpoint", False))
        return task

    @classmethod
    def load_dictionary(cls, filename):
        """fairseq's dictionary, with one-line errors naming the file and line
        (:func:`fairseq_hier.tasks.checks.load_dictionary`); fairseq-preprocess uses it too."""
        return load_dictionary(filename)

    def filter_indices_by_size(self, indices, dataset, max_positions=None,
                               ignore_invalid_inputs=False):
        """fairseq's, with one-line errors naming the split (or input line) and the example
        (:func:`fairseq_hier.tasks.checks.filter_indices_by_size`)."""
        return filter_indices_by_size(self, indices, dataset, max_positions, ignore_invalid_inputs)

    def build_bpe(self, args):
        """fairseq's ``--bpe``, its files checked first (a garbage ``encoder.json`` is one line
        naming it, not a JSON traceback)."""
        check_bpe(args)
        return super().build_bpe(args)

    def load_dataset(self, split, epoch=1, combine=False, task_cfg=None, **kwargs):
        """fairseq's split, checked (with ``task_cfg``, a decoded checkpoint's task config: the
        training cuts left at their defaults are its own)."""
        self.take_training_cuts(task_cfg)
        super().load_dataset(split, epoch, combine, **kwargs)
        dataset = self.datasets[split]
        # the folder fairseq read the split from: sentence counts, segments, chunk maps beside it
        data_path = epoch_data_path(utils.split_paths(self.cfg.data), split, epoch,
                                    self.cfg.train_subset)
        src_path = os.path.join(data_path, f"{split}.{self.cfg.source_lang}-"
                                           f"{self.cfg.target_lang}.{self.cfg.source_lang}")
        counts, counts_path = self.sentence_counts(data_path, split, len(dataset.src))
        self.check_split(dataset, src_path, counts, counts_path)
        if dataset.tgt is not None:
            check_lengths(split, dataset.tgt_sizes, self.cfg.max_target_positions,
                          "--max-target-positions", "a target with its EOS",
                          src_path[: -len(self.cfg.source_lang)] + self.cfg.target_lang)
        segments_path = os.path.join(data_path, f"{split}.segments")
        if self.model_segments:
            segments = read_segments(segments_path, counts)
            largest = max_segment(segments)
            if largest >= self.model_segments:
                raise HierError(f"{segments_path} has speaker index {largest}, but the model has "
                                f"{self.model_segments} segment embeddings "
                                f"(--segment-embeddings {largest + 1} or more is needed)")
            self.datasets[split] = SentenceSegmentsDataset(dataset, segments)
        elif os.path.exists(segments_path):
            logger.info(f"{segments_path} is not used: the model has no segment embeddings "
                        f"(--segment-embeddings 0)")

    def sentence_counts(self, data_path: str, split: str, examples: int):
        """The number of sentences of every source, and the file that says so."""
        path = os.path.join(data_path, f"{split}.sentences")
        return read_sentence_counts(path, examples), path

    def check_split(self, dataset, src_path: str, counts, counts_path: str) -> None:
        """Up-front checks of a loaded split (``dataset``: fairseq's ``LanguagePairDataset``)."""
        check_sentences(dataset.src, self.src_dict.bos(), counts, self.cfg.max_source_positions,
                        src_path, counts_path)

    def build_model(self, cfg, from_checkpoint=False):
        check_model_fits_task(cfg, self.task_name)
        check_model_options(cfg)
        model = super().build_model(cfg, from_checkpoint)
        embed = getattr(model.encoder, "embed_segments", None)
        self.model_segments = embed.num_embeddings if embed is not None else 0
        for split, dataset in list(self.datasets.items()):  # splits loaded before the model
            if self.model_segments and not isinstance(dataset, SentenceSegmentsDataset):
                self.load_dataset(split)
        return model

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, **kwargs):
        """fairseq's generator, or ours that records the sentence attention (A- lines);
        decoding options out of range are refused first, before any batch."""
        check_generation_options(args, models)
        if not self.cfg.print_sentence_attention:
            return super().build_generator(models, args, seq_gen_cls, extra_gen_cls_kwargs,
                                           **kwargs)

        if getattr(args, "print_alignment", None) not in (None, "soft"):
            raise HierError("--print-sentence-attention prints the sentence attention as soft "
                            "A- lines: drop --print-alignment hard")
        if getattr(args, "replace_unk", None):
            raise HierError("--replace-unk reads the A- alignment as token alignment; it does "
                            "not go with --print-sentence-attention")
        extra = dict(extra_gen_cls_kwargs or {},
                     sentence_attention_layer=self.cfg.sentence_attention_layer)
        generator = super().build_generator(models, args, SentenceAttentionSequenceGenerator,
                                            extra, **kwargs)
        args.print_alignment = "soft"  # fairseq-generate prints hypo["alignment"] as A- lines
        return generator

    # ------------------------------------------------------------------ inference from raw lines
    def get_interactive_tokens_and_lengths(self, lines, encode_fn):
        """fairseq-interactive's lines -> source tokens; ``encode_fn`` (its ``--tokenizer`` /
        ``--bpe``) is applied to each sentence between literal BOS markers (without them it is
        the identity and lines in the binarized format pass unchanged)."""
        texts = [self.encode_marked_line(line, encode_fn) for line in lines]
        tokens = self.input_lines.encode(self.source_dictionary, texts)  # numbers, logs <unk>s
        return tokens, [t.numel() for t in tokens]

    def encode_marked_line(self, line: str, encode_fn) -> str:
        """``<s> First sentence. <s> Second one.`` -> ``<s> ENC(First sentence.) <s> ENC(...)``;
        text before the first marker is encoded as it is (and refused by the checks)."""
        bos = self.source_dictionary.bos_word
        head, *sentences = re.split(rf"(?<!\S){re.escape(bos)}(?!\S)", line)
        out = [encode_fn(head.strip())] if head.strip() else []
        for i, sentence in enumerate(s.strip() for s in sentences):
            out.append(f"{bos} {self.encode_sentence(i, sentence, encode_fn)}"
                       if sentence else bos)
        return " ".join(out)

    def encode_sentence(self, i: int, sentence: str, encode_fn) -> str:
        """Sentence ``i`` of a line through ``encode_fn``: with its leading space from the
        second on, as fairseq-hier-sentence-bos encodes it (GPT-2 BPE sees the space)."""
        return encode_fn(sentence if i == 0 else " " + sentence)

    def inference_limit(self):
        """(most source tokens with EOS, the option that sets it) for raw inference lines."""
        return self.cfg.max_source_positions, "--max-source-positions"

    def build_dataset_for_inference(self, src_tokens, src_lengths, constraints=None):
        """fairseq's ``LanguagePairDataset`` (as the translation task), after the checks of the
        training data on every line: it opens with BOS and fits the length limit. ValueError
        naming the first bad input line (1-based, counted over the whole fairseq-interactive
        input; for direct calls, the position in ``src_tokens``)."""
        first = self.input_lines.take_first()
        if self.model_segments:
            k = self.model_segments
            raise HierError(f"{self.task_name}: the model has {k} speaker segment embeddings "
                            f"(--segment-embeddings {k}), but raw input lines carry no speaker "
                            f"per sentence (fairseq-interactive passes src_tokens and "
                            f"src_lengths only): decode with fairseq-generate on a binarized "
                            f"split and its .segments file")
        self.check_inference_sources(src_tokens, first)
        dataset = super().build_dataset_for_inference(src_tokens, src_lengths, constraints)
        dataset.first_line = first  # input line of example 0, for filter_indices_by_size
        return dataset

    def check_inference_sources(self, src_tokens, first: int = 1) -> None:
        """Every source (1-D tensor with its EOS; ``src_tokens[0]`` is input line ``first``) is
        non-empty, opens with BOS, has no empty sentence and fits :meth:`inference_limit`; else
        one ValueError line naming the first bad line and how many more there are."""
        bos, bos_word = self.source_dictionary.bos(), self.source_dictionary.bos_word
        eos = self.source_dictionary.eos()
        limit, limit_name = self.inference_limit()
        problems = []
        for i, tokens in enumerate(src_tokens):
            n = int(tokens.numel())
            if n <= 1:
                why = "the source is empty"
            elif int(tokens[0]) != bos:
                why = (f"the source does not start with the BOS symbol {bos_word} (every "
                       f"sentence must open with {bos_word}, as {self.cut_by.split()[0]} writes)")
            elif (empty := empty_sentence(tokens, bos, eos)):
                why = (f"sentence {empty} is empty ({bos_word} with "
                       f"nothing before the next {bos_word} or the end of the line)")
            elif n > limit:
                why = (f"{n} tokens (EOS included) > {limit_name} {limit} (cut the document at "
                       f"sentence boundaries: {self.cut_by})")
            else:
                continue
            problems.append(f"input line {first + i}: {why}")
        if problems:
            more = f" (and {len(problems) - 1} more bad line(s))" if len(problems) > 1 else ""
            raise HierError(problems[0] + more)
