"""Dependency parses of a split, one code per binarized source token, for ParsingSum's
linguistic-guided attention (003, Ma et al.): a word attends to its syntactic head.

Files. Two commands write them (``fairseq-hier-parse``, :mod:`fairseq_hier.cli.parse`, and
``fairseq-hier-deps``, :mod:`fairseq_hier.cli.dependencies`):

- ``PARSED/SPLIT.conllu``: the parse of the untokenised source ``RAW/SPLIT.src``. One example
  per input line, opened by ``# newdoc id = N`` (N = 1-based line); ``# newpar`` before each
  non-empty segment (title, paragraphs: text between separators, parsed separately, so that no
  sentence crosses ``<P>``); per sentence ``# sent_id = N-K``, ``# text = ...``, then one line
  per token with the 10 columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC`` (HEAD 0
  for the root) and a blank line. Any other parser's CoNLL-U is read as well
  (:func:`read_conllu`): ``# newdoc`` starts an example; a multiword-token range line (``3-4``)
  gives the surface token, and its syntactic words all map to it; empty nodes (``5.1``) are
  skipped. Only the columns ID, FORM and HEAD are read.
- ``PARSED/SPLIT.tok``: the same examples tokenised: the parse's tokens joined by single spaces,
  segments re-joined by `` <P> `` as in the input (a line starting with ``<P>``, the empty title
  slot of a multi-document example, stays so). The subword step turns it into ``BPE/SPLIT.src``.
- ``DATA-BIN/SPLIT.parse.spacy.{bin,idx}``: fairseq's ``MMapIndexedDataset`` (dtype int16),
  one array per example with ONE CODE PER BINARIZED SOURCE TOKEN: the line's whitespace tokens
  of ``BPE/SPLIT.src`` (pieces and separators), then one for the EOS that fairseq-preprocess
  appends. Read by :class:`DependencyParses`, written by :class:`DependencyWriter`.

Reading CoNLL-U. The ``conllu`` package parses every comment (``parse_comment_line``), ID
(``parse_id_value``: ``N``, ``N-M``, ``N.M``) and HEAD (``parse_int_value``); :func:`read_conllu`
follows lines, sentences and examples itself, for what ``conllu``'s sentence reader
(``parse_incr``) cannot give: (1) an example without a sentence (an empty source line, written as
a bare ``# newdoc id = N``, as in the tests' ``fairseq-hier-parse`` fixtures with an empty line):
``parse_incr`` keeps a sentence's comments in a dict, so of two ``# newdoc`` lines in a row it
returns the second only, and the empty example is lost; (2) file and line in every
error; (3) exactly 10 tab-separated columns: ``parse_line`` also splits at runs of two spaces and
accepts lines with fewer columns, which would shift or drop HEAD without an error.

Codes (int16)::

    NOT_A_WORD   = -32768   a separator (<P>) or the EOS
    CONTINUATION =  32767   a piece that is not the first piece of its word
    d in [-32766, 32766]    the first piece of word w, whose syntactic head is word w + d of the
                            same example (words counted across its sentences); 0: w is a root

:func:`decode` turns an example's codes into its word index and head word index per token.

Why int16 relative offsets: the source itself is binarized with 2 bytes per token (uint16 for a
dictionary under 65,500 symbols), so the parse doubles the data on disk at worst, instead of
quadrupling it with absolute int32 heads; a head is almost always within a few words of its
dependent (sentences are short; a head never leaves its sentence), so the offset fits 15 bits for
any example under 32,767 words, and a longer arc is an error naming the example.

Words and pieces. The words of a source line are rebuilt from its pieces (:func:`source_words`):

- ``sentencepiece``: a piece starting with U+2581 starts a word; a bare U+2581 piece belongs to
  the next piece's word (sentencepiece splits ``▁`` off a word whose first character does not
  merge with it); byte-fallback pieces (``<0xE2>``) are decoded;
- ``bpe`` (subword-nmt, fastBPE): a piece ending with ``@@`` continues into the next piece;
- ``none``: each whitespace token is a word.

Separators are never words and end the word in progress. The words must equal the parse's
tokens one by one (compared as they are, or after NFKC, sentencepiece's default normalisation);
the first mismatch is an error naming the example, the word and both tokens.
"""

