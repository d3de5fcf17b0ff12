"""doc-split inputs whose ids come from their paths (fairseq_hier/readers/doc_mt/folders.py,
``fairseq-hier-doc extract``): document folders (the WMT20 test-suite layout: one folder per
document holding ``src.txt``, ``ref.txt`` and one file per system) and corpus files with the
same name in different folders, and the folder names that name a translation direction.

Every file is written here in the published layout with made-up sentences."""

import logging

import pytest
from conftest import ROOT, run_cli, run_recipe
from doc_mt_samples import LOGGER, exact

from fairseq_hier.readers.doc_mt.folders import (find_document_folders, read_doc_folders,
                                                 relative_names)
from fairseq_hier.readers.documents import Document, read_documents
from fairseq_hier.readers.lines import ReaderError

def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


# a test suite as published: one folder per document, src.txt / ref.txt aligned line by line
# (one paragraph a line; an empty line between paragraphs on both sides), one file per system
SUITE = {
    "audit": ("The audit starts on Monday.\nIt covers\u00a0three offices.\n\n"
              "  The report follows in May.\n",
              "Audit začíná v pondělí.\nTýká se\u00a0tří kanceláří.\n\n"
              "Zpráva následuje v květnu.\n"),
    "lease": ("The lease ends in June.\n", "Nájem končí v červnu.\n"),
}


def write_suite(folder):
    for doc, (src, ref) in SUITE.items():
        write(folder / doc / "src.txt", src)
        write(folder / doc / "ref.txt", ref)
        write(folder / doc / "newstest2020.CUNI-DocTransformer.txt", "A system output.\n")
    write(folder / "README", "The suite's notes.\n")
    (folder / "scripts").mkdir()
    return folder


EXPECTED = [
    Document("audit",
             ["The audit starts on Monday.", "It covers\u00a0three offices.",
              "The report follows in May."],
             ["Audit začíná v pondělí.", "Týká se\u00a0tří kanceláří.",
              "Zpráva následuje v květnu."]),
    Document("lease", ["The lease ends in June."], ["Nájem končí v červnu."]),
]


def extract(tmp_path, *inputs, check=True):
    prefix = tmp_path / "raw" / "suite"
    proc = run_cli("fairseq-hier-doc", "extract", "--format", "doc-split", "--src-lang", "en",
                   "--tgt-lang", "cs", "--output-prefix", prefix, *inputs, check=check)
    return proc, prefix


def docids(prefix):
    return (prefix.parent / f"{prefix.name}.docids").read_text(encoding="utf-8").splitlines()


def test_relative_names_are_unique_paths_below_the_common_parent(tmp_path):
    assert relative_names([f"{tmp_path}/docs/e1", f"{tmp_path}/docs/e2"]) == ["e1", "e2"]
    assert relative_names([f"{tmp_path}/a/train.tsv", f"{tmp_path}/b/train.tsv"]) == [
        "a/train.tsv", "b/train.tsv"]
    assert relative_names([f"{tmp_path}/data/nc.tsv", f"{tmp_path}/data/sub/x/doc1"]) == [
        "nc.tsv", "sub/x/doc1"]
    assert relative_names(["docs/e1"]) == ["e1"]


def test_a_folder_of_document_folders_is_one_document_per_folder(tmp_path, caplog):
    suite = write_suite(tmp_path / "elitr")
    folders = find_document_folders(str(suite))
    assert folders == [str(suite / "audit"), str(suite / "lease")]
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert read_doc_folders(folders, label="elitr") == EXPECTED
    assert caplog.messages == [
        "elitr: 2 documents, 4 sentence pairs; empty_line_pairs_skipped=1; sentences_trimmed=1"]


def test_cli_folder_gives_folder_docids(tmp_path, caplog):
    suite = write_suite(tmp_path / "elitr")
    proc, prefix = extract(tmp_path, "--folder", suite)
    assert docids(prefix) == ["audit", "lease"]
    assert read_documents(str(prefix), "en", "cs") == EXPECTED
    assert f"{suite}: 1 subfolders without src.txt not read (first: scripts)" in proc.stdout
    assert proc.stdout.splitlines()[-2] == f"{suite}: 2 documents, 4 sentences"


def test_cli_pairs_in_document_folders_get_the_folder_as_docid(tmp_path):
    suite = write_suite(tmp_path / "docs")
    pairs = [a for doc in SUITE for a in ("--pair", suite / doc / "src.txt",
                                           suite / doc / "ref.txt")]
    _, prefix = extract(tmp_path, *pairs)
    assert docids(prefix) == ["audit", "lease"]
    assert read_documents(str(prefix), "en", "cs") == EXPECTED
    # one folder alone: its name too
    _, prefix = extract(tmp_path, "--pair", suite / "lease" / "src.txt",
                        suite / "lease" / "ref.txt")
    assert docids(prefix) == ["lease"]


def test_cli_other_file_names_and_folders_of_two_suites(tmp_path):
    for suite in ("suite_a", "suite_b"):
        for doc, (src, ref) in SUITE.items():
            write(tmp_path / suite / doc / "source.en", src)
            write(tmp_path / suite / doc / "reference.cs", ref)
    _, prefix = extract(tmp_path, "--src-name", "source.en", "--ref-name", "reference.cs",
                        "--folder", tmp_path / "suite_a", "--folder", tmp_path / "suite_b")
    assert docids(prefix) == ["suite_a/audit", "suite_a/lease", "suite_b/audit",
                              "suite_b/lease"]


