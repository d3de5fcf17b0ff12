"""Attention-prediction model of 001 Sec. 4.2.1: dataset, model, criterion, task, and the real CLIs.
The model's masking (exactly 0 at absent paragraphs, whatever they hold), batch invariance and
save/load are tests/models/test_contracts.py's, for every architecture.

Small but distinct sizes (B=3, P in {2, 4, 5}, C=8 / 16) so that a wrong transpose fails.
"""

import json
import re
import shutil

import numpy as np
import pytest
import torch
from conftest import USER_DIR, run_cli
from omegaconf import OmegaConf

import fairseq_hier  # noqa: F401  (registers task, model, criterion)
from fairseq_hier.criterions.attention_mse import AttentionMSECriterion
from fairseq_hier.data.attention_prediction_dataset import AttentionPredictionDataset, load_split
from fairseq_hier.errors import HierError
from fairseq_hier.preparation.attention_labels import AttentionLabelWriter, write_meta
from fairseq_hier.models.attention_predictor import (
    AttentionPredictorConfig,
    AttentionPredictorModel,
)
from fairseq_hier.tasks.attention_prediction import (
    AttentionPredictionConfig,
    AttentionPredictionTask,
)

C = 16
SMALL_PREDICTOR = ["--input-dim", str(C), "--encoder-layers", "1", "--encoder-attention-heads", "2",
                   "--encoder-ffn-embed-dim", "32", "--dropout", "0.0"]


