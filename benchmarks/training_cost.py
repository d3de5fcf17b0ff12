"""Training cost of flat vs hierarchical Transformers at long inputs, side by side (not a test).

Fairseq's fused flat ``transformer``, ``pht``, ``vht``, ``liu_ht``, ``hat`` and the materialised
``transformer-S2`` at 1600-12000 source tokens: FLOPs, peak memory and time of one training
step, tokens/s ratios to ``transformer`` with a 95% bootstrap interval, and on CUDA the largest
batch under an 11 GiB cap. Protocol, options and the JSON keys: docs/benchmarks.md, section
training_cost.py. The models, batches and steps come from ``fairseq_hier.analysis.efficiency``.

    python benchmarks/training_cost.py [--lengths 1600,3000,6000,12000] [--dtype fp32,bf16]
        [--archs transformer,pht,vht,liu_ht,hat,transformer-S2] [--batch-size N] [--steps N]
        [--device cpu|cuda] [--widths same|paper|tiny] [--max-batch-cap-gib 11] [--no-max-batch]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
from benchmarks.harness import (alternated_times, median_ratio, parse_list,  # noqa: E402
                                step_flops)
from fairseq_hier.analysis.efficiency import (  # noqa: E402
    DTYPES, FLAT_ATTENTION, PARAGRAPH_TOKENS, TARGET_TOKENS, WIDTHS, build_model,
    cap_cuda_memory, cuda_fits, free_memory, is_oom, largest_batch, make_batch, peak_mb,
    training_step)

LENGTHS = (1600, 3000, 6000, 12000)  # source tokens: paragraphs of PARAGRAPH_TOKENS
ARCHS = ("transformer", "pht", "vht", "liu_ht", "hat", "transformer-S2")
RATIO_ARCHS = ("pht", "vht", "liu_ht", "hat")  # JSON ratios to the fused flat transformer
MAX_BATCH_ARCHS = ("transformer", "transformer-S2", "pht", "vht")
MAX_BATCH_TOKENS, S2_CPU_MAX_TOKENS = 1600, 3000
# decimals of the JSON summary's figures; every ratio is the quotient of two of these figures
# (tokens_per_s, peak_mb, gflops) up to their rounding (tests/bench/test_benchmarks.py checks it)
DIGITS = {"ratio": 3, "tokens_per_s": 1, "step_s": 4, "peak_mb": 3, "gflops": 4}
# CPU cost model (2 cores of this machine, batch 1, --widths same, fp32): seconds per training
# step ~ A * S/1000 + B * (S/1000)^2 for models with self-attention over all S source tokens,
# A * S/1000 for the hierarchical ones (measured: flat 0.5 s at 1600, 24 s at 12000; PHT 0.4 s
# and 3.3 s); the materialised S2 path about twice the flat model
CPU_STEP_A, CPU_STEP_B, WORKER_START_S = 0.27, 0.145, 5.0


# ----------------------------------------------------------------------------- workers
class Job:
    """One worker's model and batch: ``arch`` at ``tokens`` source tokens (``tokens`` /
    PARAGRAPH_TOKENS paragraphs), batch ``batch_size``, on ``device``, stepping under ``dtype``."""

    def __init__(self, arch, tokens, batch_size, device, dtype, widths, optimizer=None):
        import torch

        torch.manual_seed(0)
        self.model, self.dictionary = build_model(arch, tokens + 8, widths)
        self.model.to(device).train()
        self.params = sum(p.numel() for p in self.model.parameters())
        src, prev, target = make_batch(arch, self.dictionary, batch_size, tokens // PARAGRAPH_TOKENS,
                                       device)
        self.step = training_step(self.model, 1e-4, src, None, prev, target, dtype, optimizer)


def memory_and_flops(job, device):
    """The FLOPs of one step (which also serves as the warm-up: gradients and Adam state exist
    afterwards) and the peak MB of one more, above the state before it."""
    flops = step_flops(job.step)
    return {"flops": flops, "peak_mb": round(peak_mb(job.step, device), DIGITS["peak_mb"]),
            "params": job.params}


def memory_worker(job_spec):
    """One model's FLOPs and peak memory, in this process of its own."""
    s = job_spec
    try:
        job = Job(s["arch"], s["tokens"], s["batch_size"], s["device"], s["dtype"], s["widths"])
        return memory_and_flops(job, s["device"])
    except Exception as error:  # noqa: BLE001 - only out-of-memory is a result
        if not is_oom(error):
            raise
        return {"oom": True}


