"""The scoring part of the ParsingSum recipes' decode step (examples/mds_common/decode.sh, shared
by examples/multi_news and examples/wcep), through the real script on a fairseq-generate log
written here (decode.sh keeps an existing generate-test.txt, so no model is trained): hypotheses
in example order, '<unk>' -> 'UNK' and '<'/'>' -> ' ' on both sides, then `fairseq-hier-rouge
-zs --also-rouge-score` (test.rouge.txt) and `fairseq-hier-rouge -zs -e '<nosplit>'`
(test.rouge_whole.txt), all in the run folder WORK/checkpoints/RUN beside the checkpoint; table.py
reads them there.
The printed scores must equal the written files re-scored (tests/rouge_oracle.py): ROUGE-1.5.5
with the recipe's flags and rouge-score's own RougeScorer.
"""

import json
import subprocess
import sys

from conftest import ROOT, run_recipe
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
