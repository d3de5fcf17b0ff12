"""Attention-prediction model of attention alignment (Chaudhary, paper 001 Sec. 4.2.1).

Predicts the optimal paragraph-attention distribution eta (Eq. 14-16) of a summary from the
paragraph embeddings Phi (Eq. 6) of a trained PHT model: a Transformer encoder over the
paragraphs ("context-aware paragraph embeddings"), a Linear(C -> 1) per paragraph, and a softmax
over the present paragraphs. Trained with MSE against eta (criterion ``attention_mse``).

No positional encoding is added: Phi already carries the ranking encoding (Eq. 6), and the papers'
fixed encodings are why the model accepts any number of paragraphs (001 Sec. 5.2).

Legend: B batch, P paragraphs, C paragraph-embedding dim (= the PHT model dimension).
Mask convention (fairseq): True = padding, i.e. an absent paragraph.
"""

import argparse
from dataclasses import dataclass, field

import torch.nn as nn
from fairseq import utils
from fairseq.dataclass import ChoiceEnum
from fairseq.models import BaseFairseqModel, register_model
from fairseq.models.transformer import TransformerConfig
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor

from ..modules.masking import masked_softmax
from .checkpointing import ActivationCheckpointConfig, checkpoint_layer, checkpoints_activations
from ..errors import HierError
from .option_checks import check_model_options


@dataclass
class AttentionPredictorConfig(ActivationCheckpointConfig):
    """Defaults are the paper's settings (001 Sec. 5.2: two layers, dropout 0.5; width of PHT);
    with ``--checkpoint-activations`` (inherited)."""

    input_dim: int = field(
        default=256, metadata={"help": "dimension C of the paragraph embeddings Phi; must equal "
                                       "the PHT model dimension (meta.json embed_dim of the "
                                       "labels)"})
    encoder_layers: int = field(default=2, metadata={"help": "Transformer encoder layers over "
                                                             "the paragraphs"})
    encoder_attention_heads: int = field(default=4, metadata={"help": "self-attention heads"})
    encoder_ffn_embed_dim: int = field(default=1024, metadata={"help": "FFN hidden size"})
    dropout: float = field(default=0.5, metadata={"help": "dropout on every sub-layer output"})
    attention_dropout: float = field(default=0.0, metadata={"help": "dropout on attention weights"})
    activation_dropout: float = field(default=0.0, metadata={"help": "dropout inside the FFN"})
    activation_fn: ChoiceEnum(utils.get_available_activation_fns()) = field(
        default="relu", metadata={"help": "FFN activation"})


def fairseq_encoder_config(cfg: AttentionPredictorConfig) -> TransformerConfig:
    """The fairseq TransformerConfig our encoder layers read (built safely from a namespace)."""
    ns = argparse.Namespace(
        encoder_embed_dim=cfg.input_dim,
        encoder_layers=cfg.encoder_layers,
        encoder_attention_heads=cfg.encoder_attention_heads,
        encoder_ffn_embed_dim=cfg.encoder_ffn_embed_dim,
        encoder_normalize_before=False,  # post-LN, as PHT
        dropout=cfg.dropout,
        attention_dropout=cfg.attention_dropout,
        activation_dropout=cfg.activation_dropout,
        activation_fn=str(cfg.activation_fn),
        checkpoint_activations=checkpoints_activations(cfg),
        offload_activations=bool(getattr(cfg, "offload_activations", False)),
    )
    return TransformerConfig.from_namespace(ns)


@register_model("attention_predictor", dataclass=AttentionPredictorConfig)
class AttentionPredictorModel(BaseFairseqModel):
    """Phi (``B x P x C``) -> predicted paragraph-attention distribution eta_hat (``B x P``)."""

    #: the tasks whose data this model reads (checked when a task builds it)
    TASKS = ("attention_prediction",)

    def __init__(self, cfg: AttentionPredictorConfig):
        super().__init__()
        self.input_dim = cfg.input_dim
        tcfg = fairseq_encoder_config(cfg)
        self.layers = nn.ModuleList([self.build_encoder_layer(tcfg)
                                     for _ in range(cfg.encoder_layers)])
        self.output_projection = nn.Linear(cfg.input_dim, 1)

    @classmethod
    def build_model(cls, cfg, task):
        check_model_options(cfg, lowest={"encoder_layers": 0})  # 0 layers: a linear predictor
        return cls(cfg)

    def build_encoder_layer(self, cfg: TransformerConfig) -> nn.Module:
        """fairseq's encoder layer (checkpointed with ``--checkpoint-activations``)."""
        return checkpoint_layer(TransformerEncoderLayerBase(cfg), cfg)

    def forward(self, paragraph_embeddings: Tensor, paragraph_padding_mask: Tensor) -> Tensor:
        """
        Args:
            paragraph_embeddings: ``B x P x C`` Phi (anything at absent paragraphs)
            paragraph_padding_mask: ``B x P`` bool, True = absent paragraph

        Returns:
            eta_hat: ``B x P``, exactly 0 at absent paragraphs, each row summing to 1 over the
            present ones (a row with no present paragraph is all 0)
        """
        if paragraph_embeddings.dim() != 3 or paragraph_embeddings.size(-1) != self.input_dim:
            raise HierError(f"attention predictor expects B x P x {self.input_dim} paragraph "
                            f"embeddings (--input-dim {self.input_dim}), got shape "
                            f"{tuple(paragraph_embeddings.shape)}")
        if paragraph_padding_mask.shape != paragraph_embeddings.shape[:2]:
            raise HierError(f"paragraph_padding_mask must be B x P = "
                            f"{tuple(paragraph_embeddings.shape[:2])}, got "
                            f"{tuple(paragraph_padding_mask.shape)}")
        mask = paragraph_padding_mask.bool()
        x = self._contextualise(paragraph_embeddings, mask)  # B x P x C
        logits = self.output_projection(x).squeeze(-1)  # B x P x 1 -> B x P
        return paragraph_distribution(logits, mask)

    def _contextualise(self, phi: Tensor, mask: Tensor) -> Tensor:
        """Context-aware paragraph embeddings: the Transformer encoder over the paragraphs.

        Phi follows the model's dtype: the labels store it as float16 and the collater serves
        float32, while ``--fp16`` / ``--bf16`` cast the model (fairseq-validate and
        fairseq-generate do not cast float inputs, unlike the Trainer)."""
        x = phi.to(self.output_projection.weight.dtype)
        x = x.transpose(0, 1)  # B x P x C -> P x B x C
        for layer in self.layers:
            x = layer(x, encoder_padding_mask=mask)
        return x.transpose(0, 1)  # P x B x C -> B x P x C

    def max_positions(self):
        return None  # no positional parameters: any number of paragraphs


def paragraph_distribution(logits: Tensor, mask: Tensor) -> Tensor:
    """Softmax over dim -1 of the unmasked entries (float32, finite masking: no NaN in half
    precision); exactly 0 at masked ones, so a row with no present paragraph is all 0
    (``B x P``, in the logits' dtype)."""
    return masked_softmax(logits, mask).masked_fill(mask, 0.0).type_as(logits)
