"""Training cost of HAT vs a plain Transformer on 512-token document chunks (not a test).

Document MT (paper 004 Sec. 4.2) at two sizes (``--dims``): ``en_de`` (HAT vs fairseq's
``transformer_wmt_en_de_big``) and ``zh_en`` (HAT vs fairseq's ``transformer`` at 512, FFN 1024,
4 heads), on chunks of 512 source tokens with a BOS every 22 tokens and 512 target tokens: step
time (both models in one worker, their steps alternated), peak memory, FLOPs and the ratios
HAT / plain, with ``benchmarks/hat_training_cost.py``'s worker and batch builder. Protocol,
options and the JSON keys: docs/benchmarks.md, section doc_mt_training_cost.py.

    python benchmarks/doc_mt_training_cost.py [--batch-size 1] [--steps 16] [--device cpu|cuda]
        [--dims en_de,zh_en] [--lengths 512] [--dtype fp32,bf16]
"""

import functools
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
from benchmarks.harness import bootstrap, median_ratio, side_by_side  # noqa: E402
from benchmarks.hat_training_cost import (add_options, build_model, dtype_suffix,  # noqa: E402
                                          make_batch, read_options)
from benchmarks.hat_training_cost import worker as hat_worker  # noqa: E402

SOURCE_TOKENS, TARGET_TOKENS, SENTENCE_TOKENS, VOCAB = 512, 512, 22, 40000
MAX_SOURCE_POSITIONS = 1024  # fairseq's default, which both sizes' models keep
MODELS = {"en_de": ("transformer_wmt_en_de_big", "hat_transformer_wmt_en_de"),  # (plain, HAT)
          "zh_en": ("transformer", "hat_transformer_iwslt_zh_en")}
PLAIN_OPTIONS = {"en_de": {}, "zh_en": {  # what the HAT preset sets beyond wmt_en_de_big
    "encoder_embed_dim": 512, "decoder_embed_dim": 512, "encoder_ffn_embed_dim": 1024,
    "decoder_ffn_embed_dim": 1024, "encoder_attention_heads": 4, "decoder_attention_heads": 4}}


def build_mt(dims, arch):
    """One of ``MODELS[dims]`` as the recipes build it; returns (model, dictionary)."""
    options = PLAIN_OPTIONS[dims] if arch == MODELS[dims][0] else {}
    return build_model(arch, VOCAB, share_all_embeddings=True, attention_dropout=0.1, **options)


def worker(config, tokens, batch_size, steps, device):
    """``config`` ``[DTYPE:]DIMS:ARCH`` (one model's peak memory and step FLOPs) or
    ``[DTYPE:]DIMS:pair`` (both models' alternated step times), DTYPE fp32 (the default) or
    bf16: hat_training_cost's worker on this benchmark's models and batches."""
    *dtype, dims, arch = config.split(":")
    batch = functools.partial(make_batch, sentence_tokens=SENTENCE_TOKENS, target_tokens=TARGET_TOKENS)
    hat_worker(arch, tokens, batch_size, steps, device, archs=MODELS[dims],
               build=functools.partial(build_mt, dims), batch=batch, count_flops=True,
               dtype=dtype[0] if dtype else "fp32")


def add_own_options(parser):
    """This benchmark's options beside ``side_by_side``'s: ``--dims``, ``--lengths``,
    ``--dtype``."""
    add_options(parser, (SOURCE_TOKENS,))
    parser.add_argument("--dims", default=",".join(MODELS),
                        help=f"comma-separated sizes to measure, of {', '.join(MODELS)} "
                             f"(default: all)")


def read_own_options(parser, args, device):
    """``args.dims``, ``args.lengths``, ``args.dtype`` as lists; a bad value is argparse's
    one-line error."""
    read_options(parser, args, device, MAX_SOURCE_POSITIONS)
    dims = [d for d in args.dims.split(",") if d]
    unknown = [d for d in dims if d not in MODELS]
    if unknown or not dims:
        parser.error(f"--dims: unknown {unknown or 'empty'}; choose from {', '.join(MODELS)}")
    args.dims = dims


def median_ci(pairs, column):
    """Median step time of one model (``column`` of the step pairs) and its 95% interval."""
    return bootstrap(pairs, lambda sample: statistics.median(pair[column] for pair in sample))


