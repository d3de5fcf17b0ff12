"""Readers of the published document-level MT layouts (fairseq_hier/data/doc_readers.py) and
``fairseq-hier-doc-extract`` (fairseq_hier/cli/doc_extract.py).

Every file is written here in the publisher's layout with made-up sentences; each malformed
input must give one error line naming the file and the line."""

import logging
import os
import random
import re
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli, run_recipe

from fairseq_hier.preparation.documents import INPUT_KINDS
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
    # sacreBLEU trims the space IWSLT puts around every segment: counted
    assert f"{src} + {ref}: 2 documents, 3 sentence pairs; sentences_trimmed=6" in caplog.messages


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
    assert (f"{src} + {ref}: 2 documents, 5 sentence pairs; documents_without_segments=1; "
            f"sentences_trimmed=1; sentences_whitespace_collapsed=2" in caplog.messages)


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


# newstest-style SGML whose text holds non-breaking spaces (U+00A0, literal) and entities: the
# fake SGML keeps entities as written, and sacreBLEU's cleaning turns every Unicode space into
# an ASCII one
NBSP_SGM_SRC = """\
<srcset setid="newstest2020" srclang="any">
<doc sysid="ref" docid="market.3" genre="news" origlang="en">
<p>
<seg id="1">Apples cost 2\u00a0euros a kilo.</seg>
<seg id="2">\u00a0Pears &amp; plums cost 3&#160;euros.</seg>
</p>
</doc>
</srcset>
"""
NBSP_SGM_REF = """\
<refset setid="newstest2020" srclang="any" trglang="de">
<doc sysid="ref" docid="market.3" genre="news" origlang="en">
<p>
<seg id="1">Äpfel kosten 2\u00a0Euro das Kilo.</seg>
<seg id="2">Birnen &amp; Pflaumen kosten 3&#160;Euro.\u00a0</seg>
</p>
</doc>
</refset>
"""


def demo_corpus_sgm(folder):
    """The newstest pair fairseq-hier-doc-demo-corpus writes (the demo and the recipe tests)."""
    from fairseq_hier.demo.documents import toy_document, write_sgm

    rng = random.Random(3)
    write_sgm(folder, 2020, [toy_document(rng, 3), toy_document(rng, 2, long_sentence=True)])
    return (str(folder / "newstest2020-ende-src.en.sgm"),
            str(folder / "newstest2020-ende-ref.de.sgm"))


MTEVAL_FIXTURES = {
    "wmt-sgml": ("newstest2020-ende-{}.sgm", WMT_SRC, WMT_REF),
    "ted-xml": ("IWSLT17.TED.tst2015.zh-en.{}.xml", TED_SRC, TED_REF),
    "nbsp-sgml": ("newstest2020-ende-{}.sgm", NBSP_SGM_SRC, NBSP_SGM_REF),
}


@pytest.mark.parametrize("fixture", [*MTEVAL_FIXTURES, "demo-corpus"])
def test_mteval_equals_sacrebleus_reader_segment_by_segment(tmp_path, fixture):
    """Text and docid of every segment, as sacreBLEU's FakeSGMLDataset (the WMT and IWSLT
    reader) extracts them from every mteval fixture of the tests."""
    from sacrebleu.dataset.fake_sgml import FakeSGMLDataset

    if fixture == "demo-corpus":
        src, ref = demo_corpus_sgm(tmp_path)
    else:
        name, src_text, ref_text = MTEVAL_FIXTURES[fixture]
        src, ref = (write(tmp_path / name.format(side), text)
                    for side, text in (("src", src_text), ("ref", ref_text)))
    docs = read_mteval(src, ref)
    sacrebleu = object.__new__(FakeSGMLDataset)
    meta = tmp_path / "docid.txt"
    sacrebleu._convert_meta(src, "docid", str(meta))
    assert [d.docid for d in docs for _ in d.src] == meta.read_text(encoding="utf-8").splitlines()
    assert [s for d in docs for s in d.src] == sacrebleu_fake_sgml_lines(src, tmp_path)
    assert [s for d in docs for s in d.tgt] == sacrebleu_fake_sgml_lines(ref, tmp_path)


