"""Task ``hierarchical_summarization``: summarise ranked paragraphs, on standard fairseq-preprocess output.

Raw data, the extra inputs (graphs, parses, alignment labels), options and checks: docs/models.md,
section fairseq_hier.tasks.hierarchical_summarization.
Imports ``models``, ``generation``, ``data``, ``modules``, ``io``, ``errors``; fairseq.
"""

import logging
import os
from dataclasses import dataclass, field
from typing import Optional

from fairseq import utils
from fairseq.data import data_utils
from fairseq.dataclass import ChoiceEnum, FairseqDataclass
from fairseq.tasks import FairseqTask, register_task
from omegaconf import II

from ..data.dependency_codes import DependencyParses
from ..data.hierarchical_dataset import HierarchicalSummarizationDataset
from ..data.paragraph_graph import InferenceGraphs, ParagraphGraphs
from ..data.preprocessing_record import keep_in_task_state
from ..data.shards import epoch_data_path
from ..errors import HierError
from ..generation.alignment import STRATEGIES
from ..generation.checks import check_generation_options
from ..generation.options import alignment_generator_kwargs
from ..generation.sequence_generator import AttentionAlignmentSequenceGenerator
from ..models.option_checks import check_model_fits_task, check_model_options
from .checks import (InputLines, check_lengths, check_options, filter_indices_by_size,
                     load_dictionary, separator_index)
from .training_cuts import TrainingCuts, set_option

logger = logging.getLogger(__name__)

SOURCE_LAYOUT_CHOICES = ChoiceEnum(["auto", "hierarchical", "flat"])
ALIGN_STRATEGY_CHOICES = ChoiceEnum(list(STRATEGIES))
LENGTH_PENALTY_CHOICES = ChoiceEnum(["fairseq", "wu"])
COVERAGE_PENALTY_CHOICES = ChoiceEnum(["none", "summary"])


