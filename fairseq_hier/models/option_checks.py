"""Model options refused when a model is built, before any parameter is allocated.

fairseq accepts any integer for a layer count, a width or a head count, and any float for a
dropout; ``--encoder-attention-heads 0`` then fails deep inside ``MultiheadAttention`` with a
traceback, ``--segment-embeddings -3`` inside ``nn.Embedding``. :func:`check_model_options`
refuses them in one line naming the option and its range (:class:`fairseq_hier.errors.HierError`).
It reads whichever of the options below the model's config has (our models' dataclasses and
fairseq's Transformer / BART, which our tasks also build), so every task calls it in its
``build_model`` and our models call it in theirs.
"""

from typing import Dict, Optional

from ..errors import HierError, check_range

#: counts and widths: at least 1
POSITIVE = ("encoder_layers", "decoder_layers", "encoder_embed_dim", "decoder_embed_dim",
            "encoder_ffn_embed_dim", "decoder_ffn_embed_dim", "encoder_attention_heads",
            "decoder_attention_heads", "pooling_heads", "global_heads", "input_dim", "embed_dim",
            "hidden_size", "feature_dim", "max_source_positions", "max_target_positions")
#: indices and optional counts: at least 0
NON_NEGATIVE = ("segment_embeddings", "graph_head")
#: probabilities: in [0, 1]
PROBABILITIES = ("dropout", "attention_dropout", "activation_dropout", "relu_dropout",
                 "pooler_dropout", "encoder_layerdrop", "decoder_layerdrop")
#: (width, heads): the heads split the width evenly
DIVISIBLE = (("encoder_embed_dim", "encoder_attention_heads"),
             ("decoder_embed_dim", "decoder_attention_heads"),
             ("input_dim", "encoder_attention_heads"))


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_model_options(cfg, lowest: Optional[Dict[str, int]] = None) -> None:
    """Raise :class:`HierError` for the first option of the model config ``cfg`` (Namespace,
    DictConfig or dataclass) out of its range. ``lowest`` overrides the lowest allowed value
    of an option for one model (the attention predictor allows ``--encoder-layers 0``)."""
    lowest = lowest or {}

    def value(name):
        v = getattr(cfg, name, None)
        return None if isinstance(v, bool) else v

    for name in POSITIVE + NON_NEGATIVE:
        low = lowest.get(name, 1 if name in POSITIVE else 0)
        check_range(_flag(name), value(name), low)
    for name in PROBABILITIES:
        check_range(_flag(name), value(name), 0, 1)
    for width, heads in DIVISIBLE:
        w, h = value(width), value(heads)
        if w and h and w % h:
            raise HierError(f"{_flag(width)} {w} must be divisible by {_flag(heads)} {h} (each "
                            f"head reads {_flag(width)} / {_flag(heads)} dimensions)")


def check_model_fits_task(cfg, task: str, own_models_only: bool = False) -> None:
    """Refuse an architecture that does not read ``task``'s data, before the model is built (a
    HAT model on paragraph sources would otherwise fail at its first step, after fairseq wrote
    ``crash.pt``). Each of our model classes lists the tasks whose data it reads in ``TASKS``;
    fairseq's own models pass, unless ``own_models_only`` (a task only our models read)."""
    from fairseq.models import ARCH_MODEL_REGISTRY  # fairseq: imported when a model is built

    arch = getattr(cfg, "arch", None) or getattr(cfg, "_name", None)
    tasks = getattr(ARCH_MODEL_REGISTRY.get(arch), "TASKS", None)
    if (tasks is None and not own_models_only) or (tasks is not None and task in tasks):
        return
    fitting = sorted(name for name, cls in ARCH_MODEL_REGISTRY.items()
                     if task in getattr(cls, "TASKS", ()))
    what = (f"a model of --task {' or '.join(tasks)}" if tasks is not None
            else "fairseq's own model")
    raise HierError(f"--arch {arch} does not fit --task {task}: it is {what}; the architectures "
                    f"of --task {task}: {', '.join(fitting)}"
                    + ("" if own_models_only else " (and fairseq's own sequence-to-sequence "
                                                  "models)"))
