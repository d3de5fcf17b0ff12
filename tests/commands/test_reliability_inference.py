"""How summarisation from raw documents and the attention cosine fail, through the console
scripts and the Python API: a folder without input files, a bad decoding option kept in the
preprocessing record, a checkpoint that would run code (fairseq-hier-analyse attention-cosine's
``--trust-checkpoint``), examples that are not documents, and ``batch_size`` below 1.

Each case asserts the exit status (or the exception), the one line naming the folder, record,
example or option, and what is on disk afterwards: no output and no temporary file."""

import json
import os
import shutil
import tempfile

import pytest
import torch

from conftest import Touch, run_cli, train_recorded_pht
from fairseq_hier.data.preprocessing_record import STATE_KEY
from fairseq_hier.errors import HierError
from fairseq_hier.inference import HierSummarizer

PROGRESS = "--no-progress-bar"


def printed(proc):
    """The lines a command printed (stdout and stderr), without fairseq's log lines."""
    return [line for line in proc.stdout.splitlines()
            if " | INFO | " not in line and " | WARNING | " not in line]


def one_line(proc):
    """The single line of a failed command (exit status 1, no traceback)."""
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    lines = printed(proc)
    assert len(lines) == 1, proc.stdout[-3000:]
    return lines[0]


@pytest.fixture(scope="module")
def trained(data_bin, tmp_path_factory):
    """A pht trained one update on the session's data-bin with a preprocessing record, a
    fairseq-generate log of its test split (8 examples) written by hand, and a one-document
    cluster file."""
    root = tmp_path_factory.mktemp("reliability_inference")
    train_recorded_pht(data_bin, root, 1)
    (root / "generate-test.txt").write_text(
        "".join(f"S-{i}\tw1\nH-{i}\t-1.0\tw1 w2 .\nD-{i}\t-1.0\tw1 w2 .\n" for i in range(8))
        + "Generate test with beam=2: BLEU4 = 0.00\n")
    (root / "cluster.txt").write_text("w1 w2 w3\n|||||\nw4 w5\n")
    return root


def checkpoint_copy(trained, name, change):
    """A copy of the trained checkpoint in its own folder, its state changed by ``change``."""
    state = torch.load(trained / "ck" / "checkpoint_last.pt", weights_only=False)  # ours: trusted
    change(state)
    folder = trained / name
    folder.mkdir()
    torch.save(state, folder / "checkpoint_last.pt")
    return folder


# ----------------------------------------------------------------- fairseq-hier-summarize
def test_a_folder_without_input_files_is_refused_before_the_model_loads(trained, tmp_path):
    folder = tmp_path / "clusters"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(trained / "cluster.txt", folder / "sub" / "a.txt")
    (folder / ".hidden.txt").write_text("w1 w2\n")
    out = tmp_path / "out" / "summaries.txt"
    proc = run_cli("fairseq-hier-summarize", trained / "ck", folder, "-o", out, "--cpu",
                   PROGRESS, check=False)
    assert one_line(proc) == (
        f"fairseq-hier-summarize: error: {folder}: no input file at its top level (it holds only "
        f".hidden.txt, sub/); expected cluster files or .jsonl files directly in it (subfolders "
        f"and hidden files are not read)")
    assert proc.stdout.strip().splitlines() == printed(proc)  # not one log line: nothing loaded
    assert not (tmp_path / "out").exists()


def record_generation(options):
    def change(state):
        state["task_state"][STATE_KEY]["record"].update(options)
    return change


@pytest.mark.parametrize("name, options, line", [
    ("unknown", {"generation": ["--beam", "2", "--no-such-flag"]},
     "'generation': unknown option --no-such-flag (fairseq-generate with task "
     "hierarchical_summarization has no such option)"),
    ("per_arch", {"generation_for": {"pht": ["--beam", "-3"]}},
     "'generation_for' entry 'pht': --beam must be >= 1, got -3"),
    ("batch", {"generation": ["--batch-size", "0"]}, "'generation': --batch-size must be >= 1, "
                                                     "got 0"),
])
def test_a_bad_option_in_the_checkpoints_record_names_the_record(trained, tmp_path, name,
                                                                  options, line):
    folder = checkpoint_copy(trained, f"record_{name}", record_generation(options))
    out = tmp_path / "summaries.txt"
    proc = run_cli("fairseq-hier-summarize", folder, trained / "cluster.txt", "-o", out, "--cpu",
                   PROGRESS, check=False)
    assert one_line(proc) == (f"fairseq-hier-summarize: error: the preprocessing record in "
                              f"checkpoint {folder / 'checkpoint_last.pt'}: {line}")
    assert os.listdir(tmp_path) == []


def test_a_bad_option_in_the_record_beside_the_checkpoint_names_that_file(trained, tmp_path,
                                                                          monkeypatch):
    folder = checkpoint_copy(trained, "beside",
                             lambda state: state["task_state"].pop(STATE_KEY))
    record = json.loads((trained / "data-bin" / "hier_preprocess.json").read_text())
    record["generation"] = ["--beam", "2", "--bogus"]
    (folder / "hier_preprocess.json").write_text(json.dumps(record))
    for name in ("dict.src.txt", "dict.tgt.txt"):
        shutil.copy(trained / "data-bin" / name, folder / name)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the record would be restored
    with pytest.raises(HierError) as e:
        HierSummarizer.from_pretrained(str(folder), cpu=True)
    assert str(e.value) == (f"{folder / 'hier_preprocess.json'}: 'generation': unknown option "
                            f"--bogus (fairseq-generate with task hierarchical_summarization has "
                            f"no such option)")
    assert os.listdir(tmp_path) == []


