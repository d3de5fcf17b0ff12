"""``fairseq-hier-doc extract --dataset``: the WMT20 and IWSLT17 TED layouts
(fairseq_hier/readers/doc_mt/datasets.py) found in a folder of published files (made-up
sentences), every split written in order, missing required files named in one line before any
work, a missing optional test set logged, and a rerun that skips what is extracted."""

import pytest
from doc_mt_samples import NC_TSV, TED_REF, TED_SRC, WMT21_XML, WMT_REF, WMT_SRC, ted_pair, write

from fairseq_hier.cli.doc import cli_main
from fairseq_hier.readers.doc_mt.datasets import SplitFiles, dataset_splits
from fairseq_hier.readers.doc_mt.layouts import Input
from fairseq_hier.readers.documents import read_documents


def wmt_folder(data, years=(2018, 2019, 2020)):
    """WMT20 En-De as published: News Commentary TSV, a Rapid plain pair, newstest SGML and
    two WMT21+ XML test sets (one of another pair, not read)."""
    data.mkdir(parents=True, exist_ok=True)
    write(data / "news-commentary-v15.de-en.tsv", NC_TSV)
    write(data / "rapid_2019.de-en.en", "Press release.\n")
    write(data / "rapid_2019.de-en.de", "Pressemitteilung.\n")
    write(data / "europarl-v10.de-en.en", "Only one side.\n")  # no .de: not read
    for year in years:
        write(data / f"newstest{year}-ende-src.en.sgm", WMT_SRC)
        write(data / f"newstest{year}-ende-ref.de.sgm", WMT_REF)
    write(data / "wmttest2021.en-de.xml", WMT21_XML)
    write(data / "wmttest2021.en-cs.xml", WMT21_XML)
    return data


def ted_folder(data, sets=("dev2010", "tst2013", "tst2017", "tst2016")):
    data.mkdir(parents=True, exist_ok=True)
    ted_pair(data)
    for name in sets:  # docids unique across the valid sets
        for lang, text in (("zh", TED_SRC), ("en", TED_REF)):
            write(data / f"IWSLT17.TED.{name}.zh-en.{lang}.xml",
                  text.replace('docid="19', f'docid="{name}-19'))
    return data


def extract(*args):
    return cli_main(["extract", *map(str, args)])


def test_wmt20_files_are_found_in_the_layouts_order(tmp_path):
    d = str(wmt_folder(tmp_path / "data"))
    suite = tmp_path / "suites" / "elitr"
    suite.mkdir(parents=True)
    sgm = {y: Input("pair", [f"{d}/newstest{y}-ende-src.en.sgm",
                             f"{d}/newstest{y}-ende-ref.de.sgm"]) for y in (2018, 2019, 2020)}
    assert dataset_splits("wmt20-en-de", d, str(suite)) == [
        SplitFiles("train", None, "doc-split",
                   (Input("file", [f"{d}/news-commentary-v15.de-en.tsv"]),
                    Input("pair", [f"{d}/rapid_2019.de-en.en", f"{d}/rapid_2019.de-en.de"])),
                   columns="de,en", skip_bad=True),
        SplitFiles("valid", "newstest2018", "wmt-sgml", (sgm[2018],)),
        SplitFiles("test", "newstest2020", "wmt-sgml", (sgm[2020],)),
        SplitFiles(None, "newstest2019", "wmt-sgml", (sgm[2019],)),
        SplitFiles(None, "wmttest2021.en-de", "wmt-xml",
                   (Input("file", [f"{d}/wmttest2021.en-de.xml"]),)),
        SplitFiles(None, "elitr", "doc-split", (Input("folder", [str(suite)]),)),
    ]


def test_iwslt17_files_are_found_in_the_layouts_order(tmp_path):
    d = str(ted_folder(tmp_path / "data"))

    def pair(name):
        return Input("pair", [f"{d}/IWSLT17.TED.{name}.zh-en.zh.xml",
                              f"{d}/IWSLT17.TED.{name}.zh-en.en.xml"])

    assert dataset_splits("iwslt17-ted-zh-en", d) == [
        SplitFiles("train", None, "ted-tags",
                   (Input("pair", [f"{d}/train.tags.zh-en.zh", f"{d}/train.tags.zh-en.en"]),)),
        SplitFiles("valid", None, "ted-xml", (pair("dev2010"), pair("tst2013"))),
        SplitFiles("test", "tst2017", "ted-xml", (pair("tst2017"),)),
        SplitFiles("test1", "tst2016", "ted-xml", (pair("tst2016"),)),
    ]


def test_wmt20_writes_every_split_and_the_next_free_test_sets(tmp_path, capsys):
    data, raw = wmt_folder(tmp_path / "data"), tmp_path / "raw"
    assert extract("--dataset", "wmt20-en-de", "--input-dir", data, "--output-dir", raw) == 0
    names = {p.name: p.read_text() for p in raw.glob("*.name")}
    assert names == {"valid.name": "newstest2018\n", "test.name": "newstest2020\n",
                     "test1.name": "newstest2019\n", "test2.name": "wmttest2021.en-de\n"}
    assert read_documents(str(raw / "train"), "en", "de")[-1].src == ["Press release."]
    assert (raw / "train.docids").read_text().splitlines()[-1] == "rapid_2019.de-en.en:1"
    assert (raw / "test2.docids").read_text().split() == ["ferry-2021-01", "lake-2021-02"]
    out = capsys.readouterr().out
    assert "split test1 (newstest2019):" in out.splitlines()


