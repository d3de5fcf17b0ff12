"""Documents -> chunks of at most ``--max-chunk-tokens`` BPE tokens, and back (paper 004 Sec. 4.2:
"we split documents into chunks of at most 512 tokens. We only split at segment boundaries to
maintain alignment between the source and target languages. We translate each chunk separately
and afterwards concatenate the translated chunks to compute the BLEU score for the entire
document").

Tokenisation (:func:`tokenizer`, chosen by :func:`choose_tokenizer` from the language and the
choice ``auto``, ``moses``, ``jieba`` or ``none``): sacremoses for the languages it has rules
for (punctuation normalisation, then tokenisation with aggressive hyphen splitting ``@-@``, no
entity escaping, as fairseq's WMT recipes run ``normalize-punctuation.perl`` and
``tokenizer.perl -a``); jieba for Chinese; ``auto`` gives every other Latin-script language
Moses' language-independent rules (no language's non-breaking prefixes), and every other
language too, with one warning saying so and how to choose otherwise (never a refusal);
``none`` splits at whitespace only. :func:`detokenizer` is the inverse for scoring (Moses
detokenisation; jieba: spaces between CJK characters removed; none: tokens joined by spaces).

Chunking (:func:`chunk_spans`, one definition used by the CLI and the tests): greedy over a
document's sentences in order; a sentence costs its BPE tokens + 1 (its BOS marker) on the source
side and its BPE tokens on the target side; a chunk takes sentences while BOTH sides stay within
the limit (EOS, appended by fairseq, is not counted: the models have 1024 positions). A sentence
that alone exceeds the limit on either side becomes its own chunk, and the side(s) over the limit
are truncated to it (the source keeps its BOS): counted and located in the log, never dropped;
references for scoring come from the untruncated raw files, so the cut costs BLEU visibly.

BPE (:func:`apply_bpe`): the joint codes of ``fastbpe learnbpe N FILES``, one merge a line,
``LEFT RIGHT COUNT`` separated by single spaces, UTF-8, every line ended by ``\n``, counts
non-increasing (learnbpe writes the merges in the order it picks them, most frequent pair first).
fastBPE itself checks nothing: random bytes crash the process, an empty file or a folder leaves
the text un-BPE'd, a cut file loses merges silently; :func:`check_codes` refuses each, naming the
file and line, before fastBPE reads the codes.

Files written for a split ``OUT`` (one line per chunk, in document order):

- ``OUT.{src}``: the chunk's source sentences, each opened by ``<s>`` (fairseq's BOS symbol, a
  normal entry of the joined dictionary), BPE'd: ``<s> Das ist ein Te@@ st . <s> Und ...``;
- ``OUT.{tgt}``: the chunk's target sentences joined by spaces, BPE'd, no markers;
- ``OUT.chunks`` (the chunk map, copied beside the binarized data): per chunk
  ``docid<TAB>chunk<TAB>first<TAB>last``: the document, the chunk's index in it (from 0), and its
  first and last sentence (0-based, inclusive) in the document.
"""

import functools
import logging
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from ..errors import HierError
from ..io import atomic_outputs

logger = logging.getLogger(__name__)

BOS = "<s>"
SPECIAL_SYMBOLS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq's Dictionary specials
BPE_CONTINUATION = "@@ "  # fastBPE's (and subword-nmt's) marker; fairseq's --remove-bpe default


