"""Multi-News / WCEP readers (fairseq_hier/readers/mds.py), ``fairseq-hier-to-raw``
(fairseq_hier/cli/to_raw.py) and ``fairseq-hier-spm`` (fairseq_hier/cli/spm.py).

Every input is written here in the publisher's layout (shared/formats/MULTINEWS_format.md,
WCEP_format.md) with made-up sentences; outputs are compared exactly."""

import collections
import gzip
import json
import logging
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from fairseq_hier.cli import spm as spm_cli, to_raw
from fairseq_hier.readers.lines import ReaderError
from fairseq_hier.readers.mds import read_multi_news, read_multi_news_preprocessed, read_wcep

WORD = "\u2581"


def write(path, text, compress=False):
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)
    return str(path)


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def convert(*args):
    """Run the command in-process; its exit status."""
    return to_raw.cli_main([str(a) for a in args])


def exact(message):
    return f"^{re.escape(message)}$"


# ---------------------------------------------------------------------------------------------
# Multi-News, raw release: articles terminated by |||||, NEWLINE_CHAR, "– " summaries
# ---------------------------------------------------------------------------------------------

MN_SRC = [
    # two articles, newlines as NEWLINE_CHAR, each article terminated
    "The mayor opened the bridge on Monday. NEWLINE_CHAR NEWLINE_CHAR Crowds cheered.|||||"
    "Rain fell all day. NEWLINE_CHAR It stopped at dusk. |||||",
    # an empty article in the middle, a literal <P> in the text
    "A first story.|||||  NEWLINE_CHAR  ||||| A third story with <P> inside it. |||||",
    # one article, a summary without the dash
    "Only one story here. |||||",
    # no article at all: skipped
    "  NEWLINE_CHAR |||||",
]
MN_TGT = [
    "\u2013 The mayor opened a bridge in the rain. NEWLINE_CHAR Crowds came anyway.",
    "\u2013 Two stories, one with a tag.",
    "No dash in this one.",
    "\u2013 Nothing to read.",
]
MN_OUT_SRC = [
    "<P> The mayor opened the bridge on Monday. Crowds cheered. <P> Rain fell all day. It "
    "stopped at dusk.",
    "<P> A first story. <P> A third story with < P > inside it.",
    "<P> Only one story here.",
]
MN_OUT_TGT = [
    "The mayor opened a bridge in the rain. Crowds came anyway.",
    "Two stories, one with a tag.",
    "No dash in this one.",
]


def test_multi_news_raw_reader(tmp_path):
    src = write(tmp_path / "train.src", "\n".join(MN_SRC) + "\n")
    tgt = write(tmp_path / "train.tgt", "\n".join(MN_TGT) + "\n")
    stats, skipped = collections.Counter(), []
    examples = list(read_multi_news(src, tgt, stats=stats, skipped=skipped))
    assert [e.line for e in examples] == [1, 2, 3]
    assert [e.documents for e in examples] == [
        ["The mayor opened the bridge on Monday. Crowds cheered.",
         "Rain fell all day. It stopped at dusk."],
        ["A first story.", "A third story with < P > inside it."],
        ["Only one story here."]]
    assert [e.summary for e in examples] == MN_OUT_TGT
    assert skipped == [4]
    # the trailing ||||| of every line is a terminator, not an empty document
    assert stats == {"examples": 3, "documents": 5, "empty_documents": 2, "newline_chars": 6,
                     "separators_escaped": 1, "summaries_without_dash": 1,
                     "skipped_no_document": 1}


