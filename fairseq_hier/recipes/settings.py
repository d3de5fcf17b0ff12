"""Each architecture's published training and decoding settings, and how they are scaled to a
user's data set and GPUs (``fairseq-hier settings``; the recipe ``examples/own_data/``).

The paper's form is kept: its model shape, input cut, optimiser, learning rate, schedule,
criterion, effective batch and decoding rules. Three things follow the user's data and machine,
and each is said in the log with the numbers it came from:

- **updates**: as many epochs as the paper trained, i.e. the paper's updates x (the user's
  training examples / the paper's), never more than the paper's updates and never fewer than
  :data:`MIN_UPDATES` (or the paper's, if fewer). Warm-up, the step schedule's decay period,
  ``--total-num-update`` and the checkpoint interval shrink by the same factor.
- **the effective batch**: the paper's examples (or tokens) per update on its GPUs, kept on any
  number of GPUs: ``--update-freq`` is the paper's GPUs x accumulation / the user's GPUs
  (rounded up); with more GPUs than that, the per-GPU batch shrinks instead.
- **decoding lengths** (``--targets``, the training targets in subword tokens): the longest
  summary allowed is the 99th percentile of the training targets' lengths (at most the model's
  target positions), and where the paper sets a minimum length, the minimum is their 5th
  percentile.

Every option can be overridden: the user's fairseq arguments replace the setting of the same
name (the log names each one); a new per-GPU batch keeps the effective batch through
``--update-freq`` unless that is given too. The user's training arguments are parsed with
fairseq-train's own parser for the task (:func:`check_train_options`) before they are printed:
an unknown option or a malformed value is an error, as fairseq-train would find it later.
"""

import math
import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import HierError

#: the fewest updates a scaled run gets (unless the paper trains fewer)
MIN_UPDATES = 1000

ADAM_NOAM = ("--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--adam-eps", "1e-09",
             "--lr-scheduler", "inverse_sqrt")
LABEL_SMOOTHING = ("--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1")


@dataclass(frozen=True)
class Paper:
    """One architecture's published setup (the paper's form; see docs/papers.md for the ids)."""

    arch: str
    source: str  # where the settings are stated
    dataset: str  # the data set they were tuned on
    train_examples: int  # its training examples
    task: str
    subword: str  # sentencepiece | gpt2
    model: Tuple[str, ...]  # arch, shape and the task's input cut
    optimisation: Tuple[str, ...]  # optimiser, lr, schedule (without its lengths), criterion ...
    batch_option: str  # --batch-size (examples) or --max-tokens (tokens), per GPU
    batch: int
    gpus: int  # the paper's GPUs
    update_freq: int  # and its accumulation
    updates: int
    warmup: int
    interval: int  # updates between checkpoints (and validations)
    generation: Tuple[str, ...]  # fairseq-generate's options, max length last
    max_len: int  # the paper's longest output (--max-len-b)
    min_len: Optional[int] = None  # its shortest, where it sets one
    decay_period: Optional[int] = None  # the step scheduler's --lr-deacy-period
    polynomial: bool = False  # --total-num-update = the updates
    parse: bool = False  # needs spaCy's dependency parse (--dependency-parse spacy)
    pretrained: Optional[str] = None  # fine-tuned from this BART (fairseq's name)
    max_target_positions: int = 1024
    langs: Tuple[str, str] = ("src", "tgt")  # the binarized files' suffixes


# PHT/VHT: 000 Sec. 4.2 and 001 Sec. 5.2 (model, optimiser, decoding rules). Not in 000 or 001:
# the batch of 16 examples is the authors' (yema2018/wiki_sum README.md line 15 "--batch_size
# 16", main.py line 26 default=16 at fb7d827; earlier commits of main.py default to 28); the
# comma exempt from blocking is their id 10, '\u2581,' (main.py eval_by_beam_search, "while 10 in
# bnw_block"), skipped when the two previous tokens are counted (PreviousTokenBlocker)
PHT = dict(
    source="000 Sec. 4.2, 001 Sec. 5.2", dataset="WikiSum (ranked)", train_examples=1_579_360,
    task="hierarchical_summarization", subword="sentencepiece",
    optimisation=ADAM_NOAM + ("--lr", "4.94e-4", "--criterion", "cross_entropy"),
    batch_option="--batch-size", batch=16, gpus=1, update_freq=1, updates=600_000,
    warmup=16_000, interval=20_000,
    generation=("--beam", "5", "--lenpen", "1.0", "--no-repeat-ngram-size", "3",
                "--block-previous-tokens", "2", "--block-previous-exceptions", "\u2581,"),
    max_len=200)
