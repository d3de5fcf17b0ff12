"""GPU readiness in one command (``make gpu-check``); docs/gpu.md is its specification.

Trains every architecture (:data:`ARCHS`) a few updates in fp32, ``--fp16`` and ``--bf16`` with the
project's commands and compares the half-precision runs' first loss with fp32's
(:data:`LOSS_RTOL`); evaluates each checkpoint; runs the benchmarks on the device in bfloat16 and
a 2-process ``torchrun``. Each step is a forked child of this process, which imported fairseq once
and never initialises CUDA (:func:`run_order`: trainings, evaluations, :data:`BENCHMARK_ORDER`).
``OUT/table.md`` and ``OUT/gpu_check.json`` are rewritten atomically whenever a step starts or
ends; ``--budget``, the exit statuses and ``--dry-run`` (the same on the CPU): docs/gpu.md.
The architectures' traits come from fairseq_hier/recipes/architectures.py (:func:`traits`).

    python3 scripts/gpu_check.py [--dry-run] [--archs pht,vht] [--dtypes fp32,bf16]
        [--benchmarks efficiency,torchrun|all|none] [--jobs N] [--budget SECONDS] [--out DIR]
"""

import argparse
import ctypes
import json
import logging
import math
import os
import platform
import re
import shlex
import shutil
import signal
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
PROG = "gpu-check"

ARCHS = ("transformer", "pht", "vht", "liu_ht", "parsingsum_ft", "parsingsum_ht",
         "hat_transformer", "hat_bart_base", "long_bart_base", "attention_predictor",
         "paragraph_ranker")
DTYPES = ("fp32", "fp16", "bf16")
DTYPE_FLAGS = {"fp32": [], "fp16": ["--fp16"], "bf16": ["--bf16"]}
# the order each architecture's cells train in: fp32 first, the reference of the others' loss
RUN_DTYPES = ("fp32", "bf16", "fp16")
BENCHMARKS = ("efficiency", "efficiency_other_lengths", "max_batch", "decoding_speed",
              "hat_efficiency", "doc_mt_efficiency", "parsing_speed", "torchrun")
# the order the benchmarks run in, after the matrix: training_cost.py at 3000 tokens first (the
# hierarchical models' headline length), then the rest from the shortest GPU time measured on
# an H100 (docs/gpu.md), so that a budget that runs out cuts the longest
BENCHMARK_ORDER = ("efficiency", "torchrun", "decoding_speed", "parsing_speed", "hat_efficiency",
                   "doc_mt_efficiency", "efficiency_other_lengths", "max_batch")
# The first update's loss of a bf16 / fp16 run may differ from fp32's by this fraction of it.
# The loss is a sum of cross-entropies computed in float32 from logits that went through a few
# layers of half-precision matrix products: bfloat16 keeps 8 significant bits (relative rounding
# 2^-9 = 0.2% per operation), float16 11 (2^-12 = 0.02%). A handful of layers stays well inside
# 10x one rounding step: 2% (bf16) and 0.5% (fp16). Measured in the dry run (CPU, every
# architecture): at most 0.84% (bf16: the attention predictor, whose MSE is ~0.002; the others at
# most 0.03%) and 0.003% (fp16); fairseq logs losses to 3 decimals. A wrong mask, cast or
# overflow moves the loss by far more.
LOSS_RTOL = {"bf16": 0.02, "fp16": 0.005}
DEVICE_JOBS = 4  # steps at once on the device
# seconds of checking by default on the device: the matrix and the quicker benchmarks on an H100
# (docs/gpu.md, "How long it takes"); GPU_CHECK_BUDGET=none runs every step
DEVICE_BUDGET = 330.0
STOP_GRACE_S = 5  # a step stopped (timeout, budget, signal) gets SIGTERM, then SIGKILL after this

# module:function of each command (what its console script calls): on a GPU machine the project
# may be importable without being installed, so commands are found by module, never by script
ENTRIES = {
    "fairseq-preprocess": "fairseq_cli.preprocess:cli_main",
    "fairseq-train": "fairseq_cli.train:cli_main",
    "fairseq-generate": "fairseq_cli.generate:cli_main",
    "fairseq-validate": "fairseq_cli.validate:cli_main",
    "fairseq-hier-demo": "fairseq_hier.cli.demo:cli_main",
    "fairseq-hier-parse": "fairseq_hier.cli.parse:cli_main",
    "fairseq-hier-extract-attention": "fairseq_hier.cli.extract_attention:cli_main",
    "fairseq-hier-rank": "fairseq_hier.cli.rank:cli_main",
}


# ------------------------------------------------------------------------------ options
# (fairseq_hier is imported inside the functions: cli_main first puts the checkout on sys.path)
def env_default(name, default):
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def parse_list(option, text, choices, allow_none=False):
    """A comma-separated option as a list in ``choices``' order; ``all`` = every choice,
    ``none`` = no item (where ``allow_none``)."""
    from fairseq_hier.errors import HierError

    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if items == ["all"]:
        return list(choices)
    if items == ["none"] and allow_none:
        return []
    unknown = [x for x in items if x not in choices]
    if unknown or not items:
        extra = ", all" + (", none" if allow_none else "")
        raise HierError(f"{option}: unknown {unknown or 'empty'}; choose from "
                        f"{', '.join(choices)}{extra}")
    return [c for c in choices if c in items]


def parse_positive(option, text, kind=float, allow_none=False, unit=""):
    """A positive finite number (``kind``), or None for ``none`` where ``allow_none``."""
    from fairseq_hier.errors import HierError

    if allow_none and str(text).strip().lower() == "none":
        return None
    try:
        value = kind(str(text).strip())
    except ValueError:
        value = None
    if value is None or not (value > 0 and math.isfinite(value)):
        what = "a positive whole number" if kind is int else "a positive number"
        raise HierError(f"{option}: expected {what}{unit}{', or none' if allow_none else ''}, "
                        f"got {text!r}")
    return value


def parse_extra(option, texts):
    """``ARCH/DTYPE=ARGS`` items -> {(arch, dtype): [args]}."""
    from fairseq_hier.errors import HierError, shell_words

    extra = {}
    for text in texts:
        cell, sep, args = text.partition("=")
        arch, slash, dtype = cell.partition("/")
        if not sep or not slash or arch not in ARCHS or dtype not in DTYPES:
            raise HierError(f"{option}: expected ARCH/DTYPE=ARGS with ARCH of {', '.join(ARCHS)} "
                            f"and DTYPE of {', '.join(DTYPES)}, got {text!r}")
        extra[(arch, dtype)] = shell_words(f"{option} {cell}", args)
    return extra


