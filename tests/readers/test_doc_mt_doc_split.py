"""Document-split TSV and plain files, the WMT20 training corpora with document boundaries
(fairseq_hier/readers/doc_mt/doc_split.py).

Every file is written here in the publisher's layout with made-up sentences; each malformed
input must give one error line naming the file and the line."""

import logging

import pytest
from doc_mt_samples import LOGGER, NC_TSV, exact, write

from fairseq_hier.readers.doc_mt.doc_split import read_doc_split
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError


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
