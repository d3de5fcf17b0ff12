"""The ``fairseq-hier-sentence-bos`` step (paper 004 Sec. 3.1 and 4.1): published summarization
splits (arXiv/PubMed, CNN/DM, SAMSum, QMSum, ...) and your own data (the JSON-lines schema) turned
into BOS-marked GPT-2 BPE lines for ``fairseq-preprocess`` with BART's dictionary: a ``<s>``
before every source sentence (the record's own segmentation, else pysbd's), fairseq's GPT-2
encoder, the source cut at a sentence boundary, speaker segments for dialogues.

Files written: docs/data-formats.md, section "Sentence-BOS files"; the raw-text pipeline of
:mod:`fairseq_hier.inference.sentence_pipeline` encodes with the same :class:`SentenceBOSEncoder`.

May import: :mod:`fairseq_hier.readers`, :mod:`fairseq_hier.data` (BART's files, shards), ``io``,
``workers``, ``errors``; pysbd, tqdm and fairseq's GPT-2 encoder inside the functions that need
them.
"""

import json
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from fairseq_hier.data.bart_files import check_gpt2_files, gpt2_bpe_files, gpt2_encoder
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.readers.layouts import READERS, SPAN_READERS
from fairseq_hier.readers.markup import describe_markup, markup_counts
from fairseq_hier.readers.own_data import has_several_summaries, read_sentence_records
from fairseq_hier.readers.qmsum import load_filler_words
from fairseq_hier.readers.records import MAX_SPAN_WORDS, format_stats, pysbd_segmenter
from fairseq_hier.workers import ordered_map

logger = logging.getLogger("fairseq_hier.sentence_bos")
BOS_SYMBOL = "<s>"  # BART's dictionary word for its BOS index
SUFFIXES = ("source", "target", "sentences", "segments", "ref", "ids", "refs.jsonl")
#: the layouts ``fairseq-hier-sentence-bos --format`` reads: the published ones
#: (:mod:`fairseq_hier.readers.layouts`) and the JSON-lines schema of your own data
#: (:mod:`fairseq_hier.readers.own_data`)
FORMATS = {**READERS, "jsonl": read_sentence_records}


@dataclass
class Encoded:
    """One example after BOS marking, BPE and truncation (the lines of the split's files)."""

    source: str
    target: str
    sentences: int
    segments: Optional[List[int]]
    ref: str
    id: str
    stats: Counter = field(default_factory=Counter)
    refs: Optional[List[str]] = None  # every reference, where the layout has several


#: AMI's four roles, as QMSum names the speakers of its Product (AMI) meetings; a role's
#: position is its segment id under ``speaker_ids="roles"``
AMI_ROLES = ("Project Manager", "Marketing", "User Interface", "Industrial Designer")
#: how speakers are numbered (``fairseq-hier-sentence-bos --speaker-ids``)
SPEAKER_IDS = ("roles", "appearance")
#: the layouts whose default numbering is not ``appearance``
ROLE_LAYOUTS = {"qmsum": "roles"}


def default_speaker_ids(layout: str) -> str:
    """The numbering a layout gets unless told otherwise: AMI's roles for ``qmsum``,
    order of appearance elsewhere."""
    return ROLE_LAYOUTS.get(layout, "appearance")


def speaker_indices(speakers: Sequence[str]) -> List[int]:
    """Speaker index of every turn, in order of first appearance: ``[A, B, A, C] -> [0, 1, 0, 2]``
    (004 Sec. 4.1: the same role maps to the same segment embedding)."""
    first = {}
    return [first.setdefault(s, len(first)) for s in speakers]


def role_indices(speakers: Sequence[str], where: str) -> List[int]:
    """Fixed id of every turn's role (:data:`AMI_ROLES`, case-insensitive): ``["Marketing",
    "Project Manager"] -> [1, 0]``; a speaker that is no role is an error naming ``where``."""
    ids = {role.lower(): i for i, role in enumerate(AMI_ROLES)}
    out = []
    for speaker in speakers:
        index = ids.get(speaker.lower())
        if index is None:
            raise HierError(f"{where}: speaker '{speaker}' is not one of AMI's roles "
                            f"({', '.join(AMI_ROLES)}); --speaker-ids appearance numbers the "
                            f"speakers of each meeting in order of appearance")
        out.append(index)
    return out