def parse_args(argv=None):
    from fairseq_hier.errors import HierError

    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--out", default=env_default("GPU_CHECK_OUT", "gpu_check"),
                   help="output folder: table.md, gpu_check.json, logs/, work/ (GPU_CHECK_OUT; "
                        "default gpu_check)")
    p.add_argument("--dry-run", action="store_true",
                   default=env_default("GPU_CHECK_DRY_RUN", "0"),
                   help="the same matrix on the CPU at the smallest sizes (GPU_CHECK_DRY_RUN=1)")
    p.add_argument("--archs", default=env_default("GPU_CHECK_ARCHS", "all"),
                   help=f"comma-separated of {', '.join(ARCHS)}, all or none (GPU_CHECK_ARCHS; "
                        f"default all)")
    p.add_argument("--dtypes", default=env_default("GPU_CHECK_DTYPES", "all"),
                   help=f"comma-separated of {', '.join(DTYPES)} (GPU_CHECK_DTYPES; default all)")
    p.add_argument("--benchmarks", default=env_default("GPU_CHECK_BENCHMARKS", "all"),
                   help=f"comma-separated of {', '.join(BENCHMARKS)}, all or none "
                        f"(GPU_CHECK_BENCHMARKS; default all)")
    p.add_argument("--jobs", default=env_default("GPU_CHECK_JOBS", None),
                   help=f"steps run at once; a timed benchmark always runs alone (GPU_CHECK_JOBS; "
                        f"default {DEVICE_JOBS} on the device, 1 in the dry run)")
    p.add_argument("--budget", default=env_default("GPU_CHECK_BUDGET", None),
                   help="seconds from the start after which no step starts and the running ones "
                        "are stopped; the steps left are reported 'not run', or none "
                        f"(GPU_CHECK_BUDGET; default {DEVICE_BUDGET:g} on the device: the matrix "
                        f"and the quicker benchmarks, docs/gpu.md; none in the dry run)")
    p.add_argument("--step-timeout", default=env_default("GPU_CHECK_STEP_TIMEOUT", "900"),
                   help="seconds after which a step is stopped and failed "
                        "(GPU_CHECK_STEP_TIMEOUT; default 900)")
    p.add_argument("--extra-train-args", action="append",
                   default=[x for x in env_default("GPU_CHECK_EXTRA_TRAIN_ARGS", "").split(";")
                            if x.strip()],
                   help="ARCH/DTYPE=ARGS: more fairseq-train arguments for one cell (repeatable; "
                        "GPU_CHECK_EXTRA_TRAIN_ARGS, ';'-separated)")
    args = p.parse_args(argv)
    if isinstance(args.dry_run, str):
        if args.dry_run not in ("0", "1"):
            raise HierError(f"GPU_CHECK_DRY_RUN: expected 0 or 1, got {args.dry_run!r}")
        args.dry_run = args.dry_run == "1"
    args.archs = parse_list("--archs / GPU_CHECK_ARCHS", args.archs, ARCHS, allow_none=True)
    args.dtypes = parse_list("--dtypes / GPU_CHECK_DTYPES", args.dtypes, DTYPES)
    args.benchmarks = parse_list("--benchmarks / GPU_CHECK_BENCHMARKS", args.benchmarks,
                                 BENCHMARKS, allow_none=True)
    if args.jobs is None:
        args.jobs = 1 if args.dry_run else DEVICE_JOBS
    args.jobs = parse_positive("--jobs / GPU_CHECK_JOBS", args.jobs, int)
    if args.budget is None:
        args.budget = "none" if args.dry_run else DEVICE_BUDGET
    args.budget = parse_positive("--budget / GPU_CHECK_BUDGET", args.budget, allow_none=True,
                                 unit=" of seconds")
    args.step_timeout = parse_positive("--step-timeout / GPU_CHECK_STEP_TIMEOUT",
                                       args.step_timeout, unit=" of seconds")
    args.extra_train_args = parse_extra("--extra-train-args / GPU_CHECK_EXTRA_TRAIN_ARGS",
                                        args.extra_train_args)
    args.out = Path(args.out).resolve()
    return args


# ------------------------------------------------------------------------------ sizes
class Sizes:
    """What the run trains and measures: the device's sizes, or the dry run's smallest."""

    def __init__(self, dry_run: bool):
        self.dry = dry_run
        dim, ffn, layers, heads = (32, 64, 1, 2) if dry_run else (128, 256, 2, 4)
        self.dim = dim
        self.model = ["--encoder-layers", layers, "--decoder-layers", layers,
                      "--encoder-embed-dim", dim, "--decoder-embed-dim", dim,
                      "--encoder-ffn-embed-dim", ffn, "--decoder-ffn-embed-dim", ffn,
                      "--encoder-attention-heads", heads, "--decoder-attention-heads", heads]
        self.heads = heads
        self.updates = 2 if dry_run else 6
        self.corpus = (24, 8, 8) if dry_run else (96, 16, 16)  # train, valid, test examples
        self.test_examples = self.corpus[2]
        self.max_len_b = 8 if dry_run else 24
        self.paragraphs, self.paragraph_tokens = (4, 8) if dry_run else (8, 16)
        self.cuda = "cpu" if dry_run else "cuda"


# ------------------------------------------------------------------------------ steps
class Step:
    """One unit of the check: ``run`` (a callable) in a child process, after the steps
    ``needs``; ``check(log) -> (facts dict, error or None)`` reads its log afterwards. An
    ``exclusive`` step (a timed benchmark) runs alone. ``status``: pending, running, ok, failed,
    skipped (a step it needs failed, or ``skip``: it cannot run here) or not run (the budget or a
    signal ended the check first)."""

    def __init__(self, sid, run, needs=(), check=None, skip=None, exclusive=False):
        self.id, self.run, self.needs, self.check, self.skip = sid, run, list(needs), check, skip
        self.exclusive = exclusive
        self.status, self.seconds, self.error, self.facts = "pending", 0.0, None, {}


def entry(command):
    """The function behind ``command`` (:data:`ENTRIES`), imported here once."""
    import importlib

    module, _, name = ENTRIES[command].partition(":")
    return getattr(importlib.import_module(module), name)


def command(name, *args):
    """A step body: ``name args`` as the command line would run it (its exit status)."""
    args = [str(a) for a in args]

    def run():
        sys.argv = [name, *args]
        try:
            rc = entry(name)()  # our commands' cli_main return the status; fairseq's None
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return rc if isinstance(rc, int) else 0
    run.describe = " ".join([name, *map(shlex.quote, args)])
    return run


def process(*argv, cwd=ROOT):
    """A step body: ``argv`` (benchmarks, torchrun) executed in place of the forked child, so
    that it keeps the child's log, process group and parent-death signal."""
    argv = [str(a) for a in argv]

    def run():
        sys.stdout.flush()
        os.chdir(cwd)
        os.execv(argv[0], argv)
    run.describe = " ".join(map(shlex.quote, argv))
    return run


def warm_up():
    """What every fairseq command does first, done once before forking: the imports, our
    registration, hydra's config composition. Initialises no CUDA."""
    import torch
    import torch._dynamo  # noqa: F401  (torch's optimizers import it on first use)
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    import fairseq_hier

    fairseq_hier.register()
    for name in ENTRIES:
        entry(name)
    convert_namespace_to_omegaconf(options.parse_args_and_arch(
        options.get_training_parser(), ["data-bin", "--task", "translation", "--arch",
                                        "transformer"]))
    return torch


