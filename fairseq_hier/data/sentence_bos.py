"""Sentence BOS markers for HAT (paper 004 Sec. 3.1): a BOS symbol at the start of every source
sentence, GPT-2 BPE through fairseq's own encoder, truncation at sentence boundaries.

004 Sec. 3.1: "we insert BOS tokens at the start of every sentence in each source document ...
We simply determine sentence boundaries by punctuation or by using prior sentence segmentation
present in the documents". So: a record's own segmentation is used where the dataset has one
(arXiv/PubMed ``article_text`` sentences, PreSumm's ``src`` sentences, ``<t> ... </t>``-tagged
sentences, SAMSum/AMI speaker turns, see :mod:`fairseq_hier.data.readers`), else its text is
split by pysbd (a real rule-based sentence boundary detector; no regex splitter of ours).

Files written for one split (``PREFIX`` e.g. ``work/bpe/train``), one line per example, in the
order of the input records:

``PREFIX.source``
    GPT-2 BPE ids (as BART's ``dict.txt`` words) with the literal BOS symbol ``<s>`` before every
    sentence: ``<s> 713 318 ... <s> 464 ...``. ``fairseq-preprocess --srcdict bart/dict.txt`` maps
    ``<s>`` to the dictionary's BOS index (0) and appends EOS. Sentence ``i > 0`` is encoded with
    its leading space, so the ids are those of the whole text (as BART saw it in pre-training).
``PREFIX.target``
    GPT-2 BPE ids of the summary, cut to ``max_target_positions - 1`` ids (EOS is appended).
``PREFIX.sentences``
    the number of sentences (BOS symbols) kept in the source line: checked against the
    binarized source before training (``--task hat_summarization``).
``PREFIX.segments`` (dialogues, ``speakers=True``)
    the speaker index of every kept sentence (turn), read into ``src_segments`` for the segment
    embeddings (004 Sec. 4.1: "we add segment embeddings for each role"). ``speaker_ids``
    chooses the numbering (:func:`speaker_ids_of`):

    - ``roles`` (the default for ``qmsum``, AMI): each of AMI's four roles, as QMSum names the
      speakers of its Product meetings, has a fixed id, the same in every meeting
      (:data:`AMI_ROLES`: Project Manager 0, Marketing 1, User Interface 2, Industrial Designer
      3; matched case-insensitively). A speaker that is none of them is an error naming the
      file, line and speaker (no fallback id: a role model trained on a wrong id would be
      silently another model);
    - ``appearance`` (the default for every other layout: SAMSum; and for corpora without fixed
      roles, such as QMSum's ICSI meetings): 0 for the first speaker to talk in the dialogue, 1
      for the second, ...
``PREFIX.ref``
    the reference summary as the dataset writes it, one line (for scoring; never truncated), its
    sentences separated by `` <q> `` where the dataset marks them (``Record.reference``).
    ``<t>`` sentence tags never reach it (the readers drop them); any other tag-like markup
    (``<unk>``, ``<file_gif>``) is the dataset's text and stays, counted by :func:`write_split`
    and named in the command's log, since ROUGE-1.5.5 reads a sentence only up to its first
    ``<``.
``PREFIX.ids``
    the record's id (dataset id, else ``file:line``; ``--format jsonl``: the example's ``id``,
    else its line number).
``PREFIX.refs.jsonl`` (``--format jsonl``, only where an example of the split has several
summaries)
    all the references of the example, one JSON list of strings per line, each as ``PREFIX.ref``
    writes the first (for ``fairseq-hier-rouge``'s multi-reference scoring).

Truncation (source): the source, EOS included, must fit ``max_source_positions`` tokens. Whole
sentences are kept while they fit, so the cut falls at a sentence boundary and every kept
sentence keeps its BOS; only when not even the first sentence fits is that sentence cut inside
(its BOS kept). Sentences past the cut are not encoded (speed: arXiv sources are ~3x longer than
3072 tokens): they are counted in sentences and whitespace words. Every cut is counted and logged.

Whitespace (source text split by pysbd): the sentences are written one space apart, so a line
break (between the documents of a JSON-lines example), a run of whitespace or no space between
two sentences becomes one space, and whitespace around the text is dropped; the examples so
changed and the characters changed are counted (``whitespace_changed_examples``,
``whitespace_chars_changed``, :func:`whitespace_changes`) and logged with the cuts.
"""

import json
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from ..io import atomic_outputs
from .markup import markup_counts
from ..errors import HierError
from ..workers import ordered_map
from .bart_files import check_gpt2_files, gpt2_encoder
from .own_data import read_sentence_records
from .readers import READERS, pysbd_segmenter

logger = logging.getLogger(__name__)

BOS_SYMBOL = "<s>"  # BART's dictionary word for its BOS index
SUFFIXES = ("source", "target", "sentences", "segments", "ref", "ids", "refs.jsonl")
#: the layouts ``fairseq-hier-sentence-bos --format`` reads: the published ones
#: (:mod:`fairseq_hier.data.readers`) and the JSON-lines schema of your own data
#: (:mod:`fairseq_hier.data.own_data`)
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
    """pysbd's English segmenter (:func:`~fairseq_hier.data.readers.pysbd_segmenter`) over each
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
    """Turns reader records (:class:`fairseq_hier.data.readers.Record`) into :class:`Encoded`
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
    """Write the split's files (module docstring), all together once complete (none may be one
    of ``inputs``: :func:`fairseq_hier.io.atomic_outputs`); returns the summed statistics.
    ``markup``, when given, counts every tag-like token written to ``PREFIX.ref``
    (:func:`~fairseq_hier.data.markup.markup_counts`), and ``references_with_markup`` in the
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
