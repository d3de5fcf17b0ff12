"""HAT (paper 004): parameter counts, sentence positions, the sentence states read by every
decoder layer, initialisation from BART. Masking (zero weight on absent sentences), batch
invariance, incremental decoding with beams (BART's set_beam_size path) and save/load are
tests/models/test_contracts.py's, for every architecture."""

from unittest import mock

import pytest
import torch
from fairseq.models import ARCH_MODEL_REGISTRY
from fairseq.models.transformer import TransformerModel

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import TINY_HAT, bos_source, build_model, make_dict
from fairseq_hier.models.hat import HATModel, sentence_positions

fairseq_hier.register()


build = build_model


def count(arch, **kw):
    # meta tensors: no memory, no time; BART's random init cannot run on them (it copies data)
    with torch.device("meta"), mock.patch("fairseq.models.bart.model.init_bert_params", lambda m: None):
        model = build(arch, make_dict(50265), **kw)
    return sum(p.numel() for p in model.parameters())


def test_parameter_counts_are_the_papers():
    """004 Sec. 3: 471M (HAT) vs 408M (plain), BART's dictionary, 3072 source positions."""
    assert ARCH_MODEL_REGISTRY["hat_bart_large"] is HATModel
    plain = count("bart_large", max_source_positions=3072)
    hat = count("hat_bart_large")
    assert plain == 408_388_608 and round(plain / 1e6) == 408
    assert hat == 471_390_208 and round(hat / 1e6) == 471
    c, ffn = 1024, 4096
    attention, norm = 4 * (c * c + c), 2 * c
    encoder_layer = attention + norm + (c * ffn + ffn + ffn * c + c) + norm
    assert hat - plain == encoder_layer + 12 * (attention + norm)  # 63,001,600


HAT_EN_DE, PLAIN_EN_DE = 255_116_288, 217_317_376  # difference 37,798,912 (paper: 260M - 222M)
HAT_ZH_EN, PLAIN_ZH_EN = 60_435_968, 52_023_296  # difference 8,412,672 (paper: 64M - 55M)


@pytest.mark.parametrize("hat,plain,c,ffn,counts", [
    ("hat_transformer_wmt_en_de", "transformer_wmt_en_de_big", 1024, 4096, (HAT_EN_DE, PLAIN_EN_DE)),
    ("hat_transformer_iwslt_zh_en", "transformer_iwslt_zh_en", 512, 1024, (HAT_ZH_EN, PLAIN_ZH_EN))])
def test_translation_presets_add_the_papers_parameters(hat, plain, c, ffn, counts):
    """004 Sec. 4.2: 260M vs 222M (En-De), 64M vs 55M (Zh-En); ours with a 40k joint vocabulary and
    shared embeddings (the recipes'): the differences (37.8M, 8.4M) are the design's."""
    def mt_count(arch):
        with torch.device("meta"):
            model = build(arch, make_dict(40000), share_all_embeddings=True)
        return sum(p.numel() for p in model.parameters())

    assert ARCH_MODEL_REGISTRY[plain] is TransformerModel  # fairseq's own model, our preset
    assert (mt_count(hat), mt_count(plain)) == counts
    attention, norm = 4 * (c * c + c), 2 * c
    encoder_layer = attention + norm + (c * ffn + ffn + ffn * c + c) + norm
    assert counts[0] - counts[1] == encoder_layer + 6 * (attention + norm)


def test_sentence_positions_in_order_with_padding():
    bos = 0
    src = torch.tensor([[1, 1, 0, 5, 6, 0, 7, 2],   # left-padded: BOS at 2 and 5
                        [0, 5, 0, 6, 0, 7, 8, 2]])  # BOS at 0, 2, 4
    positions, mask = sentence_positions(src, bos)
    assert positions.tolist() == [[2, 5, 0], [0, 2, 4]]
    assert mask.tolist() == [[False, False, True], [False, False, False]]
    with pytest.raises(ValueError, match="source 1 of the batch has no BOS"):
        sentence_positions(torch.tensor([[0, 5, 2], [5, 6, 2]]), bos)


D = make_dict(30)
TINY = TINY_HAT


@pytest.fixture(scope="module", params=["hat_bart_base", "hat_transformer_iwslt_zh_en",
                                        "hat_transformer_wmt_en_de"])
def model(request):
    """HAT on BART (learned positions, beamable attention) and on fairseq's Transformer."""
    torch.manual_seed(0)
    return build(request.param, D, **TINY).eval()


sentences = bos_source  # D: bos 0, pad 1, eos 2