def test_multi_news_cli_writes_valid_from_val(tmp_path, caplog):
    data, raw = tmp_path / "mn", tmp_path / "raw"
    data.mkdir()
    for split in ("train", "val", "test"):
        write(data / f"{split}.src", "\n".join(MN_SRC) + "\n")
        write(data / f"{split}.tgt", "\n".join(MN_TGT) + "\n")
    with caplog.at_level(logging.INFO):
        assert convert("--format", "multi_news", "--input-dir", data, "--output-dir", raw) == 0
    assert sorted(os.listdir(raw)) == [f"{s}.{e}" for s in ("test", "train", "valid")
                                       for e in ("src", "tgt")]
    assert lines_of(raw / "valid.src") == MN_OUT_SRC
    assert lines_of(raw / "valid.tgt") == MN_OUT_TGT
    log = caplog.text
    assert (f"[valid] {raw}/valid.src, {raw}/valid.tgt: examples=3 documents=5 empty_documents=2 "
            f"newline_chars=6 separators_escaped=1 skipped_no_document=1 "
            f"summaries_without_dash=1") in log
    assert "[test] 1 examples skipped (no non-empty document or an empty summary): line 4" in log


def test_multi_news_cleaned_release_has_no_trailing_terminator(tmp_path):
    src = write(tmp_path / "test.src.cleaned", "Doc one. ||||| Doc two.\nJust one doc\n")
    tgt = write(tmp_path / "test.tgt", "\u2013 One.\n\u2013 Two.\n")
    stats, skipped = collections.Counter(), []
    examples = list(read_multi_news(src, tgt, stats=stats, skipped=skipped))
    assert [e.documents for e in examples] == [["Doc one.", "Doc two."], ["Just one doc"]]
    assert [e.summary for e in examples] == ["One.", "Two."]
    assert stats == {"examples": 2, "documents": 3} and skipped == []
    raw = tmp_path / "raw"
    assert convert("--format", "multi_news", "--input-dir", tmp_path, "--output-dir", raw,
                   "--splits", "test") == 0
    assert lines_of(raw / "test.src") == ["<P> Doc one. <P> Doc two.", "<P> Just one doc"]


def test_multi_news_line_count_mismatch(tmp_path):
    src = write(tmp_path / "val.src", "A. |||||\nB. |||||\n")
    tgt = write(tmp_path / "val.tgt", "\u2013 a.\n")
    with pytest.raises(ReaderError, match=exact(
            f"{tgt}:2: line counts differ: {src} has 2 lines, {tgt} has 1 (one example per "
            f"line on both sides)")):
        list(read_multi_news(src, tgt, stats=collections.Counter(), skipped=[]))


# ---------------------------------------------------------------------------------------------
# Multi-News, preprocessed (truncated) release
# ---------------------------------------------------------------------------------------------

PRE = "tokenized.fixed.cleaned.final.truncated.txt"


def test_multi_news_preprocessed(tmp_path):
    src = write(tmp_path / f"test.txt.src.{PRE}",
                "the mayor opened the bridge . story_separator_special_tag rain fell all day .\n"
                "one story only . story_separator_special_tag  \n")
    tgt = write(tmp_path / f"test.txt.tgt.{PRE}",
                "\u2013 the mayor opened a bridge . newline_char crowds came .\n"
                "\u2013 a short one .\n")
    stats, skipped = collections.Counter(), []
    examples = list(read_multi_news_preprocessed(src, tgt, stats=stats, skipped=skipped))
    assert [e.documents for e in examples] == [
        ["the mayor opened the bridge .", "rain fell all day ."], ["one story only ."]]
    assert [e.summary for e in examples] == ["the mayor opened a bridge . crowds came .",
                                             "a short one ."]
    assert stats == {"examples": 2, "documents": 3, "empty_documents": 1, "newline_chars": 1}
    raw = tmp_path / "raw"
    assert convert("--format", "multi_news_preprocessed", "--input-dir", tmp_path,
                   "--output-dir", raw, "--splits", "test") == 0
    assert lines_of(raw / "test.src") == [
        "<P> the mayor opened the bridge . <P> rain fell all day .", "<P> one story only ."]


# ---------------------------------------------------------------------------------------------
# WCEP: one cluster per line, .jsonl or .jsonl.gz
# ---------------------------------------------------------------------------------------------

