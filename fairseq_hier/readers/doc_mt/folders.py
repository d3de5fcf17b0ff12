"""Document folders (the WMT20 test suites): one folder per document, holding ``src.txt`` and
``ref.txt`` line-aligned, and the folder names that name a translation direction
(docs/data-formats.md, section "Document folders"). Imports the standard library and
:mod:`fairseq_hier.readers`.
"""

import collections
import logging
import os
import re
from typing import List, Optional, Sequence, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.readers.doc_mt.common import LOGGED_LOCATIONS, count_bad, log_counts
from fairseq_hier.readers.doc_mt.doc_split import plain_pairs
from fairseq_hier.readers.documents import Document
from fairseq_hier.readers.lines import ReaderError

logger = logging.getLogger(__name__)

# the file names of a document folder (WMT20 test suites)
DOC_FOLDER_SRC = "src.txt"
DOC_FOLDER_REF = "ref.txt"


def relative_names(paths: Sequence[str]) -> List[str]:
    """The name of each path relative to the common parent of their folders (``/``-separated),
    e.g. ``docs/elitr1``, ``docs/elitr2`` -> ``elitr1``, ``elitr2``; ``a/train.tsv``,
    ``b/train.tsv`` -> ``a/train.tsv``, ``b/train.tsv``; one path -> its base name. Names that
    are unique as paths stay unique."""
    full = [os.path.abspath(p) for p in paths]
    if not full:
        return []
    parent = os.path.commonpath([os.path.dirname(p) for p in full])
    return [os.path.relpath(p, parent).replace(os.sep, "/") for p in full]


def is_document_folder_pair(src_path: str, ref_path: str, src_name: str = DOC_FOLDER_SRC,
                            ref_name: str = DOC_FOLDER_REF) -> bool:
    """True if ``src_path`` and ``ref_path`` are a document folder's ``src_name`` and
    ``ref_name`` (the same folder)."""
    return (os.path.basename(src_path) == src_name and os.path.basename(ref_path) == ref_name
            and os.path.dirname(os.path.abspath(src_path))
            == os.path.dirname(os.path.abspath(ref_path)))


def named_direction(name: str, src_lang: str, tgt_lang: str) -> Optional[bool]:
    """True if the folder name ``name`` names the direction ``src_lang`` -> ``tgt_lang``
    (``en-cs``, ``en_cs`` or ``encs`` between non-letters, any case: ``doc3.en-cs``,
    ``newstest2020-encs``), False if it names the other direction (``cs-en``), None if neither
    or both."""
    found = set()
    for first, second, forward in ((src_lang, tgt_lang, True), (tgt_lang, src_lang, False)):
        pattern = rf"(?<![a-z]){re.escape(first.lower())}[-_]?{re.escape(second.lower())}(?![a-z])"
        if re.search(pattern, name.lower()):
            found.add(forward)
    return found.pop() if len(found) == 1 else None


def folder_direction(folder: str, root: str, src_lang: str, tgt_lang: str) -> Optional[bool]:
    """:func:`named_direction` of the innermost folder name, from ``folder`` up to ``root``
    (included), that names one direction of the pair; None if none does."""
    path = os.path.abspath(folder)
    top = os.path.dirname(os.path.abspath(root))
    while path != top and os.path.dirname(path) != path:
        direction = named_direction(os.path.basename(path), src_lang, tgt_lang)
        if direction is not None:
            return direction
        path = os.path.dirname(path)
    return None


def _other_direction(folders: Sequence[str], root: str, langs: Optional[Tuple[str, str]]
                     ) -> List[str]:
    """The folders of ``folders`` whose names (up to ``root``) name the direction opposite to
    ``langs`` (source, target); [] without ``langs``."""
    if langs is None:
        return []
    return [f for f in folders if folder_direction(f, root, *langs) is False]