def test_a_missing_required_file_is_one_line_and_nothing_is_written(tmp_path, capsys):
    data, raw = wmt_folder(tmp_path / "data", years=(2019,)), tmp_path / "raw"
    (data / "newstest2018-ende-ref.de.sgm").write_text(WMT_REF)
    assert extract("--dataset", "wmt20-en-de", "--input-dir", data, "--output-dir", raw) == 1
    src, ref = (f"{data}/newstest{{}}-ende-src.en.sgm", f"{data}/newstest{{}}-ende-ref.de.sgm")
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"fairseq-hier-doc extract: error: split valid (newstest2018) is required: "
        f"{src.format(2018)} not found (it needs {src.format(2018)} and {ref.format(2018)}); "
        f"split test (newstest2020) is required: {src.format(2020)} {ref.format(2020)} not "
        f"found (it needs {src.format(2020)} and {ref.format(2020)})"]
    assert captured.out == "" and not raw.exists()


def test_missing_training_data_and_ted_sets_are_named(tmp_path, capsys):
    d = tmp_path / "empty"
    d.mkdir()
    assert extract("--dataset", "wmt20-en-cs", "--input-dir", d, "--output-dir",
                   tmp_path / "raw") == 1
    assert capsys.readouterr().err.startswith(
        f"fairseq-hier-doc extract: error: split train is required: no training file in {d} "
        f"(any of news-commentary-v15.cs-en.tsv, europarl-v10.cs-en.tsv, rapid_2019.cs-en.tsv, "
        f"or a pair rapid_2019.cs-en.{{en,cs}}); split valid (newstest2018) is required: ")
    data = ted_folder(tmp_path / "ted", sets=("dev2010", "tst2017"))
    (data / "IWSLT17.TED.dev2010.zh-en.en.xml").unlink()
    assert extract("--dataset", "iwslt17-ted-zh-en", "--input-dir", data, "--output-dir",
                   tmp_path / "raw") == 1
    x = f"{data}/IWSLT17.TED.dev2010.zh-en"
    assert capsys.readouterr().err.splitlines() == [
        f"fairseq-hier-doc extract: error: split valid: dev2010 has one file of two (it needs "
        f"{x}.zh.xml and {x}.en.xml)"]
    assert not (tmp_path / "raw").exists()


def test_a_missing_optional_test_set_is_logged_and_the_rest_written(tmp_path, capsys):
    data, raw = ted_folder(tmp_path / "data", sets=("tst2014", "tst2017")), tmp_path / "raw"
    assert extract("--dataset", "iwslt17-ted-zh-en", "--input-dir", data, "--output-dir",
                   raw) == 0
    x = f"{data}/IWSLT17.TED.tst2016.zh-en"
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "not tested" in line] == [
        f"tst2016 (with its reference) not in {data} ({x}.zh.xml {x}.en.xml not found), "
        f"not tested"]
    assert sorted(p.name for p in raw.iterdir()) == sorted(
        [f"{split}.{suffix}" for split in ("train", "valid", "test")
         for suffix in ("zh", "en", "docids")] + ["test.name"])
    assert (raw / "valid.docids").read_text().split() == ["tst2014-1922", "tst2014-1930"]
    assert (raw / "test.name").read_text() == "tst2017\n"


def test_a_rerun_skips_the_extracted_splits(tmp_path, capsys):
    data, raw = wmt_folder(tmp_path / "data"), tmp_path / "raw"
    suite = tmp_path / "suite" / "doc1"
    suite.mkdir(parents=True)
    write(suite / "src.txt", "One line.\n")
    write(suite / "ref.txt", "Eine Zeile.\n")
    args = ["--dataset", "wmt20-en-de", "--input-dir", data, "--output-dir", raw,
            "--test-suite", suite.parent]
    assert extract(*args) == 0
    assert (raw / "test3.name").read_text() == "suite\n"
    (raw / "test1.docids").rename(raw / "moved.docids")  # newstest2019 is known by its name
    written = {p.name: p.stat().st_mtime_ns for p in raw.iterdir()}
    capsys.readouterr()
    assert extract(*args) == 0
    assert {p.name: p.stat().st_mtime_ns for p in raw.iterdir()} == written
    assert capsys.readouterr().out.splitlines() == [
        f"split train: {raw}/train.docids exists, not extracted again",
        f"split valid: {raw}/valid.docids exists, not extracted again",
        f"split test: {raw}/test.docids exists, not extracted again",
        f"newstest2019: extracted before ({raw}/test1.name), not extracted again",
        f"wmttest2021.en-de: extracted before ({raw}/test2.name), not extracted again",
        f"suite: extracted before ({raw}/test3.name), not extracted again"]


@pytest.mark.parametrize("args, message", [
    (["--dataset", "wmt20-en-de", "--input-dir", "d"], "--dataset needs --output-dir"),
    (["--dataset", "wmt20-en-de", "--input-dir", "d", "--output-dir", "o", "--format", "jsonl"],
     "--format applies to one split (--format), not to --dataset"),
    (["--dataset", "iwslt17-ted-zh-en", "--input-dir", "d", "--output-dir", "o",
      "--test-suite", "s"], "--test-suite applies to the wmt20 data sets, not iwslt17-ted-zh-en"),
    (["--dataset", "iwslt17-ted-zh-en", "--input-dir", "d", "--output-dir", "o", "--skip-bad"],
     "--skip-bad applies to the wmt20 data sets, not iwslt17-ted-zh-en"),
    (["--format", "jsonl", "--src-lang", "fr", "--file", "f"],
     "the following arguments are required: --tgt-lang, --output-prefix (or --dataset with "
     "--input-dir and --output-dir)"),
    (["--format", "jsonl", "--src-lang", "fr", "--tgt-lang", "en", "--output-prefix", "o",
      "--file", "f", "--output-dir", "o"], "--output-dir applies to --dataset only"),
])
def test_usage_errors_name_the_option(args, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        extract(*args)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"fairseq-hier-doc extract: error: {message}"