PHT_CUT = ("--max-paragraphs", "30", "--max-paragraph-tokens", "100")
# 003 Sec. 3.2 and footnotes 2-3 (examples/mds_common/README.md)
MDS = dict(
    dataset="Multi-News", train_examples=44_972, task="hierarchical_summarization",
    subword="sentencepiece", gpus=1, update_freq=1, batch_option="--max-tokens",
    optimisation=("--optimizer", "adam", "--adam-betas", "(0.9, 0.998)", "--dropout", "0.1",
                  "--lr", "1e-3", "--lr-scheduler", "step", "--lr-decay", "0.5"),
    max_len=300, min_len=200)
MDS_CUT = ("--max-paragraphs", "10", "--max-paragraph-tokens", "160")
# the flat systems: the documents concatenated and cut to 500 pieces (Fabbri et al.'s
# -src_seq_length_trunc 500, examples/mds_common/train.sh)
MDS_FLAT = ("--max-paragraphs", "10", "--max-paragraph-tokens", "500",
            "--max-source-positions", "500")
# FT: Fabbri et al.'s OpenNMT scripts (003 footnote 3): no label smoothing (OpenNMT's copy loss
# ignores it); Wu's length penalty 0.9, the summary coverage penalty 5, trigram blocking
FT = dict(MDS, source="003 Sec. 3.2, footnote 3", batch=4096, updates=20_000, warmup=8000,
          decay_period=4000, interval=2000,
          optimisation=MDS["optimisation"] + ("--criterion", "label_smoothed_cross_entropy",
                                              "--label-smoothing", "0"),
          generation=("--beam", "5", "--length-penalty-form", "wu", "--lenpen", "0.9",
                      "--coverage-penalty", "summary", "--coverage-beta", "5",
                      "--no-repeat-ngram-size", "3"))
# HT: Liu & Lapata's code (003 footnote 2): label smoothing 0.1, Wu's length penalty 0.4, no
# blocking, the search ended when its top beam ends (hiersumm's predictor_builder.py l. 328-329)
HT = dict(MDS, source="003 Sec. 3.2, footnote 2", batch=13_000, updates=100_000, warmup=8000,
          decay_period=20_000, interval=5000,
          optimisation=MDS["optimisation"] + LABEL_SMOOTHING,
          generation=("--beam", "5", "--length-penalty-form", "wu", "--lenpen", "0.4",
                      "--stop-on-top-beam"))
# 004 Sec. 4.1, arXiv/PubMed (examples/hat_common, examples/hat_arxiv)
HAT = dict(
    source="004 Sec. 4.1", dataset="arXiv", train_examples=203_037, task="hat_summarization",
    subword="gpt2", langs=("source", "target"),
    optimisation=("--dropout", "0.1", "--attention-dropout", "0.1", "--weight-decay", "0.01",
                  "--optimizer", "adam", "--adam-betas", "(0.9, 0.999)", "--adam-eps", "1e-08",
                  "--lr-scheduler", "polynomial_decay", "--lr", "3e-5",
                  "--required-batch-size-multiple", "1") + LABEL_SMOOTHING,
    batch_option="--batch-size", batch=4, gpus=2, update_freq=16, updates=30_000, warmup=900,
    interval=3000, polynomial=True, generation=("--beam", "2", "--lenpen", "1.0"),
    max_len=966, min_len=72)
HAT_SOURCE = ("--max-source-positions", "3072")

