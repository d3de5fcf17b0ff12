"""examples/own_data end to end through its stages, as a user runs them, on JSON lines the test
writes (the schema of docs/data-formats.md) and tiny models: pht (sentencepiece, tf-idf ranking),
hat_bart_base fine-tuned from a tiny BART in fairseq's layout (GPT-2 BPE), one report over both
run folders, and new documents summarised from a run folder (document translation:
tests/recipes/test_own_data_mt.py)."""

import json
import random
import re

import pytest

from conftest import ROOT, SMALL_MODEL, WORDS, run_cli, run_recipe, tiny_bart_flags

RUN_SH = ROOT / "examples" / "own_data" / "run.sh"
TINY_TRAIN = ["--max-update", "4", "--seed", "1", "--num-workers", "0", "--log-interval", "1"]


def sentence(rng, low=4, high=8):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + " ."


def write_jsonl(folder, sizes=(("train", 40), ("valid", 6), ("test", 6)), seed=0):
    """Examples of the schema: an id, a title on every other one, 2-3 documents with line
    breaks, one summary (two on the first test example: two references)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in sizes:
        lines = []
        for i in range(n):
            documents = ["\n".join(sentence(rng) for _ in range(rng.randint(1, 3)))
                         for _ in range(rng.randint(2, 3))]
            example = {"id": f"{split}-{i}", "documents": documents, "summary": sentence(rng)}
            if i % 2 == 0:
                example["title"] = " ".join(rng.choice(WORDS) for _ in range(2))
            if split == "test" and i == 0:
                example["summary"] = [sentence(rng), sentence(rng)]
            lines.append(json.dumps(example))
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def own(tmp_path_factory, tiny_bart_dir):
    base = tmp_path_factory.mktemp("own_data")
    data = write_jsonl(base / "data")
    env = dict(DATA=str(data), WORK=str(base / "work"), VOCAB="60", GPUS="1",
               BART=str(tiny_bart_dir), MAX_SOURCE="64")
    return dict(data=data, work=base / "work", env=env, logs={})


def stage(own, *args, **env):
    out = run_recipe(RUN_SH, *args, env=dict(own["env"], **env))
    own["logs"][args[:2]] = out
    return out


@pytest.fixture(scope="module")
def pht(own):
    stage(own, "prepare", "pht", RANK="tfidf")
    stage(own, "train", "pht", *SMALL_MODEL, "--max-paragraphs", "3",
          "--max-paragraph-tokens", "12", "--batch-size", "8", *TINY_TRAIN)
    stage(own, "decode", "pht")
    stage(own, "score", "pht")
    return own["work"] / "runs" / "pht"


@pytest.fixture(scope="module")
def hat(own):
    stage(own, "prepare", "hat_bart_base")
    stage(own, "train", "hat_bart_base", *tiny_bart_flags(), "--max-source-positions", "64",
          "--max-target-positions", "32", *TINY_TRAIN)
    stage(own, "decode", "hat_bart_base", "--max-len-b", "12")
    stage(own, "score", "hat_bart_base")
    return own["work"] / "runs" / "hat_bart_base"


def test_prepare_writes_the_raw_files_and_the_references(own, pht):
    raw = own["work"] / "raw"
    first = json.loads((own["data"] / "test.jsonl").read_text().splitlines()[0])
    assert (raw / "test.ids").read_text().splitlines()[0] == "test-0"
    # the first summary is the .tgt line; all of them are the example's references
    assert (raw / "test.tgt").read_text().splitlines()[0] == first["summary"][0]
    refs = [json.loads(line) for line in (raw / "test.refs.jsonl").read_text().splitlines()]
    assert refs[0] == first["summary"] and len(refs) == 6 and len(refs[1]) == 1
    # documents -> paragraphs (PARAGRAPHS=documents): a title slot, then one paragraph each
    source = (raw / "test.src").read_text().splitlines()[0]
    title, *paragraphs = source.split(" <P> ")
    assert title == first["title"] and len(paragraphs) == len(first["documents"])
    assert paragraphs[0] == " ".join(first["documents"][0].split())
    record = json.loads((own["work"] / "spm" / "data-bin" / "hier_preprocess.json").read_text())
    assert "--max-len-b" in record["generation"]


def test_train_chose_the_paper_settings_scaled_and_says_so(own, pht):
    settings = (pht / "settings.log").read_text()
    # 40 examples: the paper's 600,000 updates x 40 / 1,579,360 -> the floor of 1,000
    assert "updates: 1,000 from the paper's 600,000 x 40 / 1,579,360 examples" in settings
    assert "overridden: --max-update 4 (yours; the setting was --max-update 1000)" in settings
    assert "effective batch: 8 examples x 1 GPU(s) x update-freq 2 = 16 examples" in settings
    log = (pht / "train.log").read_text()
    assert "num_updates 4" in log or "num_updates=4" in log.replace(" ", "")
    assert json.loads((pht / "run.json").read_text()) == {
        "name": "pht", "arch": "pht", "task": "hierarchical_summarization", "metric": "rouge"}
    assert (pht / "checkpoint_best.pt").is_file() and (pht / "done").is_file()


def test_decode_takes_the_cuts_from_the_checkpoint_and_writes_the_run_folder(own, pht):
    log = own["logs"][("decode", "pht")]  # fairseq-generate's log lines pass through
    assert "--max-paragraphs 3" in log and "from the checkpoint" in log
    generate = (pht / "generate-test.txt").read_text().splitlines()
    assert sum(line.startswith("H-") for line in generate) == 6
    decoded = json.loads((pht / "test.decode.json").read_text())
    assert decoded["multi_references"] == str(own["work"] / "raw" / "test.refs.jsonl")
    hyps = (pht / "test.hyp").read_text().splitlines()
    assert len(hyps) == 6 and "▁" not in " ".join(hyps)
    assert (pht / "test.ref").read_text() == (own["work"] / "raw" / "test.tgt").read_text()
    assert (pht / "test.refs.jsonl").is_file()
    scores = (pht / "test.rouge.txt").read_text()
    assert re.search(r"ROUGE-1 Average_F: \d\.\d+ \(95%-conf\.int\. \d\.\d+ - \d\.\d+\)", scores)


def test_hat_bart_from_a_tiny_bart(own, hat):
    log = (hat / "train.log").read_text()
    assert "--finetune-from-model" in " ".join(own["logs"][("train", "hat_bart_base")].split()) \
        or "finetune" in log
    settings = (hat / "settings.log").read_text()
    assert "hat_bart_base: 004 Sec. 4.1, tuned on arXiv (203,037 training examples" in settings
    assert "4 examples x 1 GPU(s) x update-freq 32 = 128 examples per update" in settings
    assert len((hat / "test.hyp").read_text().splitlines()) == 6
    # scored as every architecture of the recipe is (protocol plain): the texts as written
    assert (hat / "test.ref").read_text() == (own["work"] / "raw" / "test.tgt").read_text()
    assert json.loads((hat / "test.decode.json").read_text())["lines"] == "D"
    assert "ROUGE-1 Average_F" in (hat / "test.rouge.txt").read_text()


def test_report_reads_the_run_folders_as_they_are(own, pht, hat):
    out = stage(own, "report")
    report = own["work"] / "report"
    md = (report / "report.md").read_text()
    assert str(report / "report.html") in out and (report / "report.html").is_file()
    assert "pht" in md and "hat_bart_base" in md and "No --reference" not in md, md[:3000]


def test_summarize_new_documents_with_the_run_folder(own, pht, tmp_path):
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "n1", "documents": ["the model reads long papers ."]})
                   + "\n" + json.dumps({"documents": ["we study meetings .", "a team agrees ."],
                                        "title": "design"}) + "\n")
    out = tmp_path / "summaries.txt"
    run_cli("fairseq-hier-summarize", pht, new, "-o", out, "--cpu")
    assert len(out.read_text().splitlines()) == 2
