"""``make gpu-check`` (scripts/gpu_check.py) through its dry run on the CPU.

1. ``transformer`` and ``pht`` in fp32, fp16 and bf16 through the real script: one row per
   arch x dtype in that order, every step ok, finite losses, the bf16/fp16 first-update losses
   within the script's tolerance of fp32's, one hypothesis per test example, a log per step, the
   Markdown table on disk and the JSON file equal to the last printed line, ``failed`` 0, exit 0.
2. One step made to fail through the test hook (``--extra-train-args``: 3 heads, which the
   dry run's width 32 does not divide): that row's training fails with the error line of its
   log, its generation is skipped, the next architecture still runs; ``failed`` 1, exit 1.
3. Bad option values: one line naming the option, exit 1, before anything runs.
4. ``make gpu-check`` runs the interpreter of PY when it exists, else ``python3`` (the lent
   device has no .venv).
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.py"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GPU_CHECK_")}
ENV.update(PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")

sys.path.insert(0, str(ROOT / "scripts"))
from gpu_check import LOSS_RTOL  # noqa: E402


def run_check(out, *args, **env):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], env=dict(ENV, **env), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=out)
    return proc


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check")
    proc = run_check(out, GPU_CHECK_DRY_RUN="1", GPU_CHECK_ARCHS="transformer,pht",
                     GPU_CHECK_BENCHMARKS="none", GPU_CHECK_OUT=str(out / "result"))
    return out / "result", proc


def test_dry_run_two_architectures_all_dtypes(dry_run):
    out, proc = dry_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary == json.loads((out / "gpu_check.json").read_text())
    assert summary["dry_run"] is True and summary["device"].startswith("cpu (dry run")
    assert summary["failed"] == 0 and summary["benchmarks"] == {}
    rows = summary["rows"]
    assert [(r["arch"], r["dtype"]) for r in rows] == [
        (a, d) for a in ("transformer", "pht") for d in ("fp32", "fp16", "bf16")]
    for r in rows:
        assert (r["train"], r["generate"], r["error"]) == ("ok", "ok", None), r
        assert math.isfinite(r["loss"]) and 0 < r["loss"] < 20, r
        assert math.isfinite(r["valid_loss"]) and 0 < r["valid_loss"] < 20, r
        assert r["hypotheses"] == 8, r  # the dry run's 8 test examples
        assert r["train_s"] > 0 and r["generate_s"] > 0
        if r["dtype"] == "fp32":
            assert (r["loss_vs_fp32"], r["loss_check"]) == (None, "n/a")
        else:
            fp32 = next(x for x in rows if x["arch"] == r["arch"] and x["dtype"] == "fp32")
            rel = abs(r["loss"] - fp32["loss"]) / fp32["loss"]
            assert r["loss_vs_fp32"] == pytest.approx(rel, abs=1e-5)
            assert r["loss_check"] == "ok" and rel <= LOSS_RTOL[r["dtype"]]
    for arch in ("transformer", "pht"):
        for dtype in ("fp32", "fp16", "bf16"):
            train = (out / "logs" / f"train-{arch}-{dtype}.log").read_text()
            assert "num_updates=2" in train  # the dry run's 2 updates
            assert re.search(r"^H-7\t", (out / "logs" / f"generate-{arch}-{dtype}.log")
                             .read_text(), re.M)
    table = (out / "table.md").read_text().splitlines()
    data_rows = [line for line in table if line.startswith("| transformer") or
                 line.startswith("| pht")]
    assert len(data_rows) == 6 and all("| ok |" in line for line in data_rows)
    assert "failed: 0" in table[2]


def test_a_failing_step_explains_itself_and_the_others_run(tmp_path):
    proc = run_check(tmp_path, "--dry-run", "--archs", "transformer,pht", "--dtypes", "fp32",
                     "--benchmarks", "none", "--out", str(tmp_path / "result"),
                     "--extra-train-args", "transformer/fp32=--encoder-attention-heads 3")
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["failed"] == 1
    broken, fine = summary["rows"]
    assert (broken["arch"], broken["train"], broken["generate"]) == ("transformer", "failed",
                                                                     "skipped")
    # the last error line of the training log, and why generation did not run
    log = (tmp_path / "result" / "logs" / "train-transformer-fp32.log").read_text()
    line = ("fairseq-train: error: --encoder-embed-dim 32 must be divisible by "
            "--encoder-attention-heads 3")
    assert line in log.splitlines()[-1]
    assert re.fullmatch(rf"train: exit 1: {re.escape(line)} .*; generate: needs "
                        r"train-transformer-fp32 \(failed\)", broken["error"]), broken["error"]
    assert (fine["arch"], fine["train"], fine["generate"], fine["error"]) == ("pht", "ok", "ok",
                                                                              None)
    assert line in (tmp_path / "result" / "table.md").read_text()


@pytest.mark.parametrize("args,env,message", [
    ([], {"GPU_CHECK_ARCHS": "pht,nope"}, "--archs / GPU_CHECK_ARCHS: unknown ['nope']"),
    (["--dtypes", "fp8"], {}, "--dtypes / GPU_CHECK_DTYPES: unknown ['fp8']"),
    (["--benchmarks", "efficiency,speed"], {}, "--benchmarks / GPU_CHECK_BENCHMARKS: unknown "
                                               "['speed']"),
    ([], {"GPU_CHECK_JOBS": "0"}, "--jobs / GPU_CHECK_JOBS: expected a positive number, got '0'"),
    ([], {"GPU_CHECK_DRY_RUN": "yes"}, "GPU_CHECK_DRY_RUN: expected 0 or 1, got 'yes'"),
    (["--extra-train-args", "pht=--lr 1"], {}, "--extra-train-args / "
                                               "GPU_CHECK_EXTRA_TRAIN_ARGS: expected ARCH/DTYPE="),
])
def test_bad_options_give_one_line(tmp_path, args, env, message):
    proc = run_check(tmp_path, *args, "--out", str(tmp_path / "result"), **env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"gpu-check: error: {message}")
    assert not (tmp_path / "result").exists()


def test_make_target_falls_back_to_python3():
    def recipe(*args):
        # outside the `make test` that may run this test (its MAKEFLAGS and level)
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        return subprocess.run(["make", "--no-print-directory", "-n", "gpu-check", *args],
                              cwd=ROOT, text=True, env=env, stdout=subprocess.PIPE,
                              check=True).stdout.splitlines()[-1]

    assert recipe("PY=/no/such/venv/bin/python") == "python3 scripts/gpu_check.py"
    assert recipe(f"PY={sys.executable}") == f"{sys.executable} scripts/gpu_check.py"
