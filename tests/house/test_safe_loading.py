"""Loading a checkpoint never runs code, and a wrong file is one line: through fairseq-generate,
fairseq-hier-summarize, fairseq-hier-rank apply and the Python API.

- the checkpoints fairseq and we write (a pht trained here, the 2019-layout BART in both of
  torch's file formats, a state as rank 0 broadcasts it, numpy scalars under numpy 1.x and 2.x
  names) load with torch's safe unpickler and the allow list, without trust;
- a checkpoint whose pickle calls ``os.system("touch MARKER")`` is refused, naming the global and
  the file, and the marker is absent afterwards; ``--trust-checkpoint`` /
  ``FAIRSEQ_HIER_TRUST_CHECKPOINT=1`` / ``trust_checkpoint=True`` load it (the marker appears);
- truncated, random-bytes, empty and text files, a checkpoint of another task and one trained on
  another dictionary: one line naming the file;
- the summarisation API: the README's example runs as written (``summarize(..., beam=3)``),
  decoding options per call equal the same options given to ``from_pretrained``, and an unknown
  option is a ``ValueError`` naming it, not fairseq's ``SystemExit``.

The console-script cases run once, two at a time (:func:`outcomes`), and each test asserts on
its own; three more cases call our commands' ``cli_main`` in this process (:func:`main_of`).
"""

import argparse
import errno
import importlib
import json
import os
import random
import re
import subprocess
import types
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from cli_forkserver import run_jobs
from conftest import BIN, ROOT, USER_DIR, Touch, train_recorded_pht

SAFE_HINT = ("which fairseq-hier does not load without --trust-checkpoint (it could run code); "
             "pass --trust-checkpoint (FAIRSEQ_HIER_TRUST_CHECKPOINT=1 for fairseq's commands, "
             "trust_checkpoint=True in the Python API) if you trust the file")
SYSTEM = f"{os.system.__module__}.{os.system.__name__}"  # posix.system: how a pickle names it
UNREADABLE = "is not a readable PyTorch checkpoint (corrupt, truncated or another kind of file): "
GENERATE = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--max-paragraphs",
            "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30", "--beam", "2",
            "--max-len-b", "6", "--batch-size", "8", "--cpu", "--num-workers", "0"]


@pytest.fixture(scope="module", autouse=True)
def untrusted():
    """No case inherits FAIRSEQ_HIER_TRUST_CHECKPOINT from the shell that runs the tests."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FAIRSEQ_HIER_TRUST_CHECKPOINT", raising=False)
        yield


def save_with_payload(source, dest, marker):
    """``source``'s checkpoint, plus an entry that runs ``touch marker`` when unpickled."""
    state = torch.load(source, weights_only=False)  # our own file, trusted
    state["extra_state"]["payload"] = Touch(marker)
    dest.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, dest)
    return dest


