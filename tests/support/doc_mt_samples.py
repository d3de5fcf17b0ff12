"""Published document-MT layouts written with made-up sentences (WMT SGML and XML, IWSLT TED
XML and train.tags, doc-split TSV), and the small helpers their tests share."""

import re


LOGGER = "fairseq_hier.readers.doc_mt"


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