def speaker_ids_of(speakers: Sequence[str], numbering: str, where: str) -> List[int]:
    """The segment id of every turn under ``numbering`` (one of :data:`SPEAKER_IDS`)."""
    if numbering == "roles":
        return role_indices(speakers, where)
    return speaker_indices(speakers)


class SentenceSplitter:
    """pysbd's English segmenter (:func:`~fairseq_hier.readers.records.pysbd_segmenter`) over each
    line of a text."""

    def __init__(self):
        self._segmenter = pysbd_segmenter()

    def __call__(self, text: str) -> List[str]:
        # a line break ends a sentence: the documents of a JSON-lines example come one a line
        # (the other layouts' texts are collapsed onto one line)
        return [s.strip() for line in text.split("\n") if line.strip()
                for s in self._segmenter.segment(line) if s.strip()]


def whitespace_changes(text: str, sentences: Sequence[str]) -> int:
    """How many characters of ``text`` are changed when its ``sentences`` (cut from it in
    order, as :class:`SentenceSplitter` cuts them) are written one space apart: each gap between
    two sentences that is not exactly one space counts its length (1 for no space at all), the
    whitespace before the first sentence and after the last counts whole. A sentence not found
    in ``text`` (the splitter changed more than whitespace) counts the rest of the text."""
    changed, pos = 0, 0
    for i, sentence in enumerate(sentences):
        start = text.find(sentence, pos)
        if start < 0:
            return changed + len(text) - pos
        gap = text[pos:start]
        if i == 0:
            changed += len(gap)
        elif gap != " ":
            changed += max(len(gap), 1)
        pos = start + len(sentence)
    return changed + len(text) - pos


def fit_sentences(lengths: Sequence[int], budget: int) -> Tuple[int, int]:
    """How many whole sentences fit, and the length of a cut first sentence.

    Args:
        lengths: BPE ids per sentence (without its BOS); each sentence costs ``1 + length``.
        budget: tokens available for the source, EOS excluded.
    Returns:
        ``(kept, cut_to)``: the first ``kept`` sentences are whole; ``cut_to`` is -1, or, when
        not even the first sentence fits (``kept == 0``), the ids of it that are kept (its BOS
        is kept as well: ``1 + cut_to == budget``).
    """
    used = 0
    for kept, n in enumerate(lengths):
        if used + 1 + n > budget:
            if kept == 0:
                return 0, budget - 1
            return kept, -1
        used += 1 + n
    return len(lengths), -1