PAPERS: Dict[str, Paper] = {p.arch: p for p in (
    Paper("pht", model=("--arch", "pht") + PHT_CUT, **PHT),
    Paper("vht", model=("--arch", "vht") + PHT_CUT, **PHT),
    Paper("liu_ht", source="002 Sec. 4", dataset="WikiSum (ranked)", train_examples=1_579_360,
          task="hierarchical_summarization", subword="sentencepiece",
          model=("--arch", "liu_ht", "--max-paragraphs", "24", "--max-paragraph-tokens", "500"),
          optimisation=("--optimizer", "adam", "--adam-betas", "(0.9, 0.998)", "--adam-eps",
                        "1e-09", "--lr-scheduler", "inverse_sqrt", "--lr", "1.3975e-3",
                        "--warmup-init-lr", "0") + LABEL_SMOOTHING,
          batch_option="--max-tokens", batch=10_500, gpus=1, update_freq=16, updates=500_000,
          warmup=8000, interval=5000,
          # 002 Sec. 4: beam 5, Wu's length penalty alpha 0.4, "until an end-of-sequence token";
          # hiersumm (nlpyang/hiersumm), the paper's code: README.md line 43, the evaluation
          # command, "-alpha 0.4 -max_length 400"; src/train_abstractive.py line 376
          # "-min_length', default=20" (the command keeps it); its predictor ends a search when
          # the top beam ends (src/abstractive/predictor_builder.py line 328 "End condition is
          # top beam is finished")
          generation=("--beam", "5", "--length-penalty-form", "wu", "--lenpen", "0.4",
                      "--stop-on-top-beam"),
          max_len=400, min_len=20),
    Paper("transformer_copy", model=("--arch", "transformer_copy") + MDS_FLAT, **FT),
    # fairseq's post-LN Transformer with FT's shape and settings (not OpenNMT's pre-LN form of
    # transformer_copy): a plain fairseq baseline beside 003's FT
    Paper("transformer", model=("--arch", "transformer", "--encoder-layers", "4",
                                "--decoder-layers", "4", "--share-all-embeddings") + MDS_FLAT,
          **FT),
    Paper("parsingsum_ft", model=("--arch", "parsingsum_ft", "--dependency-parse", "spacy")
          + MDS_FLAT, parse=True, **FT),
    Paper("parsingsum_ht", model=("--arch", "parsingsum_ht", "--dependency-parse", "spacy")
          + MDS_CUT, parse=True, **HT),
    Paper("hat_bart_large", model=("--arch", "hat_bart_large") + HAT_SOURCE,
          pretrained="bart.large", **HAT),
    Paper("long_bart_large", model=("--arch", "long_bart_large") + HAT_SOURCE,
          pretrained="bart.large", **HAT),
    Paper("hat_bart_base", model=("--arch", "hat_bart_base") + HAT_SOURCE,
          pretrained="bart.base", **HAT),
    Paper("long_bart_base", model=("--arch", "long_bart_base") + HAT_SOURCE,
          pretrained="bart.base", **HAT),
)}


def paper(arch: str) -> Paper:
    if arch not in PAPERS:
        raise HierError(f"no recipe settings for --arch {arch} (expected one of "
                        f"{', '.join(PAPERS)})")
    return PAPERS[arch]


# ---------------------------------------------------------------------------------------------
# fairseq argument lists
# ---------------------------------------------------------------------------------------------

def split_options(args: Sequence[str]) -> List[Tuple[str, List[str]]]:
    """``["--lr", "1e-3", "--fp16", "--x=1"]`` -> ``[("--lr", ["1e-3"]), ("--fp16", []),
    ("--x", ["1"])]``: each option with the values that follow it (a value never starts with
    ``--``)."""
    groups: List[Tuple[str, List[str]]] = []
    for arg in args:
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            groups.append((name, [value] if eq else []))
        elif groups:
            groups[-1][1].append(arg)
        else:
            raise HierError(f"{arg!r}: a fairseq option (--name [value]) is expected first")
    return groups


def join_options(groups: Sequence[Tuple[str, List[str]]]) -> List[str]:
    return [word for name, values in groups for word in (name, *values)]


