"""Decoding takes the training cuts from the checkpoint (fairseq_hier/tasks/training_cuts.py),
through the real fairseq-generate, fairseq-interactive and fairseq-validate:

- a ``pht`` trained with ``--max-paragraphs 4 --max-paragraph-tokens 6 --max-source-positions
  30`` (conftest.train_args, all three non-default) and decoded without them: one info line lists
  them, and the hypotheses equal those of a decode that gives them (scores included), through the
  checkpoint's task state (generate, interactive) and, for a checkpoint whose state lacks them,
  through the task config fairseq-generate passes to ``load_dataset``;
- a value given that differs from the training value is kept, with a warning naming both, and
  decodes other inputs (other scores); fairseq-validate, whose task is the checkpoint's own,
  takes nothing and warns the same way;
- ``document_translation`` (a ``transformer`` on hand-made chunks, ``--max-chunk-tokens 8``): the
  chunk limit and positions are taken, reach the generator (its length warning) and the split
  checks (a chunk of 10 tokens is refused with the limit 8 + EOS); a different limit is warned about.

All commands run as forks of the warm server (tests/support/cli_forkserver.py), two at a time.
"""

import random
import re
import shutil

import pytest

from cli_forkserver import run_checked, run_jobs
from conftest import SMALL_MODEL, USER_DIR, train_args

CUTS = ["--max-paragraphs", "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30"]
TAKEN = ("taking the training cuts from the checkpoint: --max-paragraphs 4 "
         "--max-paragraph-tokens 6 --max-source-positions 30")
HIER = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization"]
DECODE = ["--beam", "2", "--max-len-b", "6", "--batch-size", "8", "--num-workers", "0", "--cpu"]
TRAIN = ["--no-epoch-checkpoints", "--disable-validation"]

MT = ["--user-dir", USER_DIR, "--task", "document_translation", "--source-lang", "en",
      "--target-lang", "de"]
MT_CUTS = ["--max-chunk-tokens", "8", "--max-source-positions", "12",
           "--max-target-positions", "12"]
MT_DECODE = ["--beam", "2", "--max-len-a", "0", "--max-len-b", "4", "--batch-size", "4",
             "--num-workers", "0", "--cpu"]


def hypotheses(log: str):
    """{example id: (score, tokens)} of fairseq's H- lines."""
    return {int(i): (score, text) for i, score, text in
            re.findall(r"^H-(\d+)\t(\S+)\t(.*)$", log, flags=re.M)}


def write_chunks(folder, split, lengths, rng):
    """Hand-made document chunks: one document of one chunk per example, each sentence ``<s>``
    and its words (``lengths``: words per sentence), the target 4 words; the chunk map beside."""
    src, tgt, rows = [], [], []
    for k, sentences in enumerate(lengths):
        src.append(" ".join("<s> " + " ".join(f"e{rng.randrange(12)}" for _ in range(n))
                            for n in sentences))
        tgt.append(" ".join(f"d{rng.randrange(12)}" for _ in range(4)))
        rows.append(f"{split}{k}\t0\t0\t{len(sentences) - 1}\n")
    (folder / f"{split}.en").write_text("\n".join(src) + "\n")
    (folder / f"{split}.de").write_text("\n".join(tgt) + "\n")
    return "".join(rows)


def strip_cuts(path, dest):
    """A copy of checkpoint ``path`` whose task state lacks the training cuts."""
    import torch

    state = torch.load(path, weights_only=False)
    del state["task_state"]["training_cuts"]
    torch.save(state, dest)


