"""Hugging Face BART directories: the tiny random BART of the session written in both layouts
(fairseq's 2019 release, and Hugging Face's config.json + model.safetensors / pytorch_model.bin,
converted here by a literal key table) loads into hat_bart_base and long_bart_base to identical
weights and outputs; configs and weights that do not fit are refused in one line; fairseq's
tokenizer files derived from vocab.json / merges.txt give the ids of Hugging Face's own
``tokenizers``; the HAT recipe prepares data and fine-tunes from the Hugging Face directory alone.
"""

import argparse
import json
import random
import shutil
from pathlib import Path

import pytest
import torch
from fairseq import checkpoint_utils
from fairseq.data import Dictionary
from fairseq.data.encoders.gpt2_bpe_utils import bytes_to_unicode

import fairseq_hier
from bart_ids import TEXTS, fairseq_ids, hf_tokenizer
from conftest import (ROOT, TINY_BART, WORDS, bos_source, build_model, left_pad, run_cli,
                      run_recipe, tiny_bart_flags)
from fairseq_hier.data import bart_files
from fairseq_hier.models import hf_bart

fairseq_hier.register()

EXAMPLES = ROOT / "examples"
ENCODER_LAYER = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj",
                 "self_attn_layer_norm", "fc1", "fc2", "final_layer_norm"]
DECODER_LAYER = ENCODER_LAYER + ["encoder_attn.q_proj", "encoder_attn.k_proj",
                                 "encoder_attn.v_proj", "encoder_attn.out_proj",
                                 "encoder_attn_layer_norm"]


# ---------------------------------------------------------- the tiny BART in Hugging Face's layout
def hf_vocab(bart_dir: Path) -> dict:
    """vocab.json as Hugging Face built BART's: the token of fairseq index i has id i (dict.txt
    line n holds the GPT-2 id of index 4 + n); specials 0-3, <mask> last."""
    encoder = json.loads((bart_dir / "encoder.json").read_text())
    token_of = {i: token for token, i in encoder.items()}
    symbols = [line.split()[0] for line in (bart_dir / "dict.txt").read_text().splitlines()]
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    vocab.update({token_of[int(s)]: 4 + n for n, s in enumerate(symbols)})
    vocab["<mask>"] = 4 + len(symbols)
    return vocab


def hf_tensors(state: dict, encoder_layers: int, decoder_layers: int, tied_copies=True) -> dict:
    """fairseq BART state dict -> BartForConditionalGeneration's keys (written out by hand)."""
    embedding = state["encoder.embed_tokens.weight"]
    hf = {"model.shared.weight": embedding,
          "final_logits_bias": torch.zeros(1, embedding.size(0))}
    if tied_copies:  # safetensors files saved by Hugging Face drop these (tied to shared)
        hf["model.encoder.embed_tokens.weight"] = embedding
        hf["model.decoder.embed_tokens.weight"] = embedding
        hf["lm_head.weight"] = embedding
    for stack, layers, parts in (("encoder", encoder_layers, ENCODER_LAYER),
                                 ("decoder", decoder_layers, DECODER_LAYER)):
        hf[f"model.{stack}.embed_positions.weight"] = state[f"{stack}.embed_positions.weight"]
        names = ["layernorm_embedding"] + [f"layers.{i}.{part}" for i in range(layers)
                                           for part in parts]
        for name in names:
            for kind in ("weight", "bias"):
                hf[f"model.{stack}.{name}.{kind}"] = state[f"{stack}.{name}.{kind}"]
    return {k: v.clone().contiguous() for k, v in hf.items()}  # safetensors refuses shared storage


def hf_config(dims: dict, vocab_size: int) -> dict:
    return {"model_type": "bart", "architectures": ["BartForConditionalGeneration"],
            "d_model": dims["encoder_embed_dim"], "encoder_layers": dims["encoder_layers"],
            "decoder_layers": dims["decoder_layers"],
            "encoder_attention_heads": dims["encoder_attention_heads"],
            "decoder_attention_heads": dims["decoder_attention_heads"],
            "encoder_ffn_dim": dims["encoder_ffn_embed_dim"],
            "decoder_ffn_dim": dims["decoder_ffn_embed_dim"],
            "max_position_embeddings": dims["max_source_positions"], "vocab_size": vocab_size,
            "activation_function": "gelu", "scale_embedding": False, "normalize_before": False,
            "add_final_layer_norm": False, "normalize_embedding": True, "pad_token_id": 1,
            "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2,
            "dropout": 0.1, "attention_dropout": 0.0, "init_std": 0.02}