def time_worker(job_spec):
    """Every model of ``archs`` in this process: (with ``memory``: FLOPs and peak memory each,)
    one warm-up step each, then the alternated timed rounds. A model that runs out of memory in
    its warm-up is reported in ``oom`` and left out."""
    s, device = job_spec, job_spec["device"]
    jobs, oom, memory = {}, [], {}

    def prepare(arch):
        job = Job(arch, s["tokens"], s["batch_size"], device, s["dtype"], s["widths"])
        if s["memory"]:
            memory[arch] = memory_and_flops(job, device)
        else:
            job.step()  # warm-up: gradients and Adam state allocated
        jobs[arch] = job

    for arch in s["archs"]:
        try:
            prepare(arch)
        except Exception as error:  # noqa: BLE001 - only out-of-memory is a result
            if not is_oom(error):
                raise
            oom.append(arch)
        if arch in oom:  # outside the handler: its traceback no longer holds the tensors
            free_memory(device)
    times = alternated_times({arch: job.step for arch, job in jobs.items()}, s["steps"], device)
    return {"times": times, "oom": oom, "memory": memory}


def max_batch_worker(job_spec):
    """The largest batch of ``arch`` at ``tokens`` whose training step (twice: the first also
    allocates Adam's state) fits under ``cap_gib`` of CUDA memory, model and optimizer included:
    doubling from 1, then bisecting; out-of-memory is caught and the cache emptied (the search
    of fairseq-hier-analyse efficiency: :func:`cuda_fits`, :func:`largest_batch`)."""
    import torch

    s = job_spec
    cap_cuda_memory(s["cap_gib"])
    job = Job(s["arch"], s["tokens"], 1, "cuda", s["dtype"], s["widths"])
    optimizer = torch.optim.Adam(job.model.parameters(), lr=1e-4)
    fits = cuda_fits(job.model, job.dictionary, s["arch"], s["tokens"], s["dtype"], optimizer,
                     log=lambda message: print(message, file=sys.stderr))
    size, at_limit = largest_batch(fits, s["limit"])
    return {"max_batch": size, "at_limit": at_limit}


WORKERS = {"memory": memory_worker, "time": time_worker, "max_batch": max_batch_worker}


