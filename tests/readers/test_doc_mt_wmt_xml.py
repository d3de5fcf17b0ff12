"""The WMT21+ XML test sets (fairseq_hier/readers/doc_mt/wmt_xml.py), against sacreBLEU's own
reader.

Every file is written here in the publisher's layout with made-up sentences; each malformed
input must give one error line naming the file and the line."""

import logging
import re

import pytest
from doc_mt_samples import LOGGER, WMT21_XML, WMT_XML, exact, replace_once, write

from fairseq_hier.readers.doc_mt.wmt_xml import read_wmt_xml
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError


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
