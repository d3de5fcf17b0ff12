"""The WikiSum recipe end to end on tiny shards written in hiersumm's exact layout:
WIKI.{train,valid,test}.N.pt lists of dicts (src / tgt / tgt_str), ids from the real
spm9998_3.model when ../shared/wikisum has it, else from a small model trained here with the same
special pieces. prepare.sh -> train_pht.sh -> decode.sh (fairseq CLIs, fairseq-hier-decode and
fairseq-hier-score --protocol hiersumm). The scores the recipe prints are checked against its
written files re-scored (tests/support/rouge_oracle.py): ROUGE-1.5.5 with the recipe's flags, and
rouge-score's own RougeScorer for --also-rouge-score."""

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import BIN, ROOT, SMALL_MODEL, run_cli
from rouge_oracle import assert_rescored
from wikisum_samples import NOUNS, SPECIALS, sentence, spm_model, write_shards

RECIPE = ROOT / "examples" / "wikisum"


def printed_f1(text):
    """The ROUGE-1.5.5 F1 (x100, as printed) per metric of fairseq-hier-score's output."""
    return dict(re.findall(r"^  (ROUGE-[12L]) +(\d+\.\d\d) \[", text, re.M))


def report_f1(report):
    """The same from a written ROUGE-1.5.5 report."""
    from fairseq_hier.scoring.rouge import parse_report

    return {k.upper(): f"{100 * v['f']:.2f}" for k, v in parse_report(report).items()}


def decoded_folder(folder, hyps, references):
    """A run folder as fairseq-hier-decode leaves it (SUBSET.hyp.raw, SUBSET.decode.json), for
    the score step alone."""
    folder.mkdir(parents=True)
    (folder / "test.hyp.raw").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    (folder / "test.decode.json").write_text(json.dumps({
        "data": str(folder), "subset": "test", "task": "hierarchical_summarization",
        "references": str(references), "multi_references": None, "lines": "H",
        "command": ["fairseq-generate"]}))
    return folder


def run(script, *args):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", PYTHONWARNINGS="ignore",
               OMP_NUM_THREADS="1", WORKERS="1")
    proc = subprocess.run(["bash", str(RECIPE / script), *map(str, args)], cwd=ROOT, env=env,
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, proc.stdout[-4000:]
    return proc.stdout


def test_converter_title_placement_and_counts(tmp_path):
    from fairseq_hier.preparation.wikisum import Converter

    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"test": [3]})
    conv = Converter(str(model))
    out = tmp_path / "raw"
    out.mkdir()
    assert conv.convert_split(prefix, "test", out) == 3
    src = (out / "test.src").read_text().splitlines()
    shard = torch.load(f"{prefix}.test.0.pt")
    sp_title = shard[0]["src"][0][: shard[0]["src"][0].index(conv.eot)]
    segments = src[0].split(" <P> ")
    assert segments[0].split() == conv.pieces(sp_title)  # title first, once
    assert len(segments) == 1 + len(shard[0]["src"])
    assert "<T>" not in src[0]  # every "title <T>" prefix stripped
    assert conv.counts["title prefixes stripped from paragraphs"] == sum(len(e["src"]) for e in shard)
    tgt = (out / "test.tgt").read_text().splitlines()[0].split()
    assert tgt[0] != "<S>" and tgt[-1] != "</S>" and "<Q>" in tgt
    ref = (out / "test.ref").read_text().splitlines()[0]
    assert ref.count(" <q> ") == 1 and "<t>" not in ref and ref == ref.lower()


