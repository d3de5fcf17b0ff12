"""Document BLEU and chrF (``fairseq-hier-doc-bleu``) against the sacreBLEU command on the same
documents: tokenised outputs scored as given, each side's post-processing stated, and one paired
test (one meaning of p) shared by ``fairseq-hier-doc-bleu``, ``fairseq-hier-significance bleu``
and ``fairseq-hier-report``. The inputs are written here: fairseq-generate logs (``H-`` lines), a
chunk map and references in the exact layouts the recipes use."""

import json
import re
import subprocess

import pytest
from conftest import BIN, run_cli

# three documents, one tokenised sentence a line (IWSLT/TED practice): reference and system
REF_DOCS = [["the cat sat on the mat .", "it was n't happy , though ."],
            ["we 'll meet at noon .", "bring the \" blue \" file .", "do n't be late !"],
            ["prices rose by 3 % in May .", "analysts had expected less ."]]
HYP_DOCS = [["the cat sat on a mat .", "it was n't happy ."],
            ["we will meet at noon .", "bring the \" blue \" file .", "do not be late !"],
            ["prices rose 3 % in May .", "analysts expected less ."]]
# BPE as fastBPE writes it, undone before scoring
BPE = {"analysts": "analy@@ sts", "happy": "hap@@ py"}


def bpe(sentence):
    return " ".join(BPE.get(w, w) for w in sentence.split())