# ----------------------------------------------------------------------------- tokenisation
#: the choices of ``fairseq-hier-doc-tokenize --tokenizer`` (and of the record's options)
TOKENIZERS = ("auto", "moses", "jieba", "none")
# the language code given to sacremoses for its language-independent rules ("undetermined")
UNDETERMINED = "und"
#: languages written in the Latin script (ISO 639-1, and a few ISO 639-3 codes without one):
#: Moses' language-independent rules suit them; those with sacremoses rules of their own get
#: those instead
LATIN_SCRIPT_LANGS = frozenset(
    "af an ay az bm br bs ca ceb co cs cy da de ee en eo es et eu ff fi fil fj fo fr fy ga gd gl "
    "gn gv ha haw hmn hr ht hu id ig io is it jv kg ki kl kr ku kw la lb lg li ln lt lu lv mg mh "
    "mi ms mt na nb nd ng nl nn no nr nv ny oc om pl pt qu rm rn ro rw sc se sg sk sl sm sn so sq "
    "ss st su sv sw tk tl tn to tr ts tw ty uz ve vi vo wa wo xh yo za zu".split())
# languages with rules in sacremoses' tokenizer but no non-breaking prefix list (the others
# are read from sacremoses: :func:`moses_languages`)
_MOSES_RULES_WITHOUT_PREFIXES = ("ja", "ko")


def base_language(lang: str) -> str:
    """The language part of a code, lowercased: ``pt_BR``, ``pt-br`` -> ``pt``; ``zh-Hans`` ->
    ``zh``."""
    return lang.replace("_", "-").split("-")[0].lower()


@functools.lru_cache(maxsize=None)
def moses_languages() -> FrozenSet[str]:
    """The languages sacremoses has rules for: a non-breaking prefix list, or (``ja``, ``ko``)
    rules in its tokenizer."""
    from sacremoses.corpus import NonbreakingPrefixes  # lazy: only tokenisation needs it

    return frozenset(NonbreakingPrefixes().available_langs.values()) | frozenset(
        _MOSES_RULES_WITHOUT_PREFIXES)


@dataclass(frozen=True)
class TokenizerChoice:
    """How one language is tokenised (and detokenised for scoring).

    ``kind``: ``moses``, ``jieba`` or ``none``; ``rules``: for Moses, the sacremoses language
    whose rules apply, None for its language-independent rules; ``fallback``: ``auto`` found
    neither rules nor the Latin script for ``lang`` (:meth:`warning` says so)."""

    lang: str
    kind: str
    rules: Optional[str] = None
    fallback: bool = False

    def describe(self) -> str:
        """The tokenizer in words, for logs."""
        if self.kind == "jieba":
            return "jieba word segmentation"
        if self.kind == "none":
            return "none: split at whitespace only, the text kept as is"
        rules = (f"{self.rules} rules" if self.rules is not None
                 else "language-independent rules")
        return f"sacremoses Moses punctuation normalisation and tokenisation ({rules})"

    def describe_detokenizer(self) -> str:
        """Its inverse in words, for the scoring output."""
        if self.kind == "jieba":
            return "spaces between CJK characters removed"
        if self.kind == "none":
            return "none: tokenizer none, tokens joined by single spaces"
        if self.rules is None:
            return (f"sacremoses MosesDetokenizer, language-independent rules (none for "
                    f"{self.lang!r})")
        return f"sacremoses MosesDetokenizer, lang {self.rules}"

    def warning(self) -> str:
        """The one log line of the fallback."""
        return (f"no tokenizer rules for language {self.lang!r} (sacremoses has none and it is "
                f"not among the Latin-script languages): Moses' language-independent rules are "
                f"used; choose otherwise with --tokenizer none (text already tokenised, or a "
                f"script that Moses splits apart: Thai, Hangul), --tokenizer jieba "
                f"(Chinese characters) or --tokenizer moses (this choice, without this warning)")


def choose_tokenizer(lang: str, choice: str = "auto") -> TokenizerChoice:
    """The tokenizer of ``lang`` for ``choice`` (:data:`TOKENIZERS`). ``auto``: jieba for
    Chinese (``zh``), Moses with the language's rules where sacremoses has them, Moses with its
    language-independent rules for the other Latin-script languages and, stated by
    :meth:`TokenizerChoice.warning`, for every other language. ``moses``: Moses with the
    language's rules where sacremoses has them, else its language-independent rules."""
    if choice not in TOKENIZERS:
        raise HierError(f"unknown tokenizer {choice!r} for language {lang!r} (expected one of "
                        f"{', '.join(TOKENIZERS)})")
    base = base_language(lang)
    if choice in ("jieba", "none"):
        return TokenizerChoice(lang, choice)
    if choice == "auto" and base == "zh":
        return TokenizerChoice(lang, "jieba")
    rules = base if base in moses_languages() else None
    fallback = choice == "auto" and rules is None and base not in LATIN_SCRIPT_LANGS
    return TokenizerChoice(lang, "moses", rules, fallback)