def die_with_parent(parent):
    """Linux: SIGTERM this process when ``parent`` dies (PR_SET_PDEATHSIG, kept across exec), so
    that a check killed with SIGKILL, which it cannot catch, leaves no step running (torchrun
    stops its workers on SIGTERM). Exits at once when ``parent`` is already gone."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # 1: PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def child(step, log, parent):
    """In the forked child: run ``step`` with stdout and stderr to ``log``; never returns."""
    rc = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):  # (the parent's handlers only note them)
            signal.signal(signum, signal.SIG_DFL)
        os.setpgid(0, 0)  # its own process group: stopping a step stops its subprocesses too
        die_with_parent(parent)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        print(f"$ {getattr(step.run, 'describe', step.id)}", flush=True)
        logging.root.handlers.clear()  # fairseq_cli's logging, as a fresh command sets it up
        logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                            datefmt="%Y-%m-%d %H:%M:%S", stream=sys.stdout, level=logging.INFO)
        result = step.run()
        rc = result if isinstance(result, int) else 0
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: B902  (a step's failure is its exit status and its log)
        sys.excepthook(*sys.exc_info())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def last_error_line(text):
    """The line of a log that says why it failed: the last one naming an error, else the last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.search(r"error|exception|failed|killed|timed out|not found|no such", line, re.I):
            return line[:300]
    return lines[-1][:300] if lines else "(empty log)"


