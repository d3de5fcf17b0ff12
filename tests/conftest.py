"""Shared fixtures: tiny raw corpora, binarised once per session with the real fairseq-preprocess.

Commands run through the console scripts of this virtualenv (:func:`run_cli`): as processes of
their own, or, for those that import torch and fairseq first (:data:`WARM_COMMANDS`), as forks of
one warm process per test process that runs the console script's entry point with the command's
arguments, working directory and environment (tests/support/cli_forkserver.py). The recipes' shell
scripts (:func:`run_recipe`) send their warm commands there too, through shims first on their
PATH (``cli_forkserver.gateway``); their other commands run as processes of their own.
"""

import contextlib
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the helpers every folder's tests share (tests/support/) import by their bare names
sys.path.insert(0, str(ROOT / "tests" / "support"))

from cli_forkserver import gateway, run_jobs, stop_server  # noqa: E402

from fairseq_hier.pretrained.bart import TINY_BART, width_flags, write_random  # noqa: E402
from fairseq_hier.pretrained.gpt2_bpe import vocabulary, write_fairseq_files  # noqa: E402
from fairseq_hier.recipes.architectures import SMALL, cli_args  # noqa: E402
from fairseq_hier.recipes.architectures import TINY_HAT as ARCHITECTURE_TINY_HAT  # noqa: E402

BIN = Path(sys.executable).parent
USER_DIR = str(ROOT / "fairseq_hier")
# small model: fast on 2 CPU cores, same widths for every architecture
SMALL_MODEL = cli_args(SMALL)  # the table of architectures' small end-to-end model


# The test files that take longest (seconds of test time on 2 cores, from `pytest --durations=0`),
# longest first. They start first, so that the two workers of `make test` finish together instead
# of one running a long file alone at the end (xdist's loadfile schedules files in this order with
# --no-loadscope-reorder; by default it orders them by their number of tests).
LONGEST_FILES = ("test_hat_recipes.py", "test_wikisum_recipe.py", "test_gpu_check.py",
                 "test_five_best.py", "test_distributed.py", "test_doc_mt.py",
                 "test_front_door.py", "test_own_data_recipe.py", "test_parsingsum_e2e.py",
                 "test_precision.py", "test_safe_loading.py", "test_own_data_mt.py",
                 "test_hf_bart.py", "test_run_folder.py", "test_workers.py", "test_report.py",
                 "test_attention_alignment.py", "test_command_failures.py",
                 "test_reliability_recipes.py", "test_startup.py", "test_reliability_commands.py",
                 "test_reliability_scoring.py", "test_mds_decode_recipe.py", "test_shards.py",
                 "test_interactive.py", "test_bart_tools.py")