def merge(ours: Sequence[str], yours: Sequence[str]) -> Tuple[List[str], List[str]]:
    """(ours with every option of ``yours`` replacing ours of the same name, the rest of
    ``yours`` appended; log lines naming each replaced setting)."""
    mine = split_options(ours)
    given = dict(split_options(yours))
    notes, out = [], []
    for name, values in mine:
        if name in given:
            theirs = given.pop(name)
            if theirs != values:
                notes.append(f"{' '.join([name, *theirs])} (yours; the setting was "
                             f"{' '.join([name, *values])})")
            out.append((name, theirs))
        else:
            out.append((name, values))
    out += list(given.items())
    notes += [f"{' '.join([n, *v])} (yours)" for n, v in given.items()]
    return join_options(out), notes


# ---------------------------------------------------------------------------------------------
# scaling
# ---------------------------------------------------------------------------------------------

@dataclass
class Scaled:
    """The numbers of one run: what a paper's settings become on the user's data and GPUs."""

    updates: int
    warmup: int
    interval: int
    decay_period: Optional[int]
    batch: int  # per GPU
    update_freq: int
    notes: List[str] = field(default_factory=list)


def scale(p: Paper, examples: int, gpus: int, batch: Optional[int] = None,
          update_freq: Optional[int] = None) -> Scaled:
    """The paper's updates scaled to ``examples`` training examples and its effective batch
    kept on ``gpus`` GPUs (``batch``, ``update_freq``: the user's, where given)."""
    if examples < 1:
        raise HierError(f"--examples {examples}: the training split has no example")
    ratio = examples / p.train_examples
    updates = min(p.updates, max(min(MIN_UPDATES, p.updates), math.ceil(p.updates * ratio)))
    factor = updates / p.updates

    def shrink(n: int) -> int:
        return max(1, round(n * factor))

    notes = [f"{p.arch}: {p.source}, tuned on {p.dataset} ({p.train_examples:,} training "
             f"examples, {p.updates:,} updates)"]
    notes.append(f"updates: {updates:,} from the paper's {p.updates:,} x {examples:,} / "
                 f"{p.train_examples:,} examples = {p.updates * ratio:,.0f} (the same epochs), "
                 f"at least {min(MIN_UPDATES, p.updates):,} and at most the paper's; warm-up "
                 f"{shrink(p.warmup):,} (paper {p.warmup:,}), a checkpoint every "
                 f"{shrink(p.interval):,} (paper {p.interval:,})")
    per_gpu, freq, note = keep_effective_batch(p.batch_option, p.batch, p.gpus, p.update_freq,
                                               gpus, smallest_batch(p), batch, update_freq)
    notes.append(note)
    decay = shrink(p.decay_period) if p.decay_period else None
    return Scaled(updates, shrink(p.warmup), shrink(p.interval), decay, per_gpu, freq,
                  notes)


def smallest_batch(p: Paper) -> int:
    """The smallest per-GPU batch that holds one example at the paper's cut: 1 example, or the
    tokens of the longest source the cut lets through (flat: --max-source-positions; paragraphs:
    max-paragraphs x max-paragraph-tokens), at most the paper's batch."""
    if p.batch_option == "--batch-size":
        return 1
    model = dict(split_options(p.model))
    if "--max-paragraphs" in model and "--max-source-positions" not in model:
        longest = int(model["--max-paragraphs"][0]) * int(model["--max-paragraph-tokens"][0])
    else:
        longest = int(model.get("--max-source-positions", ["1024"])[0])
    return min(longest, p.batch)


