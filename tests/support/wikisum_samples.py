"""WikiSum shards in the ranked layout for the tests: a sentencepiece model (hiersumm's real
spm9998_3.model where ../shared/wikisum has it, else a small one with its special pieces) and
shards of generated sentences (tests/recipes/test_wikisum_recipe.py, test_five_best.py,
tests/preparation/test_clone_paragraphs.py)."""

import os
import random
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
REAL_SPM = Path(os.environ.get("FAIRSEQ_HIER_WIKISUM_SPM", ROOT.parent / "shared" / "wikisum" / "spm9998_3.model"))
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