def test_every_decoder_layer_reads_the_sentence_states(model):
    """The hierarchical path is live: perturbing a present sentence state changes the output,
    and so does each layer's sentence sublayer."""
    src, prev = sentences(3, 4)[None], torch.tensor([[D.eos(), 11, 12]])
    out = model.encoder(src, None)
    with torch.no_grad():
        clean, _ = model.decoder(prev, encoder_out=out)
        moved = dict(out, sentence_out=[out["sentence_out"][0] + 1.0])
        assert (model.decoder(prev, encoder_out=moved)[0] - clean).abs().max() > 1e-3
        gen = torch.Generator().manual_seed(0)
        for layer in model.decoder.layers:
            bias = layer.sentence_attn.out_proj.bias
            saved = bias.clone()
            try:  # the model is shared by the module's tests: put the bias back whatever happens
                # a seeded, non-constant shift (a constant would be normalised away)
                bias += torch.randn(saved.shape, generator=gen, dtype=saved.dtype)
                changed = model.decoder(prev, encoder_out=out)[0]
            finally:
                bias.copy_(saved)
            assert (changed - clean).abs().max() > 1e-3


# ------------------------------------------------------------------ initialisation from BART
BART_DIMS = dict(TINY, max_source_positions=32, max_target_positions=32)


def tiny_bart_checkpoint(folder, d=D):
    """A randomly initialised BART in fairseq's real layout: fairseq's own ``bart`` model
    (``bart_base`` family at tiny dims, 32 positions -> 34-row tables), saved as fairseq saves
    checkpoints (``{"args", "model", ...}`` via ``torch_persistent_save``), plus its dict.txt."""
    from fairseq import checkpoint_utils

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1)
    bart = build("bart_base", d, **BART_DIMS)
    # the full training namespace a fairseq run stores (bart.large's model.pt keeps "args")
    from fairseq import options

    flags = [f"--{k.replace('_', '-')}={v}" for k, v in BART_DIMS.items()]
    args = options.parse_args_and_arch(options.get_training_parser(), [
        str(folder), "--task", "translation", "--arch", "bart_base", *flags])
    state = {"args": args, "model": bart.state_dict(), "extra_state": {"epoch": 1},
             "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                    "optimizer_name": "FairseqAdam",
                                    "lr_scheduler_state": {"best": None}, "num_updates": 500000}]}
    checkpoint_utils.torch_persistent_save(state, str(folder / "model.pt"))
    d.save(str(folder / "dict.txt"))
    return bart


def test_extend_positions_tiles_or_keeps_the_fresh_rows():
    from fairseq_hier.models.hat import extend_positions

    table = torch.arange(6.0)[:, None].repeat(1, 2)  # rows 0-1 offset, 4 real positions
    fresh = -torch.arange(12.0)[:, None].repeat(1, 2)
    out = extend_positions(table, fresh, "tile")
    assert out[:, 0].tolist() == [0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3]
    out = extend_positions(table, fresh, "random")
    assert out[:, 0].tolist() == [0, 1, 2, 3, 4, 5, -6, -7, -8, -9, -10, -11]
    with pytest.raises(ValueError, match="cannot shrink a position table from 6 to 4 rows"):
        extend_positions(table, fresh[:4])
    with pytest.raises(ValueError, match="--position-init must be one of random, tile, got 'x'"):
        extend_positions(table, fresh, "x")


@pytest.mark.parametrize("arch", ["hat_bart_base", "long_bart_base"])
def test_bart_weights_load_by_name_and_positions_extend(tmp_path, arch, caplog):
    bart = tiny_bart_checkpoint(tmp_path)
    from fairseq import checkpoint_utils

    state = checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "model.pt"))["model"]
    torch.manual_seed(2)
    model = build(arch, D, **dict(TINY, max_source_positions=64))
    fresh = {k: v.clone() for k, v in model.state_dict().items()}
    with caplog.at_level("INFO"):
        model.load_state_dict(state, strict=True)
    loaded = model.state_dict()
    for key, value in bart.state_dict().items():
        if key.endswith("embed_positions.weight"):  # encoder and decoder: 32 -> 64 positions
            assert loaded[key].shape == (66, 16)
            torch.testing.assert_close(loaded[key][:34], value)
            # --position-init random (the default): the model's own fresh rows beyond BART's
            torch.testing.assert_close(loaded[key][34:66], fresh[key][34:66], atol=0, rtol=0)
        else:
            torch.testing.assert_close(loaded[key], value, atol=0, rtol=0)
    new = sorted(k for k in loaded if k not in bart.state_dict())
    for key in new:  # the fresh initialisation is kept
        torch.testing.assert_close(loaded[key], fresh[key], atol=0, rtol=0)
    if arch == "hat_bart_base":
        assert len(new) == 16 + 2 * 10  # hierarchical layer; per decoder layer 4 x (w, b) + LN
    else:
        assert new == []
    log = caplog.text
    assert ("extended (random): ['encoder.embed_positions.weight 34 -> 66 rows', "
            "'decoder.embed_positions.weight 34 -> 66 rows']; missing: none; unused: none") in log
    assert f"new (fresh init) {len(new)}:" in log


