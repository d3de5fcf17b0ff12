"""The demo's comparison over seeds (fairseq_hier/demo/seeds.py, `fairseq-hier-demo facts
seeds`): the intervals against literal resampling loops, the ordering rule, and the command on
seed folders written here in the demo's layout."""

import json
import os

import numpy as np
import pytest

from fairseq_hier.demo.seeds import (Ratio, ordering, paired_interval, seed_interval,
                                     stratified_interval)
from conftest import run_cli

PROG = "fairseq-hier-demo facts seeds"  # as its error lines name it


def literal_percentiles(values, level=0.95):
    tail = (1 - level) / 2 * 100
    return tuple(float(x) for x in np.nanpercentile(values, [tail, 100 - tail]))


def literal_ratio(num, den, idx):
    top = sum(num[i] for i in idx)
    bottom = sum(den[i] for i in idx)
    return top / bottom if bottom else float("nan")


def random_ratio(rng, n):
    den = [int(rng.integers(1, 5)) for _ in range(n)]
    return Ratio([float(rng.integers(0, d + 1)) for d in den], [float(d) for d in den])


def test_stratified_interval_equals_literal_loops():
    rng = np.random.default_rng(7)
    seeds = [random_ratio(rng, 30), random_ratio(rng, 25)]
    value, low, high = stratified_interval(seeds, samples=200, seed=3)
    # the literal: one generator, each seed's 200 resamples drawn in turn, then averaged
    draw = np.random.default_rng(3)
    per_seed = []
    for r in seeds:
        idx = draw.integers(0, len(r.num), size=(200, len(r.num)))
        per_seed.append([literal_ratio(r.num, r.den, row) for row in idx])
    means = [sum(col) / len(col) for col in zip(*per_seed)]
    assert value == pytest.approx(sum(r.value for r in seeds) / 2)
    assert (low, high) == pytest.approx(literal_percentiles(means))
    assert low < value < high


def test_paired_and_seed_intervals_equal_literal_loops():
    rng = np.random.default_rng(11)
    a, b = random_ratio(rng, 40), random_ratio(rng, 40)
    diff, low, high = paired_interval(a, b, samples=300, seed=5)
    idx = np.random.default_rng(5).integers(0, 40, size=(300, 40))
    literal = [literal_ratio(a.num, a.den, row) - literal_ratio(b.num, b.den, row) for row in idx]
    assert diff == pytest.approx(a.value - b.value)
    assert (low, high) == pytest.approx(literal_percentiles(literal))
    value, low, high = seed_interval(a, samples=300, seed=5)
    assert (low, high) == pytest.approx(
        literal_percentiles([literal_ratio(a.num, a.den, row) for row in idx]))


def test_ordering_needs_every_seed():
    assert ordering([(0.1, 0.02, 0.2), (0.2, 0.01, 0.3)]) == ">"
    assert ordering([(-0.1, -0.2, -0.02), (-0.2, -0.3, -0.01)]) == "<"
    # one seed's interval reaches 0: not shown, though both means say A > B
    assert ordering([(0.1, 0.02, 0.2), (0.05, -0.01, 0.1)]) == "not shown"
    # the seeds disagree in sign, each separated: not shown
    assert ordering([(0.1, 0.02, 0.2), (-0.1, -0.2, -0.02)]) == "not shown"
    assert ordering([]) == "not shown"


FACTS = [{"entity": "kalon", "facts": {"kind": {"value": "harbour", "paragraphs": [1]},
                                      "region": {"value": "veshevia", "paragraphs": [2]}},
          "distractors": []},
         {"entity": "tomer", "facts": {"kind": {"value": "castle", "paragraphs": [1]}},
          "distractors": []}]
REFS = ["kalon is a harbour in veshevia .", "tomer is a castle ."]


