"""Inference from raw input for the BOS-marked tasks (``hat_summarization``,
``document_translation``):

- ``fairseq-interactive`` on the lines that were binarized gives exactly ``fairseq-generate``'s
  hypotheses on the binarized split (tokens equal, scores within 1e-4), also with ``--bpe gpt2``
  on text lines with literal ``<s>`` markers (BPE applied per sentence); a tiny model of each task
  is trained a few updates through ``fairseq-train`` on data made by the real prepare commands;
- bad interactive lines (no leading BOS, an empty sentence, too long) and speaker-segment models
  are one-line errors naming the input line, before any decoding;
- ``HierSummarizer`` on those checkpoints (the data-bins' records went into them): raw documents
  -> the same hypotheses -> the pipeline's ``decode``;
- the ``sentence_bos`` / ``doc_chunks`` pipelines: ``encode`` of a raw document equals what the
  prepare commands (``fairseq-hier-sentence-bos``; ``fairseq-hier-doc tokenize`` +
  ``fairseq-hier-doc chunk``) write for it, and ``decode`` inverts them on known cases.

The fairseq commands run as forks of one warm process (``cli_forkserver.py``).
"""

import json
import random
import re
import shutil
import subprocess

import pytest
from conftest import BIN, USER_DIR, WORDS, tiny_bart_flags

from fairseq_hier.inference.pipelines import PIPELINES, RawExample
from fairseq_hier.inference.record import Assets, write_record

HAT_MAX_SOURCE = 40
MAX_CHUNK = 24
GENERATION = ["--beam", "2", "--max-len-a", "0", "--max-len-b", "6"]  # recorded in the data-bins
DECODE = [*GENERATION, "--batch-size", "3"]
TINY_MT = ["--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "16",
           "--decoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim",
           "32", "--encoder-attention-heads", "2", "--decoder-attention-heads", "2"]
TRAIN = ["--optimizer", "adam", "--lr", "1e-3", "--max-update", "2", "--batch-size", "4",
         "--disable-validation", "--no-epoch-checkpoints", "--num-workers", "0", "--seed", "1",
         "--no-progress-bar", "--log-interval", "1", "--criterion", "cross_entropy"]


def article(rng, n):
    """An untokenised article of ``n`` sentences (pysbd splits it back)."""
    return " ".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))).capitalize()
                    + "." for _ in range(n))


def hypotheses(log):
    """{id: (score, H- text)} of a fairseq-generate / fairseq-interactive log."""
    return {int(i): (float(score), text) for i, score, text in
            re.findall(r"^H-(\d+)\t(\S+)\t(.*)$", log, flags=re.M)}


def assert_same_hypotheses(generate_log, interactive_log, n):
    gen, inter = hypotheses(generate_log), hypotheses(interactive_log)
    assert sorted(gen) == sorted(inter) == list(range(n))
    for i in range(n):
        assert inter[i][1] == gen[i][1], f"example {i}"
        assert inter[i][0] == pytest.approx(gen[i][0], abs=1e-4)


# ------------------------------------------------------------------------------- data
def prepare_hat(root, bart):
    """source_target articles -> fairseq-hier-sentence-bos (in-process) -> raw lines; the
    data-bin is made by fairseq-preprocess in the job run."""
    from fairseq_hier.cli import sentence_bos

    rng = random.Random(0)
    raw, bpe = root / "raw", root / "bpe"
    raw.mkdir()
    for split, n in (("train", 8), ("test", 3)):
        (raw / f"{split}.source").write_text("".join(article(rng, rng.randint(2, 6)) + "\n"
                                                     for _ in range(n)))
        (raw / f"{split}.target").write_text("".join(article(rng, 1) + "\n" for _ in range(n)))
        assert sentence_bos.cli_main([
            "--format", "source_target", "--input", str(raw / split), "--output-prefix",
            str(bpe / split), "--gpt2-encoder-json", str(bart / "encoder.json"),
            "--gpt2-vocab-bpe", str(bart / "vocab.bpe"), "--max-source-positions",
            str(HAT_MAX_SOURCE), "--max-target-positions", "16", "--no-progress-bar"]) == 0
        (root / "data-bin").mkdir(exist_ok=True)
        shutil.copy(bpe / f"{split}.sentences", root / "data-bin")
    write_record(str(root / "data-bin"), "hat_summarization", "sentence_bos",
                 {"format": "source_target", "max_source_positions": HAT_MAX_SOURCE},
                 {"encoder.json": str(bart / "encoder.json"), "vocab.bpe": str(bart / "vocab.bpe")},
                 GENERATION)


