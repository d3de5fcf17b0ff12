"""Smoke runs of the side-by-side training and decoding benchmarks (benchmarks/training_cost.py
and benchmarks/decoding_speed.py): each script's ``main`` with command-line arguments, at tiny widths,
runs end to end on CPU and prints as its last line the JSON summary with every ratio key; each
ratio is the architecture's raw figure over the baseline's, both read from the same summary, up to
the script's rounding (so an inverted or wrongly based ratio fails). The timed rounds themselves
are recorded here (a spy on the function that returns them): their number is the one asked for,
each time ratio is the ratio of their medians, and its interval is the exact percentile bootstrap
of them (:func:`exact_interval`), so a ratio of the wrong rounds, rounds resampled unpaired or the
wrong percentiles fail. Also: the FLOP counter counts CPU's fused attention kernel, the CUDA-only
max-batch search and its keys (on fake results), and bad options fail with a one-line error.
"""

import importlib
import itertools
import math
import statistics
import types

import pytest
import torch
import torch.nn.functional as F

from conftest import ROOT, run_benchmark
from fairseq_hier.analysis.efficiency import largest_batch

HIER = ("pht", "vht", "liu_ht", "hat")


def load(monkeypatch, name="training_cost"):
    """``benchmarks/NAME.py`` as the module ``benchmarks.NAME`` (the repository root first on
    ``sys.path``, as the script puts it)."""
    monkeypatch.syspath_prepend(str(ROOT))
    return importlib.import_module(f"benchmarks.{name}")


def assert_quotient(ratio, num, den, digits, ratio_digits):
    """``ratio`` (rounded to ``ratio_digits`` decimals) is ``num / den``, where ``num`` and ``den``
    were rounded to ``digits`` decimals: it lies in the range of quotients their rounding allows,
    widened by the ratio's own rounding."""
    half, half_ratio = 0.5 * 10 ** -digits, 0.5 * 10 ** -ratio_digits
    assert den - half > 0, (num, den)
    low, high = (num - half) / (den + half), (num + half) / (den - half)
    assert low - half_ratio - 1e-9 <= ratio <= high + half_ratio + 1e-9, (ratio, num, den)


def exact_interval(pairs):
    """The ratio of medians of timed rounds, ``pairs`` = [(baseline seconds, model seconds)] one
    per round, and the 2.5% and 97.5% quantiles of its exact bootstrap distribution: all n^n
    equally likely resamples of the n rounds (a round's two times drawn together), enumerated,
    not sampled; the q-quantile is the smallest ratio r with P(ratio <= r) >= q. Returns
    (point, low, high)."""
    def ratio(sample):
        return (statistics.median(num for _, num in sample)
                / statistics.median(den for den, _ in sample))

    n = len(pairs)
    values = sorted(ratio([pairs[i] for i in idx])
                    for idx in itertools.product(range(n), repeat=n))  # all n^n resamples
    return (ratio(pairs), values[math.ceil(0.025 * len(values)) - 1],
            values[math.ceil(0.975 * len(values)) - 1])


def assert_exact_interval(summary, key, den, num, digits):
    """``summary[key]`` and ``summary[key + "_ci95"]`` (rounded to ``digits``) are the ratio of
    medians of the recorded rounds ``num`` over ``den`` and its exact bootstrap interval. With the
    smoke runs' 2 rounds the interval's ends are the two rounds' own ratios (each the value of a
    resample with probability 1/4: the script's 2000 draws hold ~500 of each, far above the 50
    beyond a 2.5th percentile, whatever its seed), and a resample that pairs one round's baseline
    with the other's model time would give another end."""
    assert len(den) == len(num) == 2, (key, den, num)
    point, low, high = exact_interval(list(zip(den, num)))
    half = 0.5 * 10 ** -digits + 1e-9
    assert summary[key] == pytest.approx(point, abs=half), key
    assert summary[f"{key}_ci95"] == pytest.approx([low, high], abs=half), key
    assert (low, high) == pytest.approx(sorted(n / d for d, n in zip(den, num)), abs=1e-12)


