"""Task ``paragraph_ranking``: train Liu & Lapata's paragraph ranker (paper 002 Sec. 3.1).

Raw data (format and rules in :mod:`fairseq_hier.data.ranking_dataset`), labels, options and
checks: docs/models.md, section fairseq_hier.tasks.paragraph_ranking. Imports ``models``,
``generation``, ``data``, ``modules``, ``io``, ``errors``; fairseq.
"""

import glob
import logging
import os
from dataclasses import dataclass, field
from typing import Optional

from fairseq import utils
from fairseq.data import Dictionary, data_utils
from fairseq.dataclass import FairseqDataclass
from fairseq.tasks import FairseqTask, register_task
from omegaconf import II

from ..data.ranking_dataset import ParagraphRankingDataset, read_labels
from ..data.shards import epoch_data_path
from ..errors import HierError
from ..models.option_checks import check_model_fits_task, check_model_options
from .checks import check_options, load_dictionary, separator_index
from .training_cuts import TrainingCuts

logger = logging.getLogger(__name__)


@dataclass
class ParagraphRankingConfig(FairseqDataclass):
    data: str = field(default="", metadata={"help": "data-bin directory written by "
                                                    "fairseq-preprocess --only-source (holds "
                                                    "dict.SRC.txt, and the labels unless "
                                                    "--labels-dir)"})
    source_lang: str = field(default="src", metadata={"help": "source suffix of the raw files"})
    labels_dir: Optional[str] = field(
        default=None, metadata={"help": "directory of the {split}.labels files written by "
                                        "fairseq-hier-rank labels (default: the data directory); "
                                        "with sharded data (DIR0:DIR1:...), as many directories, "
                                        "colon-separated, rotated alike"})
    # data-bin/shard0:data-bin/shard1: the training split rotates per epoch, the others are read
    # from the first folder (fairseq's translation task; fairseq_hier.data.shards.epoch_data_path)
    train_subset: str = II("dataset.train_subset")
    paragraph_separator: str = field(
        default="<P>", metadata={"help": "paragraph-boundary symbol: the title is what precedes "
                                         "the first one"})
    max_paragraphs: int = field(
        default=1000, metadata={"help": "train on the first N non-empty paragraphs of each "
                                        "example (and their labels); cut ones are counted in "
                                        "the log (WikiSum: ~525 per example)"})
    max_paragraph_tokens: int = field(
        default=100, metadata={"help": "cut each paragraph, and the title, to its first N tokens "
                                       "(fairseq-hier-rank apply scores with the same cut)"})