class Stop:
    """SIGTERM and SIGINT while the check runs (a context manager): the signal is noted in
    ``signum``, and the scheduler stops at its next turn, never in the middle of a fork or a
    write; inside :meth:`raising` (the imports) it is raised at once."""

    def __init__(self):
        self.signum, self._raise, self._previous = None, False, {}

    @property
    def name(self):
        return None if self.signum is None else signal.Signals(self.signum).name

    def __enter__(self):
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._previous[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _note(self, signum, frame):
        from fairseq_hier.errors import Interrupted

        self.signum = self.signum or signum
        if self._raise:
            raise Interrupted(signum)

    @contextmanager
    def raising(self):
        """Inside the block a signal is raised at once (one noted before it too)."""
        from fairseq_hier.errors import Interrupted

        self._raise = True
        try:
            if self.signum is not None:
                raise Interrupted(self.signum)
            yield
        finally:
            self._raise = False


def stop_reason(stopped_by, budget):
    """Why the steps left did not run, in words."""
    if stopped_by == "budget":
        return f"the budget of {budget:g} s ran out"
    return f"{stopped_by} stopped the check" if stopped_by else "the check ended first"


def mark_not_run(steps, reason):
    for step in steps:
        if step.status == "pending":
            step.status, step.error = "not run", reason


def signal_group(pid, signum):
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass


def reaped(pid):
    """Whether the child ``pid`` has ended (reaped now or before)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def stop_groups(pids):
    """Stop the steps of ``pids`` (their process groups): SIGTERM, which torchrun passes on to
    its workers (each in a session of its own), then SIGKILL to what is left after
    :data:`STOP_GRACE_S`; every one reaped."""
    for pid in pids:
        signal_group(pid, signal.SIGTERM)
    left, end = set(pids), time.monotonic() + STOP_GRACE_S
    while left and time.monotonic() < end:
        left = {pid for pid in left if not reaped(pid)}
        time.sleep(0.05)
    for pid in left:
        signal_group(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def run_steps(steps, logs, jobs, timeout, budget=None, start=None, stop=None, on_change=None,
              cuda_initialized=lambda: False):
    """Run ``steps`` in their order, ``jobs`` at once, each after the steps it needs; an
    exclusive step runs alone, and no step after it starts before it. Fills in each step's
    status, seconds, facts and error, calling ``on_change()`` whenever a step starts or ends. A
    step that runs ``timeout`` seconds is stopped and failed. ``budget`` seconds after ``start``
    (time.monotonic), or when ``stop`` notes a signal, the running steps are stopped
    (:func:`stop_groups`) and they and the steps not started are ``not run``. Returns what
    stopped it early (``"budget"``, ``"SIGTERM"``, ``"SIGINT"``) or None."""
    start = time.monotonic() if start is None else start
    deadline = math.inf if budget is None else start + budget
    running, stopped_by = {}, None  # running: pid -> (step, its start, its log)
    try:
        stopped_by = _schedule(steps, logs, jobs, timeout, deadline, stop,
                               on_change or (lambda: None), cuda_initialized, running)
    finally:
        reason, stopped_at = stop_reason(stopped_by, budget), time.monotonic()
        stop_groups(list(running))
        for step, began, _ in running.values():
            step.status, step.seconds = "not run", round(stopped_at - began, 2)
            step.error = f"stopped after {step.seconds:g} s: {reason}"
        mark_not_run(steps, reason)
        if running or stopped_by:
            print(f"[{PROG}] {reason}: {sum(s.status == 'not run' for s in steps)} steps not run",
                  file=sys.stderr, flush=True)
    return stopped_by


def _schedule(steps, logs, jobs, timeout, deadline, stop, on_change, cuda_initialized, running):
    by_id = {s.id: s for s in steps}
    pending = [s for s in steps if s.status == "pending"]
    while pending or running:
        if stop is not None and stop.signum is not None:
            return stop.name
        if time.monotonic() >= deadline:
            return "budget"
        changed = _resolve_blocked(pending, by_id)
        for step in list(pending):
            if len(running) >= jobs or any(s.exclusive for s, _, _ in running.values()):
                break
            ready = all(by_id[n].status == "ok" for n in step.needs)
            if ready and (not step.exclusive or not running):
                if cuda_initialized():
                    raise RuntimeError("CUDA was initialised before forking a step")
                _start(step, logs, running)
                pending.remove(step)
                changed = True
            if step.exclusive:
                break  # no step after an exclusive one starts before it
        for pid, (step, began, log) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                del running[pid]
                finish(step, os.waitstatus_to_exitcode(status), time.monotonic() - began, log,
                       timeout)
                changed = True
            elif time.monotonic() - began > timeout + STOP_GRACE_S:
                signal_group(pid, signal.SIGKILL)
            elif time.monotonic() - began > timeout and step.status == "running":
                step.status = "timeout"
                signal_group(pid, signal.SIGTERM)
        if changed:
            on_change()
        elif not running and pending:
            raise RuntimeError(f"steps waiting on steps that never run: {pending[0].id}")
        else:
            time.sleep(0.05)
    return None


def _resolve_blocked(pending, by_id):
    """Steps that cannot run (``skip``, or a step they need failed or was skipped): skipped."""
    changed = False
    for step in list(pending):
        blocked = [n for n in step.needs if by_id[n].status in ("failed", "skipped")]
        if step.skip or blocked:
            step.status = "skipped"
            step.error = step.skip or f"needs {blocked[0]} ({by_id[blocked[0]].status})"
            pending.remove(step)
            changed = True
    return changed


def _start(step, logs, running):
    sys.stdout.flush()
    sys.stderr.flush()
    log, parent = logs / f"{step.id}.log", os.getpid()
    pid = os.fork()
    if pid == 0:
        child(step, str(log), parent)
    try:  # (the child does the same: whichever runs first)
        os.setpgid(pid, pid)
    except OSError:
        pass
    running[pid] = (step, time.monotonic(), log)
    step.status = "running"
    print(f"[{PROG}] start {step.id}", file=sys.stderr, flush=True)


def finish(step, rc, seconds, log, timeout):
    """A step's status from its exit code and its log's checks."""
    text = log.read_text(errors="replace") if log.exists() else ""
    step.seconds = round(seconds, 2)
    if step.status == "timeout":
        step.status, step.error = "failed", f"timed out after {timeout:g} s"
    elif rc != 0:
        step.status, step.error = "failed", f"exit {rc}: {last_error_line(text)}"
    else:
        step.status = "ok"
        if step.check is not None:
            step.facts, error = step.check(text)
            if error:
                step.status, step.error = "failed", error
    print(f"[{PROG}] {step.status:<7} {step.id} ({step.seconds:.1f} s)"
          + (f": {step.error}" if step.error else ""), file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ log checks
def finite(value):
    return value is not None and math.isfinite(value)


# what each precision's logs say when it is in effect (fairseq_hier.compat's bf16 lines; fairseq's
# FP16Optimizer logs a loss scale): a run that silently fell back to float32 fails its check
TRAIN_MARK = {"bf16": "training in torch.bfloat16", "fp16": "loss_scale="}
GENERATE_MARK = {"bf16": "loaded in torch.bfloat16"}


def check_train(text, dtype="fp32"):
    """The first update's loss and the last validation loss, both finite; the precision in
    effect."""
    first = re.search(r"train_inner \|.* loss=([^,\s]+),.* num_updates=(\d+),", text)
    valid = re.findall(r"valid on 'valid' subset \| loss ([^\s|]+)", text)
    facts = {"loss": float(first.group(1)) if first else None,
             "valid_loss": float(valid[-1]) if valid else None}
    if first is None:
        return facts, "no train_inner line (no update logged)"
    if not finite(facts["loss"]) or not finite(facts["valid_loss"]):
        return facts, f"non-finite or missing loss: first update {facts['loss']}, " \
                      f"validation {facts['valid_loss']}"
    if dtype in TRAIN_MARK and TRAIN_MARK[dtype] not in text:
        return facts, f"--{dtype} not in effect: '{TRAIN_MARK[dtype]}' not in the log"
    return facts, None


def train_check(dtype):
    return lambda text: check_train(text, dtype)


def check_hypotheses(expected, dtype="fp32"):
    def check(text):
        hyps = re.findall(r"^H-(\d+)\t(\S+)\t", text, flags=re.M)
        scores = [float(s) for _, s in hyps]
        facts = {"hypotheses": len(hyps)}
        if len(hyps) != expected:
            return facts, f"{len(hyps)} hypotheses (H- lines) written, {expected} expected"
        if not all(math.isfinite(s) for s in scores):
            return facts, "non-finite hypothesis score"
        if dtype in GENERATE_MARK and GENERATE_MARK[dtype] not in text:
            return facts, f"--{dtype} not in effect: '{GENERATE_MARK[dtype]}' not in the log"
        return facts, None
    return check


def check_validate(text):
    found = re.findall(r"valid on '\w+' subset \| loss ([^\s|]+)", text)
    facts = {"eval_loss": float(found[-1]) if found else None}
    if not finite(facts["eval_loss"]):
        return facts, f"no finite validation loss (found {found[-1:] or 'none'})"
    return facts, None


def check_lines(path, expected):
    def check(text):
        n = sum(1 for _ in open(path)) if os.path.exists(path) else 0
        facts = {"hypotheses": n}
        return facts, None if n == expected else f"{n} ranked lines in {path}, {expected} expected"
    return check


def check_json(text):
    """A benchmark's last line: its JSON summary."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        summary = json.loads(lines[-1])
        if not isinstance(summary, dict):
            raise ValueError
    except (ValueError, IndexError):
        return {}, f"no JSON summary as the last line: {last_error_line(text)}"
    return {"summary": summary}, None


# ------------------------------------------------------------------------------ data
def write_hat_raw(raw, folder, bin_dir, sentences, tokens):
    """HAT sources from the demo corpus: the title and each paragraph a sentence opened by
    ``<s>`` (the first ``sentences``, each cut to ``tokens`` words, so that every source fits
    the task's positions: HAT's cut belongs to the preparation), ``SPLIT.sentences`` beside the
    binarized data."""
    folder.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    for split in ("train", "valid", "test"):
        lines = (raw / f"{split}.src").read_text().splitlines()
        docs = [[" ".join(s.split()[:tokens]) for s in line.split(" <P> ")][:sentences]
                for line in lines]
        (folder / f"{split}.src").write_text(
            "".join(" ".join(f"<s> {s}" for s in doc) + "\n" for doc in docs))
        (folder / f"{split}.tgt").write_text((raw / f"{split}.tgt").read_text())
        (bin_dir / f"{split}.sentences").write_text("".join(f"{len(d)}\n" for d in docs))


def write_chain_conllu(raw_src, path):
    """A CoNLL-U parse of each raw ``title <P> p1 <P> p2`` line: one sentence per segment,
    every word attached to its left neighbour (the first word is the root)."""
    out = []
    for n, line in enumerate(raw_src.read_text().splitlines(), start=1):
        out.append(f"# newdoc id = {n}")
        for segment in " ".join(line.split()).split(" <P> "):
            for i, word in enumerate(segment.split(), start=1):
                out.append("\t".join([str(i), word, word, "X", "_", "_", str(i - 1), "dep", "_",
                                      "_"]))
            out.append("")
    path.write_text("\n".join(out) + "\n")


def python_step(func, *args):
    def run():
        func(*args)
        return 0
    run.describe = f"{func.__name__}({', '.join(map(str, args))})"
    return run


def traits(arch):
    """``arch``'s row of the table of architectures (fairseq_hier/recipes/architectures.py):
    task, kind of source, dependency parse ...; ``hat_transformer``: the IWSLT preset's."""
    from fairseq_hier.recipes.architectures import architecture  # the checkout (cli_main)

    return architecture({"hat_transformer": "hat_transformer_iwslt_zh_en"}.get(arch, arch))


def data_steps(work, sizes, archs):
    """The data every architecture of ``archs`` needs, made with the project's commands:
    the demo corpus (fairseq-hier-demo corpus), its data-bin (fairseq-preprocess), the chain
    parse (fairseq-hier-parse project), HAT's BOS-marked copy and the ranker's data-bin and labels."""
    # the checkout's package: cli_main puts it on sys.path
    from fairseq_hier.recipes.architectures import SENTENCES

    raw, steps = work / "raw", []
    train, valid, test = sizes.corpus
    steps.append(Step("data-corpus", command(
        "fairseq-hier-demo", "corpus", "--output-dir", raw, "--train", train, "--valid", valid,
        "--test", test, "--seed", 1)))
    steps.append(Step("data-preprocess", command(
        "fairseq-preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref",
        raw / "train", "--validpref", raw / "valid", "--testpref", raw / "test", "--destdir",
        work / "data-bin", "--joined-dictionary", "--workers", 1), ["data-corpus"]))
    if {a for a in archs if traits(a).parse}:
        steps.append(Step("data-parse-copy", python_step(
            lambda: shutil.copytree(work / "data-bin", work / "parsed-bin")),
            ["data-preprocess"]))
        for split in ("train", "valid", "test"):
            steps.append(Step(f"data-parse-{split}-conllu", python_step(
                write_chain_conllu, raw / f"{split}.src", work / f"{split}.conllu"),
                ["data-corpus"]))
            steps.append(Step(f"data-parse-{split}", command(
                "fairseq-hier-parse", "project", "--conllu", work / f"{split}.conllu", "--source",
                raw / f"{split}.src", "--subword", "none", "--output-prefix",
                work / "parsed-bin" / f"{split}.parse.chain"),
                ["data-parse-copy", f"data-parse-{split}-conllu"]))
    if {a for a in archs if traits(a).layout == SENTENCES}:
        steps.append(Step("data-hat-raw", python_step(
            write_hat_raw, raw, work / "hat-raw", work / "hat-bin", sizes.paragraphs + 2,
            sizes.paragraph_tokens), ["data-corpus"]))
        steps.append(Step("data-hat-preprocess", command(
            "fairseq-preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref",
            work / "hat-raw" / "train", "--validpref", work / "hat-raw" / "valid", "--testpref",
            work / "hat-raw" / "test", "--destdir", work / "hat-bin", "--joined-dictionary",
            "--workers", 1), ["data-hat-raw"]))
    if "paragraph_ranker" in archs:
        steps.append(Step("data-ranker-preprocess", command(
            "fairseq-preprocess", "--only-source", "--source-lang", "src", "--trainpref",
            raw / "train", "--validpref", raw / "valid", "--destdir", work / "ranker-bin",
            "--workers", 1), ["data-corpus"]))
        for split in ("train", "valid"):
            steps.append(Step(f"data-ranker-labels-{split}", command(
                "fairseq-hier-rank", "labels", "--source", raw / f"{split}.src", "--target",
                raw / f"{split}.tgt", "-o", work / "ranker-bin" / f"{split}.labels",
                "--no-progress-bar"), ["data-ranker-preprocess"]))
    return steps


# ------------------------------------------------------------------------------ the matrix
def arch_setup(arch, work, sizes):
    """(data-bin, task flags, model flags, the data steps it needs) of a summariser."""
    cut = ["--max-paragraphs", sizes.paragraphs, "--max-paragraph-tokens",
           sizes.paragraph_tokens]
    positions = sizes.paragraphs * (sizes.paragraph_tokens + 1) + sizes.paragraph_tokens + 2
    summarization = ["--task", "hierarchical_summarization", *cut, "--max-source-positions",
                     positions]
    parsed = ["--dependency-parse", "chain"]
    local_global = ["--encoder-layers", 2, "--global-layers", 1, "--global-heads", sizes.heads]
    hat_positions = (sizes.paragraphs + 2) * (sizes.paragraph_tokens + 1) + 1
    hat = ["--task", "hat_summarization", "--max-source-positions", hat_positions]
    parse_needs = ["data-parse-train", "data-parse-valid", "data-parse-test"]
    return {
        "transformer": ("data-bin", summarization, ["--arch", "transformer",
                                                    "--share-all-embeddings"], []),
        "pht": ("data-bin", summarization, ["--arch", "pht"], []),
        "vht": ("data-bin", summarization, ["--arch", "vht"], []),
        "liu_ht": ("data-bin", summarization, ["--arch", "liu_ht", *local_global], []),
        "parsingsum_ht": ("parsed-bin", [*summarization, *parsed],
                          ["--arch", "parsingsum_ht", *local_global], parse_needs),
        "parsingsum_ft": ("parsed-bin", [*summarization, "--source-layout", "flat", *parsed],
                          ["--arch", "parsingsum_ft", "--share-all-embeddings"], parse_needs),
        "hat_transformer": ("hat-bin", hat, ["--arch", "hat_transformer_iwslt_zh_en",
                                             "--share-all-embeddings"], ["data-hat-preprocess"]),
        "hat_bart_base": ("hat-bin", hat, ["--arch", "hat_bart_base"], ["data-hat-preprocess"]),
        "long_bart_base": ("hat-bin", hat, ["--arch", "long_bart_base"],
                           ["data-hat-preprocess"]),
    }[arch]


def common_train(sizes, save_dir, dtype):
    """fairseq-train's options of every cell: one device (fairseq would otherwise spawn a
    process per visible GPU), dropout 0 (the fp32 comparison sees precision only)."""
    return ["--optimizer", "adam", "--lr", "1e-3", "--max-update", sizes.updates,
            "--distributed-world-size", 1,
            "--no-progress-bar", "--log-interval", 1, "--seed", 3, "--num-workers", 0,
            "--no-epoch-checkpoints", "--dropout", 0, "--save-dir", save_dir,
            *DTYPE_FLAGS[dtype]]


def generate_args(sizes):
    return ["--gen-subset", "test", "--beam", 2, "--max-len-b", sizes.max_len_b,
            "--batch-size", 8, "--num-workers", 0]


PHT_FP32 = "train-pht-fp32"  # the PHT whose attention labels the predictor learns
USER_DIR = ["--user-dir", ROOT / "fairseq_hier"]


def summarizer_steps(arch, dtype, work, sizes, common, extra):
    """A summariser's cell: fairseq-train, then fairseq-generate of its checkpoint."""
    data, task, model, needs = arch_setup(arch, work, sizes)
    model = [*model[:2], *sizes.model, *model[2:]]  # the arch's own flags last
    train_id = f"train-{arch}-{dtype}"
    ckpt = work / "checkpoints" / f"{arch}-{dtype}" / "checkpoint_last.pt"
    return {"train": train_id, "generate": f"generate-{arch}-{dtype}"}, [
        Step(train_id, command("fairseq-train", work / data, *USER_DIR, *task, *model,
                               "--max-tokens", 2000, *common, *extra),
             ["data-preprocess", *needs], train_check(dtype)),
        Step(f"generate-{arch}-{dtype}", command(
            "fairseq-generate", work / data, *USER_DIR, *task, "--path", ckpt,
            *generate_args(sizes), *DTYPE_FLAGS[dtype]), [train_id],
            check_hypotheses(sizes.test_examples, dtype))]


def predictor_steps(dtype, work, sizes, common, extra):
    """The attention predictor's cell: fairseq-train on the fp32 PHT's labels, fairseq-validate
    (its MSE), and fairseq-generate --attention-alignment of that PHT with this predictor."""
    labels, train_id = work / "labels", f"train-attention_predictor-{dtype}"
    ckpt = work / "checkpoints" / f"attention_predictor-{dtype}" / "checkpoint_last.pt"
    predictor = ["--task", "attention_prediction", "--arch", "attention_predictor",
                 "--criterion", "attention_mse", "--input-dim", sizes.dim, "--encoder-layers", 1,
                 "--encoder-attention-heads", sizes.heads, "--encoder-ffn-embed-dim",
                 2 * sizes.dim, "--batch-size", 8]
    data, task, _, _ = arch_setup("pht", work, sizes)
    cell = {"train": train_id, "generate": f"generate-attention_predictor-{dtype}",
            "aligned": f"aligned-{dtype}"}
    return cell, [
        Step(train_id, command("fairseq-train", labels, *predictor, *common, *extra),
             ["data-labels"], train_check(dtype)),
        Step(cell["generate"], command(
            "fairseq-validate", labels, "--task", "attention_prediction", "--path", ckpt,
            "--batch-size", 8, "--num-workers", 0, "--valid-subset", "valid",
            *DTYPE_FLAGS[dtype]), [train_id], check_validate),
        Step(cell["aligned"], command(
            "fairseq-generate", work / data, *USER_DIR, *task, "--path",
            work / "checkpoints" / "pht-fp32" / "checkpoint_last.pt", *generate_args(sizes),
            "--attention-alignment", "--align-predictor", ckpt, *DTYPE_FLAGS[dtype]),
            [train_id, PHT_FP32], check_hypotheses(sizes.test_examples, dtype))]


def ranker_steps(dtype, work, sizes, common, extra):
    """The paragraph ranker's cell: fairseq-train, fairseq-validate (its loss) and
    fairseq-hier-rank apply over the test sources (one ranked line each)."""
    bin_dir, train_id = work / "ranker-bin", f"train-paragraph_ranker-{dtype}"
    ckpt = work / "checkpoints" / f"paragraph_ranker-{dtype}" / "checkpoint_last.pt"
    ranker = ["--task", "paragraph_ranking", "--arch", "paragraph_ranker", "--criterion",
              "paragraph_ranking", "--embed-dim", sizes.dim, "--hidden-size", sizes.dim,
              "--feature-dim", sizes.dim, "--batch-size", 8]
    ranked = work / f"ranked-{dtype}.test.src"
    cell = {"train": train_id, "generate": f"generate-paragraph_ranker-{dtype}",
            "rank": f"rank-{dtype}"}
    return cell, [
        Step(train_id, command("fairseq-train", bin_dir, *USER_DIR, *ranker, *common, *extra),
             ["data-ranker-labels-train", "data-ranker-labels-valid"], train_check(dtype)),
        Step(cell["generate"], command(
            "fairseq-validate", bin_dir, *USER_DIR, "--task", "paragraph_ranking", "--path",
            ckpt, "--batch-size", 8, "--num-workers", 0, "--valid-subset", "valid",
            *DTYPE_FLAGS[dtype]), [train_id], check_validate),
        Step(cell["rank"], command(
            "fairseq-hier-rank", "apply", "--path", ckpt, "--input", work / "raw" / "test.src",
            "--output", ranked, "--no-progress-bar"), [train_id],
            check_lines(ranked, sizes.test_examples))]


def label_steps(work, sizes, planned):
    """The predictor's labels (fairseq-hier-extract-attention) from the fp32 PHT, which is
    trained for them alone when it is not a row of the run."""
    steps = []
    if PHT_FP32 not in planned:
        data, task, model, _ = arch_setup("pht", work, sizes)
        steps.append(Step(PHT_FP32, command(
            "fairseq-train", work / data, *USER_DIR, *task, *model, *sizes.model,
            "--max-tokens", 2000, *common_train(sizes, work / "checkpoints" / "pht-fp32",
                                                "fp32")), ["data-preprocess"], check_train))
    labels = ["fairseq-hier-extract-attention", work / "data-bin", "--path",
              work / "checkpoints" / "pht-fp32" / "checkpoint_last.pt", "--output-dir",
              work / "labels", "--splits", "train", "valid", "--batch-size", 16]
    return steps + [Step("data-labels", command(*labels, *(["--cpu"] if sizes.dry else [])),
                         [PHT_FP32])]


def matrix_steps(args, work, sizes):
    """{(arch, dtype): {column: step id}} and the steps of the matrix."""
    steps, cells = [], {}
    for arch in args.archs:
        for dtype in args.dtypes:
            extra = args.extra_train_args.get((arch, dtype), [])
            common = common_train(sizes, work / "checkpoints" / f"{arch}-{dtype}", dtype)
            if arch == "attention_predictor":
                cell, more = predictor_steps(dtype, work, sizes, common, extra)
            elif arch == "paragraph_ranker":
                cell, more = ranker_steps(dtype, work, sizes, common, extra)
            else:
                cell, more = summarizer_steps(arch, dtype, work, sizes, common, extra)
            cells[(arch, dtype)] = cell
            steps += more
    if "attention_predictor" in args.archs:
        steps = label_steps(work, sizes, {s.id for s in steps}) + steps
    return cells, steps


# ------------------------------------------------------------------------------ benchmarks
def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun_step(work, sizes, dtype):
    """2 training processes under torchrun: pht a few updates. The backend follows the GPUs the
    step sees: one, both ranks on it with gloo (NCCL refuses two ranks on one device); 2+, nccl;
    the dry run, 2 CPU processes with gloo."""
    data, task, model, _ = arch_setup("pht", work, sizes)
    flags = ["--cpu"] if sizes.dry else []
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", 2,
            "--master_port", free_port(), "-m", "fairseq_cli.train", work / data, "--user-dir",
            ROOT / "fairseq_hier", *task, *model, *sizes.model, "--max-tokens", 2000,
            *common_train(sizes, work / "checkpoints" / "torchrun", dtype), *flags,
            "--distributed-world-size", 2, "--ddp-backend", "pytorch_ddp"]

    def run():
        import torch  # (imported by the parent already; counting GPUs initialises no CUDA)

        backend = "nccl" if torch.cuda.device_count() >= 2 else "gloo"
        print(f"{torch.cuda.device_count()} GPUs: --distributed-backend {backend}", flush=True)
        return process(*argv, "--distributed-backend", backend)()
    run.describe = process(*argv).describe + " --distributed-backend (gloo; nccl on 2+ GPUs)"
    return run


