"""The fixes of fairseq_hier.compat: safe checkpoint loading (scoped to fairseq's
checkpoint_utils and distributed broadcast; the console-script tests are
tests/house/test_safe_loading.py) and fairseq's CPU n-gram blocking."""

import argparse
import os

import pytest
import torch

import fairseq_hier  # noqa: F401  (applies the fixes)
from fairseq import checkpoint_utils
from fairseq.ngram_repeat_block import NGramRepeatBlock
from fairseq_hier.errors import HierError

# the smallest dict fairseq's loader reads: weights, options, optimizer history, extra state
MINIMAL = {"args": argparse.Namespace(arch="pht"), "model": {"w": torch.ones(2)},
           "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                  "optimizer_name": "FairseqAdam", "num_updates": 0,
                                  "lr_scheduler_state": {"best": None}}],
           "extra_state": {"epoch": 1}}


class RunsCode:
    """Unpickled, it would call os.getpid (a harmless stand-in for os.system)."""

    def __reduce__(self):
        return (os.getpid, ())


def test_fairseq_checkpoints_load_safely_and_torch_load_keeps_its_default(tmp_path):
    path = tmp_path / "ck.pt"
    torch.save(MINIMAL, path)
    before = set(torch.serialization.get_safe_globals())
    # the torch.load that load_checkpoint_to_cpu / load_ema_from_checkpoint call (the full path
    # is exercised by fairseq-generate and resumed fairseq-train in test_end_to_end.py)
    with open(path, "rb") as f:
        state = checkpoint_utils.torch.load(f, map_location="cpu")
    assert state["args"].arch == "pht"
    # the allow list is scoped to that call: plain torch.load keeps torch's weights_only default
    assert set(torch.serialization.get_safe_globals()) == before
    with pytest.raises(Exception, match="weights_only|Unsupported global"):
        torch.load(path)
    # a global outside the allow list is refused, naming it and the file, and is not called
    torch.save({**MINIMAL, "extra_state": {"x": RunsCode()}}, path)
    with open(path, "rb") as f, pytest.raises(HierError, match=rf"^checkpoint {path} holds the "
                                                             rf"global '(posix|os)\.getpid'"):
        checkpoint_utils.torch.load(f, map_location="cpu")


def test_distributed_broadcast_loads_checkpoints_and_nothing_else_changes(tmp_path):
    """Ranks > 0 rebuild a broadcast checkpoint with fairseq.distributed.utils' torch.load
    (_broadcast_object_slow): what rank 0 broadcasts is the state load_checkpoint_to_cpu
    returned (cfg an omegaconf DictConfig). The end-to-end resume of 2 workers is
    tests/training/test_distributed.py."""
    import io

    import fairseq.trainer
    from fairseq.distributed import utils as distributed_utils

    path = tmp_path / "ck.pt"
    torch.save(MINIMAL, path)
    loaded = checkpoint_utils.load_checkpoint_to_cpu(str(path))  # cfg: a DictConfig now
    buffer = io.BytesIO()
    torch.save(loaded, buffer)
    buffer.seek(0)
    state = distributed_utils.torch.load(buffer, map_location="cpu")  # the call in fairseq
    assert state["args"].arch == "pht" and torch.equal(state["model"]["w"], torch.ones(2))
    assert type(state["cfg"]) is type(loaded["cfg"])
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