def test_mteval_text_is_sacrebleus_cleaned_text(tmp_path):
    src, ref = mteval_pair(tmp_path, NBSP_SGM_SRC, NBSP_SGM_REF)
    assert read_mteval(src, ref) == [Document(
        "market.3", ["Apples cost 2 euros a kilo.", "Pears &amp; plums cost 3&#160;euros."],
        ["Äpfel kosten 2 Euro das Kilo.", "Birnen &amp; Pflaumen kosten 3&#160;Euro."])]


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
        f"skipped=1; segments_without_reference_skipped=2; sentences_whitespace_collapsed=1; "
        f"testsuite_documents_skipped=1"]
    by_b = read_wmt_xml(path, translator="B")
    assert by_b[0].tgt == ["Um neun waren Brot & Butter weg.", "Ein zweiter Laden wurde eröffnet."]
    assert by_b[1] == Document("river_2",
                               ["The river rose overnight.", "Only B translated this."],
                               ["Über Nacht stieg der Fluss.", "Nur B hat das."])


# WMT21 layout with what sacreBLEU's reader keeps and a Unicode whitespace cleaning would lose:
# non-breaking spaces (literal and as &#160;) inside and around segments, entities, a segment
# spread over lines, tabs; a test-suite document, a segment and a document without reference,
# a translator missing from a document
WMT21_XML = """\
<?xml version="1.0" encoding="utf-8"?>
<dataset id="wmttest2021">
  <collection id="general">
    <doc id="ferry-2021-01" origlang="en">
      <src lang="en">
        <p>
          <seg id="1">The ferry costs 5\u00a0euros.</seg>
          <seg id="2">Tickets &amp; maps are sold at the pier.</seg>
          <seg id="3">\tThe captain  waves.  </seg>
          <seg id="4">Boarding starts at
            9\u00a0o'clock.</seg>
          <seg id="5">Nobody translated the timetable.</seg>
        </p>
      </src>
      <ref lang="de" translator="A">
        <p>
          <seg id="1">Die Fähre kostet 5\u00a0Euro.</seg>
          <seg id="2">Fahrkarten &amp; Karten gibt es am Steg.</seg>
          <seg id="3">Der Kapitän winkt.</seg>
          <seg id="4">Das Einsteigen beginnt um 9&#160;Uhr.</seg>
          <seg id="5"></seg>
        </p>
      </ref>
      <ref lang="de" translator="B">
        <p>
          <seg id="1">\u00a0Die Fähre kostet fünf Euro.\u00a0</seg>
          <seg id="2">«\u00a0Karten\u00a0» &lt;gibt&gt; es am Steg.</seg>
          <seg id="3"> </seg>
          <seg id="4">Um 9 Uhr beginnt das Einsteigen.</seg>
          <seg id="5"/>
        </p>
      </ref>
      <hyp system="toy-system" language="de">
        <p><seg id="1">Fähre.</seg><seg id="2">Karten.</seg><seg id="3">Kapitän.</seg>
        <seg id="4">Neun.</seg><seg id="5">Plan.</seg></p>
      </hyp>
    </doc>
    <doc id="suite-2021-07" origlang="en" testsuite="robustness">
      <src lang="en"><p><seg id="1">A test\u00a0suite line.</seg></p></src>
      <ref lang="de" translator="A"><p><seg id="1">Eine Zeile.</seg></p></ref>
    </doc>
    <doc id="lake-2021-02" origlang="de">
      <src lang="en">
        <p><seg id="1">The lake froze.</seg><seg id="2">Skaters\u00a0came.</seg></p>
      </src>
      <ref lang="de" translator="A">
        <p><seg id="1">Der See fror zu.</seg><seg id="2">\u00a0</seg></p>
      </ref>
    </doc>
    <doc id="hill-2021-03" origlang="en">
      <src lang="en"><p><seg id="1">Nobody translated the hill.</seg></p></src>
    </doc>
  </collection>
</dataset>
"""
# a WMT22 file whose references name no translator (sacreBLEU's field "ref")
NO_TRANSLATOR_XML = """\
<?xml version="1.0" encoding="utf-8"?>
<dataset id="wmttest2022">
  <collection id="general">
    <doc id="coast_1" origlang="en">
      <src lang="en"><p><seg id="1">The coast is\u00a0near.</seg></p></src>
      <ref lang="de"><p><seg id="1">Die Küste ist\u00a0nah.</seg></p></ref>
    </doc>
  </collection>
</dataset>
"""
WMT_XML_FIXTURES = {"generaltest2022.en-de.xml": WMT_XML, "newstest2021.en-de.xml": WMT21_XML,
                    "wmttest2022.en-de.xml": NO_TRANSLATOR_XML}


