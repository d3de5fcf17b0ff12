"""Bad inputs of the scoring commands refused in one line, before any work, with nothing written:
``fairseq-hier-doc-bleu`` (a reference in another language, sides tokenised differently, output
folders, system names), ``fairseq-hier-report`` (``--output-dir``), ``fairseq-hier-record run``
(architecture, task, RUN_DIR, ``--inherit``) and what ``fairseq-hier-baseline lead`` says of
empty lines. Inputs are written here, in the layouts the recipes use."""

import json
import os

import pytest
from conftest import run_cli

DOC_BLEU = "fairseq-hier-doc-bleu"
# two documents, raw text (one sentence a line, documents split by an empty line)
DE = [["Der Hund schläft.", "Er ist müde."], ["Die Katze läuft."]]
EN = [["The dog sleeps.", "It is tired."], ["The cat runs."]]


def one_line(proc, prog):
    """The only line a failed command printed (no traceback)."""
    lines = proc.stdout.strip().splitlines()
    assert "Traceback" not in proc.stdout and len(lines) == 1, proc.stdout
    assert lines[0].startswith(f"{prog}: error: "), proc.stdout
    return lines[0][len(f"{prog}: error: "):]


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """raw/test.{de,en,docids}, a chunk map (one chunk a document), and fairseq-generate logs:
    run/hat/generate-test.txt and base.txt, the same tokenised hypotheses (Moses-detokenised,
    they are the references)."""
    root = tmp_path_factory.mktemp("reliability_doc_bleu")
    raw = root / "raw"
    raw.mkdir()
    for lang, docs in (("de", DE), ("en", EN)):
        (raw / f"test.{lang}").write_text("\n\n".join("\n".join(d) for d in docs) + "\n")
    (raw / "test.docids").write_text("d1\nd2\n")
    (root / "test.chunks").write_text("d1\t0\t0\t1\nd2\t0\t0\t0\n")
    log = ("S-0\tx\nH-0\t-0.5\tDer Hund schläft . Er ist müde .\n"
           "S-1\tx\nH-1\t-0.5\tDie Katze läuft .\nGenerate test with beam=5: BLEU4 = 0.00\n")
    (root / "run" / "hat").mkdir(parents=True)
    (root / "run" / "hat" / "generate-test.txt").write_text(log)
    (root / "base.txt").write_text(log)
    return root


def doc_bleu(root, *args, ref="test.de", check=False):
    return run_cli(DOC_BLEU, *args, "--chunks", root / "test.chunks", "--reference",
                   root / "raw" / ref,
                   "--tgt-lang", "de", "--bootstrap", "0", check=check)


def summary_of(proc):
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_reference_in_another_language_is_refused_unless_forced(split):
    log, out = split / "base.txt", split / "out"
    proc = doc_bleu(split, f"sys={log}", "--output-dir", out, ref="test.en")
    ref = split / "raw" / "test.en"
    problem = (f"--ref {ref}: its suffix .en names the language en, not --tgt-lang de "
               f"({split / 'raw' / 'test.de'} is the de side)")
    assert proc.returncode == 1
    assert one_line(proc, DOC_BLEU) == (f"{problem}: give the reference of the target language, "
                                        f"or --force to score against this file")
    assert not out.exists()
    forced = doc_bleu(split, f"sys={log}", "--force", ref="test.en", check=True)
    assert summary_of(forced)["warnings"] == [f"{problem} (scored as given: --force)"]


def test_sides_tokenised_differently_are_refused_unless_forced(split):
    log = split / "base.txt"
    proc = doc_bleu(split, f"sys={log}", "--no-detokenize", "--output-dir", split / "out2")
    warning = (f"the hypotheses look tokenised (100% of them change under detokenisation) but "
               f"{split / 'raw' / 'test.de'} does not (0%): drop --no-detokenize to detokenise "
               f"the hypotheses")
    assert proc.returncode == 1
    assert one_line(proc, DOC_BLEU) == f"{warning}; or --force to score the two sides as they are"
    assert not (split / "out2").exists()
    forced = doc_bleu(split, f"sys={log}", "--no-detokenize", "--force", check=True)
    assert summary_of(forced)["warnings"] == [warning]
    # detokenised (the default), the same hypotheses match the raw references exactly
    assert summary_of(doc_bleu(split, f"sys={log}", check=True))["systems"]["sys"]["doc_bleu"] \
        == pytest.approx(100)


def test_output_folders_are_checked_before_anything_is_read(split, tmp_path):
    log = split / "base.txt"
    blocker = tmp_path / "taken"
    blocker.write_text("a file\n")
    # the chunk map is missing too: the output folder is what is checked first
    proc = run_cli(DOC_BLEU, f"sys={log}", "--chunks", tmp_path / "missing.chunks", "--reference",
                   split / "raw" / "test.de", "--tgt-lang", "de", "--output-dir", blocker,
                   check=False)
    assert proc.returncode == 1
    assert one_line(proc, DOC_BLEU) == f"--output-dir {blocker}: is a file (a folder is expected)"
    proc = doc_bleu(split, f"sys={log}", "--run-dir", blocker / "run")
    assert one_line(proc, DOC_BLEU) == (f"--run-dir {blocker / 'run'}: cannot be made: "
                                        f"{blocker} is a file (a folder is expected)")
    assert blocker.read_text() == "a file\n"
    # a run folder whose SUBSET.ref is the reference read: refused, nothing written
    run = tmp_path / "run"
    run.mkdir()
    (run / "test.ref").write_text((split / "raw" / "test.de").read_text())
    proc = run_cli(DOC_BLEU, f"sys={log}", "--chunks", split / "test.chunks", "--reference",
                   run / "test.ref", "--docids", split / "raw" / "test.docids", "--tgt-lang",
                   "de", "--run-dir", run, check=False)
    assert one_line(proc, DOC_BLEU) == (f"--run-dir {run}: {run / 'test.ref'} is also an input "
                                        f"of this command: it would be overwritten; choose "
                                        f"another --run-dir")
    assert files_under(tmp_path) == ["run", "run/test.ref", "taken"]