def test_a_checkpoint_that_does_not_fit_is_an_error_naming_keys(tmp_path):
    tiny_bart_checkpoint(tmp_path)
    from fairseq import checkpoint_utils

    state = checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "model.pt"))["model"]
    del state["decoder.layers.0.fc1.weight"]
    state["encoder.extra.weight"] = torch.zeros(1)
    model = build("hat_bart_base", D, **TINY)
    with pytest.raises(ValueError, match=r"missing keys \['decoder.layers.0.fc1.weight'\]; "
                                         r"unused keys \['encoder.extra.weight'\]"):
        model.load_state_dict(state, strict=True)
    state = checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "model.pt"))["model"]
    state["encoder.layers.0.fc1.weight"] = torch.zeros(3, 3)
    with pytest.raises(ValueError, match=r"encoder.layers.0.fc1.weight has shape \(3, 3\), "
                                         r"the model \(32, 16\)"):
        build("hat_bart_base", D, **TINY).load_state_dict(state, strict=True)


def test_train_from_bart_and_generate_through_the_clis(tmp_path):
    """fairseq-preprocess with BART's dict.txt -> fairseq-train --restore-file (the tiny BART
    written in fairseq's layout) for hat_bart_base and its plain baseline -> fairseq-generate."""
    from conftest import USER_DIR, run_cli

    tiny_bart_checkpoint(tmp_path / "bart")
    raw = tmp_path / "raw"
    raw.mkdir()
    rng = torch.Generator().manual_seed(0)
    for split, n in (("train", 16), ("valid", 4)):
        src, tgt = [], []
        for _ in range(n):
            count = int(torch.randint(1, 4, (1,), generator=rng))
            sents = [" ".join(f"w{int(w)}" for w in torch.randint(0, 26, (5,), generator=rng))
                     for _ in range(count)]
            src.append(" ".join(f"<s> {s}" for s in sents))  # a BOS opens every sentence
            tgt.append(sents[0])
        (raw / f"{split}.src").write_text("\n".join(src) + "\n")
        (raw / f"{split}.tgt").write_text("\n".join(tgt) + "\n")
    bart_dict = tmp_path / "bart" / "dict.txt"
    run_cli("fairseq-preprocess", "--source-lang", "src", "--target-lang", "tgt",
            "--trainpref", raw / "train", "--validpref", raw / "valid", "--destdir",
            tmp_path / "bin", "--srcdict", bart_dict, "--tgtdict", bart_dict, "--workers", "1")
    dims = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()]
    for arch in ("hat_bart_base", "long_bart_base"):
        save = tmp_path / arch
        log = run_cli("fairseq-train", tmp_path / "bin", "--user-dir", USER_DIR, "--task",
                      "translation", "--arch", arch, *dims, "--restore-file",
                      tmp_path / "bart" / "model.pt", "--reset-optimizer", "--reset-dataloader",
                      "--reset-meters", "--reset-lr-scheduler", "--optimizer", "adam", "--lr",
                      "1e-4", "--max-update", "2", "--batch-size", "4", "--criterion",
                      "label_smoothed_cross_entropy", "--label-smoothing", "0.1", "--save-dir",
                      save, "--no-progress-bar", "--log-interval", "1", "--num-workers", "0",
                      "--no-epoch-checkpoints").stdout
        assert ("'encoder.embed_positions.weight 34 -> 66 rows', "
                "'decoder.embed_positions.weight 34 -> 66 rows']") in log, log[-3000:]
        assert f"Loaded checkpoint {tmp_path / 'bart' / 'model.pt'}" in log
        assert "num_updates=2" in log.replace(" ", "") or "num_updates 2" in log, log[-2000:]
        out = run_cli("fairseq-generate", tmp_path / "bin", "--user-dir", USER_DIR, "--task",
                      "translation", "--path", save / "checkpoint_last.pt", "--gen-subset",
                      "valid", "--beam", "2", "--max-len-b", "6", "--batch-size", "4").stdout
        assert len([line for line in out.splitlines() if line.startswith("H-")]) == 4, out[-2000:]
