"""The published file layouts of the document-MT data sets (paper 004 Sec. 4.2), as data: which
files of a folder make each split, for ``fairseq-hier-doc extract --dataset``. WMT20 En-De /
En-Cs: the training corpora, newstest2018 (valid), newstest2020 (test), then the next free testN
for newstest2019, each WMT21+ ``wmttest20NN.en-L.xml`` and a test suite; IWSLT17 TED Zh-En:
train.tags, dev2010 + tst2011..2015 (valid), tst2017 (test), tst2016 (test1). The only I/O here
is asking which files exist. The table of files: docs/commands.md, section doc extract.
Imports the standard library, :mod:`fairseq_hier.errors` and :mod:`.layouts`.
"""

import os
import re
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.readers.doc_mt.layouts import Input

WMT20_TRAIN = ("news-commentary-v15", "europarl-v10", "rapid_2019")
IWSLT17_VALID = ("dev2010", "tst2011", "tst2012", "tst2013", "tst2014", "tst2015")


class SplitFiles(NamedTuple):
    """One split of a data set as found in its folder.

    ``split``: the raw split (``train``, ``valid``, ``test``, ``test1``), or None for the next
    free testN, which is also skipped when a ``test*.name`` already holds ``name``; ``name``: the
    set's name, written to SPLIT.name (None: no name file); ``inputs`` (``--pair`` / ``--file`` /
    ``--folder`` in order) in ``format``; ``error``: the files of a required split that are
    missing (then no inputs); ``note``: those of an optional split (not tested)."""
    split: Optional[str]
    name: Optional[str]
    format: str
    inputs: Tuple[Input, ...] = ()
    columns: Optional[str] = None
    skip_bad: bool = False  # --skip-bad applies (the training corpora)
    error: Optional[str] = None
    note: Optional[str] = None


class Dataset(NamedTuple):
    """A data set's languages and the function that finds its splits in a folder."""
    src_lang: str
    tgt_lang: str
    splits: Callable[..., List[SplitFiles]]  # (input_dir, test_suite) -> the splits in order


# paths are written INPUT_DIR/NAME, as given: the docids of doc-split inputs and the log name them

def _missing(paths) -> List[str]:
    return [p for p in paths if not os.path.isfile(p)]


def _sgm_pair(data: str, year: int, lang: str) -> Tuple[str, str]:
    return (f"{data}/newstest{year}-en{lang}-src.en.sgm",
            f"{data}/newstest{year}-en{lang}-ref.{lang}.sgm")


def _wmt20_train(data: str, lang: str) -> SplitFiles:
    inputs = []
    for corpus in WMT20_TRAIN:
        stem = f"{data}/{corpus}.{lang}-en"
        if os.path.isfile(f"{stem}.tsv"):
            inputs.append(Input("file", [f"{stem}.tsv"]))
        elif not _missing([f"{stem}.en", f"{stem}.{lang}"]):
            inputs.append(Input("pair", [f"{stem}.en", f"{stem}.{lang}"]))
    error = None if inputs else (
        f"split train is required: no training file in {data} (any of "
        f"{', '.join(f'{c}.{lang}-en.tsv' for c in WMT20_TRAIN)}, or a pair "
        f"{WMT20_TRAIN[-1]}.{lang}-en.{{en,{lang}}})")
    return SplitFiles("train", None, "doc-split", tuple(inputs), columns=f"{lang},en",
                      skip_bad=True, error=error)


def _wmt20_newstest(data: str, year: int, lang: str, split: Optional[str]) -> SplitFiles:
    """newstestYEAR -> ``split`` (required), or the next free testN (optional)."""
    src, ref = _sgm_pair(data, year, lang)
    missing, name = _missing([src, ref]), f"newstest{year}"
    if not missing:
        return SplitFiles(split, name, "wmt-sgml", (Input("pair", [src, ref]),))
    if split is None:
        return SplitFiles(None, name, "wmt-sgml", note=(
            f"optional test set {name} not in {data} ({' '.join(missing)} not found), "
            f"not tested"))
    return SplitFiles(split, name, "wmt-sgml", error=(
        f"split {split} ({name}) is required: {' '.join(missing)} not found (it needs {src} "
        f"and {ref})"))