def run_job(spec):
    """``spec`` in a worker process of this script; returns its JSON result. CPU workers: OpenMP
    threads that sleep while they wait (docs/benchmarks.md, section training_cost.py)."""
    cmd = [sys.executable, __file__, "--job", json.dumps(spec)]
    env = dict(os.environ)
    if spec["device"] == "cpu":
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    out = subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- the run
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)),
                        help=f"comma-separated source lengths in tokens, multiples of "
                             f"{PARAGRAPH_TOKENS} (default: {','.join(map(str, LENGTHS))})")
    parser.add_argument("--archs", default=",".join(ARCHS),
                        help=f"comma-separated models of {', '.join(ARCHS)} (default: all; "
                             f"transformer is required: every ratio is to it)")
    parser.add_argument("--dtype", default=None,
                        help="comma-separated of fp32, bf16 (bf16 = torch.autocast to bfloat16; "
                             "default: fp32,bf16 on CUDA, fp32 on CPU)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="training batch (default: 16 on CUDA, 1 on CPU)")
    parser.add_argument("--steps", type=int, default=None,
                        help="timed rounds after one warm-up step (default: 20 on CUDA, 5 on CPU)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="default: cuda if available")
    parser.add_argument("--widths", choices=WIDTHS, default="same",
                        help="same: every model at PHT's widths; paper: each paper's own (liu_ht "
                             "and hat differ); tiny: smoke tests")
    parser.add_argument("--one-process", action="store_true",
                        help="measure everything in this process (memory and FLOPs too, before "
                             "the timed rounds) instead of one worker process per model: "
                             "quicker; still each step's peak above its own pre-step state; "
                             "the max-batch search keeps its own processes")
    parser.add_argument("--max-batch-cap-gib", type=float, default=11.0,
                        help="CUDA memory cap of the max-batch search at 1600 tokens")
    parser.add_argument("--max-batch-limit", type=int, default=1024,
                        help="largest batch the max-batch search tries")
    parser.add_argument("--no-max-batch", action="store_true", help="skip the max-batch search")
    parser.add_argument("--job", help=argparse.SUPPRESS)  # a worker: its JSON spec
    args = parser.parse_args(argv)
    if args.job:
        return args
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device")
    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = args.device == "cuda"
    args.dtype = args.dtype or ("fp32,bf16" if cuda else "fp32")
    args.batch_size = args.batch_size or (16 if cuda else 1)
    args.steps = args.steps or (20 if cuda else 5)
    args.lengths = parse_list(parser, "--lengths", args.lengths, int, None)
    bad = [n for n in args.lengths if n <= 0 or n % PARAGRAPH_TOKENS]
    if bad:
        parser.error(f"--lengths: {bad} not positive multiples of {PARAGRAPH_TOKENS}")
    args.archs = parse_list(parser, "--archs", args.archs, str, ARCHS)
    if "transformer" not in args.archs:
        parser.error("--archs must include transformer: every ratio is to it")
    args.dtype = parse_list(parser, "--dtype", args.dtype, str, DTYPES)
    if args.batch_size < 1 or args.steps < 1:
        parser.error(f"--batch-size and --steps must be >= 1, got {args.batch_size} and {args.steps}")
    return args


def planned_archs(args, tokens):
    """The models measured at ``tokens``, and why any is skipped."""
    if args.device == "cpu" and tokens > S2_CPU_MAX_TOKENS and "transformer-S2" in args.archs:
        return ([a for a in args.archs if a != "transformer-S2"],
                f"transformer-S2 skipped on CPU above {S2_CPU_MAX_TOKENS} tokens (materialised "
                f"S x S attention: step time and memory grow with S^2)")
    return list(args.archs), None


def cpu_estimate_s(args):
    """Wall seconds of the run on 2 cores of this machine, from the cost model above."""
    slowdown = {"fp32": 1.0, "bf16": 8.0}  # bf16 autocast is emulated on this CPU
    total = 0.0
    for dtype in args.dtype:
        for tokens in args.lengths:
            archs, _ = planned_archs(args, tokens)
            k = tokens / 1000
            for arch in archs:
                step = CPU_STEP_A * k + (CPU_STEP_B * k * k if arch in FLAT_ATTENTION else 0.0)
                step *= (2.0 if arch == "transformer-S2" else 1.0) * slowdown[dtype] * args.batch_size
                total += step * (args.steps + 3)  # warm-up, FLOPs, memory, timed rounds
            total += 0 if args.one_process else WORKER_START_S * (1 + len(archs))
    return total


def measure_all(args):
    """Every worker of the run; returns ({(dtype, tokens): time worker result}, {(dtype, tokens,
    arch): memory result}, {(dtype, arch): max-batch result}, {tokens: skip note})."""
    common = {"batch_size": args.batch_size, "device": args.device, "widths": args.widths}
    timing, memory, max_batch, notes = {}, {}, {}, {}
    for dtype in args.dtype:
        for tokens in args.lengths:
            archs, notes[tokens] = planned_archs(args, tokens)
            if not args.one_process:
                for arch in archs:
                    memory[(dtype, tokens, arch)] = run_job(
                        dict(common, kind="memory", arch=arch, tokens=tokens, dtype=dtype))
                    print(f"memory {dtype} {tokens} {arch}: {memory[(dtype, tokens, arch)]}",
                          file=sys.stderr)
                archs = [a for a in archs if not memory[(dtype, tokens, a)].get("oom")]
            spec = dict(common, kind="time", archs=archs, tokens=tokens, dtype=dtype,
                        steps=args.steps, memory=args.one_process)
            result = time_worker(spec) if args.one_process else run_job(spec)
            for arch, values in result["memory"].items():
                memory[(dtype, tokens, arch)] = values
            for arch in result["oom"]:
                memory.setdefault((dtype, tokens, arch), {"oom": True})
            timing[(dtype, tokens)] = result
            print(f"timed {dtype} {tokens}: {sorted(result['times'])}", file=sys.stderr)
    if args.device == "cuda" and not args.no_max_batch:
        for dtype in args.dtype:
            for arch in (a for a in MAX_BATCH_ARCHS if a in args.archs):
                max_batch[(dtype, arch)] = run_job(dict(
                    common, kind="max_batch", arch=arch, tokens=MAX_BATCH_TOKENS, dtype=dtype,
                    cap_gib=args.max_batch_cap_gib, limit=args.max_batch_limit))
    return timing, memory, max_batch, notes


def report(args, timing, memory, max_batch, notes):
    """The tables; returns the JSON summary's ratios and details."""
    unit = "s" if args.device == "cuda" else "cpu-s"
    ratios = {}
    details = {k: {} for k in ("tokens_per_s", "step_s", "peak_mb", "gflops", "params")}
    for dtype in args.dtype:
        suffix = "" if dtype == "fp32" else f"_{dtype}"
        for tokens in args.lengths:
            result = timing[(dtype, tokens)]
            times = result["times"]
            print(f"\n{dtype}, {tokens} source tokens ({tokens // PARAGRAPH_TOKENS} paragraphs x "
                  f"{PARAGRAPH_TOKENS}) + {TARGET_TOKENS} target, batch {args.batch_size}, median "
                  f"of {args.steps} alternated rounds; ratios to transformer (tps: 95% interval)")
            if notes[tokens]:
                print(f"  ({notes[tokens]})")
            print(f"{'model':<16}{'params':>12}{'GFLOP':>9}{'peak MB':>10}{unit + '/step':>12}"
                  f"{'tokens/' + unit:>14}{'tps ratio':>11}{'95% interval':>17}{'mem ratio':>11}"
                  f"{'FLOP ratio':>12}")
            flat = memory.get((dtype, tokens, "transformer"), {})
            s2 = memory.get((dtype, tokens, "transformer-S2"), {})
            for arch in args.archs:
                m = memory.get((dtype, tokens, arch))
                if m is None:
                    continue
                if m.get("oom"):
                    print(f"{arch:<16}{'OOM':>12}")
                    continue
                key = f"{tokens}{suffix}"
                row = f"{arch:<16}{m['params']:>12,}{m['flops'] / 1e9:>9.1f}{m['peak_mb']:>10.0f}"
                mem = m["peak_mb"] / flat["peak_mb"] if flat.get("peak_mb") else float("nan")
                flops = m["flops"] / flat["flops"] if flat.get("flops") else float("nan")
                if arch in times and "transformer" in times:
                    step = statistics.median(times[arch])
                    tps = args.batch_size * (tokens + TARGET_TOKENS) / step
                    # tokens/s of arch / the flat model's: its median step time over arch's
                    ratio, low, high = median_ratio(times, "transformer", arch)
                    row += (f"{step:>12.3f}{tps:>14.0f}{ratio:>11.3f}"
                            f"{f'[{low:.3f}, {high:.3f}]':>17}")
                    for name, value in (("tokens_per_s", tps), ("step_s", step)):
                        details[name].setdefault(key, {})[arch] = round(value, DIGITS[name])
                    if arch in RATIO_ARCHS:
                        ratios[f"{arch}_tps_ratio_{key}"] = round(ratio, DIGITS["ratio"])
                        ratios[f"{arch}_tps_ratio_{key}_ci95"] = [round(low, DIGITS["ratio"]),
                                                                  round(high, DIGITS["ratio"])]
                else:
                    row += f"{'not timed':>12}{'':>14}{'':>11}{'':>17}"
                print(row + f"{mem:>11.3f}{flops:>12.3f}")
                for name, value in (("peak_mb", m["peak_mb"]),
                                    ("gflops", round(m["flops"] / 1e9, DIGITS["gflops"])),
                                    ("params", m["params"])):
                    details[name].setdefault(key, {})[arch] = value
                if arch in RATIO_ARCHS and flat.get("peak_mb"):  # (the flat model may be OOM)
                    ratios[f"{arch}_mem_ratio_{key}"] = round(mem, DIGITS["ratio"])
                    ratios[f"{arch}_flops_ratio_{key}"] = round(flops, DIGITS["ratio"])
                    if s2.get("peak_mb"):
                        ratios[f"{arch}_mem_ratio_{key}_vs_s2"] = round(
                            m["peak_mb"] / s2["peak_mb"], DIGITS["ratio"])
    if max_batch:
        max_batch_table(args, max_batch, ratios, details)
    return ratios, details


def max_batch_table(args, max_batch, ratios, details):
    """The max-batch search's table; its ratios and batches into ``ratios`` and ``details``."""
    details["max_batch_1600"] = {}
    print(f"\nlargest training batch at {MAX_BATCH_TOKENS} tokens under a "
          f"{args.max_batch_cap_gib:g} GiB CUDA cap (model and Adam state included)")
    searched = [arch for arch in MAX_BATCH_ARCHS if arch in args.archs]
    print(f"{'dtype':<7}" + "".join(f"{arch:>16}" for arch in searched))
    for dtype in args.dtype:
        suffix = "" if dtype == "fp32" else f"_{dtype}"
        found = {arch: r for (d, arch), r in max_batch.items() if d == dtype}
        cells = [f"{r['max_batch']}{'+' if r['at_limit'] else ''}" for r in found.values()]
        print(f"{dtype:<7}" + "".join(f"{cell:>16}" for cell in cells))
        details["max_batch_1600"][dtype] = {arch: r["max_batch"] for arch, r in found.items()}
        for arch in ("pht", "vht"):
            for base, tail in (("transformer", ""), ("transformer-S2", "_vs_s2")):
                if arch in found and found.get(base, {}).get("max_batch"):
                    ratios[f"{arch}_max_batch_ratio_{MAX_BATCH_TOKENS}{suffix}{tail}"] = round(
                        found[arch]["max_batch"] / found[base]["max_batch"], 3)


def main(argv=None):
    args = parse_args(argv)
    if args.job:
        spec = json.loads(args.job)
        print(json.dumps(WORKERS[spec["kind"]](spec)))
        return
    start = time.perf_counter()
    if args.device == "cpu":
        note = " (cost model: --widths same, 2 cores of the machine it was calibrated on)"
        print(f"estimated wall time on CPU: ~{cpu_estimate_s(args) / 60:.0f} min{note}; batch "
              f"{args.batch_size} on CPU by default: the flat model's 12000-token step takes ~25 s",
              file=sys.stderr)
    timing, memory, max_batch, notes = measure_all(args)
    print(f"device: {args.device}, widths {args.widths}, batch {args.batch_size} x (S source + "
          f"{TARGET_TOKENS} target tokens), dtypes {','.join(args.dtype)}; memory = peak of one "
          f"step above the pre-step state; time: "
          f"{'wall' if args.device == 'cuda' else 'process CPU'} seconds")
    ratios, details = report(args, timing, memory, max_batch, notes)
    wall = time.perf_counter() - start
    print(f"\nwall time: {wall:.0f} s")
    config = {"device": args.device, "widths": args.widths, "batch_size": args.batch_size,
              "steps": args.steps, "lengths": args.lengths, "archs": args.archs,
              "dtypes": args.dtype, "one_process": args.one_process, "wall_s": round(wall),
              "skipped": {str(t): n for t, n in notes.items() if n},
              "oom": sorted(f"{d}:{t}:{a}" for (d, t, a), m in memory.items() if m.get("oom"))}
    if max_batch:
        config["max_batch_cap_gib"] = args.max_batch_cap_gib
    print(json.dumps({**ratios, **details, "config": config}))


if __name__ == "__main__":
    main()
