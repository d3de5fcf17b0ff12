"""Ranked WikiSum (Liu & Lapata 2019, nlpyang/hiersumm ``.pt`` shards) converted to fairseq-hier's
raw format: title and paragraphs as sentencepiece pieces, targets, gold references for ROUGE and
the fairseq dictionary of the model's pieces (``fairseq-hier-to-raw --format wikisum`` documents the
layouts, the title placement and the errors). The recipe's postprocessing reuses
:meth:`Converter.reference`.

Clone paragraphs (Liu & Lapata 2019, Sec. 4: "paragraphs in the source documents whose bigram
recall against the target summary was higher than 0.8", exact copies of the Wikipedia article):
:func:`clone_paragraphs` finds them, the ROUGE-2 recall of each paragraph against the target
(matched target bigrams, counts clipped, over the target's bigram count, as the ranker's labels:
:func:`fairseq_hier.text.rouge_ngrams.rouge_n_recall`) on lowercased tokens as the files hold them
(sentencepiece pieces in the shards; the title prefix of a paragraph is not counted).
:func:`remove_clones_raw` drops them from raw WikiSum in our raw format (the input of the
ranker); :class:`Converter` drops them from the shards only when asked (``clone_recall``).
"""

import glob
import logging
import os
import re
from collections import Counter
from typing import List, Optional, Sequence, Tuple

from tqdm import tqdm

from fairseq_hier.data.paragraphs import split_source
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, check_parallel, read_lines
from fairseq_hier.readers.markup import join_sentences
from fairseq_hier.text.rouge_ngrams import rouge_n_recall

logger = logging.getLogger("fairseq_hier.wikisum_to_raw")
SPLITS = ("train", "valid", "test")
FAIRSEQ_SPECIALS = {"<unk>", "<s>", "</s>", "<pad>"}
KEYS = ("src", "tgt", "tgt_str")
TITLE_PLACEMENTS = ("first", "every")
MAX_LISTED_ERRORS = 100  # per split; the rest are counted
CLONE_RECALL = 0.8  # 002 Sec. 4: a paragraph with bigram recall above this is a clone
CLONES = "clone paragraphs removed (bigram recall against the target > {})"


def clone_paragraphs(paragraphs: Sequence[Sequence[str]], target: Sequence[str],
                     threshold: float = CLONE_RECALL) -> List[int]:
    """Indices of the paragraphs whose bigram recall against ``target`` (lowercased tokens)
    exceeds ``threshold``: 002's clone paragraphs."""
    recall = rouge_n_recall([[t.lower() for t in p] for p in paragraphs],
                            [t.lower() for t in target], 2)
    return [j for j, r in enumerate(recall) if r > threshold]


def check_clone_recall(value: Optional[float]) -> None:
    if value is not None and not 0 <= value <= 1:
        raise HierError(f"--clone-recall must be in [0, 1] (a bigram recall), got {value}")


def remove_clones_raw(raw_dir: str, out_dir: str, splits: Sequence[str] = SPLITS,
                      separator: str = "<P>", threshold: float = CLONE_RECALL,
                      shard: Optional[Shard] = None) -> Counter:
    """Raw WikiSum in our raw format (``RAW_DIR/SPLIT.src``: ``title <P> paragraph ...``, and
    ``SPLIT.tgt``) -> the same files in ``out_dir`` without clone paragraphs
    (:func:`clone_paragraphs`); empty segments are dropped too; only the ``shard`` of each split
    when given (:mod:`fairseq_hier.data.shards`). Logs and returns the counts."""
    check_clone_recall(threshold)
    counts = Counter()
    what = CLONES.format(threshold)
    for split in splits:
        src_path, tgt_path = (os.path.join(raw_dir, f"{split}.{ext}") for ext in ("src", "tgt"))
        sources, targets = read_lines(src_path), read_lines(tgt_path)
        check_parallel(src_path, sources, tgt_path, targets)
        selection = select(shard, [src_path, tgt_path], lambda: len(sources))
        sources, targets = selection.slice(sources), selection.slice(targets)
        outputs = [os.path.join(out_dir, f"{split}.{ext}") for ext in ("src", "tgt")]
        before = counts[what]
        with atomic_outputs(outputs, inputs=[src_path, tgt_path]) as (fs, ft):
            for line, target in zip(tqdm(sources, desc=f"{split} clones", unit="example"),
                                    targets):
                title, paragraphs, empty = split_source(line, separator)
                drop = set(clone_paragraphs(paragraphs, target.split(), threshold))
                counts[what] += len(drop)
                counts["empty paragraphs dropped"] += empty
                kept = [" ".join(p) for j, p in enumerate(paragraphs) if j not in drop]
                fs.write(f" {separator} ".join([" ".join(title), *kept]).strip() + "\n")
                ft.write(target + "\n")
        mark_outputs(outputs, selection)
        logger.info(f"[{split}] {selection.label}{len(sources)} examples, "
                    f"{counts[what] - before} {what}")
    for key, n in sorted(counts.items()):
        logger.info(f"{key}: {n}")
    return counts


