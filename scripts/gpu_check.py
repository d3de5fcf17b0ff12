"""GPU readiness in one command (``make gpu-check``; docs/gpu.md).

Runs, on the CUDA device of the machine, what fairseq-hier does on a GPU, and says for each step
whether it worked and, if not, why:

1. the matrix: every architecture (:data:`ARCHS`) trained a few updates with ``fairseq-train``
   and evaluated, in fp32, ``--fp16`` and ``--bf16``: ``fairseq-generate`` for the summarisers
   (hypotheses counted), ``fairseq-validate`` for the attention predictor (its MSE; plus
   ``fairseq-generate --attention-alignment`` of the fp32 PHT with that predictor) and for the
   paragraph ranker (its loss; plus ``fairseq-hier-rank`` over the test sources). Checked: a
   finite loss at the first update and at validation, one hypothesis (ranked line) per test
   example, and the first update's loss of the bf16 and fp16 runs within :data:`LOSS_RTOL` of
   the fp32 run's (same seed, same initial weights, same first batch, dropout 0: only the
   precision differs);
2. the benchmarks on the device in bfloat16 (``--dtype bf16``; :data:`BENCHMARKS`):
   ``benchmarks/efficiency.py`` at 1600/3000/12000 tokens, its 11 GiB max-batch search at 1600
   (fp32 and bf16, CUDA only), ``decoding_speed.py``, ``hat_efficiency.py``,
   ``doc_mt_efficiency.py``, the LGA training part of ``parsing_speed.py`` (``--sentences 0``:
   its parsing part needs spaCy), and a 2-process ``torchrun`` training run (fp32; one GPU: both
   ranks on it, gloo; 2+ GPUs: nccl; the dry run: 2 CPU processes, gloo).

Every step runs in a child process with its own log (``OUT/logs/STEP.log``), timed, under a
timeout; a failing step does not stop the others (steps that need its output are skipped). The
commands run in forked children of this process, which imported fairseq once (a fairseq command
spends ~4 s importing): the parent never initialises CUDA (checked before every fork), each child
does. Benchmarks and torchrun run as processes of their own.

Output: ``OUT/table.md`` (Markdown), ``OUT/gpu_check.json``, and as the last printed line that
JSON: ``{"device", "dry_run", "python", "torch", "rows": [{"arch", "dtype", "train",
"generate", "loss", "valid_loss", "loss_vs_fp32", "hypotheses", ..., "error"}], "benchmarks":
{name: {"status", "seconds", "summary", "error"}}, "failed": N, "wall_s"}``. ``failed`` counts
failed steps and failed checks; the exit status is 1 when it is above 0. A failed row or
benchmark carries the last error line of its log.

``GPU_CHECK_DRY_RUN=1`` (``--dry-run``): the same matrix on the CPU at the smallest sizes (tiny
widths, 2 updates; the benchmarks in bf16 too, at tiny widths and lengths, 1 timed step:
hat_efficiency.py at 100 source tokens and doc_mt_efficiency.py's zh_en models at 88, at their
own widths; no max-batch search, which caps CUDA memory; ``--fp16`` and ``--bf16`` train on the
CPU too), so that the check itself stays tested without a GPU.

Options (flag, or environment variable when the flag is absent):
``--out`` / ``GPU_CHECK_OUT`` (default ``gpu_check``), ``--archs`` / ``GPU_CHECK_ARCHS``,
``--dtypes`` / ``GPU_CHECK_DTYPES``, ``--benchmarks`` / ``GPU_CHECK_BENCHMARKS`` (comma-separated,
``all`` or ``none``), ``--jobs`` / ``GPU_CHECK_JOBS`` (steps at once, default 1),
``--step-timeout`` / ``GPU_CHECK_STEP_TIMEOUT`` (seconds), ``--extra-train-args`` /
``GPU_CHECK_EXTRA_TRAIN_ARGS`` (``ARCH/DTYPE=ARGS``: more fairseq-train arguments for one cell
of the matrix; how a test makes one step fail on purpose).

    python3 scripts/gpu_check.py [--dry-run] [--archs pht,vht] [--dtypes fp32,bf16]
        [--benchmarks efficiency,torchrun|all|none] [--out gpu_check]
"""

import argparse
import json
import logging
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
PROG = "gpu-check"

