"""Inference from raw text for ``hierarchical_summarization``: fairseq-interactive equals
fairseq-generate token for token (pht, the flat transformer, liu_ht with tf-idf graphs), and
``HierSummarizer`` / ``fairseq-hier-summarize`` on checkpoints trained here on a data-bin with a
preprocessing record (the record travels inside the checkpoint)."""

import copy
import json
import re
import shutil

import pytest

from cli_forkserver import run_checked
from conftest import USER_DIR, run_cli, train_args

# the task options of conftest.train_args: generate and interactive must cut sources the same way
TASK = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--max-paragraphs", "4",
        "--max-paragraph-tokens", "6", "--max-source-positions", "30"]
DECODE = ["--beam", "2", "--max-len-b", "8", "--batch-size", "4", "--cpu"]
RECORDED = ["--beam", "3", "--max-len-b", "6", "--no-repeat-ngram-size", "2"]
# arch -> (model options, task options)
ARCHS = {"pht": ([], []), "transformer": ([], []),
         "liu_ht": (["--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2",
                     "--graph-head", "1"], ["--paragraph-graph", "tfidf"])}


@pytest.fixture(scope="module")
def runs(data_bin, raw_corpus, tmp_path_factory):
    from fairseq_hier.inference.record import write_record

    root = tmp_path_factory.mktemp("interactive")
    bin_dir = root / "bin"
    shutil.copytree(data_bin, bin_dir)
    write_record(str(bin_dir), "hierarchical_summarization", "paragraphs", {}, {}, RECORDED)
    for split in ("train", "valid", "test"):
        run_cli("fairseq-hier-graph", "--source", raw_corpus / f"{split}.src", "--kind", "tfidf",
                "--output-prefix", bin_dir / f"{split}.graph.tfidf")
    jobs = []
    for arch, (model, extra) in ARCHS.items():
        ck = root / arch
        jobs.append({"id": f"{arch}-train", "script": "fairseq-train",
                     "args": train_args(bin_dir, arch, ck, 2, model + extra)})
        ckpt = ck / "checkpoint_last.pt"
        jobs.append({"id": f"{arch}-generate", "script": "fairseq-generate", "needs": [f"{arch}-train"],
                     "args": [bin_dir, *TASK, *extra, "--path", ckpt, "--gen-subset", "test",
                              *DECODE]})
        jobs.append({"id": f"{arch}-interactive", "script": "fairseq-interactive",
                     "needs": [f"{arch}-train"],
                     "args": [bin_dir, *TASK, *extra, "--path", ckpt, "--input",
                              raw_corpus / "test.src", "--buffer-size", "8", *DECODE]})
    run_checked(jobs, root)
    return root


def hypotheses(log: str):
    """{example id: (score, tokens)} of fairseq's H- lines."""
    out = {}
    for m in re.finditer(r"^H-(\d+)\t(\S+)\t(.*)$", log, re.M):
        out[int(m.group(1))] = (float(m.group(2)), m.group(3))
    return out


@pytest.mark.parametrize("arch", list(ARCHS))
def test_interactive_equals_generate(runs, arch):
    generated = hypotheses((runs / f"{arch}-generate.log").read_text())
    interactive = hypotheses((runs / f"{arch}-interactive.log").read_text())
    assert sorted(generated) == list(range(8)) and sorted(interactive) == list(range(8))
    for i in range(8):
        assert interactive[i][1] == generated[i][1], f"example {i}"
        assert interactive[i][0] == pytest.approx(generated[i][0], abs=1e-4)


@pytest.fixture(scope="module")
def summarizer(runs):
    from fairseq_hier.inference import HierSummarizer

    return HierSummarizer.from_pretrained(str(runs / "pht"), cpu=True, beam=2, max_len_b=8,
                                          no_repeat_ngram_size=0, batch_size=4)


def test_api_equals_interactive(runs, raw_corpus, summarizer):
    """The API on the raw test lines gives fairseq-interactive's hypotheses: the checkpoint's own
    paragraph cuts (the 4 x 6 it was trained with, not the task's defaults) and the caller's
    decoding options over the record's."""
    interactive = hypotheses((runs / "pht-interactive.log").read_text())
    lines = (raw_corpus / "test.src").read_text().splitlines()
    out = summarizer.generate(lines)
    assert [h[0]["text"] for h in out] == [interactive[i][1] for i in range(8)]
    assert summarizer.task.cfg.max_paragraphs == 4 and summarizer.task.cfg.max_paragraph_tokens == 6
    assert summarizer.cfg.generation.beam == 2  # override over the record's 3
    assert summarizer.cfg.generation.no_repeat_ngram_size == 0
    assert summarizer.record["generation"] == RECORDED