import os
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, TextIO, Tuple

import numpy as np

from ..io import StagedWriter, iter_lines
from ..errors import HierError

NOT_A_WORD = -32768
CONTINUATION = 32767
MAX_OFFSET = 32766
SUBWORD_SCHEMES = ("sentencepiece", "bpe", "none")
SPM_SPACE = "\u2581"
COMMAND = "fairseq-hier-deps"
_BYTE_PIECE = re.compile(r"(?:<0x[0-9A-Fa-f]{2}>)+")


# ------------------------------------------------------------------------- reading CoNLL-U
@dataclass
class ParsedExample:
    """One example of a CoNLL-U file: ``tokens[i]`` its i-th surface token, ``heads[i]`` the
    0-based index (within the example) of that token's head token, -1 for a root; ``line`` the
    1-based line of its ``# newdoc``."""

    tokens: List[str] = field(default_factory=list)
    heads: List[int] = field(default_factory=list)
    line: int = 0


class _Sentence:
    """The token lines of one CoNLL-U sentence while it is read (IDs and HEADs parsed by
    ``conllu``'s field parsers)."""

    def __init__(self):
        self.forms: List[str] = []        # surface tokens
        self.word_token: List[int] = []   # syntactic word k + 1 -> its token
        self.word_head: List[int] = []    # syntactic word k + 1 -> HEAD (0: root)
        self.word_line: List[int] = []    # syntactic word k + 1 -> line in the file
        self.range_end = 0                # last word ID of the open multiword token

    def add(self, path: str, lineno: int, line: str) -> None:
        # conllu: read when a CoNLL-U file is (the tasks load this module without it)
        from conllu.exceptions import ParseException
        from conllu.parser import parse_id_value, parse_int_value

        where = f"{path}:{lineno}"
        cols = line.split("\t")
        if len(cols) != 10:
            raise HierError(f"{where}: expected 10 tab-separated columns (ID FORM LEMMA UPOS "
                            f"XPOS FEATS HEAD DEPREL DEPS MISC), got {len(cols)}")
        expected = len(self.word_head) + 1
        wid = cols[0]
        try:
            tid = parse_id_value(wid)
        except ParseException:
            tid = None
        if tid is None:
            raise HierError(f"{where}: ID '{wid}' where word {expected} was expected (IDs are "
                            f"N, N-M for a multiword token or N.M for an empty node)")
        if isinstance(tid, tuple) and tid[1] == ".":
            return  # empty node (enhanced dependencies): no surface token, no basic arc
        if isinstance(tid, tuple):  # multiword token: the surface form of words first..last
            first, _, last = tid
            if first != expected or self.range_end >= expected:
                raise HierError(f"{where}: multiword token ID '{wid}' where a range starting "
                                f"at word {expected} was expected")
            self.forms.append(cols[1])
            self.range_end = last
            return
        if tid != expected:
            raise HierError(f"{where}: ID '{wid}' where word {expected} was expected (IDs are "
                            f"N, N-M for a multiword token or N.M for an empty node)")
        try:
            head = parse_int_value(cols[6])
        except ParseException:
            head = None
        if head is None:
            raise HierError(f"{where}: HEAD '{cols[6]}' is not an integer")
        if head == expected:
            raise HierError(f"{where}: HEAD {head} is the word itself")
        if expected > self.range_end:  # an ordinary word is its own surface token
            self.forms.append(cols[1])
        self.word_token.append(len(self.forms) - 1)
        self.word_head.append(head)
        self.word_line.append(lineno)

    def finish(self, path: str, lineno: int, offset: int) -> Tuple[List[str], List[int]]:
        """(tokens, heads of the tokens as indices within the example, -1 for a root)."""
        n = len(self.word_head)
        if self.range_end > n:
            raise HierError(f"{path}:{lineno}: the sentence ends at word {n} inside the "
                            f"multiword token ending at word {self.range_end}")
        for head, line in zip(self.word_head, self.word_line):
            if not 0 <= head <= n:
                raise HierError(f"{path}:{line}: HEAD {head} is outside the sentence (its "
                                f"words are 1..{n}, 0 for the root)")
        # a token's arc is that of its syntactic word whose head lies outside the token (the
        # root if one of them is the root): the words of "du" (de + le) point at the same noun
        heads: List[Optional[int]] = [None] * len(self.forms)
        for token, head in zip(self.word_token, self.word_head):
            if head == 0:
                heads[token] = -1
            elif self.word_token[head - 1] != token and heads[token] is None:
                heads[token] = offset + self.word_token[head - 1]
        # a token whose words only point at one another holds no tree's root: a cycle
        for token, head in enumerate(heads):
            if head is None:
                raise HierError(f"{path}:{self.word_line[self.word_token.index(token)]}: the "
                                f"token '{self.forms[token]}' has no head outside itself")
        return self.forms, heads