def check_torchrun(text):
    facts, error = check_train(text)
    if error is None and "training on 2 devices" not in text:
        error = "'training on 2 devices' not in the log"
    return facts, error


def benchmark_steps(args, sizes, work):
    """The benchmark steps of ``args.benchmarks`` ({name: step id}, steps). Every one but
    torchrun is timed, so runs alone (exclusive)."""
    py, device, dry = sys.executable, sizes.cuda, sizes.dry
    # training_cost.py at its headline length first, the other lengths later (the dry run's 200
    # tokens stand for 3000)
    eff = [py, BENCH / "training_cost.py", "--device", device, "--dtype", "bf16", "--no-max-batch",
           *(["--widths", "tiny", "--steps", 1, "--one-process"] if dry else ["--steps", 10])]
    runs = {
        "efficiency": (process(*eff, "--lengths", 200 if dry else 3000), None),
        "efficiency_other_lengths": (process(*eff, "--lengths", "100,300" if dry
                                             else "1600,12000"), None),
        "max_batch": (process(py, BENCH / "training_cost.py", "--device", device, "--dtype",
                              "fp32,bf16", "--lengths", 1600, "--archs",
                              "transformer,transformer-S2,pht,vht", "--steps", 1,
                              "--one-process"),
                      "the max-batch search caps CUDA memory "
                      "(torch.cuda.set_per_process_memory_fraction): CUDA only" if dry else None),
        "decoding_speed": (process(py, BENCH / "decoding_speed.py", "--device", device,
                                   "--dtype", "bf16", *(
            ["--widths", "tiny", "--paragraphs", 2, "--paragraph-tokens", 10, "--target-steps",
             4, "--beam", 2, "--repeats", 1, "--batch-size", 1] if dry else [])), None),
        # the dry run at short sources: their models keep their widths (BART base, zh_en)
        "hat_efficiency": (process(py, BENCH / "hat_training_cost.py", "--device", device,
                                   "--dtype", "bf16",
                                   *(["--lengths", 100, "--steps", 1] if dry else [])), None),
        "doc_mt_efficiency": (process(py, BENCH / "doc_mt_training_cost.py", "--device", device,
                                      "--dtype", "bf16", *(
            ["--dims", "zh_en", "--lengths", 88, "--steps", 1] if dry else [])), None),
        # LGA's training part only (--sentences 0): the parsing part needs spaCy
        "parsing_speed": (process(py, BENCH / "parsing_speed.py", "--device", device,
                                  "--dtype", "bf16", "--sentences", 0, *(
            ["--lengths", 200, "--widths", "tiny", "--steps", 1, "--one-process"] if dry
            else ["--lengths", 1600])), None),
        "torchrun": (torchrun_step(work, sizes, "fp32"), None),
    }
    steps, ids = [], {}
    for name in args.benchmarks:
        run, skip = runs[name]
        ids[name] = f"bench-{name}"
        timed = name != "torchrun"
        steps.append(Step(ids[name], run, [] if timed else ["data-preprocess"],
                          check_json if timed else check_torchrun, skip, exclusive=timed))
    return ids, steps


