"""BART folders in fairseq's release layout and in Hugging Face's: a BART with random weights
(:func:`write_random`, ``fairseq-hier bart random``) and one layout converted into the other
(:func:`convert`, ``fairseq-hier bart convert``).

fairseq's layout: ``model.pt`` (``{"args", "model", ...}``, fairseq's ``bart_base`` /
``bart_large``), ``dict.txt``, ``encoder.json``, ``vocab.bpe``. Hugging Face's: ``config.json``,
``model.safetensors`` (BartForConditionalGeneration's keys), ``vocab.json``, ``merges.txt``.
Weights move by the key table of :mod:`fairseq_hier.models.hf_bart`, the vocabulary so that
fairseq's index of every token is Hugging Face's id. A folder's files are written together or
not at all (:mod:`fairseq_hier.io`). The rules: docs/models.md, section fairseq_hier.pretrained.
Imports ``data.bart_files``, ``io``, ``errors``, ``safe_loading``, this package's ``gpt2_bpe``;
torch, safetensors, fairseq and ``models.hf_bart`` (which imports torch) inside functions.
"""

import argparse
import json
import logging
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..data import bart_files
from ..errors import HierError
from ..io import check_outputs, read_json_object, staged_outputs
from ..safe_loading import check_fairseq_checkpoint, load
from . import gpt2_bpe

logger = logging.getLogger(__name__)

#: the tiny BART's widths: trains on a CPU in seconds (the tests' and ``bart random --size tiny``)
TINY_BART = dict(encoder_layers=2, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
                 encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=4,
                 decoder_attention_heads=4, max_source_positions=32, max_target_positions=32)
#: ``bart random --size``: fairseq's architecture and the widths given to it (none: its own)
SIZES: Dict[str, Tuple[str, dict]] = {"tiny": ("bart_base", TINY_BART), "base": ("bart_base", {}),
                                      "large": ("bart_large", {})}
LAYOUTS = ("fairseq", "huggingface")
FILES = {"fairseq": ("model.pt", "dict.txt", "encoder.json", "vocab.bpe"),
         "huggingface": ("config.json", "model.safetensors", "vocab.json", "merges.txt")}
#: fairseq's --activation-fn -> config.json's activation_function
ACTIVATIONS = {"gelu": "gelu", "gelu_accurate": "gelu_new", "relu": "relu", "tanh": "tanh",
               "linear": "linear"}
#: config.json's fields that give the model's widths (each required, an integer)
WIDTHS = ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
          "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim",
          "max_position_embeddings", "vocab_size")


def width_flags(dims: dict) -> List[str]:
    """fairseq-train's options that give a model the widths ``dims`` (positions left out: the
    recipes set their own, and the tables are extended)."""
    return [f"--{k.replace('_', '-')}={v}" for k, v in dims.items() if not k.startswith("max_")]


# ------------------------------------------------------------------------------ fairseq's side
def fairseq_args(arch: str, dims: dict, data: str) -> argparse.Namespace:
    """fairseq-train's options for ``--arch arch`` with ``dims``, after the architecture function
    (what a release's model.pt keeps as ``args``; ``data``: its data folder)."""
    from fairseq import options  # imported here: only the commands that build a model need it

    flags = [f"--{k.replace('_', '-')}={v}" for k, v in dims.items()]
    return options.parse_args_and_arch(options.get_training_parser(), [
        data, "--task", "translation", "--arch", arch, *flags])


def _checkpoint(args: argparse.Namespace, state: dict) -> dict:
    """A checkpoint as fairseq saves a released BART: options, weights, an optimizer history."""
    return {"args": args, "model": state, "extra_state": {"epoch": 1},
            "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                   "optimizer_name": "FairseqAdam",
                                   "lr_scheduler_state": {"best": None}, "num_updates": 500000}]}


