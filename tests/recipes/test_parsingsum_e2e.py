"""ParsingSum end to end through the real commands: multi-document lines of our own sentences ->
``fairseq-hier-parse spacy`` -> ``fairseq-hier-spm`` -> ``fairseq-preprocess`` ->
``fairseq-hier-parse project`` -> ``fairseq-train`` (``parsingsum_ft`` and ``parsingsum_ht``, a few
updates) -> ``fairseq-generate``; and the dataset's cut of the parse on hand-made data (a sentence
cut by truncation keeps the arcs between kept pieces, in both layouts).
"""

import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import USER_DIR, run_cli

SUBJECTS = ["The mayor", "A local farmer", "The new bridge", "Two students", "The museum"]
VERBS = ["opened", "visited", "praised", "closed", "described"]
OBJECTS = ["the old market on Monday", "a small garden near the river", "the city's first library",
           "an exhibition about early trains", "the school's annual fair"]
TINY = ["--encoder-layers", "2", "--decoder-layers", "1", "--encoder-embed-dim", "16",
        "--decoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim",
        "32", "--encoder-attention-heads", "2", "--decoder-attention-heads", "2"]


def module(name, *args, check=True):
    proc = subprocess.run([sys.executable, "-m", f"fairseq_hier.cli.{name}", *map(str, args)],
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and proc.returncode:
        raise AssertionError(f"{name} failed:\n{proc.stdout}")
    return proc


def write_corpus(folder, seed=0):
    rng = random.Random(seed)
    sentence = lambda: f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."  # noqa
    for split, n in (("train", 24), ("valid", 4), ("test", 4)):
        src, tgt = [], []
        for _ in range(n):
            docs = [" ".join(sentence() for _ in range(2)) for _ in range(rng.randint(2, 3))]
            src.append("<P> " + " <P> ".join(docs))
            tgt.append(docs[0].split(".")[0].lower() + " .")
        (folder / f"{split}.src").write_text("\n".join(src) + "\n")
        (folder / f"{split}.tgt").write_text("\n".join(tgt) + "\n")


@pytest.fixture(scope="module")
def parsed_bin(tmp_path_factory):
    """data-bin with SPLIT.parse.spacy.{bin,idx}, through the recipe's commands."""
    root = tmp_path_factory.mktemp("parsingsum")
    raw, parsed, bpe, data = (root / d for d in ("raw", "parsed", "bpe", "data-bin"))
    for d in (raw, parsed, bpe):
        d.mkdir()
    write_corpus(raw)
    for split in ("train", "valid", "test"):
        module("parse", "spacy", "--input", raw / f"{split}.src", "--output-prefix", parsed / split,
               "--no-progress-bar")
    module("spm", "train", "--input", parsed / "train.tok", raw / "train.tgt", "--model-prefix",
           root / "spm", "--vocab-size", "60", "--threads", "1")
    for split in ("train", "valid", "test"):
        for side, path in (("src", parsed / f"{split}.tok"), ("tgt", raw / f"{split}.tgt")):
            module("spm", "encode", "--model", root / "spm.model", "--input", path, "--output",
                   bpe / f"{split}.{side}", "--no-progress-bar")
    run_cli("fairseq-preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref",
            bpe / "train", "--validpref", bpe / "valid", "--testpref", bpe / "test", "--destdir",
            data, "--joined-dictionary", "--workers", "1")
    for split in ("train", "valid", "test"):
        module("parse", "project", "--conllu", parsed / f"{split}.conllu", "--source",
               bpe / f"{split}.src", "--subword", "sentencepiece", "--output-prefix",
               data / f"{split}.parse.spacy")
    from fairseq_hier.inference.record import write_record  # what examples/mds_common records

    write_record(str(data), "hierarchical_summarization", "paragraphs",
                 {"title": False, "paragraphs": "documents", "tokenizer": "spacy",
                  "subword": "sentencepiece", "post_process": "sentencepiece"},
                 {"spm.model": str(root / "spm.model")}, ["--beam", "5"])
    return root


@pytest.mark.parametrize("arch,extra", [
    ("parsingsum_ft", ["--max-source-positions", "120"]),
    ("parsingsum_ht", ["--max-source-positions", "1024", "--global-layers", "1",
                       "--global-heads", "2"]),
])
def test_parse_train_generate(parsed_bin, arch, extra):
    data, save = parsed_bin / "data-bin", parsed_bin / f"ck-{arch}"
    pieces = (parsed_bin / "bpe" / "train.src").read_text().split()
    assert any(not p.startswith("\u2581") and p != "<P>" for p in pieces)  # multi-piece words
    task = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--dependency-parse",
            "spacy", "--max-paragraphs", "3", "--max-paragraph-tokens", "40", *extra[:2]]
    run_cli("fairseq-train", data, *task, "--arch", arch, *TINY, *extra[2:], "--optimizer", "adam",
            "--adam-betas", "(0.9, 0.998)", "--lr", "1e-3", "--max-tokens", "600",
            "--max-update", "4", "--save-dir", save, "--no-progress-bar", "--log-interval", "1",
            "--seed", "1", "--num-workers", "0", "--no-epoch-checkpoints")
    out = run_cli("fairseq-generate", data, *task, "--path", save / "checkpoint_last.pt",
                  "--gen-subset", "test", "--beam", "2", "--max-len-b", "8", "--batch-size", "4",
                  "--num-workers", "0")
    hyps = [line for line in out.stdout.splitlines() if line.startswith("H-")]
    assert len(hyps) == 4
    # the checkpoint summarises the raw documents: the recipe's spaCy + sentencepiece steps give
    # the binarized lines again, the parse is redone and projected, and the hypotheses are
    # fairseq-generate's
    from fairseq_hier.inference import HierSummarizer

    summarizer = HierSummarizer.from_pretrained(str(save), "checkpoint_last.pt", cpu=True, beam=2,
                                                max_len_b=8, batch_size=4)
    raw = (parsed_bin / "raw" / "test.src").read_text().splitlines()
    examples = [[d.strip() for d in line.split("<P>")[1:]] for line in raw]
    encoded = summarizer.encode(examples)
    assert [e[0] for e in encoded] == (parsed_bin / "bpe" / "test.src").read_text().splitlines()
    generated = {int(h.split("\t")[0][2:]): h.split("\t")[2] for h in hyps}
    api = summarizer.generate([e[0] for e in encoded])
    assert [h[0]["text"] for h in api] == [generated[i] for i in range(4)]
    from fairseq_hier.inference.pipelines import post_process

    assert summarizer.summarize(examples) == [post_process(generated[i], "sentencepiece")
                                              for i in range(4)]
    # the parse and the cuts come from the checkpoint: decoding without them gives the same
    again = run_cli("fairseq-generate", data, *task[:4], *extra[:2], "--path",
                    save / "checkpoint_last.pt", "--gen-subset", "test", "--beam", "2",
                    "--max-len-b", "8", "--batch-size", "4", "--num-workers", "0")
    assert ("taking the training cuts from the checkpoint: --max-paragraphs 3 "
            "--max-paragraph-tokens 40" in again.stdout), again.stdout[-3000:]
    assert "--dependency-parse spacy" in again.stdout
    assert [line for line in again.stdout.splitlines() if line.startswith("H-")] == hyps