# ----------------------------------------------------------- fairseq-hier-analyse attention-cosine
def test_attention_cosine_loads_a_code_running_checkpoint_only_with_trust_checkpoint(trained,
                                                                                    tmp_path):
    marker = tmp_path / "MARKER"
    folder = checkpoint_copy(trained, "evil",
                             lambda state: state["extra_state"].update(payload=Touch(marker)))
    path, out = folder / "checkpoint_last.pt", tmp_path / "out" / "attention.json"
    args = [trained / "data-bin", "--path", path, "--generate-log",
            trained / "generate-test.txt", "--output", out, "--cpu", "--heatmaps", "0",
            "--bootstrap-samples", "10"]
    proc = run_cli("fairseq-hier-analyse", "attention-cosine", *args, check=False, fork=True)
    assert one_line(proc) == (
        f"fairseq-hier-analyse attention-cosine: error: checkpoint {path} holds the global "
        f"'posix.system', which fairseq-hier does not load without --trust-checkpoint (it could "
        f"run code); pass --trust-checkpoint (FAIRSEQ_HIER_TRUST_CHECKPOINT=1 for fairseq's "
        f"commands, trust_checkpoint=True in the Python API) if you trust the file")
    assert os.listdir(tmp_path / "out") == [] and not marker.exists()
    proc = run_cli("fairseq-hier-analyse", "attention-cosine", *args, "--trust-checkpoint",
                   fork=True)
    assert printed(proc)[-1].startswith("paragraph-attention cosine ")
    assert marker.exists() and os.listdir(tmp_path / "out") == ["attention.json"]
    assert json.loads(out.read_text())["arch"] == "pht"


# ------------------------------------------------------------------------------ the API
@pytest.fixture(scope="module")
def summarizer(trained):
    return HierSummarizer.from_pretrained(str(trained / "ck"), cpu=True)


@pytest.mark.parametrize("examples, message", [
    ([[None]], "example 1: document 1 is None, expected a string"),
    ([["w1 w2", 3]], "example 1: document 2 is an int, expected a string"),
    ([None], "example 1 is None, expected a document (a string), a list of documents, or a dict "
             "with 'documents'"),
    ([["w1"], {"documents": "w1 w2"}], 'example 2: "documents" is a str, expected a list of '
                                       'strings'),
    ([{"documents": ["w1", None]}], "example 1: document 2 is None, expected a string"),
    ([{"documents": ["w1"], "title": 3}], 'example 1: "title" is an int, expected a string or '
                                          'None'),
    ([{"title": "w1"}], 'example 1: a dict without "documents" (expected {"documents": '
                        '[str, ...], "title": str})'),
    ("w1 w2", 'summarize(): examples is a str, expected a list of examples (one example of one '
              'document: ["text ..."])'),
    ({"documents": ["w1"]}, "summarize(): examples is a dict, expected a list of examples (one "
                            "example of one document: [\"text ...\"])"),
])
def test_examples_that_are_not_documents_are_named(summarizer, examples, message):
    with pytest.raises(HierError) as e:
        summarizer.summarize(examples)
    assert str(e.value) == message


@pytest.mark.parametrize("batch_size", [0, -2, True, 2.5, "4"])
def test_batch_size_below_one_is_refused_before_loading(tmp_path, batch_size):
    with pytest.raises(HierError) as e:  # the folder does not exist: nothing was loaded
        HierSummarizer.from_pretrained(str(tmp_path / "no_checkpoint"), batch_size=batch_size)
    assert str(e.value) == (f"HierSummarizer.from_pretrained: batch_size must be an integer "
                            f">= 1, got {batch_size!r}")


@pytest.mark.parametrize("options, message", [
    ("--batch-size 0", "--batch-size must be >= 1, got 0"),
    ("--max-tokens 0", "--max-tokens must be >= 1, got 0"),
])
def test_batching_options_below_one_are_refused(trained, options, message):
    with pytest.raises(HierError) as e:
        HierSummarizer.from_pretrained(str(trained / "ck"), cpu=True, generation=options)
    assert str(e.value) == f"HierSummarizer.from_pretrained: {message}"


def test_arguments_of_the_wrong_kind_are_named(trained, tmp_path):
    with pytest.raises(HierError, match=r"^HierSummarizer.from_pretrained: checkpoint_dir is "
                                        r"None, expected a path$"):
        HierSummarizer.from_pretrained(None)
    with pytest.raises(HierError, match=r"^HierSummarizer.from_pretrained: generation is an "
                                        r"int, expected fairseq-generate options"):
        HierSummarizer.from_pretrained(str(tmp_path), generation=5)
    path = trained / "ck" / "checkpoint_last.pt"
    with pytest.raises(HierError) as e:
        HierSummarizer.from_pretrained(str(path), checkpoint_file="checkpoint_best.pt")
    assert str(e.value) == (f"{path} is a checkpoint file, and checkpoint_file "
                            f"'checkpoint_best.pt' names a file of a checkpoint directory: give "
                            f"the directory with checkpoint_file, or the file alone")
