"""The scoring part of the ParsingSum recipes' decode step (examples/mds_common/decode.sh, shared
by examples/multi_news and examples/wcep), through the real script on a fairseq-generate log
written here (decode.sh keeps an existing generate.log, so no model is trained): hypotheses in
example order, '<unk>' -> 'UNK' and '<'/'>' -> ' ' on both sides, then `fairseq-hier-rouge
-zs --also-rouge-score` (rouge.txt) and `fairseq-hier-rouge -zs -e '<nosplit>'` (rouge_whole.txt).
The printed scores must equal the written files re-scored (tests/rouge_oracle.py): ROUGE-1.5.5
with the recipe's flags and rouge-score's own RougeScorer.
"""

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
    checkpoint = work / "checkpoints" / "liu_ht" / "checkpoint_best.pt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"")  # decode.sh checks that it exists; generation is skipped
    out_dir = work / "decode" / "test" / "liu_ht"
    out_dir.mkdir(parents=True)
    lines = []
    for i, text in HYPS.items():
        lines += [f"S-{i}\tsource", f"H-{i}\t-0.5\t{text}", f"P-{i}\t-0.1 -0.9"]
    lines.append("Generate test with beam=5: BLEU4 = 0.00")  # the closing line of a whole log
    (out_dir / "generate.log").write_text("\n".join(lines) + "\n")
    log = run_recipe(ROOT / "examples" / "mds_common" / "decode.sh", "liu_ht",
                     env={"WORK": str(work)})
    written = (out_dir / "test.hyp").read_text().splitlines()
    assert written == [HYPS[0], "a farmer visited the UNK garden . prices rose .", ""]
    assert (out_dir / "test.ref").read_text().splitlines()[1].endswith("prices rose   5 % .")
    split = (out_dir / "rouge.txt").read_text()
    assert_rescored(split, out_dir / "test.ref", out_dir / "test.hyp")
    whole = (out_dir / "rouge_whole.txt").read_text()
    assert_rescored(whole, out_dir / "test.ref", out_dir / "test.hyp", "<nosplit>",
                    rouge_score=False)
    assert "rouge-score" not in whole and "a different scorer from ROUGE-1.5.5" in split
    assert "1 empty summary(ies) scored 0 on every metric (-zs), first at line 3" in log
    # the same ROUGE-1/2, a different ROUGE-L: summary-level over sentences vs whole summaries
    assert parse_report(split)["rouge-1"] == parse_report(whole)["rouge-1"]
    assert parse_report(split)["rouge-l"]["f"] != parse_report(whole)["rouge-l"]["f"]
    assert f"decode.sh: {out_dir}/rouge.txt, {out_dir}/rouge_whole.txt" in log