@pytest.fixture(scope="module")
def bart_state(tiny_bart_dir):
    """The session's tiny BART (fairseq's layout), read once by fairseq's own loader."""
    return checkpoint_utils.load_checkpoint_to_cpu(str(tiny_bart_dir / "model.pt"))["model"]


@pytest.fixture(scope="module")
def hf_dirs(tiny_bart_dir, bart_state, tmp_path_factory):
    """The session's tiny BART as Hugging Face directories: model.safetensors with the tied
    copies, without them, and pytorch_model.bin."""
    from safetensors.torch import save_file

    state = bart_state
    tensors = hf_tensors(state, TINY_BART["encoder_layers"], TINY_BART["decoder_layers"])
    # every BART weight is in the Hugging Face file under its own name (the version buffers and
    # the tied output projection are fairseq's own; shared, lm_head and the bias are Hugging Face's)
    assert {k for k in state if not k.endswith(".version") and "output_projection" not in k} == \
        {k[len("model."):] for k in tensors
         if k.startswith("model.") and k != "model.shared.weight"}
    vocab = hf_vocab(tiny_bart_dir)
    dirs = {}
    for variant in ("safetensors", "deduped", "bin"):
        folder = tmp_path_factory.mktemp(f"hf_bart_{variant}")
        (folder / "config.json").write_text(json.dumps(hf_config(TINY_BART, len(vocab)), indent=2))
        (folder / "vocab.json").write_text(json.dumps(vocab))
        shutil.copy(tiny_bart_dir / "vocab.bpe", folder / "merges.txt")
        if variant == "bin":
            torch.save(tensors, folder / "pytorch_model.bin")
        else:
            kept = tensors if variant == "safetensors" else hf_tensors(
                state, TINY_BART["encoder_layers"], TINY_BART["decoder_layers"], tied_copies=False)
            save_file(kept, str(folder / "model.safetensors"))
        dirs[variant] = folder
    return dirs


# ---------------------------------------------------------------------------- tokenizer files
def test_byte_table_is_gpt2s():
    assert bart_files.bytes_to_unicode() == bytes_to_unicode()


def test_derived_files_give_the_tiny_barts_ids(hf_dirs, tiny_bart_dir, tmp_path):
    """Derived from vocab.json: fairseq index == Hugging Face id == the index fairseq's own files
    (GPT-2 ids as dict.txt words) give; the dictionary has BART's rows minus <mask>."""
    out = tmp_path / "files"
    files = bart_files.write_from_dir(str(hf_dirs["safetensors"]), str(out))
    assert sorted(p.name for p in out.iterdir()) == ["dict.txt", "encoder.json", "vocab.bpe"]
    assert files.holes == 0 and files.mask == len(hf_vocab(tiny_bart_dir)) - 1
    assert len(Dictionary.load(str(out / "dict.txt"))) == \
        len(Dictionary.load(str(tiny_bart_dir / "dict.txt")))
    tokenizer = hf_tokenizer(hf_dirs["safetensors"])
    for text in TEXTS:
        ids = tokenizer.encode(text).ids
        assert fairseq_ids(out, text) == ids == fairseq_ids(tiny_bart_dir, text), text


def learned_hf_vocabulary(folder: Path, seed=0, holes=3):
    """A byte-level BPE learnt by Hugging Face's tokenizers on made-up text, laid out as BART's
    vocab.json: specials 0-3, the other tokens' ids shuffled with ``holes`` ids left unused,
    <mask> last. Returns the vocab."""
    from tokenizers import ByteLevelBPETokenizer

    rng = random.Random(seed)
    extra = ["Zürich", "naïve", "東京", "données", "😀", "it's", "we'll", "3.14", "--", "?!"]
    corpus = [" ".join(rng.choice(WORDS + tuple(extra)) for _ in range(rng.randint(3, 15)))
              + rng.choice([".", "!", "\n", "  ", ""]) for _ in range(400)]
    learner = ByteLevelBPETokenizer()
    learner.train_from_iterator(corpus, vocab_size=700, min_frequency=2, show_progress=False,
                                special_tokens=["<s>", "<pad>", "</s>", "<unk>"])
    learner.save_model(str(folder))
    learnt = json.loads((folder / "vocab.json").read_text())
    tokens = sorted((t for t in learnt if t not in bart_files.SPECIALS), key=learnt.get)
    ids = list(range(4, 4 + len(tokens) + holes))
    rng.shuffle(ids)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, **dict(zip(tokens, ids))}
    vocab["<mask>"] = 4 + len(tokens) + holes
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "config.json").write_text(json.dumps({"model_type": "bart",
                                                    "vocab_size": len(tokens) + holes + 5}))
    return vocab