def keep_effective_batch(option: str, batch: int, paper_gpus: int, paper_update_freq: int,
                         gpus: int, smallest: int = 1, yours: Optional[int] = None,
                         your_update_freq: Optional[int] = None) -> Tuple[int, int, str]:
    """(per-GPU batch, --update-freq, a log line) that keep the paper's effective batch,
    ``batch`` (of ``option``: --batch-size or --max-tokens) x ``paper_gpus`` x
    ``paper_update_freq``, on ``gpus`` GPUs: the accumulation shrinks first (rounded up), then,
    with more GPUs than the paper's GPUs x accumulation, the per-GPU batch (to no fewer than
    ``smallest``: one example must fit; the log says when the paper's batch cannot be kept).
    ``yours``, ``your_update_freq``: the user's values, kept."""
    if gpus < 1:
        raise HierError(f"--gpus {gpus}: at least 1 (1 on a machine without a GPU)")
    unit = "examples" if option == "--batch-size" else "tokens"
    effective = batch * paper_gpus * paper_update_freq
    per_gpu = batch if yours is None else yours
    if yours is None and your_update_freq is None and gpus > paper_gpus * paper_update_freq:
        per_gpu = max(smallest, math.ceil(effective / gpus))
    freq = your_update_freq or max(1, math.ceil(effective / (per_gpu * gpus)))
    note = (f"effective batch: {per_gpu:,} {unit} x {gpus} GPU(s) x update-freq {freq} = "
            f"{per_gpu * gpus * freq:,} {unit} per update (the paper: {batch:,} x {paper_gpus} "
            f"GPU(s) x {paper_update_freq} = {effective:,})")
    if per_gpu * gpus * freq != effective and yours is None and your_update_freq is None:
        if per_gpu == smallest and smallest * gpus > effective:
            note += (f"; more than the paper's: a GPU needs at least {smallest:,} {unit} (one "
                     f"example at the cut), so use fewer GPUs to train with the paper's batch")
        else:
            note += f"; the nearest to the paper's that {gpus} GPUs allow"
    return per_gpu, freq, note


def train_options(p: Paper, s: Scaled) -> List[str]:
    """fairseq-train's options (without the data, --user-dir, --save-dir and the BART init)."""
    args = ["--task", p.task]
    if p.langs != ("src", "tgt"):
        args += ["--source-lang", p.langs[0], "--target-lang", p.langs[1]]
    args += [*p.model, *p.optimisation, "--warmup-updates", str(s.warmup)]
    if s.decay_period:
        args += ["--lr-deacy-period", str(s.decay_period)]  # fairseq's spelling
    if p.polynomial:
        args += ["--total-num-update", str(s.updates)]
    args += [p.batch_option, str(s.batch), "--update-freq", str(s.update_freq),
             "--max-update", str(s.updates), "--save-interval-updates", str(s.interval),
             "--validate-interval-updates", str(s.interval), "--keep-interval-updates", "2",
             "--no-epoch-checkpoints", "--skip-invalid-size-inputs-valid-test"]
    return args


def train_settings(arch: str, examples: int, gpus: int,
                   yours: Sequence[str] = ()) -> Tuple[List[str], List[str]]:
    """(fairseq-train's options, the log lines that say how they were chosen)."""
    p = paper(arch)
    given = dict(split_options(yours))

    def number(name: str) -> Optional[int]:
        values = given.get(name)
        if not values:
            return None
        try:
            return int(values[0])
        except ValueError:
            raise HierError(f"{name} {values[0]}: an integer is expected") from None

    s = scale(p, examples, gpus, number(p.batch_option), number("--update-freq"))
    args, notes = merge(train_options(p, s), yours)
    return args, s.notes + [f"overridden: {n}" for n in notes]


def percentile(lengths: Sequence[int], q: float) -> int:
    """The ``q``-th percentile (nearest rank) of ``lengths``."""
    ordered = sorted(lengths)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def generation_settings(arch: str, target_lengths: Optional[Sequence[int]] = None,
                        yours: Sequence[str] = ()) -> Tuple[List[str], List[str]]:
    """(fairseq-generate's options, the log lines): the paper's decoding rules, with its lengths
    or, given the training targets' lengths (subword tokens), lengths from the data."""
    p = paper(arch)
    max_len, min_len = p.max_len, p.min_len
    if target_lengths:
        longest = min(percentile(target_lengths, 99), p.max_target_positions)
        note = (f"decoding lengths from {len(target_lengths):,} training targets: at most "
                f"{longest} tokens (their 99th percentile; the paper: {p.max_len})")
        max_len = longest
        if p.min_len is not None:
            min_len = min(percentile(target_lengths, 5), longest)
            note += f", at least {min_len} (their 5th percentile; the paper: {p.min_len})"
        notes = [note]
    else:
        notes = [f"decoding lengths: the paper's ({p.dataset})"]
    args = list(p.generation)
    if min_len is not None:
        args += ["--min-len", str(min_len)]
    args += ["--max-len-a", "0", "--max-len-b", str(max_len)]
    args, overridden = merge(args, yours)
    return args, [f"{arch}: decoding as {p.source}"] + notes + [f"overridden: {n}"
                                                                for n in overridden]