def article(title, text):
    return {"title": title, "text": text, "url": "http://example.org/x", "archive_url": None,
            "time": "2019-01-05 10:00:00", "collection": "test", "state": "successful",
            "error": None, "origin": "CommonCrawl"}


def cluster(summary, articles, cid=1):
    return {"id": cid, "date": "2019-01-05", "summary": summary, "articles": articles,
            "collection": "test", "wiki_links": [], "reference_urls": [], "category": None}


WCEP_CLUSTERS = [
    cluster("A ferry sank near the coast; all passengers were rescued.", [
        article("Ferry sinks", "A ferry sank on Saturday.\n\nEveryone was rescued."),
        article("Empty page", "  \n "),
        article("Coast guard", "The coast guard sent <P> two\u2581boats."),
    ]),
    cluster("Nothing usable was published.", [article("Gone", ""), article("Gone too", None)], 2),
    cluster("Twelve reports on one storm.",
            [article(f"Report {k}", f"Report number {k} on the storm.") for k in range(12)], 3),
    cluster("No articles at all.", [], 4),
]


def wcep_file(path, clusters=WCEP_CLUSTERS, compress=False, extra=""):
    return write(path, "".join(json.dumps(c) + "\n" for c in clusters) + extra, compress)


@pytest.mark.parametrize("name,compress", [("test.jsonl", False), ("test.jsonl.gz", True),
                                           ("test.jsonl", True)])  # gzip found by magic bytes
def test_wcep_reader_with_the_cap(tmp_path, name, compress):
    path = wcep_file(tmp_path / name, compress=compress)
    stats, skipped = collections.Counter(), []
    examples = list(read_wcep(path, stats=stats, skipped=skipped, max_articles=10))
    assert [e.line for e in examples] == [1, 3]
    assert examples[0].documents == ["A ferry sank on Saturday. Everyone was rescued.",
                                     "The coast guard sent < P > two_boats."]
    assert examples[1].documents == [f"Report number {k} on the storm." for k in range(10)]
    assert skipped == [2, 4]
    assert stats == {"examples": 2, "documents": 12, "empty_documents": 3,
                     "documents_beyond_cap": 2, "examples_cut_by_cap": 1,
                     "separators_escaped": 1, "word_markers_replaced": 1,
                     "skipped_no_document": 2}
    stats = collections.Counter()
    examples = list(read_wcep(path, stats=stats, skipped=[], max_articles=100))
    assert len(examples[1].documents) == 12 and "documents_beyond_cap" not in stats


def test_wcep_cli_with_titles(tmp_path, caplog):
    data, raw = tmp_path / "wcep", tmp_path / "raw"
    data.mkdir()
    wcep_file(data / "val.jsonl.gz", compress=True)
    with caplog.at_level(logging.INFO):
        assert convert("--format", "wcep", "--input-dir", data, "--output-dir", raw,
                       "--splits", "val", "--max-articles", "2", "--with-titles") == 0
    assert lines_of(raw / "valid.src") == [
        "<P> Ferry sinks A ferry sank on Saturday. Everyone was rescued.",
        "<P> Report 0 Report number 0 on the storm. <P> Report 1 Report number 1 on the storm."]
    assert lines_of(raw / "valid.tgt") == ["A ferry sank near the coast; all passengers were "
                                           "rescued.", "Twelve reports on one storm."]
    assert "documents_beyond_cap=11 " in caplog.text
    assert "[valid] 2 examples skipped (no non-empty document or an empty summary): lines 2, 4" \
        in caplog.text


