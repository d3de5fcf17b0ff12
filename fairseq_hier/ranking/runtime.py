"""The paragraph ranker's runtime (002 Sec. 3.1: "input paragraphs are ranked based on the model
predicted scores"): examples read from raw or jsonl lines (:class:`Record`), a trained ranker
loaded (:func:`load_ranker`), paragraphs scored in batches (:class:`Scorer`) and written by
descending score (:func:`write_ranked`). ``fairseq-hier-rank apply`` documents the formats and
errors; :func:`rank_file` is its whole run.
"""

import collections
import logging
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

from fairseq_hier.data.paragraphs import split_source
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.readers.lines import line_texts, progress_total
from fairseq_hier.readers.own_data import read_examples, split_paragraphs
from fairseq_hier.readers.records import collapse
from fairseq_hier.safe_loading import expecting_task, trusting

logger = logging.getLogger("fairseq_hier.rank")


@dataclass
class Record:
    """One example to rank: its line number, title tokens, paragraphs (token lists), empty
    paragraphs dropped."""

    number: int
    title: List[str]
    paragraphs: List[List[str]]
    empty: int


def read_raw(path: str, separator: str) -> Iterator[Record]:
    for number, line in enumerate(line_texts(path), start=1):
        title, paragraphs, empty = split_source(line, separator)
        yield Record(number, title, paragraphs, empty)


def whitespace_tokenizer(text: str) -> List[str]:
    return text.split()


def spm_tokenizer(model: str) -> Callable[[str], List[str]]:
    """The sentencepiece pieces of a text (``--spm-model``)."""
    if not os.path.isfile(model):
        raise HierError(f"--spm-model {model}: no such file")
    import sentencepiece as spm  # imported here: keeps startup light

    sp = spm.SentencePieceProcessor(model_file=model)
    return lambda text: sp.encode(text, out_type=str)


def read_jsonl(path: str, separator: str, tokenize: Callable[[str], List[str]]) -> Iterator[Record]:
    """Records of a JSON-lines file of the schema (:mod:`fairseq_hier.readers.own_data`; summaries
    not read): paragraphs = the non-blank lines of the documents, in order, cleaned as every
    reader of the schema cleans them."""
    stats = collections.Counter()
    for example in read_examples(path, stats, summaries=False):
        paragraphs = [tokenize(p) for p in split_paragraphs(example.documents, "lines", stats)]
        title = tokenize(collapse(example.title or ""))
        if separator in title:
            raise HierError(f"{example.where}: the title holds the separator token "
                            f"{separator!r}")
        yield Record(example.line, title, paragraphs, stats.pop("empty_paragraphs", 0))


def load_ranker(path: str, data: Optional[str], cpu: bool, trust: bool = False):
    """(model in eval mode on its device, task) of a ``paragraph_ranking`` checkpoint
    (``trust``: loaded as a trusted file, see :mod:`fairseq_hier.safe_loading`)."""
    # torch and fairseq are imported here, not at the top: keeps startup light
    import torch

    import fairseq_hier

    fairseq_hier.register()
    # fairseq and the ranking task (which imports it) here, after registration
    from fairseq import checkpoint_utils

    from fairseq_hier.tasks.paragraph_ranking import ParagraphRankingTask

    if not os.path.isfile(path):
        raise HierError(f"--path {path}: no such checkpoint")
    overrides = {"data": data} if data else None

    try:
        with trusting(trust), expecting_task("paragraph_ranking"):
            models, _, task = checkpoint_utils.load_model_ensemble_and_task([path], overrides)
    except FileNotFoundError as e:  # the dictionary of the training data folder
        raise HierError(f"{e}; pass --data DIR, a folder holding the ranker's dict.src.txt") \
            from None
    if not isinstance(task, ParagraphRankingTask):
        raise HierError(f"--path {path} was trained with task {type(task).__name__}, not "
                        f"paragraph_ranking")
    model = models[0].eval()
    if torch.cuda.is_available() and not cpu:
        model = model.cuda()
    return model, task


