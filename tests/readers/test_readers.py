"""Readers of the published summarization layouts (fairseq_hier/readers/: cohan, cnndm, samsum,
qmsum, records, layouts).

Every file is written here in the publisher's layout with made-up sentences; each malformed
record must give one error line naming the file and the line (or list item)."""

import collections
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from fairseq_hier.readers.cnndm import read_presumm, read_source_target
from fairseq_hier.readers.cohan import read_cohan
from fairseq_hier.readers.layouts import READERS
from fairseq_hier.readers.lines import ReaderError
from fairseq_hier.readers.qmsum import AMI_FILLERS, filter_fillers, load_filler_words, read_qmsum
from fairseq_hier.readers.records import Record, collapse, format_stats
from fairseq_hier.readers.samsum import read_samsum


def exact(message):
    """A pytest.raises(match=...) pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


def write_jsonl(path, objects, newline="\n"):
    path.write_text("".join(json.dumps(o) + newline for o in objects), encoding="utf-8")
    return path


def cohan(article_id, article, abstract):
    return {"article_id": article_id, "article_text": article, "abstract_text": abstract,
            "labels": None, "section_names": ["introduction"], "sections": [article]}


# ---------------------------------------------------------------------------------------------
# arXiv / PubMed
# ---------------------------------------------------------------------------------------------

def test_cohan_sentences_and_abstract_spans(tmp_path):
    path = write_jsonl(tmp_path / "train.txt", [
        cohan("art-1", ["the cat sat on @xmath0 .", "", "  it   was\nwarm .  ", "   "],
              ["<S> first sentence . </S>", "<S> second . </S> <S> third . </S>"]),
        cohan("art-2", ["one line only ."], ["<S> a\nsummary   here . </S>", "<S> </S>"]),
    ])
    stats, skipped = collections.Counter(), []
    records = list(read_cohan(str(path), stats=stats, skipped=skipped))
    assert records[0] == Record(
        id="art-1", where=f"{path}:1", sentences=["the cat sat on @xmath0 .", "it was warm ."],
        text=None, speakers=None, summary="first sentence . second . third .",
        summary_sentences=["first sentence .", "second .", "third ."])
    assert records[1].id == "art-2" and records[1].where == f"{path}:2"
    assert records[1].summary == "a summary here ."
    assert records[1].summary_sentences == ["a summary here ."]
    # whitespace made one space, counted: "  it   was\nwarm .  " 2 + 3 + 1 + 2, "   " 3
    assert stats == {"records": 2, "empty_sentences_dropped": 2,
                     "empty_summary_sentences_dropped": 1, "whitespace_chars_collapsed": 11}
    assert skipped == []


def test_cohan_keeps_text_outside_the_markers_and_counts_it(tmp_path):
    path = write_jsonl(tmp_path / "val.txt", [
        cohan("x", ["s ."], ["<S> inside . </S> stray words", "<S> unclosed span ."])])
    stats = collections.Counter()
    (record,) = read_cohan(str(path), stats=stats)
    assert record.summary_sentences == ["inside .", "stray words", "unclosed span ."]
    assert stats["abstract_text_outside_markers"] == 2


def test_cohan_skips_empty_article_and_empty_abstract_with_counts(tmp_path):
    path = write_jsonl(tmp_path / "test.txt", [
        cohan("empty-article", ["", "  "], ["<S> a summary . </S>"]),
        cohan("kept", ["a sentence ."], ["<S> kept summary . </S>"]),
        cohan("empty-abstract", ["another sentence ."], []),
        cohan("blank-abstract", ["yet another ."], ["<S>  </S>"]),
    ])
    stats, skipped = collections.Counter(), []
    records = list(read_cohan(str(path), stats=stats, skipped=skipped))
    assert [r.id for r in records] == ["kept"]
    assert stats["records"] == 1
    assert stats["skipped_empty_source"] == 1 and stats["skipped_empty_summary"] == 2
    assert skipped == [f"{path}:1: empty source", f"{path}:3: empty summary",
                       f"{path}:4: empty summary"]


def test_cohan_blank_lines_and_crlf_line_ends(tmp_path):
    path = tmp_path / "train.txt"
    line = json.dumps(cohan("a", ["s ."], ["<S> t . </S>"]))
    path.write_bytes(f"{line}\r\n\r\n{line}\r\n".encode())
    stats = collections.Counter()
    assert [r.where for r in read_cohan(str(path), stats=stats)] == [f"{path}:1", f"{path}:3"]
    assert stats["blank_lines_skipped"] == 1


@pytest.mark.parametrize("bad_line, error", [
    ('{"article_id": "b", "article_text": ["s ."], ', "invalid JSON (Expecting property name "
     "enclosed in double quotes at column 46; expected one JSON object per line)"),
    ('["not", "an", "object"]', "the record is a JSON list (expected one JSON object per line "
     "with keys article_id, article_text, abstract_text)"),
    (json.dumps({"article_id": "b", "article_text": ["s ."]}),
     "the record lacks the key(s) abstract_text (expected keys article_id, article_text, "
     "abstract_text; has article_id, article_text)"),
    (json.dumps(cohan(7, ["s ."], ["<S> t . </S>"])),
     "'article_id' is a JSON number (expected the article id (str))"),
    (json.dumps(cohan("b", "one string .", ["<S> t . </S>"])),
     "'article_text' is a JSON string (expected a list of sentences (str))"),
    (json.dumps(cohan("b", ["s ."], ["<S> t . </S>", None])),
     "'abstract_text' item 1 is a JSON null (expected a list of '<S> ... </S>' strings)"),
])
def test_cohan_malformed_record_names_file_and_line(tmp_path, bad_line, error):
    good = json.dumps(cohan("a", ["s ."], ["<S> t . </S>"]))
    path = tmp_path / "train.txt"
    path.write_text(f"{good}\n{bad_line}\n{good}\n", encoding="utf-8")
    records = read_cohan(str(path))
    assert next(records).id == "a"
    with pytest.raises(ReaderError, match=exact(f"{path}:2: {error}")):
        next(records)


def test_cohan_non_utf8_line_is_named(tmp_path):
    path = tmp_path / "train.txt"
    good = json.dumps(cohan("a", ["s ."], ["<S> t . </S>"])).encode()
    path.write_bytes(good + b"\n" + good + b"\n" + b'{"article_id": "\xff"}\n')
    with pytest.raises(ReaderError, match=exact(
            f"{path}:3: not UTF-8 text (invalid start byte at byte 16 of the line)")):
        list(read_cohan(str(path)))


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(ReaderError, match=f"^cannot read {re.escape(str(tmp_path / 'no.txt'))}"):
        list(read_cohan(str(tmp_path / "no.txt")))


# ---------------------------------------------------------------------------------------------
# CNN/DailyMail, XSum
# ---------------------------------------------------------------------------------------------

def test_source_target_records_and_crlf(tmp_path):
    prefix = tmp_path / "val"
    (tmp_path / "val.source").write_bytes(
        b"(Agency) -- A made-up  article about a bridge.\r\nSecond made-up story.\r\n"
        b"Third story without summary.\r\n")
    (tmp_path / "val.target").write_bytes(
        b"A bridge opened. Traffic\tflows.\r\nSecond summary.\r\n \r\n")
    stats, skipped = collections.Counter(), []
    records = list(read_source_target(str(prefix), stats=stats, skipped=skipped))
    assert records[0] == Record(
        id="val.source:1", where=f"{prefix}.source:1", sentences=None,
        text="(Agency) -- A made-up article about a bridge.", speakers=None,
        summary="A bridge opened. Traffic flows.",
        summary_sentences=["A bridge opened. Traffic flows."])
    assert [r.id for r in records] == ["val.source:1", "val.source:2"]
    # whitespace made one space, counted: "made-up  article" 2, "Traffic\tflows" 1, " " 1
    assert stats == {"records": 2, "skipped_empty_summary": 1, "whitespace_chars_collapsed": 4}
    assert skipped == [f"{prefix}.source:3: empty summary"]


@pytest.mark.parametrize("text, out, changed", [
    ("a b", "a b", 0), ("a  b", "a b", 2), (" a\nb ", "a b", 3), ("a\u2009b", "a b", 1),
    ("   ", "", 3), ("a \n b", "a b", 3), ("a b\r", "a b", 1)])
def test_collapse_counts_the_characters_it_changes(text, out, changed):
    stats = collections.Counter()
    assert collapse(text, stats) == out
    assert stats["whitespace_chars_collapsed"] == changed


def test_source_target_skips_empty_source(tmp_path):
    (tmp_path / "test.source").write_text("\nan article .\n", encoding="utf-8")
    (tmp_path / "test.target").write_text("orphan summary .\nits summary .\n", encoding="utf-8")
    stats, skipped = collections.Counter(), []
    records = list(read_source_target(str(tmp_path / "test"), stats=stats, skipped=skipped))
    assert [(r.text, r.summary) for r in records] == [("an article .", "its summary .")]
    assert stats["skipped_empty_source"] == 1
    assert skipped == [f"{tmp_path / 'test'}.source:1: empty source"]


def test_source_target_line_count_mismatch(tmp_path):
    (tmp_path / "train.source").write_text("a .\nb .\nc .\n", encoding="utf-8")
    (tmp_path / "train.target").write_text("x .\ny .\n", encoding="utf-8")
    prefix = str(tmp_path / "train")
    with pytest.raises(ReaderError, match=exact(
            f"line counts differ: {prefix}.source has 3 lines, {prefix}.target has 2 lines "
            f"(one example per line is expected)")):
        next(read_source_target(prefix))


def test_source_target_non_utf8_is_an_error(tmp_path):
    (tmp_path / "train.source").write_bytes(b"caf\xe9 .\n")
    (tmp_path / "train.target").write_text("x .\n", encoding="utf-8")
    with pytest.raises(ReaderError, match=exact(
            f"{tmp_path / 'train.source'} is not UTF-8 text (invalid continuation byte at byte "
            f"3)")):
        list(read_source_target(str(tmp_path / "train")))


# ---------------------------------------------------------------------------------------------
# SAMSum
# ---------------------------------------------------------------------------------------------

def write_samsum(path, items):
    path.write_text(json.dumps(items, indent=1), encoding="utf-8")
    return path


def test_samsum_turns_speakers_and_crlf(tmp_path):
    path = write_samsum(tmp_path / "train.json", [
        {"id": "d-101", "summary": "Kim will bring\r\nthe cake.",
         "dialogue": "Kim: I'll bring the cake <file_gif>\r\nLee: great:)\r\n\r\nKim: ok"},
        {"id": "d-102", "summary": "Lee is late.",
         "dialogue": "Lee: running late\nsorry\n  \nbus broke down\nAna:\nno worries"},
    ])
    stats = collections.Counter()
    first, second = read_samsum(str(path), stats=stats)
    assert first == Record(
        id="d-101", where=f"{path}:item 0 (id 'd-101')",
        sentences=["Kim: I'll bring the cake <file_gif>", "Lee: great:)", "Kim: ok"], text=None,
        speakers=["Kim", "Lee", "Kim"], summary="Kim will bring the cake.",
        summary_sentences=["Kim will bring the cake."])
    assert second.speakers == ["Lee", "Ana"]
    assert second.sentences == ["Lee: running late sorry bus broke down", "Ana: no worries"]
    # the summary's "\r\n" made one space: 2 characters changed
    assert stats == {"records": 2, "continuation_lines": 3, "whitespace_chars_collapsed": 2}


def test_samsum_first_line_without_colon_gets_unknown_speaker(tmp_path):
    path = write_samsum(tmp_path / "val.json", [
        {"id": "d-7", "summary": "Someone waves.",
         "dialogue": "\nhello there\nstill me\nBo: hi\nZed:"}])
    stats = collections.Counter()
    (record,) = read_samsum(str(path), stats=stats)
    assert record.speakers == ["", "Bo", "Zed"]
    assert record.sentences == ["hello there still me", "Bo: hi", "Zed:"]
    assert stats["unknown_speaker"] == 1 and stats["continuation_lines"] == 1
    assert stats["empty_utterances"] == 1


def test_samsum_skips_empty_dialogue_and_summary(tmp_path):
    path = write_samsum(tmp_path / "train.json", [
        {"id": "e1", "summary": "Nothing was said.", "dialogue": " \r\n "},
        {"id": "e2", "summary": "", "dialogue": "Kim: hi"},
        {"id": "ok", "summary": "Kim greets.", "dialogue": "Kim: hi"},
    ])
    stats, skipped = collections.Counter(), []
    assert [r.id for r in read_samsum(str(path), stats=stats, skipped=skipped)] == ["ok"]
    assert stats["skipped_empty_source"] == 1 and stats["skipped_empty_summary"] == 1
    assert stats["records"] == 1
    assert skipped == [f"{path}:item 0 (id 'e1'): empty source",
                       f"{path}:item 1 (id 'e2'): empty summary"]


@pytest.mark.parametrize("bad_item, error", [
    ({"id": "d-2", "summary": None, "dialogue": "Kim: hi"},
     "item 1 (id 'd-2'): 'summary' is a JSON null (expected the summary (str))"),
    ({"id": 13, "summary": "s.", "dialogue": "Kim: hi"},
     "item 1: 'id' is a JSON number (expected the dialogue id (str))"),
    ({"id": "d-2", "dialogue": "Kim: hi"},
     "item 1 (id 'd-2'): the record lacks the key(s) summary (expected keys id, summary, "
     "dialogue; has dialogue, id)"),
    (["Kim: hi"], "item 1: the record is a JSON list (expected a JSON object with keys id, "
     "summary, dialogue)"),
])
def test_samsum_malformed_item_names_file_and_item(tmp_path, bad_item, error):
    path = write_samsum(tmp_path / "test.json", [
        {"id": "d-1", "summary": "Kim says hi.", "dialogue": "Kim: hi"}, bad_item])
    records = read_samsum(str(path))
    assert next(records).id == "d-1"
    with pytest.raises(ReaderError, match=exact(f"{path}:{error}")):
        next(records)


def test_samsum_invalid_json_and_wrong_top_level(tmp_path):
    path = tmp_path / "train.json"
    path.write_text('[\n {"id": "a", "summary": "s.",\n  "dialogue" "Kim: hi"}\n]\n',
                    encoding="utf-8")
    with pytest.raises(ReaderError, match=exact(
            f"{path}:3: invalid JSON (Expecting ':' delimiter at column 14; expected one JSON "
            f"list)")):
        list(read_samsum(str(path)))
    path.write_text('{"id": "a"}', encoding="utf-8")
    with pytest.raises(ReaderError, match=exact(
            f"{path}:1: the file holds a JSON object (expected a JSON list of objects with keys "
            f"id, summary, dialogue)")):
        list(read_samsum(str(path)))


# ---------------------------------------------------------------------------------------------
# AMI as in QMSum
# ---------------------------------------------------------------------------------------------

def meeting(turns, general, specific=()):
    return {"topic_list": [{"topic": "the remote", "relevant_text_span": [["0", "2"]]}],
            "general_query_list": [{"query": q, "answer": a} for q, a in general],
            "specific_query_list": [{"query": q, "answer": a, "relevant_text_span": [["0", "1"]]}
                                    for q, a in specific],
            "meeting_transcripts": [{"speaker": s, "content": c} for s, c in turns]}


TURNS = [("Project Manager", "Um, so {vocalsound} we start with the budget ."),
         ("Marketing", "Mm-hmm ."),
         ("User Interface", "uh the buttons {disfmarker} should be big , uhm right ?"),
         ("Industrial Designer", "{gap}")]


def test_qmsum_filler_filtering_and_whole_meeting_query(tmp_path):
    path = write_jsonl(tmp_path / "train.jsonl", [meeting(TURNS, [
        ("What did the group say about the budget?", "They fixed a budget."),
        ("Summarize the whole meeting.", "The team met\nand planned a remote."),
    ], specific=[("What about buttons?", "Big buttons.")])])
    stats = collections.Counter()
    (record,) = read_qmsum(str(path), AMI_FILLERS, stats=stats)
    assert record == Record(
        id="train.jsonl:1", where=f"{path}:1",
        sentences=["Project Manager: so we start with the budget .",
                   "User Interface: the buttons should be big , right ?"],
        text=None, speakers=["Project Manager", "User Interface"],
        summary="The team met and planned a remote.",
        summary_sentences=["The team met and planned a remote."])
    # Um, {vocalsound} | Mm-hmm | uh {disfmarker} uhm, | {gap}
    assert stats["filler_tokens_dropped"] == 7
    assert stats["turns_dropped"] == 2
    assert stats["summary_from_first_general_query"] == 0


def test_qmsum_without_lexicon_keeps_every_token(tmp_path):
    path = write_jsonl(tmp_path / "val.jsonl", [meeting(TURNS, [("summarize the WHOLE meeting",
                                                                 "A summary.")])])
    stats = collections.Counter()
    (record,) = read_qmsum(str(path), stats=stats)
    assert record.sentences[1] == "Marketing: Mm-hmm ."
    assert len(record.sentences) == 4
    assert stats["filler_tokens_dropped"] == 0 and stats["turns_dropped"] == 0


def test_qmsum_falls_back_to_first_general_query_counted(tmp_path):
    path = write_jsonl(tmp_path / "test.jsonl", [
        meeting(TURNS, [("What was decided on the remote?", "A yellow remote."),
                        ("What did Marketing report?", "Trends.")]),
        meeting(TURNS, [("Summarize the whole meeting.", "First."),
                        ("Please summarize the whole meeting again.", "Second.")]),
    ])
    stats = collections.Counter()
    records = list(read_qmsum(str(path), stats=stats))
    assert [r.summary for r in records] == ["A yellow remote.", "First."]
    assert stats["summary_from_first_general_query"] == 1
    assert stats["several_whole_meeting_queries"] == 1


def test_qmsum_skips_meetings_left_empty(tmp_path):
    path = write_jsonl(tmp_path / "train.jsonl", [
        meeting([("Marketing", "um {vocalsound}")], [("Summarize the whole meeting.", "S.")]),
        meeting(TURNS, [("Summarize the whole meeting.", " ")]),
    ])
    stats, skipped = collections.Counter(), []
    assert list(read_qmsum(str(path), AMI_FILLERS, stats=stats, skipped=skipped)) == []
    assert stats["skipped_empty_source"] == 1 and stats["skipped_empty_summary"] == 1
    assert stats["records"] == 0 and stats["turns_dropped"] == 3
    assert skipped == [f"{path}:1: empty source", f"{path}:2: empty summary"]


@pytest.mark.parametrize("bad, error", [
    (meeting(TURNS, []), "'general_query_list' is empty (expected at least one general query, "
     "the whole-meeting summary)"),
    ({**meeting(TURNS, [("Summarize the whole meeting.", "S.")]),
      "meeting_transcripts": [{"speaker": "Marketing", "content": None}]},
     "'meeting_transcripts' item 0 'content' is a JSON null (expected str)"),
    ({**meeting(TURNS, []), "general_query_list": [{"query": "Summarize the whole meeting."}]},
     "'general_query_list' item 0 lacks the key(s) answer (expected keys query, answer; has "
     "query)"),
    ({"meeting_transcripts": []}, "the record lacks the key(s) general_query_list (expected "
     "keys meeting_transcripts, general_query_list; has meeting_transcripts)"),
])
def test_qmsum_malformed_meeting_names_file_and_line(tmp_path, bad, error):
    good = meeting(TURNS, [("Summarize the whole meeting.", "S.")])
    path = write_jsonl(tmp_path / "test.jsonl", [good, bad])
    records = read_qmsum(str(path))
    assert next(records).where == f"{path}:1"
    with pytest.raises(ReaderError, match=exact(f"{path}:2: {error}")):
        next(records)


def test_filler_words_file_and_default_lexicon(tmp_path):
    path = tmp_path / "fillers.txt"
    path.write_text("# AMI fillers\nUm\n\n{gap}  # markup\nmm-hmm\n", encoding="utf-8")
    assert load_filler_words(str(path)) == frozenset({"um", "{gap}", "mm-hmm"})
    path.write_text("um\nuh huh\n", encoding="utf-8")
    with pytest.raises(ReaderError, match=exact(
            f"{path}:2: 2 words on one line (expected one word per line, '#' for comments)")):
        load_filler_words(str(path))
    assert {"{vocalsound}", "{disfmarker}", "{gap}", "{pause}", "{nonvocalsound}", "{comment}",
            "um", "uh", "uhm", "hmm", "mm", "mm-hmm", "uh-huh"} == AMI_FILLERS
    # "Hmm?" opens the turn: its "?" has no word before it; "uh-huh!" keeps its sentence end in
    # its place and takes the comma before it (tests/readers/test_ami_fillers.py: the whole rule)
    assert filter_fillers("Hmm? well ,  uh-huh! umbrella", AMI_FILLERS) == \
        ("well! umbrella", 2, 2)


# ---------------------------------------------------------------------------------------------
# shared
# ---------------------------------------------------------------------------------------------

def test_format_stats_is_one_line_records_first():
    stats = collections.Counter({"skipped_empty_summary": 2, "records": 10,
                                 "continuation_lines": 3})
    assert format_stats(stats) == "records=10 continuation_lines=3 skipped_empty_summary=2"
    assert format_stats(collections.Counter()) == "records=0"


def test_readers_registry():
    assert READERS == {"cohan": read_cohan, "source_target": read_source_target,
                       "samsum": read_samsum, "qmsum": read_qmsum, "presumm": read_presumm}


def test_importing_the_readers_loads_neither_torch_nor_fairseq():
    code = ("import sys, fairseq_hier.readers.layouts, fairseq_hier.readers.doc_mt.layouts, "
            "fairseq_hier.readers.mds, fairseq_hier.readers.own_data; "
            "print(sorted(m for m in ('torch', 'fairseq', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True, check=True,
                         stdout=subprocess.PIPE).stdout
    assert out.strip() == "[]"
