"""Shared fixtures: tiny raw corpora, binarised once per session with the real fairseq-preprocess.

fairseq commands are run as subprocesses through the real console scripts of this virtualenv.
"""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
USER_DIR = str(ROOT / "fairseq_hier")
# small model: fast on 2 CPU cores, same widths for every architecture
SMALL_MODEL = ["--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32",
               "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
               "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2",
               "--decoder-attention-heads", "2"]


def run_cli(name, *args, cwd=None, check=True):
    """Run a console script of this virtualenv; return the CompletedProcess (stdout+stderr text)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    proc = subprocess.run([str(BIN / name), *map(str, args)], cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and proc.returncode != 0:
        raise AssertionError(f"{name} failed ({proc.returncode}):\n{proc.stdout[-4000:]}")
    return proc


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


def preprocess(raw: Path, dest: Path, validpref=None):
    args = ["--source-lang", "src", "--target-lang", "tgt", "--trainpref", raw / "train",
            "--validpref", validpref or raw / "valid", "--testpref", raw / "test",
            "--destdir", dest, "--joined-dictionary", "--workers", "1"]
    run_cli("fairseq-preprocess", *args)
    return dest


@pytest.fixture(scope="session")
def data_bin(tmp_path_factory):
    raw = write_toy_corpus(tmp_path_factory.mktemp("raw"))
    return preprocess(raw, tmp_path_factory.mktemp("bin") / "data-bin")


def train_args(data, arch, save_dir, max_update, extra=()):
    args = [data, "--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--arch", arch,
            "--max-paragraphs", "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30",
            "--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "300",
            "--max-update", str(max_update), "--save-dir", save_dir, "--no-progress-bar",
            "--log-interval", "1", "--seed", "3", "--num-workers", "0", *SMALL_MODEL, *extra]
    if arch == "transformer":
        args.append("--share-all-embeddings")
    return args
