"""``fairseq-hier-doc extract`` (fairseq_hier/cli/doc_extract.py) over every document-MT layout:
inputs concatenated, document ids kept on disk, one-line errors, the recipes' required splits."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli, run_recipe
from doc_mt_samples import (NC_TSV, TED_REF, TED_SRC, WMT21_XML, WMT_REF, WMT_SRC, WMT_XML, exact,
                            mteval_pair, replace_once, ted_pair, write)

from fairseq_hier.preparation.doc_extract import INPUT_KINDS
from fairseq_hier.readers.doc_mt.doc_split import read_doc_split
from fairseq_hier.readers.doc_mt.layouts import FORMATS
from fairseq_hier.readers.doc_mt.wmt_xml import read_wmt_xml
from fairseq_hier.readers.documents import Document, read_documents
from fairseq_hier.readers.lines import ReaderError


# ---------------------------------------------------------------------------------------------
# fairseq-hier-doc extract
# ---------------------------------------------------------------------------------------------

def doc_extract(*args):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "fairseq_hier.cli.doc", "extract",
                           *map(str, args)],
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
                       "--output-prefix", prefix, "--columns", "de,en", "--file", tsv,
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
    common = ["--format", "wmt-sgml", "--src-lang", "en", "--tgt-lang", "de", "--output-prefix",
              prefix]
    proc = doc_extract(*common, "--pair", src, ref, "--pair", src, ref)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {src} + {ref}: docid 'harbour.101' was already read "
        f"from {src} + {ref} (docids must be unique across inputs)")
    assert "Traceback" not in proc.stderr and not os.path.exists(f"{prefix}.en")

    bad = write(tmp_path / "bad.sgm", replace_once(WMT_SRC, '<seg id="3">', '<seg id="4">'))
    proc = doc_extract(*common, "--pair", bad, ref)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {bad}:8: segment id 4 (expected 3: ids run 1..n in "
        f"every document)")

    proc = doc_extract(*common, "--file", src)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: --format wmt-sgml reads --pair inputs, not --file "
        f"{src}")


def test_cli_wmt_xml_translator(tmp_path):
    path = write(tmp_path / "generaltest2022.en-de.xml", WMT_XML)
    prefix = tmp_path / "test22"
    proc = doc_extract("--format", "wmt-xml", "--src-lang", "en", "--tgt-lang", "de",
                       "--output-prefix",
                       prefix, "--file", path, "--translator", "B")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"{path}: 2 documents, 4 sentences"
    assert read_documents(str(prefix), "en", "de") == read_wmt_xml(path, translator="B")


# ------------------------------------------------ document ids on disk, missing inputs and splits

def extract(tmp_path, fmt, *inputs, src_lang="en", tgt_lang="de", check=True):
    """fairseq-hier-doc extract (the console script) -> (process, PREFIX)."""
    prefix = tmp_path / "raw" / "split"
    proc = run_cli("fairseq-hier-doc", "extract", "--format", fmt, "--src-lang", src_lang,
                   "--tgt-lang", tgt_lang, "--output-prefix", prefix, *inputs, check=check)
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
        f"fairseq-hier-doc extract: error: {again[0]} + {again[1]}: docid '1922' was already "
        f"read from {ted[0]} + {ted[1]} (docids must be unique across inputs)")
    assert not list(prefix.parent.glob("split.*"))


def test_a_missing_input_is_one_line_naming_the_split_before_anything_is_read(tmp_path):
    src, ref = mteval_pair(tmp_path)
    missing = str(tmp_path / "newstest2019-ende-ref.de.sgm")
    proc, prefix = extract(tmp_path, "wmt-sgml", "--pair", src, ref, "--pair", src, missing,
                           check=False)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"fairseq-hier-doc extract: error: {missing}: not found (--pair of split {prefix})"]
    proc, _ = extract(tmp_path, "wmt-xml", "--file", tmp_path, check=False)
    assert proc.stdout.splitlines() == [
        f"fairseq-hier-doc extract: error: {tmp_path}: a folder, not a file (--file of split "
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
    from fairseq_hier.readers.documents import write_documents

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
        f"fairseq-hier-doc extract: error: split test (newstest2020) is required: {ref} not found (it needs "
        f"{data}/newstest2020-ende-src.en.sgm and {ref})")
    assert not (work / "raw" / "test.docids").exists()
    write(ref, WMT_REF)
    out = run_recipe(recipe, "en-de", "extract", data, work)
    assert (f"optional test set newstest2019 not in {data} "
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
        f"fairseq-hier-doc extract: error: split test (tst2017) is required: {x}.tst2017.zh-en.en.xml not found")
    write(data / "IWSLT17.TED.tst2017.zh-en.en.xml", TED_REF)
    out = run_recipe(recipe, "extract", data, work)
    assert (f"tst2016 (with its reference) not in {data} ({x}.tst2016.zh-en.zh.xml "
            f"{x}.tst2016.zh-en.en.xml not found), not tested") in out.splitlines()
    assert docids_on_disk(work / "raw" / "test") == ["1922", "1930"]
    assert docids_on_disk(work / "raw" / "train") == ["101", "202"]