def prepare_doc_mt(root):
    """Toy En-De documents -> fairseq-hier-doc tokenize, fastbpe learnbpe, fairseq-hier-doc chunk
    (in-process) -> chunks and chunk maps."""
    from fairseq_hier.cli import doc
    from fairseq_hier.demo.translation_corpus import toy_document
    from fairseq_hier.readers.documents import Document, write_documents

    rng = random.Random(1)
    splits = {"train": [toy_document(rng, rng.randint(2, 6)) for _ in range(10)],
              "test": [toy_document(rng, 7), toy_document(rng, 3, True), toy_document(rng, 2)]}
    for split, docs in splits.items():
        write_documents(str(root / "raw" / split), "en", "de",
                        [Document(f"{split}{k}", s, t) for k, (s, t) in enumerate(docs)])
        assert doc.cli_main(["tokenize", "--input-prefix", str(root / "raw" / split),
                             "--output-prefix", str(root / "tok" / split), "--src-lang", "en",
                             "--tgt-lang", "de", "--no-progress-bar"]) == 0
    codes = root / "bpe.codes"
    with open(codes, "w") as f:
        subprocess.run([str(BIN / "fastbpe"), "learnbpe", "60", str(root / "tok" / "train.en"),
                        str(root / "tok" / "train.de")], stdout=f, check=True)
    (root / "data-bin").mkdir()
    for split in splits:
        assert doc.cli_main(["chunk", "--input-prefix", str(root / "tok" / split),
                             "--output-prefix", str(root / "chunks" / split), "--src-lang", "en",
                             "--tgt-lang", "de", "--codes", str(codes), "--max-chunk-tokens",
                             str(MAX_CHUNK), "--no-progress-bar"]) == 0
        shutil.copy(root / "chunks" / f"{split}.chunks", root / "data-bin")
    write_record(str(root / "data-bin"), "document_translation", "doc_chunks",
                 {"src_lang": "en", "tgt_lang": "de", "max_chunk_tokens": MAX_CHUNK},
                 {"bpe.codes": str(codes)}, GENERATION)
    return splits


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_bart_dir):
    """Both tasks: data, records, fairseq-preprocess / -train / -generate / -interactive."""
    from cli_forkserver import run_jobs

    bart = tiny_bart_dir
    hat, mt = tmp_path_factory.mktemp("hat"), tmp_path_factory.mktemp("doc_mt")
    prepare_hat(hat, bart)
    docs = prepare_doc_mt(mt)
    # interactive inputs: the binarized lines; HAT also as text with <s> markers (for --bpe gpt2)
    from fairseq.data.encoders.gpt2_bpe_utils import get_encoder

    bpe = get_encoder(str(bart / "encoder.json"), str(bart / "vocab.bpe"))
    lines = (hat / "bpe" / "test.source").read_text().splitlines()
    text = [" ".join(f"<s> {bpe.decode([int(t) for t in s.split()]).strip()}"
                     for s in line.split("<s>")[1:]) for line in lines]
    (hat / "test.text").write_text("\n".join(text) + "\n")
    bad = [lines[0], lines[1].replace("<s> ", "", 1), lines[2]]
    (hat / "bad.source").write_text("\n".join(bad) + "\n")
    # text line 2 ends in a BOS marker followed by nothing: an empty sentence
    (hat / "empty.text").write_text("\n".join([text[0], text[1] + " <s> ", text[2]]) + "\n")

    jobs = []

    def job(name, script, args, needs=()):
        jobs.append({"id": name, "script": script, "args": [str(a) for a in args],
                     "log": str(hat.parent / f"{name}.log"), "needs": list(needs)})

    common = {"hat": ["--user-dir", USER_DIR, "--task", "hat_summarization", "--source-lang",
                      "source", "--target-lang", "target", "--max-source-positions", "64",
                      "--max-target-positions", "64"],
              "mt": ["--user-dir", USER_DIR, "--task", "document_translation", "--source-lang",
                     "en", "--target-lang", "de", "--max-chunk-tokens", MAX_CHUNK,
                     "--max-source-positions", "64", "--max-target-positions", "64"]}
    job("hat-preprocess", "fairseq-preprocess", [
        "--source-lang", "source", "--target-lang", "target", "--trainpref", hat / "bpe" / "train",
        "--testpref", hat / "bpe" / "test", "--destdir", hat / "data-bin", "--srcdict",
        bart / "dict.txt", "--tgtdict", bart / "dict.txt", "--workers", "1"])
    job("mt-preprocess", "fairseq-preprocess", [
        "--source-lang", "en", "--target-lang", "de", "--trainpref", mt / "chunks" / "train",
        "--testpref", mt / "chunks" / "test", "--destdir", mt / "data-bin",
        "--joined-dictionary", "--workers", "1"])
    job("hat-train", "fairseq-train", [hat / "data-bin", *common["hat"], "--arch", "hat_bart_base",
                                       *tiny_bart_flags(), "--save-dir", hat / "ckpt", *TRAIN],
        ["hat-preprocess"])
    job("mt-train", "fairseq-train", [mt / "data-bin", *common["mt"], "--arch",
                                      "hat_transformer_iwslt_zh_en", *TINY_MT,
                                      "--share-all-embeddings", "--save-dir", mt / "ckpt", *TRAIN],
        ["mt-preprocess"])
    for kind, root in (("hat", hat), ("mt", mt)):
        ckpt = ["--path", root / "ckpt" / "checkpoint_last.pt"]
        job(f"{kind}-generate", "fairseq-generate", [root / "data-bin", *common[kind], *ckpt,
                                                     "--gen-subset", "test", *DECODE],
            [f"{kind}-train"])
        source = hat / "bpe" / "test.source" if kind == "hat" else mt / "chunks" / "test.en"
        job(f"{kind}-interactive", "fairseq-interactive", [
            root / "data-bin", *common[kind], *ckpt, "--input", source, "--buffer-size", "3",
            *DECODE], [f"{kind}-train"])
    job("hat-interactive-bpe", "fairseq-interactive", [
        hat / "data-bin", *common["hat"], "--path", hat / "ckpt" / "checkpoint_last.pt",
        "--input", hat / "test.text", "--buffer-size", "3", "--bpe", "gpt2",
        "--gpt2-encoder-json", bart / "encoder.json", "--gpt2-vocab-bpe", bart / "vocab.bpe",
        *DECODE], ["hat-train"])
    job("hat-interactive-bad", "fairseq-interactive", [
        hat / "data-bin", *common["hat"], "--path", hat / "ckpt" / "checkpoint_last.pt",
        "--input", hat / "bad.source", "--buffer-size", "3", *DECODE], ["hat-train"])
    job("hat-interactive-empty", "fairseq-interactive", [
        hat / "data-bin", *common["hat"], "--path", hat / "ckpt" / "checkpoint_last.pt",
        "--input", hat / "empty.text", "--buffer-size", "3", "--bpe", "gpt2",
        "--gpt2-encoder-json", bart / "encoder.json", "--gpt2-vocab-bpe", bart / "vocab.bpe",
        *DECODE], ["hat-train"])
    results = run_jobs(jobs)
    logs = {}
    for name, result in results.items():
        log = (hat.parent / f"{name}.log").read_text()
        if name not in ("hat-interactive-bad", "hat-interactive-empty"):
            assert result["rc"] == 0, f"{name} failed ({result['rc']}):\n{log[-3000:]}"
        logs[name] = (result["rc"], log)
    return {"hat": hat, "mt": mt, "bart": bart, "logs": logs, "lines": lines, "docs": docs}


