"""Smoke runs of benchmarks/parsing_speed.py (LGA training vs 003's FT and fairseq's transformer)
and benchmarks/alignment_speed.py (attention-alignment decoding vs vanilla beam search): each
script's ``main`` in this process at tiny widths, 2 timed rounds. Its last-line JSON: every ratio
equals the raw figure of its model divided by its baseline's, both read from the same summary (so
an inverted or wrongly based ratio fails), and every time ratio and its 95% interval are computed
here from the recorded rounds (parsing_speed's ``rounds``; alignment_speed's through a spy on its
``report``): the ratio of their medians and the exact percentile bootstrap over the rounds
(``test_benchmarks.assert_exact_interval``), and the raw figures are those rounds' medians.
"""

import statistics
import sys

import pytest

from conftest import run_benchmark
from test_benchmarks import assert_exact_interval, load, spy


def check_ratio(summary, key, numerator, denominator):
    """``summary[key]`` (rounded to 4 decimals) is numerator / denominator."""
    assert summary[key] == pytest.approx(numerator / denominator, abs=6e-5), key


@pytest.mark.parametrize("dtype, tail", [("fp32", ""), ("bf16", "_bf16")])
def test_parsing_speed_ratios_are_lga_over_its_baselines(dtype, tail, monkeypatch, capsys):
    """fp32 and bf16 autocast (keys and raw figures with ``_bf16`` after the length)."""
    _, summary = run_benchmark("parsing_speed", [
        "--widths", "tiny", "--lengths", "40,64", "--steps", "2", "--sentences", "0",
        "--one-process", "--dtype", dtype], monkeypatch, capsys)
    time, mem, rounds = summary["s_per_step"], summary["peak_mb"], summary["rounds"]
    lengths = {f"40{tail}", f"64{tail}"}
    assert set(time) == set(mem) == set(rounds) == lengths
    for length in lengths:
        assert set(time[length]) == set(rounds[length]) == {"transformer_copy", "parsingsum_ft",
                                                             "transformer"}
        for arch, seconds in rounds[length].items():
            assert len(seconds) == 2 and min(seconds) > 0 and mem[length][arch] > 0
            assert time[length][arch] == statistics.median(seconds)
        for suffix, base in (("", "transformer_copy"), ("_to_plain", "transformer")):
            check_ratio(summary, f"lga_time_ratio_{length}{suffix}",
                        time[length]["parsingsum_ft"], time[length][base])
            assert_exact_interval(summary, f"lga_time_ratio_{length}{suffix}",
                                  rounds[length][base], rounds[length]["parsingsum_ft"], 4)
            check_ratio(summary, f"lga_mem_ratio_{length}{suffix}",
                        mem[length]["parsingsum_ft"], mem[length][base])
    assert "parse_sents_per_s" not in summary  # --sentences 0 skips the parsing step
    ratio_keys = {k for k in summary if "ratio" in k and not k.endswith("_ci95")}
    assert len(ratio_keys) == 8  # 2 lengths x {time, mem} x 2 baselines, all checked above
    assert all(k.endswith(tail) or k.endswith(f"{tail}_to_plain") for k in ratio_keys)


@pytest.mark.parametrize("value, bad", [("fp16", "fp16"), ("fp32,bf8", "bf8")])
def test_parsing_speed_bad_dtype_is_a_one_line_error(value, bad, monkeypatch, capsys):
    """argparse's error, as ``benchmarks/training_cost.py``'s ``--dtype``: usage, then one error
    line, exit 2."""
    bench = load(monkeypatch, "parsing_speed")
    monkeypatch.setattr(sys, "argv", ["parsing_speed.py"])
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(["--device", "cpu", "--dtype", value])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("usage: parsing_speed.py")
    assert lines[-1] == f"parsing_speed.py: error: --dtype: unknown {bad!r}; choose from fp32, bf16"
    assert sum("error" in line for line in lines) == 1


def test_parsing_speed_names_the_1600_piece_figures_without_a_suffix(monkeypatch):
    """The target length's keys carry no length suffix; the others carry ``_N``."""
    bench = load(monkeypatch, "parsing_speed")
    args = bench.parse_args(["--device", "cpu", "--lengths", "500,1600", "--widths", "tiny"])
    times = {t: {"transformer_copy": [2.0, 2.0, 2.0], "parsingsum_ft": [2.2, 2.2, 2.2],
                 "transformer": [1.0, 1.0, 1.0]} for t in (500, 1600)}
    peaks = {(a, t): {"peak_mb": mb, "params": 1} for t in (500, 1600)
             for a, mb in (("transformer_copy", 10.0), ("parsingsum_ft", 11.0),
                           ("transformer", 8.0))}
    out = bench.summarise(args, times, peaks)
    assert out["lga_time_ratio"] == 1.1 and out["lga_time_ratio_ci95"] == [1.1, 1.1]
    assert out["lga_time_ratio_to_plain"] == 2.2 and out["lga_mem_ratio_to_plain"] == 1.375
    assert out["lga_time_ratio_500"] == 1.1 and out["lga_mem_ratio_500"] == 1.1


def test_alignment_speed_ratios_are_decoders_over_vanilla(monkeypatch, capsys):
    calls = []
    spy(monkeypatch, "alignment_speed", "report", calls)
    _, summary = run_benchmark("alignment_speed", [
        "--widths", "tiny", "--vocab", "60", "--batch", "2", "--max-paragraphs", "3",
        "--max-paragraph-tokens", "6", "--max-len", "4", "--beam", "2", "--repeats", "2"],
        monkeypatch, capsys)
    seconds = summary["seconds"]
    assert summary["clock"] == "cpu" and summary["rounds"] == 2
    assert len(calls) == 1
    times = calls[0][0][4]  # report(args, runs, sample, max_len, times, steps)
    assert set(times) == set(seconds) == {"vanilla", "attalign", "attalign_live", "strcov",
                                          "flat"}
    for name, rounds in times.items():
        assert len(rounds) == 2 and min(rounds) > 0
        assert seconds[name] == statistics.median(rounds)
    for key, name in (("align_time_ratio", "attalign"), ("align_live_time_ratio",
                                                         "attalign_live"),
                      ("strcov_time_ratio", "strcov")):
        check_ratio(summary, key, seconds[name], seconds["vanilla"])
        assert_exact_interval(summary, key, times["vanilla"], times[name], 4)
    check_ratio(summary, "pht_decode_ratio_to_flat", seconds["vanilla"], seconds["flat"])
    assert_exact_interval(summary, "pht_decode_ratio_to_flat", times["flat"], times["vanilla"], 4)
    assert summary["vanilla_seconds"] == pytest.approx(seconds["vanilla"], abs=6e-5)
