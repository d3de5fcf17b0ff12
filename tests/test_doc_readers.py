"""Readers of the published document-level MT layouts (fairseq_hier/data/doc_readers.py) and
``fairseq-hier-doc-extract`` (fairseq_hier/cli/doc_extract.py).

Every file is written here in the publisher's layout with made-up sentences; each malformed
input must give one error line naming the file and the line."""

import logging
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from fairseq_hier.cli.doc_extract import INPUT_KINDS
from fairseq_hier.data.doc_readers import (FORMATS, read_doc_split, read_mteval, read_ted_tags,
                                           read_wmt_xml)
from fairseq_hier.data.documents import Document, read_documents
from fairseq_hier.data.readers import ReaderError

LOGGER = "fairseq_hier.data.doc_readers"


def exact(message):
    """A pytest.raises(match=...) pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def replace_once(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)


# ---------------------------------------------------------------------------------------------
# WMT fake SGML (newstest2020) and IWSLT TED XML
# ---------------------------------------------------------------------------------------------

WMT_SRC = """\
<srcset setid="newstest2020" srclang="any">
<doc sysid="ref" docid="harbour.101" genre="news" origlang="en">
<p>
<seg id="1">The ferry left the  harbour at dawn.</seg>
<seg id="2">Fishermen &amp; traders waved from the pier.</seg>
</p>
<p>
<seg id="3">By noon the fog had	lifted. </seg>
</p>
</doc>
<doc sysid="ref" docid="orchard.7" genre="news" origlang="de">
<hl>
<seg id="1">Apple harvest starts early</seg>
</hl>
<p>
<seg id="2">Growers expect a record year.</seg>
</p>
</doc>
</srcset>
"""
WMT_REF = """\
<refset setid="newstest2020" srclang="any" trglang="de">
<doc sysid="ref" docid="harbour.101" genre="news" origlang="en">
<p>
<seg id="1">Die Fähre verließ den Hafen im Morgengrauen.</seg>
<seg id="2">Fischer &amp; Händler winkten vom Steg.</seg>
</p>
<p>
<seg id="3">Bis Mittag hatte sich der Nebel gelichtet.</seg>
</p>
</doc>
<doc sysid="ref" docid="orchard.7" genre="news" origlang="de">
<hl>
<seg id="1">Apfelernte beginnt früh</seg>
</hl>
<p>
<seg id="2">Die Obstbauern erwarten ein Rekordjahr.</seg>
</p>
</doc>
</refset>
"""
TED_SRC = """\
<?xml version="1.0" encoding="UTF-8"?>
<mteval>
<srcset setid="iwslt2017-tst2015" srclang="zh">
<doc docid="1922" genre="lectures">
<url>http://www.ted.com/talks/made_up_tides</url>
<description>TED Talk Subtitles and Transcript: 潮汐的故事。</description>
<keywords>talks, ocean, science</keywords>
<talkid>1922</talkid>
<title>潮汐</title>
<seg id="1"> 潮水每天涨两次。 </seg>
<seg id="2"> 月亮拉动海洋。 </seg>
</doc>
<doc docid="1930" genre="lectures">
<url>http://www.ted.com/talks/made_up_bees</url>
<description>TED Talk Subtitles and Transcript: 蜜蜂。</description>
<keywords>talks, nature</keywords>
<talkid>1930</talkid>
<title>蜜蜂</title>
<seg id="1"> 蜜蜂会跳舞。 </seg>
</doc>
</srcset>
</mteval>
"""
TED_REF = """\
<?xml version="1.0" encoding="UTF-8"?>
<mteval>
<refset setid="iwslt2017-tst2015" srclang="zh" trglang="en" refid="ref">
<doc docid="1922" genre="lectures">
<url>http://www.ted.com/talks/made_up_tides</url>
<description>TED Talk Subtitles and Transcript: The story of tides.</description>
<keywords>talks, ocean, science</keywords>
<talkid>1922</talkid>
<title>Tides</title>
<seg id="1"> The tide comes in twice a day . </seg>
<seg id="2"> The moon pulls the ocean . </seg>
</doc>
<doc docid="1930" genre="lectures">
<url>http://www.ted.com/talks/made_up_bees</url>
<description>TED Talk Subtitles and Transcript: Bees.</description>
<keywords>talks, nature</keywords>
<talkid>1930</talkid>
<title>Bees</title>
<seg id="1"> Bees can dance . </seg>
</doc>
</refset>
</mteval>
"""


def mteval_pair(tmp_path, src_text=WMT_SRC, ref_text=WMT_REF):
    return (write(tmp_path / "newstest2020-ende-src.en.sgm", src_text),
            write(tmp_path / "newstest2020-ende-ref.de.sgm", ref_text))


def sacrebleu_fake_sgml_lines(path, tmp_path):
    """What sacreBLEU (sacrebleu/dataset/fake_sgml.py) extracts from an mteval file."""
    from sacrebleu.dataset.fake_sgml import FakeSGMLDataset

    out = tmp_path / (os.path.basename(path) + ".sacrebleu.txt")
    object.__new__(FakeSGMLDataset)._convert_format(path, str(out))
    return out.read_text(encoding="utf-8").splitlines()


def test_wmt_sgml_documents_keep_entities_as_sacrebleu_does(tmp_path):
    src, ref = mteval_pair(tmp_path)
    docs = read_mteval(src, ref)
    assert docs == [
        Document("harbour.101",
                 ["The ferry left the harbour at dawn.",
                  "Fishermen &amp; traders waved from the pier.", "By noon the fog had lifted."],
                 ["Die Fähre verließ den Hafen im Morgengrauen.",
                  "Fischer &amp; Händler winkten vom Steg.",
                  "Bis Mittag hatte sich der Nebel gelichtet."]),
        Document("orchard.7", ["Apple harvest starts early", "Growers expect a record year."],
                 ["Apfelernte beginnt früh", "Die Obstbauern erwarten ein Rekordjahr."]),
    ]
    assert [s for d in docs for s in d.src] == sacrebleu_fake_sgml_lines(src, tmp_path)
    assert [s for d in docs for s in d.tgt] == sacrebleu_fake_sgml_lines(ref, tmp_path)


def test_ted_xml_documents_equal_sacrebleu(tmp_path, caplog):
    src = write(tmp_path / "IWSLT17.TED.tst2015.zh-en.zh.xml", TED_SRC)
    ref = write(tmp_path / "IWSLT17.TED.tst2015.zh-en.en.xml", TED_REF)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        docs = read_mteval(src, ref)
    assert docs == [
        Document("1922", ["潮水每天涨两次。", "月亮拉动海洋。"],
                 ["The tide comes in twice a day .", "The moon pulls the ocean ."]),
        Document("1930", ["蜜蜂会跳舞。"], ["Bees can dance ."]),
    ]
    assert [s for d in docs for s in d.src] == sacrebleu_fake_sgml_lines(src, tmp_path)
    assert [s for d in docs for s in d.tgt] == sacrebleu_fake_sgml_lines(ref, tmp_path)
    assert f"{src} + {ref}: 2 documents, 3 sentence pairs" in caplog.messages


def test_mteval_pairs_by_docid_and_drops_empty_documents_counted(tmp_path, caplog):
    empty_doc = '<doc docid="blank.1">\n<p>\n</p>\n</doc>\n'
    orchard = WMT_REF[WMT_REF.index('<doc sysid="ref" docid="orchard.7"'):
                      WMT_REF.index("</refset>")]
    ref_text = replace_once(WMT_REF, orchard, "")
    ref_text = replace_once(ref_text, '<doc sysid="ref" docid="harbour.101"',
                            orchard + '<doc sysid="ref" docid="harbour.101"')
    src_text = replace_once(WMT_SRC, "</srcset>", empty_doc + "</srcset>")
    ref_text = replace_once(ref_text, "</refset>", empty_doc + "</refset>")
    src, ref = mteval_pair(tmp_path, src_text, ref_text)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        docs = read_mteval(src, ref)
    assert [d.docid for d in docs] == ["harbour.101", "orchard.7"]
    assert docs[1].tgt == ["Apfelernte beginnt früh", "Die Obstbauern erwarten ein Rekordjahr."]
    assert f"{ref}: documents in another order than in {src}; paired by docid" in caplog.messages
    assert (f"{src} + {ref}: 2 documents, 5 sentence pairs; documents_without_segments=1"
            in caplog.messages)


SEG_2 = '<seg id="2">Fishermen &amp; traders waved from the pier.</seg>'
ORCHARD_DOC = '<doc sysid="ref" docid="orchard.7" genre="news" origlang="de">'


@pytest.mark.parametrize("side, old, new, error", [
    ("src", '<doc sysid="ref" docid="harbour.101"',
     '<seg id="1">Stray text.</seg>\n<doc sysid="ref" docid="harbour.101"',
     "{src}:2: <seg> outside a <doc>"),
    ("src", 'docid="orchard.7" ', "",
     "{src}:11: missing docid (<doc> without a docid attribute)"),
    ("src", 'docid="orchard.7"', 'docid="harbour.101"',
     "{src}:11: repeated docid 'harbour.101' (first at line 2)"),
    ("src", '<seg id="3">', '<seg id="4">',
     "{src}:8: segment id 4 (expected 3: ids run 1..n in every document)"),
    ("src", '<seg id="3">', '<seg n="3">', "{src}:8: <seg> without a numeric id"),
    ("ref", 'docid="orchard.7"', 'docid="orchard.8"',
     "{src}:11: docid 'orchard.7' has no document in {ref}"),
    ("src", WMT_SRC[WMT_SRC.index(ORCHARD_DOC):WMT_SRC.index("</srcset>")], "",
     "{ref}:11: docid 'orchard.7' has no document in {src}"),
    ("ref", '<seg id="3">Bis Mittag hatte sich der Nebel gelichtet.</seg>\n', "",
     "{src}:2: segment count mismatch for docid 'harbour.101': 3 segments here, 2 in {ref}:2"),
    ("src", SEG_2, '<seg id="2"> \t </seg>', "{src}:5: empty segment (id 2)"),
    ("src", SEG_2, '<seg id="2">Fishermen &amp; traders',
     '{src}:5: malformed <seg> line (expected <seg id="N">text</seg> on one line)'),
    ("src", SEG_2, SEG_2 + "</p>",
     '{src}:5: malformed <seg> line (expected <seg id="N">text</seg> on one line)'),
    ("src", '<doc sysid="ref" docid="harbour.101"', '<doc sysid="ref" docid="harbour.101"\n',
     '{src}:2: malformed <doc> line (expected <doc docid="..." ...> on one line)'),
    ("src", "</doc>\n" + ORCHARD_DOC, ORCHARD_DOC,
     "{src}:2: <doc> not closed before line 10 ('" + ORCHARD_DOC[:60] + "')"),
    ("src", "</p>\n</doc>\n</srcset>", "</p>\n</srcset>",
     "{src}:11: <doc> not closed before line 18 ('</srcset>')"),
    ("src", "</p>\n</doc>\n</srcset>\n", "</p>\n",
     "{src}:11: <doc> not closed before the end of the file"),
    ("src", "</srcset>", "</doc>\n</srcset>", "{src}:19: </doc> without <doc>"),
    ("src", "<p>\n<seg id=\"1\">The", "<p>\nloose text\n<seg id=\"1\">The",
     "{src}:4: unexpected line 'loose text' inside a <doc> (expected one tag per line: <doc>, "
     "<p>, <hl>, <seg id=\"N\">text</seg> or a one-line metadata element)"),
    ("src", "<srcset", "<p>\n<srcset",
     "{src}:1: unexpected line '<p>' outside a <doc> (expected one tag per line: <doc>, <p>, "
     "<hl>, <seg id=\"N\">text</seg> or a one-line metadata element)"),
])
def test_mteval_errors_name_file_and_line(tmp_path, side, old, new, error):
    texts = {"src": WMT_SRC, "ref": WMT_REF}
    texts[side] = replace_once(texts[side], old, new)
    src, ref = mteval_pair(tmp_path, texts["src"], texts["ref"])
    with pytest.raises(ReaderError, match=exact(error.format(src=src, ref=ref))):
        read_mteval(src, ref)


def test_mteval_file_without_documents(tmp_path):
    src, ref = mteval_pair(tmp_path, '<srcset setid="x" srclang="any">\n</srcset>\n')
    with pytest.raises(ReaderError, match=exact(f"{src}: no <doc> in the file")):
        read_mteval(src, ref)


def test_mteval_non_utf8_and_missing_file(tmp_path):
    src, ref = mteval_pair(tmp_path)
    (tmp_path / "bad.sgm").write_bytes(WMT_SRC.encode().replace(b"dawn", b"d\xe4wn"))
    bad = str(tmp_path / "bad.sgm")
    with pytest.raises(ReaderError, match=exact(
            f"{bad}:4: not UTF-8 text (invalid continuation byte at byte 44 of the line)")):
        read_mteval(bad, ref)
    with pytest.raises(ReaderError, match=f"^cannot read {re.escape(str(tmp_path / 'no.sgm'))}"):
        read_mteval(src, str(tmp_path / "no.sgm"))


# ---------------------------------------------------------------------------------------------
# WMT21+ XML
# ---------------------------------------------------------------------------------------------

WMT_XML = """\
<?xml version='1.0' encoding='utf-8'?>
<dataset id="generaltest2022">
  <collection id="general">
    <doc id="bakery_1" origlang="en" domain="news">
      <src lang="en">
        <p>
          <seg id="1">Bread &amp; butter sold out by nine.</seg>
          <seg id="2">The baker  opened
            a second shop.</seg>
        </p>
        <p>
          <seg id="3">Nobody translated this line.</seg>
        </p>
      </src>
      <ref lang="de" translator="A">
        <p>
          <seg id="1">Brot &amp; Butter waren um neun ausverkauft.</seg>
          <seg id="2">Der Bäcker eröffnete einen zweiten Laden.</seg>
        </p>
        <p>
          <seg id="3"></seg>
        </p>
      </ref>
      <ref lang="de" translator="B">
        <p>
          <seg id="1">Um neun waren Brot &amp; Butter weg.</seg>
          <seg id="2">Ein zweiter Laden wurde eröffnet.</seg>
        </p>
        <p>
          <seg id="3"/>
        </p>
      </ref>
      <hyp system="made-up-system" language="de">
        <p>
          <seg id="1">Brot und Butter.</seg>
          <seg id="2">Ein Laden.</seg>
          <seg id="3">Niemand.</seg>
        </p>
      </hyp>
    </doc>
    <doc id="suite_1" origlang="en" testsuite="robustness">
      <src lang="en"><p><seg id="1">A test suite line.</seg></p></src>
    </doc>
    <doc id="river_2" origlang="en">
      <src lang="en">
        <p><seg id="1">The river rose overnight.</seg><seg id="2">Only B translated this.</seg></p>
      </src>
      <ref lang="de" translator="A">
        <p><seg id="1">Der Fluss stieg über Nacht.</seg><seg id="2"> </seg></p>
      </ref>
      <ref lang="de" translator="B">
        <p><seg id="1">Über Nacht stieg der Fluss.</seg><seg id="2">Nur B hat das.</seg></p>
      </ref>
    </doc>
    <doc id="silent_3" origlang="en">
      <src lang="en"><p><seg id="1">Nobody translated this either.</seg></p></src>
    </doc>
  </collection>
