"""Sentencepiece training on the parse step's tokens and encoding that keeps the paragraph
separators as single tokens (``fairseq-hier-spm`` describes both steps). The inference pipeline
encodes new text with :func:`encode_lines`.
"""

import collections
import logging
import os
import tempfile
from typing import Iterator, List, Optional, Sequence

from tqdm import tqdm

from fairseq_hier.data.paragraphs import separated
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, batches, staged_outputs
from fairseq_hier.readers.lines import numbered_lines

logger = logging.getLogger("fairseq_hier.spm")
WORD_MARKER = "\u2581"
CHUNK_TOKENS = 256  # training sentences are cut at token boundaries to this many tokens
ENCODE_BATCH = 2000  # lines encoded per call of sentencepiece (multithreaded inside)


def training_sentences(paths: Sequence[str], separator: str) -> Iterator[str]:
    """Every non-empty segment of every line of ``paths``, in chunks of at most
    :data:`CHUNK_TOKENS` tokens; separators left out."""
    for path in paths:
        for _, line in numbered_lines(path):
            for seg in separated(line, separator):
                for i in range(0, len(seg), CHUNK_TOKENS):
                    yield " ".join(seg[i:i + CHUNK_TOKENS])


class _Feed:
    """The training sentences for sentencepiece, counted; an error of ours raised while
    sentencepiece reads them is kept here (sentencepiece turns it into a RuntimeError)."""

    def __init__(self, sentences: Iterator[str]):
        self.sentences, self.count, self.error = sentences, 0, None

    def __iter__(self):
        return self

    def __next__(self) -> str:
        try:
            sentence = next(self.sentences)
        except ValueError as e:
            self.error = e
            raise
        self.count += 1
        return sentence


def train_model(inputs: Sequence[str], model_prefix: str, vocab_size: int,
                model_type: str = "unigram", character_coverage: float = 0.9995,
                input_sentence_size: int = 10_000_000, separator: str = "<P>", threads: int = 1,
                verbose: bool = False) -> None:
    """Train a sentencepiece model on the tokenised text of ``inputs`` (see ``fairseq-hier-spm``)
    and write ``model_prefix.model`` and ``.vocab`` together; logs the pieces it got."""
    import sentencepiece as spm  # imported here: keeps startup light

    for path in inputs:
        if not os.path.isfile(path):
            raise HierError(f"--input {path}: no such file")
    outputs = [f"{model_prefix}.model", f"{model_prefix}.vocab"]
    # sentencepiece writes PREFIX.model and .vocab itself: into a scratch folder beside them,
    # then moved into place together (never over an input)
    with staged_outputs(outputs, inputs=inputs) as staged, \
            tempfile.TemporaryDirectory(prefix=".spm.", dir=os.path.dirname(staged[0])) as scratch:
        prefix = os.path.join(scratch, "spm")
        _train(inputs, prefix, vocab_size, model_type, character_coverage, input_sentence_size,
               separator, threads, verbose)
        for tmp, ext in zip(staged, (".model", ".vocab")):
            os.replace(prefix + ext, tmp)
    sp = spm.SentencePieceProcessor(model_file=outputs[0])
    size = sp.get_piece_size()
    note = ""
    if size < vocab_size and model_type == "unigram":  # unigram prunes hard on a small corpus
        note = f" (fewer than --vocab-size {vocab_size}; --model-type bpe keeps more)"
    elif size < vocab_size:
        note = f" (fewer than --vocab-size {vocab_size}: the corpus has no more pieces)"
    logger.info(f"wrote {model_prefix}.model and .vocab: {size} pieces{note}")