def test_recipe_end_to_end(tmp_path):
    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"train": [6, 6], "valid": [4], "test": [4]})
    work = tmp_path / "work"
    log = run("prepare.sh", prefix, model, work)
    assert re.search(r"\[train\] 12 examples written from 2 shard\(s\)", log)
    ck = work / "runs" / "pht"  # the run folder: checkpoints, train.log, decodes, scores
    train_log = run("train_pht.sh", work / "data-bin", ck, *SMALL_MODEL,
                    "--max-update", "3", "--batch-size", "4", "--warmup-updates", "2",
                    "--save-interval-updates", "3", "--num-workers", "0", "--no-progress-bar")
    assert "num_updates 3" in train_log and "source layout: hierarchical" in train_log
    assert (ck / "train.log").read_text() == train_log
    assert json.loads((ck / "run.json").read_text()) == {
        "name": "pht", "arch": "pht", "task": "hierarchical_summarization", "metric": "rouge"}
    out = run("decode.sh", work, ck / "checkpoint_last.pt", "--max-len-b", "15",
              "--num-workers", "0")
    saved = (ck / "test.rouge.txt").read_text()
    assert re.search(r"ROUGE-1 Average_F: \d\.\d+ \(95%-conf\.int\. \d\.\d+ - \d\.\d+\)", saved)
    assert printed_f1(out) == report_f1(saved) != {}  # printed == kept
    hyps = (ck / "test.hyp").read_text().splitlines()
    assert len(hyps) == 4 and (ck / "generate-test.txt").read_text().count("\nH-") == 4
    assert (ck / "test.ref").read_text() == (work / "raw" / "test.ref").read_text()
    decoded = json.loads((ck / "test.decode.json").read_text())
    assert decoded["command"][-6:] == ["--post-process", "sentencepiece", "--max-len-b", "15",
                                       "--num-workers", "0"]
    assert_rescored(saved, work / "raw" / "test.ref", ck / "test.hyp", "<q>")
    # the run folder as fairseq-hier-report reads it, no --reference: ROUGE of the kept report
    # (the -e '<q>' split aside, the same files), the training curve from train.log
    report = run_cli("fairseq-hier-report", ck, "--heatmaps", "0", "--output-dir",
                     work / "report").stdout
    md = (work / "report" / "report.md").read_text()
    assert "| pht | pht | " in md and "test.rouge.txt: ROUGE-1/2/L F1 x100 " in md, report
    assert "against " + str(ck / "test.ref") in md and "curve-train-loss" in md
    # prepare.sh recorded the preprocessing and decode.sh's options: the checkpoint summarises
    # raw text (lowercased, the published sentencepiece model, pieces joined back into words)
    from fairseq_hier.inference import HierSummarizer

    summarizer = HierSummarizer.from_pretrained(str(ck), "checkpoint_last.pt", cpu=True,
                                                max_len_b=15)
    assert summarizer.record["generation"][-4:] == ["--block-previous-tokens", "2",
                                                    "--block-previous-exceptions", "▁,"]
    assert summarizer.task.cfg.block_previous_tokens == 2
    line, = summarizer.encode([{"title": "The City", "documents": ["The River"]}])[0]
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    assert line == " ".join(sp.encode("the city", out_type=str) + ["<P>"]
                            + sp.encode("the river", out_type=str))
    summary, = summarizer.summarize([{"title": "The City", "documents": ["The River\nA park"]}])
    assert "▁" not in summary


# ----------------------------------------------------------------------------------------------
# Scoring: references and hypotheses normalised alike, <unk> as hiersumm writes it, empty
# hypotheses scored 0, and the oracle check (gold targets fed back as hypotheses score ~100).

def test_reference_splits_sentences_of_both_published_forms():
    from fairseq_hier.preparation.wikisum import Converter

    # the format note's form: <t> s1 </t> <t> s2 </t> (before the fix: one sentence)
    assert Converter.reference("<t> The river was built . </t> <t> it is  old . </t>") == \
        "the river was built . <q> it is old ."
    # the target's sentence piece, also what detokenised hypotheses carry (glued or not)
    assert Converter.reference("the river was built .<Q> it is old . <Q>") == \
        "the river was built . <q> it is old ."
    assert Converter.reference("<t> a b . </t> <Q> <t> c d . </t>") == "a b . <q> c d ."
    assert Converter.reference(" <t> </t> ") == ""


def test_hiersumm_protocol_writes_unk_as_hiersumm_does():
    from fairseq_hier.runs.protocols import hiersumm_hypothesis

    assert hiersumm_hypothesis("the river <unk> was built .<Q> caf<unk> is here .\n") == \
        "the river UNK was built . <q> cafUNK is here ."
    assert hiersumm_hypothesis("\n") == ""


ORACLE_TEST_SIZE = 30
SNOWMAN = "\u2603"  # not in spm9998_3.model (nor in the small model): encoded as <unk>