class RecordError(HierError):
    """A malformed record (or shard): the message says what is wrong, the caller where."""


def shard_paths(prefix, split):
    """The loader's glob of hiersumm (data_loader.load_dataset), numerically sorted."""
    paths = [p for p in glob.glob(f"{prefix}.{split}.[0-9]*.pt") if re.search(r"\.\d+\.pt$", p)]
    paths.sort(key=lambda p: int(re.search(r"\.(\d+)\.pt$", p).group(1)))
    if not paths and os.path.exists(f"{prefix}.{split}.pt"):
        paths = [f"{prefix}.{split}.pt"]
    return paths


def _type_name(value) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else type(value).__name__


def as_ids(value, what: str, vocab_size: int) -> List[int]:
    """``value`` as a list of piece ids: a list/tuple of ints or a 1-D integer tensor, every id
    in ``[0, vocab_size)``; else :class:`RecordError` naming ``what``."""
    if hasattr(value, "dim") and hasattr(value, "tolist"):  # a torch tensor
        if value.dim() != 1 or value.is_floating_point() or value.is_complex():
            raise RecordError(f"{what} is a {_type_name(value)} ({value.dtype}); "
                              f"expected a list of ids (or a 1-D integer tensor)")
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise RecordError(f"{what} is a {_type_name(value)}; expected a list of ids")
    if not all(type(i) is int for i in value):  # noqa: E721 - bool is no id
        bad = next(i for i in value if type(i) is not int)  # noqa: E721
        raise RecordError(f"{what} holds a {_type_name(bad)} ({str(bad)[:40]!r}); expected ids "
                          f"(ints)")
    if value and not (min(value) >= 0 and max(value) < vocab_size):
        out = min(value) if min(value) < 0 else max(value)
        raise RecordError(f"{what} holds id {out}, outside the sentencepiece model's "
                          f"{vocab_size} pieces (wrong --spm?)")
    return list(value)


def check_record(ex, vocab_size: int) -> Tuple[List[List[int]], List[int], str]:
    """(paragraphs, target ids, gold text) of one hiersumm record, or :class:`RecordError`."""
    if not isinstance(ex, dict):
        raise RecordError(f"is a {_type_name(ex)}; expected a dict with keys {list(KEYS)}")
    missing = [k for k in KEYS if k not in ex]
    if missing:
        raise RecordError(f"lacks the key(s) {missing} (has {sorted(map(str, ex))})")
    src = ex["src"]
    if hasattr(src, "dim"):  # tensors: only 1-D id lists are unambiguous
        raise RecordError(f"'src' is a {_type_name(src)}; expected a list of paragraphs, "
                          f"each a list of ids")
    if not isinstance(src, (list, tuple)):
        raise RecordError(f"'src' is a {_type_name(src)}; expected a list of paragraphs")
    if src and all(isinstance(i, int) for i in src):
        raise RecordError("'src' is a flat list of ids; hiersumm's ranked shards hold a list "
                          "of paragraphs, each a list of ids")
    paragraphs = [as_ids(para, f"'src' paragraph {j}", vocab_size) for j, para in enumerate(src)]
    target = as_ids(ex["tgt"], "'tgt'", vocab_size)
    if not isinstance(ex["tgt_str"], str):
        raise RecordError(f"'tgt_str' is a {_type_name(ex['tgt_str'])}; expected the gold "
                          f"text (str)")
    return paragraphs, target, ex["tgt_str"]


