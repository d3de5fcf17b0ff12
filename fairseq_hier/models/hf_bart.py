"""Hugging Face BART directories read as fairseq BART checkpoints.

:func:`read_checkpoint` turns ``config.json`` and ``model.safetensors`` / ``pytorch_model.bin``
into a fairseq checkpoint in the layout of the ``bart.large`` release; :func:`check_config` and
:func:`fairseq_state_dict` check the options and every key. The checks and the key mapping:
docs/models.md, section fairseq_hier.models.hf_bart. Imports ``data.bart_files``, ``errors``; torch
(safetensors inside functions).
"""

import json
import logging
import os
from typing import Dict, List, Tuple

import torch
from torch import Tensor

from ..data.bart_files import read_json_object
from ..errors import HierError

logger = logging.getLogger(__name__)

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")  # Hugging Face reads them in this order
POSITION_OFFSET = 2  # learned positions start at padding_idx + 1, in both libraries
FAIRSEQ_VERSION = 3.0  # fairseq's TransformerEncoder/Decoder ``version`` buffer
ENCODER_LAYER = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj",
                 "self_attn_layer_norm", "fc1", "fc2", "final_layer_norm")
DECODER_LAYER = ENCODER_LAYER + ("encoder_attn.q_proj", "encoder_attn.k_proj",
                                 "encoder_attn.v_proj", "encoder_attn.out_proj",
                                 "encoder_attn_layer_norm")
EMBEDDINGS = ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
              "lm_head.weight")  # one tied table in BART
# config.json's activation_function -> fairseq's --activation-fn (gelu_new: tanh approximation)
ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_accurate", "relu": "relu", "tanh": "tanh",
               "linear": "linear"}
REQUIRED = object()  # a config.json field without a default


def is_hf_bart_dir(folder: str) -> bool:
    """True for a directory with a ``config.json`` (the mark of Hugging Face's layout)."""
    return os.path.isdir(folder) and os.path.isfile(os.path.join(folder, "config.json"))


def read_config(path: str) -> dict:
    """``config.json`` as a dict; one-line errors."""
    return read_json_object(path)


# config.json fields fairseq's BART fixes: field -> (required value, why)
REQUIREMENTS = {
    "model_type": ("bart", "fairseq's BART"),
    "add_final_layer_norm": (False, "post-norm layers, no final LayerNorm"),
    "static_position_embeddings": (False, "learned positions"),
    "extra_pos_embeddings": (POSITION_OFFSET, "positions start at padding_idx + 1"),
    "bos_token_id": (0, "fairseq's dictionary: <s> 0"),
    "pad_token_id": (1, "fairseq's dictionary: <pad> 1"),
    "eos_token_id": (2, "fairseq's dictionary: </s> 2"),
}


def _options(args) -> List[Tuple[str, object, object, str, object]]:
    """``(field, default when absent, the value the model needs, its option, the option's
    value)``: the fields that the model's options set."""
    get = lambda name, default=None: getattr(args, name, default)  # noqa: E731
    no_scale = bool(get("no_scale_embedding", False))
    rows = [("d_model", REQUIRED, get(f"{stack}_embed_dim"), f"--{stack}-embed-dim")
            for stack in ("encoder", "decoder")]
    for stack in ("encoder", "decoder"):
        rows += [(f"{stack}_layers", REQUIRED, get(f"{stack}_layers"), f"--{stack}-layers"),
                 (f"{stack}_attention_heads", REQUIRED, get(f"{stack}_attention_heads"),
                  f"--{stack}-attention-heads"),
                 (f"{stack}_ffn_dim", REQUIRED, get(f"{stack}_ffn_embed_dim"),
                  f"--{stack}-ffn-embed-dim")]
    rows = [(field, default, value, option, value) for field, default, value, option in rows]
    rows += [
        ("scale_embedding", False, not no_scale, "--no-scale-embedding", no_scale),
        ("normalize_before", False, bool(get("encoder_normalize_before", False)),
         "--encoder-normalize-before", bool(get("encoder_normalize_before", False))),
        ("normalize_before", False, bool(get("decoder_normalize_before", False)),
         "--decoder-normalize-before", bool(get("decoder_normalize_before", False))),
        ("normalize_embedding", True, bool(get("layernorm_embedding", False)),
         "--layernorm-embedding", bool(get("layernorm_embedding", False))),
    ]
    return rows


def _show(value) -> str:
    return json.dumps(value) if isinstance(value, (bool, type(None))) else repr(value)