@pytest.fixture(scope="module")
def files(data_bin, raw_corpus, tiny_bart_dir, tmp_path_factory):
    """A pht trained here (2 updates, its data-bin's preprocessing record inside), and every bad
    file the tests hand to the commands."""
    root = tmp_path_factory.mktemp("safe_loading")
    bin_dir, pht = train_recorded_pht(data_bin, root, 2)
    good = pht / "checkpoint_last.pt"
    data = good.read_bytes()
    bad = root / "bad"
    bad.mkdir()
    (bad / "truncated.pt").write_bytes(data[: len(data) // 2])
    # a cut point where torch raises OSError(EINVAL) instead of RuntimeError
    for k in range(1, 64):
        (bad / "einval.pt").write_bytes(data[: len(data) * k // 64])
        try:
            torch.load(bad / "einval.pt", weights_only=False)
        except OSError as e:
            assert e.errno == errno.EINVAL and e.filename is None
            break
        except Exception:  # noqa: B902  (RuntimeError, the usual answer)
            pass
    else:
        raise AssertionError("no cut point of the checkpoint makes torch raise OSError")
    (bad / "random.pt").write_bytes(b"\x13" + random.Random(0).randbytes(4095))
    (bad / "empty.pt").write_bytes(b"")
    (bad / "text.pt").write_text("not a checkpoint\n")
    # another data-bin: the same task, two more words in each dictionary
    other = root / "other_bin"
    other.mkdir()
    for name in ("dict.src.txt", "dict.tgt.txt"):
        (other / name).write_text((bin_dir / name).read_text() + "zz1 1\nzz2 1\n")
    return dict(root=root, bin=bin_dir, raw=raw_corpus, pht=pht, good=good, bad=bad,
                other=other, bart=tiny_bart_dir / "model.pt")


def evil(files, name):
    """A fresh malicious copy of the pht checkpoint in its own directory: (file, marker)."""
    marker = files["root"] / f"{name}.MARKER"
    path = save_with_payload(files["good"], files["root"] / name / "checkpoint_best.pt", marker)
    return path, marker


@pytest.fixture(scope="module")
def outcomes(files):
    """Every command-line case, run once through the console scripts: {case: (outcome, extra)}
    with ``outcome.returncode`` and ``outcome.stdout`` (stdout and stderr). fairseq-generate's
    cases run as forks of one warm process (tests/support/cli_forkserver.py: the console script's entry
    point, its exception hook included), ours and the one needing an environment variable as
    subprocesses, two at a time."""
    bad, source, root = files["bad"], files["raw"] / "test.src", files["root"]
    forked, spawned = {}, {}

    def generate(case, data, path, **extra):
        forked[case] = ([data, "--path", path, *GENERATE], dict(path=path, **extra))

    def command(case, name, *args, env=None, **extra):
        spawned[case] = (name, args, env or {}, extra)

    path, marker = evil(files, "gen_evil")
    generate("generate-refuses", files["bin"], path, marker=marker)
    generate("generate-truncated", files["bin"], bad / "truncated.pt")
    generate("generate-einval", files["bin"], bad / "einval.pt")
    generate("generate-bart", files["bin"], files["bart"])
    generate("generate-other-dictionary", files["other"], files["good"])
    path, marker = evil(files, "gen_trusted")
    command("generate-trusted", "fairseq-generate", files["bin"], "--path", path, *GENERATE,
            env={"FAIRSEQ_HIER_TRUST_CHECKPOINT": "1"}, path=path, marker=marker)
    for case, trust in (("summarize-refuses", []), ("summarize-trusted", ["--trust-checkpoint"])):
        path, marker = evil(files, case)
        out = root / f"{case}.txt"
        command(case, "fairseq-hier-summarize", path.parent, source, "-o", out, "--cpu",
                "--no-progress-bar", *trust, path=path, marker=marker, out=out)

    def run_forked():
        jobs = [{"id": case, "script": "fairseq-generate", "args": [str(a) for a in args],
                 "log": str(root / f"{case}.log")} for case, (args, _) in forked.items()]
        codes = run_jobs(jobs)
        return {case: (types.SimpleNamespace(returncode=codes[case]["rc"],
                                             stdout=(root / f"{case}.log").read_text()), extra)
                for case, (_, extra) in forked.items()}

    def run_spawned(case):  # conftest.run_cli, with the case's environment
        name, args, env, extra = spawned[case]
        full_env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1", **env)
        proc = subprocess.run([str(BIN / name), *map(str, args)], env=full_env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=root)
        return case, (proc, extra)

    with ThreadPoolExecutor(max_workers=2) as pool:
        forks = pool.submit(run_forked)
        results = dict(pool.map(run_spawned, spawned))
        results.update(forks.result())
    return results


def last_line(proc):
    lines = proc.stdout.strip().splitlines()
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    return lines[-1] if lines else ""


MODULES = {"fairseq-hier-summarize": "summarize", "fairseq-hier-rank": "rank",
           "fairseq-hier-record": "record"}


def main_of(command, argv, capsys):
    """Our command's ``cli_main`` (what its console script calls, minus the ~4 s of imports of
    a fresh process) in this process: its ``returncode`` and output (``stdout``), as
    :func:`outcomes` gives them."""
    capsys.readouterr()
    main = importlib.import_module(f"fairseq_hier.cli.{MODULES[command]}").cli_main
    rc = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return types.SimpleNamespace(returncode=rc, stdout=captured.out + captured.err)


# ------------------------------------------------------------------ what loads without trust
def test_the_checkpoints_we_write_load_safely(files, tmp_path):
    """The pht trained here and the 2019-layout BART (argparse args, real key layout) in torch's
    zip and legacy formats: every global they hold is on the allow list, and fairseq's loader
    reads them without trust."""
    from fairseq import checkpoint_utils

    from fairseq_hier.safe_loading import allowed_names, trusted

    assert not trusted()
    legacy = tmp_path / "bart_legacy.pt"  # the format of the 2019 release (torch < 1.6)
    torch.save(torch.load(files["bart"], weights_only=False), legacy,
               _use_new_zipfile_serialization=False)
    for path in (files["good"], files["pht"] / "checkpoint_best.pt", files["bart"]):
        assert set(torch.serialization.get_unsafe_globals_in_checkpoint(path)) <= \
            set(allowed_names()), path
    for path in (files["good"], files["bart"], legacy):
        state = checkpoint_utils.load_checkpoint_to_cpu(str(path))
        assert state["model"] and (state.get("args") is not None or state.get("cfg"))
    bart = checkpoint_utils.load_checkpoint_to_cpu(str(legacy))
    assert bart["args"].arch == "bart_base" and "encoder.embed_tokens.weight" in bart["model"]


def test_broadcast_state_and_numpy_scalars_load_safely(files, tmp_path):
    """What rank 0 broadcasts to the other ranks (the loaded state: cfg an omegaconf DictConfig,
    tensors as fairseq's placeholders), and numpy scalars and dtypes as numpy 1.x
    (``numpy.core``) and 2.x (``numpy._core``) pickle them."""
    import io

    import numpy as np
    from fairseq import checkpoint_utils
    from fairseq.distributed import utils as distributed_utils
    from omegaconf import DictConfig

    state = checkpoint_utils.load_checkpoint_to_cpu(str(files["good"]))
    assert isinstance(state["cfg"], DictConfig)
    placeholders = distributed_utils._split_tensors_from_obj(state, [])
    buffer = io.BytesIO()
    torch.save(placeholders, buffer)
    buffer.seek(0)
    rebuilt = distributed_utils.torch.load(buffer, map_location="cpu")
    assert rebuilt["cfg"]["model"] == state["cfg"]["model"]

    payload = {"best": np.float64(1.5), "steps": np.int64(3), "dtype": np.dtype("float32"),
               "array": np.arange(3.0)}
    minimal = {"args": argparse.Namespace(arch="pht", task="translation"), "model": {},
               "optimizer_history": [{"criterion_name": "x", "lr_scheduler_state": {},
                                      "num_updates": 0, "optimizer_name": "y"}],
               "extra_state": payload}
    for numpy_package in ("numpy._core", "numpy.core"):
        path = tmp_path / f"{numpy_package}.pt"
        torch.save(minimal, path, _use_new_zipfile_serialization=False)  # one plain pickle
        data = path.read_bytes()
        if numpy_package == "numpy.core":  # as numpy 1.x wrote it
            data = data.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")
            assert b"cnumpy.core.multiarray\n" in data
        path.write_bytes(data)
        extra = checkpoint_utils.load_checkpoint_to_cpu(str(path))["extra_state"]
        assert extra["best"] == 1.5 and extra["steps"] == 3 and extra["dtype"] == np.float32
        assert extra["array"].tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------- a checkpoint that runs code
@pytest.mark.parametrize("case,prog", [("generate-refuses", "fairseq-generate"),
                                       ("summarize-refuses", "fairseq-hier-summarize")])
def test_code_running_checkpoint_is_refused_and_runs_nothing(outcomes, case, prog):
    proc, extra = outcomes[case]
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert last_line(proc) == (f"{prog}: error: checkpoint {extra['path']} holds the global "
                               f"'{SYSTEM}', {SAFE_HINT}")
    assert not extra["marker"].exists()
    assert "out" not in extra or not extra["out"].exists()


@pytest.mark.parametrize("case", ["generate-trusted", "summarize-trusted"])
def test_trusted_checkpoint_loads_the_old_way(outcomes, files, case):
    """FAIRSEQ_HIER_TRUST_CHECKPOINT=1 (fairseq-generate) and --trust-checkpoint (ours): the
    file loads with a warning, its pickle runs (the marker appears) and the command succeeds."""
    proc, extra = outcomes[case]
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f"loading {extra['path']} as a trusted checkpoint" in proc.stdout
    assert extra["marker"].exists()
    if "out" in extra:  # test.src read as one cluster: one summary
        assert len(extra["out"].read_text().splitlines()) == 1
    else:
        assert len(re.findall(r"^H-\d+\t", proc.stdout, re.M)) == 8


def test_api_refuses_unless_trusted(files):
    from fairseq_hier.inference import HierSummarizer
    from fairseq_hier.safe_loading import UnsafeCheckpoint, trusted

    path, marker = evil(files, "api_evil")
    with pytest.raises(UnsafeCheckpoint) as e:
        HierSummarizer.from_pretrained(str(path.parent), cpu=True)
    assert str(e.value) == f"checkpoint {path} holds the global '{SYSTEM}', {SAFE_HINT}"
    assert isinstance(e.value, ValueError) and not marker.exists()
    summarizer = HierSummarizer.from_pretrained(str(path.parent), cpu=True, trust_checkpoint=True)
    assert marker.exists() and len(summarizer.summarize([["w1 w2 w3"]])) == 1
    assert not trusted()  # scoped to that call


# ------------------------------------------------------------------ files that are not right
def test_unreadable_checkpoint_is_one_line(outcomes, files, tmp_path, capsys):
    """A truncated file in fairseq-generate, random bytes in fairseq-hier-summarize, an empty
    file in fairseq-hier-rank apply; nothing is written."""
    proc, extra = outcomes["generate-truncated"]
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert last_line(proc) == (f"fairseq-generate: error: checkpoint {extra['path']} {UNREADABLE}"
                               f"RuntimeError: PytorchStreamReader failed reading zip archive: "
                               f"failed finding central directory")
    source, out = files["raw"] / "test.src", tmp_path / "out.txt"
    path = files["bad"] / "random.pt"
    proc = main_of("fairseq-hier-summarize", [path, source, "-o", out, "--cpu",
                                              "--no-progress-bar"], capsys)
    assert proc.returncode == 1 and not out.exists()
    assert last_line(proc).startswith(f"fairseq-hier-summarize: error: checkpoint {path} "
                                      f"{UNREADABLE}it starts with b'\\x13"), last_line(proc)
    path = files["bad"] / "empty.pt"
    proc = main_of("fairseq-hier-rank", ["apply", "--path", path, "-i", source, "-o", out,
                                         "--cpu", "--no-progress-bar"], capsys)
    assert proc.returncode == 1 and not out.exists()
    assert last_line(proc) == (f"fairseq-hier-rank apply: error: checkpoint {path} {UNREADABLE}it "
                               f"ends "
                               f"before its first object (an empty or truncated file)")


def test_record_print_arch_refuses_unless_trusted(files, capsys):
    path, marker = evil(files, "record_evil")
    proc = main_of("fairseq-hier-record", ["data", "--print-arch", path], capsys)
    assert proc.returncode == 1 and not marker.exists()
    assert last_line(proc).startswith(f"fairseq-hier-record data: error: checkpoint {path} holds "
                                      f"the "
                                      f"global 'posix.system'"), last_line(proc)
    proc = main_of("fairseq-hier-record", ["data", "--print-arch", path, "--trust-checkpoint"],
                   capsys)
    assert proc.returncode == 0 and last_line(proc) == "pht" and marker.exists()


def test_a_cut_that_torch_answers_with_an_os_error_is_one_line(outcomes, files, tmp_path,
                                                               capsys):
    """torch raises OSError(EINVAL), not RuntimeError, for some cut points: every loader still
    names the file and says it is cut or corrupt."""
    path = files["bad"] / "einval.pt"
    why = f"{UNREADABLE}reading it failed (Invalid argument), as it does on a file cut short"
    proc, extra = outcomes["generate-einval"]
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert last_line(proc) == f"fairseq-generate: error: checkpoint {path} {why}"
    source, out = files["raw"] / "test.src", tmp_path / "out.txt"
    for command, prog, argv in (
            ("fairseq-hier-summarize", "fairseq-hier-summarize", [path, source, "-o", out]),
            ("fairseq-hier-rank", "fairseq-hier-rank apply",
             ["apply", "--path", path, "-i", source, "-o", out])):
        proc = main_of(command, [*argv, "--cpu", "--no-progress-bar"], capsys)
        assert proc.returncode == 1 and not out.exists()
        assert last_line(proc) == f"{prog}: error: checkpoint {path} {why}"
    from fairseq_hier.errors import HierError
    from fairseq_hier.inference import HierSummarizer

    with pytest.raises(HierError, match=f"^checkpoint {re.escape(str(path))} {re.escape(why)}$"):
        HierSummarizer.from_pretrained(str(path), cpu=True)


def test_checkpoint_of_another_task_is_one_line(outcomes, files, tmp_path, capsys):
    proc, extra = outcomes["generate-bart"]
    assert proc.returncode == 1
    assert last_line(proc) == (
        f"fairseq-generate: error: checkpoint {files['bart']} holds a bart_base model trained "
        f"with task translation, not a model of task hierarchical_summarization (what this "
        f"command runs)")
    out = tmp_path / "ranked.txt"  # a summarizer where a paragraph ranker is expected
    proc = main_of("fairseq-hier-rank", ["apply", "--path", files["good"], "-i",
                                         files["raw"] / "test.src", "--output", out, "--cpu",
                                         "--no-progress-bar"], capsys)
    assert proc.returncode == 1 and not out.exists()
    assert last_line(proc) == (
        f"fairseq-hier-rank apply: error: checkpoint {files['good']} holds a pht model trained with "
        f"task hierarchical_summarization, not a model of task paragraph_ranking (what this "
        f"command runs)")


def test_checkpoint_of_another_dictionary_is_one_line(outcomes, files):
    """The same task on a data-bin whose dictionaries have two more words: the weights do not
    fit (today's size mismatch traceback), named with both shapes."""
    proc, _ = outcomes["generate-other-dictionary"]
    assert proc.returncode == 1
    rows = len((files["bin"] / "dict.src.txt").read_text().splitlines()) + 4  # + specials
    assert re.fullmatch(
        rf"fairseq-generate: error: checkpoint {re.escape(str(files['good']))} holds a pht model "
        rf"trained with task hierarchical_summarization that does not fit the model built here "
        rf"\(\S+embed_tokens\.weight is \[{rows}, 32\] in the checkpoint, \[{rows + 2}, 32\] in "
        rf"the model built here, and \d+ more\): was it trained on other data \(another "
        rf"dictionary\) or with other model options\?", last_line(proc)), last_line(proc)


def test_api_unreadable_and_foreign_checkpoints(files):
    from fairseq_hier.errors import HierError
    from fairseq_hier.inference import HierSummarizer

    for name in ("truncated.pt", "random.pt", "empty.pt", "text.pt"):
        path = files["bad"] / name
        with pytest.raises(HierError, match=rf"^checkpoint {re.escape(str(path))} "
                                            rf"{re.escape(UNREADABLE)}"):
            HierSummarizer.from_pretrained(str(path), cpu=True)
    with pytest.raises(HierError) as e:  # a pretrained BART is no summarizer
        HierSummarizer.from_pretrained(str(files["bart"]), cpu=True)
    assert str(e.value) == (f"checkpoint {files['bart']} holds a bart_base model trained with "
                            f"task translation; the summarizer decodes checkpoints of "
                            f"document_translation, hat_summarization, hierarchical_summarization")


# ------------------------------------------------------------------- the summarisation API
@pytest.fixture(scope="module")
def summarizer(files):
    from fairseq_hier.inference import HierSummarizer

    return HierSummarizer.from_pretrained(str(files["pht"]), cpu=True)


EXAMPLES = [["w1 w2 w3\n\nw4 w5", "w7 w8 w9"], {"title": "w3", "documents": ["w1 w1 w2"]}]


def test_the_documented_example_runs_as_written(files, tmp_path, monkeypatch):
    """The Python block of the inference page (docs/inference.md), with its checkpoint directory
    pointed at ours, run where its new.jsonl holds two examples."""
    (tmp_path / "new.jsonl").write_text(
        json.dumps({"title": "w1", "documents": ["w2 w3 w4", "w5 w6"]}) + "\n"
        + json.dumps({"documents": ["w3 w4 w5"]}) + "\n")
    monkeypatch.chdir(tmp_path)
    page = (ROOT / "docs" / "inference.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S)
                 if "HierSummarizer.from_pretrained" in b and "summarize(" in b)
    assert re.search(r"\.summarize\(.*beam=3\)", block, re.S)
    namespace = {}
    exec(block.replace('"runs/pht"', repr(str(files["pht"]))), namespace)  # noqa: S102
    assert len(namespace["examples"]) == 2
    assert isinstance(namespace["summarizer"].summarize(EXAMPLES, beam=3), list)


def test_pipeline_options_are_checked_against_the_record(files):
    """``pipeline_options`` (summarize --split-sentences) that the checkpoint's pipeline does not
    have: one line naming the pipeline and the option."""
    from fairseq_hier.errors import HierError
    from fairseq_hier.inference import HierSummarizer

    with pytest.raises(HierError, match=r"pipeline paragraphs of .*checkpoint_\w+\.pt has no "
                                        r"option split_lines$"):
        HierSummarizer.from_pretrained(str(files["pht"]), cpu=True,
                                       pipeline_options={"split_lines": True})


def test_decoding_options_per_call(files, summarizer):
    """summarize(..., beam=1, max_len_b=3) decodes as a summarizer loaded with those options,
    for that call only; the loaded options stay as they were."""
    from fairseq_hier.inference import HierSummarizer

    once = summarizer.summarize(EXAMPLES, beam=1, max_len_b=3)
    loaded = HierSummarizer.from_pretrained(str(files["pht"]), cpu=True, beam=1, max_len_b=3)
    assert once == loaded.summarize(EXAMPLES)
    assert all(len(s.split()) <= 3 for s in once)
    assert summarizer.cfg.generation.beam == 2 and summarizer.cfg.generation.max_len_b == 6
    hypos = summarizer.generate(["title w3 <P> w1 w2 w3 <P> w4 w5"], nbest=2)
    assert len(hypos[0]) == 2


@pytest.mark.parametrize("options,message", [
    (dict(beam=-3), "summarize(): --beam must be >= 1, got -3"),
    (dict(nbest=5), "summarize(): --nbest must be >= 1 and <= 2, got 5"),
    (dict(beam="x"), "summarize(): argument --beam: invalid int value: 'x'"),
    (dict(max_paragraphs=3), "summarize(): max_paragraphs: not a decoding option (fairseq's "
                             "GenerationConfig: beam, "),
])
def test_bad_decoding_options_per_call(summarizer, options, message):
    from fairseq_hier.errors import HierError

    with pytest.raises(HierError) as e:
        summarizer.summarize(EXAMPLES, **options)
    assert str(e.value).startswith(message), str(e.value)


@pytest.mark.parametrize("options,message", [
    (dict(no_such_option=3), "HierSummarizer.from_pretrained: unknown option no_such_option "
                             "(fairseq-generate with task hierarchical_summarization has no such "
                             "option)"),
    (dict(generation="--beam 2 --no-such-flag"), "HierSummarizer.from_pretrained: unknown option "
                                                 "--no-such-flag (fairseq-generate with task "
                                                 "hierarchical_summarization has no such option)"),
    (dict(beam="x"), "HierSummarizer.from_pretrained: argument --beam: invalid int value: 'x'"),
    (dict(max_len_b=-5), "HierSummarizer.from_pretrained: --max-len-b must be >= 0, got -5"),
])
def test_bad_options_of_from_pretrained_are_value_errors(files, options, message):
    """A library call never exits the process: fairseq's argparse errors become one line."""
    from fairseq_hier.inference import HierSummarizer

    with pytest.raises(ValueError) as e:
        HierSummarizer.from_pretrained(str(files["pht"]), cpu=True, **options)
    assert str(e.value) == message


def test_record_files_stay_in_their_folder(files, tmp_path):
    """The preprocessing record a checkpoint carries is written to a temporary folder: a file
    name that leads outside it (a checkpoint built to overwrite a file on load) is refused."""
    from fairseq_hier.errors import HierError
    from fairseq_hier.inference import HierSummarizer

    state = torch.load(files["good"], weights_only=False)  # our own file, trusted
    escaped = tmp_path / "escaped.txt"
    name = "../" * 12 + str(escaped).lstrip("/")  # from any temporary folder to `escaped`
    state["task_state"]["hier_preprocess"]["files"][name] = b"overwritten"
    path = tmp_path / "ck" / "checkpoint_best.pt"
    path.parent.mkdir()
    torch.save(state, path)
    with pytest.raises(HierError) as e:
        HierSummarizer.from_pretrained(str(path.parent), cpu=True)
    assert str(e.value) == (f"checkpoint {path}: its preprocessing record holds the file "
                            f"{name!r}, a path outside the record's folder")
    assert not escaped.exists()


def test_decoding_lengths_fairseq_would_assert_on_are_one_line(files):
    """--min-len above --max-len-b (with --max-len-a 0) or above the model's target positions:
    fairseq's generator asserts on the first batch; the summarizer says so when loading."""
    from fairseq_hier.errors import HierError
    from fairseq_hier.inference import HierSummarizer

    with pytest.raises(HierError, match=r"--min-len 9 is more than --max-len-b 6; give a smaller "
                                        r"--min-len or a larger --max-len-b \(generation\)$"):
        HierSummarizer.from_pretrained(str(files["pht"]), cpu=True, min_len=9, max_len_a=0,
                                       max_len_b=6)
    with pytest.raises(HierError, match=r"--min-len 100000 is more than the model's \d+ target "
                                        r"steps \(its --max-target-positions \d+\)"):
        HierSummarizer.from_pretrained(str(files["pht"]), cpu=True, min_len=100000, max_len_a=1)
