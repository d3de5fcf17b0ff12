"""The ``fairseq-hier-parse project`` step (ParsingSum, 003): a CoNLL-U parse projected onto the
pieces of a binarized source. Each example's CoNLL-U (``fairseq-hier-parse spacy``'s or any
parser's) is read (:func:`read_conllu`, the ``conllu`` package's field parsers), its subword
source line made words again (:func:`source_words`), the two matched token by token
(:func:`match_words`), and each word's head written as the code of its first piece
(:func:`project_heads`, :class:`DependencyWriter`). The summarizer projects the parse of new text
with the same function.

Formats: docs/data-formats.md, sections "Dependency codes" and "CoNLL-U from any parser"; the
codes and their reader live in :mod:`fairseq_hier.data.dependency_codes`.

May import: :mod:`fairseq_hier.data`, ``io``, ``errors``; numpy; ``conllu`` and fairseq inside
the functions that need them.
"""

import logging
import re
import time
import unicodedata
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np

from fairseq_hier.data.dependency_codes import (CONTINUATION, MAX_OFFSET, NOT_A_WORD,
                                                parse_files)
from fairseq_hier.data.shards import Shard, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import StagedWriter, iter_lines

logger = logging.getLogger("fairseq_hier.dependencies")
SUBWORD_SCHEMES = ("sentencepiece", "bpe", "none")
SPM_SPACE = "\u2581"
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
    """The examples of a CoNLL-U file, in order (docs/data-formats.md, "CoNLL-U from any
    parser"). A ``# newdoc`` comment starts an example (one without sentence is an empty
    example). Each token and comment line is parsed by the ``conllu`` package; lines, sentences
    and examples are followed here, so that errors name the line. Raises ValueError naming the
    file and line for a sentence before the first ``# newdoc``, a line without 10 tab-separated
    columns, a malformed ID, a non-integer HEAD or a HEAD outside its sentence."""
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


# --------------------------------------------------------------- words rebuilt from pieces
def _decode_byte_pieces(text: str) -> str:
    """sentencepiece's byte-fallback pieces (``<0xE2><0x80><0x99>``) -> the characters."""
    return _BYTE_PIECE.sub(
        lambda m: bytes.fromhex(m.group(0).replace("<0x", "").replace(">", "")).decode(
            "utf-8", errors="replace"), text)


def source_words(pieces: Sequence[str], subword: str,
                 separator: str = "<P>") -> Tuple[List[str], np.ndarray]:
    """``(words, piece_word)``: the words of a source line rebuilt from its whitespace tokens
    (docs/data-formats.md, "Dependency codes"), and per token the index of its word (int64, -1
    for a separator)."""
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


# ------------------------------------------------------------------------------- the codes
def project_heads(piece_word: np.ndarray, heads: Sequence[int], example: int = 0) -> np.ndarray:
    """The int16 codes of an example (docs/data-formats.md, "Dependency codes"):
    ``piece_word`` from :func:`source_words` (per source token its word, -1 for a separator),
    ``heads`` per word its head word (-1 for a root). One code per token, plus NOT_A_WORD for
    the EOS."""
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



# --------------------------------------------------------------------------- the .bin/.idx
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


# -------------------------------------------------------------------------------- the step
def source_lines(path: str) -> Iterator[List[str]]:
    """The whitespace tokens of each line of ``path`` (lines end at ``\\n`` only)."""
    for _, line in iter_lines(path):
        yield line.split()


def _count_rest(iterator) -> int:
    return sum(1 for _ in iterator)


def project_dependencies(conllu: str, source: str, subword: str, output_prefix: str,
                         separator: str = "<P>", shard: Optional[Shard] = None) -> None:
    """Project the parse of ``conllu`` onto the pieces of ``source`` (one line per example, the
    pieces made words by the ``subword`` scheme) and write ``output_prefix.{bin,idx}``, for the
    examples of ``shard`` only when given (:mod:`fairseq_hier.data.shards`; both files are read
    whole and must still agree); logs examples, words, pieces, separators and arcs written."""
    selection = select(shard, [source, conllu], lambda: _count_rest(source_lines(source)),
                       unit="lines")
    examples = words = pieces = separators = arcs = 0
    parses, sources = read_conllu(conllu), source_lines(source)
    with DependencyWriter(output_prefix, inputs=[conllu, source]) as writer:
        start = time.perf_counter()
        for n, (parse, tokens) in enumerate(zip_longest(parses, sources), 1):
            if parse is None or tokens is None:
                have_parse = n - 1 + (parse is not None) + _count_rest(parses)
                have_source = n - 1 + (tokens is not None) + _count_rest(sources)
                raise HierError(f"{conllu} has {have_parse} examples ('# newdoc' lines), "
                                f"{source} has {have_source} lines: one example per "
                                f"source line is expected")
            if not selection.contains(n - 1):
                continue
            line_words, piece_word = source_words(tokens, subword, separator)
            diff = match_words(parse.tokens, line_words, separator)
            if diff is not None:
                raise HierError(f"{conllu} example {n} (# newdoc on line {parse.line}) "
                                f"does not match {source} line {n}: {diff}")
            writer.add(project_heads(piece_word, parse.heads, n))
            examples += 1
            words += len(line_words)
            separators += int(np.count_nonzero(piece_word < 0))
            pieces += len(tokens)
            arcs += sum(h >= 0 for h in parse.heads)
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"{selection.label}wrote {examples} examples ({words} words, "
                f"{pieces - separators} pieces, {separators} separators, {arcs} arcs, "
                f"{words - arcs} roots) to {output_prefix}.{{bin,idx}} in {seconds:.1f} s")
