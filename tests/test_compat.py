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


def test_distributed_broadcast_loads_checkpoints_and_nothing_else_changes(tmp_path):
    """Ranks > 0 rebuild a broadcast checkpoint with fairseq.distributed.utils' torch.load
    (_broadcast_object_slow); the end-to-end resume of 2 workers is tests/test_distributed.py."""
    import io

    import fairseq.trainer
    from fairseq.distributed import utils as distributed_utils

    buffer = io.BytesIO()
    torch.save({"args": argparse.Namespace(arch="pht"), "model": {"w": torch.ones(2)}}, buffer)
    buffer.seek(0)
    state = distributed_utils.torch.load(buffer, map_location="cpu")  # the call in fairseq
    assert state["args"].arch == "pht" and torch.equal(state["model"]["w"], torch.ones(2))
    # everything else of that module is torch itself
    assert distributed_utils.torch.ByteTensor is torch.ByteTensor
    assert distributed_utils.torch.distributed is torch.distributed
    # scoped: plain torch.load, and fairseq's other modules, keep the safe default
    for load in (torch.load, fairseq.trainer.torch.load):
        buffer.seek(0)
        with pytest.raises(Exception, match="weights_only|Unsupported global"):
            load(buffer)
    assert fairseq.trainer.torch is torch


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
