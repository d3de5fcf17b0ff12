"""The scoring part of the ParsingSum recipes' decode step (examples/mds_common/decode.sh, shared
by examples/multi_news and examples/wcep), through the real script on a fairseq-generate log
written here (decode.sh keeps an existing generate-test.txt, so no model is trained): hypotheses
in example order, '<unk>' -> 'UNK' and '<'/'>' -> ' ' on both sides, then `fairseq-hier-rouge
-zs --also-rouge-score` (test.rouge.txt) and `fairseq-hier-rouge -zs -e '<nosplit>'`
(test.rouge_whole.txt), all in the run folder WORK/checkpoints/RUN beside the checkpoint; table.py
reads them there. And the recipe's defaults per system, through train.sh and decode.sh with
fairseq-train / fairseq-generate replaced by recorders of their arguments.
The printed scores must equal the written files re-scored (tests/support/rouge_oracle.py): ROUGE-1.5.5
with the recipe's flags and rouge-score's own RougeScorer.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, ROOT, run_recipe
from rouge_oracle import assert_rescored

from fairseq_hier.scoring.rouge import parse_report

REFS = ["the mayor opened the old market on monday . it was busy .",
        "a local farmer visited a small garden near the river . prices rose > 5 % .",
        "two students praised the school 's annual fair ."]
# in fairseq-generate's batch order; 2: an empty hypothesis, scored 0 and kept (-zs)
HYPS = {1: "a farmer visited the <unk> garden . prices rose .",
        0: "the mayor opened a market . it was busy on monday .",
        2: ""}


def test_decode_step_scores_equal_the_written_files_rescored(tmp_path):
    work = tmp_path / "work"
    (work / "parsed").mkdir(parents=True)
    (work / "parsed" / "test.tgt.tok").write_text("\n".join(REFS) + "\n")
    out_dir = work / "checkpoints" / "liu_ht"  # the run folder
    out_dir.mkdir(parents=True)
    (out_dir / "checkpoint_best.pt").write_bytes(b"")  # decode.sh checks that it exists
    lines = []
    for i, text in HYPS.items():
        lines += [f"S-{i}\tsource", f"H-{i}\t-0.5\t{text}", f"P-{i}\t-0.1 -0.9"]
    lines.append("Generate test with beam=5: BLEU4 = 0.00")  # the closing line of a whole log
    (out_dir / "generate-test.txt").write_text("\n".join(lines) + "\n")  # generation skipped
    log = run_recipe(ROOT / "examples" / "mds_common" / "decode.sh", "liu_ht",
                     env={"WORK": str(work)})
    written = (out_dir / "test.hyp").read_text().splitlines()
    assert written == [HYPS[0], "a farmer visited the UNK garden . prices rose .", ""]
    assert (out_dir / "test.ref").read_text().splitlines()[1].endswith("prices rose   5 % .")
    split = (out_dir / "test.rouge.txt").read_text()
    assert_rescored(split, out_dir / "test.ref", out_dir / "test.hyp")
    whole = (out_dir / "test.rouge_whole.txt").read_text()
    assert_rescored(whole, out_dir / "test.ref", out_dir / "test.hyp", "<nosplit>",
                    rouge_score=False)
    assert "rouge-score" not in whole and "a different scorer from ROUGE-1.5.5" in split
    assert "1 empty summary(ies) scored 0 on every metric (-zs), first at line 3" in log
    # the same ROUGE-1/2, a different ROUGE-L: summary-level over sentences vs whole summaries
    assert parse_report(split)["rouge-1"] == parse_report(whole)["rouge-1"]
    assert parse_report(split)["rouge-l"]["f"] != parse_report(whole)["rouge-l"]["f"]
    assert f"decode.sh: {out_dir}/test.rouge.txt, {out_dir}/test.rouge_whole.txt" in log
    assert json.loads((out_dir / "run.json").read_text()) == {
        "name": "liu_ht", "arch": "liu_ht", "task": "hierarchical_summarization",
        "metric": "rouge"}
    # table.py: the run folders of WORK/checkpoints, R-1 from the whole-summary report, R-Lsum
    # from the sentence-split one; a run folder not decoded yet is listed as such
    (work / "checkpoints" / "transformer").mkdir()
    table = subprocess.run([sys.executable, str(ROOT / "examples" / "mds_common" / "table.py"),
                            str(work)], text=True, capture_output=True, check=True).stdout
    rows = table.splitlines()
    whole_f, split_f = parse_report(whole), parse_report(split)
    assert rows[1].startswith("transformer") and "(not scored on test yet: decode.sh)" in rows[1]
    assert rows[2].split()[:2] == ["liu_ht", f"{100 * whole_f['rouge-1']['f']:.2f}"]
    assert rows[2].split()[-1] == f"{100 * split_f['rouge-l']['f']:.2f}"


# ------------------------------------------------------------------ the recipe's defaults
FAKE = """#!/usr/bin/env bash
# records its arguments, one per line, then stands in for the real command
printf '%s\\n' "$@" > "$FAKE_LOG/$(basename "$0").args"
if [[ "$(basename "$0")" == fairseq-generate ]]; then
  printf 'S-0\\tsource\\nH-0\\t-0.5\\tthe mayor opened a market .\\nP-0\\t-0.5\\n'
  echo 'Generate test with beam=5: BLEU4 = 0.00'