def _conllu_lines(path: str) -> Iterator[Tuple[int, str]]:
    """(1-based line number, text without line end) of a UTF-8 file; lines end at \\n only."""
    for lineno, line in iter_lines(path):
        yield lineno, line.rstrip("\n").rstrip("\r")


def _starts_example(line: str) -> bool:
    """A ``# newdoc`` comment (``# newdoc`` or ``# newdoc id = ...``), read by ``conllu``."""
    from conllu.parser import parse_comment_line  # conllu: read when a CoNLL-U file is

    return any(key.split()[0] == "newdoc" for key, _ in parse_comment_line(line) if key)


def read_conllu(path: str) -> Iterator[ParsedExample]:
    """The examples of a CoNLL-U file, in order (module docstring). A ``# newdoc`` comment starts
    an example (one without sentence is an empty example). Each token and comment line is parsed
    by the ``conllu`` package; lines, sentences and examples are followed here, so that errors
    name the line. Raises ValueError naming the file and line for a sentence before the first
    ``# newdoc``, a line without 10 tab-separated columns, a malformed ID, a non-integer HEAD or
    a HEAD outside its sentence."""
    example: Optional[ParsedExample] = None
    sentence: Optional[_Sentence] = None
    lineno = 0
    for lineno, line in _conllu_lines(path):
        if not line.strip():
            if sentence is not None:
                tokens, heads = sentence.finish(path, lineno, len(example.tokens))
                example.tokens += tokens
                example.heads += heads
                sentence = None
            continue
        if line.startswith("#"):
            if sentence is not None:
                raise HierError(f"{path}:{lineno}: comment line inside a sentence (a blank "
                                f"line must end the sentence before it)")
            if _starts_example(line):
                if example is not None:
                    yield example
                example = ParsedExample(line=lineno)
            continue
        if example is None:
            raise HierError(f"{path}:{lineno}: a sentence before the first '# newdoc' line "
                            f"(each example must start with '# newdoc')")
        if sentence is None:
            sentence = _Sentence()
        sentence.add(path, lineno, line)
    if sentence is not None:  # no blank line after the last sentence
        tokens, heads = sentence.finish(path, lineno, len(example.tokens))
        example.tokens += tokens
        example.heads += heads
    if example is not None:
        yield example


# ------------------------------------------------------------- writing CoNLL-U from spaCy
@dataclass
class ParseCounts:
    """What ``fairseq-hier-parse`` has written: input lines (examples), segments (title and
    paragraphs, empty ones included), sentences and tokens (whitespace tokens dropped), and the
    tokens whose spaCy head was a dropped whitespace token (or outside their sentence), written
    with HEAD 0."""

    lines: int = 0
    segments: int = 0
    sentences: int = 0
    tokens: int = 0
    space_heads: int = 0


