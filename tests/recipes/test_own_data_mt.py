"""examples/own_data's document-translation stages end to end, for a made-up pair (fr-en) from
JSON-lines documents the test writes: extract, prepare, train the HAT Transformer and the plain
baseline, decode and score (document BLEU into each run folder), the report of both."""

import json
import random

from conftest import ROOT, WORDS, run_recipe

RUN_SH = ROOT / "examples" / "own_data" / "run.sh"


def sentence(rng, low=4, high=8):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + " ."


MT_TINY = ["--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "16",
           "--decoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim",
           "32", "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
           "--num-workers", "0", "--seed", "1"]
MT_ENV = dict(BPE_CODES="80", MAX_CHUNK="48", UPDATES="4", WARMUP="1", MAX_TOKENS="400",
              UPDATE_FREQ="1", LOG_INTERVAL="1", BEAM="2", MAX_LEN_A="1", MAX_LEN_B="4",
              BATCH_TOKENS="2000")
FR = {w: w[::-1] + "e" for w in WORDS}  # a made-up French: every word its own translation


def write_mt_jsonl(folder, sizes=(("train", 20), ("valid", 3), ("test", 3)), seed=0):
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in sizes:
        lines = []
        for i in range(n):
            # raw text, as documents are published (the period attached to its word)
            en = [sentence(rng, 3, 6)[:-2] for _ in range(rng.randint(2, 5))]
            fr = [" ".join(FR.get(w, w) for w in s.split()) + "." for s in en]
            en = [s + "." for s in en]
            lines.append(json.dumps({"id": f"{split}{i}", "src": fr, "tgt": en}))
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_document_translation_of_any_pair(tmp_path):
    data = write_mt_jsonl(tmp_path / "data")
    env = dict(MT_ENV, DATA=str(data), WORK=str(tmp_path / "work"))
    log = run_recipe(RUN_SH, "prepare-mt", "fr", "en", env=env)
    mt = tmp_path / "work" / "mt"
    assert (mt / "raw" / "test.docids").read_text().split() == ["test0", "test1", "test2"]
    assert (mt / "data-bin" / "hier_preprocess.json").is_file(), log[-3000:]
    for kind in ("plain", "hat"):
        run_recipe(RUN_SH, "train-mt", "fr", "en", kind, *MT_TINY, env=env)
    run_recipe(RUN_SH, "decode-mt", "fr", "en", env=env)
    for kind in ("plain", "hat"):
        run = mt / "runs" / kind
        docs = (run / "test.docs").read_text().splitlines()
        assert len(docs) == 3 and len((run / "test.ref").read_text().splitlines()) == 3
        assert "BLEU" in (run / "test.bleu.txt").read_text()
        assert json.loads((run / "run.json").read_text())["metric"] == "bleu"
    run_recipe(RUN_SH, "report-mt", env=env)
    md = (mt / "report" / "report.md").read_text()
    assert "hat" in md and "plain" in md and "BLEU" in md
