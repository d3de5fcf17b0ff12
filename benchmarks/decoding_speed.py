"""Beam-search decoding cost of flat vs hierarchical models, side by side in one run (not a test).

Sources of 40 paragraphs x 100 tokens, beam 5, exactly 200 decoder steps per hypothesis:
fairseq's flat ``transformer`` with fairseq's generator vs ``pht``, ``vht`` (and ``liu_ht``,
``hat`` with ``--archs``) with the generator their task builds, randomly initialised at
``benchmarks/training_cost.py``'s widths. Time per example (alternated rounds in one process),
peak memory of one decode, and the ratios to ``transformer`` with a 95% bootstrap interval.
Protocol, options and the JSON keys: docs/benchmarks.md, section decoding_speed.py.

    python benchmarks/decoding_speed.py [--archs transformer,pht,vht] [--batch-size N]
        [--repeats N] [--dtype fp32,bf16] [--device cpu|cuda] [--widths same|paper|tiny]
        [--paragraphs 40] [--paragraph-tokens 100] [--target-steps 200] [--beam 5]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
from benchmarks.harness import bootstrap, parse_list  # noqa: E402
from fairseq_hier.analysis.efficiency import (DTYPES, HIERARCHICAL, WIDTHS,  # noqa: E402
                                              build_model, make_batch, peak_mb)

ARCHS = ("transformer", "pht", "vht", "liu_ht", "hat")
DEFAULT_ARCHS = ("transformer", "pht", "vht")
# decimals of the JSON summary's figures; each ratio is the quotient of two of these figures
# (s_per_example, peak_mb) up to their rounding (tests/bench/test_benchmarks.py checks it)
DIGITS = {"ratio": 3, "s_per_example": 5, "peak_mb": 3}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--archs", default=",".join(DEFAULT_ARCHS),
                        help=f"comma-separated models of {', '.join(ARCHS)} (default: "
                             f"{','.join(DEFAULT_ARCHS)}; transformer is required: every ratio "
                             f"is to it)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="examples decoded at once (default: 8 on CUDA, 1 on CPU)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed rounds after one warm-up decode (default: 5 on CUDA, 3 on CPU)")
    parser.add_argument("--dtype", default=None,
                        help="comma-separated of fp32, bf16 (bf16: weights cast to bfloat16; "
                             "default: fp32,bf16 on CUDA, fp32 on CPU)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="default: cuda if available")
    parser.add_argument("--widths", choices=WIDTHS, default="same",
                        help="as benchmarks/training_cost.py (tiny: smoke tests)")
    parser.add_argument("--paragraphs", type=int, default=40, help="P, paragraphs per source")
    parser.add_argument("--paragraph-tokens", type=int, default=100, help="L, tokens per paragraph")
    parser.add_argument("--target-steps", type=int, default=200,
                        help="T, decoder steps of every hypothesis (T - 1 tokens and EOS)")
    parser.add_argument("--beam", type=int, default=5)
    args = parser.parse_args(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device")
    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = args.device == "cuda"
    args.batch_size = args.batch_size or (8 if cuda else 1)
    args.repeats = args.repeats or (5 if cuda else 3)
    args.dtype = parse_list(parser, "--dtype", args.dtype or ("fp32,bf16" if cuda else "fp32"),
                            str, DTYPES)
    args.archs = parse_list(parser, "--archs", args.archs, str, ARCHS)
    if "transformer" not in args.archs:
        parser.error("--archs must include transformer: every ratio is to it")
    for flag in ("batch_size", "repeats", "paragraphs", "paragraph_tokens", "beam"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.target_steps < 2:
        parser.error(f"--target-steps must be >= 2 (a token and EOS), got {args.target_steps}")
    return args


def build_decoder(arch, args, dtype):
    """(generator, model, sample) of ``arch``: the model in eval mode on the device in ``dtype``,
    the generator the task would build, a random batch of ``args.batch_size`` sources."""
    # torch, fairseq and our generator (which imports them) here: --help stays light
    import torch
    from fairseq.sequence_generator import SequenceGenerator

    from fairseq_hier.generation.sequence_generator import AttentionAlignmentSequenceGenerator

    tokens = args.paragraphs * args.paragraph_tokens
    model, d = build_model(arch, tokens + 8, args.widths)
    model.to(args.device).eval()
    if dtype == "bf16":
        model.to(torch.bfloat16)
    src, _, _ = make_batch(arch, d, args.batch_size, args.paragraphs, args.device,
                           paragraph_tokens=args.paragraph_tokens)  # B x P x L or B x S
    lengths = src.ne(d.pad()).view(args.batch_size, -1).sum(1)  # B: source tokens
    sample = {"id": torch.arange(args.batch_size, device=args.device),
              "net_input": {"src_tokens": src, "src_lengths": lengths}}
    # T decoder steps: T - 1 tokens (EOS banned before), then EOS forced at step T - 1
    rules = dict(beam_size=args.beam, max_len_a=0, max_len_b=args.target_steps - 1,
                 min_len=args.target_steps - 1)
    if arch in HIERARCHICAL:
        generator = AttentionAlignmentSequenceGenerator([model], d, strategy=None, **rules)
    else:
        generator = SequenceGenerator([model], d, **rules)
    return generator, model, sample


def decode(arch, generator, model, sample, target_steps):
    """One decode of the batch; checks that every best hypothesis ran ``target_steps`` steps."""
    import torch

    with torch.no_grad():
        hypos = generator.generate([model], sample)
    lengths = sorted({len(h[0]["tokens"]) for h in hypos})
    if lengths != [target_steps]:
        raise RuntimeError(f"{arch}: best hypotheses have {lengths} tokens, expected exactly "
                           f"{target_steps} (min_len = max_len did not hold)")


def measure_dtype(args, dtype):
    """Every model of ``args.archs`` in ``dtype``: its peak MB and its decode seconds per round."""
    import torch

    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    clock = time.perf_counter if args.device == "cuda" else time.process_time
    runs, peaks, params = {}, {}, {}
    for arch in args.archs:
        torch.manual_seed(0)
        runs[arch] = build_decoder(arch, args, dtype)
        params[arch] = sum(p.numel() for p in runs[arch][1].parameters())
        decode(arch, *runs[arch], args.target_steps)  # warm-up
        peaks[arch] = peak_mb(lambda: decode(arch, *runs[arch], args.target_steps), args.device)
        print(f"{dtype} {arch}: peak {peaks[arch]:.1f} MB", file=sys.stderr)
    names, times = list(runs), {arch: [] for arch in runs}
    for r in range(args.repeats):
        for arch in names[r % len(names):] + names[: r % len(names)]:
            sync()
            start = clock()
            decode(arch, *runs[arch], args.target_steps)
            sync()
            times[arch].append(clock() - start)
    return peaks, times, params


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    unit = "s" if args.device == "cuda" else "cpu-s"
    tokens = args.paragraphs * args.paragraph_tokens
    print(f"device: {args.device}, widths {args.widths}, batch {args.batch_size} x "
          f"{args.paragraphs} paragraphs x {args.paragraph_tokens} tokens (flat: {tokens} tokens), "
          f"beam {args.beam}, {args.target_steps} decoder steps, median of {args.repeats} "
          f"alternated rounds ({'wall' if args.device == 'cuda' else 'process CPU'} seconds); "
          f"memory = peak of one decode above the state before it; ratios to transformer")
    summary, details = {}, {"s_per_example": {}, "peak_mb": {}, "params": {}}
    for dtype in args.dtype:
        suffix = "" if dtype == "fp32" else f"_{dtype}"
        peaks, times, params = measure_dtype(args, dtype)
        print(f"\n{dtype}")
        print(f"{'model':<14}{'params':>12}{'peak MB':>10}{unit + '/example':>15}"
              f"{'time ratio':>12}{'95% interval':>17}{'mem ratio':>11}")
        for arch in args.archs:
            s = statistics.median(times[arch])
            rounds = list(zip(times["transformer"], times[arch]))
            ratio, low, high = bootstrap(rounds, lambda sample: statistics.median(
                a for _, a in sample) / statistics.median(t for t, _ in sample))
            mem = peaks[arch] / peaks["transformer"]
            print(f"{arch:<14}{params[arch]:>12,}{peaks[arch]:>10.1f}{s / args.batch_size:>15.3f}"
                  f"{ratio:>12.3f}{f'[{low:.3f}, {high:.3f}]':>17}{mem:>11.3f}")
            details["s_per_example"].setdefault(dtype, {})[arch] = round(s / args.batch_size,
                                                                          DIGITS["s_per_example"])
            details["peak_mb"].setdefault(dtype, {})[arch] = round(peaks[arch], DIGITS["peak_mb"])
            details["params"][arch] = params[arch]
            if arch != "transformer":
                digits = DIGITS["ratio"]
                summary[f"{arch}_decode_time_ratio{suffix}"] = round(ratio, digits)
                summary[f"{arch}_decode_time_ratio{suffix}_ci95"] = [round(low, digits),
                                                                     round(high, digits)]
                summary[f"{arch}_decode_mem_ratio{suffix}"] = round(mem, digits)
    wall = time.perf_counter() - start
    print(f"\nwall time: {wall:.0f} s")
    config = {"device": args.device, "widths": args.widths, "batch_size": args.batch_size,
              "repeats": args.repeats, "dtypes": args.dtype, "archs": args.archs,
              "paragraphs": args.paragraphs, "paragraph_tokens": args.paragraph_tokens,
              "target_steps": args.target_steps, "beam": args.beam, "time_unit": unit,
              "wall_s": round(wall)}
    print(json.dumps({**summary, **details, "config": config}))


if __name__ == "__main__":
    main()
