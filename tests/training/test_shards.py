"""``--shard K/N`` of the preparation steps (fairseq_hier/data/shards.py): two shards prepared
apart hold, together, exactly one whole preparation's examples and sidecar lines; later steps
process a shard's output whole and refuse to cut it again; the shards, binarised with one
dictionary, train through fairseq's colon syntax, one shard per epoch, their sidecars following."""

import json
import random
import re

import numpy as np
import pytest

from conftest import WORDS, run_cli, train_args, write_tiny_gpt2_bpe
from fairseq_hier.data.shards import Shard, parse_shard

SHARDS = ("0/2", "1/2")
LIU = ["--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2", "--graph-head", "1"]


def words(rng, k):
    return " ".join(rng.choices(WORDS, k=k))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Your own data (7 train, 3 valid examples) and a SAMSum-style split of 5 dialogues."""
    folder = tmp_path_factory.mktemp("shard_corpus")
    rng = random.Random(4)
    for split, n in (("train", 7), ("valid", 3)):
        with open(folder / f"{split}.jsonl", "w") as f:
            for _ in range(n):
                docs = [f"{words(rng, 6)} . {words(rng, 4)} ." for _ in range(rng.randint(2, 3))]
                f.write(json.dumps({"documents": docs, "summary": words(rng, 5) + " ."}) + "\n")
    dialogues = [{"id": f"d{i}", "summary": words(rng, 5) + " .",
                  "dialogue": "\n".join(f"{rng.choice(['Kim', 'Lee', 'Ann'])}: {words(rng, 4)}"
                                        for _ in range(rng.randint(2, 4)))} for i in range(5)]
    (folder / "train.json").write_text(json.dumps(dialogues))
    return folder


def cat(paths):
    return b"".join(p.read_bytes() for p in paths)


def marker(path):
    return json.loads((path.parent / (path.name + ".shard")).read_text())


def test_the_rule_and_its_bounds():
    """Shard K of N of n examples: [K*n//N, (K+1)*n//N); the blocks tile 0..n."""
    assert parse_shard("1/3") == Shard(1, 3)
    for n in (3, 7, 10):
        for count in (1, 2, 3):
            blocks = [Shard(k, count).bounds(n) for k in range(count)]
            assert blocks[0][0] == 0 and blocks[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
            assert blocks == [(k * n // count, (k + 1) * n // count) for k in range(count)]


@pytest.mark.parametrize("value,why", [("3/2", "expected K/N with 0 <= K < N, got '3/2'"),
                                       ("1/0", "expected K/N with 0 <= K < N, got '1/0'"),
                                       ("x", "expected K/N (shard K of N, 0 <= K < N), got 'x'")])
def test_bad_shard_values_are_one_line(corpus, tmp_path, value, why):
    proc = run_cli("fairseq-hier-to-raw", "--format", "jsonl", "--train", corpus / "train.jsonl",
                   "--output-dir", tmp_path, "--shard", value, check=False)
    assert proc.returncode == 2
    assert proc.stdout == f"fairseq-hier-to-raw: error: argument --shard: {why}\n"


def test_sentence_bos_shards_concatenate_to_the_whole(corpus, tmp_path):
    """HAT's path: source, target, sentence counts, speaker segments, references and ids."""
    bpe = write_tiny_gpt2_bpe(tmp_path / "bpe")
    common = ["--format", "samsum", "--input", corpus / "train.json", "--speakers",
              "--gpt2-encoder-json", bpe / "encoder.json", "--gpt2-vocab-bpe", bpe / "vocab.bpe",
              "--max-source-positions", "64", "--max-target-positions", "16", "--no-progress-bar"]
    run_cli("fairseq-hier-sentence-bos", *common, "--output-prefix", tmp_path / "whole" / "train")
    logs = [run_cli("fairseq-hier-sentence-bos", *common, "--shard", s, "--output-prefix",
                    tmp_path / f"shard{k}" / "train").stdout for k, s in enumerate(SHARDS)]
    assert "shard 0/2 (records 0-1 of 5 of" in logs[0] and ": 2 records" in logs[0]
    assert "shard 1/2 (records 2-4 of 5 of" in logs[1] and ": 3 records" in logs[1]
    for suffix in ("source", "target", "sentences", "segments", "ref", "ids"):
        whole = (tmp_path / "whole" / f"train.{suffix}").read_bytes()
        parts = [tmp_path / f"shard{k}" / f"train.{suffix}" for k in range(2)]
        assert cat(parts) == whole and all(p.read_bytes() for p in parts), suffix
        assert marker(parts[1])["first"] == 2 and marker(parts[1])["of"] == 5
        assert not (tmp_path / "whole" / f"train.{suffix}.shard").exists()
    assert (tmp_path / "shard1" / "train.ids").read_text() == "d2\nd3\nd4\n"


@pytest.fixture(scope="module")
def hierarchical(corpus, tmp_path_factory):
    """jsonl-to-raw whole and in two shards; tf-idf graphs of the whole and of each shard's raw
    source (the shard step run without --shard), and of shard 1 cut from the whole source."""
    out = tmp_path_factory.mktemp("hier")
    run_cli("fairseq-hier-to-raw", "--format", "jsonl", "--input-dir", corpus, "--splits",
            "train,valid",
            "--output-dir", out / "whole")
    for k, s in enumerate(SHARDS):
        run_cli("fairseq-hier-to-raw", "--format", "jsonl", "--train", corpus / "train.jsonl",
                "--output-dir", out / f"shard{k}", "--shard", s)
    for name in ("whole", "shard0", "shard1"):
        run_cli("fairseq-hier-graph", "-i", out / name / "train.src", "--kind", "tfidf",
                "--output-prefix", out / name / "train.graph.tfidf", "--no-progress-bar")
    run_cli("fairseq-hier-graph", "-i", out / "whole" / "valid.src", "--kind", "tfidf",
            "--output-prefix", out / "whole" / "valid.graph.tfidf", "--no-progress-bar")
    run_cli("fairseq-hier-graph", "-i", out / "whole" / "train.src", "--kind", "tfidf",
            "--output-prefix", out / "cut1", "--shard", "1/2", "--no-progress-bar")
    return out


def test_raw_and_graph_shards_concatenate_to_the_whole(hierarchical):
    out = hierarchical
    for suffix in ("src", "tgt", "ids"):
        parts = [out / f"shard{k}" / f"train.{suffix}" for k in range(2)]
        assert cat(parts) == (out / "whole" / f"train.{suffix}").read_bytes(), suffix
        assert [marker(p)["shard"] for p in parts] == list(SHARDS)
    assert (out / "shard1" / "train.ids").read_text() == "4\n5\n6\n7\n"  # the whole file's lines
    whole = {k: np.load(out / "whole" / f"train.graph.tfidf.{k}.npy") for k in ("sizes", "values")}
    for key in ("sizes", "values"):
        parts = [np.load(out / f"shard{k}" / f"train.graph.tfidf.{key}.npy") for k in range(2)]
        assert np.array_equal(np.concatenate(parts), whole[key]), key
        cut = np.load(out / f"cut1.{key}.npy")  # --shard 1/2 on the whole source: the same
        assert np.array_equal(cut, parts[1]), key
    assert len(whole["sizes"]) == 7


def test_a_shard_is_not_cut_twice_and_shards_do_not_mix(hierarchical, tmp_path):
    out = hierarchical
    again = run_cli("fairseq-hier-graph", "-i", out / "shard0" / "train.src", "--kind",
                    "tfidf", "--output-prefix", tmp_path / "g", "--shard", "0/2", check=False)
    assert again.returncode == 1
    line = again.stdout.splitlines()[-1]
    assert line.startswith(f"fairseq-hier-graph: error: --shard 0/2: {out}/shard0/train.src is "
                           f"already shard 0/2 (examples 0-2 of 7 of "), line
    assert line.endswith(f"train.jsonl) ({out}/shard0/train.src.shard); run this step without "
                         f"--shard to process it whole"), line
    mixed = run_cli("fairseq-hier-rank", "labels", "--source", out / "shard0" / "train.src",
                    "--target", out / "shard1" / "train.tgt", "--output", tmp_path / "l",
                    check=False)
    assert mixed.returncode == 1 and "error: inputs of different shards: " in mixed.stdout
    # run whole, a shard's output carries its marker on
    run_cli("fairseq-hier-rank", "labels", "--source", out / "shard1" / "train.src", "--target",
            out / "shard1" / "train.tgt", "--output", tmp_path / "labels")
    assert marker(tmp_path / "labels") == marker(out / "shard1" / "train.src")
    empty = run_cli("fairseq-hier-rank", "labels", "--source", out / "whole" / "valid.src",
                    "--target", out / "whole" / "valid.tgt", "--output", tmp_path / "l",
                    "--shard", "0/4", check=False)
    assert empty.stdout.splitlines()[-1].endswith(
        "valid.src has 3 examples, so shard 0 of 4 would be empty (use at most 3 shards)")


def test_two_shards_train_through_the_colon_syntax(hierarchical, tmp_path):
    """Binarised with one dictionary (shard 0's); valid in the first folder; each epoch reads
    its shard's split and graphs (3 and 4 examples: another shard's graphs would be refused)."""
    out, bins = hierarchical, []
    for k in range(2):
        dest = tmp_path / f"shard{k}"
        args = ["--source-lang", "src", "--target-lang", "tgt", "--trainpref",
                out / f"shard{k}" / "train", "--destdir", dest, "--workers", "1"]
        if k == 0:
            args += ["--validpref", out / "whole" / "valid", "--joined-dictionary"]
        else:
            args += ["--srcdict", bins[0] / "dict.src.txt", "--tgtdict", bins[0] / "dict.tgt.txt"]
        run_cli("fairseq-preprocess", *args)
        for key in ("sizes", "offsets", "values"):
            (dest / f"train.graph.tfidf.{key}.npy").write_bytes(
                (out / f"shard{k}" / f"train.graph.tfidf.{key}.npy").read_bytes())
        bins.append(dest)
    for key in ("sizes", "offsets", "values"):
        (bins[0] / f"valid.graph.tfidf.{key}.npy").write_bytes(
            (out / "whole" / f"valid.graph.tfidf.{key}.npy").read_bytes())
    assert (bins[0] / "dict.src.txt").read_bytes() == (bins[1] / "dict.src.txt").read_bytes()
    log = run_cli("fairseq-train", *train_args(f"{bins[0]}:{bins[1]}", "liu_ht", tmp_path / "ck",
                                               100, LIU + ["--paragraph-graph", "tfidf",
                                                           "--max-epoch", "2"])).stdout
    # fairseq's "loaded N examples from: DIR/SPLIT.src-tgt.src" lines, in order (the train split
    # is loaded again at the end of each epoch, for the next)
    reads = re.findall(r"loaded (\d+) examples from: (\S+)/(train|valid)\.src-tgt\.src\n", log)
    train = [(n, folder.rsplit("/", 1)[-1]) for n, folder, split in reads if split == "train"]
    assert train[:2] == [("3", "shard0"), ("4", "shard1")], log[-3000:]
    assert {folder for _, folder, split in reads if split == "valid"} == {str(bins[0])}
    assert "end of epoch 2" in log