def pytest_collection_modifyitems(config, items):
    """Longest files first (:data:`LONGEST_FILES`); the order of tests within a file and of the
    other files is kept."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for a torch.distributed rendezvous)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The commands that import torch and fairseq before they do anything (~4 s each here): run_cli
# sends them to this test process's warm server (tests/support/cli_forkserver.py: a fork of one
# process that imported them once runs the command's entry point with its arguments, working
# directory and environment). fairseq's own commands go there only with --user-dir (the server
# has this plugin registered, as --user-dir would) or when they take no plugin
# (fairseq-preprocess).
WARM_COMMANDS = ("fairseq-train", "fairseq-generate", "fairseq-validate", "fairseq-preprocess",
                 "fairseq-hier-record", "fairseq-hier-summarize", "fairseq-hier-extract-attention",
                 "fairseq-hier-rank", "fairseq-hier-decode", "fairseq-hier-bart")


def warm(name, args) -> bool:
    """Whether :func:`run_cli` runs ``name args`` in the warm server."""
    return name in WARM_COMMANDS and (name.startswith("fairseq-hier-")
                                      or name == "fairseq-preprocess" or "--user-dir" in args)


def pytest_sessionfinish(session, exitstatus):
    stop_server()


def run_cli(name, *args, cwd=None, check=True, fork=None):
    """Run a console script of this virtualenv; return the CompletedProcess (stdout+stderr text).
    ``fork``: through the warm server (True), as a process of its own (False), or as
    :func:`warm` decides (None)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    argv = [str(BIN / name), *map(str, args)]
    if fork if fork is not None else warm(name, argv[1:]):
        log = tempfile.NamedTemporaryFile(prefix=f"{name}.", suffix=".log", delete=False)
        log.close()
        try:
            job = {"id": name, "script": name, "args": argv[1:], "log": log.name,
                   "cwd": str(cwd or os.getcwd()), "env": env}
            rc = run_jobs([job], workers=1)[name]["rc"]
            proc = subprocess.CompletedProcess(argv, rc, Path(log.name).read_text())
        finally:
            os.unlink(log.name)
    else:
        proc = subprocess.run(argv, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    if check and proc.returncode != 0:
        raise AssertionError(f"{name} failed ({proc.returncode}):\n{proc.stdout[-4000:]}")
    return proc


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "16k"):
    """A tmpfs of ``size`` mounted on ``folder`` (a full disk for the writers' tests); the test is
    skipped, with the reason, where this process may not mount one (not root, no mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs",
                               str(folder)], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("cannot fill a disk: no mount command")
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a {size} tmpfs on {folder} to fill it: "
                    f"{(proc.stderr or proc.stdout).strip() or f'exit {proc.returncode}'}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def run_recipe(script, *args, env=None):
    """Run a recipe script with this virtualenv's commands first on PATH, its warm commands
    through this process's warm server (cli_forkserver.gateway)."""
    with gateway(BIN) as shims:
        full_env = dict(os.environ, PATH=os.pathsep.join([shims, str(BIN), os.environ["PATH"]]),
                        OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", WORKERS="1", PRECISION="",
                        GPUS="1")
        full_env.update(env or {})
        proc = subprocess.run(["bash", str(script), *map(str, args)], env=full_env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise AssertionError(f"{script} failed ({proc.returncode}):\n{proc.stdout[-5000:]}")
    return proc.stdout


class Touch:
    """Pickled as a call of ``os.system("touch PATH")``: what a malicious checkpoint does."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        import shlex

        return (os.system, (f"touch {shlex.quote(self.path)}",))


def train_recorded_pht(data_bin: Path, root: Path, updates: int) -> Tuple[Path, Path]:
    """A copy of ``data_bin`` at ``root/data-bin`` with a preprocessing record (pipeline
    ``paragraphs``, decoding ``--beam 2 --max-len-b 6``) and a pht trained ``updates`` updates on
    it in ``root/ck``: (data-bin, checkpoint folder)."""
    from fairseq_hier.inference.record import write_record

    data = root / "data-bin"
    shutil.copytree(data_bin, data)
    write_record(str(data), "hierarchical_summarization", "paragraphs", {}, {},
                 ["--beam", "2", "--max-len-b", "6"])
    run_cli("fairseq-train", *train_args(data, "pht", root / "ck", updates))
    return data, root / "ck"


def write_toy_corpus(folder: Path, sizes=(("train", 48), ("valid", 8), ("test", 8)), seed=0):
    """Raw files in the task's format: `title <P> p1 <P> p2 ...` / summary."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in sizes:
        src, tgt = [], []
        for _ in range(n):
            paragraphs = [" ".join(rng.choices(words, k=rng.randint(3, 9)))
                          for _ in range(rng.randint(2, 5))]
            src.append(f"title {rng.choice(words)} <P> " + " <P> ".join(paragraphs))
            tgt.append(" ".join(rng.choices(words, k=rng.randint(3, 7))) + " .")
        (folder / f"{split}.src").write_text("\n".join(src) + "\n")
        (folder / f"{split}.tgt").write_text("\n".join(tgt) + "\n")
    return folder


def write_paragraph_corpus(src: Path, tgt: Path, n: int, paragraphs: int, words: int, seed=0):
    """``n`` examples of ``title <P> p1 <P> ...`` (``paragraphs`` paragraphs of ``words`` words of
    300) in ``src`` and a 30-word target each in ``tgt``: sizeable inputs for the workers and the
    writers' tests."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(300)]
    with open(src, "w") as s, open(tgt, "w") as t:
        for _ in range(n):
            s.write("title " + " <P> ".join(" ".join(rng.choices(vocabulary, k=words))
                                            for _ in range(paragraphs)) + "\n")
            t.write(" ".join(rng.choices(vocabulary, k=30)) + "\n")


def preprocess(raw: Path, dest: Path, validpref=None):
    args = ["--source-lang", "src", "--target-lang", "tgt", "--trainpref", raw / "train",
            "--validpref", validpref or raw / "valid", "--testpref", raw / "test",
            "--destdir", dest, "--joined-dictionary", "--workers", "1"]
    run_cli("fairseq-preprocess", *args)
    return dest


@pytest.fixture(scope="session")
def raw_corpus(tmp_path_factory):
    """The raw files (``{train,valid,test}.{src,tgt}``) behind :func:`data_bin`."""
    return write_toy_corpus(tmp_path_factory.mktemp("raw"))


@pytest.fixture(scope="session")
def data_bin(raw_corpus, tmp_path_factory):
    return preprocess(raw_corpus, tmp_path_factory.mktemp("bin") / "data-bin")


def train_args(data, arch, save_dir, max_update, extra=()):
    args = [data, "--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--arch", arch,
            "--max-paragraphs", "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30",
            "--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "300",
            "--max-update", str(max_update), "--save-dir", save_dir, "--no-progress-bar",
            "--log-interval", "1", "--seed", "3", "--num-workers", "0", *SMALL_MODEL, *extra]
    if arch == "transformer":
        args.append("--share-all-embeddings")
    return args


# ---------------------------------------------------------------- tiny BART + GPT-2 BPE (HAT)
WORDS = ("the", "a", "model", "reads", "long", "papers", "and", "writes", "short", "notes",
         "every", "sentence", "has", "its", "own", "marker", "we", "study", "meetings", "about",
         "design", "remote", "control", "price", "team", "agrees", "on", "colour", "budget",
         "results", "show", "gains", "in", "tests", "with", "new", "data")


def tiny_words(words=WORDS):
    """``words`` as the byte symbols of the tiny BPE: each with its leading space ('Ġ') and
    without."""
    return [prefix + word for word in words for prefix in ("Ġ", "")]


def write_tiny_gpt2_bpe(folder: Path, words=WORDS):
    """encoder.json / vocab.bpe in GPT-2's real layout: the 256 byte symbols, plus merges that
    build each word of ``words`` (with and without its leading space) left to right; BART's
    dict.txt over those ids (fairseq_hier.pretrained.gpt2_bpe, as ``fairseq-hier bart random``)."""
    write_fairseq_files(str(folder), vocabulary(tiny_words(words), max_merges=None))
    return folder


@pytest.fixture(scope="session")
def tiny_bart_dir(tmp_path_factory):
    """BART_DIR of the HAT recipes: dict.txt, encoder.json, vocab.bpe and model.pt, all tiny:
    ``fairseq-hier bart random --size tiny`` over the BPE of :func:`write_tiny_gpt2_bpe`."""
    import fairseq_hier

    fairseq_hier.register()
    folder = tmp_path_factory.mktemp("bart")
    write_random(str(folder), layout="fairseq", size="tiny", words=tiny_words(), max_merges=None,
                 seed=1)
    return folder


def tiny_bart_flags(**overrides):
    """fairseq-train flags giving a model the tiny BART's widths."""
    return width_flags({**TINY_BART, **overrides})


# ------------------------------------------------------------- tiny models built in-process
TINY_HAT = dict(ARCHITECTURE_TINY_HAT)  # HAT's tiny dims (fairseq_hier/recipes/architectures.py)


def make_dict(n):
    """A fairseq Dictionary of ``n`` symbols: the 4 specials, then w0, w1, ..."""
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n - len(d)):
        d.add_symbol(f"w{i}")
    return d