def test_a_mismatched_parse_is_refused_before_training(parsed_bin, tmp_path):
    """The valid split's parse under the test split's name: one error naming the files."""
    import shutil

    data = tmp_path / "data-bin"
    shutil.copytree(parsed_bin / "data-bin", data)
    for ext in ("bin", "idx"):
        shutil.copy(data / f"train.parse.spacy.{ext}", data / f"valid.parse.spacy.{ext}")
    proc = run_cli("fairseq-train", data, "--user-dir", USER_DIR, "--task",
                   "hierarchical_summarization", "--dependency-parse", "spacy", "--arch",
                   "parsingsum_ft", *TINY, "--optimizer", "adam", "--lr", "1e-3", "--max-tokens",
                   "600", "--max-update", "1", "--save-dir", tmp_path / "ck", "--no-progress-bar",
                   check=False)
    assert proc.returncode != 0
    assert "valid.parse.spacy" in proc.stdout and "valid.src-tgt.src" in proc.stdout


# ------------------------------------------------------------------ the cut of the parse
def test_truncation_cuts_the_parse_consistently(tmp_path):
    """Hand-made binarized example ``<P> a1 a2 b c <P> d e`` (a = word 0 in 2 pieces, root b =
    word 1, c = word 2 -> b, a -> b; paragraph 2: root d = word 3, e = word 4 -> d), cut to 2
    tokens per paragraph: c is cut, so the arc c-b disappears; a-b stays."""
    from fairseq.data import Dictionary, indexed_dataset

    from fairseq_hier.data.dependency_codes import DependencyParses
    from fairseq_hier.data.hierarchical_dataset import HierarchicalSummarizationDataset
    from fairseq_hier.preparation.dependencies import DependencyWriter, project_heads

    d = Dictionary()
    for sym in ("<P>", "a1", "a2", "b", "c", "d", "e", "s"):
        d.add_symbol(sym)
    line = "<P> a1 a2 b c <P> d e".split()
    tokens = torch.tensor([d.index(t) for t in line] + [d.eos()])
    for name, rows in (("src", [tokens]), ("tgt", [torch.tensor([d.index("s"), d.eos()])])):
        builder = indexed_dataset.make_builder(str(tmp_path / f"x.{name}.bin"), "mmap",
                                               vocab_size=len(d))
        for r in rows:
            builder.add_item(r)
        builder.finalize(str(tmp_path / f"x.{name}.idx"))
    with DependencyWriter(str(tmp_path / "x.parse")) as w:
        # per token: its word (-1 for the separators); per word: its head (-1: root)
        w.add(project_heads(np.array([-1, 0, 0, 1, 2, -1, 3, 4]), [1, -1, 1, -1, 3]))
    src = indexed_dataset.MMapIndexedDataset(str(tmp_path / "x.src"))
    tgt = indexed_dataset.MMapIndexedDataset(str(tmp_path / "x.tgt"))
    ds = HierarchicalSummarizationDataset(src, tgt, d, d, d.index("<P>"), 5, 3, 6,
                                          "x.src", "x.tgt", "test")
    ds.attach_parses(DependencyParses(str(tmp_path / "x.parse")), "x.src")
    ds.use_parses = True
    item = ds[0]
    # paragraph 0 keeps a1 a2 b (c cut), paragraph 1 keeps d e
    assert item["words"].tolist() == [[0, 0, 1], [3, 4, -1]]
    assert item["heads"].tolist() == [[1, 1, -1], [-1, 3, -1]]
    ds.layout = "flat"  # a1 a2 b <P> d + EOS (cut to 6 tokens)
    item = ds[0]
    assert [d[t] for t in item["source"].tolist()] == ["a1", "a2", "b", "<P>", "d", "</s>"]
    assert item["words"].tolist() == [0, 0, 1, -1, 3, -1]
    assert item["heads"].tolist() == [1, 1, -1, -1, -1, -1]
    batch = ds.collater([item, ds[0]])
    assert batch["net_input"]["src_words"].shape == batch["net_input"]["src_tokens"].shape
