"""Multi-process training: 2 CPU workers (gloo) through fairseq's own distributed
entry point, ``fairseq-train --distributed-world-size 2`` (one process per rank, or torchrun).

1. Data parallelism is exact. For ``pht``, ``liu_ht`` and ``hat_transformer``,
   2 workers with torch's DistributedDataParallel (``--ddp-backend pytorch_ddp``, which raises
   on unused parameters) and 1 process with ``--update-freq 2`` train 3 updates from the same
   seed, dropout 0, plain SGD (updates proportional to the gradients, so a wrongly scaled
   all-reduce would show; Adam would hide a factor). fairseq shards an epoch's batches as
   ``batches[rank::world_size]`` (``ShardedIterator``, after the same seeded shuffle on every
   rank) and groups ``--update-freq`` consecutive batches (``GroupedIterator``): update k sees
   batches 2k and 2k+1 in both setups. The 2-worker gradient is ``(g0/2 + g1/2) * 2 / n``
   (DDP averages, fairseq rescales by world size / sample size), the 1-process one
   ``(g0 + g1) / n``: scaling by 2 is exact in floating point and a sum of two addends does not
   depend on their order, so the parameters are expected bit-identical (measured: max |diff|
   0.0 on torch 2.13 / gloo). The tolerance, ``EQUAL_TOL`` = 1e-6, leaves room for a backend
   that reduces in another order (an error of a few float32 ulps of the gradients), and is
   1000 times below the movement each run makes, which the test also asserts. ``pht`` runs
   under ``torchrun`` (the README's command, ``env://``), the others as one process per rank.
2. Multi-process training resumes: ``Trainer.load_checkpoint`` reads the
   checkpoint on rank 0 and broadcasts it; ranks > 0 rebuild it with
   ``fairseq.distributed.utils``'s ``torch.load``, which on torch >= 2.6 refuses fairseq
   checkpoints (``UnpicklingError: Weights only load failed``) unless
   ``fairseq_hier.compat.patch_distributed_checkpoint_broadcast`` is applied.

How fairseq 0.12 runs on CPU: ``call_main`` spawns one process per *GPU* and
``_infer_single_node_init`` asserts ``world size <= torch.cuda.device_count()``, so we start the
two ranks ourselves, either with an explicit ``--distributed-init-method tcp://...``,
``--distributed-rank`` and ``--distributed-no-spawn`` (``call_main`` -> ``distributed_main`` ->
``distributed_init``), or with torchrun (fairseq reads ``RANK`` / ``WORLD_SIZE`` /
``MASTER_ADDR`` / ``MASTER_PORT``; ``fairseq_hier.compat.patch_torchrun_on_cpu`` avoids its
``RANK % torch.cuda.device_count()`` without a GPU). torch's DistributedDataParallel is built
by fairseq with ``device_ids=[device_id]``, which torch rejects for a CPU module:
``fairseq_hier.compat.patch_ddp_on_cpu`` passes ``None`` there. The resume test keeps
``--ddp-backend legacy_ddp`` (fairseq's own all-reduce), so both backends run here.
"""

import os
import random
import re
import shutil
import subprocess

import pytest
import torch
from conftest import BIN, SMALL_MODEL, USER_DIR, free_port, preprocess, train_args
from progress import wait_while_progressing

EQUAL_TOL = 1e-6  # 2 workers vs 1 process x --update-freq 2 (see the module docstring)
ENV = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
TWO_WORKERS = ("--cpu", "--distributed-world-size", "2", "--distributed-backend", "gloo")


def start(command, log):
    """Start ``command`` in its own session (so that a torchrun agent and its workers can be
    killed together), output to the file ``log``."""
    with open(log, "w") as out:
        return subprocess.Popen([str(c) for c in command], env=ENV, stdout=out,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)


def finish(procs, logs):
    """Exit codes of ``procs``; the test fails only if their logs stop growing (a stuck
    rendezvous), never on a slow machine. No process is left behind."""
    return wait_while_progressing(procs, logs)


