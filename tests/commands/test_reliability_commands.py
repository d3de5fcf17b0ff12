"""Checks before work and one line instead of a traceback, through fairseq's commands with our
tasks and through ours: an architecture that does not fit the task is refused before the model is
built (no crash.pt), a missing sidecar (liu_ht's graphs, the ranker's labels) is one line,
fairseq-interactive names the line of ``--input`` that is not UTF-8, and an output whose folder
is a file says so."""

import os
import shutil

import pytest

from conftest import USER_DIR, preprocess, run_cli, train_args, write_toy_corpus


def failure(proc, rc=1):
    """The last line of a failed fairseq command (no traceback before it)."""
    assert proc.returncode == rc, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def pht(data_bin, tmp_path_factory):
    save = tmp_path_factory.mktemp("pht")
    run_cli("fairseq-train", *train_args(data_bin, "pht", save, 1))
    return save / "checkpoint_last.pt"


@pytest.mark.parametrize("task, arch, extra, line", [
    ("hierarchical_summarization", "hat_bart_base", [],
     "--arch hat_bart_base does not fit --task hierarchical_summarization: it is a model of "
     "--task hat_summarization or document_translation; the architectures of --task "
     "hierarchical_summarization: liu_ht, parsingsum_ft, parsingsum_ht, pht, pht_1layer, "
     "transformer_copy, vht, vht_1layer (and fairseq's own sequence-to-sequence models)"),
    ("paragraph_ranking", "transformer", ["--criterion", "paragraph_ranking"],
     "--arch transformer does not fit --task paragraph_ranking: it is fairseq's own model; the "
     "architectures of --task paragraph_ranking: paragraph_ranker"),
])
def test_an_architecture_of_another_task_is_refused_before_training(data_bin, tmp_path, task,
                                                                     arch, extra, line):
    save = tmp_path / "ck"
    proc = run_cli("fairseq-train", data_bin, "--user-dir", USER_DIR, "--task", task, "--arch",
                   arch, *extra, "--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "300",
                   "--max-update", "2", "--save-dir", save, "--no-progress-bar", check=False)
    assert failure(proc) == f"fairseq-train: error: {line}"
    assert not save.exists() or os.listdir(save) == []  # no crash.pt


def test_missing_graphs_of_liu_ht_are_one_line(data_bin, tmp_path):
    save = tmp_path / "ck"
    proc = run_cli("fairseq-train", *train_args(data_bin, "liu_ht", save, 1),
                   "--paragraph-graph", "tfidf", "--encoder-layers", "2", "--global-layers", "1",
                   check=False)
    prefix = f"{data_bin}/valid.graph.tfidf"
    assert failure(proc) == (
        f"fairseq-train: error: no paragraph graphs at {prefix} ({prefix}.sizes.npy, "
        f"{prefix}.offsets.npy, {prefix}.values.npy missing): write them with fairseq-hier-graph "
        f"--source RAW/SPLIT.src --kind tfidf --output-prefix {prefix}")


def test_missing_labels_of_the_ranker_are_one_line(data_bin, tmp_path):
    proc = run_cli("fairseq-train", data_bin, "--user-dir", USER_DIR, "--task",
                   "paragraph_ranking", "--arch", "paragraph_ranker", "--criterion",
                   "paragraph_ranking", "--optimizer", "adam", "--lr", "1e-3", "--batch-size", "2",
                   "--max-update", "1", "--save-dir", tmp_path / "ck", "--no-progress-bar",
                   check=False)
    labels = f"{data_bin}/valid.labels"
    assert failure(proc) == (
        f"fairseq-train: error: labels {labels} not found (write them with "
        f"fairseq-hier-rank labels --source SPLIT.src --target SPLIT.tgt --output {labels})")


def test_interactive_names_the_line_that_is_not_utf8(data_bin, raw_corpus, pht, tmp_path):
    source = tmp_path / "in.txt"
    lines = (raw_corpus / "test.src").read_bytes().splitlines(keepends=True)
    source.write_bytes(lines[0] + lines[1] + b"title \xff\xfe w1 <P> w2 w3\n")
    args = [data_bin, "--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--path",
            pht, "--beam", "2", "--max-len-b", "5", "--cpu"]
    proc = run_cli("fairseq-interactive", *args, "--input", source, check=False)
    assert failure(proc) == (f"fairseq-interactive: error: {source}:3: not UTF-8 text (invalid "
                             f"start byte at byte 6 of the line)")
    assert "H-0" not in proc.stdout  # refused before the first line is decoded
    proc = run_cli("fairseq-interactive", *args, "--input", tmp_path / "none.txt", check=False)
    assert failure(proc) == (f"fairseq-interactive: error: cannot read {tmp_path / 'none.txt'}: "
                             f"No such file or directory")


def test_an_output_folder_that_is_a_file_is_named(raw_corpus, tmp_path):
    shutil.copy(raw_corpus / "test.src", tmp_path / "test.src")
    blocking = tmp_path / "runs"
    blocking.write_text("a file where a folder is expected\n")
    for output in (blocking / "lead.hyp", blocking / "pht" / "lead.hyp"):
        proc = run_cli("fairseq-hier-baseline", "lead", "--source", tmp_path / "test.src",
                       "--reference",
                       raw_corpus / "test.tgt", "--output", output, check=False)
        assert proc.returncode == 1 and "Traceback" not in proc.stdout, proc.stdout
        assert proc.stdout.strip().splitlines() == [
            f"fairseq-hier-baseline lead: error: cannot write {output}: {blocking} is a file, not a "
            f"folder"]
    assert sorted(os.listdir(tmp_path)) == ["runs", "test.src"]
    assert blocking.read_text() == "a file where a folder is expected\n"


def test_an_empty_paragraph_after_the_title_is_counted_in_the_log(tmp_path):
    """Each valid example has one empty paragraph right after its title: fairseq-train logs 8
    dropped (the title then stands alone in paragraph 0)."""
    raw = write_toy_corpus(tmp_path / "raw")
    lines = (raw / "valid.src").read_text().splitlines()
    (raw / "valid.src").write_text("".join(line.replace(" <P> ", " <P> <P> ", 1) + "\n"
                                           for line in lines))
    data = preprocess(raw, tmp_path / "bin")
    proc = run_cli("fairseq-train", *train_args(data, "pht", tmp_path / "ck", 1))
    logged = [line for line in proc.stdout.splitlines() if "[valid] 8 examples; hierarchical" in line]
    assert len(logged) == 1 and logged[0].endswith("; 8 empty paragraphs dropped"), logged
