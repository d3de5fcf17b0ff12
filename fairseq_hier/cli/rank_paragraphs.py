"""``fairseq-hier-rank``: order every example's paragraphs by a trained paragraph ranker (Liu &
Lapata 2019, paper 002 Sec. 3.1: "input paragraphs are ranked based on the model predicted
scores"), writing the raw sources of the summarisation task.

    fairseq-hier-rank --path checkpoints/checkpoint_best.pt --source R/test.src \\
        --output ranked/test.src [--keep 40] [--scores-out ranked/test.scores]
    fairseq-hier-rank --path ranker.pt --input-format jsonl --source test.jsonl \\
        --spm-model spm.model --output ranked/test.src

Input (``--input-format``):
- ``raw``: our format, ``title <P> paragraph <P> paragraph ...`` per line, paragraphs in any
  order, split as the ranker's training data (:mod:`fairseq_hier.data.ranking_dataset`: the
  title before the first separator, the non-empty segments after it, empty ones counted);
- ``jsonl``: one object per line, ``{"title": str, "documents": [str, ...]}``; each document is
  split into paragraphs at its line breaks (as 002 does), blank ones dropped; title and paragraphs
  are tokenised by whitespace, or into sentencepiece pieces with ``--spm-model`` (the model the
  ranker's dictionary was built with).

Output: one line per example, ``title <P> p_(1) <P> p_(2) ...``, the title first and the
paragraphs by descending score (ties keep the input order), all of them or the first ``--keep``
(the cut is logged), which ``fairseq-preprocess`` binarises for ``hierarchical_summarization``.
``--scores-out``: the sigmoid scores s (Eq. 6) of the written paragraphs in the written order,
one line per example (the format of the task's ``--align-ranker-scores``).

Each paragraph is scored as the ranker was trained: token ids of the checkpoint task's
dictionary (tokens outside it become ``<unk>``, counted), cut to the task's
``--max-paragraph-tokens`` (the written paragraph is whole), the title cut likewise. The model
reads each paragraph with its title only, so an example's paragraphs are scored in chunks of at
most ``--batch-size`` paragraphs (folded into one ``B x P x L`` batch with other examples').
Runs on the GPU when there is one, unless ``--cpu``. Errors, one line naming file and line: an
example without paragraph, a jsonl line that is not such an object, a paragraph holding the
separator token.
"""

import json
import logging
import os
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.cli.rank_labels import count_lines, iter_lines
from fairseq_hier.data.rouge_ngrams import split_source
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.rank")
PROG = "fairseq-hier-rank"


@dataclass
class Record:
    """One example to rank: its line number, title tokens, paragraphs (token lists), empty
    paragraphs dropped."""

    number: int
    title: List[str]
    paragraphs: List[List[str]]
    empty: int


def read_raw(path: str, separator: str) -> Iterator[Record]:
    for number, line in enumerate(iter_lines(path), start=1):
        title, paragraphs, empty = split_source(line, separator)
        yield Record(number, title, paragraphs, empty)


def whitespace_tokenizer(text: str) -> List[str]:
    return text.split()


def spm_tokenizer(model: str) -> Callable[[str], List[str]]:
    """The sentencepiece pieces of a text (``--spm-model``)."""
    if not os.path.isfile(model):
        raise HierError(f"--spm-model {model}: no such file")
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=model)
    return lambda text: sp.encode(text, out_type=str)


def read_jsonl(path: str, separator: str, tokenize: Callable[[str], List[str]]) -> Iterator[Record]:
    """Records of ``{"title": str, "documents": [str, ...]}`` lines; paragraphs = the non-blank
    lines of the documents, in order."""
    for number, line in enumerate(iter_lines(path), start=1):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise HierError(f"{path}:{number}: not JSON ({e.msg} at column {e.colno})") from None
        docs = obj.get("documents") if isinstance(obj, dict) else None
        if (not isinstance(obj, dict) or not isinstance(obj.get("title", ""), str)
                or not isinstance(docs, list) or not all(isinstance(d, str) for d in docs)):
            raise HierError(f'{path}:{number}: expected {{"title": str, "documents": [str, ...]}}')
        title = tokenize(obj.get("title", ""))
        paragraphs, empty = [], 0
        for text in (p for d in docs for p in d.split("\n")):
            tokens = tokenize(text)
            if separator in tokens:
                raise HierError(f"{path}:{number}: a paragraph holds the separator token "
                                f"{separator!r}; choose another --paragraph-separator")
            if tokens:
                paragraphs.append(tokens)
            else:
                empty += 1
        if separator in title:
            raise HierError(f"{path}:{number}: the title holds the separator token {separator!r}")
        yield Record(number, title, paragraphs, empty)


def load_ranker(path: str, data: Optional[str], cpu: bool, trust: bool = False):
    """(model in eval mode on its device, task) of a ``paragraph_ranking`` checkpoint
    (``trust``: loaded as a trusted file, see :mod:`fairseq_hier.safe_loading`)."""
    import torch

    import fairseq_hier

    fairseq_hier.register()
    from fairseq import checkpoint_utils

    from fairseq_hier.tasks.paragraph_ranking import ParagraphRankingTask

    if not os.path.isfile(path):
        raise HierError(f"--path {path}: no such checkpoint")
    overrides = {"data": data} if data else None
    from fairseq_hier.safe_loading import expecting_task, trusting

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
        import torch

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
        from fairseq import utils

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