# ------------------------------------------------------------------------------- end to end
@pytest.mark.parametrize("kind", ["hat", "mt"])
def test_interactive_on_the_binarized_lines_equals_generate(runs, kind):
    n = 3 if kind == "hat" else len((runs["mt"] / "chunks" / "test.en").read_text().splitlines())
    if kind == "mt":
        assert n > 3  # the 7-sentence document and the over-long sentence make extra chunks
    assert_same_hypotheses(runs["logs"][f"{kind}-generate"][1],
                           runs["logs"][f"{kind}-interactive"][1], n)


def test_interactive_with_gpt2_bpe_encodes_each_sentence_between_the_markers(runs):
    """``<s> First sentence. <s> Second one.`` with --bpe gpt2: the same source tokens (S- lines)
    and hypotheses as the binarized lines."""
    log = runs["logs"]["hat-interactive-bpe"][1]
    sources = dict(re.findall(r"^S-(\d+)\t(.*)$", log, flags=re.M))  # fairseq prints no BOS
    assert [sources[str(i)] for i in range(3)] == [" ".join(line.replace("<s>", "").split())
                                                   for line in runs["lines"]]
    assert_same_hypotheses(runs["logs"]["hat-generate"][1], log, 3)
    # the tokens themselves, BOS included, through the task as fairseq-interactive calls it
    from fairseq.data.encoders.gpt2_bpe import GPT2BPE, GPT2BPEConfig

    bart = runs["bart"]
    bpe = GPT2BPE(GPT2BPEConfig(gpt2_encoder_json=str(bart / "encoder.json"),
                                gpt2_vocab_bpe=str(bart / "vocab.bpe")))
    task = interactive_task(runs["hat"] / "data-bin", "--task", "hat_summarization",
                            "--source-lang", "source", "--target-lang", "target")
    text = (runs["hat"] / "test.text").read_text().splitlines()
    assert text[0].startswith("<s> ") and text[0].count("<s>") == runs["lines"][0].count("<s>")
    tokens, _ = task.get_interactive_tokens_and_lengths(text, bpe.encode)
    binarized = [task.source_dictionary.encode_line(line, add_if_not_exist=False)
                 for line in runs["lines"]]
    assert [t.tolist() for t in tokens] == [t.tolist() for t in binarized]


