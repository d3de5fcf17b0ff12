"""Training cost of HAT vs a plain Transformer on 512-token document chunks (not a test).

Document MT (paper 004 Sec. 4.2), side by side in one run, at two sizes (``--dims``):
``en_de``: ``hat_transformer_wmt_en_de`` vs fairseq's ``transformer_wmt_en_de_big`` (6+6 layers,
1024, FFN 4096, 16 heads); ``zh_en``: ``hat_transformer_iwslt_zh_en`` vs fairseq's
``transformer`` with 512, FFN 1024, 4 heads. Both models of a size: a 40000-symbol joint
dictionary with ``share_all_embeddings`` (the recipes' setting), dropout 0.1, attention dropout
0.1 (the HAT presets inherit it from ``transformer_wmt_en_de_big``; fairseq's plain
``transformer`` would default to 0, so it is set for both: the difference measured is the
architecture's). Batch: ``--batch-size`` chunks of 512 source tokens with a BOS ``<s>`` opening
a sentence every 22 tokens (24 sentences; 004 Table 2: En-De ~446 BPE tokens a document, WMT
sentences ~22) and a final EOS, and 512 target tokens.

Measured with ``benchmarks/hat_efficiency.py``'s machinery (its worker and batch builder;
``benchmarks/efficiency.py``'s ``side_by_side``, ``training_step``, ``measure`` and bootstrap):
- time: per size, both models in ONE worker process, one warm-up Adam step each (lr 1e-5,
  cross-entropy), then ``--steps`` timed steps alternating (plain, HAT, plain, HAT, ...), so
  drift of the machine hits both alike. CPU: process CPU time (about threads x wall seconds,
  not inflated by time stolen by other processes); CUDA: wall time after synchronising. Each
  model's step time is the median of its timed steps with a 95% bootstrap interval, the time
  ratio HAT / plain the ratio of the medians with a 95% bootstrap interval over the step pairs;
  tokens/s = batch x (512 source + 512 target tokens) / median step time;
- memory: per model, in its own worker process, the peak of one training step (forward,
  backward, Adam) above the state held before it (model, gradients, Adam state, batch). CUDA:
  ``torch.cuda.max_memory_allocated``; CPU: the running sum of torch.profiler's allocation
  events (exact for tensors, unlike RSS);
- FLOPs: per model, in the same worker, one more training step under torch's FlopCounterMode
  (matrix products forward and backward, attention included; elementwise work and Adam's update
  not counted): what the architecture costs, free of timing noise, the same on any machine.
``--lengths``: source lengths other than the 512 of a chunk (the target stays 512 tokens).
``--dtype``: fp32 and/or bf16 (``torch.autocast`` to bfloat16 of the forward and the loss, as
``benchmarks/efficiency.py``'s ``training_step``; weights, gradients and Adam stay float32);
default fp32,bf16 on CUDA, fp32 on CPU (whose bf16 autocast is emulated and several times slower).

Prints a table per size (model, parameters, peak MB, GFLOPs a step, step time median and 95%
interval, tokens/s, ratios HAT / plain) and, as its last line, one JSON object:
``hat_mt_time_ratio``, ``hat_mt_mem_ratio`` (En-De, the paper's headline),
``hat_mt_time_ratio_zh_en``, ``hat_mt_mem_ratio_zh_en``, the time ratios' intervals
(``*_ci95``), the FLOPs ratios (``hat_mt_flops_ratio``, ``hat_mt_flops_ratio_zh_en``), tokens/s,
step times, peaks and FLOPs of each model, and the config. A source length N other than 512 adds
``_N`` to the keys, bf16 ``_bf16`` (``hat_mt_time_ratio_zh_en_88_bf16``, its interval
``hat_mt_time_ratio_zh_en_88_bf16_ci95``); the per-model figures of such runs are keyed
``MODEL_N_bf16``.

Paper 004 paid 25 h vs 17 h of training for En-De (1.47x). Targets: HAT / plain <= 1.15x time
and <= 1.15x memory. Default run (batch 1, 16 step pairs, both sizes) on 2 CPU cores: 459 s
wall time (7.7 min) on an otherwise idle machine; other jobs on the same cores slow it and widen
the intervals, as process CPU time still counts threads waiting on each other.

    python benchmarks/doc_mt_efficiency.py [--batch-size 1] [--steps 16] [--device cpu|cuda]
        [--dims en_de,zh_en] [--lengths 512] [--dtype fp32,bf16]
"""

import functools
import json
import statistics
import time

# one definition of the command line, the workers and the bootstrap
from efficiency import bootstrap, median_ratio, side_by_side
from hat_efficiency import (add_options, build_model, dtype_suffix, make_batch,
                            read_options)
from hat_efficiency import worker as hat_worker

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
    bf16: hat_efficiency's worker on this benchmark's models and batches."""
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