@dataclass
class HierarchicalSummarizationConfig(FairseqDataclass):
    data: str = field(default="", metadata={"help": "data-bin directory written by fairseq-preprocess "
                                                    "(colon-separated list for sharded data)"})
    source_lang: str = field(default="src", metadata={"help": "source suffix of the raw files"})
    target_lang: str = field(default="tgt", metadata={"help": "target suffix of the raw files"})
    paragraph_separator: str = field(
        default="<P>", metadata={"help": "paragraph-boundary symbol between title and paragraphs"})
    max_paragraphs: int = field(
        default=30, metadata={"help": "keep the first (highest ranked) N non-empty paragraphs"})
    max_paragraph_tokens: int = field(
        default=100, metadata={"help": "cut each paragraph to its first N tokens (the title is "
                                       "concatenated before the first paragraph and counts)"})
    max_source_positions: int = field(
        default=1024, metadata={"help": "flat layout only: cut the concatenation to N tokens "
                                        "(EOS included)"})
    max_target_positions: int = field(
        default=1024, metadata={"help": "max number of tokens in the target summary"})
    source_layout: SOURCE_LAYOUT_CHOICES = field(
        default="auto", metadata={"help": "auto: hierarchical for hierarchical models (pht, vht, "
                                          "liu_ht, parsingsum_ht), flat for any other model"})
    paragraph_graph: Optional[str] = field(
        default=None, metadata={"help": "KIND: read the external paragraph graphs "
                                        "SPLIT.graph.KIND.* from the data-bin (written by "
                                        "fairseq-hier-graph: tfidf, adg) and give them to liu_ht's "
                                        "graph-informed attention (002 Eq. 24); checked against "
                                        "every split before training"})
    dependency_parse: Optional[str] = field(
        default=None, metadata={"help": "NAME: read the dependency parse SPLIT.parse.NAME.{bin,idx} "
                                        "from the data-bin (written by fairseq-hier-parse project) and give "
                                        "it to ParsingSum's linguistic-guided attention "
                                        "(parsingsum_ft, parsingsum_ht; 003 Eq. 4); checked "
                                        "against every split before training"})
    seed: int = II("common.seed")
    # data-bin/shard0:data-bin/shard1: the training split rotates per epoch, the others are read
    # from the first folder (fairseq's translation task; fairseq_hier.data.shards.epoch_data_path)
    train_subset: str = II("dataset.train_subset")

    # decoding (fairseq-generate); 001 Sec. 4-5, 000 Sec. 4.2
    attention_alignment: bool = field(
        default=False, metadata={"help": "rescore beam hypotheses by attention alignment (001 Eq. "
                                         "17-18); needs --align-predictor (attalign) or "
                                         "--align-ranker-scores (extprob)"})
    align_strategy: ALIGN_STRATEGY_CHOICES = field(
        default="attalign", metadata={"help": "attalign: eta_hat from the attention-prediction "
                                              "model; extprob: eta_hat = normalised ranker scores; "
                                              "strcov: structural coverage (001 Table 2)"})
    align_beta: float = field(
        default=0.8, metadata={"help": "beta of Eq. 17 (0.8 is the paper's WikiSum value; 0 gives "
                                       "vanilla beam search)"})
    align_predictor: Optional[str] = field(
        default=None, metadata={"help": "checkpoint of the attention-prediction model "
                                        "(fairseq-train --task attention_prediction)"})
    align_ranker_scores: Optional[str] = field(
        default=None, metadata={"help": "extprob: text file, one line per example of the decoded "
                                        "split, one non-negative score per paragraph"})
    align_epsilon: float = field(
        default=1e-6, metadata={"help": "floor of min(eta_p(y), eta_hat_p) before the log of "
                                        "Eq. 18, so zero-attention paragraphs stay finite"})
    align_live_beams: bool = field(
        default=False, metadata={"help": "also rank live beams at every step by the aligned score "
                                         "(default: only finished hypotheses, as in the paper)"})
    align_keep_paragraphs: int = field(
        default=0, metadata={"help": "keep only the S paragraphs with the highest predicted "
                                     "attention before decoding (001 Table 6); 0 = keep all"})
    block_previous_tokens: int = field(
        default=0, metadata={"help": "forbid repeating any of the previous N generated tokens "
                                     "(the papers use 2)"})
    block_previous_exceptions: str = field(
        default="\u2581,", metadata={"help": "space-separated symbols exempt from "
                                              "--block-previous-tokens (default: the "
                                              "sentencepiece comma '\u2581,', the one id the "
                                              "authors' code exempts)"})
    block_previous_count_exceptions: bool = field(
        default=False, metadata={"help": "block those of the previous N tokens that are not "
                                         "exceptions (an exception takes one of the N places); "
                                         "default: block the previous N tokens that are not "
                                         "exceptions, among the last 2N, as the authors' code "
                                         "does"})
    length_penalty_form: LENGTH_PENALTY_CHOICES = field(
        default="fairseq", metadata={"help": "what a finished hypothesis' log-probability is "
                                             "divided by: fairseq = |y| ** lenpen; wu = Wu et "
                                             "al.'s ((5 + |y|) / 6) ** lenpen (OpenNMT's "
                                             "-length_penalty wu -alpha; 003's FT: --lenpen 0.9); "
                                             "|y| counts the tokens with EOS"})
    coverage_penalty: COVERAGE_PENALTY_CHOICES = field(
        default="none", metadata={"help": "summary: OpenNMT's summary coverage penalty, "
                                          "stepwise (-coverage_penalty summary "
                                          "-stepwise_penalty): every hypothesis' running score "
                                          "is sum log p - beta * (sum_i max(cov_i, 1) - n), cov "
                                          "= the decoder's attention summed over the steps"})
    coverage_beta: float = field(
        default=5.0, metadata={"help": "beta of --coverage-penalty summary (003's FT: 5)"})
    coverage_count_eos: bool = field(
        default=False, metadata={"help": "our form: --coverage-penalty summary over every key "
                                         "of a flat source, its EOS (and padding) included; "
                                         "default: the source tokens only, as OpenNMT's "
                                         "sources have no EOS (the keys the copy distribution "
                                         "uses)"})
    stop_on_top_beam: bool = field(
        default=False, metadata={"help": "end a sentence's beam search at the first step whose "
                                         "best candidate is EOS (hiersumm's "
                                         "_fast_translate_batch); default: fairseq's, after "
                                         "--beam finished hypotheses"})