def test_a_line_without_leading_bos_stops_interactive_before_decoding(runs):
    rc, log = runs["logs"]["hat-interactive-bad"]
    assert rc == 1 and "H-" not in log and "Traceback" not in log
    assert log.strip().splitlines()[-1] == (
        "fairseq-interactive: error: input line 2: the source does not start with the BOS "
        "symbol <s> (every sentence must open with <s>, as fairseq-hier-sentence-bos writes)")


def test_an_empty_bos_sentence_stops_interactive_before_decoding(runs):
    """``... <s> `` (a marker followed by nothing) on text line 2, with --bpe gpt2."""
    rc, log = runs["logs"]["hat-interactive-empty"]
    assert rc == 1 and "H-" not in log and "Traceback" not in log
    n = runs["lines"][1].count("<s>") + 1  # the appended marker opens the last sentence
    assert log.strip().splitlines()[-1] == (
        f"fairseq-interactive: error: input line 2: sentence {n} is empty (<s> with nothing "
        f"before the next <s> or the end of the line)")


def test_empty_sentences_are_found_between_markers_and_at_the_end(runs):
    """Every place an empty sentence can take in a line (binarized format and text), counted
    over the whole input; a line whose sentences all hold a token passes."""
    import torch

    from fairseq_hier.tasks.hat_summarization import empty_sentence

    hat = interactive_task(runs["hat"] / "data-bin", "--task", "hat_summarization",
                           "--source-lang", "source", "--target-lang", "target")
    d = hat.source_dictionary

    def line(*ids):
        return torch.tensor([*ids, d.eos()])

    assert empty_sentence(line(d.bos(), 7, d.bos(), 8), d.bos(), d.eos()) == 0
    assert empty_sentence(line(d.bos(), d.bos(), 8), d.bos(), d.eos()) == 1
    assert empty_sentence(line(d.bos(), 7, d.bos(), 8, d.bos()), d.bos(), d.eos()) == 3
    assert empty_sentence(line(d.bos()), d.bos(), d.eos()) == 1
    tokens, lengths = hat.get_interactive_tokens_and_lengths(["<s> 4 <s> 5", "<s> 6"],
                                                             lambda x: x)
    assert hat.build_dataset_for_inference(tokens, lengths) is not None
    tokens, lengths = hat.get_interactive_tokens_and_lengths(
        ["<s> 4 <s>   <s> 5", "<s> 6 <s> ", "<s>"], lambda x: x)
    with pytest.raises(ValueError) as e:  # lines 3-5 of the whole input
        hat.build_dataset_for_inference(tokens, lengths)
    assert str(e.value) == ("input line 3: sentence 2 is empty (<s> with nothing before the "
                            "next <s> or the end of the line) (and 2 more bad line(s))")