def conllu_sentences(doc, example_id: int, first_sentence: int,
                     counts: ParseCounts) -> Tuple[List[str], List[str]]:
    """The CoNLL-U blocks of a parsed segment's sentences (``# sent_id = EXAMPLE-K`` with K from
    ``first_sentence``, ``# text``, the token lines, a blank line) and its tokens.

    Whitespace tokens (``token.is_space``) are dropped and the others renumbered; a token whose
    head was dropped gets HEAD 0 (counted in ``counts.space_heads``); spaCy's root (its own head)
    gets HEAD 0. A sentence of whitespace only is not written. ``counts`` is updated."""
    blocks, kept = [], []
    k = first_sentence
    for sent in doc.sents:
        ids = {t.i: n for n, t in enumerate((t for t in sent if not t.is_space), 1)}
        if not ids:
            continue
        lines = [f"# sent_id = {example_id}-{k}", f"# text = {' '.join(sent.text.split())}"]
        for t in sent:
            if t.is_space:
                continue
            if t.head.i == t.i:
                head = 0
            elif t.head.i in ids:
                head = ids[t.head.i]
            else:  # its head is a whitespace token (or, with a custom segmenter, elsewhere)
                head = 0
                counts.space_heads += 1
            nxt = t.i + 1
            space_after = t.whitespace_ or nxt == len(doc) or doc[nxt].is_space
            lines.append("\t".join((
                str(ids[t.i]), t.text, t.lemma_ or "_", t.pos_ or "_", t.tag_ or "_",
                str(t.morph) or "_", str(head), t.dep_ or "_", "_",
                "_" if space_after else "SpaceAfter=No")))
            kept.append(t.text)
        blocks.append("\n".join(lines) + "\n\n")
        k += 1
    counts.sentences += len(blocks)
    counts.tokens += len(kept)
    return blocks, kept


def write_example(conllu: TextIO, tok: Optional[TextIO], example_id: int, docs,
                  separator: str, counts: ParseCounts) -> None:
    """Write one example (one input line) parsed as ``docs``, one spaCy Doc per segment: its
    CoNLL-U (``# newdoc id``, ``# newpar`` per non-empty segment, the sentences) and its
    tokenised line (segments joined by the separator, single spaces)."""
    conllu.write(f"# newdoc id = {example_id}\n")
    words: List[str] = []
    k = 1
    for j, doc in enumerate(docs):
        if j:
            words.append(separator)
        blocks, kept = conllu_sentences(doc, example_id, k, counts)
        if blocks:
            conllu.write("# newpar\n")
            conllu.write("".join(blocks))
        k += len(blocks)
        words += kept
    if tok is not None:
        tok.write(" ".join(words) + "\n")
    counts.lines += 1
    counts.segments += len(docs)


# ------------------------------------------------------------------ words rebuilt from pieces
def _decode_byte_pieces(text: str) -> str:
    """sentencepiece's byte-fallback pieces (``<0xE2><0x80><0x99>``) -> the characters."""
    return _BYTE_PIECE.sub(
        lambda m: bytes.fromhex(m.group(0).replace("<0x", "").replace(">", "")).decode(
            "utf-8", errors="replace"), text)


def source_words(pieces: Sequence[str], subword: str,
                 separator: str = "<P>") -> Tuple[List[str], np.ndarray]:
    """``(words, piece_word)``: the words of a source line rebuilt from its whitespace tokens
    (module docstring), and per token the index of its word (int64, -1 for a separator)."""
    if subword not in SUBWORD_SCHEMES:
        raise HierError(f"unknown subword scheme '{subword}' (expected one of "
                        f"{', '.join(SUBWORD_SCHEMES)})")
    words: List[str] = []
    piece_word = np.full(len(pieces), -1, dtype=np.int64)
    parts: List[str] = []  # pieces of the open word
    joined = False         # the next piece continues the open word

    def close():
        nonlocal parts
        if parts:
            text = "".join(parts)
            if subword == "sentencepiece":
                text = text.replace(SPM_SPACE, "")
                if "<0x" in text:
                    text = _decode_byte_pieces(text)
            words.append(text)
            parts = []

    for i, piece in enumerate(pieces):
        if piece == separator:
            close()
            joined = False
            continue
        if subword == "none" or not parts:
            starts = True
        elif subword == "sentencepiece":
            starts = piece.startswith(SPM_SPACE) and not joined
        else:
            starts = not joined
        if starts:
            close()
        if subword == "bpe":
            joined = piece.endswith("@@")
            piece = piece[:-2] if joined else piece
        elif subword == "sentencepiece":
            joined = piece == SPM_SPACE
        parts.append(piece)
        piece_word[i] = len(words)
    close()
    return words, piece_word


