"""``fairseq-hier-decode`` then ``fairseq-hier-score`` end to end on a tiny pht trained here
(fairseq-train, fairseq-generate for real), and every bad input of decode in one line with
nothing left in the run folder."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import BIN, run_cli, train_recorded_pht
from cli_forkserver import gateway

TASK_ARGS = "--max-paragraphs 4 --max-paragraph-tokens 6 --max-source-positions 30"


@pytest.fixture(scope="module")
def trained(data_bin, raw_corpus, tmp_path_factory):
    """(data-bin with a record: beam 2, max-len-b 6; the trained run's folder; references)."""
    data, ck = train_recorded_pht(data_bin, tmp_path_factory.mktemp("runs"), 1)
    return data, ck, raw_corpus / "test.tgt"


def command(name):
    """The console script, or its module until the script is installed."""
    script = BIN / f"fairseq-hier-{name}"
    return [str(script)] if script.exists() else [sys.executable, "-m", f"fairseq_hier.cli.{name}"]


def hier(name, *args, check=True):
    """A command as its own process, fairseq-generate (found on PATH) through the warm shims."""
    with gateway(BIN) as shims:
        env = dict(os.environ, PATH=os.pathsep.join([shims, str(BIN), os.environ["PATH"]]),
                   OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        proc = subprocess.run([*command(name), *map(str, args)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and proc.returncode != 0:
        raise AssertionError(f"fairseq-hier-{name} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def decode_args(trained, run_dir, *more):
    data, ck, refs = trained
    return [run_dir, "--data", data, "--references", refs, "--checkpoint",
            ck / "checkpoint_best.pt", "--task-args", TASK_ARGS, *more]


def hypotheses_by_id(log: Path):
    found = dict(re.findall(r"^H-(\d+)\t[^\t]*\t(.*)$", log.read_text(), re.M))
    return [found[str(i)] for i in range(len(found))]


@pytest.fixture(scope="module")
def decoded(trained, tmp_path_factory):
    run = tmp_path_factory.mktemp("decoded") / "pht_test"
    proc = hier("decode", *decode_args(trained, run))
    return run, proc


def test_decode_writes_the_run_folder(trained, decoded):
    data, ck, refs = trained
    run, proc = decoded
    assert sorted(p.name for p in run.iterdir()) == ["generate-test.txt", "run.json",
                                                     "test.decode.json", "test.hyp.raw"]
    log = run / "generate-test.txt"
    assert "Generate test with beam=2" in log.read_text()  # the record's decoding options
    hyps = hypotheses_by_id(log)
    assert len(hyps) == 8
    assert (run / "test.hyp.raw").read_text() == "".join(h + "\n" for h in hyps)
    facts = json.loads((run / "test.decode.json").read_text())
    assert {k: v for k, v in facts.items() if k not in ("command", "cwd")} == {
        "data": str(data), "checkpoint": str(ck / "checkpoint_best.pt"), "subset": "test",
        "task": "hierarchical_summarization", "arch": "pht", "references": str(refs),
        "multi_references": None, "lines": "H", "examples": 8}
    cmd = facts["command"]
    assert cmd[:2] == ["fairseq-generate", str(data)]
    assert " ".join(cmd).endswith("--path {} --gen-subset test --beam 2 --max-len-b 6 "
                                  "--batch-size 32 --required-batch-size-multiple 1"
                                  .format(ck / "checkpoint_best.pt"))
    assert json.loads((run / "run.json").read_text()) == {
        "name": "pht_test", "arch": "pht", "task": "hierarchical_summarization",
        "metric": "rouge"}
    assert f"{run}: 8 hypotheses (H lines)" in proc.stdout


def test_score_is_rouge_by_hand(decoded, trained, tmp_path):
    run, _ = decoded
    proc = hier("score", run)
    refs = trained[2]
    assert (run / "test.hyp").read_bytes() == (run / "test.hyp.raw").read_bytes()
    assert (run / "test.ref").read_bytes() == refs.read_bytes()
    by_hand = tmp_path / "rouge.txt"
    run_cli("fairseq-hier-rouge", refs, run / "test.hyp.raw", "-zs", "--saveto", by_hand)
    assert (run / "test.rouge.txt").read_bytes() == by_hand.read_bytes()
    assert re.search(r"ROUGE-1 +\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", proc.stdout)


def in_process(capsys, name, *args):
    """A command run in this process (its checks need no fairseq-generate run): rc, stderr."""
    from fairseq_hier.cli import decode, score

    rc = {"decode": decode, "score": score}[name].cli_main([str(a) for a in args])
    return SimpleNamespace(returncode=rc, stderr=capsys.readouterr().err)


def test_relative_paths_score_from_another_folder(decoded, trained, tmp_path, capsys,
                                                  monkeypatch):
    """A decoding made with relative paths is scored the same from any working folder."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(BIN), os.environ["PATH"]]))
    data, ck, refs = trained
    run = tmp_path / "runs" / "rel"
    run.mkdir(parents=True)
    (run / "generate-test.txt").write_bytes((decoded[0] / "generate-test.txt").read_bytes())
    here = os.getcwd()
    os.chdir(refs.parent)
    try:  # the log is there: decode reads it again, in this process
        rc = in_process(capsys, "decode", os.path.relpath(run), "--data", os.path.relpath(data),
                        "--references", refs.name, "--checkpoint", ck / "checkpoint_best.pt",
                        "--task-args", TASK_ARGS).returncode
    finally:
        os.chdir(here)
    assert rc == 0
    assert json.loads((run / "test.decode.json").read_text())["references"] == refs.name
    assert in_process(capsys, "score", run).returncode == 0  # from another folder
    if not (decoded[0] / "test.rouge.txt").is_file():
        hier("score", decoded[0])
    assert (run / "test.ref").read_bytes() == refs.read_bytes()
    assert (run / "test.rouge.txt").read_bytes() == (decoded[0] / "test.rouge.txt").read_bytes()


def test_an_existing_log_is_reused_unless_forced(trained, decoded, tmp_path):
    run = tmp_path / "again"
    run.mkdir()
    log = run / "generate-test.txt"
    log.write_bytes((decoded[0] / "generate-test.txt").read_bytes())
    before = log.stat().st_mtime_ns
    proc = hier("decode", *decode_args(trained, run, "--name", "again", "--arch", "vht"))
    assert "generate-test.txt exists: its hypotheses are read again" in proc.stderr
    assert log.stat().st_mtime_ns == before
    assert json.loads((run / "run.json").read_text())["arch"] == "vht"
    proc = hier("decode", *decode_args(trained, run, "--force", "--generation", "--beam 1",
                                       "--", "--max-len-b", "3"))
    assert log.stat().st_mtime_ns != before and "Generate test with beam=1" in log.read_text()
    assert json.loads((run / "test.decode.json").read_text())["command"][-2:] == \
        ["--max-len-b", "3"]


def one_line(proc, prog="fairseq-hier-decode"):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0 and lines and lines[-1].startswith(f"{prog}: error: "), \
        proc.stderr
    assert not [line for line in lines if "Traceback" in line], proc.stderr
    return lines[-1]


def test_bad_inputs_of_decode(trained, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([str(BIN), os.environ["PATH"]]))
    data, ck, refs = trained
    run = tmp_path / "run"
    line = one_line(in_process(capsys, "decode", *decode_args(trained, run, "--subset", "nosuch")))
    assert f"--data {data}: has no split 'nosuch' (no nosuch.*.idx" in line
    line = one_line(in_process(capsys, "decode", run, "--data", data, "--references", refs))
    assert f"checkpoint {run / 'checkpoint_best.pt'} not found" in line
    short = tmp_path / "short.tgt"
    short.write_text("one line .\n")
    args = decode_args(trained, run)
    args[args.index(refs)] = short
    line = one_line(in_process(capsys, "decode", *args))
    assert f"--references {short}: has 1 lines, split 'test' of {data} has 8 examples" in line
    line = one_line(in_process(capsys, "decode", *decode_args(trained, run, "--",
                                                              "--no-such-option")))
    assert "the fairseq-generate arguments after --: unknown option(s) --no-such-option" in line
    line = one_line(in_process(capsys, "score", run), "fairseq-hier-score")
    assert "test.decode.json not found" in line or "no such folder" in line
    assert not run.exists() or not list(run.iterdir())


def test_a_failed_generate_leaves_nothing(trained, tmp_path):
    """fairseq-generate dies half-way: no log, no temporary file, no other output."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "fairseq-generate").write_text("#!/bin/sh\necho 'H-0\t-1\thalf'\nexit 3\n")
    (fake / "fairseq-generate").chmod(0o755)
    run = tmp_path / "run"
    env = dict(os.environ, PATH=os.pathsep.join([str(fake), str(BIN), os.environ["PATH"]]),
               PYTHONWARNINGS="ignore")
    proc = subprocess.run([*command("decode"), *map(str, decode_args(trained, run))], env=env,
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = one_line(proc)
    assert "fairseq-generate failed (exit status 3" in line
    assert not run.exists() or not list(run.iterdir())
