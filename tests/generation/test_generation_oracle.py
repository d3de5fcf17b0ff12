"""Beam search scores against a teacher-forced oracle: tiny ``transformer``, ``pht`` and
``liu_ht`` checkpoints trained through the real ``fairseq-train``, decoded by the real
``fairseq-generate`` (``--beam 2``, ``--lenpen 1`` and ``0.5``, ``--min-len 4``; our generator
for the hierarchical models, fairseq's for the flat one); for every test example, the
``P-`` line (per-token log-probabilities, base 2, EOS last) and the ``H-`` score must equal a
forward pass of the same checkpoint on the same source with the hypothesis as the target:
``log p(y_t | y_<t, x)`` per token, and ``sum_t log p / len ** lenpen`` with ``len`` counting the
EOS (fairseq's normalisation), to 1e-4."""

import math
import re

import pytest
import torch

from conftest import USER_DIR, run_cli, train_args

ARCHS = {"transformer": (), "pht": (),
         "liu_ht": ("--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2")}
GEN = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--max-paragraphs", "4",
       "--max-paragraph-tokens", "6", "--max-source-positions", "30", "--beam", "2",
       "--max-len-b", "16", "--min-len", "4", "--batch-size", "8",
       "--required-batch-size-multiple", "1", "--num-workers", "0", "--gen-subset", "test"]
TOLERANCE = 1e-4
LOG2 = math.log(2)


@pytest.fixture(scope="module")
def checkpoints(data_bin, tmp_path_factory):
    """arch -> checkpoint path, 12 updates each: a model that ends its summaries itself."""
    out = {}
    for arch, extra in ARCHS.items():
        save = tmp_path_factory.mktemp(f"oracle_{arch}")
        run_cli("fairseq-train", *train_args(data_bin, arch, save, 12, (*extra, "--lr", "5e-3")))
        out[arch] = save / "checkpoint_last.pt"
    return out


def generate(data_bin, path, lenpen):
    """{example id: (hypothesis symbols, H- score, P- scores)} of fairseq-generate's output."""
    text = run_cli("fairseq-generate", data_bin, "--path", path, "--lenpen", str(lenpen),
                   *GEN).stdout
    hyps = {int(i): (h.split(), float(s))
            for i, s, h in re.findall(r"^H-(\d+)\t(\S+)\t(.*)$", text, re.M)}
    positional = {int(i): [float(v) for v in p.split()]
                  for i, p in re.findall(r"^P-(\d+)\t(.*)$", text, re.M)}
    assert sorted(hyps) == sorted(positional) == list(range(8)), text[-2000:]
    return {i: (*hyps[i], positional[i]) for i in hyps}


def load(path, data_bin):
    from fairseq import checkpoint_utils

    import fairseq_hier

    fairseq_hier.register()
    models, _, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(path)], arg_overrides={"data": str(data_bin)})
    task.load_dataset("test")
    return models[0].eval(), task


def teacher_forced(model, task, example, symbols):
    """Per-token natural log-probabilities of ``symbols`` + EOS given test example ``example``."""
    dataset, d = task.dataset("test"), task.target_dictionary
    sample = dataset.collater([dataset[example]])
    target = torch.tensor([[d.index(s) for s in symbols] + [d.eos()]])  # 1 x T
    prev = torch.cat([target.new_full((1, 1), d.eos()), target[:, :-1]], 1)  # EOS first
    net_input = dict(sample["net_input"], prev_output_tokens=prev)
    with torch.no_grad():
        out = model(**net_input)
        lprobs = model.get_normalized_probs(out, log_probs=True)  # 1 x T x V
    return lprobs[0].gather(1, target[0].unsqueeze(1)).squeeze(1).double()  # T


@pytest.mark.parametrize("arch", list(ARCHS))
@pytest.mark.parametrize("lenpen", [1.0, 0.5])
def test_beam_scores_equal_teacher_forced_forward(data_bin, checkpoints, arch, lenpen):
    model, task = load(checkpoints[arch], data_bin)
    hyps = generate(data_bin, checkpoints[arch], lenpen)
    # the model's own EOS ends them (--min-len 4 only forbids an earlier EOS, --max-len-b 16
    # is not reached): the EOS scores are the model's, not forced
    assert all(4 <= len(symbols) < 16 for symbols, _, _ in hyps.values())
    for example, (symbols, score, positional) in hyps.items():
        assert all(s in task.target_dictionary.indices for s in symbols), symbols
        lp = teacher_forced(model, task, example, symbols)  # natural log, EOS included
        assert len(positional) == len(symbols) + 1 == len(lp)
        want = (lp / LOG2).tolist()  # fairseq-generate prints base 2
        assert max(abs(a - b) for a, b in zip(positional, want)) < TOLERANCE, \
            (example, positional, want)
        expected = float(lp.sum()) / len(lp) ** lenpen / LOG2
        assert abs(score - expected) < TOLERANCE, (example, score, expected)