def write_labels(folder, sizes=(("train", 64), ("valid", 16)), c=C, p_range=(2, 6), seed=0):
    """Synthetic label dir; eta = softmax over paragraphs of a fixed linear function of phi."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(c, generator=g) * (2.0 / c ** 0.5)
    for split, n in sizes:
        writer = AttentionLabelWriter(str(folder), split, c)
        for _ in range(n):
            p = int(torch.randint(p_range[0], p_range[1] + 1, (1,), generator=g))
            # round through float16 first: the file stores phi as float16
            phi = torch.randn(p, c, generator=g).half().float()
            writer.add(phi, torch.softmax(phi @ w, dim=0))
        writer.finalize()
    write_meta(str(folder), {"embed_dim": c, "splits": dict(sizes)})
    return folder


def build_model(input_dim=8, layers=2, heads=2, ffn=16, dropout=0.0):
    cfg = AttentionPredictorConfig(input_dim=input_dim, encoder_layers=layers,
                                   encoder_attention_heads=heads, encoder_ffn_embed_dim=ffn,
                                   dropout=dropout)
    torch.manual_seed(0)
    return AttentionPredictorModel.build_model(cfg, task=None).eval()


def mask_of(lengths, num_p):
    return torch.arange(num_p)[None, :] >= torch.tensor(lengths)[:, None]  # B x P


# ---------------------------------------------------------------------- (a) dataset / collater
def test_collater_pads_and_masks(tmp_path):
    lengths = [4, 2, 5]
    g = torch.Generator().manual_seed(1)
    writer = AttentionLabelWriter(str(tmp_path), "train", 8)
    phis, etas = [], []
    for p in lengths:
        phi = torch.randn(p, 8, generator=g).half().float()
        eta = torch.softmax(torch.randn(p, generator=g), 0)
        writer.add(phi, eta)
        phis.append(phi)
        etas.append(eta)
    writer.finalize()
    write_meta(str(tmp_path), {"embed_dim": 8})
    ds = AttentionPredictionDataset(*load_split(str(tmp_path), "train"), split="train",
                                    shuffle=False)

    assert ds.sizes.tolist() == lengths and ds.num_tokens(2) == 5 and ds.size(1) == 2
    assert ds[0]["phi"].shape == (4, 8) and ds[0]["eta"].shape == (4,)
    batch = ds.collater([ds[i] for i in range(3)])
    net_input = batch["net_input"]
    phi, mask = net_input["paragraph_embeddings"], net_input["paragraph_padding_mask"]
    assert phi.shape == (3, 5, 8) and phi.dtype == torch.float32
    assert mask.dtype == torch.bool and torch.equal(mask, mask_of(lengths, 5))
    assert batch["target"].shape == (3, 5)
    assert batch["id"].tolist() == [0, 1, 2]
    assert batch["nsentences"] == 3 and batch["ntokens"] == sum(lengths)
    for i, p in enumerate(lengths):
        assert torch.equal(phi[i, :p], phis[i])
        assert torch.allclose(batch["target"][i, :p], etas[i])
    assert phi[mask].abs().sum() == 0 and batch["target"][mask].abs().sum() == 0
    assert ds.collater([]) == {}
    # order: by number of paragraphs; filtering: more paragraphs than allowed
    assert ds.sizes[ds.ordered_indices()].tolist() == sorted(lengths)
    kept, ignored = ds.filter_indices_by_size(np.arange(3), 4)
    assert kept.tolist() == [0, 1] and ignored == [2]
    assert ds.filter_indices_by_size(np.arange(3), None)[0].tolist() == [0, 1, 2]


# ---------------------------------------------------------------------- (b) model
def test_paper_defaults():
    cfg = AttentionPredictorConfig()
    assert (cfg.input_dim, cfg.encoder_layers, cfg.encoder_attention_heads,
            cfg.encoder_ffn_embed_dim, cfg.dropout) == (256, 2, 4, 1024, 0.5)
    model = AttentionPredictorModel.build_model(cfg, task=None)
    layer = model.layers[0]
    assert len(model.layers) == 2 and not layer.normalize_before  # post-LN
    assert layer.self_attn.num_heads == 4 and layer.fc1.out_features == 1024
    assert layer.dropout_module.p == 0.5
    out = model.eval()(torch.randn(2, 3, 256), mask_of([3, 1], 3))
    assert out.shape == (2, 3) and out[1, 0].item() == pytest.approx(1.0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_float_inputs_follow_the_model_dtype(dtype):
    """--fp16 / --bf16 cast the model, and fairseq-validate serves Phi as float32 (without the
    cast: ``expected mat1 and mat2 to have the same dtype``)."""
    model = build_model()
    lengths = [4, 2, 5]
    phi = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(2))  # float32
    mask = mask_of(lengths, 5)
    reference = model(phi, mask)
    eta_hat = model.to(dtype)(phi, mask)
    assert eta_hat.dtype == dtype
    assert torch.all(eta_hat[mask] == 0)
    assert torch.allclose(eta_hat.float(), reference, atol=2e-2)
    assert torch.allclose(eta_hat.float().sum(-1), torch.ones(3), atol=2e-2)


def test_model_shape_errors():
    model = build_model(input_dim=8)
    with pytest.raises(ValueError, match=r"B x P x 8 .*--input-dim 8.*\(2, 3, 6\)"):
        model(torch.randn(2, 3, 6), torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"paragraph_padding_mask must be B x P"):
        model(torch.randn(2, 3, 8), torch.zeros(2, 4, dtype=torch.bool))


def test_registered_names_map_to_our_classes():
    from fairseq.criterions import CRITERION_REGISTRY
    from fairseq.models import ARCH_MODEL_REGISTRY, MODEL_REGISTRY
    from fairseq.tasks import TASK_REGISTRY

    assert MODEL_REGISTRY["attention_predictor"] is AttentionPredictorModel
    assert ARCH_MODEL_REGISTRY["attention_predictor"] is AttentionPredictorModel
    assert TASK_REGISTRY["attention_prediction"] is AttentionPredictionTask
    assert CRITERION_REGISTRY["attention_mse"] is AttentionMSECriterion


# ---------------------------------------------------------------------- (c) criterion
class StubModel(torch.nn.Module):
    def __init__(self, eta_hat):
        super().__init__()
        self.eta_hat = eta_hat

    def forward(self, paragraph_embeddings, paragraph_padding_mask):
        return self.eta_hat


def test_criterion_by_hand():
    from fairseq import metrics

    # example 0: 2 paragraphs, example 1: 3 paragraphs
    eta_hat = torch.tensor([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    target = torch.tensor([[1.0, 0.0, 0.0], [0.2, 0.5, 0.3]])
    mask = torch.tensor([[False, False, True], [False, False, False]])
    sample = {"net_input": {"paragraph_embeddings": torch.zeros(2, 3, 4),
                            "paragraph_padding_mask": mask},
              "target": target, "nsentences": 2, "ntokens": 5}
    crit = AttentionMSECriterion(task=None, mse_scale=100.0)
    loss, sample_size, log = crit(StubModel(eta_hat), sample)

    sq_sum = 0.25 + 0.25 + 0.0 + 0.04 + 0.04  # = 0.58
    cos0 = 0.5 / (0.5 ** 0.5 * 1.0)
    cos1 = (0.04 + 0.15 + 0.15) / ((0.04 + 0.09 + 0.25) ** 0.5 * (0.04 + 0.25 + 0.09) ** 0.5)
    assert sample_size == 5
    assert loss.item() == pytest.approx(100 * sq_sum, rel=1e-6)
    assert log["mse_sum"] == pytest.approx(sq_sum, rel=1e-6)
    assert log["cos_sum"] == pytest.approx(cos0 + cos1, rel=1e-6)
    assert (log["nsentences"], log["ntokens"], log["sample_size"]) == (2, 5, 5)

    with metrics.aggregate(new_root=True) as agg:
        AttentionMSECriterion.reduce_metrics([log, log])  # summed logs of two workers
        values = agg.get_smoothed_values()
    assert values["loss"] == pytest.approx(100 * sq_sum / 5, abs=1e-6)
    assert values["mse"] == pytest.approx(sq_sum / 5, abs=1e-6)
    assert values["cos"] == pytest.approx((cos0 + cos1) / 2, abs=1e-6)
    assert AttentionMSECriterion.logging_outputs_can_be_summed()

    unreduced, _, _ = crit(StubModel(eta_hat), sample, reduce=False)  # B x P
    assert unreduced.shape == (2, 3) and unreduced[0, 2] == 0
    assert unreduced.sum().item() == pytest.approx(100 * sq_sum, rel=1e-6)

    # the default is plain MSE (the paper; the authors' final code, att-aware PreAtt.cal_loss)
    from fairseq_hier.criterions.attention_mse import AttentionMSEConfig

    assert AttentionMSEConfig().mse_scale == 1.0
    plain = AttentionMSECriterion(task=None)
    assert plain.mse_scale == 1.0
    loss, _, log = plain(StubModel(eta_hat), sample)
    assert loss.item() == pytest.approx(sq_sum, rel=1e-6) and log["loss"] == log["mse_sum"]

    # a bf16 model: the error is computed in float32 from its (bf16) output
    eta_bf16 = eta_hat.to(torch.bfloat16)
    loss, _, log = plain(StubModel(eta_bf16), sample)
    expected = ((eta_bf16.float() - target).pow(2) * ~mask).sum().item()
    assert loss.dtype == torch.float32 and loss.item() == pytest.approx(expected, rel=1e-6)


# ---------------------------------------------------------------------- task
def test_task_checks_embed_dim_and_files(tmp_path):
    labels = write_labels(tmp_path / "labels", sizes=(("train", 3),))
    task = AttentionPredictionTask.setup_task(AttentionPredictionConfig(data=str(labels)))
    assert task.source_dictionary is None and task.target_dictionary is None
    task.load_dataset("train")
    assert len(task.dataset("train")) == 3
    with pytest.raises(HierError, match=r"valid\.phi"):
        task.load_dataset("valid")
    model_cfg = OmegaConf.structured(AttentionPredictorConfig(input_dim=8))
    model_cfg._name = "attention_predictor"
    with pytest.raises(ValueError, match=r"--input-dim 8 .*embed_dim 16 .*meta\.json"):
        task.build_model(model_cfg)
    # no label directory here: nothing to check, the model builds
    no_labels = AttentionPredictionConfig(data=str(tmp_path / "x"))
    missing = AttentionPredictionTask.setup_task(no_labels)
    assert isinstance(missing.build_model(model_cfg), AttentionPredictorModel)


# ---------------------------------------------------------------------- (d) real CLIs
def valid_metrics(log):
    """{epoch: {metric: value}} from fairseq-train's json valid lines."""
    out = {}
    for line in log.splitlines():
        m = re.search(r"(\{\"epoch\".*\"valid_loss\".*\})", line)
        if m:
            d = json.loads(m.group(1))
            out[int(d["epoch"])] = {k[len("valid_"):]: float(v) for k, v in d.items()
                                    if k.startswith("valid_")}
    return out