@pytest.fixture(scope="module")
def runs(data_bin, raw_corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("decode_cuts")
    rng = random.Random(0)
    raw, mt_bin = root / "mt_raw", root / "mt_bin"
    raw.mkdir()
    maps = {"train": write_chunks(raw, "train", [[3, 3]] * 6 + [[7]] * 6, rng),
            "test": write_chunks(raw, "test", [[3, 2], [6], [2, 2]], rng),
            "valid": write_chunks(raw, "valid", [[3, 2]], rng),
            "valid1": write_chunks(raw, "long", [[4, 4]], rng)}  # 10 tokens with the BOS markers
    pht, mt = root / "pht", root / "mt"
    run_checked([
        {"id": "pht-train", "script": "fairseq-train",
         "args": train_args(data_bin, "pht", pht, 2, TRAIN)},
        {"id": "mt-preprocess", "script": "fairseq-preprocess",
         "args": ["--source-lang", "en", "--target-lang", "de", "--trainpref", raw / "train",
                  "--validpref", f"{raw / 'valid'},{raw / 'long'}", "--testpref", raw / "test", "--destdir", mt_bin,
                  "--joined-dictionary", "--workers", "1"]},
    ], root)
    for split, rows in maps.items():
        (mt_bin / f"{split}.chunks").write_text(rows)
    ckpt, mt_ckpt = pht / "checkpoint_last.pt", mt / "checkpoint_last.pt"
    strip_cuts(ckpt, root / "without_cuts.pt")
    generate = [data_bin, *HIER, *DECODE, "--path"]
    mt_generate = [mt_bin, *MT, *MT_DECODE, "--path", mt_ckpt]
    jobs = [
        {"id": "mt-train", "script": "fairseq-train",
         "args": [mt_bin, *MT, *MT_CUTS, "--arch", "transformer", *SMALL_MODEL, *TRAIN,
                  "--optimizer", "adam", "--lr", "1e-3", "--max-update", "2", "--batch-size",
                  "4", "--save-dir", mt, "--seed", "1", "--num-workers", "0",
                  "--no-progress-bar"]},
        {"id": "explicit", "script": "fairseq-generate", "args": [*generate, ckpt, *CUTS]},
        {"id": "taken", "script": "fairseq-generate", "args": [*generate, ckpt]},
        {"id": "from-task-config", "script": "fairseq-generate",
         "args": [*generate, root / "without_cuts.pt"]},
        {"id": "different", "script": "fairseq-generate",
         "args": [*generate, ckpt, "--max-paragraphs", "3"]},
        {"id": "interactive", "script": "fairseq-interactive",
         "args": [data_bin, *HIER, *DECODE, "--path", ckpt, "--input", raw_corpus / "test.src",
                  "--buffer-size", "8"]},
        {"id": "validate", "script": "fairseq-validate",
         "args": [data_bin, *HIER, "--path", ckpt, "--valid-subset", "test", "--batch-size", "8",
                  "--num-workers", "0", "--cpu", "--max-paragraphs", "3"]},
        {"id": "mt-taken", "script": "fairseq-generate", "args": mt_generate,
         "needs": ["mt-train"]},
        {"id": "mt-different", "script": "fairseq-generate",
         "args": [*mt_generate, "--max-chunk-tokens", "10"], "needs": ["mt-train"]},
    ]
    logs = run_checked(jobs, root)
    refused = {"id": "mt-valid", "script": "fairseq-generate", "log": str(root / "mt-valid.log"),
               "args": [str(a) for a in [*mt_generate, "--gen-subset", "valid1"]]}
    logs["mt-valid"] = (run_jobs([refused], workers=1)["mt-valid"]["rc"],
                        (root / "mt-valid.log").read_text())
    shutil.rmtree(raw)
    return logs


def test_cuts_left_out_are_the_checkpoints(runs):
    """Decoded without the cuts: one info line, the same hypotheses and scores as with them."""
    explicit = hypotheses(runs["explicit"])
    assert sorted(explicit) == list(range(8))
    assert "taking the training cuts" not in runs["explicit"]
    assert "the model was trained with" not in runs["explicit"]
    for name in ("taken", "from-task-config"):
        log = runs[name]
        assert log.count(TAKEN) == 1, name
        assert hypotheses(log) == explicit, name


def test_interactive_takes_them_from_the_checkpoint_state(runs):
    log = runs["interactive"]
    assert log.count(TAKEN) == 1
    interactive, explicit = hypotheses(log), hypotheses(runs["explicit"])
    assert sorted(interactive) == list(range(8))
    for i in range(8):
        assert interactive[i][1] == explicit[i][1], f"example {i}"
        assert float(interactive[i][0]) == pytest.approx(float(explicit[i][0]), abs=1e-4)


def test_a_different_value_given_is_kept_with_a_warning(runs):
    log = runs["different"]
    assert log.count("decoding with --max-paragraphs 3, the model was trained with 4") == 1
    assert log.count("taking the training cuts from the checkpoint: --max-paragraph-tokens 6 "
                     "--max-source-positions 30") == 1
    different, explicit = hypotheses(log), hypotheses(runs["explicit"])
    assert sorted(different) == list(range(8))
    assert different != explicit  # fewer paragraphs: other inputs, other scores


def test_validate_keeps_its_override_of_the_checkpoints_config(runs):
    """fairseq-validate sets the task up from the checkpoint's config with the options given:
    nothing is taken, the override is warned about."""
    log = runs["validate"]
    assert log.count("decoding with --max-paragraphs 3, the model was trained with 4") == 1
    assert "taking the training cuts" not in log
    assert re.search(r"\| valid on 'test' subset \| loss [\d.]+", log)


def test_document_translation_takes_the_chunk_limit(runs):
    log = runs["mt-taken"]
    assert log.count("taking the training cuts from the checkpoint: --max-chunk-tokens 8 "
                     "--max-source-positions 12 --max-target-positions 12") == 1
    # the generator sees the taken limit (the task's default is 512)
    assert "--max-len-b 4 allow 4 tokens for a chunk of up to 8 source tokens" in log
    assert sorted(hypotheses(log)) == [0, 1, 2]
    rc, refused = runs["mt-valid"]
    assert rc == 1
    # the split's check uses it too: a chunk of 10 tokens (+ EOS) is refused, in one line
    assert re.search(r"^fairseq-generate: error: \S+/valid1\.en-de\.en: 1 example\(s\) with too "
                     r"long: example 1: 11 tokens > \(--max-chunk-tokens \+ EOS\) 9;", refused,
                     flags=re.M), refused[-2000:]
    assert "Traceback" not in refused


def test_document_translation_warns_about_another_chunk_limit(runs):
    log = runs["mt-different"]
    assert log.count("decoding with --max-chunk-tokens 10, the model was trained with 8") == 1
    assert log.count("taking the training cuts from the checkpoint: --max-source-positions 12 "
                     "--max-target-positions 12") == 1
    assert "--max-len-b 4 allow 4 tokens for a chunk of up to 10 source tokens" in log
    assert sorted(hypotheses(log)) == [0, 1, 2]