ARCHS = ("transformer", "pht", "vht", "liu_ht", "parsingsum_ft", "parsingsum_ht",
         "hat_transformer", "hat_bart_base", "long_bart_base", "attention_predictor",
         "paragraph_ranker")
DTYPES = ("fp32", "fp16", "bf16")
DTYPE_FLAGS = {"fp32": [], "fp16": ["--fp16"], "bf16": ["--bf16"]}
BENCHMARKS = ("efficiency", "max_batch", "decoding_speed", "hat_efficiency", "doc_mt_efficiency",
              "parsing_speed", "torchrun")
# The first update's loss of a bf16 / fp16 run may differ from fp32's by this fraction of it.
# The loss is a sum of cross-entropies computed in float32 from logits that went through a few
# layers of half-precision matrix products: bfloat16 keeps 8 significant bits (relative rounding
# 2^-9 = 0.2% per operation), float16 11 (2^-12 = 0.02%). A handful of layers stays well inside
# 10x one rounding step: 2% (bf16) and 0.5% (fp16). Measured in the dry run (CPU, every
# architecture): at most 0.84% (bf16: the attention predictor, whose MSE is ~0.002; the others at
# most 0.03%) and 0.003% (fp16); fairseq logs losses to 3 decimals. A wrong mask, cast or
# overflow moves the loss by far more.
LOSS_RTOL = {"bf16": 0.02, "fp16": 0.005}

# module:function of each command (what its console script calls): on the lent device the
# project is not installed, only importable, so commands are found by module, never by script
ENTRIES = {
    "fairseq-preprocess": "fairseq_cli.preprocess:cli_main",
    "fairseq-train": "fairseq_cli.train:cli_main",
    "fairseq-generate": "fairseq_cli.generate:cli_main",
    "fairseq-validate": "fairseq_cli.validate:cli_main",
    "fairseq-hier-demo-corpus": "fairseq_hier.cli.make_demo_corpus:cli_main",
    "fairseq-hier-deps": "fairseq_hier.cli.dependencies:cli_main",
    "fairseq-hier-extract-attention": "fairseq_hier.cli.extract_attention:cli_main",
    "fairseq-hier-rank-labels": "fairseq_hier.cli.rank_labels:cli_main",
    "fairseq-hier-rank": "fairseq_hier.cli.rank_paragraphs:cli_main",
}


# ------------------------------------------------------------------------------ options
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