def random_state(arch: str, dims: dict, symbols: Sequence[str], seed: int) -> dict:
    """The weights of fairseq's ``arch`` with ``dims``, initialised from ``seed`` as fairseq
    initialises BART, over a dictionary of the specials, ``symbols`` and ``<mask>`` (which BART's
    tasks add: the tables have one row more than dict.txt, as bart.large's)."""
    import torch  # imported here, with fairseq: only building a model needs them
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    d = Dictionary()
    for symbol in symbols:
        d.add_symbol(symbol)
    d.add_symbol(bart_files.MASK)
    torch.manual_seed(seed)
    margs = argparse.Namespace(task="translation", **dims)
    ARCH_CONFIG_REGISTRY[arch](margs)
    task = argparse.Namespace(source_dictionary=d, target_dictionary=d)
    return ARCH_MODEL_REGISTRY[arch].build_model(margs, task).state_dict()


def read_fairseq_model(folder: str) -> Tuple[object, dict, str]:
    """``(options, state dict, path)`` of a release folder's ``model.pt`` (loaded without running
    code: :mod:`fairseq_hier.safe_loading`)."""
    path = os.path.join(folder, "model.pt")
    if not os.path.isfile(path):
        raise HierError(f"{folder}: no model.pt (a fairseq BART release folder holds model.pt, "
                        f"dict.txt, encoder.json and vocab.bpe)")
    checkpoint = load(path, map_location="cpu")
    check_fairseq_checkpoint(checkpoint, path)
    args = checkpoint.get("args")
    if args is None and checkpoint.get("cfg") is not None:
        model = checkpoint["cfg"]["model"]
        args = argparse.Namespace(**dict(model)) if hasattr(model, "keys") else model
    if args is None:
        raise HierError(f"{path}: no options (neither 'args' nor 'cfg'): the model's widths are "
                        f"unknown")
    return args, checkpoint["model"], path


# ------------------------------------------------------------------------- Hugging Face's side
def hf_config(args, rows: int, positions: int, path: str) -> dict:
    """config.json for fairseq BART options ``args`` (after the architecture function), token
    tables of ``rows`` and position tables of ``positions`` rows; what Hugging Face's BART cannot
    express is refused in one line naming the options."""
    get = lambda name, default=None: getattr(args, name, default)  # noqa: E731
    problems = []
    if get("encoder_embed_dim") != get("decoder_embed_dim"):
        problems.append(f"--encoder-embed-dim {get('encoder_embed_dim')} and --decoder-embed-dim "
                        f"{get('decoder_embed_dim')} differ (one d_model)")
    for option in ("encoder_normalize_before", "decoder_normalize_before"):
        if get(option, False):
            problems.append(f"--{option.replace('_', '-')} is set (BART's layers are post-norm)")
    if not get("layernorm_embedding", False):
        problems.append("--layernorm-embedding is not set (BART normalises its embeddings)")
    if get("activation_fn", "relu") not in ACTIVATIONS:
        problems.append(f"--activation-fn {get('activation_fn')!r} has no activation_function")
    if problems:
        raise HierError(f"{path}: not a BART that Hugging Face's layout holds: "
                        f"{'; '.join(problems)}")
    dropout = get("dropout", 0.1)
    return {
        "model_type": "bart", "architectures": ["BartForConditionalGeneration"],
        "vocab_size": rows, "d_model": get("encoder_embed_dim"),
        "encoder_layers": get("encoder_layers"), "decoder_layers": get("decoder_layers"),
        "encoder_attention_heads": get("encoder_attention_heads"),
        "decoder_attention_heads": get("decoder_attention_heads"),
        "encoder_ffn_dim": get("encoder_ffn_embed_dim"),
        "decoder_ffn_dim": get("decoder_ffn_embed_dim"),
        "max_position_embeddings": positions - 2,  # learned positions start at padding_idx + 1
        "activation_function": ACTIVATIONS[get("activation_fn")],
        "scale_embedding": not get("no_scale_embedding", False),
        "dropout": dropout, "attention_dropout": get("attention_dropout", 0.0),
        "activation_dropout": get("activation_dropout", 0.0) or get("relu_dropout", 0.0) or 0.0,
        "init_std": 0.02, "is_encoder_decoder": True, "tie_word_embeddings": True,
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2,
        "forced_eos_token_id": 2,
        # the fields older releases of Hugging Face's BART read, at the values of fairseq's BART
        "normalize_before": False, "add_final_layer_norm": False, "normalize_embedding": True,
        "static_position_embeddings": False, "add_bias_logits": False, "extra_pos_embeddings": 2,
    }