def tokenizer(lang: str, choice: str = "auto") -> Callable[[str], str]:
    """A function raw sentence -> space-separated tokens for ``lang`` (:func:`choose_tokenizer`;
    the caller logs the fallback's warning)."""
    chosen = choose_tokenizer(lang, choice)
    if chosen.kind == "none":
        return lambda s: " ".join(s.split())
    if chosen.kind == "jieba":
        import warnings

        with warnings.catch_warnings():  # jieba 0.42.1 imports the deprecated pkg_resources
            warnings.simplefilter("ignore", UserWarning)
            import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return lambda s: " ".join(w for w in jieba.cut(s.strip()) if w.strip())
    from sacremoses import MosesPunctNormalizer, MosesTokenizer  # lazy: a tokenisation step

    lang_rules = chosen.rules or UNDETERMINED
    normalizer, moses = MosesPunctNormalizer(lang=lang_rules), MosesTokenizer(lang=lang_rules)
    if chosen.rules is None:  # sacremoses falls back to English prefixes: no language's list
        moses.NONBREAKING_PREFIXES, moses.NUMERIC_ONLY_PREFIXES = [], []
    return lambda s: moses.tokenize(normalizer.normalize(s.strip()), escape=False,
                                    aggressive_dash_splits=True, return_str=True)


def detokenizer(lang: str, choice: str = "auto") -> Callable[[str], str]:
    """Tokenised text (BPE removed) -> plain text, the inverse of :func:`tokenizer` for the
    same ``choice``: Moses' detokeniser; jieba: the spaces between CJK characters removed;
    ``none``: the tokens joined by single spaces."""
    chosen = choose_tokenizer(lang, choice)
    if chosen.kind == "none":
        return lambda s: " ".join(s.split())
    if chosen.kind == "jieba":
        cjk = re.compile(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])")
        return lambda s: cjk.sub("", s.strip())
    from sacremoses import MosesDetokenizer  # lazy: a scoring step

    moses = MosesDetokenizer(lang=chosen.rules or UNDETERMINED)
    return lambda s: moses.detokenize(s.split())


def remove_bpe(text: str) -> str:
    """Undo fastBPE: ``Te@@ st`` -> ``Test`` (also a trailing ``@@``)."""
    return (text + " ").replace(BPE_CONTINUATION, "").rstrip()


# ----------------------------------------------------------------------------- fastBPE
CODES_LINE = re.compile(r"([^ \n]+) ([^ \n]+) ([0-9]+)")
LEARN_HINT = "learn them with: fastbpe learnbpe 40000 train.tok.SRC train.tok.TGT > CODES"
_checked_codes: Dict[str, Tuple[int, int]] = {}  # path -> (size, mtime) of codes found good