</dataset>
"""


def test_wmt_xml_unescapes_entities_and_skips_as_sacrebleu(tmp_path, caplog):
    path = write(tmp_path / "generaltest2022.en-de.xml", WMT_XML)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        docs = read_wmt_xml(path, "en", "de")
    assert docs == [
        Document("bakery_1",
                 ["Bread & butter sold out by nine.", "The baker opened a second shop."],
                 ["Brot & Butter waren um neun ausverkauft.",
                  "Der Bäcker eröffnete einen zweiten Laden."]),
        Document("river_2", ["The river rose overnight."], ["Der Fluss stieg über Nacht."]),
    ]
    assert caplog.messages == [
        f"{path} (translator 'A'): 2 documents, 3 sentence pairs; "
        f"documents_without_reference_skipped=1; segments_without_reference_by_translator_"
        f"skipped=1; segments_without_reference_skipped=2; testsuite_documents_skipped=1"]
    by_b = read_wmt_xml(path, translator="B")
    assert by_b[0].tgt == ["Um neun waren Brot & Butter weg.", "Ein zweiter Laden wurde eröffnet."]
    assert by_b[1] == Document("river_2",
                               ["The river rose overnight.", "Only B translated this."],
                               ["Über Nacht stieg der Fluss.", "Nur B hat das."])


def test_wmt_xml_equals_sacrebleu_where_the_reference_is_not_empty(tmp_path):
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    path = write(tmp_path / "generaltest2022.en-de.xml", WMT_XML)
    fields = WMTXMLDataset._unwrap_wmt21_or_later(path)

    def clean(s):  # sacreBLEU's Dataset._clean
        return re.sub(r"\s+", " ", s.strip())

    for translator in ("A", "B"):
        kept = [(clean(s), clean(r)) for s, r in zip(fields["src"], fields[f"ref:{translator}"])
                if clean(r)]
        docs = read_wmt_xml(path, translator=translator)
        assert [(s, t) for d in docs for s, t in zip(d.src, d.tgt)] == kept


@pytest.mark.parametrize("old, new, error", [
    ('<doc id="river_2" origlang="en">', '<doc origlang="en">',
     "{path}:44: missing docid (<doc> without an id attribute)"),
    ('<seg id="2">Nur B', '<seg id="5">Nur B',
     "{path}:51: segment ids of <ref translator='B'> do not match the <src> of line 45 in "
     "document 'river_2' (first difference: id 2)"),
    ('<src lang="en">\n        <p><seg id="1">The river rose overnight.</seg><seg id="2">Only B '
     'translated this.</seg></p>\n      </src>', "<!-- no source -->",
     "{path}:44: document 'river_2' has no <src>"),
    ('<seg id="2">Nur B hat das.</seg>', '<seg id="2">Nur B hat das.</sag>',
     "{path}:52: malformed XML (mismatched tag at column 85)"),
    ("Nur B hat das.", "Nur&nbsp;B.", "{path}:52: malformed XML (undefined entity at column "
     "72)"),
    ('<seg id="1">The river', '<seg id="one">The river',
     "{path}:46: <seg> without a numeric id (id='one')"),
    ('<seg id="2">Only B', '<seg id="1">Only B', "{path}:46: segment id 1 repeats line 46 "
     "in this <src>"),
    ('<ref lang="de" translator="B">\n        <p><seg id="1">Über',
     '<ref lang="de" translator="A">\n        <p><seg id="1">Über',
     "{path}:51: a second <ref> translator='A' in document 'river_2' (first at line 48)"),
    ('<doc id="river_2" origlang="en">', '<doc id="bakery_1" origlang="en">',
     "{path}:44: repeated docid 'bakery_1' (first at line 4)"),
    ('<ref lang="de" translator="B">\n        <p><seg id="1">Über',
     '<ref lang="cs" translator="B">\n        <p><seg id="1">Über',
     "{path}:51: <ref> lang 'cs' (expected 'de', that of the first <ref>)"),
    ("<p><seg id=\"1\">Über Nacht", "<p><seg id=\"1\"><b>Über</b> Nacht",
     "{path}:52: <b> inside a <seg> (expected text only)"),
])
def test_wmt_xml_errors_name_file_and_line(tmp_path, old, new, error):
    text = replace_once(WMT_XML, old, new)
    path = write(tmp_path / "generaltest2022.en-de.xml", text)
    with pytest.raises(ReaderError, match=exact(error.format(path=path))):
        read_wmt_xml(path)


def test_wmt_xml_languages_and_translator_are_checked(tmp_path):
    path = write(tmp_path / "generaltest2022.en-de.xml", WMT_XML)
    with pytest.raises(ReaderError, match=exact(
            f"{path}:5: <src> lang 'en' (expected 'de', the language asked for)")):
        read_wmt_xml(path, src_lang="de")
    with pytest.raises(ReaderError, match=exact(
            f"{path}:15: <ref> lang 'de' (expected 'cs', the language asked for)")):
        read_wmt_xml(path, tgt_lang="cs")
    with pytest.raises(ReaderError, match=exact(
            f"{path}: no reference by translator 'C' (available: 'A', 'B')")):
        read_wmt_xml(path, translator="C")
    no_ref = write(tmp_path / "src-only.xml", '<dataset id="x"><collection id="c">\n<doc id="d" '
                   'origlang="en"><src lang="en"><p><seg id="1">A.</seg></p></src></doc>\n'
                   '</collection></dataset>\n')
    with pytest.raises(ReaderError, match=exact(f"{no_ref}: no <ref> in the file")):
        read_wmt_xml(no_ref)


# ---------------------------------------------------------------------------------------------
# WMT20 training data with document boundaries
# ---------------------------------------------------------------------------------------------

# News Commentary v15 layout, German column first; boundaries: empty, tab only, whitespace only
NC_TSV = ("\n"
          "Die Brücke wurde eröffnet.\tThe bridge was opened.\n"
          "Viele  Menschen kamen.\tMany people came. \n"
          "\n"
          "\t\n"
          "Ein neues Kapitel.\tA new chapter.\n"
          " \t \n"
          "Letzter Satz.\tLast sentence.\r\n")


def test_doc_split_tsv_columns_boundaries_and_docids(tmp_path):
    path = write(tmp_path / "news-commentary-v15.de-en.tsv", NC_TSV)
    docs = read_doc_split([path], "en", "de", columns=("de", "en"))
    assert docs == [
        Document("news-commentary-v15.de-en.tsv:1",
                 ["The bridge was opened.", "Many people came."],
                 ["Die Brücke wurde eröffnet.", "Viele Menschen kamen."]),
        Document("news-commentary-v15.de-en.tsv:2", ["A new chapter."], ["Ein neues Kapitel."]),
        Document("news-commentary-v15.de-en.tsv:3", ["Last sentence."], ["Letzter Satz."]),
    ]
    de_en = read_doc_split([path], "de", "en", columns=("de", "en"))
    assert de_en[0].src == ["Die Brücke wurde eröffnet.", "Viele Menschen kamen."]


def test_doc_split_plain_pair(tmp_path):
    src = write(tmp_path / "europarl.en", "Session resumed.\nThank you.\n\n\nNext item.\n")
    tgt = write(tmp_path / "europarl.de", "Sitzung eröffnet.\nDanke.\n\n \nNächster Punkt.\n")
    assert read_doc_split([src, tgt], "en", "de") == [
        Document("europarl.en:1", ["Session resumed.", "Thank you."],
                 ["Sitzung eröffnet.", "Danke."]),
        Document("europarl.en:2", ["Next item."], ["Nächster Punkt."]),
    ]


@pytest.mark.parametrize("line, error", [
    ("Nur Deutsch.\t", "unbalanced: the en column is empty but the de column is not (a document "
     "boundary is empty on both sides)"),
    ("\tOnly English.", "unbalanced: the de column is empty but the en column is not (a document "
     "boundary is empty on both sides)"),
    ("Eins.\tOne.\tUno.", "2 tabs (expected source<TAB>target: exactly one tab)"),
    ("No tab at all.", "0 tabs (expected source<TAB>target: exactly one tab)"),
])
def test_doc_split_bad_tsv_line_names_file_and_line(tmp_path, line, error):
    path = write(tmp_path / "europarl-v10.de-en.tsv", f"Eins.\tOne.\n{line}\nZwei.\tTwo.\n")
    with pytest.raises(ReaderError, match=exact(f"{path}:2: {error}")):
        read_doc_split([path], "en", "de", columns=("de", "en"))


def test_doc_split_plain_pair_errors(tmp_path):
    src = write(tmp_path / "x.en", "One.\nTwo.\n\nThree.\n")
    tgt = write(tmp_path / "x.de", "Eins.\n\n\nDrei.\n")
    with pytest.raises(ReaderError, match=exact(
            f"{src}:2: unbalanced: {tgt}:2 is empty but {src}:2 is not (a document boundary is "
            f"empty on both sides)")):
        read_doc_split([src, tgt], "en", "de")
    short = write(tmp_path / "short.de", "Eins.\nZwei.\n")
    for args in ([src, short], [short, src]):
        with pytest.raises(ReaderError, match=exact(
                f"{src}:3: line counts differ: {src} has 4 lines, {short} has 2 (the two files "
                f"must be line-aligned)")):
            read_doc_split(args, "en", "de", skip_bad=True)


def test_doc_split_columns_are_required_and_checked(tmp_path):
    path = write(tmp_path / "news-commentary-v15.de-en.tsv", NC_TSV)
    for columns in (None, ("de", "fr"), ("en", "en")):
        with pytest.raises(ReaderError, match=exact(
                f"{path}: columns {columns} must name the language of each TSV column, 'en' and "
                f"'de' in the file's order")):
            read_doc_split([path], "en", "de", columns=columns)
    with pytest.raises(ReaderError, match=exact(
            f"{path}: columns apply to a TSV file, not to a pair of plain files (given in the "
            f"order source, target)")):
        read_doc_split([path, path], "en", "de", columns=("de", "en"))


def test_doc_split_skip_bad_drops_and_logs_the_count(tmp_path, caplog):
    path = write(tmp_path / "europarl-v10.de-en.tsv",
                 "Eins.\tOne.\nNur Deutsch.\t\nZwei.\tTwo.\n\n\tLonely.\nA\tB\tC\n\n"
                 "Drei.\tThree.\n")
    with caplog.at_level(logging.INFO, logger=LOGGER):
        docs = read_doc_split([path], "en", "de", columns=("de", "en"), skip_bad=True)
    assert docs == [Document("europarl-v10.de-en.tsv:1", ["One.", "Two."], ["Eins.", "Zwei."]),
                    Document("europarl-v10.de-en.tsv:3", ["Three."], ["Drei."])]
    empty_en = ("unbalanced: the en column is empty but the de column is not (a document "
                "boundary is empty on both sides)")
    empty_de = ("unbalanced: the de column is empty but the en column is not (a document "
                "boundary is empty on both sides)")
    assert caplog.messages == [
        f"{path}: skipped 3 bad sentence pairs (first: {path}:2: {empty_en}; {path}:5: "
        f"{empty_de}; {path}:6: 2 tabs (expected source<TAB>target: exactly one tab))",
        f"{path}: 2 documents, 3 sentence pairs; bad_pairs_skipped=3; "
        f"documents_left_empty_skipped=1"]
    assert caplog.records[0].levelno == logging.WARNING


# ---------------------------------------------------------------------------------------------
# IWSLT17 TED training data
# ---------------------------------------------------------------------------------------------

TED_TAGS_ZH = """\
<url>http://www.ted.com/talks/made_up_tides</url>
<keywords>talks, ocean, science</keywords>
<speaker>Ana Example</speaker>
<talkid>101</talkid>
<title>安娜：潮汐</title>
<description>TED演讲：潮汐的故事。</description>
 潮水每天涨两次。