def test_summarize_raw_documents(summarizer):
    """Documents -> the recipe's raw line (paragraphs = non-blank lines, title first) -> the
    same summary as that line decoded directly."""
    example = {"title": "title w3", "documents": ["w1 w2 w3\n\nw4  w5", "w7 w8 w9"]}
    assert summarizer.encode([example]) == [["title w3 <P> w1 w2 w3 <P> w4 w5 <P> w7 w8 w9"]]
    direct = summarizer.generate(["title w3 <P> w1 w2 w3 <P> w4 w5 <P> w7 w8 w9",
                                  " <P> w1 w1 w2"])
    assert summarizer.summarize([example, ["w1 w1 w2"]]) == [direct[0][0]["text"],
                                                             direct[1][0]["text"]]


def test_interactive_bpe_runs_per_segment(summarizer):
    """fairseq-interactive's --bpe/--tokenizer never sees (or splits) a paragraph separator."""
    seen = []

    def encode_fn(text):
        seen.append(text)
        return text.replace("x", "w")

    tokens, lengths = summarizer.task.get_interactive_tokens_and_lengths(
        ["title x1 <P> x2 x3 <P>  <P> x4", "<P> x5"], encode_fn)
    d = summarizer.task.source_dictionary
    assert seen == ["title x1", "x2 x3", "x4", "x5"]
    assert d.string(tokens[0]) == "title w1 <P> w2 w3 <P> <P> w4"
    assert d.string(tokens[1]) == "<P> w5" and lengths == [9, 3]


def test_bad_inputs(summarizer, tmp_path):
    from fairseq_hier.inference.pipelines import InputError

    with pytest.raises(InputError, match=r"^example 2: document 2 is empty$"):
        summarizer.summarize([["w1"], ["w2", " \n "]])
    with pytest.raises(InputError, match=r"^example 1: no document$"):
        summarizer.summarize([[]])
    with pytest.raises(ValueError, match=r"^invalid source examples in input: 1 example\(s\): no "
                                         r"paragraph: .*; line\(s\) 2$"):
        summarizer.generate(["title w1 <P> w2", "w3 w4"])


def test_checkpoint_without_record(runs, raw_corpus, tmp_path):
    import torch

    from fairseq_hier.inference import HierSummarizer
    from fairseq_hier.inference.record import RecordError

    state = torch.load(runs / "pht" / "checkpoint_last.pt", weights_only=False)
    assert state["task_state"]["hier_preprocess"]["record"]["generation"] == RECORDED
    del state["task_state"]["hier_preprocess"]
    (tmp_path / "ck").mkdir()
    torch.save(state, tmp_path / "ck" / "checkpoint_best.pt")
    with pytest.raises(RecordError, match=r"checkpoint_best.pt has no preprocessing record: its "
                                          r"data-bin had no hier_preprocess.json"):
        HierSummarizer.from_pretrained(str(tmp_path / "ck"), cpu=True)
    # the way out the message gives: a record (and the dictionaries) beside the checkpoint
    from fairseq_hier.inference.record import write_record

    for name in ("dict.src.txt", "dict.tgt.txt"):
        shutil.copyfile(runs / "bin" / name, tmp_path / "ck" / name)
    write_record(str(tmp_path / "ck"), "hierarchical_summarization", "paragraphs", {}, {},
                 ["--beam", "2", "--max-len-b", "8"])
    beside = HierSummarizer.from_pretrained(str(tmp_path / "ck"), cpu=True, batch_size=4)
    interactive = hypotheses((runs / "pht-interactive.log").read_text())
    lines = (raw_corpus / "test.src").read_text().splitlines()
    assert [h[0]["text"] for h in beside.generate(lines)] == [interactive[i][1] for i in range(8)]


def test_a_checkpoints_record_is_checked_against_the_pipelines(runs, tmp_path):
    """Training keeps the record as the data-bin has it (its layout checked); loading checks it
    against the pipelines, as fairseq-hier-record data did when it wrote it."""
    import torch

    from fairseq_hier.inference import HierSummarizer
    from fairseq_hier.inference.record import RecordError

    state = torch.load(runs / "pht" / "checkpoint_last.pt", weights_only=False)
    for key, value, message in (
            ("pipeline", "nope", r"unknown pipeline 'nope' \(known: "),
            ("options", {"colour": 1}, r"pipeline 'paragraphs' has no option 'colour'")):
        changed = copy.deepcopy(state)
        changed["task_state"]["hier_preprocess"]["record"][key] = value
        folder = tmp_path / key
        folder.mkdir()
        torch.save(changed, folder / "checkpoint_best.pt")
        with pytest.raises(RecordError, match=rf"^checkpoint {re.escape(str(folder))}/"
                                              rf"checkpoint_best.pt: {message}"):
            HierSummarizer.from_pretrained(str(folder), cpu=True)


