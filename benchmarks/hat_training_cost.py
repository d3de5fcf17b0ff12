"""Training cost of HAT vs plain BART, side by side in one run (not a test).

``hat_bart_base`` vs ``long_bart_base`` (fairseq's ``bart_base`` with 3072 source positions) at
1024 and 3072 source tokens, a BOS opening a sentence every 25 tokens, a 256-token target: step
time (both models in one worker, their steps alternated), peak memory (each in its own worker)
and their ratios HAT / plain. Protocol, options and the JSON keys: docs/benchmarks.md, section
hat_training_cost.py.

    python benchmarks/hat_training_cost.py [--batch-size 1] [--steps 8] [--device cpu|cuda]
        [--lengths 1024,3072] [--dtype fp32,bf16]
"""

import argparse
import json
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
import fairseq_hier  # noqa: E402
from benchmarks.harness import (measure, median_ratio, parse_list, side_by_side,  # noqa: E402
                                step_flops)
from fairseq_hier.analysis.efficiency import DTYPES, training_step  # noqa: E402

LENGTHS = (1024, 3072)
MAX_SOURCE_POSITIONS = 3072  # long_bart_base's and hat_bart_base's
ARCHS = ("long_bart_base", "hat_bart_base")
SENTENCE_TOKENS, TARGET_TOKENS, VOCAB = 25, 256, 50265


def build_model(arch, vocab=VOCAB, **options):
    """``arch`` with dropout 0.1 (and ``options``: more legacy args) on a ``vocab``-symbol
    dictionary; returns (model, dictionary)."""
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    fairseq_hier.register()
    d = Dictionary()
    for i in range(vocab - len(d)):
        d.add_symbol(f"w{i}")
    args = argparse.Namespace(task="translation", dropout=0.1, max_target_positions=1024, **options)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task), d


def make_batch(d, batch_size, tokens, device, sentence_tokens=SENTENCE_TOKENS,
               target_tokens=TARGET_TOKENS):
    """``B x S`` sources with a BOS every ``sentence_tokens`` tokens and a final EOS; ``B x T``
    targets ending in EOS and their shifted decoder inputs."""
    import torch

    g = torch.Generator().manual_seed(0)
    words = lambda *shape: torch.randint(d.nspecial, len(d), shape, generator=g)  # noqa: E731
    src = words(batch_size, tokens)
    src[:, ::sentence_tokens] = d.bos()
    src[:, -1] = d.eos()
    target = torch.cat([words(batch_size, target_tokens - 1), torch.full((batch_size, 1), d.eos())], 1)
    prev = torch.cat([torch.full((batch_size, 1), d.eos()), target[:, :-1]], 1)
    return src.to(device), prev.to(device), target.to(device)


def add_options(parser, lengths=LENGTHS):
    """This benchmark's options beside ``side_by_side``'s: ``--lengths`` (default ``lengths``)
    and ``--dtype`` (:func:`read_options` checks them)."""
    parser.add_argument("--lengths", default=",".join(map(str, lengths)),
                        help=f"comma-separated source lengths in tokens (default: "
                             f"{','.join(map(str, lengths))})")
    parser.add_argument("--dtype", default=None,
                        help="comma-separated of fp32, bf16 (bf16 = torch.autocast to bfloat16; "
                             "default: fp32,bf16 on CUDA, fp32 on CPU)")


def read_options(parser, args, device, max_positions):
    """``args.lengths`` (each 2..``max_positions``) and ``args.dtype`` (its default: fp32,bf16
    on CUDA, fp32 on CPU) as lists; a bad value is argparse's one-line error."""
    args.lengths = parse_list(parser, "--lengths", args.lengths, int, None)
    bad = [n for n in args.lengths if not 2 <= n <= max_positions]
    if bad:
        parser.error(f"--lengths: {bad} outside 2..{max_positions} (the models' source "
                     f"positions)")
    dtype = args.dtype or ("fp32,bf16" if device == "cuda" else "fp32")
    args.dtype = parse_list(parser, "--dtype", dtype, str, DTYPES)


def dtype_suffix(dtype):
    """The JSON keys' suffix of ``dtype`` (``benchmarks/training_cost.py``'s naming)."""
    return "" if dtype == "fp32" else f"_{dtype}"