def write_split(folder, hyp_docs=HYP_DOCS, name="sys"):
    """REF (sentence a line, documents split by an empty line), .docids, a chunk map with one
    sentence per chunk, and a fairseq-generate log whose H- lines are the BPE'd chunks (out of
    order, with a stray </s>, as fairseq-generate may print them)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.en").write_text("\n\n".join("\n".join(d) for d in REF_DOCS) + "\n")
    (folder / "test.docids").write_text("".join(f"talk{i}\n" for i in range(len(REF_DOCS))))
    rows, hyps = [], []
    for d, doc in enumerate(hyp_docs):
        for k, sentence in enumerate(doc):
            rows.append(f"talk{d}\t{k}\t{k}\t{k}\n")
            hyps.append(bpe(sentence))
    hyps[0] += " </s>"
    (folder / "test.chunks").write_text("".join(rows))
    log = folder / f"{name}.txt"
    lines = [f"S-{i}\tx\nH-{i}\t-0.5\t{h}\nP-{i}\t-0.5\n" for i, h in enumerate(hyps)]
    # fairseq-generate closes a complete log with this line
    log.write_text("".join(reversed(lines)) + "Generate test with beam=5: BLEU4 = 0.00\n")
    return log


def sacrebleu_cli(*args):
    proc = subprocess.run([str(BIN / "sacrebleu"), *map(str, args)], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return proc.stdout


def doc_files(folder, docs, name):
    """One document a line, its sentences joined by a space: what sacreBLEU is given."""
    path = folder / name
    path.write_text("".join(" ".join(d) + "\n" for d in docs))
    return path


def summary_of(proc):
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doc_bleu")
    return folder, write_split(folder)


def doc_bleu(folder, *systems, extra=(), check=True):
    return run_cli("fairseq-hier-doc-bleu", *systems, "--chunks", folder / "test.chunks",
                   "--reference", folder / "test.en", "--tgt-lang", "en", *extra, check=check)


def test_tokenised_outputs_equal_the_sacrebleu_command_with_tokenize_none(split):
    folder, log = split
    proc = doc_bleu(folder, f"sys={log}", extra=("--no-detokenize", "--tokenize", "none"))
    summary = summary_of(proc)
    ref = doc_files(folder, REF_DOCS, "ref.docs")
    hyp = doc_files(folder, HYP_DOCS, "hyp.docs")  # BPE removed, </s> dropped: by hand
    bleu = float(sacrebleu_cli(ref, "-i", hyp, "--tokenize", "none", "--force", "-b", "-w", "4"))
    chrf = float(sacrebleu_cli(ref, "-i", hyp, "-m", "chrf", "-b", "-w", "4"))
    result = summary["systems"]["sys"]
    assert result["doc_bleu"] == pytest.approx(bleu, abs=0.01)
    assert result["chrf"] == pytest.approx(chrf, abs=0.01)
    assert summary["signature"].startswith("nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:none")
    assert summary["chrf_signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no")
    assert f"BLEU signature: {summary['signature']}" in proc.stdout
    assert f"chrF signature: {summary['chrf_signature']}" in proc.stdout
    hyp_steps = ("BPE '@@ ' removed; 1 stray <s>/</s> token(s) dropped; not detokenised "
                 "(--no-detokenize): tokens scored as given")
    ref_steps = (f"as given in {folder / 'test.en'} (never altered); a document = its sentences "
                 f"joined by a space")
    assert summary["postprocessing"] == {"hypotheses": {"sys": hyp_steps},
                                         "references": ref_steps}
    assert f"hypotheses (sys): {hyp_steps}" in proc.stdout
    assert f"references: {ref_steps}" in proc.stdout
    assert summary["warnings"] == []


def test_detokenised_hypotheses_against_tokenised_references_are_flagged(split):
    """The default detokenises the hypotheses only: on tokenised references that scores far too
    low, so the command refuses and says how to fix it; --force scores them, with a warning."""
    folder, log = split
    tokenised = summary_of(doc_bleu(folder, f"sys={log}", extra=("--no-detokenize", "--tokenize",
                                                                 "none")))
    ref = folder / "test.en"
    warning = (f"{ref} looks tokenised (100% of its sentences change under detokenisation) but "
               f"the hypotheses were detokenised: score tokenised text on both sides with "
               f"--no-detokenize (and --tokenize none for text tokenised beforehand)")
    refused = doc_bleu(folder, f"sys={log}", extra=("--tokenize", "none"), check=False)
    assert refused.returncode == 1 and refused.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc-bleu: error: {warning}; or --force to score the two sides as they are")
    proc = doc_bleu(folder, f"sys={log}", extra=("--tokenize", "none", "--force"))
    summary = summary_of(proc)
    assert summary["systems"]["sys"]["doc_bleu"] < tokenised["systems"]["sys"]["doc_bleu"] - 5
    assert summary["warnings"] == [warning] and warning in proc.stdout
    assert summary["postprocessing"]["hypotheses"]["sys"].endswith(
        "detokenised (sacremoses MosesDetokenizer, lang en)")


def test_identical_systems_are_not_significant_in_any_command(split, tmp_path):
    """One test, one meaning of p: a system compared with itself gets p = 1 and no mark from
    fairseq-hier-doc-bleu, fairseq-hier-significance bleu and fairseq-hier-report alike (the
    sacreBLEU command's own paired p-value for the same input is 1/(S+1))."""
    folder, log = split  # detokenised against the tokenised references: --force
    proc = doc_bleu(folder, f"A={log}", f"B={log}", extra=("--bootstrap", "200", "--force"))
    summary = summary_of(proc)
    a, b = summary["systems"]["A"], summary["systems"]["B"]
    assert b["p_value"] >= 0.5 and (b["delta"], b["p_value"]) == (0.0, 1.0)
    assert a["p_value"] is None and summary["baseline"] == "A"
    row = next(line for line in proc.stdout.splitlines() if line.startswith("B "))
    assert "*" not in row and re.search(r"\+0\.00 \[\+0\.00, \+0\.00\] +1\.000 ", row)
    # each system's mean and half-width are sacreBLEU's own paired bootstrap's
    docs = folder / "A.docs"
    proc = doc_bleu(folder, f"A={log}", f"B={log}", extra=("--bootstrap", "200", "--force",
                                                           "--output-dir", folder))
    ref_docs = doc_files(folder, REF_DOCS, "ref.docs")
    oracle = json.loads(sacrebleu_cli(ref_docs, "-i", docs, folder / "B.docs", "--paired-bs",
                                      "--paired-bs-n", "200", "-f", "json"))
    for entry, name in zip(oracle, ("A", "B")):
        assert summary_of(proc)["systems"][name]["sacrebleu_mean"] == pytest.approx(
            entry["BLEU"]["mean"], abs=1e-6)
        assert summary_of(proc)["systems"][name]["sacrebleu_ci95"] == pytest.approx(
            entry["BLEU"]["ci"], abs=1e-6)
    assert oracle[1]["BLEU"]["p_value"] == pytest.approx(1 / 201)
    # fairseq-hier-significance bleu on the documents doc-bleu wrote
    proc = run_cli("fairseq-hier-significance", "bleu", ref_docs, f"A={docs}",
                   f"B={folder / 'B.docs'}", "--samples", "200", "--tgt-lang", "en")
    result = summary_of(proc)
    assert result["systems"]["B"]["p_value"] == 1.0 and "*" not in proc.stdout.splitlines()[2]
    # the report's marks
    for name in ("A", "B"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "test.docs").write_text(docs.read_text())
    run_cli("fairseq-hier-report", tmp_path / "A", tmp_path / "B", "--metric", "bleu",
            "--reference", folder / "test.en", "--samples", "200", "--output-dir",
            tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text()
    scores = report.split("## Scores")[1]
    rows = [line for line in scores.splitlines() if line.startswith(("| A (baseline) |", "| B |"))]
    assert rows[1] == rows[0].replace("A (baseline)", "B") and rows[1].count("|") == 4
    assert "\u2020" not in rows[1] and "\u2021" not in rows[1]
    assert "| B | +0.00 [+0.00, +0.00] p=1.000 |" in report


def test_one_system_gets_sacrebleus_confidence_interval(split):
    folder, log = split
    summary = summary_of(doc_bleu(folder, f"sys={log}", extra=("--no-detokenize", "--tokenize",
                                                               "none", "--bootstrap", "300")))
    ref = doc_files(folder, REF_DOCS, "ref.docs")
    hyp = doc_files(folder, HYP_DOCS, "hyp.docs")
    oracle = json.loads(sacrebleu_cli(ref, "-i", hyp, "--tokenize", "none", "--force",
                                      "--confidence", "--confidence-n", "300", "-f", "json"))
    result = summary["systems"]["sys"]
    assert result["sacrebleu_mean"] == pytest.approx(oracle["confidence_mean"], abs=0.05)
    assert result["sacrebleu_ci95"] == pytest.approx(oracle["confidence_var"], abs=0.05)
    assert "p_value" not in result and summary["signature"] == oracle["signature"]


def test_bad_options_and_systems_are_one_line(split):
    folder, log = split
    proc = doc_bleu(folder, f"sys={log}", extra=("--bootstrap", "-5"), check=False)
    assert proc.returncode == 2 and proc.stdout.strip().splitlines()[-1] == (
        "fairseq-hier-doc-bleu: error: argument --bootstrap: must be >= 0, got -5")
    proc = doc_bleu(folder, f"={log}", check=False)
    assert proc.returncode == 1 and proc.stdout.strip().splitlines()[-1] == (
        f"fairseq-hier-doc-bleu: error: bad system '={log}': expected NAME=LOG")


# ------------------------------------------------------------------- plain-text system outputs
RAW_REF = [["The cat sat on the mat.", "It wasn't happy, though."],
           ["We'll meet at noon.", "Bring the blue file.", "Don't be late!"],
           ["Prices rose by 3% in May.", "Analysts had expected less."]]
RAW_HYP = [["The cat sat on a mat.", "It wasn't happy."],
           ["We will meet at noon.", "", "Do not be late!"],  # an empty translation
           ["Prices rose 3% in May.", "Analysts expected less."]]


def write_text_split(folder, ref_docs, hyp_docs, name="online"):
    """A raw reference split (sentence a line, documents split by an empty line) with its
    docids, and one plain-text system output: one translated sentence a line, nothing else."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.en").write_text("\n\n".join("\n".join(d) for d in ref_docs) + "\n")
    (folder / "test.docids").write_text("".join(f"doc{i}\n" for i in range(len(ref_docs))))
    hyp = folder / f"{name}.en"
    hyp.write_text("".join(s + "\n" for d in hyp_docs for s in d))
    return hyp


def doc_bleu_text(folder, *systems, extra=(), check=True):
    return run_cli("fairseq-hier-doc-bleu", "--text", *systems, "--reference", folder / "test.en",
                   "--tgt-lang", "en", *extra, check=check)


def test_plain_text_outputs_give_the_sacrebleu_commands_document_bleu_and_chrf(tmp_path):
    hyp = write_text_split(tmp_path, RAW_REF, RAW_HYP)
    proc = doc_bleu_text(tmp_path, f"online={hyp}", extra=("--bootstrap", "0"))
    summary = summary_of(proc)
    ref_docs = doc_files(tmp_path, RAW_REF, "ref.docs")
    hyp_docs = doc_files(tmp_path, [[s for s in d if s] for d in RAW_HYP], "hyp.docs")
    bleu = float(sacrebleu_cli(ref_docs, "-i", hyp_docs, "-m", "bleu", "-b", "-w", "4"))
    chrf = float(sacrebleu_cli(ref_docs, "-i", hyp_docs, "-m", "chrf", "-b", "-w", "4"))
    result = summary["systems"]["online"]
    assert result["doc_bleu"] == pytest.approx(bleu, abs=1e-4)
    assert result["chrf"] == pytest.approx(chrf, abs=1e-4)
    # the sentence column: each hypothesis line against its reference sentence
    ref_lines = doc_files(tmp_path, [[s] for d in RAW_REF for s in d], "ref.lines")
    sentence = float(sacrebleu_cli(ref_lines, "-i", hyp, "-m", "bleu", "-b", "-w", "4"))
    assert result["chunk_bleu"] == pytest.approx(sentence, abs=1e-4)
    assert (summary["documents"], summary["chunks"], summary["segments"]) == (3, 7, "sentences")
    assert summary["postprocessing"]["hypotheses"]["online"] == (
        f"as given in {hyp}; a document = its sentences joined by a space")
    assert "sentence BLEU" in proc.stdout and "3 documents, 7 sentences" in proc.stdout


def test_plain_text_outputs_are_checked_in_one_line(tmp_path):
    hyp = write_text_split(tmp_path, RAW_REF, [d[:-1] for d in RAW_HYP])
    proc = doc_bleu_text(tmp_path, f"online={hyp}", check=False)
    assert proc.returncode == 1 and proc.stdout.strip().splitlines()[-1] == (
        f"fairseq-hier-doc-bleu: error: {hyp} has 4 lines but {tmp_path / 'test.en'} has 7 "
        f"sentences (one translated sentence a line, in the reference's order, no line between "
        f"documents)")
    proc = doc_bleu_text(tmp_path, f"online={hyp}", extra=("--chunks", "x.chunks"), check=False)
    assert proc.returncode == 2 and proc.stdout.strip().splitlines()[-1] == (
        "fairseq-hier-doc-bleu: error: --chunks applies to fairseq-generate logs, not to --text "
        "outputs (scored as given)")
    proc = run_cli("fairseq-hier-doc-bleu", f"online={hyp}", "--reference", tmp_path / "test.en",
                   "--tgt-lang", "en", check=False)
    assert proc.returncode == 2 and proc.stdout.strip().splitlines()[-1] == (
        "fairseq-hier-doc-bleu: error: give --chunks (the chunk map of fairseq-generate logs) or "
        "--text (plain-text outputs)")


def test_sacrebleus_tokenised_input_warning_is_logged_once_per_run(tmp_path):
    """Tokenised text on both sides with --tokenize none: sacreBLEU warns at every corpus score
    of 100+ lines ending in " ." (here two systems x document, sentence and bootstrap scores);
    the run's log holds each of its lines once."""
    docs = [[f"sentence {k} of document {d} ." for k in range(2)] for d in range(110)]
    hyp = write_text_split(tmp_path, docs, docs, "a")
    other = tmp_path / "b.en"
    other.write_text(hyp.read_text().replace("document 1", "text 1"))
    proc = doc_bleu_text(tmp_path, f"a={hyp}", f"b={other}",
                         extra=("--tokenize", "none", "--bootstrap", "20"))
    assert proc.stdout.count("It looks like you forgot to detokenize your test data") == 1
    assert proc.stdout.count("That's 100 lines that end in a tokenized period") == 1
