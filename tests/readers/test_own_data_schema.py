"""Your own data: the JSON-lines schema (fairseq_hier/readers/own_data.py) read by
``fairseq-hier-to-raw --format jsonl``, ``fairseq-hier-sentence-bos --format jsonl`` and
``fairseq-hier-summarize``; the inference pipelines split documents as the converters do; any
number of references per example for ``fairseq-hier-rouge`` (a ``.refs.jsonl`` file), checked
against ROUGE-1.5.5.pl run directly (tests/support/rouge_oracle.py)."""

import json
import logging

import pytest

from conftest import run_cli, write_tiny_gpt2_bpe
from fairseq_hier.cli.rouge import cli_main as rouge_main
from fairseq_hier.data.paragraphs import split_source
from fairseq_hier.inference.inputs import read_inputs, read_jsonl
from fairseq_hier.inference.pipeline_base import RawExample
from fairseq_hier.inference.pipelines import ParagraphPipeline
from fairseq_hier.readers.lines import ReaderError
from fairseq_hier.scoring import rouge
from rouge_oracle import perl_direct, report_lines

PROG = "fairseq-hier-to-raw"
GOOD = '{"id": "c1", "documents": ["ok"], "summary": "s"}'
needs_official = pytest.mark.skipif(
    rouge.official_unavailable() is not None,
    reason=f"official ROUGE-1.5.5 cannot run here: {rouge.official_unavailable()}")


