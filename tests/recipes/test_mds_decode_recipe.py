"""The ParsingSum recipes (examples/mds_common, shared by examples/multi_news and examples/wcep):
their score step, fairseq-hier-score --protocol parsingsum, on a run folder as fairseq-hier-decode
leaves it (SUBSET.hyp.raw and SUBSET.decode.json written here, so no model is trained):
'<unk>' -> 'UNK' and '<'/'>' -> ' ' on both sides, then ROUGE-1.5.5 -zs --also-rouge-score
(test.rouge.txt) and -zs -e '<nosplit>' (test.rouge_whole.txt); table.py reads them there. And
the recipe's defaults per system, through train.sh and decode.sh with fairseq-train and the
run-folder commands replaced by recorders of their arguments.
The printed scores must equal the written files re-scored (tests/support/rouge_oracle.py): ROUGE-1.5.5
with the recipe's flags and rouge-score's own RougeScorer.
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, ROOT, run_cli, run_recipe
from rouge_oracle import assert_rescored

from fairseq_hier.scoring.rouge import parse_report

REFS = ["the mayor opened the old market on monday . it was busy .",
        "a local farmer visited a small garden near the river . prices rose > 5 % .",
        "two students praised the school 's annual fair ."]
# in example order; 2: an empty hypothesis, scored 0 and kept (-zs)
HYPS = ["the mayor opened a market . it was busy on monday .",
        "a farmer visited the <unk> garden . prices rose .", ""]


def test_score_step_scores_equal_the_written_files_rescored(tmp_path):
    work = tmp_path / "work"
    (work / "parsed").mkdir(parents=True)
    (work / "parsed" / "test.tgt.tok").write_text("\n".join(REFS) + "\n")
    out_dir = work / "runs" / "liu_ht"  # the run folder
    out_dir.mkdir(parents=True)
    (out_dir / "test.hyp.raw").write_text("\n".join(HYPS) + "\n")
    (out_dir / "test.decode.json").write_text(json.dumps({
        "data": str(work / "data-bin"), "subset": "test", "task": "hierarchical_summarization",
        "references": str(work / "parsed" / "test.tgt.tok"), "multi_references": None,
        "lines": "H", "command": ["fairseq-generate"]}))
    log = run_cli("fairseq-hier-score", out_dir, "--protocol", "parsingsum").stdout
    written = (out_dir / "test.hyp").read_text().splitlines()
    assert written == [HYPS[0], "a farmer visited the UNK garden . prices rose .", ""]
    assert (out_dir / "test.ref").read_text().splitlines()[1].endswith("prices rose   5 % .")
    split = (out_dir / "test.rouge.txt").read_text()
    assert_rescored(split, out_dir / "test.ref", out_dir / "test.hyp")
    whole = (out_dir / "test.rouge_whole.txt").read_text()
    assert_rescored(whole, out_dir / "test.ref", out_dir / "test.hyp", "<nosplit>",
                    rouge_score=False)
    assert "rouge-score" not in whole and "a different scorer from ROUGE-1.5.5" in split
    assert f"{out_dir / 'test.rouge.txt'} (protocol parsingsum)" in log
    assert f"{out_dir / 'test.rouge_whole.txt'} (protocol parsingsum)" in log
    # the same ROUGE-1/2, a different ROUGE-L: summary-level over sentences vs whole summaries
    assert parse_report(split)["rouge-1"] == parse_report(whole)["rouge-1"]
    assert parse_report(split)["rouge-l"]["f"] != parse_report(whole)["rouge-l"]["f"]
    # table.py: the run folders of WORK/runs, R-1 from the whole-summary report, R-Lsum
    # from the sentence-split one; a run folder not decoded yet is listed as such
    (work / "runs" / "transformer").mkdir()
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
"""


def recipe_env(tmp_path, dataset):
    """The dataset run.sh's exports, fairseq-train and the run-folder commands replaced by
    recorders."""
    fake = tmp_path / "fake"
    fake.mkdir()
    for name in ("fairseq-train", "fairseq-hier-decode", "fairseq-hier-score"):
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


def words(args, option):
    """The shell words of ``--option=WORDS``."""
    prefix = f"{option}="
    return shlex.split(next(a for a in args if a.startswith(prefix))[len(prefix):])


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
    run_recipe(ROOT / "examples" / "mds_common" / "decode.sh", system,
               env=dict(env, WORK=str(work)))
    decode = args_of(env, "fairseq-hier-decode")
    assert decode[0] == str(work / "runs" / system)
    assert value(decode, "--references") == str(work / "parsed" / "test.tgt.tok")
    assert decode[decode.index("--") + 1:] == ["--post-process", "sentencepiece"]
    assert args_of(env, "fairseq-hier-score")[-2:] == ["--protocol", "parsingsum"]
    generate, task = words(decode, "--generation"), words(decode, "--task-args")
    start = generate.index("--beam")
    if flat:
        assert generate[start: start + len(FABBRI)] == FABBRI
        assert value(task, "--max-source-positions") == "500"
    else:
        assert generate[start: start + 12] == [
            "--beam", "5", "--min-len", "200", "--max-len-a", "0", "--max-len-b", "300",
            "--length-penalty-form", "wu", "--lenpen", "0.4"]
        assert "--coverage-penalty" not in generate and "--no-repeat-ngram-size" not in generate