def test_derived_files_match_tokenizers_on_a_learnt_shuffled_vocabulary(tmp_path):
    """The console script on a learnt vocabulary whose ids follow no order, with holes: the ids
    of fairseq's BPE + dictionary equal tokenizers' for every text, held-out text included."""
    hf = tmp_path / "hf"
    hf.mkdir()
    vocab = learned_hf_vocabulary(hf)
    out = run_cli("fairseq-hier-bart", "files", hf, "--output-dir", tmp_path / "files").stdout
    assert "3 rows without a token" in out, out
    files = tmp_path / "files"
    d = Dictionary.load(str(files / "dict.txt"))
    assert len(d) + 1 == len(vocab) + 3  # + <mask> (added by BART's tasks) == vocab_size
    holes = sorted(set(range(len(d))) - set(vocab.values()))
    assert [d[i] for i in holes] == ["madeupword0000", "madeupword0001", "madeupword0002"]
    tokenizer = hf_tokenizer(hf)
    rng = random.Random(1)
    texts = TEXTS + [" ".join(rng.choice(WORDS) for _ in range(20)) for _ in range(20)]
    tokens = 0
    for text in texts:
        ids = tokenizer.encode(text).ids
        assert fairseq_ids(files, text) == ids, text
        tokens += len(ids)
    assert tokens > 500  # the comparison covers many merges, not a handful of bytes