def test_a_bare_log_is_named_after_its_run_folder_and_names_are_file_names(split, tmp_path):
    hat, base = split / "run" / "hat" / "generate-test.txt", split / "base.txt"
    proc = doc_bleu(split, hat, base, "--output-dir", tmp_path / "out", check=True)
    assert list(summary_of(proc)["systems"]) == ["hat", "base"]
    assert files_under(tmp_path / "out") == ["base.chunks.tsv", "base.docs", "hat.chunks.tsv",
                                             "hat.docs"]
    proc = doc_bleu(split, f"a/b={base}", "--output-dir", tmp_path / "bad")
    assert one_line(proc, DOC_BLEU) == (f"bad system 'a/b={base}': NAME 'a/b' names the files "
                                        f"NAME.docs and NAME.chunks.tsv, so it must be a plain "
                                        f"file name (no '/')")
    proc = doc_bleu(split, base, f"base={hat}")
    assert one_line(proc, DOC_BLEU) == "two systems named 'base': name them NAME=LOG"
    assert not (tmp_path / "bad").exists()
    assert "after its run folder when it is generate-SUBSET.txt" in " ".join(
        run_cli(DOC_BLEU, "--help").stdout.split())


def test_report_checks_its_output_dir_before_any_score(tmp_path):
    run = tmp_path / "pht"
    run.mkdir()
    (run / "test.hyp").write_text("a b c\nd e f\n")
    (run / "test.ref").write_text("a b c\n")  # one line short: an error only once scored
    blocker = tmp_path / "report"
    blocker.write_text("")
    proc = run_cli("fairseq-hier-report", run, "--output-dir", blocker, check=False)
    assert proc.returncode == 1
    assert one_line(proc, "fairseq-hier-report") == (f"--output-dir {blocker}: is a file (a "
                                                     f"folder is expected)")
    out = tmp_path / "out"
    (out / "report.html").mkdir(parents=True)
    proc = run_cli("fairseq-hier-report", run, "--output-dir", out, check=False)
    assert one_line(proc, "fairseq-hier-report") == (f"--output-dir {out}: {out / 'report.html'} "
                                                     f"is a folder (the command writes a file "
                                                     f"there)")
    assert files_under(tmp_path) == ["out", "out/report.html", "pht", "pht/test.hyp",
                                     "pht/test.ref", "report"]


RUN_JSON = "fairseq-hier-record run"


def test_run_json_refuses_unknown_names_and_folders_that_are_no_run(tmp_path):
    def run_json(*args):
        return run_cli(*RUN_JSON.split(), *args, "--metric", "rouge", check=False)

    proc = run_json(tmp_path / "a", "--name", "a", "--arch", "phtt", "--task",
                    "hierarchical_summarization")
    assert proc.returncode == 1
    assert one_line(proc, RUN_JSON) == ("--arch phtt: no such architecture (fairseq-train "
                                        "--arch's choices, fairseq-hier's included, or a "
                                        "baseline: lead, lexrank, frequent, first)")
    proc = run_json(tmp_path / "b", "--name", "b", "--arch", "pht", "--task", "summarisation")
    assert one_line(proc, RUN_JSON) == ("--task summarisation: no such task (fairseq-train "
                                        "--task's choices, fairseq-hier's included)")
    (tmp_path / "file").write_text("")
    proc = run_json(tmp_path / "file", "--name", "c", "--arch", "lead", "--task",
                    "hierarchical_summarization")
    assert one_line(proc, RUN_JSON) == (f"RUN_DIR {tmp_path / 'file'}: is a file (a folder is "
                                        f"expected)")
    # --inherit: a folder named like an architecture but holding no run
    empty = tmp_path / "old" / "pht"
    empty.mkdir(parents=True)
    proc = run_json(tmp_path / "d", "--inherit", empty, "--task", "hierarchical_summarization")
    assert one_line(proc, RUN_JSON) == (f"--inherit {empty}: holds no trained run (no run.json, "
                                        f"train.log or checkpoint*.pt)")
    assert sorted(os.listdir(tmp_path)) == ["file", "old"]
    # a trained run without run.json is named after its folder: an architecture, else refused
    trained = tmp_path / "old" / "pht"
    (trained / "checkpoint_best.pt").write_bytes(b"")
    assert run_json(tmp_path / "e", "--inherit", trained, "--task",
                    "hierarchical_summarization").returncode == 0
    assert json.loads((tmp_path / "e" / "run.json").read_text())["arch"] == "pht"


def test_lead_names_the_empty_lines(tmp_path):
    src, ref, out = tmp_path / "test.src", tmp_path / "test.tgt", tmp_path / "lead.hyp"
    src.write_text("t <P> a b c\n\n  <P>  \nt2 <P> x y\n")
    ref.write_text("r1 r2\nr3\nr4\n\n")
    proc = run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref,
                   "--output", out)
    assert out.read_text() == "t a\n\n\n\n"
    warnings = [line.split(" | ", 3)[3] for line in proc.stdout.splitlines() if "WARNING" in line]
    assert warnings == [f"{src}: 2 empty line(s) (no token besides <P>): lines 2, 3; their Lead "
                        f"summary is empty",
                        f"{ref}: 1 empty line(s): line 4; their Lead summary is empty"]