def ascii_whitespace_on_one_line(text):
    """The text policy of our WMT XML reader, restated: ASCII whitespace runs -> one space."""
    return re.sub(r"[ \t\n\r\f\v]+", " ", text).strip(" ")


@pytest.mark.parametrize("name", sorted(WMT_XML_FIXTURES))
def test_wmt_xml_equals_sacrebleus_reader_segment_by_segment(tmp_path, name):
    """Docid, source and reference of every segment, for every translator, as sacreBLEU's
    WMTXMLDataset._unwrap_wmt21_or_later returns them: equal except for ASCII whitespace runs
    (one space, none around) and segments whose reference by that translator is empty (sacreBLEU
    keeps them with an empty reference, we skip them, counted)."""
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    path = write(tmp_path / name, WMT_XML_FIXTURES[name])
    fields = WMTXMLDataset._unwrap_wmt21_or_later(path)
    translators = sorted(k[len("ref:"):] for k in fields if k.startswith("ref:")) or [""]
    for translator in translators:
        theirs = zip(fields["docid"], fields["src"], fields[f"ref:{translator}" if translator
                                                           else "ref"])
        expected = [(d, ascii_whitespace_on_one_line(s), ascii_whitespace_on_one_line(r))
                    for d, s, r in theirs if r.strip()]
        docs = read_wmt_xml(path, translator=translator)
        assert [(d.docid, s, t) for d in docs for s, t in zip(d.src, d.tgt)] == expected


def test_wmt_xml_keeps_non_breaking_spaces_as_sacrebleu(tmp_path, caplog):
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    path = write(tmp_path / "newstest2021.en-de.xml", WMT21_XML)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        by_a = read_wmt_xml(path, "en", "de")
    assert by_a == [
        Document("ferry-2021-01",
                 ["The ferry costs 5\u00a0euros.", "Tickets & maps are sold at the pier.",
                  "The captain waves.", "Boarding starts at 9\u00a0o'clock."],
                 ["Die Fähre kostet 5\u00a0Euro.", "Fahrkarten & Karten gibt es am Steg.",
                  "Der Kapitän winkt.", "Das Einsteigen beginnt um 9\u00a0Uhr."]),
        Document("lake-2021-02", ["The lake froze."], ["Der See fror zu."]),
    ]
    # source 3 trimmed and collapsed, source 4 collapsed; without reference: the ferry's segment
    # 5 and the hill document
    assert caplog.messages == [
        f"{path} (translator 'A'): 2 documents, 5 sentence pairs; "
        f"documents_without_reference_skipped=1; "
        f"segments_without_reference_by_translator_skipped=1; "
        f"segments_without_reference_skipped=2; sentences_trimmed=1; "
        f"sentences_whitespace_collapsed=2; testsuite_documents_skipped=1"]
    by_b = read_wmt_xml(path, translator="B")
    assert [t for d in by_b for t in d.tgt] == [
        "\u00a0Die Fähre kostet fünf Euro.\u00a0", "«\u00a0Karten\u00a0» <gibt> es am Steg.",
        "Um 9 Uhr beginnt das Einsteigen."]
    fields = WMTXMLDataset._unwrap_wmt21_or_later(path)
    assert fields["ref:B"][:2] == [t for d in by_b for t in d.tgt][:2]  # exactly sacreBLEU's
    # the lake's second segment: sacreBLEU counts a reference of one U+00A0 as a reference;
    # empty for our layout, so translator A's is skipped (counted above)
    assert fields["docid"] == ["ferry-2021-01"] * 4 + ["lake-2021-02"] * 2


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
    ("Nur B hat das.", "Nur B <!-- a note --> hat das.",
     "{path}:52: a comment or processing instruction inside a <seg> (expected text only)"),
    ("Nur B hat das.", "Nur B <?pi x?> hat das.",
     "{path}:52: a comment or processing instruction inside a <seg> (expected text only)"),
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


# ------------------------------------------------ document ids on disk, missing inputs and splits

def extract(tmp_path, fmt, *inputs, src_lang="en", tgt_lang="de", check=True):
    """fairseq-hier-doc-extract (the console script) -> (process, PREFIX)."""
    prefix = tmp_path / "raw" / "split"
    proc = run_cli("fairseq-hier-doc-extract", "--format", fmt, "--src-lang", src_lang,
                   "--tgt-lang", tgt_lang, "--output", prefix, *inputs, check=check)
    return proc, prefix