def test_the_command_starts_without_torch_or_fairseq(hf_dirs, tmp_path):
    import subprocess
    import sys

    code = ("import atexit, json, runpy, sys\n"
            "atexit.register(lambda: print(json.dumps(sorted(m for m in ('torch', 'fairseq') "
            "if m in sys.modules))))\n"
            f"sys.argv = [{str(Path(sys.executable).parent / 'fairseq-hier-bart')!r}, 'files', "
            f"{str(hf_dirs['bin'])!r}, '--output-dir', {str(tmp_path)!r}]\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "[]", out.stdout + out.stderr
    assert (tmp_path / "dict.txt").is_file()


def vocab_case(tmp_path, change):
    """A minimal vocab.json / merges.txt (all bytes, one merge) with one change applied."""
    chars = list(bytes_to_unicode().values())
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    vocab.update({c: 4 + i for i, c in enumerate(chars)})
    vocab["ab"] = len(vocab)
    vocab["<mask>"] = len(vocab)
    merges = "#version: 0.2\na b\n"
    vocab, merges = change(vocab, merges)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text(merges)
    return tmp_path


def swap(vocab, a, b):
    """vocab with the ids of tokens a and b exchanged."""
    return {**vocab, a: vocab[b], b: vocab[a]}


@pytest.mark.parametrize("change,message", [
    (lambda v, m: (swap(v, "<pad>", "a"), m),
     r"'<pad>' has id \d+; fairseq's dictionary has it at 1"),
    (lambda v, m: (swap(v, "<mask>", "a"), m), r"'<mask>' has id \d+, not the last id \d+"),
    (lambda v, m: ({**v, "ab": v["a"]}, m), r"'a' and 'ab' share id \d+"),
    (lambda v, m: ({k: i for k, i in v.items() if k != "Ā"}, m),
     r"no token for the byte symbol 'Ā'"),
    (lambda v, m: (v, m + "b c\n"), r"merge 2 \('b' 'c'\) needs 'bc', which vocab.json lacks"),
    (lambda v, m: (v, m + "abc\n"), r"merges.txt:3: expected two symbols separated by one space"),
    (lambda v, m: ({**v, "a": -1}, m), r"token 'a' has id -1 \(expected an integer >= 0\)"),
])
def test_a_vocabulary_that_cannot_be_mapped_is_one_line(tmp_path, change, message):
    folder = vocab_case(tmp_path, change)
    with pytest.raises(ValueError, match=message) as e:
        bart_files.derive_from_dir(str(folder))
    assert "\n" not in str(e.value) and str(folder) in str(e.value)


@pytest.mark.parametrize("extra, why", [
    (-5, "its last token '<mask>' has id {last} (vocab_size {rows} expected)"),
    (3, "its last token '<mask>' has id {last}, and BART's tasks add <mask> as the last row "
        "(vocab_size {rows} expected)"),
])
def test_a_config_vocab_size_that_disagrees_names_config_json(tmp_path, extra, why):
    """The vocabulary is right and config.json's vocab_size is not: the line blames config.json,
    through the console script."""
    (tmp_path / "hf").mkdir()
    folder = vocab_case(tmp_path / "hf", lambda v, m: (v, m))
    vocab = json.loads((folder / "vocab.json").read_text())
    rows = len(vocab)
    (folder / "config.json").write_text(json.dumps({"model_type": "bart",
                                                    "vocab_size": rows + extra}))
    proc = run_cli("fairseq-hier-bart", "files", folder, "--output-dir", tmp_path / "files",
                   check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout
    assert proc.stdout.strip().splitlines() == [
        f"fairseq-hier-bart files: error: {folder / 'config.json'}: vocab_size is {rows + extra}, "
        f"which does not fit {folder / 'vocab.json'}: " + why.format(last=rows - 1, rows=rows)]
    assert not (tmp_path / "files").exists()


# ------------------------------------------------------------------------------------ weights
DIMS = dict(TINY_BART, max_source_positions=64, max_target_positions=64, dropout=0.0)


def from_both_layouts(arch, tiny_bart_dir, bart_state, hf_dir, derived):
    """The arch built twice from one seed over each layout's dictionary, one loading fairseq's
    model.pt (``bart_state``), the other the Hugging Face directory (through the hook the Trainer
    calls)."""
    models = []
    for dict_txt, load in ((tiny_bart_dir / "dict.txt", lambda m: dict(bart_state)),
                           (derived / "dict.txt",
                            lambda m: m.checkpoint_from_directory(str(hf_dir))["model"])):
        torch.manual_seed(5)
        model = build_model(arch, Dictionary.load(str(dict_txt)), **DIMS)
        model.load_state_dict(load(model), strict=True)
        models.append(model.eval())
    return models


@pytest.mark.parametrize("variant", ["safetensors", "deduped", "bin"])
@pytest.mark.parametrize("arch", ["hat_bart_base", "long_bart_base"])
def test_both_layouts_load_to_identical_weights_and_outputs(arch, variant, hf_dirs, tiny_bart_dir,
                                                            bart_state, tmp_path, caplog):
    derived = tmp_path / "files"
    bart_files.write_from_dir(str(hf_dirs[variant]), str(derived))
    with caplog.at_level("INFO"):
        fairseq_model, hf_model = from_both_layouts(arch, tiny_bart_dir, bart_state,
                                                    hf_dirs[variant], derived)
    a, b = fairseq_model.state_dict(), hf_model.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key  # max abs difference 0
    same_shape = [k for k, v in bart_state.items() if v.shape == b[k].shape]
    assert len(same_shape) == len(bart_state) - 5  # 2 token tables + output projection (<mask>
    for key in same_shape:  # row dropped), 2 position tables (extended): the rest as released
        assert torch.equal(b[key], bart_state[key]), key
    weights = "model.safetensors" if variant != "bin" else "pytorch_model.bin"
    assert f"read the Hugging Face BART {hf_dirs[variant] / weights}" in caplog.text
    extended = ("extended (random): ['encoder.embed_positions.weight 34 -> 66 rows', "
                "'decoder.embed_positions.weight 34 -> 66 rows']; missing: none; unused: none")
    assert caplog.text.count(extended) == 2  # both layouts, the same log line
    if arch == "hat_bart_base":
        assert caplog.text.count("new (fresh init) 36:") == 2
    src = left_pad([bos_source(3, 4, 2), bos_source(5)])
    prev = torch.tensor([[2, 11, 12, 13, 40], [2, 14, 15, 16, 17]])
    with torch.no_grad():
        out_a, extra_a = fairseq_model(src, src.ne(1).sum(1), prev)
        out_b, extra_b = hf_model(src, src.ne(1).sum(1), prev)
    assert out_a.shape == (2, 5, len(fairseq_model.decoder.dictionary))
    assert torch.equal(out_a, out_b)
    if arch == "hat_bart_base":
        assert torch.equal(extra_a["sentence_attn"][0], extra_b["sentence_attn"][0])


def model_args(**overrides):
    args = argparse.Namespace(arch="hat_bart_base", **{**DIMS, **overrides})
    from fairseq.models import ARCH_CONFIG_REGISTRY

    ARCH_CONFIG_REGISTRY["hat_bart_base"](args)
    return args


@pytest.mark.parametrize("field,value,message", [
    ("d_model", 32, "d_model is 32, the model's --encoder-embed-dim is 16; d_model is 32, the "
                    "model's --decoder-embed-dim is 16"),
    ("encoder_layers", 3, "encoder_layers is 3, the model's --encoder-layers is 2"),
    ("decoder_ffn_dim", 64, "decoder_ffn_dim is 64, the model's --decoder-ffn-embed-dim is 32"),
    ("encoder_attention_heads", 2,
     "encoder_attention_heads is 2, the model's --encoder-attention-heads is 4"),
    ("activation_function", "relu", "activation_function is 'relu' (fairseq's 'relu'), the model's "
                                    "--activation-fn is 'gelu'"),
    ("scale_embedding", True, "scale_embedding is true, the model's --no-scale-embedding is true"),
    ("normalize_before", True,
     "normalize_before is true, the model's --encoder-normalize-before is false"),
    ("add_final_layer_norm", True, "add_final_layer_norm is true, fairseq's BART needs false "
                                   "(post-norm layers, no final LayerNorm)"),
    ("max_position_embeddings", 128, "max_position_embeddings is 128, more than the model's "
                                     "--max-source-positions 64 (position tables are extended, "
                                     "never cut)"),
    ("vocab_size", 500, "vocab_size is 500, the model's dictionary has 410 symbols"),
    ("model_type", "mbart", "model_type is 'mbart', fairseq's BART needs 'bart'"),
    ("pad_token_id", 0,
     "pad_token_id is 0, fairseq's BART needs 1 (fairseq's dictionary: <pad> 1)"),
    ("decoder_layers", None, "decoder_layers is null, the model's --decoder-layers is 2"),
    ("encoder_ffn_dim", ..., "encoder_ffn_dim is missing"),
])
def test_a_config_that_does_not_fit_the_arch_is_one_line_naming_the_field(field, value, message):
    config = hf_config(TINY_BART, 411)
    config[field] = value
    if value is ...:
        del config[field]
    with pytest.raises(ValueError) as e:
        hf_bart.check_config(config, model_args(), 410, "bart/config.json")
    text = str(e.value)
    assert text.startswith("bart/config.json does not fit --arch hat_bart_base: ")
    assert "\n" not in text
    assert message in text, text
    hf_bart.check_config(hf_config(TINY_BART, 411), model_args(), 410, "bart/config.json")  # fits


def test_weights_that_do_not_map_are_one_line_naming_the_key(hf_dirs):
    tensors, path = hf_bart.read_weights(str(hf_dirs["safetensors"]))
    config = json.loads((hf_dirs["safetensors"] / "config.json").read_text())
    cases = [
        (dict(tensors, final_logits_bias=torch.full_like(tensors["final_logits_bias"], 0.5)),
         "final_logits_bias is not zero (max |bias| 0.5): fairseq's BART has no output bias"),
        ({**tensors, "lm_head.weight": tensors["lm_head.weight"] + 1},
         "lm_head.weight differs from model.shared.weight: fairseq's BART ties"),
        ({k: v for k, v in tensors.items() if k != "model.decoder.layers.1.fc2.bias"},
         "missing keys ['model.decoder.layers.1.fc2.bias']; unused keys none"),
        ({**tensors, "model.encoder.layer_norm.weight": torch.ones(16)},
         "missing keys none; unused keys ['model.encoder.layer_norm.weight']"),
        ({**tensors, "model.encoder.embed_positions.weight": torch.zeros(30, 16)},
         "model.encoder.embed_positions.weight has 30 rows, config.json's max_position_embeddings "
         "32 needs 34"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError) as e:
            hf_bart.fairseq_state_dict(bad, config, path)
        assert message in str(e.value) and "\n" not in str(e.value), str(e.value)
    state = hf_bart.fairseq_state_dict(tensors, config, path)
    assert "decoder.output_projection.weight" not in state  # the 2019 release's layout
    assert state["encoder.embed_tokens.weight"] is state["decoder.embed_tokens.weight"]


# the fields of facebook/bart-large's published config.json that describe the model
BART_LARGE_CONFIG = {
    "model_type": "bart", "activation_function": "gelu", "add_final_layer_norm": False,
    "d_model": 1024, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 16,
    "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096,
    "max_position_embeddings": 1024, "normalize_before": False, "scale_embedding": False,
    "vocab_size": 50265, "bos_token_id": 0, "pad_token_id": 1, "eos_token_id": 2}


def test_full_size_bart_large_in_both_layouts_loads_into_the_large_archs(caplog):
    """bart.large's shapes (50265 rows with <mask>, 1026-row positions) on the meta device: the
    2019 release's layout and the Hugging Face layout (weights mapped by hf_bart) load into
    hat_bart_large and long_bart_large with the same log (3072 source positions)."""
    from unittest import mock

    rows, with_mask = Dictionary(), Dictionary()
    for d in (rows, with_mask):
        for i in range(50260):  # bart.large's dict.txt
            d.add_symbol(str(i))
    with_mask.add_symbol("<mask>")  # the 50265th row, as BART's pre-training task adds it
    no_init = mock.patch("fairseq.models.bart.model.init_bert_params", lambda m: None)
    with torch.device("meta"), no_init:
        release = build_model("bart_large", with_mask).state_dict()
        release = {k: v for k, v in release.items() if "output_projection" not in k}  # 2019 layout
        hf = hf_tensors(release, 12, 12, tied_copies=False)
        del hf["final_logits_bias"]  # a meta tensor has no values to check
        for arch in ("hat_bart_large", "long_bart_large"):
            for layout in ("fairseq", "hf"):
                model = build_model(arch, rows)
                if layout == "hf":
                    hf_bart.check_config(BART_LARGE_CONFIG, model.args, len(rows), "config.json")
                    state = hf_bart.fairseq_state_dict(dict(hf), BART_LARGE_CONFIG,
                                                       "model.safetensors")
                else:
                    state = dict(release)
                with caplog.at_level("INFO"):
                    model.load_state_dict(state, strict=True)
    extended = ("extended (random): ['encoder.embed_positions.weight 1026 -> 3074 rows']; "
                "missing: none")
    assert caplog.text.count("initialised HATModel from a pretrained checkpoint: 515 keys loaded; "
                             "new (fresh init) 136:") == 2
    assert caplog.text.count(f"initialised LongBARTModel from a pretrained checkpoint: 515 keys "
                             f"loaded; new (fresh init) 0: []; {extended}") == 2
    assert caplog.text.count(extended) == 4
    small = model_args()  # bart-large's config given to a smaller model: refused, field by field
    with pytest.raises(ValueError, match="d_model is 1024, the model's --encoder-embed-dim is 16"):
        hf_bart.check_config(BART_LARGE_CONFIG, small, 50264, "config.json")


def test_a_directory_the_model_cannot_read_is_one_line(tmp_path, tiny_bart_dir):
    """A fairseq BART folder given as a directory (not its model.pt), and a directory given to a
    model without the hook: errors, never a silent start from random weights."""
    from fairseq.trainer import Trainer

    model = build_model("hat_bart_base", Dictionary.load(str(tiny_bart_dir / "dict.txt")), **DIMS)
    with pytest.raises(ValueError, match=r"is a directory without config.json: .*a fairseq BART "
                                         r"is given by its model.pt file"):
        model.checkpoint_from_directory(str(tiny_bart_dir))

    class Plain:  # a Trainer's model without checkpoint_from_directory
        def get_model(self):
            return torch.nn.Linear(1, 1)

    with pytest.raises(ValueError, match=r"is a directory, and Linear reads checkpoint files only"):
        Trainer.load_checkpoint(Plain(), str(tmp_path))


# -------------------------------------------------------------------- the recipe, end to end
def write_cohan(path: Path, n: int, rng):
    """arXiv layout (article_text: sentences; abstract_text: <S> ... </S>), some non-ASCII."""
    words = WORDS + ("Zürich", "naïve", "—")

    def sentence():
        return " ".join(rng.choice(words) for _ in range(rng.randint(4, 9))) + " ."

    lines = []
    for i in range(n):
        article = [sentence() for _ in range(rng.randint(3, 8))]
        lines.append(json.dumps({"article_id": f"paper.{i}", "article_text": article,
                                 "abstract_text": [f"<S> {article[0]} </S>"], "labels": None,
                                 "section_names": ["introduction"], "sections": [article]}))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def prepared(hf_dirs, tmp_path_factory):
    """examples/hat_arxiv/recipe.sh prepare with the Hugging Face directory as BART_DIR."""
    rng = random.Random(0)
    data = tmp_path_factory.mktemp("hf_arxiv_data")
    for split, n in (("train", 8), ("val", 4), ("test", 4)):
        write_cohan(data / f"{split}.txt", n, rng)
    work = tmp_path_factory.mktemp("hf_arxiv_work")
    log = run_recipe(EXAMPLES / "hat_arxiv" / "recipe.sh", "prepare", data, work,
                     hf_dirs["deduped"], env=dict(MAX_SOURCE="64", MAX_TARGET="24"))
    return dict(data=data, work=work, log=log)


def test_sentence_bos_from_the_hf_directory_alone(prepared, hf_dirs, tiny_bart_dir, tmp_path,
                                                  capsys):
    """--bart-dir HF_DIR writes what the recipe wrote with the derived files, and the same
    dictionary indices as fairseq's own files of the same BPE (the words differ: Hugging Face
    ids there, GPT-2 ids here); --bart-dir with fairseq's folder is its two files."""
    from fairseq_hier.cli.sentence_bos import cli_main

    work, data = prepared["work"], prepared["data"]
    assert (work / "bart_files" / "dict.txt").is_file()
    assert (work / "data-bin" / "dict.source.txt").read_text() == \
        (work / "bart_files" / "dict.txt").read_text()
    common = ["--format", "cohan", "--input", str(data / "test.txt"), "--max-source-positions",
              "64", "--max-target-positions", "24", "--no-progress-bar"]
    assert cli_main([*common, "--output-prefix", str(tmp_path / "hf" / "test"),
                     "--bart-dir", str(hf_dirs["deduped"])]) == 0
    assert cli_main([*common, "--output-prefix", str(tmp_path / "fs" / "test"),
                     "--gpt2-encoder-json", str(tiny_bart_dir / "encoder.json"),
                     "--gpt2-vocab-bpe", str(tiny_bart_dir / "vocab.bpe")]) == 0
    assert cli_main([*common, "--output-prefix", str(tmp_path / "fs_dir" / "test"),
                     "--bart-dir", str(tiny_bart_dir)]) == 0
    for suffix in ("source", "target", "sentences", "ref", "ids"):
        assert (tmp_path / "hf" / f"test.{suffix}").read_text() == \
            (work / "bpe" / f"test.{suffix}").read_text(), suffix
        assert (tmp_path / "fs_dir" / f"test.{suffix}").read_text() == \
            (tmp_path / "fs" / f"test.{suffix}").read_text(), suffix
    capsys.readouterr()
    elsewhere = [*common, "--output-prefix", str(tmp_path / "x"), "--bart-dir", str(tmp_path)]
    assert cli_main([*elsewhere, "--gpt2-vocab-bpe", str(tiny_bart_dir / "vocab.bpe")]) == 1
    assert cli_main(elsewhere) == 1
    prog = "fairseq-hier-sentence-bos: error:"
    assert capsys.readouterr().err.splitlines()[-2:] == [
        f"{prog} --bart-dir replaces --gpt2-encoder-json/--gpt2-vocab-bpe: give one or the other",
        f"{prog} {tmp_path}: neither fairseq's BART files (encoder.json, vocab.bpe) nor Hugging "
        f"Face's (vocab.json, merges.txt)"]
    for suffix in ("sentences", "ref", "ids"):
        assert (tmp_path / "hf" / f"test.{suffix}").read_text() == \
            (tmp_path / "fs" / f"test.{suffix}").read_text(), suffix
    hf_dict = Dictionary.load(str(work / "bart_files" / "dict.txt"))
    fs_dict = Dictionary.load(str(tiny_bart_dir / "dict.txt"))
    for suffix in ("source", "target"):
        hf_lines = (tmp_path / "hf" / f"test.{suffix}").read_text().splitlines()
        fs_lines = (tmp_path / "fs" / f"test.{suffix}").read_text().splitlines()
        assert [hf_dict.encode_line(x, add_if_not_exist=False).tolist() for x in hf_lines] == \
            [fs_dict.encode_line(x, add_if_not_exist=False).tolist() for x in fs_lines]
    assert (tmp_path / "hf" / "test.source").read_text() != \
        (tmp_path / "fs" / "test.source").read_text()  # Hugging Face ids vs GPT-2 ids


@pytest.fixture(scope="module")
def trained(prepared, hf_dirs):
    """examples/hat_arxiv/recipe.sh train from the Hugging Face directory: one update at lr 0."""
    return run_recipe(EXAMPLES / "hat_arxiv" / "recipe.sh", "train", prepared["work"],
                      hf_dirs["deduped"], "hat", *tiny_bart_flags(), "--max-target-positions",
                      "64", "--num-workers", "0", "--seed", "2",
                      env=dict(ARCH="hat_bart_base", UPDATES="1", WARMUP="1", BATCH="4",
                               UPDATE_FREQ="1", LOG_INTERVAL="1", MAX_SOURCE="64", LR="0"))


def test_the_recipe_fine_tunes_from_the_hf_directory(prepared, trained, hf_dirs, tiny_bart_dir,
                                                     bart_state):
    """fairseq-train --finetune-from-model HF_DIR (the recipe's train.sh) at lr 0: the
    checkpoint's BART weights are those fairseq's own layout loads; the keys are logged."""
    hf_dir, work, log = hf_dirs["deduped"], prepared["work"], trained
    assert f"loading pretrained model from {hf_dir}" in log, log[-3000:]
    assert f"read the Hugging Face BART {hf_dir / 'model.safetensors'}" in log
    assert ("initialised HATModel from a pretrained checkpoint: 95 keys loaded; new (fresh init) "
            "36: ['decoder.layers.0.sentence_attn.k_proj.bias'") in log, log[-3000:]
    assert ("extended (random): ['encoder.embed_positions.weight 34 -> 66 rows', "
            "'decoder.embed_positions.weight 34 -> 66 rows']; missing: none; unused: none") in log
    assert f"Loaded checkpoint {hf_dir} (epoch 1 @ 0 updates)" in log
    trained = checkpoint_utils.load_checkpoint_to_cpu(
        str(work / "runs" / "hat" / "checkpoint_last.pt"))["model"]
    model = build_model("hat_bart_base", Dictionary.load(str(tiny_bart_dir / "dict.txt")), **DIMS)
    model.load_state_dict(dict(bart_state))
    loaded = model.state_dict()
    bart_keys = [k for k in loaded if not model._is_new(k)]
    assert len(bart_keys) == 95
    for key in bart_keys:
        if key.endswith("embed_positions.weight"):  # BART's 34 rows (the added ones: random)
            assert torch.equal(trained[key][:34], loaded[key][:34]), key
        else:
            assert torch.equal(trained[key], loaded[key]), key


def test_the_recipe_decodes_with_the_derived_files(prepared, trained, hf_dirs, tiny_bart_dir):
    """examples/hat_arxiv/recipe.sh decode given the Hugging Face directory: fairseq-generate's
    GPT-2 BPE reads the files the prepare step derived, and detokenises every hypothesis as
    BART's own fairseq files do; every test example gets a hypothesis and a score."""
    from fairseq.data.encoders.gpt2_bpe_utils import get_encoder

    work = prepared["work"]
    out = run_recipe(EXAMPLES / "hat_arxiv" / "recipe.sh", "decode", work, hf_dirs["deduped"],
                     "hat",
                     env=dict(BEAM="2", MIN_LEN="1", MAX_LEN="10", BATCH="4", MAX_SOURCE="64"))
    run = work / "runs" / "hat"  # the run folder
    assert f"{run / 'test.rouge.txt'} (protocol ptb): ROUGE-1.5.5 F1" in out, out[-2000:]
    assert "1 ROUGE-1 Average_F" in (run / "test.rouge.txt").read_text()
    assert len((run / "test.hyp").read_text().splitlines()) == 4
    with open(run / "generate-test.txt", encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")  # "\r" may be part of a hypothesis
    hypos, texts = {}, {}  # example id -> H- (dictionary words) / D- (detokenised) field
    for line in lines:
        if line[:2] in ("H-", "D-"):
            ident, _, value = line[2:].split("\t", 2)
            (hypos if line[0] == "H" else texts)[ident] = value
    assert len(hypos) == len(texts) == 4
    fs_dict = Dictionary.load(str(tiny_bart_dir / "dict.txt"))
    bpe = get_encoder(str(tiny_bart_dir / "encoder.json"), str(tiny_bart_dir / "vocab.bpe"))
    for i, ids in hypos.items():  # index -> GPT-2 id through BART's own dict.txt
        text = bpe.decode([int(fs_dict[int(x)]) for x in ids.split()])
        assert text.split("\n")[0] == texts[i]