def interactive_task(data_bin, *args):
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    parser = options.get_interactive_generation_parser()
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(
        parser, [str(data_bin), "--user-dir", USER_DIR, *map(str, args)]))
    return tasks.setup_task(cfg.task)


def test_too_long_lines_and_segment_models_are_one_line_errors(runs):
    hat = interactive_task(runs["hat"] / "data-bin", "--task", "hat_summarization",
                           "--source-lang", "source", "--target-lang", "target",
                           "--max-source-positions", "12")
    lines = ["<s> 1 2 3", "<s> " + " ".join(["7"] * 11), "<s> 4", "<s> " + " ".join(["7"] * 20)]
    tokens, lengths = hat.get_interactive_tokens_and_lengths(lines[:2], lambda x: x)
    assert hat.build_dataset_for_inference(tokens[:1], lengths[:1]) is not None
    tokens, lengths = hat.get_interactive_tokens_and_lengths(lines[2:], lambda x: x)
    with pytest.raises(ValueError) as e:  # lines 3 and 4 of the whole input
        hat.build_dataset_for_inference(tokens, lengths)
    assert str(e.value) == ("input line 4: 22 tokens (EOS included) > --max-source-positions 12 "
                            "(cut the document at sentence boundaries: fairseq-hier-sentence-bos "
                            "--max-source-positions)")
    hat.model_segments = 3
    with pytest.raises(ValueError, match=r"^hat_summarization: the model has 3 speaker segment "
                                         r"embeddings \(--segment-embeddings 3\), but raw input "
                                         r"lines carry no speaker per sentence"):
        hat.build_dataset_for_inference(tokens[:1], lengths[:1])

    mt = interactive_task(runs["mt"] / "data-bin", "--task", "document_translation",
                          "--source-lang", "en", "--target-lang", "de", "--max-chunk-tokens", "5")
    tokens, lengths = mt.get_interactive_tokens_and_lengths(
        ["<s> a b <s> c", "", "<s> a b c d e"], lambda x: x)
    with pytest.raises(ValueError) as e:
        mt.build_dataset_for_inference(tokens, lengths)
    assert str(e.value) == "input line 2: the source is empty (and 1 more bad line(s))"
    tokens, lengths = mt.get_interactive_tokens_and_lengths(["<s> a b c d e"], lambda x: x)
    with pytest.raises(ValueError, match=r"^input line 4: 7 tokens \(EOS included\) > "
                                         r"\(--max-chunk-tokens \+ EOS\) 6 \(cut the document at "
                                         r"sentence boundaries: fairseq-hier-doc chunk "
                                         r"--max-chunk-tokens\)$"):
        mt.build_dataset_for_inference(tokens, lengths)


def test_doc_mt_bpe_is_applied_per_sentence_between_markers(runs):
    """--bpe fastbpe's encode_fn on text lines gives the chunk lines of fairseq-hier-doc chunk."""
    import fastBPE

    from fairseq_hier.data.bpe_codes import remove_bpe

    mt = interactive_task(runs["mt"] / "data-bin", "--task", "document_translation",
                          "--source-lang", "en", "--target-lang", "de", "--max-chunk-tokens",
                          MAX_CHUNK)
    bpe = fastBPE.fastBPE(str(runs["mt"] / "bpe.codes"))
    chunks = (runs["mt"] / "chunks" / "test.en").read_text().splitlines()
    text = [remove_bpe(line) for line in chunks]
    assert mt.encode_marked_line(text[0], lambda x: bpe.apply([x])[0]) == chunks[0]
    tokens, _ = mt.get_interactive_tokens_and_lengths(text, lambda x: bpe.apply([x])[0])
    binarized = [mt.source_dictionary.encode_line(c, add_if_not_exist=False) for c in chunks]
    assert [t.tolist() for t in tokens] == [t.tolist() for t in binarized]