def check_codes(path: str) -> None:
    """Raise :class:`HierError` naming ``path`` (and the line) unless it holds fastBPE codes as
    ``fastbpe learnbpe`` writes them (module doc): a folder, an empty file, a line that is not
    ``LEFT RIGHT COUNT`` or not UTF-8, a count above the line before, a last line without its
    line end (a cut file)."""
    if os.path.isdir(path):
        raise HierError(f"{path}: is a folder, not fastBPE codes ({LEARN_HINT})")
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise HierError(f"{path} not found ({LEARN_HINT})") from None
    except OSError as e:
        raise HierError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        stamp = os.fstat(f.fileno())
        if _checked_codes.get(path) == (stamp.st_size, stamp.st_mtime_ns):
            return
        lineno, previous = 0, None
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.rstrip(b"\n").decode("utf-8")
            except UnicodeDecodeError as e:
                raise HierError(f"{path}:{lineno}: not UTF-8 ({e.reason} at byte {e.start} of "
                                f"the line): not fastBPE codes") from None
            match = CODES_LINE.fullmatch(line)
            if match is None:
                raise HierError(f"{path}:{lineno}: not a fastBPE codes line (expected 'LEFT RIGHT "
                                f"COUNT', single spaces), got {line[:60]!r}")
            if not raw.endswith(b"\n"):
                raise HierError(f"{path}:{lineno}: the last line has no line end: the codes file "
                                f"is cut (fastbpe learnbpe ends every line)")
            count = int(match.group(3))
            if previous is not None and count > previous:
                raise HierError(f"{path}:{lineno}: count {count} is above the line before's "
                                f"{previous}: fastbpe learnbpe writes its merges by decreasing "
                                f"count (are two codes files joined?)")
            previous = count
    if lineno == 0:
        raise HierError(f"{path}: empty file, not fastBPE codes ({LEARN_HINT})")
    _checked_codes[path] = (stamp.st_size, stamp.st_mtime_ns)


def apply_bpe(codes: str, sentences: List[str]) -> List[str]:
    """fastBPE's segmentation of whitespace-tokenised sentences with the codes ``codes``
    (checked first: :func:`check_codes`)."""
    check_codes(codes)
    import fastBPE  # lazy: a compiled extension only the BPE steps need

    return fastBPE.fastBPE(codes).apply(sentences)


# ----------------------------------------------------------------------------- chunking
def chunk_spans(src_lengths: Sequence[int], tgt_lengths: Sequence[int],
                limit: int) -> Tuple[List[Tuple[int, int]], List[int]]:
    """Greedy chunking of one document at sentence boundaries.

    Args:
        src_lengths, tgt_lengths: BPE tokens of every sentence (source without its BOS).
        limit: the most tokens of a chunk on either side (source BOS markers included).
    Returns:
        ``spans``: ``(first, last)`` sentence indices (inclusive) of each chunk, covering
        ``0..n-1`` in order, each sentence once; ``overlong``: the sentences that alone exceed the
        limit on a side (each is its own chunk, to be truncated).
    """
    if limit < 2:
        raise HierError(f"--max-chunk-tokens must be at least 2 (a BOS and a token), got {limit}")
    spans: List[Tuple[int, int]] = []
    overlong: List[int] = []
    first, src_used, tgt_used = 0, 0, 0
    for i, (s, t) in enumerate(zip(src_lengths, tgt_lengths)):
        s += 1  # its BOS marker
        if i > first and (src_used + s > limit or tgt_used + t > limit):
            spans.append((first, i - 1))
            first, src_used, tgt_used = i, 0, 0
        if s > limit or t > limit:
            overlong.append(i)
        src_used, tgt_used = src_used + s, tgt_used + t
    if len(src_lengths):
        spans.append((first, len(src_lengths) - 1))
    # an over-long sentence closes the chunk before it (it cannot fit) and the one after it
    # (nothing fits after it): it is always alone
    return spans, overlong


@dataclass
class ChunkRow:
    """One line of a chunk map."""
    docid: str
    chunk: int
    first: int
    last: int

    def line(self) -> str:
        return f"{self.docid}\t{self.chunk}\t{self.first}\t{self.last}\n"