def predict(ckpt, phi, mask):
    from fairseq import checkpoint_utils

    models, _ = checkpoint_utils.load_model_ensemble([str(ckpt)])
    model = models[0].eval()
    assert isinstance(model, AttentionPredictorModel)
    with torch.no_grad():
        return model(phi, mask)


def test_train_validate_and_load_without_labels(tmp_path):
    labels = write_labels(tmp_path / "labels")
    save = tmp_path / "ckpt"
    epochs = 30  # 120 updates, ~2 s; valid mse falls from ~0.068 to ~0.016
    log = run_cli(
        "fairseq-train", labels, "--user-dir", USER_DIR, "--task", "attention_prediction",
        "--arch", "attention_predictor", "--criterion", "attention_mse", *SMALL_PREDICTOR,
        "--optimizer", "adam", "--lr", "1e-3", "--max-epoch", epochs, "--batch-size", "16",
        "--num-workers", "0", "--save-dir", save, "--no-progress-bar", "--log-format", "json",
        "--log-interval", "1", "--seed", "3", "--no-epoch-checkpoints",
    ).stdout
    valid = valid_metrics(log)
    assert sorted(valid) == list(range(1, epochs + 1)), log[-3000:]
    assert {"loss", "mse", "cos"} <= set(valid[1])
    assert valid[epochs]["mse"] < 0.75 * valid[1]["mse"], valid
    assert valid[epochs]["cos"] > valid[1]["cos"], valid
    # the logged loss is mse_scale x mse; by default plain MSE
    assert valid[1]["loss"] == pytest.approx(valid[1]["mse"], rel=1e-3)

    ckpt = save / "checkpoint_best.pt"
    out = run_cli("fairseq-validate", labels, "--user-dir", USER_DIR, "--task",
                  "attention_prediction", "--path", ckpt, "--batch-size", "16",
                  "--num-workers", "0", "--valid-subset", "valid").stdout
    m = re.search(r"valid on 'valid' subset \| loss ([\d.]+) \| mse ([\d.]+) \| cos ([\d.]+)", out)
    assert m, out[-3000:]
    best = min(v["mse"] for v in valid.values())
    assert float(m.group(2)) == pytest.approx(best, abs=2e-6)

    # --bf16: the model is loaded in bfloat16 and float32 Phi follows it (without the cast it died with
    # "expected m1 and m2 to have the same dtype"); bf16 rounding moves the mse a little
    out = run_cli("fairseq-validate", labels, "--user-dir", USER_DIR, "--task",
                  "attention_prediction", "--path", ckpt, "--batch-size", "16",
                  "--num-workers", "0", "--valid-subset", "valid", "--bf16", check=False).stdout
    assert "1 model(s) loaded in torch.bfloat16" in out, out[-3000:]
    m16 = re.search(r"valid on 'valid' subset \| loss ([\d.]+) \| mse ([\d.]+) \| cos ([\d.]+)",
                    out)
    assert m16, out[-3000:]
    assert float(m16.group(2)) != float(m.group(2))
    assert float(m16.group(2)) == pytest.approx(float(m.group(2)), rel=2e-2)
    assert float(m16.group(3)) == pytest.approx(float(m.group(3)), rel=2e-2)

    g = torch.Generator().manual_seed(7)
    phi = torch.randn(2, 4, C, generator=g)
    mask = mask_of([4, 3], 4)
    before = predict(ckpt, phi, mask)
    shutil.rmtree(labels)
    after = predict(ckpt, phi, mask)
    assert torch.equal(before, after)
    assert torch.all(after[mask] == 0) and torch.allclose(after.sum(-1), torch.ones(2), atol=1e-6)