@register_task("hierarchical_summarization", dataclass=HierarchicalSummarizationConfig)
class HierarchicalSummarizationTask(TrainingCuts, FairseqTask):
    """Summarisation over ranked paragraphs; see the module docstring for the data format."""

    cfg: HierarchicalSummarizationConfig
    #: the options that shape the data, taken from the checkpoint when decoding (training_cuts)
    checkpoint_options = ("paragraph_separator", "max_paragraphs", "max_paragraph_tokens",
                          "max_source_positions", "max_target_positions", "source_layout",
                          "paragraph_graph", "dependency_parse")
    checkpoint_checked = ("source_lang", "target_lang")
    #: numeric options checked when the task is set up: (lowest, strictly above it, highest)
    option_ranges = {
        "max_paragraphs": (1, False, None),
        "max_paragraph_tokens": (1, False, None),
        "max_source_positions": (1, False, None),
        "max_target_positions": (1, False, None),
        "align_beta": (0, False, None),
        "align_epsilon": (0, True, None),
        "align_keep_paragraphs": (0, False, None),
        "block_previous_tokens": (0, False, None),
        "coverage_beta": (0, False, None),
    }

    def __init__(self, cfg, src_dict, tgt_dict):
        super().__init__(cfg)
        self.src_dict, self.tgt_dict = src_dict, tgt_dict
        self.separator = separator_index(src_dict, cfg.paragraph_separator, cfg.data)
        self.layout = None if cfg.source_layout == "auto" else str(cfg.source_layout)
        self.use_graphs = False  # set by build_model: the model reads --paragraph-graph
        self.use_parses = False  # set by build_model: the model reads --dependency-parse
        self.input_lines = InputLines()  # raw inference lines: numbering, <unk> counts

    def training_cuts_taken(self, names):
        """The separator and a layout chosen by name follow the checkpoint's options."""
        if "paragraph_separator" in names:
            self.separator = separator_index(self.src_dict, self.cfg.paragraph_separator,
                                             self.cfg.data)
        if "source_layout" in names and self.layout is None and self.cfg.source_layout != "auto":
            self.layout = str(self.cfg.source_layout)  # build_model checks it against the model

    @classmethod
    def setup_task(cls, cfg, **kwargs):
        check_options(cfg, cls.option_ranges)  # before reading anything
        paths = utils.split_paths(cfg.data)
        if not paths or not paths[0]:
            raise HierError("hierarchical_summarization: pass the data-bin directory")
        dicts = []
        for lang in (cfg.source_lang, cfg.target_lang):
            path = os.path.join(paths[0], f"dict.{lang}.txt")
            if not os.path.exists(path):
                raise HierError(f"dictionary {path} not found (run fairseq-preprocess with "
                                f"--source-lang {cfg.source_lang} --target-lang {cfg.target_lang})")
            dicts.append(cls.load_dictionary(path))
        src_dict, tgt_dict = dicts
        if (src_dict.pad(), src_dict.eos()) != (tgt_dict.pad(), tgt_dict.eos()):
            raise HierError("source and target dictionaries disagree on pad/eos indices")
        logger.info(f"[{cfg.source_lang}] dictionary: {len(src_dict)} types")
        logger.info(f"[{cfg.target_lang}] dictionary: {len(tgt_dict)} types")
        task = cls(cfg, src_dict, tgt_dict)
        keep_in_task_state(task, paths[0])  # the preprocessing record goes into checkpoints
        task.remember_training_cuts(kwargs.get("from_checkpoint", False))
        return task

    @classmethod
    def load_dictionary(cls, filename):
        """fairseq's dictionary, with one-line errors naming the file and line
        (:func:`fairseq_hier.tasks.checks.load_dictionary`); fairseq-preprocess uses it too."""
        return load_dictionary(filename)

    def load_dataset(self, split, epoch=1, combine=False, task_cfg=None, **kwargs):
        """``split`` of the data-bin, cut by the task's options (with ``task_cfg``, a decoded
        checkpoint's task config: the training cuts left at their defaults are its own)."""
        self.take_training_cuts(task_cfg)
        data_path = epoch_data_path(utils.split_paths(self.cfg.data), split, epoch,
                                    self.cfg.train_subset)
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        prefix = os.path.join(data_path, f"{split}.{src}-{tgt}.")
        datasets = {}
        for lang, d in ((src, self.src_dict), (tgt, self.tgt_dict)):
            datasets[lang] = data_utils.load_indexed_dataset(prefix + lang, d)
            if datasets[lang] is None:
                raise HierError(f"split '{split}': {prefix + lang}.{{bin,idx}} not found")
        self.datasets[split] = HierarchicalSummarizationDataset(
            datasets[src], datasets[tgt], self.src_dict, self.tgt_dict, self.separator,
            self.cfg.max_paragraphs, self.cfg.max_paragraph_tokens, self.cfg.max_source_positions,
            src_path=prefix + src, tgt_path=prefix + tgt, split=split,
            layout=self.layout or "hierarchical",
        )
        self.check_lengths(split, self.datasets[split])
        if self.cfg.paragraph_graph:
            graph_prefix = os.path.join(data_path, f"{split}.graph.{self.cfg.paragraph_graph}")
            self.datasets[split].attach_graphs(ParagraphGraphs(graph_prefix), prefix + src)
            self.datasets[split].use_graphs = self.use_graphs
        if self.cfg.dependency_parse:
            parse_prefix = os.path.join(data_path, f"{split}.parse.{self.cfg.dependency_parse}")
            self.datasets[split].attach_parses(DependencyParses(parse_prefix), prefix + src)
            self.datasets[split].use_parses = self.use_parses

    # ------------------------------------------------------------------ inference from text
    def get_interactive_tokens_and_lengths(self, lines, encode_fn):
        """fairseq-interactive's lines (``title <P> paragraph <P> ...``) -> token ids: its
        ``--tokenizer`` / ``--bpe`` (``encode_fn``) runs on each segment between separators, so
        they never touch (or split) a separator."""
        sep = self.cfg.paragraph_separator
        texts = [f" {sep} ".join(encode_fn(seg.strip()) if seg.strip() else ""
                                 for seg in line.split(sep)) for line in lines]
        tokens = self.input_lines.encode(self.src_dict, texts)  # numbers lines, logs <unk>s
        return tokens, [t.numel() for t in tokens]

    def build_dataset_for_inference(self, src_tokens, src_lengths, constraints=None,
                                    dependency_parses=None, **kwargs):
        """Sources without targets (fairseq-interactive, ``HierSummarizer``): split into
        paragraphs and cut exactly as a binarized split is; a line that a split would reject is
        an error naming the input line, numbered over the whole fairseq-interactive input (for
        direct calls: the position in ``src_tokens``). ``dependency_parses``: the
        :class:`~fairseq_hier.data.dependency_codes.DependencyParses` of these lines, for ParsingSum
        (``HierSummarizer`` parses raw documents as the recipe did)."""
        if constraints is not None:
            raise HierError("hierarchical_summarization: --constraints is not supported")
        if self.use_parses and dependency_parses is None:
            raise HierError("this model reads the dependency parse of its source (ParsingSum), "
                            "which fairseq-interactive cannot pass: summarise raw documents with "
                            "fairseq-hier-summarize, which parses them as the recipe did")
        import numpy as np
        from fairseq.data import ListDataset

        first = self.input_lines.take_first()
        src = ListDataset(list(src_tokens), np.asarray(src_lengths, dtype=np.int64))
        try:
            dataset = HierarchicalSummarizationDataset(
                src, None, self.src_dict, self.tgt_dict, self.separator, self.cfg.max_paragraphs,
                self.cfg.max_paragraph_tokens, self.cfg.max_source_positions, src_path="input",
                tgt_path=None, split="inference", layout=self.layout or "hierarchical",
                shuffle=False, first_line=first)
        except ValueError as e:  # the split's multi-line report, on one line
            raise HierError(" ".join(str(e).split())) from None
        if self.use_parses:
            dataset.attach_parses(dependency_parses, "input")
            dataset.use_parses = True
        if self.use_graphs:
            graphs = InferenceGraphs.of_tokens(self.cfg.paragraph_graph, src_tokens, self.src_dict,
                                               self.cfg.paragraph_separator)
            dataset.attach_graphs(graphs, "input")
            dataset.use_graphs = True
            graphs.remember(dataset)
            self._inference_graphs = graphs
        return dataset

    def inference_step(self, generator, models, sample, prefix_tokens=None, constraints=None):
        """fairseq-interactive passes only ``src_tokens`` and ``src_lengths``: the paragraph
        graphs of a graph-informed ``liu_ht`` are found again by the source rows."""
        net_input = sample["net_input"]
        if self.use_graphs and "paragraph_graph" not in net_input:
            graphs = self._inference_graphs.for_rows(net_input["src_tokens"], self.src_dict.pad())
            sample = dict(sample, net_input=dict(net_input, paragraph_graph=graphs))
        return super().inference_step(generator, models, sample, prefix_tokens, constraints)

    def build_model(self, cfg, from_checkpoint=False):
        check_model_fits_task(cfg, "hierarchical_summarization")
        check_model_options(cfg)
        if self.cfg.paragraph_graph:
            set_option(cfg, "graph_attention", True)  # recorded in the checkpoint
        model = super().build_model(cfg, from_checkpoint)
        self.set_layout_for(model)
        self.set_graphs_for(model)
        self.set_parses_for(model)
        return model

    def set_graphs_for(self, model):
        """Check that ``--paragraph-graph`` and the model agree, and let the datasets batch the
        graphs only for a model that reads them."""
        self.use_graphs = self._model_reads(
            model, "graph_attention", "paragraph_graph", "use_graphs",
            "paragraph graphs (liu_ht does)",
            "this model was trained with graph-informed attention (002 Eq. 24): pass "
            "--paragraph-graph KIND with the graphs of the data-bin")

    def set_parses_for(self, model):
        """Check that ``--dependency-parse`` and the model agree, and let the datasets batch the
        parse only for a model that reads it."""
        self.use_parses = self._model_reads(
            model, "reads_dependencies", "dependency_parse", "use_parses",
            "dependency parses (parsingsum_ft and parsingsum_ht do)",
            f"model {type(model).__name__} reads the source's dependency parse (ParsingSum, "
            f"003): pass --dependency-parse NAME (the data-bin's SPLIT.parse.NAME.{{bin,idx}}, "
            f"written by fairseq-hier-parse project)")

    def _model_reads(self, model, model_attr, option, dataset_attr, what, missing) -> bool:
        """Whether ``model`` reads an extra input (``model_attr``) that the task option
        ``option`` loads; both must agree. Sets ``dataset_attr`` of every dataset."""
        value = getattr(self.cfg, option)
        flag = "--" + option.replace("_", "-")
        uses = bool(getattr(model, model_attr, False))
        if value and not uses:
            raise HierError(f"{flag} {value}: model {type(model).__name__} does not read {what}")
        if uses and not value:
            raise HierError(missing)
        for ds in self.datasets.values():
            setattr(ds, dataset_attr, uses)
        return uses

    def set_layout_for(self, model):
        """Choose the source layout from the model (``--source-layout auto``)."""
        wanted = "hierarchical" if getattr(model, "hierarchical_source", False) else "flat"
        if self.layout is not None and self.layout != wanted:
            raise HierError(f"--source-layout {self.layout} does not fit model "
                            f"{type(model).__name__}, which reads {wanted} sources")
        self.layout = wanted
        for split, ds in self.datasets.items():
            ds.layout = wanted
            self.check_lengths(split, ds, targets=False)  # targets: checked when loaded
        logger.info(f"source layout: {wanted}")

    def check_lengths(self, split: str, dataset, targets: bool = True) -> None:
        """``split`` against ``--max-target-positions`` (with ``targets``) and, once the layout
        is known, its sources against ``--max-source-positions`` (:func:`~fairseq_hier.tasks.
        checks.check_lengths`: an error when every example is too long, else a logged count).
        Flat sources are cut to the option and always fit; a hierarchical source's size is its
        longest kept paragraph."""
        if targets and dataset.tgt is not None:
            check_lengths(split, dataset.tgt_sizes, self.cfg.max_target_positions,
                          "--max-target-positions", "a target with its EOS", dataset.tgt_path)
        if self.layout == "hierarchical":
            check_lengths(split, dataset.src_sizes, self.cfg.max_source_positions,
                          "--max-source-positions",
                          f"a paragraph, after the cut to --max-paragraph-tokens "
                          f"{self.cfg.max_paragraph_tokens}", dataset.src_path)

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, **kwargs):
        """fairseq's generator, or ours when any alignment / blocking / length-penalty form /
        coverage option is set; decoding options out of range are refused first, before any
        batch."""
        check_generation_options(args, models)

        ours = alignment_generator_kwargs(self, models, args)
        if ours is None:
            return super().build_generator(models, args, seq_gen_cls, extra_gen_cls_kwargs, **kwargs)

        extra = dict(extra_gen_cls_kwargs or {}, **ours)
        return super().build_generator(models, args, AttentionAlignmentSequenceGenerator, extra,
                                       **kwargs)

    def max_positions(self):
        return (self.cfg.max_source_positions, self.cfg.max_target_positions)

    def filter_indices_by_size(self, indices, dataset, max_positions=None,
                               ignore_invalid_inputs=False):
        """fairseq's, with one-line errors naming the split (or input line) and the example
        (:func:`fairseq_hier.tasks.checks.filter_indices_by_size`)."""
        return filter_indices_by_size(self, indices, dataset, max_positions, ignore_invalid_inputs)

    @property
    def source_dictionary(self):
        return self.src_dict

    @property
    def target_dictionary(self):
        return self.tgt_dict