def hf_tensors(state: dict, args, path: str) -> Tuple[Dict[str, object], int, int]:
    """``(tensors, token rows, position rows)``: fairseq BART weights under
    BartForConditionalGeneration's keys (the tied token table once, as ``model.shared.weight``;
    a zero ``final_logits_bias``). Refused in one line: untied tables, missing or unknown keys,
    position tables of two lengths."""
    import torch  # imported here: the light subcommands never need it

    from ..models import hf_bart  # imported here: it imports torch

    embedding = state.get("encoder.embed_tokens.weight")
    if embedding is None:
        raise HierError(f"{path}: no encoder.embed_tokens.weight (not a BART's weights)")
    for key in ("decoder.embed_tokens.weight", "decoder.output_projection.weight"):
        if key in state and (state[key].shape != embedding.shape
                             or not torch.equal(state[key], embedding)):
            raise HierError(f"{path}: {key} differs from encoder.embed_tokens.weight: Hugging "
                            f"Face's BART ties its token embeddings (one table)")
    mapping = hf_bart.key_map(args.encoder_layers, args.decoder_layers)
    own = {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
           "decoder.output_projection.weight", "encoder.version", "decoder.version"}
    missing = sorted(k for k in mapping.values() if k not in state)
    unused = sorted(k for k in state if k not in own and k not in set(mapping.values()))
    if missing or unused:
        raise HierError(f"{path}: not a BART of its options' widths: missing keys "
                        f"{missing[:5] if missing else 'none'}; keys Hugging Face's BART has no "
                        f"place for {unused[:5] if unused else 'none'}")
    positions = {stack: state[f"{stack}.embed_positions.weight"].size(0)
                 for stack in ("encoder", "decoder")}
    if positions["encoder"] != positions["decoder"]:
        raise HierError(f"{path}: the encoder has {positions['encoder']} position rows, the "
                        f"decoder {positions['decoder']}: Hugging Face's BART has one "
                        f"max_position_embeddings")
    tensors = {"model.shared.weight": embedding,
               "final_logits_bias": torch.zeros(1, embedding.size(0))}
    tensors.update({f"model.{hf_key}": state[key] for hf_key, key in mapping.items()})
    # safetensors stores each tensor whole: no views of shared storage
    tensors = {k: v.detach().to("cpu").clone().contiguous() for k, v in tensors.items()}
    return tensors, embedding.size(0), positions["encoder"]