def test_wcep_skipped_lines_logged_first_ten(tmp_path, caplog):
    clusters = [cluster("Empty.", [article("t", "")], k) for k in range(12)]
    data = tmp_path / "wcep"
    data.mkdir()
    wcep_file(data / "train.jsonl", clusters + WCEP_CLUSTERS[:1])
    with caplog.at_level(logging.INFO):
        assert convert("--format", "wcep", "--input-dir", data, "--output-dir",
                       tmp_path / "raw", "--splits", "train") == 0
    assert ("[train] 12 examples skipped (no non-empty document or an empty summary): lines 1, "
            "2, 3, 4, 5, 6, 7, 8, 9, 10 (first 10 of 12)") in caplog.text


@pytest.mark.parametrize("line,message", [
    ('{"summary": "s", "articles": [', "invalid JSON (Expecting value at column 31; expected "
                                       "one cluster, a JSON object, per line)"),
    ('{"summary": "s"}', "the cluster lacks the key(s) articles (expected keys summary, articles; "
                         "has summary)"),
    ('{"summary": "s", "articles": [{"title": "t"}]}',
     "article 0 lacks the key(s) text (expected keys text; has title)"),
    ('{"summary": 3, "articles": []}', "the cluster 'summary' is a JSON number (expected a "
                                       "string)"),
    ('["summary"]', "the cluster is a JSON list (expected one cluster, a JSON object, per line "
                    "with keys summary, articles)"),
    ('{"summary": "s", "articles": [{"text": ["t"]}]}',
     "article 0 'text' is a JSON list (expected a string or null)"),
])
def test_wcep_bad_line_names_file_and_line(tmp_path, line, message):
    path = wcep_file(tmp_path / "test.jsonl", WCEP_CLUSTERS[:2], extra=line + "\n")
    with pytest.raises(ReaderError, match=exact(f"{path}:3: {message}")):
        list(read_wcep(path, stats=collections.Counter(), skipped=[]))


def test_cli_error_is_one_line(tmp_path):
    data, raw = tmp_path / "wcep", tmp_path / "raw"
    data.mkdir()
    path = wcep_file(data / "test.jsonl", WCEP_CLUSTERS[:1], extra="{not json\n")
    proc = subprocess.run([sys.executable, "-m", "fairseq_hier.cli.to_raw", "--format",
                           "wcep", "--input-dir", str(data), "--output-dir", str(raw),
                           "--splits", "test"], cwd=ROOT, text=True, capture_output=True)
    assert proc.returncode == 1
    assert proc.stderr == (f"fairseq-hier-to-raw: error: {path}:2: invalid JSON (Expecting "
                           f"property name enclosed in double quotes at column 2; expected one "
                           f"cluster, a JSON object, per line)\n")
    assert not os.path.exists(raw / "test.src")  # nothing half-written


@pytest.mark.parametrize("args,message", [
    (["--format", "wcep", "--splits", "dev"],
     "--splits dev: unknown split 'dev' (expected a comma-separated list of train, valid, test)"),
    (["--format", "multi_news", "--with-titles"],
     "--with-titles applies to wcep only (multi_news has no article titles)"),
    (["--format", "wcep", "--max-articles", "0"], "argument --max-articles: must be >= 1, got 0"),
    (["--format", "multi_news", "--output-dir", "{input}"],
     "output {input}/train.src is also an input of this command: it would be overwritten; "
     "choose another output path"),
])
def test_cli_argument_errors(tmp_path, capsys, args, message):
    for split in ("train", "val", "test"):
        write(tmp_path / f"{split}.src", "A. |||||\n")
        write(tmp_path / f"{split}.tgt", "\u2013 a.\n")
    args = [a.format(input=tmp_path) for a in args]
    if "--output-dir" not in args:
        args += ["--output-dir", str(tmp_path / "raw")]
    try:
        code = convert(*args, "--input-dir", tmp_path)
    except SystemExit as e:  # a value out of range: argparse's exit status
        code = e.code
    assert code == (2 if message.startswith("argument ") else 1)
    message = message.format(input=tmp_path)
    assert capsys.readouterr().err == f"fairseq-hier-to-raw: error: {message}\n"
    assert (tmp_path / "train.src").read_text() == "A. |||||\n"  # the input is unchanged