def same_token(parsed: str, source: str) -> bool:
    """A parse token and a rebuilt source word are the same token: equal, or equal after NFKC
    (sentencepiece's default normalisation rewrites e.g. full-width forms and ligatures)."""
    return parsed == source or \
        unicodedata.normalize("NFKC", parsed) == unicodedata.normalize("NFKC", source)


def match_words(parsed: Sequence[str], words: Sequence[str], separator: str = "<P>"
                ) -> Optional[str]:
    """``None`` if the parse's tokens are the source's words one by one, else what differs
    first: ``"token 7 is 'don't' in the parse, 'don' in the source"`` (1-based)."""
    for i, (a, b) in enumerate(zip(parsed, words), 1):
        if not same_token(a, b):
            note = (f" (the separator '{separator}' is never a word: it must not be a token "
                    f"of the parse)" if a == separator else "")
            return f"token {i} is '{a}' in the parse, '{b}' in the source{note}"
    if len(parsed) > len(words):
        i = len(words)
        return (f"token {i + 1} is '{parsed[i]}' in the parse, missing in the source "
                f"({len(words)} words, {len(parsed)} tokens in the parse)")
    if len(words) > len(parsed):
        i = len(parsed)
        return (f"token {i + 1} is '{words[i]}' in the source, missing in the parse "
                f"({len(parsed)} tokens, {len(words)} words in the source)")
    return None


# --------------------------------------------------------------------------------- the codes
def project_heads(piece_word: np.ndarray, heads: Sequence[int], example: int = 0) -> np.ndarray:
    """The int16 codes of an example (module docstring): ``piece_word`` from
    :func:`source_words` (per source token its word, -1 for a separator), ``heads`` per word its
    head word (-1 for a root). One code per token, plus NOT_A_WORD for the EOS."""
    piece_word = np.asarray(piece_word, dtype=np.int64)
    heads = np.asarray(heads, dtype=np.int64)
    n = len(piece_word)
    words = int(piece_word.max()) + 1 if n else 0
    if len(heads) != words:
        raise HierError(f"example {example}: {len(heads)} heads for {words} words")
    offsets = np.where(heads >= 0, heads - np.arange(words), 0)  # 0: root
    too_far = np.flatnonzero(np.abs(offsets) > MAX_OFFSET)
    if len(too_far):
        w = int(too_far[0])
        raise HierError(f"example {example}: word {w + 1} is {int(offsets[w])} words from its "
                        f"head, beyond the int16 codes' +-{MAX_OFFSET}")
    codes = np.full(n + 1, NOT_A_WORD, dtype=np.int16)
    is_word = piece_word >= 0
    previous = np.concatenate([[-1], piece_word[:-1]])
    first = is_word & (piece_word != previous)
    codes[:n][is_word & ~first] = CONTINUATION
    codes[:n][first] = offsets[piece_word[first]]
    return codes


def decode(codes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(word, head)``, int64 ``(M,)`` each, from an example's ``(M,)`` codes: per token its
    word index in the example (0-based, -1 for NOT_A_WORD) and its word's head word index (-1
    for a root and for NOT_A_WORD). Continuation pieces share their word's index and head."""
    codes = np.asarray(codes)
    valid = codes != NOT_A_WORD
    first = valid & (codes != CONTINUATION)
    word = np.where(valid, np.cumsum(first) - 1, -1)  # (M,)
    if np.any(valid & (word < 0)):
        raise HierError("a CONTINUATION code before the first word of the example")
    offsets = codes[first].astype(np.int64)  # (W,)
    word_head = np.where(offsets == 0, -1, np.arange(len(offsets)) + offsets)  # (W,)
    if np.any(word_head >= len(offsets)) or np.any(word_head < -1):
        raise HierError(f"a head outside the example's {len(offsets)} words")
    head = np.where(valid, word_head[np.maximum(word, 0)] if len(offsets) else -1, -1)
    return word, head


# --------------------------------------------------------------------------- the .bin/.idx
def parse_files(prefix: str) -> Tuple[str, str]:
    return f"{prefix}.bin", f"{prefix}.idx"