def check_config(config: dict, args, num_embeddings: int, path: str) -> None:
    """Raises ValueError (one line naming every disagreeing field, its value and the model's)
    unless ``config.json`` describes the model that ``args`` (fairseq's model options, after the
    architecture function) builds over a dictionary of ``num_embeddings`` symbols."""
    problems = []
    for field, (needed, why) in REQUIREMENTS.items():
        if config.get(field, needed) != needed:
            problems.append(f"{field} is {_show(config[field])}, fairseq's BART needs "
                            f"{_show(needed)} ({why})")
    for field, default, needed, option, option_value in _options(args):
        value = config.get(field, default)
        if value is REQUIRED:
            problems.append(f"{field} is missing")
        elif value != needed:
            problems.append(f"{field} is {_show(value)}, the model's {option} is "
                            f"{_show(option_value)}")
    activation = config.get("activation_function", "gelu")
    if ACTIVATIONS.get(activation) != getattr(args, "activation_fn", "relu"):
        problems.append(f"activation_function is {activation!r} (fairseq's "
                        f"{ACTIVATIONS.get(activation, 'none')!r}), the model's --activation-fn is "
                        f"{getattr(args, 'activation_fn', 'relu')!r}")
    positions = config.get("max_position_embeddings")
    if positions is None:
        problems.append("max_position_embeddings is missing")
    else:
        for option in ("max_source_positions", "max_target_positions"):
            if positions > getattr(args, option):
                problems.append(f"max_position_embeddings is {positions}, more than the model's "
                                f"--{option.replace('_', '-')} {getattr(args, option)} (position "
                                f"tables are extended, never cut)")
    vocab_size = config.get("vocab_size")
    if vocab_size is None:
        problems.append("vocab_size is missing")
    elif num_embeddings not in (vocab_size, vocab_size - 1):
        problems.append(f"vocab_size is {vocab_size}, the model's dictionary has {num_embeddings} "
                        f"symbols (expected {vocab_size}, or {vocab_size - 1} without <mask>: "
                        f"fairseq-hier-bart files derives dict.txt from this directory)")
    if problems:
        arch = getattr(args, "arch", "the model")
        raise HierError(f"{path} does not fit --arch {arch}: {'; '.join(problems)}")


def read_weights(folder: str) -> Tuple[Dict[str, Tensor], str]:
    """The tensors of ``model.safetensors`` (else ``pytorch_model.bin``) and the file's path."""
    for name in WEIGHT_FILES:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        try:
            if name.endswith(".safetensors"):
                # imported here: only Hugging Face directories need the package
                from safetensors.torch import load_file

                return load_file(path, device="cpu"), path
            # a plain dict of tensors: torch's safe loader suffices
            return dict(torch.load(path, map_location="cpu", weights_only=True)), path
        except ImportError:
            raise HierError(f"{path}: reading it needs the safetensors package "
                            f"(scripts/install.sh installs it)") from None
        except Exception as e:  # a damaged or foreign file: one line naming it
            first = str(e).splitlines()[0] if str(e) else ""
            raise HierError(f"{path}: not a readable weights file ({type(e).__name__}: "
                            f"{first})") from None
    raise HierError(f"{folder}: no {' or '.join(WEIGHT_FILES)} (sharded checkpoints are not read: "
                    f"save the model as one file)")


def key_map(encoder_layers: int, decoder_layers: int) -> Dict[str, str]:
    """Hugging Face key (``model.`` removed) -> fairseq key, for every tensor but the embeddings,
    the output bias and the version buffers."""
    keys = {}
    for stack, layers, parts in (("encoder", encoder_layers, ENCODER_LAYER),
                                 ("decoder", decoder_layers, DECODER_LAYER)):
        keys[f"{stack}.embed_positions.weight"] = f"{stack}.embed_positions.weight"
        layer_parts = (f"layers.{i}.{p}" for i in range(layers) for p in parts)
        for part in ("layernorm_embedding", *layer_parts):
            for kind in ("weight", "bias"):
                keys[f"{stack}.{part}.{kind}"] = f"{stack}.{part}.{kind}"
    return keys


def _short(key: str) -> str:
    """A Hugging Face key without the ``model.`` prefix of BartForConditionalGeneration."""
    return key[len("model."):] if key.startswith("model.") else key


def _listed(keys: List[str], limit: int = 5) -> str:
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return f"{keys[:limit]}{more}"