def write_jsonl(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def convert(tmp_path, *args, check=True):
    """Run the real command in ``tmp_path``; (exit status, output lines without log lines)."""
    proc = run_cli(PROG, "--format", "jsonl", *args, cwd=tmp_path, check=check)
    return proc.returncode, proc.stdout


def log_messages(output, logger="fairseq_hier.jsonl_to_raw"):
    """The messages of ``logger``'s lines in a command's output (the time stamp dropped)."""
    marker = f" | {logger} | "
    return [line.split(marker, 1)[1] for line in output.splitlines() if marker in line]


# ----------------------------------------------------------------------------------------------
# every bad line: one error naming file, line (id) and field; nothing written

BAD_LINES = [
    ('{"id": "c2", "documents": ["a"], "summary": "s"',
     "train.jsonl:2: invalid JSON (Expecting ',' delimiter at column 48; expected one example "
     "per line, a JSON object)"),
    ('["a"]', "train.jsonl:2: the line is a JSON list (expected one example: a JSON object with "
              "keys documents)"),
    ('"a text"', "train.jsonl:2: the line is a JSON string (expected one example: a JSON object "
                 "with keys documents)"),
    ('{"id": "c2", "summary": "s"}', "train.jsonl:2 (id 'c2'): the example lacks the key(s) "
                                     "documents (expected keys documents; has id, summary)"),
    ('{"id": "c2", "documents": "a", "summary": "s"}',
     "train.jsonl:2 (id 'c2'): 'documents' is a JSON string (expected a list of documents)"),
    ('{"id": "c2", "documents": [], "summary": "s"}',
     "train.jsonl:2 (id 'c2'): 'documents' is empty (expected at least one document)"),
    ('{"id": "c2", "documents": ["a", null], "summary": "s"}',
     "train.jsonl:2 (id 'c2'): 'documents' item 1 is a JSON null (expected a string: a "
     "document)"),
    ('{"id": "c2", "title": 3, "documents": ["a"], "summary": "s"}',
     "train.jsonl:2 (id 'c2'): 'title' is a JSON number (expected a string or null)"),
    ('{"id": "c2", "documents": ["a"], "summary": {"text": "s"}}',
     "train.jsonl:2 (id 'c2'): 'summary' is a JSON object (expected a string or a list of "
     "strings)"),
    ('{"id": "c2", "documents": ["a"], "summary": []}',
     "train.jsonl:2 (id 'c2'): 'summary' is an empty list (expected at least one summary)"),
    ('{"id": "c2", "documents": ["a"], "summary": ["x", 2]}',
     "train.jsonl:2 (id 'c2'): 'summary' item 1 is a JSON number (expected a string: a "
     "summary)"),
    ('{"id": "c2", "documents": ["a"], "summary": ["x", " \\n"]}',
     "train.jsonl:2 (id 'c2'): 'summary' item 1 is empty (expected the text of a summary)"),
    ('{"id": "c2", "documents": ["a"], "summary": ""}',
     "train.jsonl:2 (id 'c2'): 'summary' is empty (expected the text of a summary)"),
    ('{"id": "c2", "documents": ["a"]}',
     "train.jsonl:2 (id 'c2'): 'summary' is missing (expected a string or a list of strings, as "
     "other examples of the file have)"),
    ('{"id": 2.5, "documents": ["a"], "summary": "s"}',
     "train.jsonl:2: 'id' is a JSON number (expected a string or an integer)"),
    ('{"id": true, "documents": ["a"], "summary": "s"}',
     "train.jsonl:2: 'id' is a JSON boolean (expected a string or an integer)"),
    ('{"id": " ", "documents": ["a"], "summary": "s"}',
     "train.jsonl:2: 'id' ' ' is empty, or holds a tab, a line break or surrounding spaces "
     "(expected an id on one line, or an integer)"),
    ('{"id": "c1", "documents": ["a"], "summary": "s"}',
     "train.jsonl:2 (id 'c1'): id 'c1' is also the id of line 1 (expected a different id on "
     "every line)"),
]


@pytest.mark.parametrize("line, message", BAD_LINES, ids=[m.split(": ", 1)[1][:40]
                                                         for _, m in BAD_LINES])
def test_a_bad_line_is_one_error_naming_file_line_and_field(tmp_path, line, message):
    write_jsonl(tmp_path / "train.jsonl", [GOOD, line, GOOD.replace("c1", "c3")])
    code, out = convert(tmp_path, "--train", "train.jsonl", "--output-dir", "raw", check=False)
    assert code == 1 and out.splitlines() == [f"{PROG}: error: {message}"]
    assert not (tmp_path / "raw").exists()


def test_bytes_ids_and_files_without_summaries(tmp_path):
    """Not UTF-8, an id that is another line's number, a file of documents without summaries
    (fairseq-hier summarize is named), a missing split file: one line each, nothing written."""
    (tmp_path / "train.jsonl").write_bytes(GOOD.encode() + b'\n{"documents": ["a \xff"]}\n')
    write_jsonl(tmp_path / "ids.jsonl", ['{"id": 2, "documents": ["a"], "summary": "s"}',
                                         '{"documents": ["b"], "summary": "s"}'])
    write_jsonl(tmp_path / "new.jsonl", ['{"documents": ["a"]}', "",
                                         '{"documents": ["b"], "summary": null}'])
    cases = [
        (["--train", "train.jsonl"], "train.jsonl:2: not UTF-8 text (invalid start byte at byte "
                                     "18 of the line)"),
        (["--test", "ids.jsonl"], "ids.jsonl:2: id '2' is also the id of line 1 (line 2 has no "
                                  "'id': its line number is its id) (expected a different id "
                                  "on every line)"),
        (["--test", "new.jsonl"], "new.jsonl: no example has a 'summary' (summaries are needed "
                                  "to train and to score; to summarise documents without "
                                  "summaries, use fairseq-hier summarize)"),
        (["--input-dir", ".", "--train", "train.jsonl"],
         "--input-dir and --train exclude each other (give the folder, or each split's file)"),
        (["--input-dir", ".", "--splits", "test"],
         "./test.jsonl not found (the test split; also looked for test.jsonl.gz; --splits "
         "chooses the splits)"),
    ]
    for args, message in cases:
        code, out = convert(tmp_path, *args, "--output-dir", "raw", check=False)
        assert code == 1 and out.splitlines() == [f"{PROG}: error: {message}"]
    assert not (tmp_path / "raw").exists()


# ----------------------------------------------------------------------------------------------
# what becomes a paragraph, what is written and counted

EXAMPLES = [
    {"id": "a", "title": "The  Title", "documents": [
        "First line.\nSecond line.\n\n \nA block <P> here.", "", "Doc\u2581two."],
        "summary": "A  summary.", "url": "x"},
    {"documents": ["only\n\n\n  \nblocks"], "summary": "s\none", "url": "y"},
    {"id": 7, "documents": ["  ", "\n"], "summary": "x"},
]

# the .src lines of the first two examples (the third has no paragraph: skipped) per mode
SOURCES = {
    "documents": ["The Title <P> First line. Second line. A block < P > here. <P> Doc_two.",
                  "<P> only blocks"],
    "blocks": ["The Title <P> First line. Second line. <P> A block < P > here. <P> Doc_two.",
               "<P> only <P> blocks"],
    "lines": ["The Title <P> First line. <P> Second line. <P> A block < P > here. <P> Doc_two.",
              "<P> only <P> blocks"],
}
PARAGRAPHS = {"documents": 3, "blocks": 5, "lines": 6}


def test_paragraph_modes_files_and_counts(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    lines = [json.dumps(x) for x in EXAMPLES]
    write_jsonl(data / "train.jsonl", [lines[0], "", *lines[1:]])
    write_jsonl(data / "val.jsonl", lines[:2])  # the publishers' name of valid
    for mode, sources in SOURCES.items():
        code, out = convert(tmp_path, "--input-dir", "data", "--splits", "train,val",
                            "--output-dir", mode, "--paragraphs", mode)
        raw = tmp_path / mode
        assert sorted(p.name for p in raw.iterdir()) == [
            "train.ids", "train.src", "train.tgt", "valid.ids", "valid.src", "valid.tgt"]
        for split in ("train", "valid"):
            assert (raw / f"{split}.src").read_text() == "".join(s + "\n" for s in sources)
            assert (raw / f"{split}.tgt").read_text() == "A summary.\ns one\n"
            ids = "a\n3\n" if split == "train" else "a\n2\n"  # the line number without an id
            assert (raw / f"{split}.ids").read_text() == ids
        n = PARAGRAPHS[mode]
        assert log_messages(out) == [
            f"[train] data/train.jsonl -> {mode}/train.src, {mode}/train.tgt, {mode}/train.ids: "
            f"examples=2 documents=3 blank_lines_skipped=1 empty_documents=3 paragraphs={n} "
            f"separators_escaped=1 skipped_no_paragraph=1 summaries=2 titles=1 "
            f"whitespace_chars_collapsed=3 word_markers_replaced=1",  # "A  summary." 2, "s\none" 1
            "[train] 1 examples skipped (no non-empty paragraph): line 4",
            f"[valid] data/val.jsonl -> {mode}/valid.src, {mode}/valid.tgt, {mode}/valid.ids: "
            f"examples=2 documents=3 empty_documents=1 paragraphs={n} separators_escaped=1 "
            f"summaries=2 titles=1 whitespace_chars_collapsed=3 word_markers_replaced=1"]
        assert log_messages(out, "fairseq_hier.readers.own_data") == [
            "data/train.jsonl: unknown key(s) ignored: 'url' (2 examples)",
            "data/val.jsonl: unknown key(s) ignored: 'url' (2 examples)"]
    # --max-documents: the first N documents, before empty ones are dropped
    code, out = convert(tmp_path, "--valid", "data/val.jsonl", "--output-dir", "cap",
                        "--max-documents", "2")
    assert (tmp_path / "cap" / "valid.src").read_text() == (
        "The Title <P> First line. Second line. A block < P > here.\n<P> only blocks\n")
    assert ("documents_beyond_cap=1 empty_documents=1 examples_cut_by_cap=1 paragraphs=2"
            in log_messages(out)[0])


def test_several_summaries_give_refs_jsonl_and_a_stale_one_goes(tmp_path):
    write_jsonl(tmp_path / "test.jsonl", [
        json.dumps({"documents": ["d1"], "summary": ["first  one", "second\tone",
                                                     "<t> third . </t> <t> more . </t>"]}),
        json.dumps({"documents": ["d2"], "summary": "only <P> one"})])
    code, out = convert(tmp_path, "--test", "test.jsonl", "--output-dir", "raw")
    raw = tmp_path / "raw"
    assert (raw / "test.tgt").read_text() == "first one\nonly < P > one\n"
    assert [json.loads(x) for x in (raw / "test.refs.jsonl").read_text().splitlines()] == [
        ["first one", "second one", "third . more ."], ["only < P > one"]]
    assert log_messages(out)[0].endswith(
        "examples=2 documents=2 examples_with_several_summaries=1 paragraphs=2 "
        "separators_escaped=1 summaries=4 t_tagged_summaries=1 "
        "whitespace_chars_collapsed=3")  # "first  one" 2, "second\tone" 1
    # the same split with one summary each: the earlier refs.jsonl would no longer match it
    write_jsonl(tmp_path / "test.jsonl", [json.dumps({"documents": ["d1"], "summary": "s"})])
    code, out = convert(tmp_path, "--test", "test.jsonl", "--output-dir", "raw")
    assert sorted(p.name for p in raw.iterdir()) == ["test.ids", "test.src", "test.tgt"]
    assert log_messages(out)[0] == ("[test] removed raw/test.refs.jsonl: no example of "
                                    "test.jsonl has several summaries")


# ----------------------------------------------------------------------------------------------
# inference: the pipelines split as the converters; summarize reads the schema


def test_the_paragraphs_pipeline_splits_as_the_converter(tmp_path):
    """``fairseq-hier summarize``'s reading of the same file + the paragraphs pipeline with the
    record's ``paragraphs`` (and ``max_documents``) = the converter's .src lines."""
    path = write_jsonl(tmp_path / "test.jsonl", [json.dumps(x) for x in EXAMPLES[:2]])
    examples = read_jsonl(str(path))
    for mode, sources in SOURCES.items():
        pipeline = ParagraphPipeline({"paragraphs": mode}, None)
        assert [pipeline.encode(x)[0] for x in examples] == sources
    capped = ParagraphPipeline({"paragraphs": "documents", "max_documents": 1}, None)
    assert capped.encode(examples[0]) == ["The Title <P> First line. Second line. A block < P > "
                                          "here."]
    with pytest.raises(ValueError, match=r"option paragraphs='sentences' is not one of "
                                         r"documents, blocks, lines$"):
        ParagraphPipeline.check_options(ParagraphPipeline.resolve_options(
            {"paragraphs": "sentences"}), "record.json")


def test_summarize_reads_the_schema(tmp_path, caplog):
    lines = [json.dumps({"id": "q1", "title": "T", "documents": ["a\nb", " "], "summary": 3,
                         "url": "u"}),
             json.dumps(["bare", "list"]),
             json.dumps({"documents": ["c"], "summary": None})]
    path = write_jsonl(tmp_path / "docs.jsonl", lines)
    with caplog.at_level(logging.INFO):
        ((name, examples),) = read_inputs([str(path)], progress=False)
    assert [(x.documents, x.title, x.where) for x in examples] == [
        (["a\nb"], "T", f"{path}:1 (id 'q1')"), (["bare", "list"], None, f"{path}:2"),
        (["c"], None, f"{path}:3")]
    assert f"{path}: 1 empty document(s) dropped" in caplog.messages
    # a bad line through the real command, before any checkpoint is looked at
    write_jsonl(tmp_path / "bad.jsonl", [lines[0], '{"id": "q1", "documents": ["x"]}'])
    write_jsonl(tmp_path / "empty.jsonl", ['{"id": 5, "documents": ["", " \\n"]}'])
    for name, message in (
            ("bad.jsonl", "bad.jsonl:2 (id 'q1'): id 'q1' is also the id of line 1 (expected a "
                          "different id on every line)"),
            ("empty.jsonl", "empty.jsonl:1 (id 5): every document is empty (nothing to "
                            "summarise)")):
        proc = run_cli("fairseq-hier-summarize", "no_checkpoint", name, "-o", "out.txt",
                       "--no-progress-bar", cwd=tmp_path, check=False, fork=False)
        assert proc.returncode == 1
        assert proc.stdout.splitlines() == [f"fairseq-hier-summarize: error: {message}"]
    assert not (tmp_path / "out.txt").exists()


def test_sentence_bos_jsonl_and_the_hat_pipeline(tmp_path):
    """``fairseq-hier-sentence-bos --format jsonl``: documents split one by one (pysbd, or their
    <t> tags), the first summary the target, all of them in PREFIX.refs.jsonl; the sentence_bos
    pipeline with format=jsonl encodes summarize's reading of the file to the same lines."""
    from fairseq_hier.cli.sentence_bos import cli_main
    from fairseq_hier.inference.record import Assets
    from fairseq_hier.inference.sentence_pipeline import SentenceBOSPipeline

    bpe = write_tiny_gpt2_bpe(tmp_path / "bpe")
    path = write_jsonl(tmp_path / "test.jsonl", [
        json.dumps({"id": "a", "title": "T", "documents": [
            "The model reads long papers. It writes notes", "we study meetings."],
            "summary": ["we study the notes.", "a  b"]}),
        json.dumps({"documents": ["<t> one two . </t> <t> three . </t>", "  "],
                    "summary": "<t> x y . </t>"})])
    files = ["--gpt2-encoder-json", str(bpe / "encoder.json"), "--gpt2-vocab-bpe",
             str(bpe / "vocab.bpe")]
    assert cli_main(["--format", "jsonl", "--input", str(path), "--output-prefix",
                     str(tmp_path / "out" / "test"), *files, "--no-progress-bar"]) == 0
    out = tmp_path / "out"
    assert (out / "test.ids").read_text() == "a\n2\n"
    assert (out / "test.ref").read_text() == "we study the notes.\nx y .\n"
    assert (out / "test.refs.jsonl").read_text() == ('["we study the notes.", "a b"]\n'
                                                     '["x y ."]\n')
    # a sentence per BOS: 2 + 1 split by pysbd (never across the two documents), 2 tagged
    assert (out / "test.sentences").read_text() == "3\n2\n"
    assets = Assets({"encoder.json": str(bpe / "encoder.json"),
                     "vocab.bpe": str(bpe / "vocab.bpe")})
    pipeline = SentenceBOSPipeline({"format": "jsonl"}, assets)
    SentenceBOSPipeline.check_options(pipeline.options, "record.json")
    assert ([pipeline.encode(x)[0] for x in read_jsonl(str(path))]
            == (out / "test.source").read_text().splitlines())


def test_one_sentence_a_line_models_split_new_text_only_when_asked(tmp_path):
    """format cohan reads a line as one sentence (as the data was published); split_lines
    (``fairseq-hier summarize --split-sentences``) splits each line into pysbd's sentences
    first; the option is refused for a format that splits sentences itself."""
    from fairseq_hier.inference.pipeline_base import RawExample
    from fairseq_hier.inference.record import Assets
    from fairseq_hier.inference.sentence_pipeline import RecordError, SentenceBOSPipeline

    bpe = write_tiny_gpt2_bpe(tmp_path / "bpe")
    assets = Assets({"encoder.json": str(bpe / "encoder.json"),
                     "vocab.bpe": str(bpe / "vocab.bpe")})
    text = "The model reads long papers. It writes notes.\nWe study meetings."
    as_lines = SentenceBOSPipeline({"format": "cohan"}, assets).record(text, "paper.txt")
    assert as_lines.sentences == ["The model reads long papers. It writes notes.",
                                  "We study meetings."]
    split = SentenceBOSPipeline({"format": "cohan", "split_lines": True}, assets)
    SentenceBOSPipeline.check_options(split.options, "record.json")
    assert split.record(text, "paper.txt").sentences == [
        "The model reads long papers.", "It writes notes.", "We study meetings."]
    # one BOS per sentence in the encoded line
    assert split.encode(RawExample([text]))[0].split().count("<s>") == 3
    with pytest.raises(RecordError, match="option split_lines applies to a model trained on one "
                                          "sentence a line .format cohan or presumm., not format "
                                          "source_target"):
        SentenceBOSPipeline.check_options(SentenceBOSPipeline.resolve_options(
            {"format": "source_target", "split_lines": True}), "record.json")


# ----------------------------------------------------------------------------------------------
# ROUGE: any number of references per example


@pytest.mark.parametrize("text, message", [
    ('["a ."]\n\n', "refs.jsonl:2: blank line (expected one JSON list of reference strings per "
                    "line, one line per example)"),
    ('["a ."]\n"a ."\n', "refs.jsonl:2: the line holds a JSON string (expected a JSON list of "
                         "reference strings)"),
    ('["a ."]\n[]\n', "refs.jsonl:2: the list is empty (expected at least one reference)"),
    ('["a .", 3]\n', "refs.jsonl:1: reference 2 is a JSON number (expected a string)"),
    ('["a ."\n', "refs.jsonl:1: invalid JSON (Expecting ',' delimiter at column 7; expected one "
                 "JSON list of reference strings per line, one line per example)"),
])
def test_read_references_errors(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refs.jsonl").write_text(text)
    with pytest.raises(ReaderError) as e:
        rouge.read_references(["refs.jsonl"])
    assert str(e.value) == message


def test_read_references_forms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r1").write_text("a .\nb .\n")
    (tmp_path / "r2").write_text("c .\nd .\n")
    (tmp_path / "short").write_text("e .\n")
    (tmp_path / "refs.jsonl").write_text('["a .", "c ."]\n["b ."]\n')
    assert rouge.read_references(["r1", "r2"]) == [("a .", "c ."), ("b .", "d .")]
    assert rouge.read_references(["refs.jsonl"]) == [("a .", "c ."), ("b .",)]
    with pytest.raises(ValueError, match=r"^line counts differ: r1 has 2 lines, short has 1 "):
        rouge.read_references(["r1", "short"])
    with pytest.raises(ValueError, match=r"^refs.jsonl holds all references of each example "
                                         r"\(one JSON list per line\): give it as the only "
                                         r"reference file, not with 1 other\(s\)$"):
        rouge.read_references(["refs.jsonl", "r1"])


# Three summaries; their references as sentence lists: 2, 1 and 3 references.
HYPS = ["the cat sat on the mat . the dog barked .", "children swam in the lake .",
        "the budget rose . the city built a bridge ."]
REFS = [[["the cat sat on the mat ."], ["a cat was on a mat .", "a dog barked loudly ."]],
        [["kids were swimming .", "the lake was cold ."]],
        [["the city spent more ."], ["a bridge was built .", "the budget grew ."],
         ["the town built a bridge over the river ."]]]


@needs_official
def test_refs_jsonl_scores_as_aligned_files_and_as_rouge_155_itself(tmp_path, capsys):
    def score(*files):
        assert rouge_main([*map(str, files)]) == 0
        return report_lines(capsys.readouterr().out)

    hyps = tmp_path / "hyps"
    hyps.write_text("".join(h + "\n" for h in HYPS))
    texts = [[" ".join(sentences) for sentences in refs] for refs in REFS]
    # two references on every line: the .jsonl == two aligned files
    two = tmp_path / "two.jsonl"
    two.write_text("".join(json.dumps(t[:2] if len(t) > 1 else t * 2) + "\n" for t in texts))
    columns = [tmp_path / "ref_a", tmp_path / "ref_b"]
    for k, path in enumerate(columns):
        path.write_text("".join((t[k] if len(t) > 1 else t[0]) + "\n" for t in texts))
    assert score(two, hyps) == score(*columns, hyps) != []
    # 2, 1 and 3 references: ROUGE-1.5.5.pl on a config written by hand, one model per reference
    varying = tmp_path / "varying.jsonl"
    varying.write_text("".join(json.dumps(t) + "\n" for t in texts))
    assert score(varying, hyps) == report_lines(perl_direct(tmp_path / "perl", REFS, HYPS))


def test_the_paragraphs_pipeline_repeats_the_title_as_the_ranked_shards():
    """title_placement=every: an empty title slot and 'title <T>' before every paragraph, as
    fairseq-hier-to-raw --format wikisum --title-placement every writes hiersumm's shards (liu_ht)."""
    example = RawExample(["Alpha beta.\nGamma."], "Berlin", "x:1")
    every = ParagraphPipeline({"title_placement": "every", "lowercase": True}, None)
    line = every.encode(example)[0]
    assert line == "<P> berlin <T> alpha beta. <P> berlin <T> gamma."
    title, paragraphs, _ = split_source(line, "<P>")
    assert title == [] and paragraphs == [["berlin", "<T>", "alpha", "beta."],
                                          ["berlin", "<T>", "gamma."]]
    first = ParagraphPipeline({"lowercase": True}, None)
    assert first.encode(example) == ["berlin <P> alpha beta. <P> gamma."]
    for options, message in (
            ({"title_placement": "each"}, r"option title_placement='each' is not one of first, "
                                          r"every$"),
            ({"title_placement": "every", "title": False}, r"title_placement=every repeats the "
                                                           r"title in every paragraph; it needs "
                                                           r"title=true$"),
            ({"title_placement": "every", "tokenizer": "spacy"}, r"use it with "
                                                                 r"tokenizer=whitespace$")):
        with pytest.raises(ValueError, match=message):
            ParagraphPipeline.check_options(ParagraphPipeline.resolve_options(options), "r.json")
