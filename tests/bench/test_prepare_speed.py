"""benchmarks/prepare_speed.py at a tiny size, in this process: its summary's rates, speed-ups
and hour estimates are those its formulas give from the same summary's figures."""

import importlib
import json
import logging

import pytest

from conftest import ROOT


@pytest.fixture
def prepare_speed(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # before pysbd's top-level package `benchmarks`
    # its main() quiets the package's logger: the tests after this one in the process read INFO
    package_logger = logging.getLogger("fairseq_hier")
    level = package_logger.level
    yield importlib.import_module("benchmarks.prepare_speed")
    package_logger.setLevel(level)


def literal_hours(units, rate_1, fraction, cores):
    """Amdahl, written out: the serial share at one core's speed, the parallel share spread."""
    seconds_one_core = units / rate_1
    return (seconds_one_core * (1 - fraction) + seconds_one_core * fraction / cores) / 3600


def test_amdahl_literals(prepare_speed):
    assert prepare_speed.amdahl(0.5, 2) == pytest.approx(4 / 3)
    assert prepare_speed.amdahl(1.0, 64) == pytest.approx(64)
    assert prepare_speed.amdahl(0.0, 64) == pytest.approx(1)
    assert prepare_speed.estimate_hours(7200, 1.0, 0.5) == pytest.approx(
        {"2": 1.5, "16": 1.0625, "64": 1.015625})


def test_tiny_run_summary(prepare_speed, tmp_path, capsys):
    prepare_speed.main(["--mb", "0.06", "--steps", "bos_arxiv,graph_tfidf", "--workers", "1,2",
                        "--prefix-mb", "graph_tfidf=0.03", "--work", str(tmp_path)])
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    assert set(summary) == {"config", "steps", "wmt20_from_doc_mt_prepare_speed", "alternatives"}
    config = summary["config"]
    assert config["mb"] == 0.06 and config["workers"] == [1, 2] and config["cpus"] >= 1
    assert set(config["corpus"]) == {"arxiv", "wikisum"}
    assert set(config["corpus"]["wikisum"]) == {"whole", "first-0.03"}
    assert config["corpus"]["arxiv"]["whole"]["bytes"] >= 4 * 0.06e6  # --arxiv-mb: 4 x --mb
    assert set(summary["steps"]) == {"bos_arxiv", "graph_tfidf"}
    for step, r in summary["steps"].items():
        assert set(r) == {"runs", "unit", "speed_up", "parallel_fraction", "paper",
                          "paper_units", "hours"}
        assert r["unit"] == "examples" and r["paper_units"] == prepare_speed.PAPER[step][1]
        runs = r["runs"]
        assert set(runs) == {"1", "2"}
        for run in runs.values():
            for unit in ("examples", "sentences", "words"):
                assert run[f"{unit}_per_s"] == pytest.approx(run[unit] / run["seconds"],
                                                             rel=1e-3)
        # the whole file at the last worker count; the tfidf prefix at 1 worker
        assert runs["2"]["input"] == "whole"
        layout = prepare_speed.LAYOUTS[step]
        assert runs["2"]["words"] == config["corpus"][layout]["whole"]["words"]
        prefix = config["corpus"]["wikisum"]["first-0.03"]
        assert runs["1"]["input"] == ("whole" if step == "bos_arxiv"
                                      else f"first {prefix['bytes'] / 1e6:.2f} MB")
        assert runs["1"]["words"] == config["corpus"][layout][
            "whole" if step == "bos_arxiv" else "first-0.03"]["words"]
        assert r["speed_up"] == pytest.approx(
            runs["2"]["examples_per_s"] / runs["1"]["examples_per_s"], rel=1e-3)
        fraction = runs["2"]["cpu_workers_s"] / (runs["2"]["cpu_workers_s"]
                                                  + runs["2"]["cpu_main_s"])
        assert r["parallel_fraction"] == pytest.approx(fraction, abs=1e-3)
        assert runs["2"]["cpu_workers_s"] > 0 and runs["1"]["cpu_workers_s"] == 0
        for cores in ("2", "16", "64"):
            assert r["hours"][cores] == pytest.approx(literal_hours(
                r["paper_units"], runs["1"]["examples_per_s"], r["parallel_fraction"],
                int(cores)), rel=1e-3)
    wmt = summary["wmt20_from_doc_mt_prepare_speed"]
    binarize = wmt["wmt20 binarize"]  # 2 workers measured, ideal scaling assumed
    assert binarize["hours"]["2"] == pytest.approx(128_502_000 / 57_469 / 3600, rel=1e-3)
    assert binarize["hours"]["64"] == pytest.approx(binarize["hours"]["2"] / 32, rel=2e-3)
    chunk = wmt["wmt20 chunk"]  # one process
    assert chunk["hours"]["64"] == chunk["hours"]["2"] == pytest.approx(
        128_502_000 / 76_108 / 3600, rel=1e-3)
