"""The papers' settings (:mod:`fairseq_hier.recipes.architectures`, the one table) scaled to a
user's data set and GPUs (``fairseq-hier settings``; the recipe ``examples/own_data/``).

The paper's form is kept (model, input cut, optimiser, schedule, criterion, effective batch,
decoding rules); the updates follow the user's examples (the same epochs, at least
:data:`MIN_UPDATES`; warm-up, decay and checkpoints shrink alike), the effective batch is kept on
the user's GPUs through ``--update-freq``, and the decoding lengths may come from the training
targets (their 99th / 5th percentiles). Each choice is logged with its numbers; the user's
fairseq arguments replace the setting of the same name and are parsed with fairseq-train's own
parser (:func:`check_train_options`). The rules in full: ``examples/own_data/README.md``, "How
the settings are chosen".

May import: ``errors``, ``recipes.architectures`` and the standard library; torch inside
:func:`count_gpus`, fairseq inside the functions that parse options or look up names.
"""

import math
import shlex
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from ..errors import HierError
from .architectures import PAPERS, Architecture, variant

#: the fewest updates a scaled run gets (unless the paper trains fewer)
MIN_UPDATES = 1000


def paper(arch: str, dataset: Optional[str] = None) -> Architecture:
    """``arch``'s row of :data:`~fairseq_hier.recipes.architectures.ARCHITECTURES` with its
    paper settings (for ``dataset``: :func:`~fairseq_hier.recipes.architectures.variant`)."""
    if arch not in PAPERS:
        raise HierError(f"no recipe settings for --arch {arch} (expected one of "
                        f"{', '.join(PAPERS)})")
    return variant(arch, dataset)


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


def scale(p: Architecture, examples: int, gpus: int, batch: Optional[int] = None,
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


def smallest_batch(p: Architecture) -> int:
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


def train_options(p: Architecture, s: Scaled) -> List[str]:
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
    args = list(p.rules)
    if min_len is not None:
        args += ["--min-len", str(min_len)]
    args += ["--max-len-a", "0", "--max-len-b", str(max_len)]
    args, overridden = merge(args, yours)
    return args, [f"{arch}: decoding as {p.source}"] + notes + [f"overridden: {n}"
                                                                for n in overridden]


def check_train_options(arch: str, options: Sequence[str], yours: Sequence[str],
                        task: Optional[str] = None) -> None:
    """Parse ``options`` (the train settings with ``yours`` merged) with fairseq-train's parser
    for ``task`` (default: the paper's task of ``arch``), as fairseq-train will parse them:
    :class:`HierError` naming an unknown
    option or a malformed value (``--max-update x``). (Generation options are checked by
    :func:`fairseq_hier.inference.record.check_generation`, the check of recorded decoding
    options.)"""
    from fairseq import options as fairseq_options  # lazily: only for options you give

    from .. import register

    task = task or paper(arch).task

    def error(message: str):
        raise HierError(f"fairseq options after --: {message}")

    register()  # our tasks' and models' options, as --user-dir adds them
    parser = fairseq_options.get_training_parser(default_task=task)
    parser.error = error  # argparse's errors (a bad value or choice) exit the process otherwise
    _, unknown = fairseq_options.parse_args_and_arch(parser, ["DATA_BIN", *options],
                                                     parse_known=True)
    if unknown:
        given = {name for name, _ in split_options(yours)}
        ours = [w for w in unknown if w.startswith("-") and w.split("=")[0] not in given]
        if ours and len(ours) == len([w for w in unknown if w.startswith("-")]):
            error(f"the paper's {' '.join(ours)} do not apply with your options "
                  f"({' '.join(yours)}): fairseq-train would refuse them")
        error(f"unknown option(s) {' '.join(unknown)} (fairseq-train's options, task {task}'s "
              f"and those of the model, optimizer and scheduler named are expected)")


#: the arch a run.json gives a system without a model: its name (fairseq_hier.baselines, the
#: demo's fact baselines of fairseq-hier-demo facts)
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