def parse_extra(option, texts):
    """``ARCH/DTYPE=ARGS`` items -> {(arch, dtype): [args]}."""
    from fairseq_hier.errors import HierError

    extra = {}
    for text in texts:
        cell, sep, args = text.partition("=")
        arch, slash, dtype = cell.partition("/")
        if not sep or not slash or arch not in ARCHS or dtype not in DTYPES:
            raise HierError(f"{option}: expected ARCH/DTYPE=ARGS with ARCH of {', '.join(ARCHS)} "
                            f"and DTYPE of {', '.join(DTYPES)}, got {text!r}")
        extra[(arch, dtype)] = shlex.split(args)
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
    p.add_argument("--jobs", default=env_default("GPU_CHECK_JOBS", "1"),
                   help="steps run at once (GPU_CHECK_JOBS; default 1)")
    p.add_argument("--step-timeout", default=env_default("GPU_CHECK_STEP_TIMEOUT", "900"),
                   help="seconds after which a step is killed and failed "
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
    for name, option, kind in (("jobs", "--jobs / GPU_CHECK_JOBS", int),
                               ("step_timeout", "--step-timeout / GPU_CHECK_STEP_TIMEOUT", float)):
        try:
            value = kind(getattr(args, name))
        except ValueError:
            value = 0
        if not value > 0:
            raise HierError(f"{option}: expected a positive number, got {getattr(args, name)!r}")
        setattr(args, name, value)
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
    ``needs``; ``check(log) -> (facts dict, error or None)`` reads its log afterwards."""

    def __init__(self, sid, run, needs=(), check=None, skip=None):
        self.id, self.run, self.needs, self.check, self.skip = sid, run, list(needs), check, skip
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
    """A step body: ``argv`` as a process of its own (benchmarks, torchrun), output to the log."""
    argv = [str(a) for a in argv]

    def run():
        return subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL).returncode
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


def child(step, log):
    """In the forked child: run ``step`` with stdout and stderr to ``log``; never returns."""
    rc = 1
    try:
        os.setpgid(0, 0)  # its own process group: a timeout kills its subprocesses too
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


def run_steps(steps, logs, jobs, timeout, torch):
    """Run ``steps`` (in order, ``jobs`` at once, each after the steps it needs); fills in each
    step's status, seconds, facts and error. Interrupted (Ctrl-C, SIGTERM): the running steps'
    process groups are killed on the way out."""
    running = {}
    try:
        _schedule(steps, logs, jobs, timeout, torch, running)
    finally:
        for pid in running:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _schedule(steps, logs, jobs, timeout, torch, running):
    by_id = {s.id: s for s in steps}
    pending = list(steps)
    while pending or running:
        for step in list(pending):
            if step.skip:
                step.status, step.error = "skipped", step.skip
                pending.remove(step)
                continue
            blocked = [n for n in step.needs if by_id[n].status in ("failed", "skipped")]
            if blocked:
                step.status = "skipped"
                step.error = f"needs {blocked[0]} ({by_id[blocked[0]].status})"
                pending.remove(step)
            elif len(running) < jobs and all(by_id[n].status == "ok" for n in step.needs):
                if torch.cuda.is_initialized():
                    raise RuntimeError("CUDA was initialised before forking a step")
                sys.stdout.flush()
                sys.stderr.flush()
                log = logs / f"{step.id}.log"
                pid = os.fork()
                if pid == 0:
                    child(step, str(log))
                try:  # (the child does the same: whichever runs first)
                    os.setpgid(pid, pid)
                except OSError:
                    pass
                running[pid] = (step, time.perf_counter(), log)
                pending.remove(step)
                step.status = "running"
                print(f"[{PROG}] start {step.id}", file=sys.stderr, flush=True)
        if not running:
            if pending and not any(all(by_id[n].status in ("ok", "failed", "skipped")
                                       for n in s.needs) for s in pending):
                raise RuntimeError(f"steps waiting on steps that never run: {pending[0].id}")
            continue
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.05)
            for child_pid, (step, start, log) in running.items():
                if time.perf_counter() - start > timeout and step.status == "running":
                    step.status = "timeout"
                    try:
                        os.killpg(child_pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            continue
        step, start, log = running.pop(pid)
        finish(step, os.waitstatus_to_exitcode(status), time.perf_counter() - start, log, timeout)


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


def data_steps(work, sizes, archs):
    """The data every architecture of ``archs`` needs, made with the project's commands:
    the demo corpus (fairseq-hier-demo-corpus), its data-bin (fairseq-preprocess), the chain
    parse (fairseq-hier-deps), HAT's BOS-marked copy and the ranker's data-bin and labels."""
    raw, steps = work / "raw", []
    train, valid, test = sizes.corpus
    steps.append(Step("data-corpus", command(
        "fairseq-hier-demo-corpus", "--out-dir", raw, "--train", train, "--valid", valid,
        "--test", test, "--seed", 1)))
    steps.append(Step("data-preprocess", command(
        "fairseq-preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref",
        raw / "train", "--validpref", raw / "valid", "--testpref", raw / "test", "--destdir",
        work / "data-bin", "--joined-dictionary", "--workers", 1), ["data-corpus"]))
    if {"parsingsum_ft", "parsingsum_ht"} & set(archs):
        steps.append(Step("data-parse-copy", python_step(
            lambda: shutil.copytree(work / "data-bin", work / "parsed-bin")),
            ["data-preprocess"]))
        for split in ("train", "valid", "test"):
            steps.append(Step(f"data-parse-{split}-conllu", python_step(
                write_chain_conllu, raw / f"{split}.src", work / f"{split}.conllu"),
                ["data-corpus"]))
            steps.append(Step(f"data-parse-{split}", command(
                "fairseq-hier-deps", "--conllu", work / f"{split}.conllu", "--source",
                raw / f"{split}.src", "--subword", "none", "--output-prefix",
                work / "parsed-bin" / f"{split}.parse.chain"),
                ["data-parse-copy", f"data-parse-{split}-conllu"]))
    if {"hat_transformer", "hat_bart_base", "long_bart_base"} & set(archs):
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
                "fairseq-hier-rank-labels", "--source", raw / f"{split}.src", "--target",
                raw / f"{split}.tgt", "--output", work / "ranker-bin" / f"{split}.labels",
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
    fairseq-hier-rank over the test sources (one ranked line each)."""
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
            "fairseq-hier-rank", "--path", ckpt, "--source", work / "raw" / "test.src",
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
              work / "checkpoints" / "pht-fp32" / "checkpoint_last.pt", "--destdir",
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


def torchrun_step(work, sizes, dtype, gpus):
    """2 training processes under torchrun: pht a few updates. One GPU: both ranks on it with
    gloo (NCCL refuses two ranks on one device); 2+ GPUs: nccl; dry run: 2 CPU processes."""
    data, task, model, _ = arch_setup("pht", work, sizes)
    backend = "nccl" if gpus >= 2 else "gloo"
    flags = ["--cpu"] if sizes.dry else []
    port = free_port()
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", 2,
            "--master_port", port, "-m", "fairseq_cli.train", work / data, "--user-dir",
            ROOT / "fairseq_hier", *task, *model, *sizes.model, "--max-tokens", 2000,
            *common_train(sizes, work / "checkpoints" / "torchrun", dtype), *flags,
            "--distributed-world-size", 2, "--distributed-backend", backend,
            "--ddp-backend", "pytorch_ddp"]
    return process(*argv)


