"""The recipe of your own data (``examples/own_data/run.sh``) and the commands it runs first refuse
bad input before any work, in one line naming the stage, architecture, variable or option, with
nothing written: an unknown stage or architecture, ``RANK`` and the other variables, a ``RANK``
the architecture cannot read, missing ``DATA``/``BART``, fairseq options that fairseq-train or
fairseq-generate would refuse (``fairseq-hier-settings ARCH -- ARGS``). Also: a BOM opening a
JSON-lines file is removed with the text readers' warning. No model is trained here."""

import json
import os
import subprocess

import pytest
from conftest import BIN, ROOT, run_cli

RUN_SH = ROOT / "examples" / "own_data" / "run.sh"
STAGES = "prepare train decode score report prepare-mt train-mt decode-mt report-mt"


def recipe(script, *args, **env):
    """(exit status, output lines) of a recipe run with this virtualenv's commands on PATH."""
    full = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", OMP_NUM_THREADS="1",
                PYTHONWARNINGS="ignore", WORKERS="1", GPUS="1")
    full.update({k: str(v) for k, v in env.items()})
    proc = subprocess.run(["bash", str(script), *map(str, args)], env=full, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert "Traceback" not in proc.stdout and "unbound variable" not in proc.stdout, proc.stdout
    return proc.returncode, proc.stdout.strip().splitlines()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Valid JSON lines for every split: had a check come late, conversion would have run."""
    folder = tmp_path_factory.mktemp("own_jsonl")
    for split in ("train", "valid", "test"):
        (folder / f"{split}.jsonl").write_text(
            json.dumps({"id": "1", "documents": ["a b c", "d e"], "summary": "a d"}) + "\n")
    return folder


@pytest.mark.parametrize("args, env, line", [
    (["frobnicate", "pht"], {}, f"run.sh: unknown stage 'frobnicate' (one of: {STAGES})"),
    (["prepare"], {}, "run.sh: prepare takes one ARCH, got 0 argument(s)"),
    (["train-mt", "fr", "en"], {}, "run.sh: train-mt takes SRC TGT hat|plain, got 2 argument(s)"),
    (["prepare", "pht"], {"RANK": "bogus"}, "run.sh: RANK must be none, tfidf or ranker, got "
                                            "'bogus'"),
    (["prepare", "pht"], {"RANK": "ranker"}, "run.sh: RANK=ranker: set RANKER to the ranker "
                                             "checkpoint (a file; got '')"),
    (["prepare", "pht"], {"PARAGRAPHS": "pages"}, "run.sh: PARAGRAPHS must be documents, blocks "
                                                  "or lines, got 'pages'"),
    (["prepare", "pht"], {"VOCAB": "0"}, "run.sh: VOCAB must be a positive integer, got '0'"),
    (["prepare", "parsingsum_ft"], {"RANK": "tfidf"},
     "run.sh: RANK=tfidf: parsingsum_ft reads spaCy's parse of the input order; rank the "
     "documents in the JSON lines instead"),
    (["prepare", "hat_bart_base"], {"RANK": "tfidf"},
     "run.sh: RANK=tfidf: hat_bart_base reads sentences, not ranked paragraphs"),
    (["prepare", "hat_bart_base"], {},
     "run.sh: set BART to the BART folder for hat_bart_base (fairseq model.pt + dict.txt, "
     "encoder.json, vocab.bpe, or Hugging Face; got '')"),
    (["prepare", "pht"], {"DATA": ""}, "run.sh: set DATA to the folder of train.jsonl, "
                                       "valid.jsonl, test.jsonl (got '')"),
])
def test_bad_stages_and_variables_stop_before_any_work(data, tmp_path, args, env, line):
    work = tmp_path / "work"
    rc, lines = recipe(RUN_SH, *args, **{"DATA": data, "WORK": work, **env})
    assert (rc, lines) == (2, [line])
    assert not work.exists()


def test_an_unknown_architecture_is_named(data, tmp_path):
    work = tmp_path / "work"
    rc, lines = recipe(RUN_SH, "prepare", "phtt", DATA=data, WORK=work)
    assert rc == 2 and len(lines) == 1
    assert lines[0].startswith("fairseq-hier-settings: error: argument ARCH: invalid choice: "
                               "'phtt' (choose from 'pht', 'vht', ")
    assert not work.exists()
    (tmp_path / "file").write_text("")
    rc, lines = recipe(RUN_SH, "prepare", "pht", DATA=data, WORK=tmp_path / "file")
    assert (rc, lines) == (2, [f"run.sh: WORK={tmp_path / 'file'} is a file (the output folder "
                               f"is expected)"])


@pytest.fixture
def prepared(tmp_path):
    """WORK as `run.sh prepare pht` leaves it, as far as train and decode look before they run
    fairseq (the raw targets, the data-bin's dictionary, the subword targets)."""
    work = tmp_path / "work"
    for path, text in (("raw/train.tgt", "a d\nb c\n"), ("spm/data-bin/dict.src.txt", "a 1\n"),
                       ("spm/bpe/train.tgt", "a d\nb c e\n")):
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    return work


def test_fairseq_options_are_parsed_before_training_or_decoding(prepared):
    work = prepared
    before = sorted(p.relative_to(work) for p in work.rglob("*"))
    rc, lines = recipe(RUN_SH, "train", "pht", "--lrr", "3", WORK=work)
    assert (rc, lines) == (1, [
        "fairseq-hier-settings: error: fairseq options after --: unknown option(s) --lrr 3 "
        "(fairseq-train's options, task hierarchical_summarization's and those of the model, "
        "optimizer and scheduler named are expected)"])
    assert sorted(p.relative_to(work) for p in work.rglob("*")) == before  # no run folder


def test_decoding_options_are_checked_before_decoding(prepared):
    work = prepared
    (work / "runs" / "pht").mkdir(parents=True)
    (work / "runs" / "pht" / "checkpoint_best.pt").write_bytes(b"")  # as training leaves it
    rc, lines = recipe(RUN_SH, "decode", "pht", "--beam", "-3", WORK=work)
    assert (rc, lines) == (1, ["fairseq-hier-settings: error: fairseq options after --: --beam "
                               "must be >= 1, got -3"])
    assert os.listdir(work / "runs" / "pht") == ["checkpoint_best.pt"]


def test_settings_name_the_papers_options_that_yours_make_invalid():
    proc = run_cli("fairseq-hier-settings", "pht", "--stage", "train", "--examples", "100",
                   "--gpus", "1", "--", "--optimizer", "sgd", check=False)
    assert (proc.returncode, proc.stdout) == (1, (
        "fairseq-hier-settings: error: fairseq options after --: the paper's --adam-betas "
        "--adam-eps do not apply with your options (--optimizer sgd): fairseq-train would "
        "refuse them\n"))


def test_the_mds_recipes_name_an_unknown_step():
    rc, lines = recipe(ROOT / "examples" / "multi_news" / "run.sh", "bogus")
    assert rc == 2 and len(lines) == 1
    assert lines[0].startswith("run.sh: unknown step 'bogus'; usage: DATA=DIR WORK=DIR ")


def test_a_bom_opening_json_lines_is_removed_with_a_warning(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    line = json.dumps({"id": "x", "title": "T", "documents": ["a b"], "summary": "a"})
    (data / "test.jsonl").write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    proc = run_cli("fairseq-hier-to-raw", "--format", "jsonl", "--input-dir", data, "--splits",
                   "test",
                   "--output-dir", tmp_path / "raw")
    warnings = [entry.split(" | ", 3)[3] for entry in proc.stdout.splitlines()
                if "| WARNING |" in entry]  # once, although the file is read twice
    assert warnings == [f"{data / 'test.jsonl'}: removed the UTF-8 byte-order mark at the start "
                        f"of line 1"]
    assert (tmp_path / "raw" / "test.src").read_text() == "T <P> a b\n"
    assert (tmp_path / "raw" / "test.ids").read_text() == "x\n"


@pytest.mark.parametrize("script", [ROOT / "examples" / "wikisum" / "train_pht.sh",
                                    ROOT / "examples" / "wikisum" / "train_002.sh"])
def test_a_refused_batch_setting_stops_a_training_recipe(tmp_path, script):
    """``fairseq-hier-settings --stage batch`` refuses GPUS=0: the recipe stops on its line,
    before the run folder's run.json or any training."""
    args = ["liu_ht"] if script.name == "train_002.sh" else []
    rc, lines = recipe(script, *args, tmp_path / "data-bin", tmp_path / "run", GPUS="0")
    assert rc != 0
    assert lines[-1] == "fairseq-hier-settings: error: argument --gpus: must be >= 1, got 0"
    assert not (tmp_path / "run" / "run.json").exists()
