"""IWSLT17 TED ``train.tags`` pairs (fairseq_hier/readers/doc_mt/ted_tags.py).

Every file is written here in the publisher's layout with made-up sentences; each malformed
input must give one error line naming the file and the line."""

import logging

import pytest
from doc_mt_samples import LOGGER, TED_TAGS_EN, TED_TAGS_ZH, exact, replace_once, ted_pair

from fairseq_hier.readers.doc_mt.ted_tags import read_ted_tags
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError


def test_ted_tags_talks_and_talkids(tmp_path, caplog):
    zh, en = ted_pair(tmp_path)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        docs = read_ted_tags(zh, en)
    assert docs == [
        Document("101", ["潮水每天涨两次。", "月亮拉动 海洋。"],
                 ["The tide comes in twice a day.", "The moon pulls the ocean."]),
        Document("202", ["蜜蜂会跳舞。"], ["Bees can dance."]),
    ]
    assert caplog.messages == [
        f"{zh} + {en}: 2 documents, 3 sentence pairs; empty_line_pairs_skipped=1; "
        f"sentences_trimmed=1; sentences_whitespace_collapsed=1"]


def test_ted_tags_doc_wrappers_and_talks_without_sentences(tmp_path, caplog):
    wrap = ('<doc docid="1" genre="lectures">\n{}</doc>\n<doc docid="2" genre="lectures">\n'
            '<talkid>303</talkid>\n</doc>\n')
    zh, en = ted_pair(tmp_path, wrap.format(TED_TAGS_ZH), wrap.format(TED_TAGS_EN))
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert [d.docid for d in read_ted_tags(zh, en)] == ["101", "202"]
    assert caplog.messages == [
        f"{zh} + {en}: 2 documents, 3 sentence pairs; empty_line_pairs_skipped=1; "
        f"sentences_trimmed=1; sentences_whitespace_collapsed=1; "
        f"talks_without_sentences_skipped=1"]


def test_ted_tags_a_second_talkid_before_sentences_begins_a_new_talk(tmp_path, caplog):
    header = "<url>http://www.ted.com/talks/untranscribed</url>\n<talkid>99</talkid>\n"
    zh, en = ted_pair(tmp_path, header + TED_TAGS_ZH, header + TED_TAGS_EN)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert [d.docid for d in read_ted_tags(zh, en)] == ["101", "202"]
    assert "talks_without_sentences_skipped=1" in caplog.messages[0]


@pytest.mark.parametrize("side, old, new, error", [
    ("en", "<title>Ana Example: Tides</title>", "Ana Example: Tides",
     "{zh}:5: misaligned: a <title> line here but a sentence at {en}:5"),
    ("zh", " 潮水每天涨两次。", "<title>extra</title>",
     "{zh}:7: misaligned: a <title> line here but a sentence at {en}:7"),
    ("both", "<talkid>101</talkid>", "<title>no id</title>",
     "{zh}:1: talk without <talkid> (missing docid)"),
    ("en", "<talkid>202</talkid>", "<talkid> </talkid>",
     "{en}:10: talk without <talkid> (missing docid)"),
    ("both", "<talkid>202</talkid>", "<talkid>101</talkid>",
     "{zh}:13: duplicated talkid '101' (first at line 4)"),
    ("en", "<talkid>202</talkid>", "<talkid>203</talkid>",
     "{zh}:13: talkid '202' but {en}:13 has talkid '203'"),
    ("en", "<talkid>202</talkid>", "<talkid>202",
     "{en}:13: malformed <talkid> line (expected <talkid>ID</talkid>)"),
    ("en", "The moon pulls the ocean.", "",
     "{en}:8: empty sentence on one side only ({zh}:8 holds a sentence)"),
    ("en", "Bees can dance.\n", "Bees can dance.\nAn extra line.\n",
     "{en}:19: line counts differ: {en} has 19 lines, {zh} has 18 (the two files must be "
     "line-aligned)"),
    ("zh", "蜜蜂会跳舞。\n", "蜜蜂会跳舞。\n多一行。\n多两行。\n",
     "{zh}:19: line counts differ: {zh} has 20 lines, {en} has 18 (the two files must be "
     "line-aligned)"),
])
def test_ted_tags_errors_name_file_and_line(tmp_path, side, old, new, error):
    texts = {"zh": TED_TAGS_ZH, "en": TED_TAGS_EN}
    for name in texts:
        if side in (name, "both"):
            texts[name] = replace_once(texts[name], old, new)
    zh, en = ted_pair(tmp_path, texts["zh"], texts["en"])
    with pytest.raises(ReaderError, match=exact(error.format(zh=zh, en=en))):
        read_ted_tags(zh, en)


def test_ted_tags_sentences_before_any_tag_have_no_docid(tmp_path):
    zh, en = ted_pair(tmp_path, "孤独的句子。\n" + TED_TAGS_ZH, "A lonely sentence.\n" + TED_TAGS_EN)
    with pytest.raises(ReaderError, match=exact(f"{zh}:1: talk without <talkid> (missing docid)")):
        read_ted_tags(zh, en)