def fairseq_from_hf(folder: str, out_dir: str) -> Tuple[argparse.Namespace, dict, dict]:
    """``(options, state dict, tokenizer files' texts)`` of a Hugging Face BART folder: the
    options from config.json (checked against the model they build,
    :func:`fairseq_hier.models.hf_bart.check_config`), the weights by the key table in the
    layout of the bart.large release, dict.txt / encoder.json / vocab.bpe derived from
    vocab.json / merges.txt (:func:`fairseq_hier.data.bart_files.derive_from_dir`); ``out_dir``:
    the data folder the options name."""
    from ..models import hf_bart  # imported here: it imports torch

    config_path = os.path.join(folder, "config.json")
    if not os.path.isfile(config_path):
        raise HierError(f"{folder}: no config.json (a Hugging Face BART folder holds config.json, "
                        f"model.safetensors or pytorch_model.bin, vocab.json and merges.txt)")
    config = read_json_object(config_path)
    for field in WIDTHS:
        value = config.get(field)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise HierError(f"{config_path}: {field} is {json.dumps(value)} (a BART's config.json "
                            f"gives it as an integer >= 1)")
    activation = config.get("activation_function", "gelu")
    if activation not in hf_bart.ACTIVATIONS:
        raise HierError(f"{config_path}: activation_function {activation!r} has no fairseq "
                        f"--activation-fn (one of {sorted(hf_bart.ACTIVATIONS)})")
    files = bart_files.derive_from_dir(folder)
    d_model, positions = config["d_model"], config["max_position_embeddings"]
    dims = dict(encoder_layers=config["encoder_layers"], decoder_layers=config["decoder_layers"],
                encoder_embed_dim=d_model, decoder_embed_dim=d_model,
                encoder_ffn_embed_dim=config["encoder_ffn_dim"],
                decoder_ffn_embed_dim=config["decoder_ffn_dim"],
                encoder_attention_heads=config["encoder_attention_heads"],
                decoder_attention_heads=config["decoder_attention_heads"],
                max_source_positions=positions, max_target_positions=positions,
                activation_fn=hf_bart.ACTIVATIONS[activation],
                dropout=config.get("dropout", 0.1),
                attention_dropout=config.get("attention_dropout", 0.0),
                relu_dropout=config.get("activation_dropout", 0.0))
    arch = "bart_large" if (d_model, config["encoder_layers"]) == (1024, 12) else "bart_base"
    args = fairseq_args(arch, dims, out_dir)  # after the architecture function: every option
    args.no_scale_embedding = not config.get("scale_embedding", False)
    hf_bart.check_config(config, args, len(bart_files.SPECIALS) + len(files.symbols),
                         config_path)
    tensors, weights_path = hf_bart.read_weights(folder)
    state = hf_bart.fairseq_state_dict(tensors, config, weights_path)
    return args, state, bart_files.texts(files)


# ----------------------------------------------------------------------------------- writing
def write_folder(out_dir: str, layout: str, writers: Dict[str, Callable[[str], None]],
                 inputs: Sequence[str] = ()) -> List[str]:
    """The files of ``layout`` in ``out_dir``, each written by ``writers[name](path)`` to its
    temporary path and moved into place together (a failure leaves none)."""
    paths = [os.path.join(out_dir, name) for name in FILES[layout]]
    with staged_outputs(paths, inputs) as staged:
        for name, tmp in zip(FILES[layout], staged):
            writers[name](tmp)
    return paths


def _text(content: str) -> Callable[[str], None]:
    def write(path: str) -> None:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(content)
    return write


def _torch_save(obj) -> Callable[[str], None]:
    def write(path: str) -> None:
        import torch  # imported here: the callers have imported it already

        torch.save(obj, path)
    return write


def _safetensors(tensors: dict) -> Callable[[str], None]:
    def write(path: str) -> None:
        try:  # imported here: only Hugging Face's layout needs the package
            from safetensors.torch import save_file
        except ImportError:
            raise HierError("writing model.safetensors needs the safetensors package "
                            "(scripts/install.sh installs it)") from None
        save_file(tensors, path, metadata={"format": "pt"})
    return write


def fairseq_writers(args, state: dict, tokenizer: Dict[str, str]) -> dict:
    return {"model.pt": _torch_save(_checkpoint(args, state)),
            **{name: _text(text) for name, text in tokenizer.items()}}


def hf_writers(args, state: dict, vocab: gpt2_bpe.Vocabulary, symbols: List[str],
               source: str, tokenizer_dir: str) -> dict:
    tensors, rows, positions = hf_tensors(state, args, source)
    config = hf_config(args, rows, positions, source)
    tokenizer = gpt2_bpe.hf_texts(vocab, symbols, rows, tokenizer_dir)
    return {"config.json": _text(json.dumps(config, indent=2) + "\n"),
            "model.safetensors": _safetensors(tensors),
            **{name: _text(text) for name, text in tokenizer.items()}}