class Converter:
    """Stateful converter: piece ids of the special symbols and the counts it logs."""

    def __init__(self, spm_path, separator="<P>", title_placement="first",
                 clone_recall: Optional[float] = None):
        import sentencepiece as spm  # imported here: keeps startup light

        if not os.path.isfile(spm_path):
            raise HierError(f"--spm {spm_path}: no such file")
        try:
            self.sp = spm.SentencePieceProcessor(model_file=spm_path)
        except (OSError, RuntimeError) as e:
            raise HierError(f"--spm {spm_path}: not a sentencepiece model "
                            f"({str(e).splitlines()[0]})") from None
        self.spm_path = spm_path
        self.separator = separator
        if title_placement not in TITLE_PLACEMENTS:
            raise HierError(f"--title-placement must be one of {TITLE_PLACEMENTS}, got "
                            f"{title_placement!r}")
        self.title_placement = title_placement
        check_clone_recall(clone_recall)
        self.clone_recall = clone_recall  # None: the shards' paragraphs are kept as published
        ids = {p: self.sp.piece_to_id(p) for p in ("<T>", "<S>", "</S>", "<P>", "<Q>")}
        missing = [p for p, i in ids.items() if self.sp.id_to_piece(i) != p]
        if missing:
            raise HierError(f"{spm_path}: sentencepiece model lacks the special pieces {missing}; "
                            f"is it hiersumm's spm9998_3.model?")
        self.eot, self.bos, self.eos = ids["<T>"], ids["<S>"], ids["</S>"]
        self.sep_id = self.sp.piece_to_id(separator)
        if self.sp.id_to_piece(self.sep_id) != separator:  # piece_to_id gives <unk>'s id
            raise HierError(f"--paragraph-separator {separator!r} is not a piece of {spm_path} "
                            f"(hiersumm's model has <P>)")
        self.vocab_size = self.sp.get_piece_size()
        self.counts = Counter()

    def pieces(self, ids):
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def source(self, src):
        """list of paragraphs (id lists) -> (title pieces, list of paragraph piece lists)."""
        title = []
        if src and self.eot in src[0]:
            title = list(src[0][: src[0].index(self.eot)])
        else:
            self.counts["examples without a title (<T>)"] += 1
        prefix = title + [self.eot]
        keep_title = self.title_placement == "every"
        paragraphs = []
        for para in src:
            para = list(para)
            if keep_title:
                pass  # the shards' layout: "title <T> ..." stays in every paragraph
            elif title and para[: len(prefix)] == prefix:
                para = para[len(prefix):]
                self.counts["title prefixes stripped from paragraphs"] += 1
            inside = sum(1 for i in para if i == self.sep_id)
            if inside:
                self.counts[f"{self.separator} pieces removed inside paragraphs"] += inside
                para = [i for i in para if i != self.sep_id]
            if not para:
                self.counts["empty paragraphs dropped"] += 1
                continue
            paragraphs.append(self.pieces(para))
        if keep_title:
            self.counts["paragraphs keeping the shards' title prefix"] += len(paragraphs)
            return [], paragraphs
        return self.pieces(title), paragraphs

    def target(self, tgt):
        tgt = list(tgt)
        if tgt and tgt[0] == self.bos:
            tgt = tgt[1:]
        if tgt and tgt[-1] == self.eos:
            tgt = tgt[:-1]
        return self.pieces(tgt)

    @staticmethod
    def reference(tgt_str):
        """hiersumm's test-time normalisation (lowercase, ``<t>``/``</t>`` removed), with the
        sentences kept apart for summary-level ROUGE-L: a sentence ends at ``</t>`` (the
        ``<t> s1 </t> <t> s2 </t>`` form of ``tgt_str``) and at ``<Q>``/``<q>`` (the target's
        sentence piece, also in detokenised hypotheses), and the sentences are joined by
        `` <q> `` (``rouge -e "<q>"``). Whitespace is normalised, empty sentences dropped."""
        text = tgt_str.lower().replace("<t>", " ")
        sentences = [" ".join(s.split()) for s in re.split(r"</t>|<q>", text)]
        return join_sentences(s for s in sentences if s)

    def convert_split(self, prefix, split, out_dir, shard: Optional[Shard] = None):
        """Convert one split (with ``shard``, that block of its examples across the ``.pt``
        files, :mod:`fairseq_hier.data.shards`: every file is loaded once to count them, and
        the files outside the block are not read again); return the number of examples
        written. Raises ValueError (one line) after listing every malformed shard/record of
        the block; then nothing is written."""
        paths = shard_paths(prefix, split)
        if not paths:
            raise HierError(f"no shards {prefix}.{split}.N.pt (nor {prefix}.{split}.pt)")
        sizes = {}

        def count():
            for path in paths:
                try:
                    sizes[path] = len(load_shard(path))
                except RecordError as e:
                    raise HierError(f"{path}: {e}") from None
            return sum(sizes.values())

        selection = select(shard, paths, count)
        offset = 0  # examples of the files before this one
        names = [os.path.join(out_dir, f"{split}.{ext}") for ext in ("src", "tgt", "ref")]
        errors, written = 0, 0
        # the three files appear together once the whole split has converted, or not at all
        with atomic_outputs(names, inputs=[*paths, self.spm_path]) as (fs, ft, fr):
            for path in tqdm(paths, desc=f"{split} shards", unit="shard"):
                first = offset
                if path in sizes:  # counted for the cut: a file outside the block is not reread
                    offset += sizes[path]
                    if offset <= selection.first or first >= selection.stop:
                        continue
                try:
                    records = load_shard(path)
                except RecordError as e:
                    errors += 1
                    self._report(errors, f"{path}: {e}")
                    continue
                if path not in sizes:
                    offset += len(records)
                for k, ex in enumerate(records):
                    if not selection.contains(first + k):
                        continue
                    try:
                        lines = self.convert_example(ex, f"{path} example {k}")
                    except RecordError as e:
                        errors += 1
                        self._report(errors, f"{path} example {k}: {e}")
                        continue
                    if lines and not errors:
                        for f, line in zip((fs, ft, fr), lines):
                            f.write(line + "\n")
                        written += 1
            if errors:
                raise HierError(f"{errors} malformed shard(s)/record(s) in the {split} split of "
                                f"{prefix} (listed above); no {split} files written")
        mark_outputs(names, selection)
        logger.info(f"[{split}] {written} examples written from {len(paths)} shard(s)"
                    + (f" ({selection.label.strip()} of the examples)" if selection.label else ""))
        return written

    def convert_example(self, ex, where) -> Optional[Tuple[str, str, str]]:
        """(source, target, reference) lines of one record; None if it is skipped (logged and
        counted); :class:`RecordError` if it is malformed."""
        src, tgt, tgt_str = check_record(ex, self.vocab_size)
        if self.clone_recall is not None:
            src = self.drop_clones(src, tgt)
        title, paragraphs = self.source(src)
        target = self.target(tgt)
        reference = self.reference(tgt_str)
        for problem, empty in (("no paragraph", not paragraphs), ("empty target", not target),
                               ("empty gold text (tgt_str)", not reference)):
            if empty:
                self.counts[f"examples skipped: {problem}"] += 1
                logger.warning(f"{where}: {problem}, skipped")
                return None
        segments = [" ".join(title)] + [" ".join(p) for p in paragraphs]
        return f" {self.separator} ".join(segments).strip(), " ".join(target), reference

    def drop_clones(self, src, tgt):
        """``src`` without its clone paragraphs (:func:`clone_paragraphs` on pieces, the title
        prefix ``title <T>`` of a paragraph left out; the target without ``<S>``, ``</S>`` and
        ``<Q>``), counted."""
        title = list(src[0][: list(src[0]).index(self.eot) + 1]) if src and self.eot in src[0] \
            else []
        bodies = [list(p)[len(title):] if title and list(p)[: len(title)] == title else list(p)
                  for p in src]
        target = [i for i in tgt if i not in (self.bos, self.eos, self.sp.piece_to_id("<Q>"))]
        drop = set(clone_paragraphs([self.pieces(b) for b in bodies], self.pieces(target),
                                    self.clone_recall))
        self.counts[CLONES.format(self.clone_recall)] += len(drop)
        return [p for j, p in enumerate(src) if j not in drop]

    @staticmethod
    def _report(n, message):
        if n <= MAX_LISTED_ERRORS:
            logger.error(message)
        elif n == MAX_LISTED_ERRORS + 1:
            logger.error(f"(more malformed records: only the first {MAX_LISTED_ERRORS} are listed)")

    def write_dict(self, path):
        """Every piece of the model (minus fairseq's own specials) as a fairseq dictionary."""
        n = self.sp.get_piece_size()
        with atomic_outputs([path], inputs=[self.spm_path]) as (f,):
            for i in range(n):
                piece = self.sp.id_to_piece(i)
                if piece not in FAIRSEQ_SPECIALS:
                    f.write(f"{piece} {n - i}\n")


