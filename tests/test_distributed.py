"""Multi-process training resumes (issue 8, part 3): 2 CPU workers (gloo) through fairseq's own
distributed entry point (``fairseq-train --distributed-world-size 2``, one process per rank).

With more than one data-parallel worker, ``Trainer.load_checkpoint`` reads the checkpoint on rank 0
and broadcasts it; ranks > 0 rebuild it with ``fairseq.distributed.utils``'s ``torch.load``, which
on torch >= 2.6 refuses fairseq checkpoints (``UnpicklingError: Weights only load failed``)
unless ``fairseq_hier.compat.patch_distributed_checkpoint_broadcast`` is applied.

How fairseq 0.12 runs on CPU: ``call_main`` spawns one process per *GPU* and
``_infer_single_node_init`` asserts ``world size <= torch.cuda.device_count()``, so we start the
two ranks ourselves with an explicit ``--distributed-init-method tcp://...``, ``--distributed-rank``
and ``--distributed-no-spawn`` (``call_main`` -> ``distributed_main`` -> ``distributed_init``);
``--ddp-backend legacy_ddp`` because torch's DistributedDataParallel is built with
``device_ids=[device_id]``, which torch rejects for a CPU module.
"""

import os
import re
import shutil
import socket
import subprocess
import time

import pytest
import torch
from conftest import BIN, train_args

TIMEOUT = 240  # seconds per 2-process run; a stuck rendezvous fails the test instead of hanging


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train_two_workers(data, save_dir, max_update, extra=()):
    """Run fairseq-train with 2 gloo workers on CPU; return (rank-0 log, rank-1 log, exit codes)."""
    port = free_port()
    common = train_args(data, "pht", save_dir, max_update, extra=(
        "--cpu", "--distributed-world-size", "2", "--distributed-backend", "gloo",
        "--distributed-init-method", f"tcp://127.0.0.1:{port}", "--distributed-no-spawn",
        "--ddp-backend", "legacy_ddp", "--no-epoch-checkpoints", *extra))
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    logs = [save_dir.parent / f"{save_dir.name}.rank{rank}.log" for rank in (0, 1)]
    procs = []
    try:
        for rank in (1, 0):
            with open(logs[rank], "w") as out:
                command = [str(BIN / "fairseq-train"), *map(str, common),
                           "--distributed-rank", str(rank)]
                procs.append(subprocess.Popen(command, env=env, stdout=out,
                                              stderr=subprocess.STDOUT, text=True))
        deadline = time.monotonic() + TIMEOUT  # one budget for both ranks
        codes = [p.wait(timeout=max(1.0, deadline - time.monotonic()))
                 for p in procs[::-1]]  # rank 0, rank 1
    except subprocess.TimeoutExpired:
        pytest.fail(f"2-process fairseq-train did not finish in {TIMEOUT} s:\n"
                    + "\n".join(log.read_text()[-2000:] for log in logs))
    finally:  # never leave a rank behind (timeout, failure, interrupt)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return logs[0].read_text(), logs[1].read_text(), codes


def inner_losses(log):
    """{num_updates: loss} from the train_inner lines of a rank-0 log."""
    return {int(u): float(loss) for loss, u in
            re.findall(r"train_inner \|.* loss=([\d.]+),.* num_updates=(\d+),", log)}


def model_state(path):
    state = torch.load(path, map_location="cpu", weights_only=False)  # trusted: we wrote it
    return state["model"], state["optimizer_history"][-1]["num_updates"]


def test_two_workers_resume_equals_uninterrupted_run(data_bin, tmp_path):
    # uninterrupted: 4 updates (3 per epoch, so it crosses an epoch), keeping the update-2 state
    full = tmp_path / "full"
    log0, log1, codes = train_two_workers(data_bin, full, 4, ("--save-interval-updates", "2"))
    assert codes == [0, 0], log0[-3000:] + log1[-3000:]
    assert "distributed init (rank 0)" in log0 and "training on 2 devices" in log0
    full_losses = inner_losses(log0)
    assert sorted(full_losses) == [1, 2, 3, 4], log0[-3000:]

    # interrupted after update 2: resume from that checkpoint in a fresh save dir
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    shutil.copy(full / "checkpoint_1_2.pt", resumed / "checkpoint_last.pt")
    log0, log1, codes = train_two_workers(data_bin, resumed, 4, ("--save-interval-updates", "2"))
    assert "UnpicklingError" not in log1 and "Weights only load failed" not in log1, log1[-3000:]
    assert codes == [0, 0], log0[-3000:] + log1[-3000:]
    assert re.search(r"Loaded checkpoint \S*resumed/checkpoint_last\.pt \(epoch 1 @ 2 updates\)",
                     log0), log0[-3000:]
    resumed_losses = inner_losses(log0)
    assert sorted(resumed_losses) == [3, 4], log0[-3000:]
    assert resumed_losses == {u: full_losses[u] for u in (3, 4)}

    # same parameters at update 4; and they did move after update 2 (the check is not vacuous)
    final_full, n_full = model_state(full / "checkpoint_last.pt")
    final_resumed, n_resumed = model_state(resumed / "checkpoint_last.pt")
    at_2, n_2 = model_state(full / "checkpoint_1_2.pt")
    assert (n_full, n_resumed, n_2) == (4, 4, 2)
    assert final_full.keys() == final_resumed.keys()
    max_diff = max((final_full[k].float() - final_resumed[k].float()).abs().max().item()
                   for k in final_full)
    moved = max((final_full[k].float() - at_2[k].float()).abs().max().item() for k in final_full)
    assert max_diff <= 1e-6, max_diff
    assert moved > 1e-3, moved