def test_cli_corpus_files_of_one_name_in_two_folders(tmp_path):
    for folder in ("nc", "europarl"):
        write(tmp_path / folder / "train.tsv", "Eins.\tOne.\n\nZwei.\tTwo.\n")
    _, prefix = extract(tmp_path, "--columns", "cs,en", "--file", tmp_path / "nc" / "train.tsv",
                        "--file", tmp_path / "europarl" / "train.tsv")
    assert docids(prefix) == ["nc/train.tsv:1", "nc/train.tsv:2", "europarl/train.tsv:1",
                              "europarl/train.tsv:2"]


def test_cli_folder_errors_are_one_line(tmp_path):
    suite = write_suite(tmp_path / "elitr")
    proc, prefix = extract(tmp_path, "--folder", suite, "--folder", suite / "lease", check=False)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {suite / 'lease'}: docid 'lease' was already read "
        f"from {suite} (docids must be unique across inputs)")
    assert not list(prefix.parent.glob("suite.*"))
    (suite / "lease" / "ref.txt").unlink()
    proc, _ = extract(tmp_path, "--folder", suite, check=False)
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {suite / 'lease' / 'ref.txt'}: not found (a document "
        f"folder holds src.txt and ref.txt)")
    proc, _ = extract(tmp_path, "--folder", suite / "scripts", check=False)
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {suite / 'scripts'}: no src.txt in it or in any of "
        f"its subfolders (expected a document folder holding src.txt and ref.txt, or a folder "
        f"of such folders)")
    proc, _ = extract(tmp_path, "--pair", suite / "audit", suite / "audit" / "ref.txt",
                      check=False)
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {suite / 'audit'}: a folder, not a file (--pair of "
        f"split {tmp_path / 'raw' / 'suite'}; document folders are read with --folder)")


def test_an_unbalanced_line_in_a_document_folder(tmp_path, caplog):
    src = write(tmp_path / "doc1" / "src.txt", "One.\nTwo.\nThree.\n")
    ref = write(tmp_path / "doc1" / "ref.txt", "Jedna.\n\nTři.\n")
    with pytest.raises(ReaderError, match=exact(
            f"{src}:2: unbalanced: {ref}:2 is empty but {src}:2 is not (a document boundary "
            f"is empty on both sides)")):
        read_doc_folders([str(tmp_path / "doc1")])
    with caplog.at_level(logging.INFO, logger=LOGGER):
        docs = read_doc_folders([str(tmp_path / "doc1")], skip_bad=True)
    assert docs == [Document("doc1", ["One.", "Three."], ["Jedna.", "Tři."])]
    assert caplog.messages[-1] == f"{tmp_path / 'doc1'}: 1 documents, 2 sentence pairs; " \
                                  f"bad_pairs_skipped=1"
    write(tmp_path / "doc1" / "ref.txt", "Jedna.\nDvě.\n")
    with pytest.raises(ReaderError, match=exact(
            f"{src}:3: line counts differ: {src} has 3 lines, {ref} has 2 (the two files must be "
            f"line-aligned)")):
        read_doc_folders([str(tmp_path / "doc1")])


def write_newstest_encs(data, year):
    """newstestYEAR-encs-{src.en,ref.cs}.sgm, one made-up document."""
    for side, name, lang, text in (("srcset", "src", "en", "The river is green."),
                                   ("refset", "ref", "cs", "Řeka je zelená.")):
        write(data / f"newstest{year}-encs-{name}.{lang}.sgm",
              f'<{side} setid="newstest{year}" srclang="any">\n'
              f'<doc sysid="ref" docid="river.{year}" genre="news" origlang="en">\n<p>\n'
              f'<seg id="1">{text}</seg>\n</p>\n</doc>\n</{side}>\n')


def test_wmt20_recipe_extracts_a_test_suite_as_the_next_test_set(tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    write(data / "news-commentary-v15.cs-en.tsv", "Řeka je zelená.\tThe river is green.\n")
    for year in (2018, 2020):
        write_newstest_encs(data, year)
    suite = write_suite(tmp_path / "elitr-cs")
    recipe = ROOT / "examples" / "wmt20_doc" / "recipe.sh"
    run_recipe(recipe, "en-cs", "extract", data, work, env={"TEST_SUITE": str(suite)})
    # no newstest2019: the suite is test1
    assert (work / "raw" / "test1.name").read_text().strip() == "elitr-cs"
    assert read_documents(str(work / "raw" / "test1"), "en", "cs") == EXPECTED
    assert docids(work / "raw" / "test") == ["river.2020"]
    out = run_recipe(recipe, "en-cs", "extract", data, work, env={"TEST_SUITE": str(suite)})
    assert "fairseq-hier-doc extract" not in out and not (work / "raw" / "test2.name").exists()


# ------------------------------------------------------------------ doc-split folders by direction
def test_folder_names_name_a_direction_between_non_letters():
    from fairseq_hier.readers.doc_mt.folders import named_direction

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
    proc = run_cli("fairseq-hier-doc", "extract", "--format", "doc-split", "--src-lang", "en",
                   "--tgt-lang", "cs", "--output-prefix", prefix, *inputs, check=False)
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
        f"fairseq-hier-doc extract: error: {suite}: every document folder is named for cs-en "
        f"(first: audit, lease), the other direction of --src-lang en --tgt-lang cs")
    assert not list(prefix.parent.glob("suite.*"))
    doc = write_two_way_suite(tmp_path / "two-way") / "cs-en_audit"
    proc, _ = doc_extract_en_cs(tmp_path, "--pair", doc / "src.txt", doc / "ref.txt")
    assert proc.returncode == 1 and "Traceback" not in proc.stdout
    assert proc.stdout.splitlines()[-1] == (
        f"fairseq-hier-doc extract: error: {doc / 'src.txt'}: its folder is named for cs-en, "
        f"the other direction of --src-lang en --tgt-lang cs")