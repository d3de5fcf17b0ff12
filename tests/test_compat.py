"""The fixes of fairseq_hier.compat: checkpoint loading on torch >= 2.6 (scoped to fairseq's
checkpoint_utils) and fairseq's CPU n-gram blocking."""

import argparse

import pytest
import torch

import fairseq_hier  # noqa: F401  (applies the fixes)
from fairseq import checkpoint_utils
from fairseq.ngram_repeat_block import NGramRepeatBlock


def test_fairseq_checkpoints_load_but_torch_load_stays_safe(tmp_path):
    path = tmp_path / "ck.pt"
    torch.save({"args": argparse.Namespace(arch="pht"), "model": {"w": torch.ones(2)}}, path)
    # the torch.load that load_checkpoint_to_cpu / load_ema_from_checkpoint call (the full path
    # is exercised by fairseq-generate and resumed fairseq-train in test_end_to_end.py)
    state = checkpoint_utils.torch.load(str(path), map_location="cpu")
    assert state["args"].arch == "pht"
    # not a process-wide switch: plain torch.load keeps the weights_only=True default
    with pytest.raises(Exception, match="weights_only|Unsupported global"):
        torch.load(path)


def brute_force_banned(seq, n):
    banned = set()
    for i in range(len(seq) - n + 1):
        if tuple(seq[i:i + n - 1]) == tuple(seq[len(seq) - n + 1:]):
            banned.add(seq[i + n - 1])
    return banned


@pytest.mark.parametrize("n", [2, 3])
def test_ngram_blocking_bans_exactly_the_repeating_tokens(n):
    g = torch.Generator().manual_seed(0)
    k, vocab, step, max_len = 6, 5, 9, 15
    tokens = torch.full((k, max_len + 2), 1)  # pad-filled buffer beyond `step`, like fairseq's
    tokens[:, : step + 1] = torch.randint(0, vocab, (k, step + 1), generator=g)
    lprobs = torch.zeros(k, vocab)
    out = NGramRepeatBlock(n, use_extension=False)(tokens, lprobs, bsz=2, beam_size=3, step=step)
    for row in range(k):
        expected = brute_force_banned(tokens[row, : step + 1].tolist(), n)
        got = set(torch.nonzero(torch.isinf(out[row])).view(-1).tolist())
        assert got == expected
    assert any(brute_force_banned(tokens[r, : step + 1].tolist(), n) for r in range(k))


@pytest.mark.parametrize("n,max_sentences,multiple", [(20, 8, 8), (7, 4, 8), (33, 3, 4), (1, 2, 2)])
def test_batching_keeps_every_example(n, max_sentences, multiple):
    """fairseq-fixed's compiled batch_by_size drops the last partial batch; ours keeps it."""
    import numpy as np
    from fairseq.data import data_utils

    batches = data_utils.batch_by_size(np.arange(n, dtype=np.int64), lambda i: 10,
                                       num_tokens_vec=np.full(n, 10, dtype=np.int64),
                                       max_sentences=max_sentences,
                                       required_batch_size_multiple=multiple)
    assert sorted(np.concatenate(batches).tolist()) == list(range(n))
    assert all(len(b) <= max_sentences for b in batches)
    full = [len(b) for b in batches[:-1]]
    assert all(k % multiple == 0 or k == max_sentences for k in full)