fi
"""


def recipe_env(tmp_path, dataset):
    """The dataset run.sh's exports, fairseq-train / -generate replaced by recorders."""
    fake = tmp_path / "fake"
    fake.mkdir()
    for name in ("fairseq-train", "fairseq-generate"):
        (fake / name).write_text(FAKE)
        (fake / name).chmod(0o755)
    exports = subprocess.run(
        ["bash", "-c", f"eval \"$(grep '^export' {ROOT}/examples/{dataset}/run.sh)\"; "
                       "env -0"], capture_output=True, text=True, check=True).stdout
    env = dict(kv.split("=", 1) for kv in exports.split("\0") if "=" in kv)
    keep = ("MAX_PARAGRAPHS", "MAX_PARAGRAPH_TOKENS", "FLAT_POSITIONS", "SETTINGS_DATASET")
    env = {k: env[k] for k in keep}
    return dict(env, FAKE_LOG=str(fake), PATH=f"{fake}:{BIN}:{os.environ['PATH']}")


def args_of(env, command):
    return (Path(env["FAKE_LOG"]) / f"{command}.args").read_text().splitlines()


def value(args, flag):
    return args[args.index(flag) + 1]


FABBRI = ["--beam", "5", "--min-len", "200", "--max-len-a", "0", "--max-len-b", "300",
          "--length-penalty-form", "wu", "--lenpen", "0.9", "--coverage-penalty", "summary",
          "--coverage-beta", "5", "--no-repeat-ngram-size", "3"]


@pytest.mark.parametrize("system", ["transformer", "parsingsum_ft", "liu_ht", "parsingsum_ht"])
def test_multi_news_defaults_train_and_decode(tmp_path, system):
    """Flat systems: 003's FT as Fabbri et al.'s scripts (transformer_copy / parsingsum_ft with
    copy attention, no label smoothing, whole documents cut to 500 pieces; beam 5, 200-300
    pieces, Wu 0.9, summary coverage 5, trigram blocking). Hierarchical: Liu & Lapata's code
    (label smoothing 0.1; beam 5, Wu 0.4, no coverage, no blocking)."""
    env = recipe_env(tmp_path, "multi_news")
    work = tmp_path / "work"
    (work / "parsed").mkdir(parents=True)
    (work / "parsed" / "test.tgt.tok").write_text("the mayor opened the market .\n")
    run_recipe(ROOT / "examples" / "mds_common" / "train.sh", system,
               env=dict(env, WORK=str(work)))
    train = args_of(env, "fairseq-train")
    flat = system in ("transformer", "parsingsum_ft")
    assert value(train, "--arch") == {"transformer": "transformer_copy"}.get(system, system)
    assert value(train, "--label-smoothing") == ("0" if flat else "0.1")
    if flat:
        assert [value(train, f) for f in ("--max-source-positions", "--max-paragraph-tokens")] \
            == ["500", "500"]
    else:
        assert [value(train, f) for f in ("--max-paragraphs", "--max-paragraph-tokens")] == \
            ["10", "160"]
    assert "--copy-attention" not in train and "--no-copy-attention" not in train  # arch default
    (work / "checkpoints" / system / "checkpoint_best.pt").write_bytes(b"")
    run_recipe(ROOT / "examples" / "mds_common" / "decode.sh", system,
               env=dict(env, WORK=str(work)))
    generate = args_of(env, "fairseq-generate")
    start = generate.index("--beam")
    if flat:
        assert generate[start: start + len(FABBRI)] == FABBRI
        assert value(generate, "--max-source-positions") == "500"
    else:
        assert generate[start: start + 12] == [
            "--beam", "5", "--min-len", "200", "--max-len-a", "0", "--max-len-b", "300",
            "--length-penalty-form", "wu", "--lenpen", "0.4"]
        assert "--coverage-penalty" not in generate and "--no-repeat-ngram-size" not in generate