def check_train_options(arch: str, options: Sequence[str], yours: Sequence[str]) -> None:
    """Parse ``options`` (the train settings with ``yours`` merged) with fairseq-train's parser
    for the paper's task, as fairseq-train will parse them: :class:`HierError` naming an unknown
    option or a malformed value (``--max-update x``). (Generation options are checked by
    :func:`fairseq_hier.inference.record.check_generation`, the check of recorded decoding
    options.)"""
    from fairseq import options as fairseq_options  # lazily: only for options you give

    from .. import register

    p = paper(arch)

    def error(message: str):
        raise HierError(f"fairseq options after --: {message}")

    register()  # our tasks' and models' options, as --user-dir adds them
    parser = fairseq_options.get_training_parser(default_task=p.task)
    parser.error = error  # argparse's errors (a bad value or choice) exit the process otherwise
    _, unknown = fairseq_options.parse_args_and_arch(parser, ["DATA_BIN", *options],
                                                     parse_known=True)
    if unknown:
        given = {name for name, _ in split_options(yours)}
        ours = [w for w in unknown if w.startswith("-") and w.split("=")[0] not in given]
        if ours and len(ours) == len([w for w in unknown if w.startswith("-")]):
            error(f"the paper's {' '.join(ours)} do not apply with your options "
                  f"({' '.join(yours)}): fairseq-train would refuse them")
        error(f"unknown option(s) {' '.join(unknown)} (fairseq-train's options, task {p.task}'s "
              f"and those of the model, optimizer and scheduler named are expected)")


#: the arch a run.json gives a system without a model: its name (fairseq_hier.baselines, the
#: demo's fact baselines of fairseq-hier-demo-facts)
BASELINES = ("lead", "lexrank", "frequent", "first")


def check_arch_and_task(arch: str, task: str) -> None:
    """Raise :class:`HierError` naming ``--arch`` or ``--task`` unless fairseq knows them: an
    architecture of ``fairseq-train --arch`` (fairseq-hier's registered) or a baseline
    (:data:`BASELINES`), a task of ``--task``. Those of :data:`PAPERS` are known without
    importing fairseq (seconds)."""
    if (arch in PAPERS or arch in BASELINES) and task in {p.task for p in PAPERS.values()}:
        return
    from fairseq.models import ARCH_MODEL_REGISTRY  # lazily: only for names beyond PAPERS'
    from fairseq.tasks import TASK_REGISTRY

    from .. import register

    register()
    if arch not in ARCH_MODEL_REGISTRY and arch not in BASELINES:
        raise HierError(f"--arch {arch}: no such architecture (fairseq-train --arch's choices, "
                        f"fairseq-hier's included, or a baseline: {', '.join(BASELINES)})")
    if task not in TASK_REGISTRY:
        raise HierError(f"--task {task}: no such task (fairseq-train --task's choices, "
                        f"fairseq-hier's included)")


def facts(arch: str) -> List[Tuple[str, str]]:
    """What the recipe's other steps need to know of ``arch``, as shell assignments."""
    p = paper(arch)
    return [("TASK", p.task), ("SUBWORD", p.subword), ("PARSE", "1" if p.parse else "0"),
            ("PRETRAINED", p.pretrained or ""), ("SRC", p.langs[0]), ("TGT", p.langs[1]),
            ("PAPER", p.source)]


def shell_assignments(pairs: Sequence[Tuple[str, str]]) -> str:
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in pairs)


def count_gpus() -> int:
    """The GPUs this process sees (at least 1: a machine without one trains on its CPU)."""
    import torch  # heavy: only when the count is not given

    return max(1, torch.cuda.device_count())