月亮拉动  海洋。

<url>http://www.ted.com/talks/made_up_bees</url>
<keywords>talks, nature</keywords>
<speaker>Bo Example</speaker>
<talkid>202</talkid>
<title>博：蜜蜂</title>
<description>TED演讲：蜜蜂。</description>
<reviewer href="http://www.ted.com/profiles/1">审校者</reviewer>
<translator href="http://www.ted.com/profiles/2">译者</translator>
蜜蜂会跳舞。
"""
TED_TAGS_EN = """\
<url>http://www.ted.com/talks/made_up_tides</url>
<keywords>talks, ocean, science</keywords>
<speaker>Ana Example</speaker>
<talkid>101</talkid>
<title>Ana Example: Tides</title>
<description>TED Talk Subtitles and Transcript: The story of tides.</description>
The tide comes in twice a day.
The moon pulls the ocean.
 \t
<url>http://www.ted.com/talks/made_up_bees</url>
<keywords>talks, nature</keywords>
<speaker>Bo Example</speaker>
<talkid>202</talkid>
<title>Bo Example: Bees</title>
<description>TED Talk Subtitles and Transcript: Bees.</description>
<reviewer href="http://www.ted.com/profiles/1">A Reviewer</reviewer>
<translator href="http://www.ted.com/profiles/2">A Translator</translator>
Bees can dance.
"""


def ted_pair(tmp_path, zh=TED_TAGS_ZH, en=TED_TAGS_EN):
    return (write(tmp_path / "train.tags.zh-en.zh", zh),
            write(tmp_path / "train.tags.zh-en.en", en))


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
        f"{zh} + {en}: 2 documents, 3 sentence pairs; empty_line_pairs_skipped=1"]


def test_ted_tags_doc_wrappers_and_talks_without_sentences(tmp_path, caplog):
    wrap = ('<doc docid="1" genre="lectures">\n{}</doc>\n<doc docid="2" genre="lectures">\n'
            '<talkid>303</talkid>\n</doc>\n')
    zh, en = ted_pair(tmp_path, wrap.format(TED_TAGS_ZH), wrap.format(TED_TAGS_EN))
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert [d.docid for d in read_ted_tags(zh, en)] == ["101", "202"]
    assert caplog.messages == [
        f"{zh} + {en}: 2 documents, 3 sentence pairs; empty_line_pairs_skipped=1; "
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


# ---------------------------------------------------------------------------------------------
# fairseq-hier-doc-extract
# ---------------------------------------------------------------------------------------------

def doc_extract(*args):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "fairseq_hier.cli.doc_extract", *map(str, args)],
                          cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)


def test_every_format_has_its_inputs_named():
    assert sorted(INPUT_KINDS) == sorted(FORMATS)


def test_cli_concatenates_inputs_and_round_trips(tmp_path):
    tsv = write(tmp_path / "news-commentary-v15.de-en.tsv", NC_TSV)
    src = write(tmp_path / "europarl.en", "Session resumed.\n\nNext item.\n")
    tgt = write(tmp_path / "europarl.de", "Sitzung eröffnet.\n\nNächster Punkt.\n")
    prefix = tmp_path / "raw" / "train"
    proc = doc_extract("--format", "doc-split", "--src-lang", "en", "--tgt-lang", "de",
                       "--output", prefix, "--columns", "de,en", "--file", tsv,
                       "--pair", src, tgt)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"{tsv}: 3 documents, 4 sentences",
        f"{src} + {tgt}: 2 documents, 2 sentences",
        f"total: 5 documents, 6 sentences -> {prefix}.en, {prefix}.de, {prefix}.docids"]
    expected = (read_doc_split([tsv], "en", "de", columns=("de", "en"))
                + read_doc_split([src, tgt], "en", "de"))
    assert read_documents(str(prefix), "en", "de") == expected
    assert (tmp_path / "raw" / "train.docids").read_text().splitlines() == [
        "news-commentary-v15.de-en.tsv:1", "news-commentary-v15.de-en.tsv:2",
        "news-commentary-v15.de-en.tsv:3", "europarl.en:1", "europarl.en:2"]


def test_cli_errors_are_one_line_with_exit_status_1(tmp_path):
    src, ref = mteval_pair(tmp_path)
    prefix = tmp_path / "test20"
    common = ["--format", "wmt-sgml", "--src-lang", "en", "--tgt-lang", "de", "--output", prefix]
    proc = doc_extract(*common, "--pair", src, ref, "--pair", src, ref)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: {src} + {ref}: docid 'harbour.101' was already read "
        f"from {src} + {ref} (docids must be unique across inputs)")
    assert "Traceback" not in proc.stderr and not os.path.exists(f"{prefix}.en")

    bad = write(tmp_path / "bad.sgm", replace_once(WMT_SRC, '<seg id="3">', '<seg id="4">'))
    proc = doc_extract(*common, "--pair", bad, ref)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: {bad}:8: segment id 4 (expected 3: ids run 1..n in "
        f"every document)")

    proc = doc_extract(*common, "--file", src)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: --format wmt-sgml reads --pair inputs, not --file "
        f"{src}")


def test_cli_wmt_xml_translator(tmp_path):
    path = write(tmp_path / "generaltest2022.en-de.xml", WMT_XML)
    prefix = tmp_path / "test22"
    proc = doc_extract("--format", "wmt-xml", "--src-lang", "en", "--tgt-lang", "de", "--output",
                       prefix, "--file", path, "--translator", "B")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"{path}: 2 documents, 4 sentences"
    assert read_documents(str(prefix), "en", "de") == read_wmt_xml(path, translator="B")