def test_the_summarizer_decodes_as_interactive_then_the_pipeline(runs):
    """HierSummarizer on a checkpoint of each task (the record went into it with training): raw
    documents -> the pipeline's lines -> the same hypotheses as fairseq-interactive on the
    prepare commands' lines -> the pipeline's decode."""
    from fairseq_hier.inference.summarizer import HierSummarizer

    hat, mt = runs["hat"], runs["mt"]
    summarizer = HierSummarizer.from_pretrained(str(hat / "ckpt"), "checkpoint_last.pt",
                                                cpu=True, batch_size=3)
    hyps = hypotheses(runs["logs"]["hat-interactive"][1])
    raw = (hat / "raw" / "test.source").read_text().splitlines()
    assert summarizer.summarize(raw) == [summarizer.pipeline.decode([hyps[i][1]])
                                         for i in range(3)]

    summarizer = HierSummarizer.from_pretrained(str(mt / "ckpt"), "checkpoint_last.pt",
                                                cpu=True, batch_size=3)
    hyps = hypotheses(runs["logs"]["mt-interactive"][1])
    docids = [line.split("\t")[0] for line in (mt / "chunks" / "test.chunks").read_text()
              .splitlines()]
    docs = ["\n".join(src) for src, _ in runs["docs"]["test"]]
    # the target side never decided a cut of these documents: the pipeline's chunks are the
    # prepare step's
    assert [summarizer.pipeline.encode(RawExample([d])) for d in docs] == [
        [c for c, d in zip((mt / "chunks" / "test.en").read_text().splitlines(), docids)
         if d == f"test{k}"] for k in range(len(docs))]
    assert summarizer.summarize(docs) == [
        summarizer.pipeline.decode([hyps[i][1] for i, d in enumerate(docids) if d == f"test{k}"])
        for k in range(len(docs))]


# ------------------------------------------------------------------------------- pipelines
def hat_pipeline(bart, **options):
    assets = Assets({"encoder.json": str(bart / "encoder.json"),
                     "vocab.bpe": str(bart / "vocab.bpe")})
    return PIPELINES["sentence_bos"](options, assets)


def test_sentence_bos_pipeline_encodes_as_the_prepare_command_writes(runs):
    """Every raw article of the HAT data (some cut at a sentence boundary) gives the line
    fairseq-hier-sentence-bos wrote; decode gives the text of BPE ids back."""
    hat, bart = runs["hat"], runs["bart"]
    pipeline = hat_pipeline(bart, format="source_target", max_source_positions=HAT_MAX_SOURCE)
    for split in ("train", "test"):
        raw = (hat / "raw" / f"{split}.source").read_text().splitlines()
        written = (hat / "bpe" / f"{split}.source").read_text().splitlines()
        assert [pipeline.encode(RawExample([doc]))[0] for doc in raw] == written
    cut = sum(1 for n, doc in zip(
        (hat / "bpe" / "train.sentences").read_text().split(),
        (hat / "raw" / "train.source").read_text().splitlines()) if int(n) < doc.count("."))
    assert cut > 0 and pipeline.counts["sources cut to max_source_positions"] >= cut
    ids = pipeline.encode(RawExample(["The model reads long papers."]))[0].split()[1:]
    assert pipeline.decode([" ".join(ids)]) == "The model reads long papers."
    assert pipeline.decode([""]) == ""