def write_oracle_shards(folder, model_path):
    """A test split in the published layout: most gold texts in the <t> s </t> form, every third
    in the <Q> form; example 1 holds a character the model encodes as <unk>."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    ident = {p: sp.piece_to_id(p) for p in SPECIALS}
    rng = random.Random(2)
    examples = []
    for k in range(ORACLE_TEST_SIZE):
        title = sp.encode(f"the {rng.choice(NOUNS)} of {rng.choice(NOUNS)}")
        paragraphs = [title + [ident["<T>"]] + sp.encode(sentence(rng)) for _ in range(2)]
        sents = [sentence(rng) for _ in range(2 + k % 2)]
        if k == 1:
            sents[0] = f"the river {SNOWMAN} was built in the north in 1850 ."
        tgt = [ident["<S>"]]
        for s in sents:
            tgt += sp.encode(s) + [ident["<Q>"]]
        tgt[-1] = ident["</S>"]
        if k == 1:
            assert sp.unk_id() in tgt  # a piece that decodes to <unk>
        tgt_str = (" <Q> ".join(sents) if k % 3 == 0
                   else " ".join(f"<t> {s} </t>" for s in sents))
        examples.append({"src": paragraphs, "tgt": tgt, "tgt_str": tgt_str})
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(examples, folder / "WIKI.test.0.pt")
    return folder / "WIKI"


def gold_hypotheses(raw, empty=()):
    """Hypotheses equal to the gold targets, as fairseq-generate prints them: test.tgt mapped
    through the data-bin dictionary (the model's <unk> piece -> fairseq's <unk>) and printed
    with --post-process sentencepiece, in example order (SUBSET.hyp.raw)."""
    from fairseq.data import Dictionary

    d = Dictionary.load(str(raw / "dict.txt"))
    hyps = []
    for i, target in enumerate((raw / "test.tgt").read_text(encoding="utf-8").splitlines()):
        tokens = d.encode_line(target, add_if_not_exist=False, append_eos=False)
        hyps.append("" if i in empty else d.string(tokens, "sentencepiece"))
    return hyps


def to_raw(*args):
    proc = subprocess.run([str(BIN / "fairseq-hier-to-raw"), "--format", "wikisum",
                           *map(str, args)], text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    return proc


def test_oracle_gold_targets_score_100(tmp_path):
    from fairseq_hier.scoring.rouge import parse_report, parse_rouge_score

    model = spm_model(tmp_path)
    prefix = write_oracle_shards(tmp_path / "data", model)
    raw = tmp_path / "raw"
    proc = to_raw("--input-prefix", prefix, "--spm", model, "--output-dir", raw, "--splits", "test")
    assert proc.returncode == 0, proc.stdout
    refs = (raw / "test.ref").read_text(encoding="utf-8").splitlines()
    assert len(refs) == ORACLE_TEST_SIZE
    assert [r.count(" <q> ") for r in refs] == [1 + k % 2 for k in range(ORACLE_TEST_SIZE)]
    assert "<unk>" in (raw / "test.tgt").read_text(encoding="utf-8").splitlines()[1].split()

    oracle_dir = decoded_folder(tmp_path / "oracle", gold_hypotheses(raw), raw / "test.ref")
    out = run_cli("fairseq-hier-score", oracle_dir, "--protocol", "hiersumm").stdout
    hyps = (oracle_dir / "test.hyp").read_text(encoding="utf-8").splitlines()
    assert (oracle_dir / "test.ref").read_text() == (raw / "test.ref").read_text()
    assert hyps[1].startswith("the river UNK was built in the north in 1850 . <q> ")
    assert "no sentence break" not in out and "contain markup" not in out  # nothing cut/unsplit
    saved = (oracle_dir / "test.rouge.txt").read_text()
    oracle = parse_report(saved)
    assert printed_f1(out) == report_f1(saved)
    for key in ("rouge-1", "rouge-2", "rouge-l"):
        assert oracle[key]["f"] >= 0.995, (key, oracle[key])
    assert_rescored(saved, raw / "test.ref", oracle_dir / "test.hyp", "<q>")
    assert parse_rouge_score(saved)["rougeLsum"] >= 0.995
    # table.py: ROUGE-1.5.5's F [interval], then rouge-score's F1, both x100, of every run folder
    # WORK/runs/RUN holding test.rouge.txt (an unscored one is left out)
    (tmp_path / "tables" / "runs" / "oracle").mkdir(parents=True)
    (tmp_path / "tables" / "runs" / "unscored").mkdir()
    (tmp_path / "tables" / "runs" / "oracle" / "test.rouge.txt").write_text(saved)
    table = subprocess.run([sys.executable, str(RECIPE / "table.py"), str(tmp_path / "tables")],
                           text=True, capture_output=True, check=True).stdout.splitlines()
    assert table[1].split("|")[1].split() == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    official, other = table[2].split("|")
    assert len(table) == 3
    assert official.split()[:2] == ["oracle", f"{100 * oracle['rouge-1']['f']:.2f}"]
    assert other.split() == [f"{100 * v:.2f}" for v in parse_rouge_score(saved).values()]

    # an empty hypothesis counts 0 (dropping it would keep the oracle's score)
    empty_dir = decoded_folder(tmp_path / "empty", gold_hypotheses(raw, empty={0}),
                               raw / "test.ref")
    run_cli("fairseq-hier-score", empty_dir, "--protocol", "hiersumm")
    hyps = (empty_dir / "test.hyp").read_text(encoding="utf-8").splitlines()
    assert len(hyps) == ORACLE_TEST_SIZE and hyps[0] == ""
    saved = (empty_dir / "test.rouge.txt").read_text()
    scores = parse_report(saved)
    assert_rescored(saved, raw / "test.ref", empty_dir / "test.hyp", "<q>")
    for key in ("rouge-1", "rouge-2", "rouge-l"):  # example 0 scored 1 in the oracle
        assert scores[key]["f"] == pytest.approx(oracle[key]["f"] - 1 / ORACLE_TEST_SIZE,
                                                 abs=0.004), key


def test_converter_reports_every_malformed_record(tmp_path):
    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"test": [1]})
    good = torch.load(f"{prefix}.test.0.pt")[0]
    bad = [
        good,
        dict(good, src=[i for p in good["src"] for i in p]),  # flat src
        dict(good, src=torch.tensor([[5, 6, 7]])),  # a padded tensor of paragraphs
        {k: v for k, v in good.items() if k != "tgt"},
        {k: v for k, v in good.items() if k != "tgt_str"},
        dict(good, src=[["the", "river"]]),  # pieces, not ids
        dict(good, src=[[99999]]),  # outside the model
        "not a record",
    ]
    shards = [tmp_path / "data" / f"WIKI.test.{n}.pt" for n in range(3)]
    torch.save(bad, shards[0])
    torch.save([], shards[1])
    shards[2].write_bytes(b"this is not a torch file")
    out_dir = tmp_path / "raw"
    proc = to_raw("--input-prefix", prefix, "--spm", model, "--output-dir", out_dir,
                  "--splits", "test")
    out = proc.stdout
    assert proc.returncode == 1 and "Traceback" not in out
    import sentencepiece as spm

    size = spm.SentencePieceProcessor(model_file=str(model)).get_piece_size()
    s0 = shards[0]
    expected = [
        f"{s0} example 1: 'src' is a flat list of ids; hiersumm's ranked shards hold a list of "
        f"paragraphs, each a list of ids",
        f"{s0} example 2: 'src' is a Tensor of shape (1, 3); expected a list of paragraphs",
        f"{s0} example 3: lacks the key(s) ['tgt'] (has ['src', 'tgt_str'])",
        f"{s0} example 4: lacks the key(s) ['tgt_str'] (has ['src', 'tgt'])",
        f"{s0} example 5: 'src' paragraph 0 holds a str ('the'); expected ids (ints)",
        f"{s0} example 6: 'src' paragraph 0 holds id 99999, outside the sentencepiece model's "
        f"{size} pieces (wrong --spm?)",
        f"{s0} example 7: is a str; expected a dict with keys ['src', 'tgt', 'tgt_str']",
        f"{shards[1]}: is an empty shard (no example)",
        f"{shards[2]}: not a shard readable with torch.load(weights_only=True): ",
    ]
    errors = [line.split(" | ERROR | fairseq_hier.wikisum_to_raw | ")[1]
              for line in out.splitlines() if " | ERROR | " in line]
    assert len(errors) == len(expected)
    for line, want in zip(errors, expected):
        assert line.startswith(want), (line, want)
    assert out.strip().splitlines()[-1] == (
        f"fairseq-hier-to-raw: error: 9 malformed shard(s)/record(s) in the test split "
        f"of {prefix} (listed above); no test files written")
    assert sorted(os.listdir(out_dir)) == []  # nothing half-written


def test_converter_accepts_tensor_ids(tmp_path):
    from fairseq_hier.preparation.wikisum import Converter

    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"test": [2]})
    examples = torch.load(f"{prefix}.test.0.pt")
    torch.save([dict(e, src=[torch.tensor(p) for p in e["src"]], tgt=torch.tensor(e["tgt"]))
                for e in examples], f"{prefix}.valid.0.pt")
    conv = Converter(str(model))
    out = tmp_path / "raw"
    out.mkdir()
    assert conv.convert_split(prefix, "test", out) == conv.convert_split(prefix, "valid", out) == 2
    for ext in ("src", "tgt", "ref"):
        assert (out / f"test.{ext}").read_text() == (out / f"valid.{ext}").read_text()


def test_hypotheses_in_example_order_with_one_line_errors(tmp_path):
    """The decode step's reading of a fairseq-generate log (read_hypotheses): example order, and
    one line naming the log and line when an id is beyond the references, missing or doubled."""
    from fairseq_hier.analysis.generate_log import read_hypotheses
    from fairseq_hier.errors import HierError

    footer = "Generate test with beam=5: BLEU4 = 0.00"  # the closing line of a whole log

    def run_hyps(lines, expected=None):
        log = tmp_path / "generate.log"
        log.write_text("".join(line + "\n" for line in [*lines, footer]), encoding="utf-8")
        try:
            return read_hypotheses(str(log), expected), log
        except HierError as e:
            return str(e), log

    hyps, _ = run_hyps(["S-1\tx", "H-1\t-0.2\tb c", "H-0\t-0.1\ta", "H-2\t-0.3\t"], 3)
    assert hyps == ["a", "b c", ""]  # example order; the empty hypothesis kept
    err, log = run_hyps(["H-0\t-0.1\ta", "H-3\t-0.3\td"], 2)
    assert err.startswith(f"{log} line 2: hypothesis for example 3, but ")
    err, log = run_hyps(["H-0\t-0.1\ta", "H-2\t-0.3\td"], 3)
    assert err == (f"{log}: 1 of 3 examples have no hypothesis (first ids: [1]); was a batch "
                   f"dropped or filtered?")
    err, log = run_hyps(["H-0\t-0.1\ta", "H-0\t-0.3\tb"])
    assert err == f"{log} line 2: a second hypothesis for example 0 (first at line 1; use --nbest 1)"
    err, log = run_hyps(["no hypothesis here"])
    assert err.startswith(f"{log} holds no hypothesis line")


def test_converter_rejects_a_separator_outside_the_model(tmp_path):
    from fairseq_hier.preparation.wikisum import Converter

    model = spm_model(tmp_path)
    # piece_to_id would give <unk>'s id, and every <unk> inside paragraphs would be removed
    with pytest.raises(ValueError, match=r"--paragraph-separator '<SEP>' is not a piece of "):
        Converter(str(model), separator="<SEP>")


def test_title_in_every_paragraph_as_the_shards_have_it(tmp_path):
    """--title-placement every: each paragraph keeps 'title <T>' (the authors' training input);
    the source line has an empty title segment, and the task serves those paragraphs as they
    are (no paragraph lost, none merged with a title)."""
    from conftest import preprocess

    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"train": [4], "valid": [2], "test": [2]})
    out = tmp_path / "raw"
    proc = to_raw("--input-prefix", prefix, "--spm", model, "--output-dir", out,
                  "--title-placement", "every")
    assert proc.returncode == 0, proc.stdout
    assert "paragraphs keeping the shards' title prefix" in proc.stdout
    shard = torch.load(f"{prefix}.train.0.pt")
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model))
    line = (out / "train.src").read_text().splitlines()[0]
    assert line.startswith("<P> ")  # empty title segment
    paragraphs = line[len("<P> "):].split(" <P> ")
    assert [p.split() for p in paragraphs] == [[sp.id_to_piece(i) for i in para]
                                               for para in shard[0]["src"]]
    assert all("<T>" in p.split() for p in paragraphs)
    bin_dir = preprocess(out, tmp_path / "bin")
    from fairseq_hier.tasks.hierarchical_summarization import (
        HierarchicalSummarizationConfig,
        HierarchicalSummarizationTask,
    )

    task = HierarchicalSummarizationTask.setup_task(HierarchicalSummarizationConfig(data=str(bin_dir)))
    task.load_dataset("train")
    rows = task.datasets["train"][0]["source"]  # P x L
    d = task.source_dictionary
    served = [d.string(r[r.ne(d.pad())]).split() for r in rows]
    assert served == [p.split() for p in paragraphs]