class SentenceBOSEncoder:
    """Turns reader records (:class:`fairseq_hier.readers.records.Record`) into :class:`Encoded`
    examples. Picklable parameters only; the BPE and the splitter are built lazily per process.

    Args:
        encoder_json, vocab_bpe: GPT-2 BPE files (fairseq's ``gpt2_bpe_utils.get_encoder``)
        max_source_positions: source tokens including every BOS and the final EOS
        max_target_positions: target tokens including the final EOS
        speakers: write speaker indices (dialogues); records must carry ``speakers``
        speaker_ids: their numbering, ``roles`` or ``appearance`` (:func:`speaker_ids_of`)
    """

    def __init__(self, encoder_json: str, vocab_bpe: str, max_source_positions: int,
                 max_target_positions: int, speakers: bool = False,
                 speaker_ids: str = "appearance"):
        for path, flag in ((encoder_json, "--gpt2-encoder-json"), (vocab_bpe, "--gpt2-vocab-bpe")):
            if not os.path.isfile(path):
                raise HierError(f"{flag} {path}: no such file")
        check_gpt2_files(encoder_json, vocab_bpe)
        if max_source_positions < 3 or max_target_positions < 2:
            raise HierError("--max-source-positions must be >= 3 and --max-target-positions >= 2")
        self.encoder_json, self.vocab_bpe = encoder_json, vocab_bpe
        self.max_source_positions = max_source_positions
        self.max_target_positions = max_target_positions
        if speaker_ids not in SPEAKER_IDS:
            raise HierError(f"--speaker-ids must be one of {', '.join(SPEAKER_IDS)}, got "
                            f"'{speaker_ids}'")
        self.speakers = speakers
        self.speaker_ids = speaker_ids
        self._bpe = None
        self._splitter = None

    @property
    def bpe(self):
        if self._bpe is None:
            self._bpe = gpt2_encoder(self.encoder_json, self.vocab_bpe)
        return self._bpe

    def split(self, text: str) -> List[str]:
        if self._splitter is None:
            self._splitter = SentenceSplitter()
        return self._splitter(text)

    def __getstate__(self):  # workers rebuild the BPE and the splitter
        return dict(self.__dict__, _bpe=None, _splitter=None)

    def encode_ids(self, text: str) -> List[str]:
        return [str(i) for i in self.bpe.encode(text)]

    def __call__(self, record) -> Encoded:
        stats = Counter(examples=1)
        sentences, speakers = self._sentences(record, stats)
        budget = self.max_source_positions - 1  # fairseq-preprocess appends EOS
        pieces, lengths = [], []
        used = 0
        for i, sentence in enumerate(sentences):
            if used >= budget:  # past the cut: not encoded, counted in words
                break
            ids = self.encode_ids(sentence if i == 0 else " " + sentence)
            pieces.append(ids)
            lengths.append(len(ids))
            used += 1 + len(ids)
        kept, cut_to = fit_sentences(lengths, budget)
        if cut_to >= 0:
            pieces, kept = [pieces[0][:cut_to]], 1
            stats["cut_inside_first_sentence"] += 1
            stats["source_ids_cut"] += lengths[0] - cut_to
        dropped = len(sentences) - kept
        if dropped or cut_to >= 0:
            stats["source_truncated"] += 1
            stats["sentences_dropped"] += dropped
            stats["source_ids_dropped"] += sum(lengths[kept:]) if cut_to < 0 else 0
            stats["words_dropped_unencoded"] += sum(
                len(s.split()) for s in sentences[len(lengths):])
        source = " ".join(f"{BOS_SYMBOL} {' '.join(ids)}".rstrip() for ids in pieces[:kept])
        stats["sentences"] += kept
        target_ids = self.encode_ids(record.summary)
        limit = self.max_target_positions - 1
        if len(target_ids) > limit:
            stats["target_truncated"] += 1
            stats["target_ids_cut"] += len(target_ids) - limit
            target_ids = target_ids[:limit]
        segments = (speaker_ids_of(speakers, self.speaker_ids, record.where)[:kept]
                    if self.speakers else None)
        return Encoded(source=source, target=" ".join(target_ids), sentences=kept,
                       segments=segments, ref=record.reference, id=str(record.id), stats=stats,
                       refs=record.summaries or [record.reference])

    def _sentences(self, record, stats: Counter) -> Tuple[List[str], Optional[List[str]]]:
        """The record's own segmentation, else pysbd's; speakers checked for dialogues."""
        if record.sentences is not None:
            sentences = list(record.sentences)
            stats["own_segmentation"] += 1
        else:
            sentences = self.split(record.text or "")
            stats["split_by_pysbd"] += 1
            changed = whitespace_changes(record.text or "", sentences)
            if changed:
                stats["whitespace_changed_examples"] += 1
                stats["whitespace_chars_changed"] += changed
        if not sentences:
            raise HierError(f"{record.where}: the source has no sentence")
        if self.speakers:
            if record.speakers is None or len(record.speakers) != len(sentences):
                raise HierError(f"{record.where}: --speakers needs one speaker per turn (the "
                                f"dialogue readers samsum/qmsum give them)")
            return sentences, list(record.speakers)
        return sentences, None


def _encode_batch(args):
    encoder, records = args
    return [encoder(r) for r in records]


def encode_records(encoder: SentenceBOSEncoder, records: Iterable, workers: int = 1,
                   chunk: int = 64, progress: bool = True, total: Optional[int] = None,
                   desc: str = "sentence-bos") -> Iterator[Encoded]:
    """Encode records in order, with ``workers`` processes and a progress bar (tqdm); any
    picklable callable ``encoder`` (the document-translation tokenizer too)."""
    from tqdm import tqdm

    def batches():
        batch = []
        for r in records:
            batch.append(r)
            if len(batch) == chunk:
                yield encoder, batch
                batch = []
        if batch:
            yield encoder, batch

    bar = tqdm(total=total, unit="ex", disable=not progress, mininterval=1.0, desc=desc)
    try:
        for out in ordered_map(_encode_batch, batches(), workers, desc):
            bar.update(len(out))
            yield from out
    finally:
        bar.close()