def test_sentence_bos_pipeline_reads_dialogues_as_the_samsum_reader(tmp_path, tiny_bart_dir):
    from fairseq_hier.cli import sentence_bos
    from fairseq_hier.inference.pipelines import InputError

    dialogue = "Anna: we study meetings\nabout design\n\nBen: the team agrees\nAnna: results show"
    (tmp_path / "test.json").write_text(json.dumps(
        [{"id": "1", "summary": "notes", "dialogue": dialogue.replace("\n", "\r\n")}]))
    assert sentence_bos.cli_main([
        "--format", "samsum", "--input", str(tmp_path / "test.json"), "--output-prefix",
        str(tmp_path / "test"), "--gpt2-encoder-json", str(tiny_bart_dir / "encoder.json"),
        "--gpt2-vocab-bpe", str(tiny_bart_dir / "vocab.bpe"), "--no-progress-bar"]) == 0
    pipeline = hat_pipeline(tiny_bart_dir, format="samsum")
    line = pipeline.encode(RawExample([dialogue]))[0]
    assert line == (tmp_path / "test.source").read_text().strip() and line.count("<s>") == 3
    assert pipeline.counts["samsum reader: continuation_lines"] == 1
    with pytest.raises(InputError, match=r"^example 1: 2 documents; hat_summarization "
                                         r"summarises one document$"):
        pipeline.encode(RawExample(["a", "b"]))


def test_sentence_bos_pipeline_reads_articles_and_meetings_as_their_readers(tmp_path,
                                                                           tiny_bart_dir):
    """cohan: one sentence a line, lowercased (arXiv's published case); qmsum: 'speaker: content'
    turns with the filler lexicon of the asset dropped (and a turn left empty dropped)."""
    from fairseq_hier.cli import sentence_bos

    bart = tiny_bart_dir
    article = ["The model reads long papers .", "We study   meetings .", "Results show gains ."]
    turns = [("Anna", "um the team agrees"), ("Ben", "uh Mm-hmm ."), ("Anna", "results show")]
    (tmp_path / "test.txt").write_text(json.dumps({
        "article_id": "1", "article_text": [a.lower() for a in article],
        "abstract_text": ["<S> notes </S>"]}) + "\n")
    (tmp_path / "test.jsonl").write_text(json.dumps({
        "meeting_transcripts": [{"speaker": a, "content": c} for a, c in turns],
        "general_query_list": [{"query": "Summarize the whole meeting.", "answer": "notes"}]})
        + "\n")
    (tmp_path / "fillers.txt").write_text("um\nuh\nmm-hmm\n")
    flags = ["--gpt2-encoder-json", str(bart / "encoder.json"), "--gpt2-vocab-bpe",
             str(bart / "vocab.bpe"), "--max-source-positions", "18", "--no-progress-bar"]
    assert sentence_bos.cli_main(["--format", "cohan", "--input", str(tmp_path / "test.txt"),
                                  "--output-prefix", str(tmp_path / "cohan"), *flags]) == 0
    assert sentence_bos.cli_main(["--format", "qmsum", "--input", str(tmp_path / "test.jsonl"),
                                  "--filler-words", str(tmp_path / "fillers.txt"),
                                  "--output-prefix", str(tmp_path / "qmsum"), *flags]) == 0
    cohan = hat_pipeline(bart, format="cohan", max_source_positions=18, lowercase=True)
    line = cohan.encode(RawExample(["\n".join(article[:2]) + "\n\n" + article[2] + "\n"]))[0]
    assert line == (tmp_path / "cohan.source").read_text().strip()
    assert cohan.counts["sources cut to max_source_positions"] == 1  # 18 tokens: 2 sentences
    assert line.count("<s>") == int((tmp_path / "cohan.sentences").read_text()) == 2
    assets = Assets({"encoder.json": str(bart / "encoder.json"),
                     "vocab.bpe": str(bart / "vocab.bpe"),
                     "filler_words.txt": str(tmp_path / "fillers.txt")})
    qmsum = PIPELINES["sentence_bos"]({"format": "qmsum", "max_source_positions": 18,
                                       "filler_words": True}, assets)
    line = qmsum.encode(RawExample(["\n".join(f"{a}: {c}" for a, c in turns)]))[0]
    assert line == (tmp_path / "qmsum.source").read_text().strip()
    assert qmsum.counts["qmsum reader: filler_tokens_dropped"] == 3
    assert qmsum.counts["qmsum reader: turns_dropped"] == 1