def build_model(arch, d, **kw):
    """An architecture built as a fairseq run builds it (legacy args namespace)."""
    import argparse
    import types

    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    args = argparse.Namespace(**{"task": "translation", **kw})
    ARCH_CONFIG_REGISTRY[arch](args)
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task)


def bos_source(*lengths, offset=10, bos=0, eos=2):
    """One HAT source: a sentence of each length, every one opening with BOS; then EOS."""
    import torch

    tokens = []
    for n in lengths:
        tokens += [bos] + [offset + (len(tokens) + i) % 15 for i in range(n)]
    return torch.tensor(tokens + [eos])


def left_pad(seqs, pad=1):
    """Stack 1-D sources into ``B x S``, left-padded as fairseq's translation task pads them."""
    import torch

    width = max(len(s) for s in seqs)
    return torch.stack([torch.cat([s.new_full((width - len(s),), pad), s]) for s in seqs])


# ------------------------------------------------- in-process batches for hierarchical models
def paragraph_dict(n=20):
    """A Dictionary of the 4 specials, w0..w{n-1} and the paragraph separator ``<P>``."""
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(n):
        d.add_symbol(f"w{i}")
    d.add_symbol("<P>")
    return d


def paragraph_batch(d, examples, num_p=None, num_l=None):
    """List of ``P_i x L_i`` examples -> ``B x P x L`` padded with pad (absent paragraphs: pad)."""
    import torch

    num_p = num_p or max(e.size(0) for e in examples)
    num_l = num_l or max(e.size(1) for e in examples)
    out = torch.full((len(examples), num_p, num_l), d.pad())
    for i, e in enumerate(examples):
        out[i, : e.size(0), : e.size(1)] = e
    return out


def random_prev_tokens(d, b, t, seed=1):
    """``B x T`` random previous-output tokens, EOS first (fairseq's teacher forcing input)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    prev = torch.randint(d.nspecial, len(d), (b, t), generator=g)
    prev[:, 0] = d.eos()
    return prev


def run_benchmark(name, argv, monkeypatch, capsys):
    """``benchmarks/NAME.py``'s main on CPU with ``argv``, in this process (fairseq's ~4 s import
    paid once; the benchmarks import the package ``benchmarks``, as when run as scripts) on one
    thread (tiny ops on 2 busy cores: two threads only wait on each other); returns (stdout, the
    JSON of its last line)."""
    import torch  # the benchmark tests' only: the other tests' workers start without it

    monkeypatch.syspath_prepend(str(ROOT))  # before pysbd's top-level package `benchmarks`
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        importlib.import_module(f"benchmarks.{name}").main(["--device", "cpu", *argv])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    return out, json.loads(out.strip().splitlines()[-1])