def test_cli_missing_input(tmp_path, capsys):
    assert convert("--format", "wcep", "--input-dir", tmp_path, "--output-dir",
                   tmp_path / "raw", "--splits", "test") == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-to-raw: error: {tmp_path}/test.jsonl or {tmp_path}/test.jsonl.gz not "
        f"found (WCEP's test split)\n")


# ---------------------------------------------------------------------------------------------
# fairseq-hier-spm: train on the parse step's tokens, encode keeping <P>
# ---------------------------------------------------------------------------------------------

TOKENISED = [
    "<P> The ferry sank on Saturday . <P> Everyone was rescued , officials said .",
    "<P> The coast guard sent two boats . <P> Officials said the storm was strong .",
    "<P> Rain fell all day . It stopped at dusk . <P> The mayor opened the bridge .",
]


def test_spm_train_encode_round_trip(tmp_path, capsys):
    corpus = write(tmp_path / "train.tok", "\n".join(TOKENISED * 20) + "\n")
    prefix = str(tmp_path / "spm" / "spm")
    assert spm_cli.cli_main(["train", "--input", corpus, "--output-prefix", prefix,
                             "--vocab-size", "1000", "--threads", "1"]) == 0
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=prefix + ".model")
    assert 0 < sp.get_piece_size() < 1000  # hard_vocab_limit=False: a small corpus is fine
    assert sp.piece_to_id("<P>") == sp.unk_id()  # the separator is no training text
    lines = ["<P> The ferry sank , the coast guard said . <P> Rain fell .",
             "The mayor opened the bridge .",  # a target: no separator
             "<P>",  # an empty title slot and an empty paragraph
             "",
             "<P> Zq \u00e9t\u00e9 <P> <P> sank"]  # unseen characters, an empty paragraph
    source = write(tmp_path / "in.tok", "\n".join(lines) + "\n")
    output = str(tmp_path / "out.src")
    assert spm_cli.cli_main(["encode", "--model", prefix + ".model", "--input", source,
                             "--output", output, "--no-progress-bar"]) == 0
    encoded = lines_of(output)
    assert len(encoded) == len(lines)
    for raw, pieces in zip(lines, encoded):
        assert pieces.startswith("<P>") == raw.startswith("<P>")
        assert pieces.count("<P>") == raw.split().count("<P>")
        # every segment's pieces spell its tokens exactly: a word starts at each U+2581
        for raw_seg, seg in zip(raw.split("<P>"), pieces.split("<P>")):
            assert "".join(seg.split()).replace(WORD, " ").split() == raw_seg.split()
    assert encoded[2] == "<P>" and encoded[3] == ""
    assert encoded[4].split().count("<P>") == 3 and " <P> <P> " in encoded[4]


def test_spm_errors(tmp_path, capsys):
    corpus = write(tmp_path / "train.tok", "\n".join(TOKENISED) + "\n")
    prefix = str(tmp_path / "spm")
    assert spm_cli.cli_main(["train", "--input", corpus, "--output-prefix", prefix,
                             "--vocab-size", "5", "--threads", "1"]) == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-spm train: error: sentencepiece could not train --vocab-size 5 on {corpus}: "
        f"Vocabulary size is smaller than required_chars. 5 vs 34. Increase vocab_size or "
        f"decrease character_coverage with --character_coverage option.\n")
    empty = write(tmp_path / "empty.tok", "<P>\n\n")
    assert spm_cli.cli_main(["train", "--input", empty, "--output-prefix", prefix,
                             "--vocab-size", "50"]) == 1
    assert capsys.readouterr().err == (f"fairseq-hier-spm train: error: no text to train on in "
                                       f"{empty} (every line is empty or holds only "
                                       f"separators)\n")
    assert spm_cli.cli_main(["train", "--input", corpus, "--output-prefix", prefix,
                             "--vocab-size", "60", "--threads", "1"]) == 0
    capsys.readouterr()
    marked = write(tmp_path / "marked.tok", "<P> fine\n<P> a b\u2581c\n")
    assert spm_cli.cli_main(["encode", "--model", prefix + ".model", "--input", marked,
                             "--output", str(tmp_path / "x"), "--no-progress-bar"]) == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-spm encode: error: {marked}:2: token 'b\u2581c' holds U+2581, sentencepiece's "
        f"word marker (its pieces would start a word inside the token; fairseq-hier-to-raw "
        f"replaces it by '_')\n")
    assert not os.path.exists(tmp_path / "x")