def _tied_embedding(tensors: Dict[str, Tensor], names: Dict[str, str], path: str) -> Tensor:
    """The one token-embedding table of the file (``EMBEDDINGS``, whichever are present)."""
    present = [k for k in EMBEDDINGS if k in tensors]
    if not present:
        raise HierError(f"{path}: no token embeddings (none of "
                        f"{[names.get(k, k) for k in EMBEDDINGS]})")
    table = tensors[present[0]]
    for key in present[1:]:
        if tensors[key].shape != table.shape or not torch.equal(tensors[key], table):
            raise HierError(f"{path}: {names[key]} differs from {names[present[0]]}: fairseq's "
                            f"BART ties its input and output embeddings (one table)")
    return table


def fairseq_state_dict(tensors: Dict[str, Tensor], config: dict, path: str) -> Dict[str, Tensor]:
    """The fairseq BART state dict (2019 release layout) of a Hugging Face BART's tensors."""
    names = {_short(k): k for k in tensors}  # short key -> the file's own, for messages
    tensors = {short: tensors[full] for short, full in names.items()}
    embedding = _tied_embedding(tensors, names, path)
    vocab_size, d_model = config["vocab_size"], config["d_model"]
    if tuple(embedding.shape) != (vocab_size, d_model):
        raise HierError(f"{path}: the token embeddings are {tuple(embedding.shape)}, config.json "
                        f"says vocab_size {vocab_size} x d_model {d_model}")
    bias = tensors.get("final_logits_bias")
    if bias is not None:
        if bias.numel() != vocab_size:
            raise HierError(f"{path}: final_logits_bias has {bias.numel()} values, vocab_size "
                            f"is {vocab_size}")
        if bool(bias.ne(0).any()):
            raise HierError(f"{path}: final_logits_bias is not zero (max |bias| "
                            f"{bias.abs().max().item():.3g}): fairseq's BART has no output bias")
    mapping = key_map(config["encoder_layers"], config["decoder_layers"])
    missing = sorted(names.get(k, f"model.{k}") for k in mapping if k not in tensors)
    unused = sorted(names[k] for k in tensors if k not in mapping and k not in EMBEDDINGS
                    and k != "final_logits_bias")
    if missing or unused:
        raise HierError(f"{path}: not a BART of config.json's sizes: missing keys "
                        f"{_listed(missing) if missing else 'none'}; unused keys "
                        f"{_listed(unused) if unused else 'none'}")
    rows = config["max_position_embeddings"] + POSITION_OFFSET
    for stack in ("encoder", "decoder"):
        table = tensors[f"{stack}.embed_positions.weight"]
        if table.size(0) != rows:
            raise HierError(f"{path}: {names[f'{stack}.embed_positions.weight']} has "
                            f"{table.size(0)} rows, config.json's max_position_embeddings "
                            f"{rows - POSITION_OFFSET} needs {rows} (offset {POSITION_OFFSET})")
    state = {"encoder.embed_tokens.weight": embedding, "decoder.embed_tokens.weight": embedding}
    state.update({fairseq_key: tensors[hf_key] for hf_key, fairseq_key in mapping.items()})
    # on the CPU whatever the default device, as fairseq registers its own (torch.Tensor([3]))
    state["encoder.version"] = torch.tensor([FAIRSEQ_VERSION], device="cpu")
    state["decoder.version"] = torch.tensor([FAIRSEQ_VERSION], device="cpu")
    return state


def read_checkpoint(folder: str, args, num_embeddings: int) -> dict:
    """A Hugging Face BART directory as a fairseq checkpoint dict (``model``: the state dict of
    :func:`fairseq_state_dict`; no optimizer history; a first-epoch, update-0 training state),
    after :func:`check_config` against the model's ``args`` and dictionary size."""
    config_path = os.path.join(folder, "config.json")
    if not os.path.isfile(config_path):
        raise HierError(f"{folder} is a directory without config.json: a pretrained directory is "
                        f"read in Hugging Face's layout (config.json, model.safetensors or "
                        f"pytorch_model.bin); a fairseq BART is given by its model.pt file")
    config = read_config(config_path)
    check_config(config, args, num_embeddings, config_path)
    tensors, path = read_weights(folder)
    state = fairseq_state_dict(tensors, config, path)
    names = {_short(k): k for k in tensors}
    tied = [names[k] for k in EMBEDDINGS if k in names]
    logger.info(f"read the Hugging Face BART {path} ({len(tensors)} tensors; {config_path} fits "
                f"--arch {getattr(args, 'arch', '?')}): {len(state)} fairseq keys; token "
                f"embeddings from the tied {tied}; final_logits_bias "
                f"{'zero, not kept' if 'final_logits_bias' in tensors else 'absent'}")
    return {"args": None, "cfg": None, "model": state, "optimizer_history": [],
            "extra_state": {"train_iterator": {"epoch": 1, "iterations_in_epoch": 0,
                                               "version": 2}}}
