"""WMT fake SGML (newstest, up to WMT20) and IWSLT TED dev/test XML, the mteval layouts
(fairseq_hier/readers/doc_mt/mteval.py), against sacreBLEU's own reader.

Every file is written here in the publisher's layout with made-up sentences; each malformed
input must give one error line naming the file and the line."""

import logging
import os
import random
import re

import pytest
from conftest import run_cli
from doc_mt_samples import (LOGGER, TED_REF, TED_SRC, WMT_REF, WMT_SRC, exact, mteval_pair,
                            replace_once, write)

from fairseq_hier.readers.doc_mt.mteval import read_mteval
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError


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
    """The newstest pair fairseq-hier-demo doc-corpus writes (the demo and the recipe tests)."""
    from fairseq_hier.demo.translation_corpus import toy_document, write_sgm

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
    proc = run_cli("fairseq-hier-doc", "extract", "--format", "ted-xml", "--src-lang", "en",
                   "--tgt-lang", "zh", "--output-prefix", tmp_path / "out" / "t", "--pair", zh, en,
                   check=False)
    assert proc.returncode == 1 and proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {zh}:3: <srcset> srclang='zh' but this file should "
        f"hold 'en' (the file of the other side or of the other direction?)")