def docids_on_disk(prefix):
    return (prefix.parent / f"{prefix.name}.docids").read_text(encoding="utf-8").splitlines()


def test_every_format_keeps_its_own_document_ids_on_disk(tmp_path):
    """TED <talkid>, the mteval docid attribute (WMT SGML, TED XML) and the WMT XML id reach
    PREFIX.docids as published."""
    zh, en = ted_pair(tmp_path)
    _, prefix = extract(tmp_path, "ted-tags", "--pair", zh, en, src_lang="zh", tgt_lang="en")
    assert docids_on_disk(prefix) == ["101", "202"]
    ted = [write(tmp_path / f"IWSLT17.TED.tst2015.zh-en.{lang}.xml", text)
           for lang, text in (("zh", TED_SRC), ("en", TED_REF))]
    _, prefix = extract(tmp_path, "ted-xml", "--pair", *ted, src_lang="zh", tgt_lang="en")
    assert docids_on_disk(prefix) == ["1922", "1930"]
    _, prefix = extract(tmp_path, "wmt-sgml", "--pair", *mteval_pair(tmp_path))
    assert docids_on_disk(prefix) == ["harbour.101", "orchard.7"]
    xml = write(tmp_path / "newstest2021.en-de.xml", WMT21_XML)
    _, prefix = extract(tmp_path, "wmt-xml", "--file", xml)
    assert docids_on_disk(prefix) == ["ferry-2021-01", "lake-2021-02"]
    # the text written is the reader's, non-breaking spaces included
    assert (prefix.parent / "split.de").read_text(encoding="utf-8").splitlines()[0] == \
        "Die Fähre kostet 5\u00a0Euro."


def test_the_same_own_id_in_two_inputs_is_one_line_naming_both(tmp_path):
    ted = [write(tmp_path / f"IWSLT17.TED.tst2015.zh-en.{lang}.xml", text)
           for lang, text in (("zh", TED_SRC), ("en", TED_REF))]
    again = [write(tmp_path / f"IWSLT17.TED.tst2016.zh-en.{lang}.xml", text)
             for lang, text in (("zh", TED_SRC), ("en", TED_REF))]
    proc, prefix = extract(tmp_path, "ted-xml", "--pair", *ted, "--pair", *again,
                           src_lang="zh", tgt_lang="en", check=False)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: {again[0]} + {again[1]}: docid '1922' was already "
        f"read from {ted[0]} + {ted[1]} (docids must be unique across inputs)")
    assert not list(prefix.parent.glob("split.*"))


def test_a_missing_input_is_one_line_naming_the_split_before_anything_is_read(tmp_path):
    src, ref = mteval_pair(tmp_path)
    missing = str(tmp_path / "newstest2019-ende-ref.de.sgm")
    proc, prefix = extract(tmp_path, "wmt-sgml", "--pair", src, ref, "--pair", src, missing,
                           check=False)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"fairseq-hier-doc-extract: error: {missing}: not found (--pair of split {prefix})"]
    proc, _ = extract(tmp_path, "wmt-xml", "--file", tmp_path, check=False)
    assert proc.stdout.splitlines() == [
        f"fairseq-hier-doc-extract: error: {tmp_path}: a folder, not a file (--file of split "
        f"{prefix})"]
    assert not (tmp_path / "raw").exists()


def test_a_doc_split_input_in_a_layout_with_own_ids_is_refused(tmp_path):
    """A TED train.tags pair (or mteval file) read as doc-split would turn talk ids into
    file:k: refused, naming the format that keeps them."""
    zh, en = ted_pair(tmp_path)
    with pytest.raises(ReaderError, match=exact(
            f"{zh}:4: a <talkid> line is an IWSLT train.tags line: read it with --format "
            f"ted-tags, not doc-split")):
        read_doc_split([zh, en], "zh", "en")
    src, ref = mteval_pair(tmp_path)
    with pytest.raises(ReaderError, match=exact(
            f"{src}:2: a <doc> line is mteval or WMT XML markup: read it with --format "
            f"wmt-sgml, ted-xml or wmt-xml, not doc-split")):
        read_doc_split([src, ref], "en", "de")


