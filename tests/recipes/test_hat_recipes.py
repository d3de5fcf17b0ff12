"""HAT recipes end to end through the real CLIs (paper 004 Sec. 4.1), on small files in the
published layouts that the tests write (made-up sentences), a tiny GPT-2 BPE and a tiny BART
checkpoint in fairseq's real layout (conftest):

- long documents (arXiv, Cohan et al. jsonl): examples/hat_arxiv prepare -> train hat_bart and
  the plain long_bart from BART -> decode and score (fairseq-hier-decode, fairseq-hier-score
  --protocol ptb: PTB-tokenised, ROUGE-1.5.5);
- dialogues (SAMSum json): examples/hat_samsum with speaker segments, the HAT model initialised
  from the arXiv-trained HAT (004 Table 5's scheme) -> decode -> ROUGE; the sentence-attention
  heatmap (examples/hat_common/heatmap.sh);
- meetings (QMSum jsonl): examples/hat_ami's preparation (fillers, one segment id per role) and
  examples/hat_icsi end to end (appearance-order segments, from the arXiv-trained HAT).

The scores each decode step saves in the run folder's test.rouge.txt (and prints) are checked
against its written (PTB-tokenised) hypotheses and references re-scored
(tests/support/rouge_oracle.py): ROUGE-1.5.5 with the recipe's flags (-zs), and rouge-score's own
RougeScorer for the --also-rouge-score block. Each model kind's run folder (WORK/runs/KIND) holds run.json, train.log, the
checkpoints and the decoded test set.
"""

import json
import random
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT, WORDS, run_recipe, tiny_bart_flags
from rouge_oracle import assert_rescored

EXAMPLES = ROOT / "examples"


def sentence(rng, low=4, high=9):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + " ."


def write_cohan(path: Path, n: int, rng, sentences=(3, 12)):
    """arXiv/PubMed layout: one JSON object per line (article_text: sentences; abstract_text:
    strings wrapped as <S> ... </S>)."""
    lines = []
    for i in range(n):
        article = [sentence(rng) for _ in range(rng.randint(*sentences))]
        abstract = [f"<S> {article[0]} </S>", f"<S> {sentence(rng)} </S>"]
        lines.append(json.dumps({"article_id": f"paper.{i}", "article_text": article,
                                 "abstract_text": abstract, "labels": None,
                                 "section_names": ["introduction"], "sections": [article]}))
    path.write_text("\n".join(lines) + "\n")


def write_samsum(path: Path, n: int, rng):
    """SAMSum layout: a JSON list of {id, summary, dialogue} with \\r\\n-separated turns."""
    names = ["Anna", "Ben", "Carla"]
    items = []
    for i in range(n):
        turns = [f"{rng.choice(names)}: {sentence(rng, 2, 6)}" for _ in range(rng.randint(2, 6))]
        items.append({"id": f"1373{i:04d}", "summary": f"{names[i % 3]} {sentence(rng, 3, 5)}",
                      "dialogue": "\r\n".join(turns)})
    path.write_text(json.dumps(items, indent=1))


TINY_TRAIN = dict(ARCH="hat_bart_base", UPDATES="3", WARMUP="1", BATCH="4", UPDATE_FREQ="1",
                  LOG_INTERVAL="1", MAX_SOURCE="64")
TRAIN_FLAGS = [*tiny_bart_flags(), "--max-target-positions", "64", "--num-workers", "0",
               "--seed", "2"]
DECODE = dict(BEAM="2", MIN_LEN="1", MAX_LEN="10", BATCH="4", MAX_SOURCE="64")
ROUGE_LINE = re.compile(r"^1 ROUGE-(1|2|L) Average_F: ([\d.]+)", re.M)
PRINTED = re.compile(r"^  ROUGE-(1|2|L) +([\d.]+) \[", re.M)


def rouge_f(text):
    """ROUGE-1.5.5's F1 per metric, from its report (test.rouge.txt)."""
    return {m.group(1): float(m.group(2)) for m in ROUGE_LINE.finditer(text)}


def scored(out: str, run: Path) -> dict:
    """The decode step's scores: those of the run folder's ROUGE report, which the step prints
    (x 100, two decimals)."""
    scores = rouge_f((run / "test.rouge.txt").read_text())
    assert set(scores) == {"1", "2", "L"}, out[-2000:]
    printed = {m.group(1): float(m.group(2)) for m in PRINTED.finditer(out)}
    assert printed == {k: round(100 * v, 2) for k, v in scores.items()}, out[-2000:]
    assert f"{run / 'test.rouge.txt'} (protocol ptb): ROUGE-1.5.5 F1" in out
    return scores