@register_task("paragraph_ranking", dataclass=ParagraphRankingConfig)
class ParagraphRankingTask(TrainingCuts, FairseqTask):
    """Paragraph relevance regression; see the module docstring for the data."""

    cfg: ParagraphRankingConfig
    #: the options that shape the data, taken from the checkpoint (training_cuts)
    checkpoint_options = ("paragraph_separator", "max_paragraphs", "max_paragraph_tokens")
    checkpoint_checked = ("source_lang",)
    #: numeric options checked when the task is set up: (lowest, strictly above it, highest)
    option_ranges = {"max_paragraphs": (1, False, None), "max_paragraph_tokens": (1, False, None)}

    def __init__(self, cfg: ParagraphRankingConfig, src_dict: Dictionary):
        super().__init__(cfg)
        self.src_dict = src_dict
        self.separator = separator_index(src_dict, cfg.paragraph_separator, cfg.data)

    def training_cuts_taken(self, names):
        """The separator follows the checkpoint's option."""
        if "paragraph_separator" in names:
            self.separator = separator_index(self.src_dict, self.cfg.paragraph_separator,
                                             self.cfg.data)

    @classmethod
    def setup_task(cls, cfg: ParagraphRankingConfig, **kwargs):
        check_options(cfg, cls.option_ranges)  # before reading anything
        paths = utils.split_paths(cfg.data)
        if not paths or not paths[0]:
            raise HierError("paragraph_ranking: pass the data-bin directory")
        path = os.path.join(paths[0], f"dict.{cfg.source_lang}.txt")
        if not os.path.exists(path):
            raise HierError(f"dictionary {path} not found (run fairseq-preprocess "
                            f"--only-source --source-lang {cfg.source_lang}, or point "
                            f"the task's data at the folder holding it)")
        src_dict = cls.load_dictionary(path)
        logger.info(f"[{cfg.source_lang}] dictionary: {len(src_dict)} types")
        task = cls(cfg, src_dict)
        task.remember_training_cuts(kwargs.get("from_checkpoint", False))
        return task

    @classmethod
    def load_dictionary(cls, filename):
        """fairseq's dictionary, with one-line errors naming the file and line
        (:func:`fairseq_hier.tasks.checks.load_dictionary`); fairseq-preprocess uses it too."""
        return load_dictionary(filename)

    def source_prefix(self, data_path: str, split: str) -> str:
        """``{split}.{src}-None.{src}`` (--only-source), else the one ``{split}.{src}-*.{src}``."""
        src = self.cfg.source_lang
        prefix = os.path.join(data_path, f"{split}.{src}-None.{src}")
        if os.path.exists(prefix + ".idx"):
            return prefix
        pattern = os.path.join(glob.escape(data_path), f"{split}.{src}-*.{src}.idx")
        found = sorted(glob.glob(pattern))
        if len(found) == 1:
            return found[0][: -len(".idx")]
        if found:
            raise HierError(f"split '{split}': several source files in {data_path}: "
                            f"{', '.join(os.path.basename(f) for f in found)}")
        raise HierError(f"split '{split}': {prefix}.{{bin,idx}} not found (fairseq-"
                        f"preprocess --only-source --source-lang {src} writes it)")

    def load_dataset(self, split, epoch=1, combine=False, task_cfg=None, **kwargs):
        """``split`` and its labels (with ``task_cfg``, a checkpoint's task config: the training
        cuts left at their defaults are its own)."""
        self.take_training_cuts(task_cfg)
        data_path = epoch_data_path(utils.split_paths(self.cfg.data), split, epoch,
                                    self.cfg.train_subset)
        prefix = self.source_prefix(data_path, split)
        src = data_utils.load_indexed_dataset(prefix, self.src_dict)
        if src is None:
            raise HierError(f"split '{split}': {prefix}.{{bin,idx}} cannot be read")
        labels = read_labels(os.path.join(self.labels_path(split, epoch), f"{split}.labels"))
        self.datasets[split] = ParagraphRankingDataset(
            src, labels, self.src_dict, self.separator, self.cfg.max_paragraphs,
            self.cfg.max_paragraph_tokens, src_path=prefix, split=split,
            shuffle=(split != "test"))

    def labels_path(self, split: str, epoch: int) -> str:
        """The folder of ``split``'s labels in ``epoch``: the data folder, or ``--labels-dir``'s
        (one per data-bin shard, rotated alike)."""
        data = utils.split_paths(self.cfg.data)
        if not self.cfg.labels_dir:
            return epoch_data_path(data, split, epoch, self.cfg.train_subset)
        labels = utils.split_paths(self.cfg.labels_dir)
        if len(labels) != len(data):
            raise HierError(f"--labels-dir has {len(labels)} folder(s) for the {len(data)} of the "
                            f"data ({self.cfg.labels_dir}): give one per data-bin shard, in the "
                            f"same order")
        return epoch_data_path(labels, split, epoch, self.cfg.train_subset)

    def build_dataset_for_inference(self, src_tokens, src_lengths, **kwargs):
        """A ranker scores paragraphs and writes no text: fairseq-interactive has nothing to
        print for it. Raw examples are ranked by ``fairseq-hier-rank apply --input-format
        jsonl``, and a summarizer whose record has ``rank=ranker`` ranks them itself."""
        raise HierError("paragraph_ranking scores paragraphs and generates no text: rank raw "
                        "examples with fairseq-hier-rank apply (or record rank=ranker for "
                        "fairseq-hier-summarize)")

    def build_model(self, cfg, from_checkpoint=False):
        check_model_fits_task(cfg, "paragraph_ranking", own_models_only=True)
        check_model_options(cfg)
        return super().build_model(cfg, from_checkpoint)

    def build_generator(self, models, args, *unused, **kwargs):
        """A ranker generates no text: refused before fairseq builds a sequence generator."""
        raise HierError("paragraph_ranking scores paragraphs and generates no text: score a "
                        "split with fairseq-hier-rank apply (fairseq-generate and fairseq-interactive "
                        "do not apply)")

    def max_positions(self):
        return None  # the model has no positional parameters; --max-tokens bounds a batch

    @property
    def source_dictionary(self):
        return self.src_dict

    @property
    def target_dictionary(self):
        return None