def test_nbsp_sentences_survive_the_raw_layout_exactly(tmp_path):
    """A sentence with non-breaking spaces around it, or a Unicode line separator inside, is
    written and read back unchanged (only "\\n" ends a line of the raw layout)."""
    from fairseq_hier.data.documents import write_documents

    docs = [Document("a", ["\u00a0Zwei\u00a0Wörter\u00a0", "Eins\u2028zwei."], ["x", "y"]),
            Document("b", ["Drei."], ["\u00a0z"])]
    write_documents(str(tmp_path / "t"), "de", "en", docs)
    assert read_documents(str(tmp_path / "t"), "de", "en") == docs


def recipe_fails(script, *args, env=None):
    """The output of a recipe run that must fail with exit status 1."""
    with pytest.raises(AssertionError) as failed:
        run_recipe(script, *args, env=env)
    message = str(failed.value)
    assert message.startswith(f"{script} failed (1):"), message
    return message


def test_wmt20_extract_stops_naming_a_missing_required_split(tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    data.mkdir()
    write(data / "news-commentary-v15.de-en.tsv", NC_TSV)
    for year in (2018, 2020):
        write(data / f"newstest{year}-ende-src.en.sgm", WMT_SRC)
    write(data / "newstest2018-ende-ref.de.sgm", WMT_REF)
    recipe = ROOT / "examples" / "wmt20_doc" / "recipe.sh"
    ref = data / "newstest2020-ende-ref.de.sgm"
    out = recipe_fails(recipe, "en-de", "extract", data, work)
    assert out.splitlines()[-1] == (
        f"recipe.sh: split test (newstest2020) is required: {ref} not found (it needs "
        f"{data}/newstest2020-ende-src.en.sgm and {ref})")
    assert not (work / "raw" / "test.docids").exists()
    write(ref, WMT_REF)
    out = run_recipe(recipe, "en-de", "extract", data, work)
    assert (f"recipe.sh: optional test set newstest2019 not in {data} "
            f"({data}/newstest2019-ende-src.en.sgm {data}/newstest2019-ende-ref.de.sgm not "
            f"found), not tested") in out.splitlines()
    assert docids_on_disk(work / "raw" / "test") == ["harbour.101", "orchard.7"]


def test_ted_extract_requires_tst2017_and_logs_a_missing_tst2016(tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    data.mkdir()
    ted_pair(data)
    x = data / "IWSLT17.TED"
    for name in ("dev2010", "tst2017"):
        write(data / f"IWSLT17.TED.{name}.zh-en.zh.xml", TED_SRC)
    write(data / "IWSLT17.TED.dev2010.zh-en.en.xml", TED_REF)
    recipe = ROOT / "examples" / "ted_zh_en" / "recipe.sh"
    out = recipe_fails(recipe, "extract", data, work)
    assert out.splitlines()[-1] == (
        f"recipe.sh: split test (tst2017) is required: {x}.tst2017.zh-en.en.xml not found")
    write(data / "IWSLT17.TED.tst2017.zh-en.en.xml", TED_REF)
    out = run_recipe(recipe, "extract", data, work)
    assert (f"recipe.sh: tst2016 (with its reference) not in {data} ({x}.tst2016.zh-en.zh.xml "
            f"{x}.tst2016.zh-en.en.xml not found), not tested") in out.splitlines()
    assert docids_on_disk(work / "raw" / "test") == ["1922", "1930"]
    assert docids_on_disk(work / "raw" / "train") == ["101", "202"]


# ------------------------------------------------------------------ doc-split folders by direction
def test_folder_names_name_a_direction_between_non_letters():
    from fairseq_hier.data.doc_readers import named_direction

    for name, direction in (("en-cs", True), ("doc3.en-cs", True), ("newstest2020-encs", True),
                            ("EN_CS", True), ("cs-en", False), ("csen_audit", False),
                            ("audit", None), ("encsv", None), ("mencs", None),
                            ("en-cs+cs-en", None), ("en-de", None)):
        assert named_direction(name, "en", "cs") is direction, name


def write_two_way_suite(suite):
    """A test suite holding both directions: folders named for en-cs (English sources), for
    cs-en (Czech sources) and one named for neither."""
    for doc, src, ref in (("en-cs_audit", "The audit starts.", "Audit začíná."),
                          ("cs-en_audit", "Audit začíná.", "The audit starts."),
                          ("lease", "The lease ends.", "Nájem končí.")):
        (suite / doc).mkdir(parents=True)
        (suite / doc / "src.txt").write_text(src + "\n", encoding="utf-8")
        (suite / doc / "ref.txt").write_text(ref + "\n", encoding="utf-8")
    return suite


def doc_extract_en_cs(tmp_path, *inputs):
    prefix = tmp_path / "raw" / "suite"
    proc = run_cli("fairseq-hier-doc-extract", "--format", "doc-split", "--src-lang", "en",
                   "--tgt-lang", "cs", "--output", prefix, *inputs, check=False)
    return proc, prefix


def test_doc_extract_folder_skips_the_other_directions_folders_with_a_count(tmp_path):
    suite = write_two_way_suite(tmp_path / "elitr")
    proc, prefix = doc_extract_en_cs(tmp_path, "--folder", suite)
    assert proc.returncode == 0, proc.stdout
    assert (f"{suite}: 1 document folders of the other direction (cs-en) not read (first: "
            f"cs-en_audit)") in proc.stdout
    assert read_documents(str(prefix), "en", "cs") == [
        Document("en-cs_audit", ["The audit starts."], ["Audit začíná."]),
        Document("lease", ["The lease ends."], ["Nájem končí."])]


def test_doc_extract_refuses_a_folder_or_pair_of_the_other_direction_in_one_line(tmp_path):
    suite = tmp_path / "elitr" / "cs-en"  # the suite's own name says cs-en
    for doc in ("audit", "lease"):
        (suite / doc).mkdir(parents=True)
        (suite / doc / "src.txt").write_text("Audit začíná.\n", encoding="utf-8")
        (suite / doc / "ref.txt").write_text("The audit starts.\n", encoding="utf-8")
    proc, prefix = doc_extract_en_cs(tmp_path, "--folder", suite)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: {suite}: every document folder is named for cs-en "
        f"(first: audit, lease), the other direction of --src-lang en --tgt-lang cs")
    assert not list(prefix.parent.glob("suite.*"))
    doc = write_two_way_suite(tmp_path / "two-way") / "cs-en_audit"
    proc, _ = doc_extract_en_cs(tmp_path, "--pair", doc / "src.txt", doc / "ref.txt")
    assert proc.returncode == 1 and "Traceback" not in proc.stdout
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: {doc / 'src.txt'}: its folder is named for cs-en, "
        f"the other direction of --src-lang en --tgt-lang cs")