class Scorer:
    """Scores paragraphs in batches of at most ``batch_size`` paragraphs (whole examples or
    chunks of one), returning the examples whose scores are complete, in input order."""

    def __init__(self, model, task, batch_size: int, max_tokens: int):
        import torch  # imported here: keeps startup light

        self.torch, self.model = torch, model
        self.device = next(model.parameters()).device
        d = task.source_dictionary
        self.indices, self.unk, self.pad = d.indices, d.unk(), d.pad()
        self.batch_size, self.max_tokens = batch_size, max_tokens
        self.pending = deque()  # [record, scores, chunks left]
        self.items: List[dict] = []  # chunks of the batch being filled
        self.filled = 0
        self.unk_tokens = self.tokens = 0

    def encode(self, tokens: List[str]) -> List[int]:
        ids = [self.indices.get(t, self.unk) for t in tokens[: self.max_tokens]]
        self.tokens += len(ids)
        self.unk_tokens += ids.count(self.unk)
        return ids

    def add(self, record: Record) -> List:
        """Queue one record; returns the finished ones (record, scores)."""
        # numpy, and torch and fairseq through the dataset module, imported when ranking runs
        import numpy as np

        from fairseq_hier.data.ranking_dataset import paragraph_block

        # chunks left counted up front: a flush between this record's chunks must not take it
        # for complete
        num_chunks = -(-len(record.paragraphs) // self.batch_size)
        entry = [record, np.zeros(len(record.paragraphs)), num_chunks]
        self.pending.append(entry)
        title = self.torch.tensor(self.encode(record.title), dtype=self.torch.long)
        done = []
        for start in range(0, len(record.paragraphs), self.batch_size):
            chunk = record.paragraphs[start: start + self.batch_size]
            if self.filled + len(chunk) > self.batch_size:
                done += self.flush()
            block, lengths = paragraph_block([self.encode(p) for p in chunk], self.pad,
                                             self.max_tokens)
            self.items.append({"id": len(self.items), "title": title, "paragraphs": block,
                               "lengths": lengths, "entry": entry, "start": start})
            self.filled += len(chunk)
        return done

    def flush(self) -> List:
        """Score the queued chunks; return the records now complete, in order."""
        from fairseq import utils  # imported here: keeps startup light

        from fairseq_hier.data.ranking_dataset import collate_rankings

        if self.items:
            batch = collate_rankings(self.items, self.pad)
            net_input = utils.move_to_cuda(batch["net_input"], self.device) \
                if self.device.type == "cuda" else batch["net_input"]
            with self.torch.inference_mode():
                logits = self.model(**net_input).double().cpu().numpy()  # B x P
            for item, row in zip(self.items, logits):
                record_scores = item["entry"][1]
                n = len(item["lengths"])
                record_scores[item["start"]: item["start"] + n] = row[:n]
                item["entry"][2] -= 1
            self.items, self.filled = [], 0
        done = []
        while self.pending and self.pending[0][2] == 0:
            record, logits, _ = self.pending.popleft()
            done.append((record, logits))
        return done


def write_ranked(record: Record, logits, separator: str, keep: int, out, scores_out) -> int:
    """Write one example ranked by descending logit (stable); returns paragraphs cut."""
    import numpy as np

    order = np.argsort(-logits, kind="stable")
    kept = order[:keep] if keep > 0 else order
    tokens = list(record.title)
    for i in kept:
        tokens.append(separator)
        tokens.extend(record.paragraphs[i])
    out.write(" ".join(tokens) + "\n")
    if scores_out is not None:
        scores = 1.0 / (1.0 + np.exp(-logits[kept]))  # s = sigmoid(W2 p), Eq. 6
        scores_out.write(" ".join(f"{s:.6g}" for s in scores) + "\n")
    return len(order) - len(kept)


def rank_file(path: str, source: str, output: str, input_format: str = "raw",
              spm_model: Optional[str] = None, keep: int = 0, scores_out: Optional[str] = None,
              batch_size: int = 1000, max_paragraph_tokens: int = 0,
              paragraph_separator: str = "", data: Optional[str] = None, cpu: bool = False,
              trust_checkpoint: bool = False, progress_bar: bool = True) -> int:
    """Rank every example of ``source`` with the ranker checkpoint ``path`` and write
    ``output`` (and ``scores_out``) together, as ``fairseq-hier-rank apply`` describes; ``0`` or
    ``""`` options take the checkpoint task's value. Logs the counts; returns the number of
    examples."""
    from tqdm import tqdm

    model, task = load_ranker(path, data, cpu, trust_checkpoint)
    separator = paragraph_separator or task.cfg.paragraph_separator
    max_tokens = max_paragraph_tokens or task.cfg.max_paragraph_tokens
    if input_format == "jsonl":
        tokenize = spm_tokenizer(spm_model) if spm_model else whitespace_tokenizer
        records = read_jsonl(source, separator, tokenize)
    else:
        records = read_raw(source, separator)
    scorer = Scorer(model, task, batch_size, max_tokens)
    stats = dict(examples=0, paragraphs=0, empty=0, cut=0, cut_examples=0, long=0)
    outputs = [output] + ([scores_out] if scores_out else [])
    start = time.time()
    logger.info(f"ranking {source} on {scorer.device}: paragraphs and titles scored on "
                f"their first {max_tokens} tokens, separator {separator!r}")
    with atomic_outputs(outputs, inputs=[source, path, spm_model]) as handles:
        out, scores_file = handles[0], (handles[1] if scores_out else None)
        bar = tqdm(total=progress_total(source), unit="ex", mininterval=1.0, desc="rank",
                   disable=not progress_bar)

        def write(done):
            for record, logits in done:
                cut = write_ranked(record, logits, separator, keep, out, scores_file)
                stats["cut"] += cut
                stats["cut_examples"] += cut > 0
                bar.update(1)

        for record in records:
            if not record.paragraphs:
                raise HierError(f"{source}:{record.number}: no paragraph to rank (no "
                                f"non-empty segment after a {separator!r} separator)")
            stats["examples"] += 1
            stats["paragraphs"] += len(record.paragraphs)
            stats["empty"] += record.empty
            stats["long"] += sum(len(p) > max_tokens for p in record.paragraphs)
            write(scorer.add(record))
        write(scorer.flush())
        bar.close()
    n, seconds = stats["examples"], max(time.time() - start, 1e-9)
    logger.info(f"wrote {output}: {n} examples, {stats['paragraphs']} paragraphs "
                f"({stats['paragraphs'] / max(n, 1):.1f} per example) in {seconds:.1f} s "
                f"({n / seconds:.0f} examples/s); {stats['empty']} empty paragraphs dropped; "
                f"{stats['long']} paragraphs scored on their first {max_tokens} tokens only; "
                f"{scorer.unk_tokens} of {scorer.tokens} scored tokens not in the dictionary "
                f"(<unk>)")
    if keep > 0:
        logger.info(f"--keep {keep}: {stats['cut']} paragraphs cut in "
                    f"{stats['cut_examples']} examples")
    return n