def _wmt20_xml(data: str, lang: str) -> List[SplitFiles]:
    """Every WMT21+ ``wmttest20NN.en-L.xml`` of ``data``, in name order."""
    pattern = re.compile(rf"wmttest20[2-9][0-9]\.en-{re.escape(lang)}\.xml")
    names = sorted(n for n in os.listdir(data) if pattern.fullmatch(n)) \
        if os.path.isdir(data) else []
    return [SplitFiles(None, n[:-len(".xml")], "wmt-xml", (Input("file", [f"{data}/{n}"]),))
            for n in names if os.path.isfile(f"{data}/{n}")]


def _wmt20(lang: str) -> Callable[..., List[SplitFiles]]:
    def splits(data: str, test_suite: Optional[str] = None) -> List[SplitFiles]:
        found = [_wmt20_train(data, lang), _wmt20_newstest(data, 2018, lang, "valid"),
                 _wmt20_newstest(data, 2020, lang, "test"),
                 _wmt20_newstest(data, 2019, lang, None), *_wmt20_xml(data, lang)]
        if test_suite is not None:  # one folder per document; named for its folder
            name = os.path.basename(os.path.abspath(test_suite))
            error = None if os.path.isdir(test_suite) else \
                f"--test-suite {test_suite} is not a folder"
            found.append(SplitFiles(None, name, "doc-split", (Input("folder", [test_suite]),),
                                    error=error))
        return found
    return splits


def _ted_pair(data: str, name: str) -> Tuple[str, str]:
    return (f"{data}/IWSLT17.TED.{name}.zh-en.zh.xml", f"{data}/IWSLT17.TED.{name}.zh-en.en.xml")


def _iwslt17(data: str, test_suite: Optional[str] = None) -> List[SplitFiles]:
    train = [f"{data}/train.tags.zh-en.zh", f"{data}/train.tags.zh-en.en"]
    missing = _missing(train)
    if missing:
        found = [SplitFiles("train", None, "ted-tags", error=(
            f"split train is required: {' '.join(missing)} not found"))]
    else:
        found = [SplitFiles("train", None, "ted-tags", (Input("pair", train),))]
    valid, error = [], None
    for name in IWSLT17_VALID:
        pair = _ted_pair(data, name)
        missing = _missing(pair)
        if not missing:
            valid.append(Input("pair", list(pair)))
        elif len(missing) == 1 and error is None:
            error = f"split valid: {name} has one file of two (it needs {pair[0]} and {pair[1]})"
    if not valid and error is None:
        error = (f"split valid is required: none of {data}/IWSLT17.TED."
                 f"{{{','.join(IWSLT17_VALID[:2])},...,{IWSLT17_VALID[-1]}}}.zh-en.{{zh,en}}.xml "
                 f"found")
    found.append(SplitFiles("valid", None, "ted-xml", () if error else tuple(valid),
                            error=error))
    for name, split in (("tst2017", "test"), ("tst2016", "test1")):
        pair = _ted_pair(data, name)
        missing = _missing(pair)
        if not missing:
            found.append(SplitFiles(split, name, "ted-xml", (Input("pair", list(pair)),)))
        elif split == "test":
            found.append(SplitFiles(split, name, "ted-xml", error=(
                f"split test ({name}) is required: {' '.join(missing)} not found")))
        else:
            found.append(SplitFiles(split, name, "ted-xml", note=(
                f"{name} (with its reference) not in {data} ({' '.join(missing)} not found), "
                f"not tested")))
    return found


#: ``--dataset`` name -> its languages and layout
DATASETS: Dict[str, Dataset] = {
    "wmt20-en-de": Dataset("en", "de", _wmt20("de")),
    "wmt20-en-cs": Dataset("en", "cs", _wmt20("cs")),
    "iwslt17-ted-zh-en": Dataset("zh", "en", _iwslt17),
}


def dataset_splits(dataset: str, input_dir: str,
                   test_suite: Optional[str] = None) -> List[SplitFiles]:
    """The splits of ``dataset`` found in ``input_dir`` (paths as ``INPUT_DIR/NAME``), in the
    order they are extracted; ``test_suite``: a WMT20 test-suite folder (wmt20 only)."""
    if test_suite is not None and not dataset.startswith("wmt20-"):
        raise HierError(f"--test-suite applies to the wmt20 data sets, not {dataset}")
    return DATASETS[dataset].splits(input_dir, test_suite)