def load_shard(path):
    """A hiersumm shard: a non-empty list (of records, checked one by one by the caller)."""
    import torch  # only here: the converter's --help and the postprocessing stay light

    try:
        data = torch.load(path, weights_only=True)
    except Exception as e:  # noqa: BLE001 - reported with the file named
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RecordError(f"not a shard readable with torch.load(weights_only=True): "
                          f"{reason[:200]}") from None
    if not isinstance(data, (list, tuple)):
        raise RecordError(f"holds a {_type_name(data)}; expected a list of dicts with keys "
                          f"{list(KEYS)}")
    if not data:
        raise RecordError("is an empty shard (no example)")
    return data


def convert(data_prefix: str, spm: str, out_dir: str, splits: Sequence[str] = SPLITS,
            separator: str = "<P>", title_placement: str = "first",
            clone_recall: Optional[float] = None, shard: Optional[Shard] = None) -> Counter:
    """Convert ``splits`` of the shards at ``data_prefix`` (with ``shard``, that block of each
    split) into ``out_dir`` and write its ``dict.txt`` (whole: the model's pieces); logs and
    returns the counts of what was dropped or changed."""
    conv = Converter(spm, separator, title_placement, clone_recall)
    for split in splits:
        conv.convert_split(data_prefix, split, out_dir, shard)
    conv.write_dict(os.path.join(out_dir, "dict.txt"))
    for what, n in sorted(conv.counts.items()):
        logger.info(f"{what}: {n}")
    return conv.counts
