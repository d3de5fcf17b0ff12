"""Task ``attention_prediction``: train the attention-prediction model of 001 Sec. 4.2.1.

Data: a label directory written by ``fairseq-hier-extract-attention`` (format in
:mod:`fairseq_hier.data.attention_prediction_dataset`): per split, the paragraph embeddings Phi
of a trained PHT model and the gold paragraph-attention distribution eta. Typical use:

    fairseq-train LABELS --user-dir fairseq_hier --task attention_prediction \\
        --arch attention_predictor --criterion attention_mse --input-dim 256 --optimizer adam ...

The task needs no dictionary and does not read the directory when it is set up, so a trained
predictor loads with ``checkpoint_utils.load_model_ensemble([path])`` where the labels are absent.
"""

import logging
import os
from dataclasses import dataclass, field

from fairseq import utils
from fairseq.dataclass import FairseqDataclass
from fairseq.tasks import FairseqTask, register_task
from omegaconf import II

from ..data.attention_prediction_dataset import (META, AttentionPredictionDataset, load_split,
                                                 read_meta)
from ..data.shards import epoch_data_path
from ..errors import HierError
from ..models.option_checks import check_model_fits_task, check_model_options

logger = logging.getLogger(__name__)


@dataclass
class AttentionPredictionConfig(FairseqDataclass):
    data: str = field(default="", metadata={"help": "label directory written by "
                                                    "fairseq-hier-extract-attention (or several, "
                                                    "colon-separated: the training split "
                                                    "rotates through them per epoch)"})
    # DIR0:DIR1: the training split rotates per epoch, the others are read from the first folder
    # (fairseq's translation task; fairseq_hier.data.shards.epoch_data_path)
    train_subset: str = II("dataset.train_subset")


@register_task("attention_prediction", dataclass=AttentionPredictionConfig)
class AttentionPredictionTask(FairseqTask):
    """Regression of eta from Phi; see the module docstring for the data."""

    cfg: AttentionPredictionConfig

    @classmethod
    def setup_task(cls, cfg, **kwargs):
        # the label directory is only needed by load_dataset (checkpoints load without it)
        return cls(cfg)

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        if not self.cfg.data:
            raise HierError("attention_prediction: pass the label directory (the data argument)")
        path = epoch_data_path(utils.split_paths(self.cfg.data), split, epoch,
                               self.cfg.train_subset)
        phi, eta, embed_dim = load_split(path, split)
        self.datasets[split] = AttentionPredictionDataset(
            phi, eta, embed_dim, split=split, path=path, shuffle=(split != "test"))
        logger.info(f"[{split}] {len(eta)} examples, {int(self.datasets[split].sizes.sum())} "
                    f"paragraphs, embed_dim {embed_dim} ({path})")

    def build_model(self, cfg, from_checkpoint=False):
        check_model_fits_task(cfg, "attention_prediction", own_models_only=True)
        check_model_options(cfg, lowest={"encoder_layers": 0})
        self._check_embed_dim(cfg)
        return super().build_model(cfg, from_checkpoint)

    def _check_embed_dim(self, cfg):
        """The labels' embed_dim must be the model's --input-dim (when the labels are here)."""
        input_dim = getattr(cfg, "input_dim", None)
        if not self.cfg.data or input_dim is None:
            return
        for folder in utils.split_paths(self.cfg.data):
            if not os.path.exists(os.path.join(folder, META)):
                continue
            embed_dim = int(read_meta(folder)["embed_dim"])
            if embed_dim != int(input_dim):
                raise HierError(f"--input-dim {input_dim} does not match embed_dim {embed_dim} "
                                f"in {os.path.join(folder, META)} (the PHT model dimension)")

    def build_dataset_for_inference(self, src_tokens, src_lengths, **kwargs):
        """The attention predictor reads a trained PHT's paragraph embeddings, not text: it
        runs inside the attention-alignment generator (``--align-predictor``), where raw input
        reaches it through the summarization task."""
        raise HierError("attention_prediction reads PHT's paragraph embeddings, not text: use "
                        "it as --align-predictor of a hierarchical_summarization checkpoint "
                        "(fairseq-interactive or fairseq-hier-summarize with that task)")

    def build_generator(self, models, args, *unused, **kwargs):
        """The predictor generates no text: refused before fairseq builds a sequence generator."""
        raise HierError("attention_prediction predicts paragraph attention and generates no "
                        "text: use the checkpoint as --align-predictor of a "
                        "hierarchical_summarization model in fairseq-generate")

    def max_positions(self):
        return None  # any number of paragraphs (the model has no positional parameters)

    @property
    def source_dictionary(self):
        return None

    @property
    def target_dictionary(self):
        return None
