"""The WikiSum recipe end to end on tiny shards written in hiersumm's exact layout:
WIKI.{train,valid,test}.N.pt lists of dicts (src / tgt / tgt_str), ids from the real
spm9998_3.model when ../shared/wikisum has it, else from a small model trained here with the same
special pieces. prepare.sh -> train_pht.sh -> decode.sh (fairseq CLIs + official ROUGE)."""

import os
import random
import re
import subprocess
from pathlib import Path

import torch

from conftest import BIN, ROOT, SMALL_MODEL

REAL_SPM = Path(os.environ.get("FAIRSEQ_HIER_WIKISUM_SPM", ROOT.parent / "shared" / "wikisum" / "spm9998_3.model"))
RECIPE = ROOT / "examples" / "wikisum"
SPECIALS = ["<T>", "<S>", "</S>", "<PAD>", "<P>", "<Q>"]
NOUNS = ["river", "castle", "village", "bridge", "school", "church", "harbour", "market", "road"]
VERBS = ["was built", "is located", "was rebuilt", "was opened", "is known"]
PLACES = ["in the north", "near the coast", "in the old town", "by the lake", "on the hill"]


def sentence(rng):
    return f"the {rng.choice(NOUNS)} {rng.choice(VERBS)} {rng.choice(PLACES)} in {rng.randint(1800, 1999)} ."


def spm_model(tmp_path):
    import sentencepiece as spm

    if REAL_SPM.exists():
        return REAL_SPM
    rng = random.Random(0)
    corpus = tmp_path / "spm.txt"
    corpus.write_text("\n".join(sentence(rng) for _ in range(2000)) + "\n")
    prefix = tmp_path / "small_spm"
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=80, hard_vocab_limit=False,
                                   user_defined_symbols=SPECIALS, bos_id=-1, eos_id=-1)
    return Path(f"{prefix}.model")


def write_shards(folder, model_path, layout):
    """layout: {split: [examples per shard, ...]}; returns the data prefix."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    ident = {p: sp.piece_to_id(p) for p in SPECIALS}
    rng = random.Random(1)
    folder.mkdir(parents=True, exist_ok=True)
    for split, shards in layout.items():
        for n, size in enumerate(shards):
            examples = []
            for _ in range(size):
                title = sp.encode(f"the {rng.choice(NOUNS)} of {rng.choice(NOUNS)}")
                paragraphs = [title + [ident["<T>"]] + sp.encode(" ".join(sentence(rng) for _ in range(2)))
                              for _ in range(rng.randint(2, 4))]
                sents = [sentence(rng) for _ in range(2)]
                tgt = [ident["<S>"]] + sp.encode(sents[0]) + [ident["<Q>"]] + sp.encode(sents[1]) + [ident["</S>"]]
                tgt_str = "<t> " + sents[0] + " </t> <Q> <t> " + sents[1] + " </t>"
                examples.append({"src": paragraphs, "tgt": tgt, "tgt_str": tgt_str})
            torch.save(examples, folder / f"WIKI.{split}.{n}.pt")
    return folder / "WIKI"


def run(script, *args):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", PYTHONWARNINGS="ignore",
               OMP_NUM_THREADS="1", WORKERS="1")
    proc = subprocess.run(["bash", str(RECIPE / script), *map(str, args)], cwd=ROOT, env=env,
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, proc.stdout[-4000:]
    return proc.stdout


def test_converter_title_placement_and_counts(tmp_path):
    from fairseq_hier.cli.wikisum_to_raw import Converter

    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"test": [3]})
    conv = Converter(str(model))
    out = tmp_path / "raw"
    out.mkdir()
    assert conv.convert_split(prefix, "test", out) == 3
    src = (out / "test.src").read_text().splitlines()
    shard = torch.load(f"{prefix}.test.0.pt")
    sp_title = shard[0]["src"][0][: shard[0]["src"][0].index(conv.eot)]
    segments = src[0].split(" <P> ")
    assert segments[0].split() == conv.pieces(sp_title)  # title first, once
    assert len(segments) == 1 + len(shard[0]["src"])
    assert "<T>" not in src[0]  # every "title <T>" prefix stripped
    assert conv.counts["title prefixes stripped from paragraphs"] == sum(len(e["src"]) for e in shard)
    tgt = (out / "test.tgt").read_text().splitlines()[0].split()
    assert tgt[0] != "<S>" and tgt[-1] != "</S>" and "<Q>" in tgt
    ref = (out / "test.ref").read_text().splitlines()[0]
    assert ref.count(" <q> ") == 1 and "<t>" not in ref and ref == ref.lower()


def test_recipe_end_to_end(tmp_path):
    model = spm_model(tmp_path)
    prefix = write_shards(tmp_path / "data", model, {"train": [6, 6], "valid": [4], "test": [4]})
    work = tmp_path / "work"
    log = run("prepare.sh", prefix, model, work)
    assert re.search(r"\[train\] 12 examples written from 2 shard\(s\)", log)
    train_log = run("train_pht.sh", work / "data-bin", work / "ck", *SMALL_MODEL,
                    "--max-update", "3", "--batch-size", "4", "--warmup-updates", "2",
                    "--save-interval-updates", "3", "--num-workers", "0", "--no-progress-bar")
    assert "num_updates 3" in train_log and "source layout: hierarchical" in train_log
    out = run("decode.sh", work, work / "ck" / "checkpoint_last.pt", "--max-len-b", "15",
              "--num-workers", "0")
    assert re.search(r"ROUGE-1 Average_F: \d\.\d+ \(95%-conf\.int\. \d\.\d+ - \d\.\d+\)", out)
    hyps = (work / "decode" / "test.hyp").read_text().splitlines()
    assert len(hyps) == 4
