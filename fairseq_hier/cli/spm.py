"""Train a sentencepiece model on the parse step's tokens, and encode text with it, keeping the
paragraph separators as single tokens.

    fairseq-hier-spm train --input PARSED/train.tok [PARSED/train.tgt.tok ...] \\
        --model-prefix SPM/spm --vocab-size 32000
    fairseq-hier-spm encode --model SPM/spm.model --input PARSED/train.tok --output BPE/train.src

``train``: sentencepiece (``SentencePieceTrainer.train``) on the tokenised text written by
``fairseq-hier-parse`` (spaCy tokens joined by single spaces), with
``normalization_rule_name=identity`` (no NFKC: the pieces of a token spell it exactly, as
``fairseq-hier-deps`` needs to find the parser's tokens again) and ``split_by_whitespace`` (a
piece never crosses a token boundary). The separator (``<P>``) is not training text: each
segment between separators is fed on its own, cut into chunks of at most 256 tokens (lossless
for the piece statistics, since pieces never cross tokens; sentencepiece skips sentences longer
than ``max_sentence_length``). ``hard_vocab_limit=False``: on a small corpus the model gets
fewer pieces than ``--vocab-size`` (logged) instead of failing; a vocabulary too small for the
corpus's characters is a one-line error.

``encode``: every segment of a line encoded on its own (``encode(out_type=str)``), the pieces
joined by spaces, each separator kept as one ``<P>`` token, so the segment structure is exactly
the input's (a line starting with ``<P>``, the empty title slot, still does; an empty segment
stays empty). Targets are encoded the same way (they have no separator). A token holding
U+2581 (sentencepiece's word marker) is an error naming the line: its pieces would start a word
inside the token. Characters outside the model come out as themselves (sentencepiece's unknown
pieces keep their surface), so the pieces still spell the tokens; fairseq-preprocess maps them to
``<unk>`` unless its dictionary has them.
"""

import argparse
import collections
import logging
import os
import sys
import tempfile
from typing import Iterator, List, Sequence

from tqdm import tqdm

from fairseq_hier.cli.common import command_parser, count, positive_int, ranged, run_command
from fairseq_hier.data.readers import numbered_lines
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, staged_outputs

PROG = "fairseq-hier-spm"
logger = logging.getLogger("fairseq_hier.spm")
WORD_MARKER = "\u2581"
CHUNK_TOKENS = 256  # training sentences are cut at token boundaries to this many tokens
ENCODE_BATCH = 2000  # lines encoded per call of sentencepiece (multithreaded inside)


def segments(line: str, separator: str) -> List[List[str]]:
    """The whitespace tokens of ``line`` as segments between separators (``n`` separators give
    ``n + 1`` segments, empty ones included)."""
    out: List[List[str]] = [[]]
    for token in line.split():
        if token == separator:
            out.append([])
        else:
            out[-1].append(token)
    return out


def training_sentences(paths: Sequence[str], separator: str) -> Iterator[str]:
    """Every non-empty segment of every line of ``paths``, in chunks of at most
    :data:`CHUNK_TOKENS` tokens; separators left out."""
    for path in paths:
        for _, line in numbered_lines(path):
            for seg in segments(line, separator):
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


def train(args) -> None:
    import sentencepiece as spm

    for path in args.input:
        if not os.path.isfile(path):
            raise HierError(f"--input {path}: no such file")
    outputs = [f"{args.model_prefix}.model", f"{args.model_prefix}.vocab"]
    # sentencepiece writes PREFIX.model and .vocab itself: into a scratch folder beside them,
    # then moved into place together (never over an input)
    with staged_outputs(outputs, inputs=args.input) as staged, \
            tempfile.TemporaryDirectory(prefix=".spm.", dir=os.path.dirname(staged[0])) as scratch:
        prefix = os.path.join(scratch, "spm")
        _train(args, prefix)
        for tmp, ext in zip(staged, (".model", ".vocab")):
            os.replace(prefix + ext, tmp)
    sp = spm.SentencePieceProcessor(model_file=outputs[0])
    size = sp.get_piece_size()
    note = (f" (fewer than --vocab-size {args.vocab_size}: the corpus has no more pieces)"
            if size < args.vocab_size else "")
    logger.info(f"wrote {args.model_prefix}.model and .vocab: {size} pieces{note}")


def _train(args, model_prefix: str) -> None:
    import sentencepiece as spm

    feed = _Feed(training_sentences(args.input, args.separator))
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=feed,
            model_prefix=model_prefix, vocab_size=args.vocab_size,
            model_type=args.model_type, character_coverage=args.character_coverage,
            normalization_rule_name="identity", split_by_whitespace=True,
            hard_vocab_limit=False, input_sentence_size=args.input_sentence_size,
            shuffle_input_sentence=True, num_threads=args.threads,
            minloglevel=0 if args.verbose else 1)
    except RuntimeError as e:
        if feed.error is not None:  # ours, raised while sentencepiece read the text
            raise feed.error from None
        if feed.count == 0:
            raise HierError(f"no text to train on in {', '.join(args.input)} (every line is "
                            f"empty or holds only separators)") from None
        # "INTERNAL: src/trainer_interface.cc(638) [check] Vocabulary size is smaller ..."
        reason = str(e).strip().splitlines()[0].split("] ", 1)[-1]
        raise HierError(f"sentencepiece could not train --vocab-size {args.vocab_size} on "
                        f"{', '.join(args.input)}: {reason}") from None