def per_rank(args, logs):
    """Start the 2 ranks of ``fairseq-train args`` (tcp rendezvous, one process per rank);
    returns the processes, rank 0 first."""
    port = free_port()
    command = [BIN / "fairseq-train", *args, *TWO_WORKERS, "--distributed-init-method",
               f"tcp://127.0.0.1:{port}", "--distributed-no-spawn"]
    procs = {rank: start([*command, "--distributed-rank", rank], logs[rank]) for rank in (1, 0)}
    return [procs[0], procs[1]]


def torchrun(args, log):
    """``torchrun --nproc_per_node 2 $(which fairseq-train) args`` (env:// rendezvous), as the
    README's multi-GPU command, on CPU."""
    return start([BIN / "torchrun", "--nproc_per_node", "2", "--master_port", free_port(),
                  BIN / "fairseq-train", *args, *TWO_WORKERS], log)


def train_two_workers(data, save_dir, max_update, extra=()):
    """Run fairseq-train with 2 gloo workers on CPU; return (rank-0 log, rank-1 log, exit codes)."""
    args = train_args(data, "pht", save_dir, max_update, extra=(
        "--ddp-backend", "legacy_ddp", "--no-epoch-checkpoints", *extra))
    logs = [save_dir.parent / f"{save_dir.name}.rank{rank}.log" for rank in (0, 1)]
    codes = finish(per_rank(args, logs), logs)
    return logs[0].read_text(), logs[1].read_text(), codes


def inner_losses(log):
    """{num_updates: loss} from the train_inner lines of a rank-0 log."""
    return {int(u): float(loss) for loss, u in
            re.findall(r"train_inner \|.* loss=([\d.]+),.* num_updates=(\d+),", log)}


def model_state(path):
    state = torch.load(path, map_location="cpu", weights_only=False)  # trusted: we wrote it
    return state["model"], state["optimizer_history"][-1]["num_updates"]


def inner_stats(log):
    """{num_updates: (loss, wpb, bsz, gnorm)} from the train_inner lines of a rank-0 log: the
    words and sentences of the update (both shards), its loss and gradient norm."""
    return {int(m["u"]): (m["loss"], m["wpb"], m["bsz"], m["gnorm"]) for m in re.finditer(
        r"train_inner \|.* loss=(?P<loss>[\d.]+),.* wpb=(?P<wpb>[\d.]+), bsz=(?P<bsz>[\d.]+), "
        r"num_updates=(?P<u>\d+),.* gnorm=(?P<gnorm>[\d.]+),", log)}


def max_difference(a, b):
    assert a.keys() == b.keys()
    return max((a[k].float() - b[k].float()).abs().max().item() for k in a)


# ------------------------------------------------------- 2 workers == 1 process x update-freq 2
UPDATES = 3
EQUALITY_COMMON = (
    "--user-dir", USER_DIR, *SMALL_MODEL, "--optimizer", "sgd", "--lr", "0.5",
    "--batch-size", "6", "--required-batch-size-multiple", "1",  # 8 batches of 6 per epoch
    "--max-update", UPDATES, "--save-interval-updates", "1", "--no-epoch-checkpoints",
    "--disable-validation", "--dropout", "0", "--attention-dropout", "0",
    "--activation-dropout", "0", "--seed", "3", "--num-workers", "0", "--log-interval", "1",
    "--no-progress-bar", "--cpu", "--ddp-backend", "pytorch_ddp")
PARAGRAPHS = ("--task", "hierarchical_summarization", "--max-paragraphs", "4",
              "--max-paragraph-tokens", "6", "--max-source-positions", "30")
EQUALITY = {  # name -> (data-bin fixture, flags after the common ones, launcher of the 2 workers)
    "pht": ("data_bin", (*PARAGRAPHS, "--arch", "pht"), "torchrun"),
    "liu_ht": ("data_bin", (*PARAGRAPHS, "--arch", "liu_ht", "--encoder-layers", "2",
                            "--global-layers", "1", "--global-heads", "2"), "per_rank"),
    "hat_transformer": ("sentence_bin", (
        "--task", "hat_summarization", "--source-lang", "src", "--target-lang", "tgt",
        "--arch", "hat_transformer_iwslt_zh_en", "--share-all-embeddings",
        "--max-source-positions", "64", "--max-target-positions", "64"), "per_rank"),
}