def spy(monkeypatch, module, name, calls):
    """Wrap ``benchmarks/MODULE.py``'s ``name`` (as the benchmark names it: patched in its
    module) so that each call's arguments and result are appended to ``calls``."""
    owner = load(monkeypatch, module)
    original = getattr(owner, name)

    def recorded(*args, **kwargs):
        result = original(*args, **kwargs)
        calls.append((args, result))
        return result

    monkeypatch.setattr(owner, name, recorded)


def test_step_flops_counts_cpu_fused_attention(monkeypatch):
    """torch's FlopCounterMode has no formula for CPU's flash-attention kernels (a fused flat
    encoder would count 0 attention FLOPs on CPU); ours counts them as torch does CUDA's:
    forward 2 products of 2*B*H*S*S*D, backward 5 (the scores recomputed)."""
    b, h, s, d = 2, 3, 7, 5
    q, k, v = (torch.randn(b, h, s, d, requires_grad=True) for _ in range(3))

    def step():
        F.scaled_dot_product_attention(q, k, v).sum().backward()

    assert load(monkeypatch, "harness").step_flops(step) == 7 * 2 * b * h * s * s * d


def test_largest_batch_search():
    """The max-batch search (run on CUDA only) finds the exact boundary by doubling then
    bisecting, in few trials, and says when it stopped at its limit."""
    search = largest_batch
    tried = []

    def fits(size):
        tried.append(size)
        return size <= 53

    assert search(fits, 1024) == (53, False)
    assert tried[:7] == [1, 2, 4, 8, 16, 32, 64] and len(tried) <= 12
    assert search(lambda size: size <= 53, 40) == (40, True)
    assert search(lambda size: size <= 37, 40) == (37, False)
    assert search(lambda size: False, 1024) == (0, False)
    assert search(lambda size: True, 1) == (1, True)