def test_summarize_cli(runs, tmp_path):
    clusters = tmp_path / "clusters"
    clusters.mkdir()
    (clusters / "a.txt").write_text("w1 w2 w3\nw4 w5\n|||||\nw7 w8 w9\n")
    (clusters / "b.txt").write_text("w3 w3 w9\n")
    (tmp_path / "ex.jsonl").write_text(json.dumps({"title": "title w2", "documents": ["w1 w2"]})
                                       + "\n" + json.dumps(["w5 w6", "w7"]) + "\n")
    (tmp_path / "bad.txt").write_bytes(b"w1 w2\nw3 \xff\n")
    (tmp_path / "empty.txt").write_text("w1\n|||||\n\n")
    run_checked([{"id": "ok", "script": "fairseq-hier-summarize",
                  "args": [runs / "pht", clusters, tmp_path / "ex.jsonl", "--output-dir",
                           tmp_path / "out", "--cpu", "--no-progress-bar"]}], tmp_path)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["a.txt.summary", "b.txt.summary",
                                                     "ex.jsonl.summaries"]
    assert len((out / "ex.jsonl.summaries").read_text().splitlines()) == 2
    summary = (out / "a.txt.summary").read_text().strip()
    assert summary and set(summary.split()) <= {f"w{i}" for i in range(40)} | {"."}
    # bad inputs fail before a model is loaded, one line each
    for name, message in (("bad.txt", "bad.txt:2: not UTF-8 (byte 9: b'\\xff')"),
                          ("empty.txt", "empty.txt: document 2 is empty")):
        proc = run_cli("fairseq-hier-summarize", runs / "pht", tmp_path / name, "--cpu",
                       "--no-progress-bar", check=False)
        assert proc.returncode == 1
        assert proc.stdout.strip().splitlines() == [
            f"fairseq-hier-summarize: error: {tmp_path}/{message}"]


def test_record_errors(tmp_path):
    from fairseq_hier.inference.record import RecordError, write_record

    (tmp_path / "bin").mkdir()
    with pytest.raises(RecordError, match="has no option 'bogus'"):
        write_record(str(tmp_path / "bin"), "hierarchical_summarization", "paragraphs",
                     {"bogus": 1})
    with pytest.raises(RecordError, match=r"needs the asset 'spm.model' \(--asset spm.model=PATH\)"):
        write_record(str(tmp_path / "bin"), "hierarchical_summarization", "paragraphs",
                     {"subword": "sentencepiece"})
    with pytest.raises(RecordError, match="option tokenizer='moses' is not one of whitespace, spacy"):
        write_record(str(tmp_path / "bin"), "hierarchical_summarization", "paragraphs",
                     {"tokenizer": "moses"})
    with pytest.raises(RecordError, match="prepares data for hierarchical_summarization, not for "
                                          "task 'hat_summarization'"):
        write_record(str(tmp_path / "bin"), "hat_summarization", "paragraphs")


def test_sentencepiece_pipeline_matches_spm_encode(tmp_path):
    """The pipeline's subword step is fairseq-hier-spm encode's, separators kept whole."""
    from fairseq_hier.cli import spm as spm_cli
    from fairseq_hier.inference.pipelines import ParagraphPipeline, RawExample
    from fairseq_hier.inference.record import Assets

    text = tmp_path / "train.tok"
    words = ["lisbon", "is", "the", "capital", "of", "portugal", "river", "tagus", "city"]
    text.write_text("".join(" ".join(words[i:] + words[:i]) + " <P> " + " ".join(words) + "\n"
                            for i in range(len(words))))
    spm_cli.cli_main(["train", "--input", str(text), "--output-prefix", str(tmp_path / "spm"),
                      "--vocab-size", "40"])
    raw = tmp_path / "raw.src"
    raw.write_text("Lisbon city <P> the capital of portugal <P> river tagus\n")
    spm_cli.cli_main(["encode", "--model", str(tmp_path / "spm.model"), "--input", str(raw),
                      "-o", str(tmp_path / "enc.src")])
    pipeline = ParagraphPipeline({"subword": "sentencepiece", "post_process": "sentencepiece"},
                                 Assets({"spm.model": str(tmp_path / "spm.model")}))
    lines = pipeline.encode(RawExample(["the capital of portugal\nriver tagus"], "Lisbon city"))
    assert lines == [(tmp_path / "enc.src").read_text().strip()]
    assert pipeline.decode(["▁the ▁cap ital"]) == "the capital"


@pytest.mark.parametrize("precision,dtype", [("bf16", "bfloat16"), ("fp16", "float16")])
def test_api_half_precision(runs, raw_corpus, precision, dtype):
    """--bf16 / --fp16 among the generation options cast the model (as fairseq-generate does)
    and decode every input."""
    import torch

    from fairseq_hier.inference import HierSummarizer

    summarizer = HierSummarizer.from_pretrained(str(runs / "pht"), cpu=True, beam=2, max_len_b=8,
                                                **{precision: True})
    assert next(summarizer.models[0].parameters()).dtype == getattr(torch, dtype)
    out = summarizer.generate((raw_corpus / "test.src").read_text().splitlines())
    assert len(out) == 8 and all(h[0]["text"] and h[0]["positional_scores"].isfinite().all()
                                 for h in out)