def check_torchrun(text):
    facts, error = check_train(text)
    if error is None and "training on 2 devices" not in text:
        error = "'training on 2 devices' not in the log"
    return facts, error


def benchmark_steps(args, work, sizes, gpus):
    """The benchmark steps of ``args.benchmarks`` ({name: step id}, steps)."""
    py, device, dry = sys.executable, sizes.cuda, sizes.dry
    eff = [py, BENCH / "efficiency.py", "--device", device, "--dtype", "bf16"]
    runs = {
        "efficiency": (process(*eff, *(
            ["--widths", "tiny", "--lengths", "100,200,300", "--steps", 1, "--one-process"]
            if dry else ["--lengths", "1600,3000,12000", "--steps", 10]), "--no-max-batch"),
            None),
        "max_batch": (process(py, BENCH / "efficiency.py", "--device", device, "--dtype",
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
        "hat_efficiency": (process(py, BENCH / "hat_efficiency.py", "--device", device, "--dtype",
                                   "bf16", *(["--lengths", 100, "--steps", 1] if dry else [])),
                           None),
        "doc_mt_efficiency": (process(py, BENCH / "doc_mt_efficiency.py", "--device", device,
                                      "--dtype", "bf16", *(
            ["--dims", "zh_en", "--lengths", 88, "--steps", 1] if dry else [])), None),
        # LGA's training part only (--sentences 0): the parsing part needs spaCy
        "parsing_speed": (process(py, BENCH / "parsing_speed.py", "--device", device,
                                  "--dtype", "bf16", "--sentences", 0, *(
            ["--lengths", 200, "--widths", "tiny", "--steps", 1, "--one-process"] if dry
            else ["--lengths", 1600])), None),
        "torchrun": (torchrun_step(work, sizes, "fp32", gpus), None),
    }
    steps, ids = [], {}
    for name in args.benchmarks:
        run, skip = runs[name]
        ids[name] = f"bench-{name}"
        needs = ["data-preprocess"] if name == "torchrun" else []
        steps.append(Step(ids[name], run, needs, check_torchrun if name == "torchrun"
                          else check_json, skip))
    return ids, steps


# ------------------------------------------------------------------------------ report
def build_rows(args, cells, by_id):
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


def write_outputs(args, device, rows, benchmarks, failed, wall):
    def cell(value):
        return "" if value is None else str(value).replace("|", "\\|")

    lines = [f"# gpu-check on {device}", "",
             f"{'dry run (CPU, smallest sizes)' if args.dry_run else 'device run'}; "
             f"failed: {failed}; wall time {wall:.0f} s", "",
             "| arch | dtype | train | s | loss (update 1) | valid loss | vs fp32 | evaluation "
             "| s | eval loss | hypotheses | error |", "|" + "---|" * 12]
    for r in rows:
        evaluation = r["generate"] + "".join(f" ({k}: {r[k]})" for k in ("aligned", "rank")
                                             if k in r)
        lines.append("| " + " | ".join(cell(v) for v in (
            r["arch"], r["dtype"], r["train"], r.get("train_s"), r.get("loss"),
            r.get("valid_loss"), r.get("loss_vs_fp32"), evaluation, r.get("generate_s"),
            r.get("eval_loss"), r.get("hypotheses"), r["error"])) + " |")
    if benchmarks:
        lines += ["", "| benchmark | status | s | figures | error |", "|---|---|---|---|---|"]
        for name, b in benchmarks.items():
            summary = b.get("summary") or {}
            figures = ", ".join(f"{k} {v}" for k, v in summary.items()
                                if re.search(BENCH_KEYS[name], k))
            lines.append("| " + " | ".join(cell(v) for v in (
                name, b["status"], b["seconds"], figures, b["error"])) + " |")
    (args.out / "table.md").write_text("\n".join(lines) + "\n")


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


def setup_failure(args, start, error):
    """Nothing can run (the imports failed): every step of the plan is reported skipped, with
    the reason; one failure."""
    print(f"[{PROG}] {error}", file=sys.stderr)
    cells = {(a, d): None for a in args.archs for d in args.dtypes}
    rows = [{"arch": a, "dtype": d, "train": "skipped", "generate": "skipped", "error": error}
            for a, d in cells]
    benchmarks = {name: {"status": "skipped", "seconds": 0.0, "summary": {}, "error": error}
                  for name in args.benchmarks}
    wall = time.perf_counter() - start
    summary = {"device": "unknown (the imports failed)", "dry_run": args.dry_run,
               "python": platform.python_version(), "torch": None, "rows": rows,
               "benchmarks": benchmarks, "failed": 1, "wall_s": round(wall, 1),
               "setup_failed": {"import": error}}
    write_outputs(args, summary["device"], rows, benchmarks, 1, wall)
    (args.out / "gpu_check.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary), flush=True)
    return 1


def main(args):
    start = time.perf_counter()
    sizes = Sizes(args.dry_run)
    work, logs = args.out / "work", args.out / "logs"
    for folder in (work, logs):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    try:
        torch = warm_up()
    except Exception as error:  # noqa: BLE001 - e.g. a package the device lacks: say which
        return setup_failure(args, start, f"importing fairseq and fairseq_hier failed: "
                                          f"{type(error).__name__}: {error}")
    if args.dry_run:
        torch.set_num_threads(1)
    device, gpus = device_facts(args.dry_run)
    torch_version = torch.__version__
    print(f"[{PROG}] {device}; torch {torch_version}; archs {','.join(args.archs)}; dtypes "
          f"{','.join(args.dtypes)}; benchmarks {','.join(args.benchmarks) or 'none'}",
          file=sys.stderr, flush=True)
    cells, matrix = matrix_steps(args, work, sizes)
    bench_ids, bench = benchmark_steps(args, work, sizes, gpus)
    steps = data_steps(work, sizes, args.archs) + matrix + bench
    run_steps(steps, logs, args.jobs, args.step_timeout, torch)
    by_id = {s.id: s for s in steps}
    rows, failed = build_rows(args, cells, by_id)
    benchmarks = {}
    for name, sid in bench_ids.items():
        step = by_id[sid]  # a benchmark's JSON summary; torchrun's losses
        benchmarks[name] = {"status": step.status, "seconds": step.seconds,
                            "summary": step.facts.get("summary", dict(step.facts)),
                            "error": step.error}
    failed += sum(s.status == "failed" for s in steps)
    wall = time.perf_counter() - start
    summary = {"device": device, "dry_run": args.dry_run,
               "python": platform.python_version(), "torch": torch_version, "rows": rows,
               "benchmarks": benchmarks, "failed": failed, "wall_s": round(wall, 1),
               "setup_failed": {s.id: s.error for s in steps if s.id.startswith("data-")
                                and s.status == "failed"}}
    write_outputs(args, device, rows, benchmarks, failed, wall)
    (args.out / "gpu_check.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"[{PROG}] wrote {args.out / 'table.md'} and {args.out / 'gpu_check.json'}",
          file=sys.stderr)
    print(json.dumps(summary), flush=True)
    return 1 if failed else 0


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
        status.append(main(args))

    rc = run_main(PROG, run)
    return rc or (status[0] if status else 1)


if __name__ == "__main__":
    sys.exit(cli_main())