def test_wcep_truncated_gzip_names_the_line(tmp_path):
    data = gzip.compress("".join(json.dumps(c) + "\n" for c in WCEP_CLUSTERS).encode())
    path = tmp_path / "test.jsonl.gz"
    path.write_bytes(data[: len(data) - 12])  # the stream ends early
    with pytest.raises(ReaderError, match=f"^{re.escape(str(path))}:\\d+: cannot decompress "):
        list(read_wcep(str(path), stats=collections.Counter(), skipped=[]))


# ---------------------------------------------------------------------------------------------
# <t> sentence tags and markup left in the targets
# ---------------------------------------------------------------------------------------------

def test_t_tags_are_dropped_and_other_target_markup_is_named(tmp_path, caplog):
    data, raw = tmp_path / "mn", tmp_path / "raw"
    data.mkdir()
    write(data / "test.src", "<t> The bridge opened. </t> <t> Crowds came. </t>|||||Rain.|||||\n"
                             "A second story.|||||\n")
    write(data / "test.tgt", "\u2013 <t> a bridge opened . </t> <t> crowds came <unk> . </t>\n"
                             "\u2013 A story <unk> with a <br> break.\n")
    with caplog.at_level(logging.INFO):
        assert convert("--format", "multi_news", "--input-dir", data, "--output-dir", raw,
                       "--splits", "test") == 0
    assert lines_of(raw / "test.src") == ["<P> The bridge opened. Crowds came. <P> Rain.",
                                          "<P> A second story."]
    assert lines_of(raw / "test.tgt") == ["a bridge opened . crowds came <unk> .",
                                          "A story <unk> with a <br> break."]
    assert (f"[test] {raw}/test.src, {raw}/test.tgt: examples=2 documents=3 "
            f"t_tagged_documents=1 t_tagged_summaries=1") in caplog.text
    assert (f"[test] {raw}/test.tgt: 2 of 2 targets hold markup that ROUGE-1.5.5 reads only up "
            f"to its '<' (kept: it is the dataset's text): 2 x <unk>, 1 x <br>") in caplog.text


def test_wcep_tagged_summary(tmp_path):
    path = wcep_file(tmp_path / "val.jsonl", [cluster(
        "<t> A ferry sank . </t> <t> All were rescued . </t>",
        [article("Ferry", "A ferry sank on Saturday.")])])
    stats = collections.Counter()
    (example,) = read_wcep(path, stats=stats, skipped=[])
    assert example.summary == "A ferry sank . All were rescued ."
    assert stats["t_tagged_summaries"] == 1 and "t_tagged_documents" not in stats


def test_wcep_tagged_summary_sentence_without_a_period_is_counted(tmp_path):
    """The target line is the training target (no separator): `rouge -e .` finds a sentence's
    end at its '.', so a tagged sentence (not the last) without one is counted."""
    path = wcep_file(tmp_path / "val.jsonl", [cluster(
        "<t> A ferry sank </t> <t> All were rescued . </t> <t> Talks go on </t>",
        [article("Ferry", "A ferry sank on Saturday.")])])
    stats = collections.Counter()
    (example,) = read_wcep(path, stats=stats, skipped=[])
    assert example.summary == "A ferry sank All were rescued . Talks go on"
    assert stats["t_summary_boundaries_unmarked"] == 1