@pytest.fixture(scope="module")
def arxiv(tmp_path_factory, tiny_bart_dir):
    """arXiv-layout data prepared by the recipe (3072 -> 64 source tokens for the tiny test)."""
    rng = random.Random(0)
    data = tmp_path_factory.mktemp("arxiv_data")
    for split, n in (("train", 12), ("val", 4), ("test", 5)):
        write_cohan(data / f"{split}.txt", n, rng)
    work = tmp_path_factory.mktemp("arxiv_work")
    log = run_recipe(EXAMPLES / "hat_arxiv" / "recipe.sh", "prepare", data, work, tiny_bart_dir,
              env=dict(MAX_SOURCE="64", MAX_TARGET="24"))
    return dict(data=data, work=work, log=log)


def test_arxiv_prepare_marks_every_sentence_and_cuts_at_boundaries(arxiv, tiny_bart_dir):
    work = arxiv["work"]
    assert "examples truncated" in arxiv["log"] and "sentences dropped" in arxiv["log"]
    counts = [int(x) for x in (work / "bpe" / "train.sentences").read_text().split()]
    sources = (work / "bpe" / "train.source").read_text().splitlines()
    articles = [json.loads(line)["article_text"]
                for line in (arxiv["data"] / "train.txt").read_text().splitlines()]
    from fairseq.data.encoders.gpt2_bpe_utils import get_encoder

    bpe = get_encoder(str(tiny_bart_dir / "encoder.json"), str(tiny_bart_dir / "vocab.bpe"))
    for count, source, article in zip(counts, sources, articles):
        tokens = source.split()
        assert tokens[0] == "<s>" and tokens.count("<s>") == count >= 1
        assert len(tokens) + 1 <= 64  # EOS appended by fairseq-preprocess
        # whole sentences, in order, each after its BOS: the ids of the text's first sentences
        sentences = " ".join(tokens).split("<s>")[1:]
        for i, ids in enumerate(sentences):
            text = bpe.decode([int(t) for t in ids.split()])
            assert text == (" " if i else "") + article[i]
        if count < len(article):  # cut at a boundary: the next sentence would not fit
            nxt = len(bpe.encode(" " + article[count]))
            assert len(tokens) + 1 + nxt + 1 > 64
    assert (work / "data-bin" / "train.sentences").read_text() == \
        (work / "bpe" / "train.sentences").read_text()
    refs = (work / "bpe" / "test.ref").read_text().splitlines()
    first = json.loads((arxiv["data"] / "test.txt").read_text().splitlines()[0])
    # <S> ... </S> removed, the sentences kept apart for ROUGE
    assert refs[0] == " <q> ".join(s[4:-5].strip() for s in first["abstract_text"])


@pytest.fixture(scope="module")
def arxiv_trained(arxiv, tiny_bart_dir):
    """hat_bart and the plain long_bart, fine-tuned from the tiny BART by the recipe."""
    logs = {}
    for kind, arch in (("hat", "hat_bart_base"), ("plain", "long_bart_base")):
        logs[kind] = run_recipe(EXAMPLES / "hat_arxiv" / "recipe.sh", "train", arxiv["work"],
                                tiny_bart_dir, kind, *TRAIN_FLAGS, env=dict(TINY_TRAIN, ARCH=arch))
    return logs


def test_arxiv_train_from_bart_and_decode_and_score(arxiv, arxiv_trained, tiny_bart_dir):
    work = arxiv["work"]
    for kind in ("hat", "plain"):
        log = arxiv_trained[kind]
        # BART loaded by name, positions 34 -> 66 rows (64 source), the <mask> row dropped
        assert "'encoder.embed_positions.weight 34 -> 66 rows'" in log, log[-3000:]
        assert "num_updates 3" in log or "num_updates=3" in log.replace(" ", ""), log[-2000:]
        new = re.search(r"new \(fresh init\) (\d+):", log)
        assert (int(new.group(1)) if new else 0) == (16 + 2 * 10 if kind == "hat" else 0)
        out = run_recipe(EXAMPLES / "hat_arxiv" / "recipe.sh", "decode", work, tiny_bart_dir, kind,
                         env=DECODE)
        decoded = work / "runs" / kind  # the run folder
        scored(out, decoded)
        hyps = (decoded / "test.hyp").read_text().splitlines()
        assert len(hyps) == 5 and len((decoded / "test.hyp.raw").read_text().splitlines()) == 5
        assert json.loads((decoded / "run.json").read_text()) == {
            "name": kind, "arch": ("hat" if kind == "hat" else "long") + "_bart_base",
            "task": "hat_summarization", "metric": "rouge"}
        assert "num_updates" in (decoded / "train.log").read_text()
        assert (decoded / "generate-test.txt").read_text().count("\nD-") == 5
        saved = (decoded / "test.rouge.txt").read_text()
        assert_rescored(saved, decoded / "test.ref", decoded / "test.hyp")
        # the recipe's source length reaches fairseq-generate (its default, 1024, would refuse
        # every arXiv source of 3072 tokens)
        assert "'max_source_positions': 64" in out, out[-3000:]
    # the scoring step itself: the references scored as hypotheses through the same PTB step
    ref_tok = work / "runs" / "hat" / "test.ref"
    subprocess.run([str(BIN / "fairseq-hier-ptb-tokenize"), str(work / "bpe" / "test.ref"),
                    "-o", str(work / "oracle.tok")], check=True)
    out = subprocess.run([str(BIN / "fairseq-hier-rouge"), str(ref_tok), str(work / "oracle.tok")],
                         text=True, capture_output=True, check=True).stdout
    assert rouge_f(out) == {"1": 1.0, "2": 1.0, "L": 1.0}