class DependencyWriter(StagedWriter):
    """Streams the codes of a split to ``PREFIX.{bin,idx}`` through fairseq's
    ``MMapIndexedDatasetBuilder`` (dtype int16). The two files are written under temporary names
    and moved into place by ``close()`` (:class:`fairseq_hier.io.StagedWriter`), so an
    interrupted run leaves nothing that passes for finished output; as a context manager, an
    exception removes them."""

    def __init__(self, prefix: str, inputs=()):
        from fairseq.data.indexed_dataset import MMapIndexedDatasetBuilder

        self.prefix = prefix
        self.files = parse_files(prefix)
        super().__init__(self.files, inputs)
        self.examples = 0
        with self.removed_on_failure():
            self._builder = MMapIndexedDatasetBuilder(self.staged[self.files[0]], dtype=np.int16)

    def add(self, codes: np.ndarray) -> None:
        """Append the next example's codes (int16, one per binarized source token)."""
        import torch

        self._builder.add_item(torch.from_numpy(np.ascontiguousarray(codes, dtype=np.int16)))
        self.examples += 1

    def finish(self) -> None:
        self._builder.finalize(self.staged[self.files[1]])

    def open_files(self):
        return [self._builder._data_file] if hasattr(self, "_builder") else []


class DependencyParses:
    """The codes of one split (``PREFIX.{bin,idx}``, module docstring), memory-mapped through
    fairseq's ``MMapIndexedDataset``. ``sizes[i]``: the number of codes of example ``i`` (line
    ``i + 1``); ``codes(i)``: its int16 codes. Raises HierError (naming the command that
    writes them) when a file is missing, ValueError when they do not hold int16 codes."""

    def __init__(self, prefix: str):
        from fairseq.data.indexed_dataset import MMapIndexedDataset

        self.prefix = prefix
        missing = [p for p in parse_files(prefix) if not os.path.exists(p)]
        if missing:
            raise HierError(
                f"no dependency parse at {prefix} ({', '.join(missing)} missing): write it with "
                f"{COMMAND} --conllu PARSED/SPLIT.conllu --source BPE/SPLIT.src --subword ... "
                f"--output-prefix {prefix}")
        self._data = MMapIndexedDataset(prefix)
        if self._data._index.dtype != np.int16:
            raise HierError(f"{prefix}.idx holds {np.dtype(self._data._index.dtype).name} "
                            f"arrays, not the int16 codes that {COMMAND} writes")

    def __len__(self) -> int:
        return len(self._data)

    def __getstate__(self):
        return {"prefix": self.prefix}  # a spawned data loader worker re-opens the files

    def __setstate__(self, state):
        self.__init__(state["prefix"])

    @property
    def sizes(self) -> np.ndarray:
        return self._data.sizes

    def codes(self, i: int) -> np.ndarray:
        """Example ``i``'s codes: int16 ``(sizes[i],)``, a read-only view of the mapped file."""
        pointer, size = self._data._index[i]
        return np.frombuffer(self._data._bin_buffer, dtype=np.int16, count=size, offset=pointer)

    def check(self, source_sizes: np.ndarray, source_path: str) -> None:
        """Raise ValueError (one message) unless every example has one code per token of the
        binarized source ``source_path`` (``source_sizes``: its dataset sizes, EOS included)."""
        source_sizes = np.asarray(source_sizes, dtype=np.int64)
        rerun = f"rerun {COMMAND} on the source you binarized"
        if len(source_sizes) != len(self):
            raise HierError(f"dependency parse does not match the source: {self.prefix}.idx "
                            f"has {len(self)} examples, {source_path} has {len(source_sizes)} "
                            f"({rerun})")
        wrong = np.flatnonzero(np.asarray(self.sizes, dtype=np.int64) != source_sizes)
        if len(wrong):
            i = int(wrong[0])
            raise HierError(f"dependency parse does not match the source: {self.prefix}.idx "
                            f"example {i + 1} (line {i + 1}): {int(self.sizes[i])} codes in the "
                            f"parse, {int(source_sizes[i])} tokens in {source_path} "
                            f"({len(wrong)} of {len(source_sizes)} examples differ); {rerun}")
