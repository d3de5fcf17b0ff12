"""preprocess -> train -> generate through the real fairseq CLIs, for pht, vht, liu_ht and
transformer on one data-bin; resume from checkpoint_last.pt; checkpoints load on torch >= 2.6."""

import re
import shutil

import pytest
import torch

from conftest import USER_DIR, run_cli, train_args

GEN = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--max-paragraphs", "4",
       "--max-paragraph-tokens", "6", "--max-source-positions", "30", "--beam", "5",
       "--no-repeat-ngram-size", "3", "--max-len-b", "12", "--batch-size", "8",
       "--required-batch-size-multiple", "1", "--num-workers", "0"]

# liu_ht with the small model's single encoder layer made global; its decoder stays the small one
LIU_HT_LAYERS = {"liu_ht": ["--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2"]}


@pytest.fixture(scope="module")
def trained(data_bin, tmp_path_factory):
    out = {}
    for arch in ("pht", "vht", "liu_ht", "transformer"):
        save = tmp_path_factory.mktemp(f"ck_{arch}")
        log = run_cli("fairseq-train", *train_args(data_bin, arch, save, 5, LIU_HT_LAYERS.get(arch, ()))
                      ).stdout
        out[arch] = (save, log)
    return out


@pytest.mark.parametrize("arch,layout", [("pht", "hierarchical"), ("vht", "hierarchical"),
                                         ("liu_ht", "hierarchical"), ("transformer", "flat")])
def test_train_and_generate(data_bin, trained, arch, layout):
    save, log = trained[arch]
    assert f"source layout: {layout}" in log
    assert "num_updates 5" in log
    gen = run_cli("fairseq-generate", data_bin, "--path", save / "checkpoint_last.pt", *GEN).stdout
    hyps = {int(m.group(1)): m.group(2) for m in re.finditer(r"^H-(\d+)\t\S+\t(.*)$", gen, re.M)}
    assert sorted(hyps) == list(range(8)), "one hypothesis per test example"
    assert all(len(h.split()) <= 12 for h in hyps.values())
    for h in hyps.values():  # trigram blocking
        toks = h.split()
        grams = [tuple(toks[i:i + 3]) for i in range(len(toks) - 2)]
        assert len(grams) == len(set(grams))


def test_hierarchical_source_is_reported_with_paragraph_cuts(trained):
    _, log = trained["pht"]
    m = re.search(r"\[train\] 48 examples; hierarchical cut to 4 paragraphs x 6 tokens: "
                  r"(\d+) examples cut, (\d+) paragraphs cut, (\d+) tokens cut", log)
    assert m and int(m.group(1)) > 0 and int(m.group(3)) > 0


def test_resume_continues_at_same_update_with_same_parameters(data_bin, tmp_path):
    """4 updates, stop, resume to 8 == 8 updates in one go (fairseq seeds each update)."""
    straight, split = tmp_path / "straight", tmp_path / "split"
    run_cli("fairseq-train", *train_args(data_bin, "pht", straight, 8))
    run_cli("fairseq-train", *train_args(data_bin, "pht", split, 4))
    saved4 = torch.load(split / "checkpoint_last.pt", weights_only=False)["model"]
    shutil.copy(split / "checkpoint_last.pt", tmp_path / "ck4.pt")
    log = run_cli("fairseq-train", *train_args(data_bin, "pht", split, 8)).stdout
    assert re.search(r"Loaded checkpoint .*checkpoint_last\.pt \(epoch \d+ @ 4 updates\)", log)
    assert "num_updates 8" in log
    a = torch.load(straight / "checkpoint_last.pt", weights_only=False)["model"]
    b = torch.load(split / "checkpoint_last.pt", weights_only=False)["model"]
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=1e-6, rtol=1e-5, msg=k)
    # the resumed run really started from the saved parameters, not from scratch
    assert any(not torch.equal(saved4[k], b[k]) for k in b)