def find_document_folders(path: str, src_name: str = DOC_FOLDER_SRC,
                          ref_name: str = DOC_FOLDER_REF,
                          langs: Optional[Tuple[str, str]] = None) -> List[str]:
    """``path`` itself if it is a document folder (it holds ``src_name``), else its immediate
    subfolders that hold ``src_name``, in name order; the subfolders without it are logged (a
    test suite folder may hold other things). Every document folder must hold ``ref_name``.
    With ``langs`` (source, target language), a folder whose name, or the name of ``path``,
    names the other direction (``cs-en`` for ``("en", "cs")``, :func:`folder_direction`) is
    not read (counted in the log; a test suite may hold both directions); when no folder is
    left, one error line says so."""
    if not os.path.isdir(path):
        raise ReaderError(f"{path}: not a folder (expected a document folder holding "
                          f"{src_name} and {ref_name}, or a folder of such folders)")
    if os.path.isfile(os.path.join(path, src_name)):
        folders = [path]
    else:
        subfolders = sorted(e.name for e in os.scandir(path) if e.is_dir())
        folders = [os.path.join(path, f) for f in subfolders
                   if os.path.isfile(os.path.join(path, f, src_name))]
        others = [f for f in subfolders if not os.path.isfile(os.path.join(path, f, src_name))]
        if others:
            logger.info(f"{path}: {len(others)} subfolders without {src_name} not read (first: "
                        f"{', '.join(others[:LOGGED_LOCATIONS])})")
        if not folders:
            raise ReaderError(f"{path}: no {src_name} in it or in any of its subfolders "
                              f"(expected a document folder holding {src_name} and {ref_name}, "
                              f"or a folder of such folders)")
    other = _other_direction(folders, path, langs)
    if other:
        src_lang, tgt_lang = langs
        names = ", ".join(relative_names(other)[:LOGGED_LOCATIONS])
        if len(other) == len(folders):
            raise ReaderError(f"{path}: every document folder is named for {tgt_lang}-{src_lang} "
                              f"(first: {names}), the other direction of --src-lang {src_lang} "
                              f"--tgt-lang {tgt_lang}")
        logger.info(f"{path}: {len(other)} document folders of the other direction "
                    f"({tgt_lang}-{src_lang}) not read (first: {names})")
        folders = [f for f in folders if f not in other]
    for folder in folders:
        if not os.path.isfile(os.path.join(folder, ref_name)):
            raise ReaderError(f"{os.path.join(folder, ref_name)}: not found (a document folder "
                              f"holds {src_name} and {ref_name})")
    return folders


def read_doc_folders(folders: Sequence[str], docids: Optional[Sequence[str]] = None,
                     src_name: str = DOC_FOLDER_SRC, ref_name: str = DOC_FOLDER_REF,
                     skip_bad: bool = False, label: Optional[str] = None) -> List[Document]:
    """One document per folder, its sentences the aligned lines of ``folder/src_name`` and
    ``folder/ref_name``; docids ``docids`` (default: :func:`relative_names` of ``folders``).
    Lines empty on both sides are dropped, and folders left without a sentence (counted); a line
    empty on one side only is an error, or with ``skip_bad`` dropped and counted."""
    docids = relative_names(folders) if docids is None else docids
    if len(docids) != len(folders):
        raise HierError(f"{len(folders)} document folders but {len(docids)} docids")
    docs: List[Document] = []
    counts = collections.Counter()
    first_bad: List[str] = []
    for folder, docid in zip(folders, docids):
        doc = Document(docid)
        src_path, ref_path = os.path.join(folder, src_name), os.path.join(folder, ref_name)
        for where, src, tgt, problem in plain_pairs(src_path, ref_path, counts):
            if problem is not None:
                if not skip_bad:
                    raise ReaderError(f"{where}: {problem}")
                count_bad(where, problem, counts, first_bad)
            elif not src:
                counts["empty_line_pairs_skipped"] += 1
            else:
                doc.src.append(src)
                doc.tgt.append(tgt)
        if doc.src:
            docs.append(doc)
        else:
            counts["document_folders_without_sentences_skipped"] += 1
    label = label or (folders[0] if len(folders) == 1 else
                      f"{len(folders)} document folders ({folders[0]} ...)")
    if first_bad:
        logger.warning(f"{label}: skipped {counts['bad_pairs_skipped']} bad sentence pairs "
                       f"(first: {'; '.join(first_bad)})")
    log_counts(label, docs, counts)
    return docs