def encode_lines(sp, lines: Sequence[str], separator: str, where: str = "line",
                 first_line: int = 1) -> List[str]:
    """The encoded form of ``lines`` (see the module docstring); errors name ``where:N``, the
    lines numbered from ``first_line``."""
    segs = [segments(line, separator) for line in lines]
    for k, line_segs in enumerate(segs):
        bad = next((t for seg in line_segs for t in seg if WORD_MARKER in t), None)
        if bad is not None:
            raise HierError(f"{where}:{first_line + k}: token {bad!r} holds U+2581, "
                            f"sentencepiece's word marker (its pieces would start a word inside "
                            f"the token; fairseq-hier-mds-to-raw replaces it by '_')")
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


def encode(args) -> None:
    import sentencepiece as spm

    if not os.path.isfile(args.model):
        raise HierError(f"--model {args.model}: no such file")
    try:
        sp = spm.SentencePieceProcessor(model_file=args.model)
    except (OSError, RuntimeError) as e:
        raise HierError(f"--model {args.model}: not a sentencepiece model "
                        f"({str(e).strip().splitlines()[0]})") from None
    counts = collections.Counter()
    if not os.path.isfile(args.input):
        raise HierError(f"--input {args.input}: no such file")
    with atomic_outputs([args.output], inputs=[args.input, args.model]) as (out,):
        bar = tqdm(desc=f"encode {os.path.basename(args.input)}", unit=" lines",
                   disable=args.no_progress_bar)
        lines = (line for _, line in numbered_lines(args.input))
        for batch in _batches(lines, ENCODE_BATCH):
            encoded = encode_lines(sp, batch, args.separator, args.input, counts["lines"] + 1)
            for line in encoded:
                tokens = line.split(" ") if line else []
                n_sep = tokens.count(args.separator)
                counts.update(lines=1, pieces=len(tokens) - n_sep, separators=n_sep,
                              empty=int(not tokens))
                out.write(line + "\n")
            bar.update(len(batch))
        bar.close()
    logger.info(f"{args.input} -> {args.output}: {counts['lines']} lines, {counts['pieces']} "
                f"pieces, {counts['separators']} separators kept, {counts['empty']} empty lines")


def _batches(items: Iterator[str], size: int) -> Iterator[List[str]]:
    batch: List[str] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    sub = p.add_subparsers(dest="command", required=True, metavar="{train,encode}")
    t = sub.add_parser("train", help="train a sentencepiece model on tokenised text",
                       description="train a sentencepiece model on the parse step's tokens")
    t.add_argument("--input", required=True, nargs="+", metavar="F",
                   help="tokenised text (PARSED/train.tok; targets too for a joined vocabulary)")
    t.add_argument("--model-prefix", required=True, metavar="P", help="writes P.model, P.vocab")
    t.add_argument("--vocab-size", required=True, type=positive_int, metavar="N",
                   help="pieces wanted (fewer on a small corpus)")
    t.add_argument("--model-type", default="unigram", choices=("unigram", "bpe"),
                   help="sentencepiece's algorithm (default unigram, sentencepiece's default)")
    t.add_argument("--character-coverage", type=ranged(float, 0, 1, low_open=True),
                   default=0.9995,
                   help="share of characters covered by the model (sentencepiece's default "
                        "0.9995; the rest come out as themselves and become <unk> in fairseq)")
    t.add_argument("--input-sentence-size", type=count, default=10_000_000, metavar="N",
                   help="train on a random sample of N chunks (0: all; default 10M)")
    t.add_argument("--separator", default="<P>", help="separator left out of the training text")
    t.add_argument("--threads", type=positive_int, default=os.cpu_count() or 1,
                   help="sentencepiece trainer threads (default: all cores)")
    t.add_argument("--verbose", action="store_true", help="sentencepiece's own progress log")
    t.set_defaults(func=train)
    e = sub.add_parser("encode", help="encode text, keeping separators as single tokens",
                       description="encode every segment separately; separators kept")
    e.add_argument("--model", required=True, help="P.model written by the train sub-command")
    e.add_argument("--input", required=True, help="tokenised text, one example per line")
    e.add_argument("--output", required=True, help="pieces joined by spaces, one line per line")
    e.add_argument("--separator", default="<P>", help="segment separator kept as one token")
    e.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    e.set_defaults(func=encode)
    return p


def cli_main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    return run_command(PROG, args.func, args)


if __name__ == "__main__":
    sys.exit(cli_main())