def run(args) -> int:
    from tqdm import tqdm

    from fairseq_hier.io import atomic_outputs

    model, task = load_ranker(args.path, args.data, args.cpu, args.trust_checkpoint)
    separator = args.paragraph_separator or task.cfg.paragraph_separator
    max_tokens = args.max_paragraph_tokens or task.cfg.max_paragraph_tokens
    if args.input_format == "jsonl":
        tokenize = spm_tokenizer(args.spm_model) if args.spm_model else whitespace_tokenizer
        records = read_jsonl(args.source, separator, tokenize)
    else:
        records = read_raw(args.source, separator)
    scorer = Scorer(model, task, args.batch_size, max_tokens)
    stats = dict(examples=0, paragraphs=0, empty=0, cut=0, cut_examples=0, long=0)
    outputs = [args.output] + ([args.scores_out] if args.scores_out else [])
    start = time.time()
    logger.info(f"ranking {args.source} on {scorer.device}: paragraphs and titles scored on "
                f"their first {max_tokens} tokens, separator {separator!r}")
    with atomic_outputs(outputs, inputs=[args.source, args.path, args.spm_model]) as handles:
        out, scores_out = handles[0], (handles[1] if args.scores_out else None)
        bar = tqdm(total=count_lines(args.source), unit="ex", mininterval=1.0, desc="rank",
                   disable=args.no_progress_bar)

        def write(done):
            for record, logits in done:
                cut = write_ranked(record, logits, separator, args.keep, out, scores_out)
                stats["cut"] += cut
                stats["cut_examples"] += cut > 0
                bar.update(1)

        for record in records:
            if not record.paragraphs:
                raise HierError(f"{args.source}:{record.number}: no paragraph to rank (no "
                                f"non-empty segment after a {separator!r} separator)")
            stats["examples"] += 1
            stats["paragraphs"] += len(record.paragraphs)
            stats["empty"] += record.empty
            stats["long"] += sum(len(p) > max_tokens for p in record.paragraphs)
            write(scorer.add(record))
        write(scorer.flush())
        bar.close()
    n, seconds = stats["examples"], max(time.time() - start, 1e-9)
    logger.info(f"wrote {args.output}: {n} examples, {stats['paragraphs']} paragraphs "
                f"({stats['paragraphs'] / max(n, 1):.1f} per example) in {seconds:.1f} s "
                f"({n / seconds:.0f} examples/s); {stats['empty']} empty paragraphs dropped; "
                f"{stats['long']} paragraphs scored on their first {max_tokens} tokens only; "
                f"{scorer.unk_tokens} of {scorer.tokens} scored tokens not in the dictionary "
                f"(<unk>)")
    if args.keep > 0:
        logger.info(f"--keep {args.keep}: {stats['cut']} paragraphs cut in "
                    f"{stats['cut_examples']} examples")
    return n


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--path", required=True, help="checkpoint of fairseq-train --task "
                                                 "paragraph_ranking --arch paragraph_ranker")
    p.add_argument("--source", required=True, help="examples to rank (see --input-format)")
    p.add_argument("--output", required=True,
                   help="ranked raw sources: title <P> best paragraph <P> next ...")
    p.add_argument("--input-format", choices=("raw", "jsonl"), default="raw",
                   help='raw: title <P> paragraph <P> ... per line; jsonl: {"title": str, '
                        '"documents": [str, ...]} per line, paragraphs at line breaks')
    p.add_argument("--spm-model", help="jsonl: tokenise into the pieces of this sentencepiece "
                                       "model (default: whitespace tokens)")
    p.add_argument("--keep", type=count, default=0,
                   help="write only the N best paragraphs of each example (default 0: all)")
    p.add_argument("--scores-out", help="also write the scores of the written paragraphs, in "
                                        "their written order, one line per example")
    p.add_argument("--batch-size", type=positive_int, default=1000,
                   help="paragraphs scored per forward pass (default 1000)")
    p.add_argument("--max-paragraph-tokens", type=count, default=0,
                   help="score paragraphs and titles on their first N tokens (default 0: the "
                        "checkpoint task's --max-paragraph-tokens)")
    p.add_argument("--paragraph-separator", default="",
                   help="paragraph-boundary token (default: the checkpoint task's)")
    p.add_argument("--data", help="folder holding the ranker's dict.src.txt (default: the "
                                  "checkpoint's training data folder)")
    p.add_argument("--cpu", action="store_true", help="run on the CPU even if a GPU is there")
    p.add_argument("--trust-checkpoint", action="store_true",
                   help="load a checkpoint that holds objects beyond weights and options "
                        "(torch.load(weights_only=False): it may run code; only for files you "
                        "trust)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    args = p.parse_args(argv)
    if args.spm_model and args.input_format != "jsonl":
        p.error("--spm-model tokenises jsonl input (--input-format jsonl); raw input is already "
                "tokenised")
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