@pytest.fixture(scope="module")
def samsum(tmp_path_factory, tiny_bart_dir):
    rng = random.Random(1)
    data = tmp_path_factory.mktemp("samsum_data")
    for split, n in (("train", 12), ("val", 4), ("test", 4)):
        write_samsum(data / f"{split}.json", n, rng)
    work = tmp_path_factory.mktemp("samsum_work")
    log = run_recipe(EXAMPLES / "hat_samsum" / "recipe.sh", "prepare", data, work, tiny_bart_dir,
              env=dict(MAX_SOURCE="64", MAX_TARGET="24"))
    return dict(data=data, work=work, log=log)


def test_samsum_segments_are_speaker_indices_per_turn(samsum):
    work = samsum["work"]
    items = json.loads((samsum["data"] / "train.json").read_text())
    segments = (work / "data-bin" / "train.segments").read_text().splitlines()
    counts = (work / "data-bin" / "train.sentences").read_text().split()
    for item, line, count in zip(items, segments, counts):
        speakers = [t.split(":")[0] for t in item["dialogue"].split("\r\n")]
        order = list(dict.fromkeys(speakers))
        expected = [order.index(s) for s in speakers][: int(count)]
        assert [int(x) for x in line.split()] == expected
    # too few segment embeddings for the data's speakers: an error before any update
    from conftest import USER_DIR, run_cli

    largest = max(int(x) for x in (work / "data-bin" / "valid.segments").read_text().split())
    out = run_cli("fairseq-train", work / "data-bin", "--user-dir", USER_DIR, "--task",
                  "hat_summarization", "--arch", "hat_bart_base", *TRAIN_FLAGS,
                  "--max-source-positions", "64", "--segment-embeddings", str(largest),
                  "--optimizer", "adam", "--lr", "1e-4", "--batch-size", "4", "--max-update", "1",
                  "--save-dir", work / "never", check=False).stdout
    assert (f"{work / 'data-bin' / 'valid.segments'} has speaker index {largest}, but the model "
            f"has {largest} segment embeddings (--segment-embeddings {largest + 1} or more is "
            f"needed)") in out, out[-3000:]
    assert "num_updates" not in out