def test_max_batch_table_keys(monkeypatch, capsys):
    """The max-batch results (CUDA only) become ``{pht,vht}_max_batch_ratio_1600`` (fp32), with
    ``_bf16`` and ``_vs_s2`` variants; here with figures of an H100 run."""
    bench = load(monkeypatch)
    found = {"fp32": {"transformer": 64, "transformer-S2": 27, "pht": 53, "vht": 45},
             "bf16": {"transformer": 88, "transformer-S2": 40, "pht": 75, "vht": 71}}
    max_batch = {(dtype, arch): {"max_batch": n, "at_limit": False}
                 for dtype, sizes in found.items() for arch, n in sizes.items()}
    args = types.SimpleNamespace(max_batch_cap_gib=11.0, archs=list(bench.ARCHS),
                                 dtype=["fp32", "bf16"])
    ratios, details = {}, {}
    bench.max_batch_table(args, max_batch, ratios, details)
    assert ratios == {"pht_max_batch_ratio_1600": round(53 / 64, 3),
                      "pht_max_batch_ratio_1600_vs_s2": round(53 / 27, 3),
                      "vht_max_batch_ratio_1600": round(45 / 64, 3),
                      "vht_max_batch_ratio_1600_vs_s2": round(45 / 27, 3),
                      "pht_max_batch_ratio_1600_bf16": round(75 / 88, 3),
                      "pht_max_batch_ratio_1600_bf16_vs_s2": round(75 / 40, 3),
                      "vht_max_batch_ratio_1600_bf16": round(71 / 88, 3),
                      "vht_max_batch_ratio_1600_bf16_vs_s2": round(71 / 40, 3)}
    assert details["max_batch_1600"] == found
    assert "11 GiB" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--archs", "pht,vht"], "--archs must include transformer"),
    (["--archs", "transformer,flat"], "--archs: unknown 'flat'"),
    (["--lengths", "1600,150"], "--lengths: [150] not positive multiples of 100"),
    (["--dtype", "fp16"], "--dtype: unknown 'fp16'; choose from fp32, bf16"),
])
def test_training_cost_bad_options(argv, message, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_info:
        load(monkeypatch).parse_args(["--device", "cpu", *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_training_cost_smoke(monkeypatch, capsys):
    """Every model of training_cost.py at 200 tokens: ratios of all four to the flat transformer
    (tokens/s with its interval from the recorded rounds, memory, FLOPs, memory to
    transformer-S2), none OOM, no max-batch search on CPU."""
    calls = []
    spy(monkeypatch, "training_cost", "alternated_times", calls)
    out, summary = run_benchmark("training_cost", ["--widths", "tiny", "--lengths", "200",
                                                    "--steps", "2", "--one-process"],
                                 monkeypatch, capsys)
    assert len(calls) == 1  # one length, one dtype: one set of alternated rounds
    (_, rounds, _), times = calls[0]
    assert rounds == 2 and set(times) == {"transformer", "transformer-S2", *HIER}
    assert all(len(t) == 2 and min(t) > 0 for t in times.values())
    archs = {"transformer", "transformer-S2", *HIER}
    for measure in ("tokens_per_s", "peak_mb", "gflops"):
        assert set(summary[measure]["200"]) == archs
        assert all(v > 0 for v in summary[measure]["200"].values()), measure
    digits = load(monkeypatch).DIGITS
    # each ratio: the architecture's figure over the baseline's (tokens/s: the architecture's
    # over the flat model's, i.e. the flat model's step time over the architecture's)
    for arch in HIER:
        for kind, measure, base in (("tps", "tokens_per_s", "transformer"),
                                    ("mem", "peak_mb", "transformer"),
                                    ("flops", "gflops", "transformer"),
                                    ("mem", "peak_mb", "transformer-S2")):
            key = f"{arch}_{kind}_ratio_200" + ("_vs_s2" if base == "transformer-S2" else "")
            figures = summary[measure]["200"]
            assert_quotient(summary[key], figures[arch], figures[base], digits[measure],
                            digits["ratio"])
        # tokens/s ratio: the flat model's median step over the architecture's
        assert_exact_interval(summary, f"{arch}_tps_ratio_200", times[arch], times["transformer"],
                              digits["ratio"])
    for arch, seconds in times.items():
        assert summary["step_s"]["200"][arch] == round(statistics.median(seconds),
                                                       digits["step_s"])
    assert summary["config"]["oom"] == [] and summary["config"]["device"] == "cpu"
    assert not any("max_batch" in key for key in summary)
    assert "tps ratio" in out and "transformer-S2" in out


def test_decoding_speed_smoke(monkeypatch, capsys):
    """decoding_speed.py on tiny sources (3 paragraphs x 10 tokens, 6 steps, beam 2): every model
    decodes exactly 6 steps (checked inside; it raises otherwise); the time ratios and their
    intervals are those of the recorded rounds, the memory ratios those of the peaks."""
    calls = []
    spy(monkeypatch, "decoding_speed", "measure_dtype", calls)
    out, summary = run_benchmark("decoding_speed", [
        "--widths", "tiny", "--paragraphs", "3", "--paragraph-tokens", "10", "--target-steps", "6",
        "--beam", "2", "--repeats", "2"], monkeypatch, capsys)
    assert set(summary["s_per_example"]["fp32"]) == {"transformer", "pht", "vht"}
    assert all(v > 0 for v in summary["peak_mb"]["fp32"].values())
    assert len(calls) == 1  # fp32 only on CPU
    (_, dtype), (peaks, times, _) = calls[0]
    assert dtype == "fp32" and set(times) == {"transformer", "pht", "vht"}
    assert all(len(t) == 2 and min(t) > 0 for t in times.values())
    digits = load(monkeypatch, "decoding_speed").DIGITS
    batch = summary["config"]["batch_size"]
    for arch, seconds in times.items():
        assert summary["s_per_example"]["fp32"][arch] == round(statistics.median(seconds) / batch,
                                                               digits["s_per_example"])
        assert summary["peak_mb"]["fp32"][arch] == round(peaks[arch], digits["peak_mb"])
    for arch in ("pht", "vht"):  # the architecture's seconds and MB over the flat model's
        for kind, measure in (("time", "s_per_example"), ("mem", "peak_mb")):
            figures = summary[measure]["fp32"]
            assert_quotient(summary[f"{arch}_decode_{kind}_ratio"], figures[arch],
                            figures["transformer"], digits[measure], digits["ratio"])
        assert summary[f"{arch}_decode_mem_ratio"] == pytest.approx(
            peaks[arch] / peaks["transformer"], abs=0.5e-3 + 1e-9)
        assert_exact_interval(summary, f"{arch}_decode_time_ratio", times["transformer"],
                              times[arch], digits["ratio"])
    assert summary["config"]["target_steps"] == 6 and summary["config"]["repeats"] == 2