def main():
    start = time.perf_counter()

    def configs(parser, args, device):
        read_own_options(parser, args, device)
        return [(f"{dtype}:{d}:{arch}", tokens) for dtype in args.dtype for tokens in args.lengths
                for d in args.dims for arch in (*MODELS[d], "pair")]

    args, device, results = side_by_side(__doc__, __file__, worker, configs, batch_size=1,
                                         steps=16, add_options=add_own_options)
    dims = args.dims
    runs = [(dtype, tokens, d) for dtype in args.dtype for tokens in args.lengths for d in dims]

    unit = "s" if device == "cuda" else "cpu-s"  # CPU: process CPU seconds (module docstring)
    print(f"device: {device}, batch {args.batch_size} x (S source + {TARGET_TOKENS} "
          f"target tokens), BOS every {SENTENCE_TOKENS} source tokens, {VOCAB} shared symbols; "
          f"median of {args.steps} alternated timed steps, 95% bootstrap intervals; ratios HAT / plain")
    print(f"{'dims':<7}{'dtype':<6}{'S':>5} {'model':<29}{'params':>13}{'peak MB':>9}{'GFLOP':>8}"
          f"{unit + '/step':>11}{'95% interval':>17}{'tokens/' + unit:>14}{'time ratio':>12}"
          f"{'mem ratio':>11}{'FLOP ratio':>12}")
    summary, details = {}, {"tokens_per_s": {}, "step_s": {}, "step_s_ci95": {}, "peak_mb": {},
                            "flops": {}}
    for dtype, tokens, d in runs:
        # key suffixes: the chunk's 512 tokens and fp32 carry none
        tail = ("" if tokens == SOURCE_TOKENS else f"_{tokens}") + dtype_suffix(dtype)
        times = results[(f"{dtype}:{d}:pair", tokens)]["steps"]
        pairs = list(zip(*(times[arch] for arch in MODELS[d])))
        rows = [results[(f"{dtype}:{d}:{arch}", tokens)] for arch in MODELS[d]]
        steps = [median_ci(pairs, column) for column in (0, 1)]  # (median, low, high)
        for arch, r, (step, low, high) in zip(MODELS[d], rows, steps):
            tps = args.batch_size * (tokens + TARGET_TOKENS) / step
            print(f"{d:<7}{dtype:<6}{tokens:>5} {arch:<29}{r['params']:>13,}{r['peak_mb']:>9.0f}"
                  f"{r['flops'] / 1e9:>8.0f}{step:>11.2f}{f'[{low:.2f}, {high:.2f}]':>17}"
                  f"{tps:>14.0f}{step / steps[0][0]:>12.3f}"
                  f"{r['peak_mb'] / rows[0]['peak_mb']:>11.3f}"
                  f"{r['flops'] / rows[0]['flops']:>12.3f}")
            for key, value in (("tokens_per_s", round(tps, 1)), ("step_s", round(step, 3)),
                               ("step_s_ci95", [round(low, 3), round(high, 3)]),
                               ("peak_mb", round(r["peak_mb"], 1)), ("flops", r["flops"])):
                details[key][arch + tail] = value
        ratio, low, high = median_ratio(times, MODELS[d][1], MODELS[d][0])  # HAT / plain
        mem, flops = (rows[1][k] / rows[0][k] for k in ("peak_mb", "flops"))
        print(f"{d:<7}{dtype:<6}{tokens:>5} time ratio {ratio:.3f}, 95% bootstrap interval "
              f"[{low:.3f}, {high:.3f}] over {args.steps} step pairs; memory ratio {mem:.3f} "
              f"(targets <= 1.15 both); FLOPs ratio {flops:.3f}")
        suffix = ("" if d == "en_de" else f"_{d}") + tail
        summary[f"hat_mt_time_ratio{suffix}"] = round(ratio, 3)
        summary[f"hat_mt_mem_ratio{suffix}"] = round(mem, 3)
        summary[f"hat_mt_time_ratio{suffix}_ci95"] = [round(low, 3), round(high, 3)]
        summary[f"hat_mt_flops_ratio{suffix}"] = round(flops, 3)
    wall = time.perf_counter() - start
    print(f"wall time: {wall:.0f} s")
    config = {"batch_size": args.batch_size, "steps": args.steps, "device": device, "dims": dims,
              "source_tokens": SOURCE_TOKENS, "lengths": args.lengths, "dtypes": args.dtype,
              "target_tokens": TARGET_TOKENS, "sentence_tokens": SENTENCE_TOKENS, "vocab": VOCAB,
              "time_unit": unit, "wall_s": round(wall)}
    print(json.dumps({**summary, **details, "config": config}))

if __name__ == "__main__":
    main()