def worker(arch, tokens, batch_size, steps, device, archs=ARCHS, build=build_model,
           batch=make_batch, count_flops=False, dtype=None):
    """``arch``: one model's peak memory (its own process), and with ``count_flops`` the FLOPs
    of one more step; ``"pair"``: the step times of both ``archs`` (plain, HAT), alternating.
    ``arch`` may carry its dtype as a prefix (``bf16:pair``; else ``dtype``, default fp32): the
    steps run under its autocast. ``build(arch)`` -> (model, dictionary); ``batch``: as
    :func:`make_batch`. Prints a JSON line."""
    import torch

    prefix, _, arch = arch.rpartition(":")
    dtype = prefix or dtype or "fp32"

    lengths = torch.full((batch_size,), tokens, device=device)
    if arch != "pair":
        torch.manual_seed(0)
        model, d = build(arch)
        model.to(device).train()
        src, prev, target = batch(d, batch_size, tokens, device)
        step = training_step(model, 1e-5, src, lengths, prev, target, dtype)
        _, peak = measure(step, 0, device)
        flops = {"flops": step_flops(step)} if count_flops else {}
        print(json.dumps({"arch": arch, "tokens": tokens, "peak_mb": round(peak, 1),
                          "params": sum(p.numel() for p in model.parameters()), **flops}))
        return
    steps_of = {}
    for name in archs:
        torch.manual_seed(0)
        model, d = build(name)
        model.to(device).train()
        src, prev, target = batch(d, batch_size, tokens, device)
        steps_of[name] = training_step(model, 1e-5, src, lengths, prev, target, dtype)
        steps_of[name]()  # warm-up: gradients and Adam state allocated
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    # CUDA: wall time; CPU: this process's CPU time, which time stolen by other processes or
    # virtual machines does not inflate (in CPU seconds: about threads x wall seconds)
    clock = time.perf_counter if device == "cuda" else time.process_time
    times = {name: [] for name in archs}
    for _ in range(steps):
        for name in archs:
            sync()
            start = clock()
            steps_of[name]()
            sync()
            times[name].append(clock() - start)
    print(json.dumps({"arch": "pair", "tokens": tokens, "dtype": dtype, "steps": times}))


def main():
    start = time.perf_counter()

    def configs(parser, args, device):
        read_options(parser, args, device, MAX_SOURCE_POSITIONS)
        return [(f"{dtype}:{arch}", tokens) for dtype in args.dtype for tokens in args.lengths
                for arch in (*ARCHS, "pair")]

    args, device, results = side_by_side(__doc__, __file__, worker, configs, batch_size=1,
                                         steps=8, add_options=add_options)
    for dtype in args.dtype:  # the alternated step times into each model's row
        for tokens in args.lengths:
            for arch in ARCHS:
                results[(f"{dtype}:{arch}", tokens)]["s_per_step"] = statistics.median(
                    results[(f"{dtype}:pair", tokens)]["steps"][arch])

    print(f"device: {device}, batch {args.batch_size} x (S source + {TARGET_TOKENS} target tokens), "
          f"BOS every {SENTENCE_TOKENS} tokens, median of {args.steps} alternated timed steps; "
          f"ratios HAT / plain")
    unit = "s" if device == "cuda" else "cpu-s"  # CPU: process CPU seconds (module docstring)
    print(f"{'model':<16}{'dtype':>6}{'src tokens':>11}{'params':>14}{'peak MB':>10}"
          f"{unit + '/step':>11}{'tokens/' + unit:>14}{'time ratio':>12}{'mem ratio':>11}")
    ratios, details = {}, {"step_s": {}, "peak_mb": {}}
    for dtype in args.dtype:
        for tokens in args.lengths:
            key = f"{tokens}{dtype_suffix(dtype)}"
            plain = results[(f"{dtype}:long_bart_base", tokens)]
            for arch in ARCHS:
                r = results[(f"{dtype}:{arch}", tokens)]
                time_ratio = r["s_per_step"] / plain["s_per_step"]
                mem_ratio = r["peak_mb"] / plain["peak_mb"]
                tps = args.batch_size * (tokens + TARGET_TOKENS) / r["s_per_step"]
                print(f"{arch:<16}{dtype:>6}{tokens:>11}{r['params']:>14,}{r['peak_mb']:>10.0f}"
                      f"{r['s_per_step']:>11.2f}{tps:>14.0f}{time_ratio:>12.3f}{mem_ratio:>11.3f}")
                details["step_s"].setdefault(key, {})[arch] = round(r["s_per_step"], 6)
                details["peak_mb"].setdefault(key, {})[arch] = r["peak_mb"]
            hat = results[(f"{dtype}:hat_bart_base", tokens)]
            ratio, low, high = median_ratio(results[(f"{dtype}:pair", tokens)]["steps"],
                                            "hat_bart_base", "long_bart_base")
            print(f"{'':<16}{dtype:>6}{tokens:>11}  time ratio {ratio:.3f}, 95% bootstrap interval "
                  f"[{low:.3f}, {high:.3f}] over {args.steps} alternated step pairs")
            ratios[f"hat_time_ratio_{key}"] = round(ratio, 3)
            ratios[f"hat_time_ratio_{key}_ci95"] = [round(low, 3), round(high, 3)]
            ratios[f"hat_mem_ratio_{key}"] = round(hat["peak_mb"] / plain["peak_mb"], 3)
    wall = time.perf_counter() - start
    config = {"device": device, "batch_size": args.batch_size, "steps": args.steps,
              "lengths": args.lengths, "dtypes": args.dtype, "target_tokens": TARGET_TOKENS,
              "sentence_tokens": SENTENCE_TOKENS, "time_unit": unit, "wall_s": round(wall)}
    print(json.dumps({**ratios, **details, "config": config}))

if __name__ == "__main__":
    main()