def write_random(out_dir: str, layout: str = "fairseq", size: str = "tiny",
                 texts: Sequence[str] = (), seed: int = 1,
                 max_merges: Optional[int] = gpt2_bpe.MAX_MERGES,
                 words: Optional[Sequence[str]] = None) -> List[str]:
    """A BART with random weights (fairseq's ``SIZES[size]``, ``seed``) in ``layout``, over a
    byte-level BPE of the 256 byte symbols plus the merges of the words of ``texts`` (or of the
    byte-symbol ``words`` given), at most ``max_merges``; returns the paths written."""
    if layout not in LAYOUTS or size not in SIZES:
        raise HierError(f"layout {layout!r} / size {size!r}: expected one of {LAYOUTS} / "
                        f"{tuple(SIZES)}")
    names = FILES[layout]
    check_outputs("--output-dir", out_dir, [os.path.join(out_dir, n) for n in names], texts)
    if words is None:
        words = gpt2_bpe.words_of_files(texts)
    vocab = gpt2_bpe.vocabulary(words, max_merges)
    tokenizer = gpt2_bpe.fairseq_texts(vocab)
    symbols = [line.split(" ")[0] for line in tokenizer["dict.txt"].splitlines()]
    arch, dims = SIZES[size]
    args = fairseq_args(arch, dims, out_dir)
    state = random_state(arch, dims, symbols, seed)
    if layout == "fairseq":
        writers = fairseq_writers(args, state, tokenizer)
    else:
        writers = hf_writers(args, state, vocab, symbols, out_dir, out_dir)
    paths = write_folder(out_dir, layout, writers, texts)
    layout_name = "fairseq's" if layout == "fairseq" else "Hugging Face's"
    widths = " ".join(width_flags(dims)) or f"those of --arch hat_{arch} (no width options)"
    logger.info(f"{out_dir}: a {size} BART with random weights (fairseq's {arch}, seed {seed}) "
                f"in {layout_name} layout: {', '.join(names)}; {len(vocab.encoder)} BPE tokens "
                f"({len(vocab.merges)} merges{' from ' + ', '.join(texts) if texts else ''}), "
                f"{len(symbols) + 5} rows with the specials and <mask>; its widths, for "
                f"fairseq-train: {widths}")
    return paths


def convert(in_dir: str, out_dir: str, to: str) -> List[str]:
    """The BART folder ``in_dir`` (Hugging Face's layout for ``to="fairseq"``, fairseq's for
    ``to="huggingface"``) written in the other layout into ``out_dir``; returns the paths."""
    if to not in LAYOUTS:
        raise HierError(f"--to {to!r}: expected one of {LAYOUTS}")
    if not os.path.isdir(in_dir):
        raise HierError(f"--input-dir {in_dir}: not a folder")
    names = FILES[to]
    check_outputs("--output-dir", out_dir, [os.path.join(out_dir, n) for n in names])
    if to == "fairseq":
        inputs = [os.path.join(in_dir, n) for n in (*FILES["huggingface"], "pytorch_model.bin")]
        args, state, tokenizer = fairseq_from_hf(in_dir, out_dir)
        writers = fairseq_writers(args, state, tokenizer)
    else:
        inputs = [os.path.join(in_dir, n) for n in FILES["fairseq"]]
        args, state, path = read_fairseq_model(in_dir)
        vocab, symbols = gpt2_bpe.read_fairseq_files(in_dir)
        writers = hf_writers(args, state, vocab, symbols, path, in_dir)
    paths = write_folder(out_dir, to, writers, inputs)
    layout_name = "fairseq's" if to == "fairseq" else "Hugging Face's"
    logger.info(f"{in_dir} -> {out_dir}: {', '.join(names)} ({layout_name} layout; "
                f"{len(state)} weights of {args.encoder_layers}+{args.decoder_layers} layers, "
                f"d_model {args.encoder_embed_dim})")
    return paths
