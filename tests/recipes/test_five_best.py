"""The WikiSum recipe's liu_ht path on tiny shards: prepare.sh with TITLE_PLACEMENT=every (the
title in every paragraph), train_liu_ht.sh keeping its best checkpoints, and five_best.sh, which
decodes each with liu_ht's recorded rules (002's, not PHT's; fairseq-hier-decode), scores each
(fairseq-hier-score --protocol hiersumm), and reports each and their mean with the set's bootstrap interval (fairseq-hier-significance on the set)."""

import json
import re
import statistics

import numpy as np
import pytest

from conftest import SMALL_MODEL
from test_wikisum_recipe import run
from wikisum_samples import spm_model, write_shards
from fairseq_hier.io import read_lines
from fairseq_hier.scoring import significance as sig


@pytest.fixture(scope="module")
def liu_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("five_best")
    model = spm_model(tmp)
    prefix = write_shards(tmp / "data", model, {"train": [6], "valid": [3], "test": [4]})
    work = tmp / "work"
    log = run_env("prepare.sh", {"TITLE_PLACEMENT": "every"}, prefix, model, work)
    assert "paragraphs keeping the shards' title prefix" in log
    assert not (work / "data-bin").exists() and (work / "data-bin-every" / "dict.src.txt").exists()
    ck = work / "runs" / "liu_ht"
    run_env("train_liu_ht.sh", {"UPDATE_FREQ": "1", "GPUS": "1"}, work / "data-bin-every", ck,
            *SMALL_MODEL, "--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2",
            "--max-update", "3", "--max-tokens", "2000", "--warmup-updates", "2",
            "--save-interval-updates", "1", "--validate-interval-updates", "1",
            "--keep-best-checkpoints", "2", "--num-workers", "0", "--no-progress-bar")
    out = run_env("five_best.sh", {"BATCH": "4"}, work, ck, "--max-len-b", "12", "--min-len", "1",
                  "--num-workers", "0")
    return work, ck, out


def run_env(script, env, *args):
    import os

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return run(script, *args)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k)
            else:
                os.environ[k] = v


def literal_set_interval(members, samples, seed):
    """A set's mean F and its 95% percentile bootstrap interval, written out: a document's score
    is the mean over the members, a resample draws N documents with replacement (numpy's
    ``default_rng(seed)``, one resample at a time), its score is their mean; the interval is the
    2.5th and 97.5th percentiles (linear interpolation) of the resample scores."""
    n = len(members[0])
    doc = [sum(m[i] for m in members) / len(members) for i in range(n)]
    rng, means = np.random.default_rng(seed), []
    for _ in range(samples):
        means.append(sum(doc[i] for i in rng.integers(0, n, size=n)) / n)
    cuts = statistics.quantiles(means, n=40, method="inclusive")  # 2.5%, 5%, ..., 97.5%
    return sum(doc) / n, cuts[0], cuts[-1]


def test_every_paragraph_opens_with_the_title(liu_run):
    work, _, _ = liu_run
    line = (work / "raw-every" / "test.src").read_text().splitlines()[0]
    assert line.startswith("<P> ") and all("<T>" in p.split() for p in line[4:].split(" <P> "))
    record = json.loads((work / "data-bin-every" / "hier_preprocess.json").read_text())
    assert record["generation_for"]["liu_ht"][:6] == ["--beam", "5", "--length-penalty-form",
                                                      "wu", "--lenpen", "0.4"]


def test_five_best_decodes_each_with_liu_hts_rules_and_averages(liu_run):
    work, ck, out = liu_run
    best = sorted(ck.glob("checkpoint.best_*.pt"))
    assert len(best) == 2 and "2 best checkpoint(s)" in out
    # liu_ht's rules from the record (002's, not the default PHT rules: the first test and
    # test_recipe_deviations pin their values), then the extra args
    record = json.loads((work / "data-bin-every" / "hier_preprocess.json").read_text())
    rules = record["generation_for"]["liu_ht"]
    assert rules != record["generation"]  # not the default (PHT) rules
    for path in best:
        folder = ck / "best" / path.stem
        decoded = json.loads((folder / "test.decode.json").read_text())
        assert (decoded["data"], decoded["arch"]) == (str(work / "data-bin-every"), "liu_ht")
        command = decoded["command"]
        start = command.index("--gen-subset") + 2
        assert command[start: start + len(rules)] == rules
        assert command[-8:] == ["--post-process", "sentencepiece", "--max-len-b", "12",
                                "--min-len", "1", "--num-workers", "0"]
        hyps = [h.split("\t")[2] for h in (folder / "generate-test.txt").read_text().splitlines()
                if h.startswith("H-")]
        assert len(hyps) == 4 and all(len(h.split()) <= 12 for h in hyps)
        assert (ck / "best" / f"{path.stem}.hyp").read_text() == (folder / "test.hyp").read_text()
    result = json.loads((ck / "best" / "test.best.json").read_text())
    assert (result["samples"], result["seed"], result["documents"]) == (1000, 0, 4)
    refs = read_lines(str(ck / "best" / best[0].stem / "test.ref"))
    # each member's per-document F (the scorer, one ROUGE run per member); the aggregate is
    # computed below by plain loops, not by the command's library
    per_doc = [sig.rouge_per_document(refs, read_lines(str(ck / "best" / f"{p.stem}.hyp")),
                                      eos="<q>") for p in best]
    for metric in sig.METRICS:
        ours = result["systems"]["liu_ht"][metric]
        members = [scores[metric] for scores in per_doc]
        f, low, high = literal_set_interval(members, result["samples"], result["seed"])
        doc_means = [sum(m[i] for m in members) / len(members) for i in range(4)]
        assert ours["per_document"] == pytest.approx(doc_means, abs=1e-12), metric
        assert ours["f"] == pytest.approx(f, abs=1e-12), metric
        assert (ours["f_low"], ours["f_high"]) == pytest.approx((low, high), abs=1e-12), metric
        assert ours["f_low"] <= ours["f"] <= ours["f_high"]
        # each member's score is the one its own decode.sh run printed (test.rouge.txt), and the
        # set's reported score their plain mean
        printed = []
        for path, member, scores in zip(best, ours["members"], members):
            report = (ck / "best" / path.stem / "test.rouge.txt").read_text()
            m = re.search(rf"{metric.upper()} Average_F: (\d\.\d+)", report)
            printed.append(float(m.group(1)))
            assert member["reported_f"] == printed[-1], (metric, path.stem)
            assert member["f"] == pytest.approx(sum(scores) / 4, abs=1e-12), (metric, path.stem)
        assert ours["reported_f"] == pytest.approx(sum(printed) / len(printed), abs=1e-12)
    table = (ck / "best" / "test.best.txt").read_text()
    assert "per-document mean [95% interval]" in table


def test_five_best_without_best_checkpoints_is_one_line(tmp_path):
    import os
    import subprocess

    from conftest import BIN, ROOT

    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    proc = subprocess.run(["bash", str(ROOT / "examples" / "wikisum" / "five_best.sh"),
                           str(tmp_path), str(tmp_path)], env=env, text=True,
                          capture_output=True)
    assert proc.returncode == 1 and proc.stderr.strip() == (
        f"five_best.sh: error: no {tmp_path}/checkpoint.best_*.pt (train with "
        f"--keep-best-checkpoints 5)")