# ------------------------------------------------------------------------------ the plan
def plan(args, work, sizes):
    """Every step of the check in the order it starts (:func:`run_order`): (cells {(arch,
    dtype): {column: step id}}, benchmarks {name: step id}, steps)."""
    cells, matrix = matrix_steps(args, work, sizes)
    bench_ids, bench = benchmark_steps(args, sizes, work)
    data = {s.id: s for s in data_steps(work, sizes, args.archs)}
    needed, todo = set(), [n for s in matrix + bench for n in s.needs]
    while todo:  # only the data steps that a selected step needs
        sid = todo.pop()
        if sid in data and sid not in needed:
            needed.add(sid)
            todo.extend(data[sid].needs)
    steps = [s for sid, s in data.items() if sid in needed] + matrix + bench
    return cells, bench_ids, run_order(steps, cells, bench_ids)


def run_order(steps, cells, bench_ids):
    """``steps`` in the order they start: the training of every cell (by architecture, each in
    :data:`RUN_DTYPES`: the half precisions against fp32 are the most telling), then every
    evaluation (generation, validation, alignment, ranking), then the benchmarks in
    :data:`BENCHMARK_ORDER`; a step's data steps come just before it."""
    by_id = {s.id: s for s in steps}
    order = sorted(cells, key=lambda c: (ARCHS.index(c[0]), RUN_DTYPES.index(c[1])))
    wanted = [cells[c]["train"] for c in order]
    wanted += [sid for c in order for column, sid in cells[c].items() if column != "train"]
    wanted += [bench_ids[name] for name in BENCHMARK_ORDER if name in bench_ids]
    ordered, placed = [], set()

    def place(sid):
        if sid not in placed:
            placed.add(sid)
            for need in by_id[sid].needs:
                place(need)
            ordered.append(by_id[sid])
    for sid in wanted + [s.id for s in steps]:
        place(sid)
    return ordered