def write_split(examples: Iterable[Encoded], prefix: str, speakers: bool,
                markup: Optional[Counter] = None, inputs: Iterable[str] = (),
                refs: bool = False) -> Counter:
    """Write the split's files (docs/data-formats.md, section "Sentence-BOS files"), all
    together once complete (none may be one of ``inputs``:
    :func:`fairseq_hier.io.atomic_outputs`); returns the summed statistics.
    ``markup``, when given, counts every tag-like token written to ``PREFIX.ref``
    (:func:`~fairseq_hier.readers.markup.markup_counts`), and ``references_with_markup`` in the
    statistics the references holding one. ``refs``: also write ``PREFIX.refs.jsonl``."""
    suffixes = [s for s in SUFFIXES
                if (speakers or s != "segments") and (refs or s != "refs.jsonl")]
    totals = Counter()
    with atomic_outputs([f"{prefix}.{s}" for s in suffixes], inputs) as handles:
        files = dict(zip(suffixes, handles))
        for ex in examples:
            files["source"].write(ex.source + "\n")
            files["target"].write(ex.target + "\n")
            files["sentences"].write(f"{ex.sentences}\n")
            files["ref"].write(ex.ref + "\n")
            found = markup_counts([ex.ref]) if markup is not None else None
            if found:
                markup.update(found)
                totals["references_with_markup"] += 1
            files["ids"].write(ex.id + "\n")
            if speakers:
                files["segments"].write(" ".join(map(str, ex.segments)) + "\n")
            if refs:
                files["refs.jsonl"].write(json.dumps(ex.refs, ensure_ascii=False) + "\n")
                totals["references"] += len(ex.refs)
            totals.update(ex.stats)
    return totals


def format_totals(totals: Counter, max_source_positions: int, max_target_positions: int) -> str:
    """The log line of a split: examples, sentences, every cut with its count."""
    n = totals["examples"]
    return (f"{n} examples, {totals['sentences']} sentences kept "
            f"({totals['own_segmentation']} with the dataset's own segmentation, "
            f"{totals['split_by_pysbd']} split by pysbd); source cut to {max_source_positions} "
            f"tokens at sentence boundaries: {totals['source_truncated']} examples truncated, "
            f"{totals['sentences_dropped']} sentences dropped ({totals['source_ids_dropped']} "
            f"BPE ids encoded + {totals['words_dropped_unencoded']} words not encoded), "
            f"{totals['cut_inside_first_sentence']} first sentences cut inside "
            f"({totals['source_ids_cut']} ids); target cut to {max_target_positions} tokens: "
            f"{totals['target_truncated']} examples truncated ({totals['target_ids_cut']} ids); "
            f"whitespace between sentences made one space: "
            f"{totals['whitespace_changed_examples']} examples "
            f"({totals['whitespace_chars_changed']} characters changed)")


def gpt2_files(gpt2_encoder_json: Optional[str], gpt2_vocab_bpe: Optional[str],
               bart_dir: Optional[str], scratch: str):
    """``(encoder.json, vocab.bpe)``: the two files, or ``bart_dir``'s (derived into ``scratch``
    from a Hugging Face directory)."""
    files = (gpt2_encoder_json, gpt2_vocab_bpe)
    if bart_dir is not None:
        if any(files):
            raise HierError("--bart-dir replaces --gpt2-encoder-json/--gpt2-vocab-bpe: give "
                            "one or the other")
        return gpt2_bpe_files(bart_dir, scratch)
    if not all(files):
        raise HierError("BART's BPE files are needed: --bart-dir DIR, or both "
                        "--gpt2-encoder-json and --gpt2-vocab-bpe")
    return files