def test_doc_chunks_pipeline_encodes_as_tokenize_and_chunk_write(runs, tmp_path):
    """A raw document (one sentence a line) gives the chunk lines of fairseq-hier-doc tokenize +
    fairseq-hier-doc chunk, when the source side decides the cuts (short targets here; the
    pipeline cuts by the source alone): a document of several chunks and one with an over-long
    sentence cut to the limit."""
    from fairseq_hier.cli import doc
    from fairseq_hier.readers.documents import Document, write_documents

    mt = runs["mt"]
    src_docs = [src for src, _ in runs["docs"]["test"]]
    write_documents(str(tmp_path / "raw"), "en", "de",
                    [Document(f"d{k}", s, ["Ja."] * len(s)) for k, s in enumerate(src_docs)])
    assert doc.cli_main(["tokenize", "--input-prefix", str(tmp_path / "raw"), "--output-prefix",
                         str(tmp_path / "tok"), "--src-lang", "en", "--tgt-lang", "de",
                         "--no-progress-bar"]) == 0
    assert doc.cli_main(["chunk", "--input-prefix", str(tmp_path / "tok"), "--output-prefix",
                         str(tmp_path / "out"), "--src-lang", "en", "--tgt-lang", "de", "--codes",
                         str(mt / "bpe.codes"), "--max-chunk-tokens", str(MAX_CHUNK),
                         "--no-progress-bar"]) == 0
    written = (tmp_path / "out.en").read_text().splitlines()
    rows = [line.split("\t")[0] for line in (tmp_path / "out.chunks").read_text().splitlines()]
    pipeline = PIPELINES["doc_chunks"](
        {"src_lang": "en", "tgt_lang": "de", "max_chunk_tokens": MAX_CHUNK},
        Assets({"bpe.codes": str(mt / "bpe.codes")}))
    for k, doc in enumerate(src_docs):
        lines = pipeline.encode(RawExample(["\n".join(doc) + "\n\n"]))
        assert lines == [w for w, d in zip(written, rows) if d == f"d{k}"]
    assert rows.count("d0") > 1
    assert pipeline.counts["sentences longer than max_chunk_tokens, cut"] == 1
    assert pipeline.decode(["Der Fl@@ uss ist al@@ t .", "<s> Er sing@@ t laut ."]) == \
        "Der Fluss ist alt. Er singt laut."


def test_the_records_check_the_pipeline_options(tmp_path):
    from fairseq_hier.inference.record import RecordError

    (tmp_path / "codes").write_text("a b 1\n")
    path = write_record(str(tmp_path), "document_translation", "doc_chunks",
                        {"src_lang": "zh", "tgt_lang": "en", "max_chunk_tokens": 512},
                        {"bpe.codes": str(tmp_path / "codes")}, ["--beam", "4"])
    assert json.loads(open(path).read())["options"]["src_lang"] == "zh"
    with pytest.raises(RecordError, match="option filler_words applies to format qmsum only"):
        write_record(str(tmp_path), "hat_summarization", "sentence_bos",
                     {"format": "cohan", "filler_words": True},
                     {"encoder.json": path, "vocab.bpe": path, "filler_words.txt": path})
    with pytest.raises(RecordError, match="needs the asset 'filler_words.txt'"):
        write_record(str(tmp_path), "hat_summarization", "sentence_bos",
                     {"format": "qmsum", "filler_words": True},
                     {"encoder.json": path, "vocab.bpe": path})


def test_doc_chunks_sentences_end_only_at_newlines():
    """A raw document's sentences are its lines as the raw layout ends them (``\\n``, optional
    ``\\r``): a U+2028 or form feed inside a sentence does not split it."""
    pipeline = PIPELINES["doc_chunks"]({"src_lang": "en"}, {})
    example = RawExample(["It rained\u2028all day .\r\n\nThen\x0cthe sun came out .\n"])
    from fairseq_hier.text.tokenizers import tokenizer

    tokenize = tokenizer("en")
    assert pipeline.sentences(example) == [tokenize("It rained\u2028all day ."),
                                           tokenize("Then\x0cthe sun came out .")]