# ------------------------------------------------------------------------------ report
def build_rows(cells, by_id):
    """One row per (arch, dtype); the bf16/fp16 losses compared with fp32's. Returns (rows,
    failed checks)."""
    rows, failed = [], 0
    for (arch, dtype), cell in cells.items():
        row = {"arch": arch, "dtype": dtype}
        errors = []
        for column, sid in cell.items():
            step = by_id[sid]
            row[column] = step.status
            row[f"{column}_s"] = step.seconds
            for key, value in step.facts.items():
                row.setdefault(key, value)
            if step.status != "ok" and step.error:
                errors.append(f"{column}: {step.error}")
        reference = by_id[cells[(arch, "fp32")]["train"]].facts.get("loss") \
            if (arch, "fp32") in cells else None
        row["loss_vs_fp32"], row["loss_check"] = None, "n/a"
        if dtype != "fp32" and finite(reference) and finite(row.get("loss")):
            rel = abs(row["loss"] - reference) / abs(reference)
            row["loss_vs_fp32"] = round(rel, 5)
            row["loss_check"] = "ok" if rel <= LOSS_RTOL[dtype] else "failed"
            if row["loss_check"] == "failed":
                failed += 1
                errors.append(f"first-update loss {row['loss']} vs fp32 {reference}: relative "
                              f"difference {rel:.4f} > {LOSS_RTOL[dtype]}")
        row["error"] = "; ".join(errors) or None
        rows.append(row)
    return rows, failed


BENCH_KEYS = {  # the figures the table shows of each benchmark's JSON summary
    "efficiency": r"^(pht|vht)_tps_ratio_\d+_bf16$|^(pht|vht)_mem_ratio_\d+_bf16$",
    "max_batch": r"max_batch_ratio",
    "decoding_speed": r"_decode_(time|mem)_ratio_bf16$",
    "hat_efficiency": r"^hat_(time|mem)_ratio_\d+_bf16$",
    "doc_mt_efficiency": r"^hat_mt_(time|mem)_ratio(_zh_en)?(_\d+)?_bf16$",
    "parsing_speed": r"^lga_(time|mem)_ratio(_\d+)?_bf16$",
    "torchrun": r"^loss$|^valid_loss$",
}
BENCH_KEYS["efficiency_other_lengths"] = BENCH_KEYS["efficiency"]
NOT_RUN = ("not run", "pending", "running")  # no result (the last two: a killed run's file)


class Report:
    """What the check has found so far: ``OUT/table.md`` and ``OUT/gpu_check.json``, written
    together and atomically (:func:`fairseq_hier.io.atomic_outputs`) at the start, whenever a
    step starts or ends, and at the end."""

    def __init__(self, args, cells, bench_ids, steps, start):
        self.args, self.cells, self.bench_ids, self.steps = args, cells, bench_ids, steps
        self.start, self.stopped_by, self.setup_error = start, None, None
        self.device, self.torch = "not queried yet", None

    def summary(self, finished):
        by_id = {s.id: s for s in self.steps}
        rows, failed_checks = build_rows(self.cells, by_id)
        benchmarks = {}
        for name, sid in self.bench_ids.items():
            step = by_id[sid]  # a benchmark's JSON summary; torchrun's losses
            benchmarks[name] = {"status": step.status, "seconds": step.seconds,
                                "summary": step.facts.get("summary", dict(step.facts)),
                                "error": step.error}
        counts = Counter(s.status for s in self.steps)
        setup_failed = {s.id: s.error for s in self.steps
                        if s.id.startswith("data-") and s.status == "failed"}
        if self.setup_error:
            setup_failed["import"] = self.setup_error
        return {"device": self.device, "dry_run": self.args.dry_run,
                "python": platform.python_version(), "torch": self.torch,
                "finished": finished, "stopped_by": self.stopped_by,
                "budget_s": self.args.budget, "jobs": self.args.jobs,
                "rows": rows, "benchmarks": benchmarks,
                "steps": [{"id": s.id, "status": s.status, "seconds": s.seconds,
                           "error": s.error} for s in self.steps],
                "passed": counts["ok"],
                "failed": counts["failed"] + failed_checks + bool(self.setup_error),
                "skipped": counts["skipped"], "not_run": sum(counts[s] for s in NOT_RUN),
                "wall_s": round(time.monotonic() - self.start, 1), "setup_failed": setup_failed}

    def write(self, finished):
        """Both files from the steps' state now; returns the JSON summary."""
        from fairseq_hier.io import atomic_outputs

        summary = self.summary(finished)
        with atomic_outputs([self.args.out / "table.md", self.args.out / "gpu_check.json"]) \
                as (table, js):
            table.write(markdown(summary, len(self.steps)))
            js.write(json.dumps(summary, indent=1) + "\n")
        return summary