def write_seed(root, good_hyps, bad_hyps, cosines=None):
    os.makedirs(os.path.join(root, "raw"))
    with open(os.path.join(root, "raw", "test.tgt"), "w") as f:
        f.write("\n".join(REFS) + "\n")
    with open(os.path.join(root, "raw", "test.facts.jsonl"), "w") as f:
        f.write("".join(json.dumps(x) + "\n" for x in FACTS))
    for name, hyps in (("good", good_hyps), ("bad", bad_hyps)):
        run = os.path.join(root, "runs", name)
        os.makedirs(run)
        with open(os.path.join(run, "test.hyp"), "w") as f:
            f.write("\n".join(hyps) + "\n")
    if cosines is not None:
        with open(os.path.join(root, "runs", "good", "attention.json"), "w") as f:
            json.dump({"per_example": cosines}, f)


def test_seeds_command(tmp_path):
    s1, s2 = str(tmp_path / "seed1"), str(tmp_path / "seed2")
    write_seed(s1, REFS, ["kalon is a castle .", "tomer is a castle ."], [0.5, None])
    write_seed(s2, REFS, ["kalon is a harbour .", "tomer is a harbour ."], [0.7, 0.9])
    out = str(tmp_path / "seeds.json")
    result = run_cli("fairseq-hier-demo", "facts", "seeds", "--seed-dir", s1, "--seed-dir", s2, "good=runs/good",
                     "bad=runs/bad", "--compare", "good,bad", "-o", out)
    assert result.returncode == 0, result.stdout
    data = json.load(open(out))
    good, bad = data["systems"]["good"], data["systems"]["bad"]
    assert [s["value"] for s in good["facts"]["seeds"]] == [1.0, 1.0]
    # seed 1: 1 of 3 gold facts (tomer's kind); seed 2: 1 of 3 (kalon's kind)
    assert [s["value"] for s in bad["facts"]["seeds"]] == pytest.approx([1 / 3, 1 / 3])
    assert bad["facts"]["mean"] == pytest.approx(1 / 3)
    assert good["rouge-2"]["mean"] == pytest.approx(1.0)
    # the cosine: seed 1 scores its one example with a gold distribution, seed 2 both
    assert [s["value"] for s in good["cosine"]["seeds"]] == pytest.approx([0.5, 0.8])
    assert good["cosine"]["mean"] == pytest.approx(0.65)
    assert "cosine" not in bad
    facts = [p for p in data["pairs"] if p["metric"] == "facts"]
    assert len(facts) == 1 and facts[0]["a"] == "good" and facts[0]["b"] == "bad"
    assert [d["diff"] for d in facts[0]["seeds"]] == pytest.approx([2 / 3, 2 / 3])
    # two examples per seed: a resample can draw the one example both systems get right, so the
    # interval reaches 0 and the ordering is not claimed
    assert facts[0]["ordering"] == "not shown"
    assert "facts    good vs bad: not shown" in result.stdout
    assert "not shown" in result.stdout


def test_seeds_command_errors(tmp_path):
    s1 = str(tmp_path / "seed1")
    write_seed(s1, REFS, REFS[:1])
    result = run_cli("fairseq-hier-demo", "facts", "seeds", "--seed-dir", s1, "good=runs/good",
                     "bad=runs/bad", check=False)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and "runs/bad/test.hyp" in lines[0], result.stdout
    result = run_cli("fairseq-hier-demo", "facts", "seeds", "--seed-dir", s1, "good=runs/good", "--compare",
                     "good,nobody", check=False)
    assert result.returncode == 1
    assert result.stdout.strip() == (f"{PROG}: error: --compare names nobody, which is not a "
                                     f"system (systems: good)"), result.stdout
    result = run_cli("fairseq-hier-demo", "facts", "seeds", "--seed-dir", s1, "good", check=False)
    assert result.returncode == 1
    assert result.stdout.strip() == (f"{PROG}: error: system 'good': expected NAME=RUN_DIR (the "
                                     f"run folder relative to each seed folder)"), result.stdout