def test_mteval_files_must_hold_the_languages_asked_for(tmp_path):
    """The set lines' languages (``<refset trglang>``; ``<srcset srclang>`` unless ``any``, as
    WMT20 states it) against the direction asked for: a swapped or other-direction file is one
    error line naming it; either direction of the IWSLT zh-en files is read."""
    src, ref = mteval_pair(tmp_path)
    assert len(read_mteval(src, ref, "en", "de")) == 2  # srclang="any": not checked
    named = write(tmp_path / "named.sgm", WMT_REF.replace('trglang="de"', 'trglang="German"'))
    assert len(read_mteval(src, named, "en", "xx")) == 2  # a language name: not checked
    with pytest.raises(ReaderError, match=exact(
            f"{ref}:1: <refset> trglang='de' but this file should hold 'en' (the file of the "
            f"other side or of the other direction?)")):
        read_mteval(src, ref, "de", "en")
    zh = write(tmp_path / "IWSLT17.TED.tst2015.zh-en.zh.xml", TED_SRC)
    en = write(tmp_path / "IWSLT17.TED.tst2015.zh-en.en.xml", TED_REF)
    assert len(read_mteval(zh, en, "zh", "en")) == len(read_mteval(en, zh, "en", "zh-cn")) == 2
    with pytest.raises(ReaderError, match=exact(
            f"{zh}:3: <srcset> srclang='zh' but this file should hold 'en' (the file of the "
            f"other side or of the other direction?)")):
        read_mteval(zh, en, "en", "zh")
    proc = run_cli("fairseq-hier-doc-extract", "--format", "ted-xml", "--src-lang", "en",
                   "--tgt-lang", "zh", "--output", tmp_path / "out" / "t", "--pair", zh, en,
                   check=False)
    assert proc.returncode == 1 and proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc-extract: error: {zh}:3: <srcset> srclang='zh' but this file should "
        f"hold 'en' (the file of the other side or of the other direction?)")