def encode_split(layout: str, input_path: str, output_prefix: str, encoder_json: str,
                 vocab_bpe: str, max_source_positions: int, max_target_positions: int,
                 speakers: bool = False, filler_words: Optional[str] = None, workers: int = 1,
                 progress_bar: bool = True, speaker_ids: Optional[str] = None,
                 shard: Optional[Shard] = None,
                 max_span_words: int = MAX_SPAN_WORDS) -> Counter:
    """Read the split ``input_path`` in the published ``layout`` (``--format``) and write its
    BOS-marked GPT-2 BPE files ``output_prefix.*`` (``fairseq-hier-sentence-bos`` documents
    them); logs the counts and returns the totals. ``speaker_ids``: the numbering of the
    speakers (None: the layout's default, AMI's roles for ``qmsum``). ``shard``: only that block
    of the records the reader yields (:mod:`fairseq_hier.data.shards`). ``max_span_words``: the
    readers' limit on a ``<t>``-tagged source sentence (:func:`~fairseq_hier.readers.records.
    split_long_spans`; layouts with ``<t>`` spans only)."""
    stats, skipped = Counter(), []
    kwargs = dict(stats=stats, skipped=skipped)
    if layout in SPAN_READERS:
        kwargs["max_span_words"] = max_span_words
    if layout == "qmsum" and filler_words:
        kwargs["filler_words"] = load_filler_words(filler_words)
    elif filler_words:
        raise HierError("--filler-words applies to --format qmsum only")
    if speaker_ids is not None and not speakers:
        raise HierError("--speaker-ids numbers the speakers that --speakers writes: give both")
    speaker_ids = speaker_ids or default_speaker_ids(layout)
    encoder = SentenceBOSEncoder(encoder_json, vocab_bpe, max_source_positions,
                                 max_target_positions, speakers=speakers,
                                 speaker_ids=speaker_ids)
    if speakers:
        logger.info(f"speaker segments of {input_path}: numbered by {speaker_ids}")
    # several references per example: PREFIX.refs.jsonl beside PREFIX.ref (jsonl only)
    refs = layout == "jsonl" and has_several_summaries(input_path)
    selection = select(shard, [input_path], lambda: sum(1 for _ in FORMATS[layout](
        input_path, **dict(kwargs, stats=Counter(), skipped=[]))), unit="records")
    records = selection.take(FORMATS[layout](input_path, **kwargs))
    examples = encode_records(encoder, records, workers=workers,
                              progress=progress_bar)
    markup = Counter()
    # the files read (source_target: INPUT.source and INPUT.target) are never overwritten
    inputs = [input_path, f"{input_path}.source", f"{input_path}.target", encoder_json,
              vocab_bpe, filler_words]
    totals = write_split(examples, output_prefix, speakers, markup=markup,
                         inputs=inputs, refs=refs)
    stale = f"{output_prefix}.refs.jsonl"
    if layout == "jsonl" and not refs and os.path.isfile(stale):
        os.remove(stale)  # an earlier run's: not these examples'
        logger.info(f"removed {stale}: no example of {input_path} has several summaries")
    mark_outputs([f"{output_prefix}.{s}" for s in SUFFIXES], selection)
    logger.info(f"read {input_path}: {format_stats(stats)}")
    if stats["long_spans_split"] or stats["long_spans_kept_whole"]:
        logger.warning(f"{input_path}: {stats['long_spans_split']} <t> spans longer than "
                       f"{max_span_words} words split by pysbd into "
                       f"{stats['long_span_sentences']} sentences, "
                       f"{stats['long_spans_kept_whole']} kept whole (no boundary found)")
    for line in skipped[:20]:
        logger.info(f"skipped {line}")
    if len(skipped) > 20:
        logger.info(f"... and {len(skipped) - 20} more skipped records")
    if totals["examples"] == 0:
        raise HierError(f"{input_path}: no example left to write")
    logger.info(f"{selection.label}wrote {output_prefix}.*: "
                f"{format_totals(totals, max_source_positions, max_target_positions)}")
    if markup:
        logger.warning(f"{output_prefix}.ref: {totals['references_with_markup']} of "
                       f"{totals['examples']} references hold markup that ROUGE-1.5.5 reads "
                       f"only up to its '<' (kept: it is the dataset's text): "
                       f"{describe_markup(markup)}")
    return totals