def state_line(summary):
    """How far the run got, in words: the table's second line."""
    if not summary["finished"]:
        return ("**in progress**: rewritten whenever a step starts or ends; when this line stays,"
                " the check was killed and its steps pending or running did not run")
    if summary["stopped_by"] == "budget":
        return f"stopped: the budget of {summary['budget_s']:g} s ran out; steps not run: " \
               f"{summary['not_run']}"
    if summary["stopped_by"]:
        return f"stopped by {summary['stopped_by']}; steps not run: {summary['not_run']}"
    return "finished"


def markdown(summary, total):
    def cell(value):
        return "" if value is None else str(value).replace("|", "\\|")

    lines = [f"# gpu-check on {summary['device']}", "",
             f"{'dry run (CPU, smallest sizes)' if summary['dry_run'] else 'device run'}; "
             f"failed: {summary['failed']}; not run: {summary['not_run']}; passed: "
             f"{summary['passed']} of {total} steps; wall time {summary['wall_s']:.0f} s",
             state_line(summary), "",
             "| arch | dtype | train | s | loss (update 1) | valid loss | vs fp32 | evaluation "
             "| s | eval loss | hypotheses | error |", "|" + "---|" * 12]
    for r in summary["rows"]:
        evaluation = r["generate"] + "".join(f" ({k}: {r[k]})" for k in ("aligned", "rank")
                                             if k in r)
        lines.append("| " + " | ".join(cell(v) for v in (
            r["arch"], r["dtype"], r["train"], r.get("train_s"), r.get("loss"),
            r.get("valid_loss"), r.get("loss_vs_fp32"), evaluation, r.get("generate_s"),
            r.get("eval_loss"), r.get("hypotheses"), r["error"])) + " |")
    if summary["benchmarks"]:
        lines += ["", "| benchmark | status | s | figures | error |", "|---|---|---|---|---|"]
        for name, b in summary["benchmarks"].items():
            figures = ", ".join(f"{k} {v}" for k, v in (b.get("summary") or {}).items()
                                if re.search(BENCH_KEYS[name], k))
            lines.append("| " + " | ".join(cell(v) for v in (
                name, b["status"], b["seconds"], figures, b["error"])) + " |")
    lines += ["", "Every step in the order it starts:", "",
              "| # | step | status | s | error |", "|---|---|---|---|---|"]
    for n, s in enumerate(summary["steps"], start=1):
        lines.append("| " + " | ".join(cell(v) for v in (
            n, s["id"], s["status"], s["seconds"], s["error"])) + " |")
    return "\n".join(lines) + "\n"


def device_facts(dry_run):
    """(device name, number of GPUs), read in a forked child: the parent initialises no CUDA."""
    import torch

    if dry_run:
        return f"cpu (dry run, {os.cpu_count()} cores)", 0
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            name = torch.cuda.get_device_name(0) if count else "no CUDA device"
            os.write(write, json.dumps([f"{name} (x{count})", count]).encode())
        finally:
            os._exit(0)
    os.close(write)
    text = os.read(read, 1000).decode()
    os.waitpid(pid, 0)
    return tuple(json.loads(text)) if text else ("unknown (the device query failed)", 0)


def prepare_out(out):
    """``OUT/work`` and ``OUT/logs`` emptied; temporary files of a killed earlier run removed."""
    for folder in (out / "work", out / "logs"):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    for name in ("table.md", "gpu_check.json"):
        for stale in out.glob(f".{name}.*.part*"):
            stale.unlink()


def main(args, stop):
    start = time.monotonic()
    sizes = Sizes(args.dry_run)
    prepare_out(args.out)
    cells, bench_ids, steps = plan(args, args.out / "work", sizes)
    report = Report(args, cells, bench_ids, steps, start)
    report.write(finished=False)
    try:
        with stop.raising():
            torch = warm_up()
    except KeyboardInterrupt:
        torch = None  # (a signal: every step is not run)
    except Exception as error:  # noqa: BLE001 - e.g. a package the device lacks: say which
        report.setup_error = (f"importing fairseq and fairseq_hier failed: "
                              f"{type(error).__name__}: {error}")
        print(f"[{PROG}] {report.setup_error}", file=sys.stderr)
        for step in steps:
            step.status, step.error = "skipped", report.setup_error
        return finish_run(report, stop)
    if torch is not None:
        if args.dry_run:
            torch.set_num_threads(1)
        report.device, _ = device_facts(args.dry_run)
        report.torch = torch.__version__
        print(f"[{PROG}] {report.device}; torch {report.torch}; {len(steps)} steps, {args.jobs} "
              f"at once; budget {'none' if args.budget is None else f'{args.budget:g} s'}",
              file=sys.stderr, flush=True)
        report.stopped_by = run_steps(
            steps, args.out / "logs", args.jobs, args.step_timeout, args.budget, start, stop,
            on_change=lambda: report.write(finished=False),
            cuda_initialized=torch.cuda.is_initialized)
    else:
        mark_not_run(steps, stop_reason(stop.name, args.budget))
    return finish_run(report, stop)


def finish_run(report, stop):
    """The final table and JSON (the JSON also as the last printed line); the exit status, or
    the signal raised again (run_main: 130 / 143)."""
    from fairseq_hier.errors import Interrupted

    report.stopped_by = stop.name or report.stopped_by
    summary = report.write(finished=True)
    print(f"[{PROG}] wrote {report.args.out / 'table.md'} and "
          f"{report.args.out / 'gpu_check.json'}", file=sys.stderr)
    print(json.dumps(summary), flush=True)
    if stop.signum is not None:
        raise Interrupted(stop.signum)
    return 1 if summary["failed"] else 3 if summary["not_run"] else 0


def cli_main(argv=None):
    # dry run: no CUDA device for any step; a CUDA check never initialises CUDA in this process
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.path.insert(0, str(ROOT))  # fairseq_hier importable from a checkout that is not installed
    from fairseq_hier.errors import run_main

    status = []

    def run():
        args = parse_args(argv)
        if args.dry_run:
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            os.environ.setdefault("OMP_NUM_THREADS", "1")
        with Stop() as stop:
            status.append(main(args, stop))

    rc = run_main(PROG, run)
    return rc or (status[0] if status else 1)


if __name__ == "__main__":
    sys.exit(cli_main())