def _train(inputs: Sequence[str], scratch_prefix: str, vocab_size: int, model_type: str,
           character_coverage: float, input_sentence_size: int, separator: str, threads: int,
           verbose: bool) -> None:
    import sentencepiece as spm  # imported here: keeps startup light

    feed = _Feed(training_sentences(inputs, separator))
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=feed,
            model_prefix=scratch_prefix, vocab_size=vocab_size,
            model_type=model_type, character_coverage=character_coverage,
            normalization_rule_name="identity", split_by_whitespace=True,
            hard_vocab_limit=False, input_sentence_size=input_sentence_size,
            shuffle_input_sentence=True, num_threads=threads,
            minloglevel=0 if verbose else 1)
    except RuntimeError as e:
        if feed.error is not None:  # ours, raised while sentencepiece read the text
            raise feed.error from None
        if feed.count == 0:
            raise HierError(f"no text to train on in {', '.join(inputs)} (every line is "
                            f"empty or holds only separators)") from None
        # "INTERNAL: src/trainer_interface.cc(638) [check] Vocabulary size is smaller ..."
        reason = str(e).strip().splitlines()[0].split("] ", 1)[-1]
        raise HierError(f"sentencepiece could not train --vocab-size {vocab_size} on "
                        f"{', '.join(inputs)}: {reason}") from None


def encode_lines(sp, lines: Sequence[str], separator: str, where: str = "line",
                 first_line: int = 1) -> List[str]:
    """The encoded form of ``lines`` (see ``fairseq-hier-spm encode``); errors name ``where:N``, the
    lines numbered from ``first_line``."""
    segs = [separated(line, separator) for line in lines]
    for k, line_segs in enumerate(segs):
        bad = next((t for seg in line_segs for t in seg if WORD_MARKER in t), None)
        if bad is not None:
            raise HierError(f"{where}:{first_line + k}: token {bad!r} holds U+2581, "
                            f"sentencepiece's word marker (its pieces would start a word inside "
                            f"the token; fairseq-hier-to-raw replaces it by '_')")
    flat = [" ".join(seg) for line_segs in segs for seg in line_segs]
    pieces = iter(sp.encode(flat, out_type=str))
    out = []
    for k, line_segs in enumerate(segs):
        tokens: List[str] = []
        for i in range(len(line_segs)):
            if i:
                tokens.append(separator)
            seg_pieces = next(pieces)
            if separator in seg_pieces:
                raise HierError(f"{where}:{first_line + k}: segment {i} encodes to a piece "
                                f"equal to the separator {separator!r}")
            tokens.extend(seg_pieces)
        out.append(" ".join(tokens))
    return out


def encode_file(model: str, input_path: str, output: str, separator: str = "<P>",
                progress_bar: bool = True, shard: Optional[Shard] = None) -> None:
    """Encode every line of ``input_path`` (or of its ``shard``:
    :mod:`fairseq_hier.data.shards`) with the sentencepiece ``model`` into ``output``
    (:func:`encode_lines`, in batches); logs lines, pieces, separators and empty lines."""
    import sentencepiece as spm  # imported here: keeps startup light

    if not os.path.isfile(model):
        raise HierError(f"--model {model}: no such file")
    try:
        sp = spm.SentencePieceProcessor(model_file=model)
    except (OSError, RuntimeError) as e:
        raise HierError(f"--model {model}: not a sentencepiece model "
                        f"({str(e).strip().splitlines()[0]})") from None
    counts = collections.Counter()
    if not os.path.isfile(input_path):
        raise HierError(f"--input {input_path}: no such file")
    selection = select(shard, [input_path], lambda: sum(1 for _ in numbered_lines(input_path)),
                       unit="lines")
    with atomic_outputs([output], inputs=[input_path, model]) as (out,):
        bar = tqdm(desc=f"encode {os.path.basename(input_path)}", unit=" lines",
                   disable=not progress_bar)
        lines = selection.take(line for _, line in numbered_lines(input_path))
        for batch in batches(lines, ENCODE_BATCH):
            encoded = encode_lines(sp, batch, separator, input_path,
                                   selection.first + counts["lines"] + 1)
            for line in encoded:
                tokens = line.split(" ") if line else []
                n_sep = tokens.count(separator)
                counts.update(lines=1, pieces=len(tokens) - n_sep, separators=n_sep,
                              empty=int(not tokens))
                out.write(line + "\n")
            bar.update(len(batch))
        bar.close()
    mark_outputs([output], selection)
    logger.info(f"{selection.label}{input_path} -> {output}: {counts['lines']} lines, "
                f"{counts['pieces']} pieces, {counts['separators']} separators kept, "
                f"{counts['empty']} empty lines")