@pytest.fixture(scope="module")
def sentence_bin(tmp_path_factory):
    """A data-bin whose sources open every sentence with BOS (``<s>``, which fairseq-preprocess
    maps to the dictionary's BOS symbol) and a ``{split}.sentences`` count file beside it, as
    the document-translation and HAT recipes write them."""
    rng = random.Random(0)
    words = [f"w{i}" for i in range(40)]
    raw = tmp_path_factory.mktemp("sentences_raw")
    counts = {}
    for split, n in (("train", 48), ("valid", 8), ("test", 8)):
        src, tgt, counts[split] = [], [], []
        for _ in range(n):
            k = rng.randint(1, 4)
            src.append(" ".join("<s> " + " ".join(rng.choices(words, k=rng.randint(2, 6)))
                                for _ in range(k)))
            tgt.append(" ".join(rng.choices(words, k=rng.randint(3, 7))) + " .")
            counts[split].append(str(k))
        (raw / f"{split}.src").write_text("\n".join(src) + "\n")
        (raw / f"{split}.tgt").write_text("\n".join(tgt) + "\n")
    dest = preprocess(raw, tmp_path_factory.mktemp("sentences_bin") / "data-bin")
    for split, lines in counts.items():
        (dest / f"{split}.sentences").write_text("\n".join(lines) + "\n")
    return dest


@pytest.fixture(scope="module")
def equality_runs(request, tmp_path_factory):
    """Every run of the equality tests at once (3 x (2 workers + 1 process) on 2 cores):
    {name: {"two": (save dir, rank-0 log), "one": (save dir, log)}}, with the exit codes."""
    folder = tmp_path_factory.mktemp("equality")
    procs, logs, runs = [], [], {}
    for name, (fixture, flags, launcher) in EQUALITY.items():
        data = request.getfixturevalue(fixture)
        two, one = folder / f"{name}_2workers", folder / f"{name}_1process"
        args = [data, *EQUALITY_COMMON, *flags]
        if launcher == "torchrun":
            two_logs = [folder / f"{name}_torchrun.log"]
            procs.append(torchrun([*args, "--save-dir", two], two_logs[0]))
        else:
            two_logs = [folder / f"{name}_rank{rank}.log" for rank in (0, 1)]
            procs += per_rank([*args, "--save-dir", two], two_logs)
        one_log = folder / f"{name}_1process.log"
        procs.append(start([BIN / "fairseq-train", *args, "--save-dir", one, "--update-freq", 2],
                           one_log))
        logs += [*two_logs, one_log]
        runs[name] = {"two": (two, two_logs[0]), "one": (one, one_log)}
    return runs, finish(procs, logs)


@pytest.mark.parametrize("name", list(EQUALITY))
def test_two_workers_equal_one_process_with_twice_the_batch(equality_runs, name):
    runs, codes = equality_runs
    (two, two_log), (one, one_log) = runs[name]["two"], runs[name]["one"]
    two_text, one_text = two_log.read_text(), one_log.read_text()
    assert codes == [0] * len(codes), two_text[-3000:] + one_text[-3000:]
    assert "training on 2 devices" in two_text and "training on 1 devices" in one_text
    assert "'ddp_backend': 'pytorch_ddp'" in two_text  # torch's DDP: unused parameters would raise
    if EQUALITY[name][2] == "torchrun":
        assert "distributed init (rank 0): env://" in two_text, two_text[-3000:]
    # the same updates: words and sentences of both shards, loss and gradient norm
    stats = inner_stats(two_text)
    assert sorted(stats) == list(range(1, UPDATES + 1)), two_text[-3000:]
    assert stats == inner_stats(one_text)
    assert all(float(bsz) == 12 for _, _, bsz, _ in stats.values())  # 2 x --batch-size 6
    # the same parameters after update 1 and after the last, and they moved in between
    for update in (1, UPDATES):
        a, n_a = model_state(two / f"checkpoint_1_{update}.pt")
        b, n_b = model_state(one / f"checkpoint_1_{update}.pt")
        assert n_a == n_b == update
        assert max_difference(a, b) <= EQUAL_TOL, (update, max_difference(a, b))
    first, _ = model_state(one / "checkpoint_1_1.pt")
    moved = max_difference(b, first)
    assert moved > 1000 * EQUAL_TOL, moved


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