def read_chunk_map(path: str, expected: int = None) -> List[ChunkRow]:
    """Read and check a chunk map: four tab-separated fields a line; per document (contiguous
    lines) chunk indices 0, 1, ... and sentence spans that tile 0..n-1. ValueError naming the file
    and line otherwise, or if it has not ``expected`` lines (the binarized examples)."""
    if not os.path.exists(path):
        raise HierError(f"{path} not found (the chunk map fairseq-hier-doc-chunk writes; copy it "
                        f"next to the binarized data)")
    rows: List[ChunkRow] = []
    finished = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4 or not all(x.isdigit() for x in fields[1:]) or not fields[0]:
                raise HierError(f"{path}:{n}: expected docid<TAB>chunk<TAB>first<TAB>last, got "
                                f"{line.rstrip()!r}")
            row = ChunkRow(fields[0], *map(int, fields[1:]))
            prev = rows[-1] if rows else None
            if prev is not None and prev.docid != row.docid:
                finished.add(prev.docid)
            if row.docid in finished:
                raise HierError(f"{path}:{n}: document {row.docid!r} continues after another "
                                f"document began (its chunks must be contiguous)")
            same = prev is not None and prev.docid == row.docid
            want_chunk, want_first = (prev.chunk + 1, prev.last + 1) if same else (0, 0)
            if row.chunk != want_chunk or row.first != want_first or row.last < row.first:
                raise HierError(f"{path}:{n}: document {row.docid!r} chunk {row.chunk} covers "
                                f"sentences {row.first}-{row.last}; expected chunk {want_chunk} "
                                f"starting at sentence {want_first}")
            rows.append(row)
    if expected is not None and len(rows) != expected:
        raise HierError(f"{path} has {len(rows)} chunks, the binarized split has {expected} "
                        f"examples")
    return rows


def documents_of(rows: Sequence[ChunkRow]) -> List[Tuple[str, List[int], int]]:
    """Per document in map order: ``(docid, indices of its chunks, its number of sentences)``."""
    docs: List[Tuple[str, List[int], int]] = []
    for i, row in enumerate(rows):
        if not docs or docs[-1][0] != row.docid:
            docs.append((row.docid, [], 0))
        docid, chunks, _ = docs[-1]
        chunks.append(i)
        docs[-1] = (docid, chunks, row.last + 1)
    return docs


def reassemble(rows: Sequence[ChunkRow], chunk_texts: Sequence[str]) -> List[Tuple[str, str]]:
    """Chunk outputs (one per map row, in map order) -> ``(docid, text)`` per document, in the
    original document order, the chunks' texts joined by a space (the paper's concatenation).
    The chunk <-> document alignment comes from the map alone, so a chunk's hypothesis may hold
    more or fewer sentences than its source span."""
    if len(chunk_texts) != len(rows):
        raise HierError(f"{len(chunk_texts)} chunk outputs for {len(rows)} chunks in the map")
    return [(docid, " ".join(t for t in (chunk_texts[i].strip() for i in chunks) if t))
            for docid, chunks, _ in documents_of(rows)]


def split_source_chunk(line: str) -> List[str]:
    """A source chunk line -> its sentences (the text after each ``<s>``)."""
    parts = f" {line.strip()} ".split(f" {BOS} ")
    if parts[0].strip():
        raise HierError(f"a source chunk must open with {BOS}: {line[:60]!r}")
    return [p.strip() for p in parts[1:]]


def write_chunks(out: str, src: str, tgt: str, chunks: Iterable[Tuple[ChunkRow, List[str],
                                                                       List[str]]],
                 inputs: Iterable[str] = ()) -> int:
    """Write ``OUT.{src,tgt,chunks}`` from ``(row, source sentences, target sentences)`` (BPE'd
    token strings, already cut to the limit), together once complete; none may be one of
    ``inputs`` (:func:`fairseq_hier.io.atomic_outputs`)."""
    n = 0
    with atomic_outputs((f"{out}.{src}", f"{out}.{tgt}", f"{out}.chunks"),
                        inputs) as (fs, ft, fm):
        for row, source, target in chunks:
            fs.write(" ".join(f"{BOS} {s}" for s in source) + "\n")
            ft.write(" ".join(target) + "\n")
            fm.write(row.line())
            n += 1
    return n