def test_samsum_from_the_arxiv_hat_with_segments_decodes_and_draws(samsum, arxiv, arxiv_trained,
                                                                   tiny_bart_dir):
    work = samsum["work"]
    init = arxiv["work"] / "runs" / "hat" / "checkpoint_best.pt"
    log = run_recipe(EXAMPLES / "hat_samsum" / "recipe.sh", "train", work, init, "hat",
                     *TRAIN_FLAGS, env=TINY_TRAIN)
    # the HAT weights load by name; only the segment embeddings are new (004 Table 5's scheme)
    assert "new (fresh init) 1: ['encoder.embed_segments.weight']" in log, log[-3000:]
    assert "--segment-embeddings" not in log or "Traceback" not in log
    out = run_recipe(EXAMPLES / "hat_samsum" / "recipe.sh", "decode", work, tiny_bart_dir, "hat",
                     env=DECODE)
    decoded = work / "runs" / "hat"
    scored(out, decoded)
    assert_rescored((decoded / "test.rouge.txt").read_text(), decoded / "test.ref",
                    decoded / "test.hyp")
    heat = run_recipe(EXAMPLES / "hat_common" / "heatmap.sh", work, tiny_bart_dir,
               work / "runs" / "hat" / "checkpoint_best.pt", work / "heatmap",
               env=dict(DECODE, SHARDS="2"))
    pngs = list((work / "heatmap").glob("heatmap-*.png"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", heat[-2000:]
    a_lines = [line for line in (work / "heatmap" / "attention.log").read_text().splitlines()
               if line.startswith("A-")]
    assert a_lines
    counts = (work / "bpe" / "test.sentences").read_text().split()
    for line in a_lines:
        ident, steps = line[2:].split("\t")
        rows = [[float(w) for w in step.split(",")] for step in steps.split()]
        assert all(len(r) == int(counts[int(ident)]) for r in rows)
        assert all(abs(sum(r) - 1) < 1e-4 for r in rows)


def test_bad_sentence_counts_stop_training_before_any_update(arxiv, tmp_path, tiny_bart_dir):
    """A BOS count that disagrees with SPLIT.sentences is found when the split is loaded, and
    the error names the file and the example; so is a dialogue model without SPLIT.segments."""
    import shutil

    from conftest import USER_DIR, run_cli

    data = tmp_path / "data-bin"
    shutil.copytree(arxiv["work"] / "data-bin", data)
    counts = (data / "valid.sentences").read_text().split()
    counts[1] = str(int(counts[1]) + 1)
    (data / "valid.sentences").write_text("\n".join(counts) + "\n")
    args = [data, "--user-dir", USER_DIR, "--task", "hat_summarization", "--arch", "hat_bart_base",
            *TRAIN_FLAGS, "--max-source-positions", "64", "--optimizer", "adam", "--lr", "1e-4",
            "--batch-size", "4", "--max-update", "2", "--save-dir", tmp_path / "ckpt"]
    out = run_cli("fairseq-train", *args, check=False).stdout
    assert (f"example 2: {int(counts[1]) - 1} BOS symbols but {counts[1]} sentences in "
            f"{data / 'valid.sentences'}") in out, out[-3000:]
    assert "num_updates" not in out and not (tmp_path / "ckpt" / "checkpoint_last.pt").exists()
    (data / "valid.sentences").write_text((arxiv["work"] / "data-bin" / "valid.sentences").read_text())
    out = run_cli("fairseq-train", *args, "--segment-embeddings", "2", check=False).stdout
    assert f"{data / 'valid.segments'} not found (fairseq-hier-sentence-bos writes it" in out


def write_qmsum(path: Path, n: int, rng,
                speakers=("Project Manager", "Marketing", "User Interface")):
    """QMSum layout (AMI meetings; ICSI's with other ``speakers``): one meeting per line,
    transcript turns with QMSum's markup."""
    lines = []
    for i in range(n):
        turns = [{"speaker": rng.choice(list(speakers)),
                  "content": f"um {sentence(rng, 2, 6)} {{vocalsound}}"} for _ in range(5)]
        turns.append({"speaker": speakers[1], "content": "Mm-hmm ."})
        lines.append(json.dumps({
            "topic_list": [{"topic": "opening", "relevant_text_span": [["0", "3"]]}],
            "general_query_list": [{"query": "Summarize the whole meeting.",
                                    "answer": f"The team {sentence(rng, 3, 6)}"}],
            "specific_query_list": [], "meeting_transcripts": turns}))
    path.write_text("\n".join(lines) + "\n")


def test_ami_prepare_filters_fillers_and_writes_role_segments(tmp_path, tiny_bart_dir):
    rng = random.Random(2)
    for split, n in (("train", 3), ("val", 2), ("test", 2)):
        write_qmsum(tmp_path / f"{split}.jsonl", n, rng)
    work = tmp_path / "work"
    log = run_recipe(EXAMPLES / "hat_ami" / "recipe.sh", "prepare", tmp_path, work, tiny_bart_dir,
              env=dict(MAX_SOURCE="512", MAX_TARGET="24"))
    # 5 x "um" + 5 x {vocalsound} + "Mm-hmm" per meeting; the "Mm-hmm ." turn is dropped
    assert "filler_tokens_dropped=33" in log and "turns_dropped=3" in log, log[-3000:]
    sources = (work / "bpe" / "train.source").read_text().splitlines()
    assert [s.count("<s>") for s in sources] == [5, 5, 5]
    # one fixed id per role (Project Manager 0, Marketing 1, User Interface 2), every meeting
    roles = {"Project Manager": "0", "Marketing": "1", "User Interface": "2"}
    written = (work / "data-bin" / "train.segments").read_text().splitlines()
    for line, text in zip(written, (tmp_path / "train.jsonl").read_text().splitlines()):
        turns = json.loads(text)["meeting_transcripts"][:5]
        assert line.split() == [roles[t["speaker"]] for t in turns]
    assert "numbered by roles" in log
    # the recipe's lexicon is the reader's (the data-bin's record carries the recipe's file)
    from fairseq_hier.readers.qmsum import AMI_FILLERS

    assert (EXAMPLES / "hat_ami" / "fillers.txt").read_text().splitlines() == sorted(AMI_FILLERS)


def test_icsi_recipe_numbers_speakers_by_appearance_and_decodes(tmp_path, arxiv, arxiv_trained,
                                                                tiny_bart_dir):
    """examples/hat_icsi: QMSum's Academic layout (speakers by code, no roles) -> segments in
    order of appearance -> train from the arXiv-trained HAT with K = 1 + the largest index ->
    decode -> ROUGE-1.5.5."""
    rng = random.Random(4)
    codes = ["Professor B", "Grad F", "PhD A", "Postdoc E"]
    for split, n in (("train", 8), ("val", 3), ("test", 3)):
        write_qmsum(tmp_path / f"{split}.jsonl", n, rng, speakers=codes)
    work = tmp_path / "work"
    log = run_recipe(EXAMPLES / "hat_icsi" / "recipe.sh", "prepare", tmp_path, work, tiny_bart_dir,
                     env=dict(MAX_SOURCE="64", MAX_TARGET="24"))
    assert "numbered by appearance" in log, log[-3000:]
    counts = (work / "data-bin" / "train.sentences").read_text().split()
    written = (work / "data-bin" / "train.segments").read_text().splitlines()
    for line, text, count in zip(written, (tmp_path / "train.jsonl").read_text().splitlines(),
                                 counts):
        speakers = [t["speaker"] for t in json.loads(text)["meeting_transcripts"][:5]]
        order = list(dict.fromkeys(speakers))
        assert line.split() == [str(order.index(s)) for s in speakers][: int(count)]
    largest = max(int(x) for f in ("train", "valid", "test")
                  for x in (work / "data-bin" / f"{f}.segments").read_text().split())
    init = arxiv["work"] / "runs" / "hat" / "checkpoint_best.pt"
    # the recipe's own batch rule (no UPDATE_FREQ): BATCH x 8 x 1 GPU meetings per update on
    # any number of GPUs (BATCH 4 here: --update-freq 8 on this 1 GPU, 32 per update)
    log = run_recipe(EXAMPLES / "hat_icsi" / "recipe.sh", "train", work, init, "hat", *TRAIN_FLAGS,
                     env=dict(TINY_TRAIN, UPDATE_FREQ=""))
    assert "= 32 examples per update (the paper: 4 x 1 GPU(s) x 8 = 32)" in log, log[-3000:]
    assert "update_freq=[8]" in log.replace("'", "").replace(": ", "="), log[-3000:]
    assert "new (fresh init) 1: ['encoder.embed_segments.weight']" in log, log[-3000:]
    assert f"segment_embeddings={largest + 1}" in log.replace("'", "").replace(": ", "=")
    out = run_recipe(EXAMPLES / "hat_icsi" / "recipe.sh", "decode", work, tiny_bart_dir, "hat",
                     env=DECODE)
    decoded = work / "runs" / "hat"
    scored(out, decoded)
    assert len((decoded / "test.hyp").read_text().splitlines()) == 3
    assert_rescored((decoded / "test.rouge.txt").read_text(), decoded / "test.ref",
                    decoded / "test.hyp")


def test_cnndm_prepare_splits_untokenised_articles_with_pysbd(tmp_path, tiny_bart_dir):
    """CNN/DM layout (.source/.target, untokenised): no published segmentation, so pysbd splits
    the articles; every sentence gets its BOS."""
    rng = random.Random(3)
    for split, n in (("train", 3), ("val", 2), ("test", 2)):
        articles = [" ".join(sentence(rng).capitalize()[:-2] + "." for _ in range(3))
                    for _ in range(n)]
        (tmp_path / f"{split}.source").write_text("\n".join(articles) + "\n")
        (tmp_path / f"{split}.target").write_text("\n".join(a.split(".")[0] + "." for a in articles) + "\n")
    work = tmp_path / "work"
    log = run_recipe(EXAMPLES / "hat_cnndm" / "recipe.sh", "prepare", tmp_path, work,
                     tiny_bart_dir)
    assert "(0 with the dataset's own segmentation, 3 split by pysbd)" in log, log[-3000:]
    assert (work / "data-bin" / "train.sentences").read_text() == "3\n3\n3\n"
    assert all(s.count("<s>") == 3 for s in (work / "bpe" / "train.source").read_text().splitlines())
