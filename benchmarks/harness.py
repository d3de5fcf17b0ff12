"""The parts every side-by-side benchmark shares: worker processes and their command line
(``side_by_side``, ``run_workers``), a timed and a FLOP-counted training step (``measure``,
``step_flops``), alternated timed rounds (``alternated_times``), comma-separated options
(``parse_list``) and the bootstrap interval of a ratio (``bootstrap``, ``median_ratio``).
How they measure: docs/benchmarks.md. May import ``fairseq_hier`` (not its ``cli``); torch
inside the functions that measure, so that a benchmark's ``--help`` starts without it.
"""

import argparse
import json
import random
import statistics
import subprocess
import sys
import time

from fairseq_hier.analysis.efficiency import peak_mb


def _cpu_flash_attention_flops():
    """FlopCounterMode formulas for CPU's flash-attention kernels (absent from torch's table, so
    every fused attention on CPU would count 0): the same counts as the CUDA kernels'."""
    import torch
    from torch.utils import flop_counter

    aten = torch.ops.aten

    def forward(query, key, value, *args, out_shape=None, **kwargs):
        return flop_counter.sdpa_flop_count(query, key, value)

    def backward(grad_out, query, key, value, *args, out_shape=None, **kwargs):
        return flop_counter.sdpa_backward_flop_count(grad_out, query, key, value)

    return {aten._scaled_dot_product_flash_attention_for_cpu: forward,
            aten._scaled_dot_product_flash_attention_for_cpu_backward: backward}


def step_flops(step):
    """Floating-point operations of one call of ``step`` as torch's FlopCounterMode counts them:
    matrix products (``mm``, ``addmm``, ``bmm``, attention kernels) forward and backward, 2 per
    multiply-add; elementwise work, softmax and the optimizer's update are not counted. The same
    on any machine, so a ratio of two models' counts is free of timing noise."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False, custom_mapping=_cpu_flash_attention_flops()) as counter:
        step()
    return counter.get_total_flops()


def measure(step, steps, device):
    """``step`` once as warm-up (it allocates gradients and Adam state, so the baseline holds
    them), then ``steps`` timed calls, then the peak MB of one more above the pre-step state.
    Returns (seconds for the timed calls, peak MB)."""
    import torch

    step()
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    elapsed = time.perf_counter() - start
    return elapsed, peak_mb(step, device)


def run_workers(script, configs, batch_size, steps, device):
    """Each (arch, tokens) of ``configs`` in its own process (``script --worker``), so peaks
    do not mix; returns {(arch, tokens): the worker's JSON line}."""
    results = {}
    for arch, tokens in configs:
        cmd = [sys.executable, script, "--worker", arch, str(tokens), "--batch-size",
               str(batch_size), "--steps", str(steps), "--device", device]
        out = subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE).stdout
        results[(arch, tokens)] = json.loads(out.strip().splitlines()[-1])
        print(f"measured {arch} @ {tokens}: {results[(arch, tokens)]}", file=sys.stderr)
    return results


def side_by_side(doc, script, worker_fn, configs, batch_size, steps, add_options=None):
    """The command line of a side-by-side benchmark (hat_training_cost.py, doc_mt_training_cost.py):
    in a worker process (``--worker ARCH TOKENS``) runs ``worker_fn`` and exits; else runs every
    config in its own worker and returns (args, device, results). ``add_options(parser)``: the
    benchmark's own options; ``configs``: the (worker config, tokens) pairs, or a function of
    (parser, args, device) that reads those options (a bad one through ``parser.error``) and
    returns them."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--steps", type=int, default=steps, help="timed steps after one warm-up step")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    parser.add_argument("--worker", nargs=2, metavar=("ARCH", "TOKENS"), help=argparse.SUPPRESS)
    if add_options:
        add_options(parser)
    args = parser.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.worker:
        worker_fn(args.worker[0], int(args.worker[1]), args.batch_size, args.steps, device)
        sys.exit(0)
    if callable(configs):
        configs = configs(parser, args, device)
    return args, device, run_workers(script, configs, args.batch_size, args.steps, device)


def alternated_times(steps_of, rounds, device):
    """``rounds`` rounds of one timed call of every step function in ``steps_of`` ({name: fn}),
    the order rotated each round; returns {name: [seconds per call]}. CUDA: wall time after
    synchronising; CPU: this process's CPU time."""
    import torch

    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    clock = time.perf_counter if device == "cuda" else time.process_time
    names, times = list(steps_of), {name: [] for name in steps_of}
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            sync()
            start = clock()
            steps_of[name]()
            sync()
            times[name].append(clock() - start)
    return times


def parse_list(parser, flag, text, kind, choices):
    """A comma-separated option as a list (order kept, duplicates dropped), each item checked."""
    items = []
    for item in (x.strip() for x in str(text).split(",")):
        try:
            value = kind(item)
        except ValueError:
            parser.error(f"{flag}: {item!r} is not a {kind.__name__}")
        if choices is not None and value not in choices:
            parser.error(f"{flag}: unknown {value!r}; choose from {', '.join(choices)}")
        if value not in items:
            items.append(value)
    if not items:
        parser.error(f"{flag}: empty")
    return items


def bootstrap(pairs, statistic, resamples=2000, seed=0):
    """``statistic`` of the alternated step pairs (or rounds) and its 95% bootstrap interval,
    the pairs resampled together: (value, low, high). Shared by every side-by-side benchmark."""
    rng, boots = random.Random(seed), []
    for _ in range(resamples):
        boots.append(statistic([rng.choice(pairs) for _ in pairs]))
    boots.sort()
    return statistic(pairs), boots[int(0.025 * resamples)], boots[int(0.975 * resamples) - 1]


def median_ratio(times, num, den, resamples=2000, seed=0):
    """median of ``times[num]`` / median of ``times[den]`` (``times``: {name: [step seconds]}
    of alternated rounds) and its 95% bootstrap interval, the rounds resampled together:
    (value, low, high). Shared by every side-by-side benchmark."""
    rounds = list(zip(times[den], times[num]))
    return bootstrap(rounds, lambda sample: statistics.median(n for _, n in sample)
                     / statistics.median(d for d, _ in sample), resamples, seed)
