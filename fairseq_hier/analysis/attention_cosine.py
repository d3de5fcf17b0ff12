"""Paragraph-attention cosine of a trained system (000 Sec. 5.1, Table 1; 001 Sec. 7.1.1, Table 4).

:func:`gold_distribution` (the reference's normalised tf-idf similarity to each paragraph),
:func:`paragraph_sums` and :func:`summary_distribution` (a system's teacher-forced attention per
paragraph), the cosine with its bootstrap interval and the heatmap rows; run by
``fairseq-hier-analyse attention-cosine``. The readings chosen where the papers say no more
(paragraphs, terms and idf, excluded examples, each model kind's attention): docs/evaluation.md,
section fairseq_hier.analysis.attention_cosine.

Legend: B batch, T target steps, P paragraphs, L tokens per paragraph, S source (flat) or memory
tokens. Masks: True = padding.
Imports ``scoring``, ``preparation``, ``data``, ``text``, ``models``, ``io``, ``errors``; numpy,
torch,
fairseq.
"""

import logging
import os
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor

from ..errors import HierError
from ..preparation.attention_labels import teacher_forced_labels
from ..scoring.bootstrap import mean_interval
from ..text.tfidf import tfidf_vectors
from .generate_log import read_hypotheses

logger = logging.getLogger("fairseq_hier.attention_cosine")

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0


# ------------------------------------------------------------------------------- pure functions
def gold_distribution(paragraphs: Sequence[Sequence[str]], reference: Sequence[str]) -> np.ndarray:
    """The gold attention distribution (``P``, float64) of a reference over an example's
    paragraphs (token strings): tf-idf cosines, normalised to sum 1 (module docstring). All zero
    when the reference shares no term with any paragraph."""
    x = tfidf_vectors([*paragraphs, reference])  # (P + 1) x V, idf fit on all P + 1
    sims = x[:-1] @ x[-1]  # P cosines with the reference
    total = sims.sum()
    return sims / total if total > 0 else np.zeros(len(paragraphs))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors of the same length; ValueError on a zero vector."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise HierError(f"cosine of vectors of different sizes: {a.shape} vs {b.shape}")
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise HierError("cosine of a zero vector is undefined")
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


def flat_paragraph_index(src_tokens: Tensor, sep: int, eos: int, pad: int) -> Tensor:
    """``B x S`` flat sources (the dataset's flat layout: kept paragraphs joined by ``sep``, then
    EOS; padded either side) -> ``B x S`` long: the 0-based paragraph of each token (the number
    of separators before it), -1 for separators, EOS and padding."""
    is_sep = src_tokens.eq(sep)
    before = is_sep.long().cumsum(1) - is_sep.long()  # B x S: separators before each token
    text = ~is_sep & src_tokens.ne(eos) & src_tokens.ne(pad)
    return torch.where(text, before, before.new_full((), -1))


def memory_paragraph_index(src_tokens: Tensor, pad: int) -> Tensor:
    """``B x P x L`` paragraphs -> ``B x S`` long, the paragraph of each slot of liu_ht's flat
    memory (:func:`fairseq_hier.models.liu_ht.flat_memory`: an example's real tokens in
    paragraph then position order, re-padded to S, the most tokens of one example), -1 on the
    padding slots."""
    b, p, l = src_tokens.shape
    real = src_tokens.ne(pad).view(b, p * l)  # B x (P*L), row-major = memory order
    counts = real.sum(1)  # B
    s = int(counts.max())
    rank = torch.arange(p, device=src_tokens.device).repeat_interleave(l).expand(b, -1)  # B x PL
    slot = real.long().cumsum(1) - 1  # B x PL: memory slot of each real cell
    index = src_tokens.new_full((b, s), -1)
    rows = torch.arange(b, device=src_tokens.device).unsqueeze(1).expand(-1, p * l)
    index[rows[real], slot[real]] = rank[real]
    return index


def paragraph_sums(attn: Tensor, index: Tensor, num_paragraphs: int) -> Tensor:
    """``B x T x S`` token attention, ``B x S`` paragraph of each token (-1: none) ->
    ``B x T x P`` the attention summed over each paragraph's tokens (weight on tokens of no
    paragraph left out)."""
    b, t, s = attn.shape
    if index.shape != (b, s):
        raise HierError(f"attention over {s} source positions but a paragraph index of shape "
                        f"{tuple(index.shape)} (expected {(b, s)})")
    if int(index.max()) >= num_paragraphs:
        raise HierError(f"a token of paragraph {int(index.max()) + 1} but only {num_paragraphs} "
                        f"paragraphs")
    # -1 -> an extra column P, dropped after the scatter
    column = torch.where(index < 0, index.new_full((), num_paragraphs), index)
    out = attn.new_zeros(b, t, num_paragraphs + 1)
    out.scatter_add_(2, column.unsqueeze(1).expand(b, t, s), attn)  # B x T x (P+1)
    return out[..., :num_paragraphs]


def normalise_steps(step_attn: Tensor) -> Tensor:
    """``B x T x P`` -> each step renormalised over the paragraphs."""
    return step_attn / step_attn.sum(-1, keepdim=True).clamp(min=1e-12)


def summary_distribution(step_attn: Tensor, target: Tensor, pad: int) -> Tensor:
    """``B x T x P`` per-step paragraph distributions, ``B x T`` target -> ``B x P``: summed over
    the steps that predict a token or EOS (target not padding), normalised: the reading of
    :func:`fairseq_hier.preparation.attention_labels.teacher_forced_labels` (001 Eq. 14-16), which
    computes it fused with PHT's forward; tests check the two agree on a PHT."""
    steps = target.ne(pad).unsqueeze(-1).to(step_attn)  # B x T x 1
    total = (step_attn * steps).sum(1)  # B x P
    return total / total.sum(-1, keepdim=True).clamp(min=1e-12)


# -------------------------------------------------------------------------------- the systems
def attention_kind(model) -> str:
    """Which reading of the system's attention applies (module docstring); ValueError for a
    model whose decoder attention cannot be mapped onto paragraphs."""
    # the models import fairseq: imported here, so that reading and scoring attention files
    # (fairseq-hier-analyse attention-cosine without a checkpoint) never imports it
    from ..models.hierarchical_transformer import HierarchicalTransformerModel
    from ..models.liu_ht import LiuHTModel

    if isinstance(model, HierarchicalTransformerModel):
        return "paragraph"
    if isinstance(model, LiuHTModel):
        return "memory"
    if getattr(model, "hierarchical_source", False):
        raise HierError(f"{type(model).__name__} reads B x P x L sources but its decoder "
                        f"attention has no known mapping onto paragraphs (supported: pht, vht, "
                        f"liu_ht, parsingsum_ht and flat models such as transformer)")
    if not hasattr(model, "decoder"):
        raise HierError(f"{type(model).__name__} has no decoder cross-attention to read")
    return "flat"


def encode_hypotheses(hypotheses: Sequence[str], tgt_dict, path: str) -> List[Tensor]:
    """``H-`` strings -> target-dictionary tokens plus EOS; ValueError naming the examples
    holding a symbol the dictionary lacks (an ``H-`` line is made of dictionary symbols, unless
    fairseq-generate ran with ``--post-process`` / ``--remove-bpe``)."""
    unknown = []
    for i, hyp in enumerate(hypotheses):
        bad = [w for w in hyp.split() if tgt_dict.index(w) == tgt_dict.unk()
               and w != tgt_dict.unk_word]
        if bad:
            unknown.append((i, bad[0]))
    if unknown:
        shown = ", ".join(f"{i} ({w!r})" for i, w in unknown[:10])
        raise HierError(f"{path}: {len(unknown)} hypotheses hold symbols that are not in the "
                        f"target dictionary, example ids {shown}; run fairseq-generate without "
                        f"--post-process / --remove-bpe")
    return [tgt_dict.encode_line(h, add_if_not_exist=False, append_eos=True).long()
            for h in hypotheses]


def teacher_forcing_batch(dataset, ids: Sequence[int], targets: Sequence[Tensor]) -> dict:
    """The dataset's batch of examples ``ids`` (its source layout, graphs, parses) with the
    targets replaced by ``targets`` (e.g. the system's own hypotheses)."""
    samples = [dict(dataset[i], target=t) for i, t in zip(ids, targets)]
    return dataset.collater(samples)


def step_attention(model, kind: str, net_input: dict, num_paragraphs: int, sep: int, eos: int,
                   pad: int) -> Tensor:
    """``B x T x P`` per-step paragraph distributions of the teacher-forced ``net_input``."""
    _, extra = model(**net_input)
    attn = extra.get("attn", [None])[0] if isinstance(extra, dict) else None
    if attn is None:
        raise HierError(f"{type(model).__name__} returns no cross-attention (extra['attn'])")
    attn = attn.float()  # B x T x P (paragraph) or B x T x S
    if kind == "paragraph":
        return normalise_steps(attn[..., :num_paragraphs])
    src = net_input["src_tokens"]
    index = (memory_paragraph_index(src, pad) if kind == "memory"
             else flat_paragraph_index(src, sep, eos, pad))
    return normalise_steps(paragraph_sums(attn, index, num_paragraphs))


def system_distributions(model, kind: str, batch: dict, num_paragraphs: int, sep: int, eos: int,
                         pad: int) -> Tuple[Tensor, Optional[Tensor]]:
    """-> (``B x P`` the system's distributions, ``B x T x P`` per-step distributions or None
    when not computed: the paragraph kind reuses the label extraction's fused aggregation)."""
    net_input, target = batch["net_input"], batch["target"]
    if kind == "paragraph":
        _, eta, _ = teacher_forced_labels(model, net_input, target, pad)
        return eta[:, :num_paragraphs].float(), None
    steps = step_attention(model, kind, net_input, num_paragraphs, sep, eos, pad)
    return summary_distribution(steps, target, pad), steps


def example_gold(dataset, index: int) -> np.ndarray:
    """The gold distribution of example ``index`` over its kept paragraphs."""
    src_dict, tgt_dict = dataset.src_dict, dataset.tgt_dict
    rows = dataset.paragraphs(index)  # P x L, title inside row 0
    paragraphs = [[src_dict[t] for t in row.tolist() if t != src_dict.pad()] for row in rows]
    reference = [tgt_dict[t] for t in dataset.tgt[index].tolist() if t != tgt_dict.eos()]
    return gold_distribution(paragraphs, reference)


def score_split(model, task, split: str, hypotheses: Sequence[str], log_path: str,
                batch_size: int = 16, heatmaps: int = 3, use_cuda: bool = False,
                bootstrap_samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> dict:
    """Score the system ``model`` of ``task`` on ``split`` given its hypotheses (example order):
    the attention.json record (without ``arch`` / ``checkpoint``)."""
    from fairseq import utils

    dataset = task.datasets[split]
    n = len(dataset)
    if len(hypotheses) != n:
        raise HierError(f"{log_path}: {len(hypotheses)} hypotheses for {n} examples of split "
                        f"'{split}'")
    kind = attention_kind(model)
    tgt_dict = task.target_dictionary
    targets = encode_hypotheses(hypotheses, tgt_dict, log_path)
    sep, eos, pad = task.separator, task.source_dictionary.eos(), tgt_dict.pad()
    per_example: List[Optional[float]] = [None] * n
    excluded, maps = [], []
    for start in range(0, n, batch_size):
        ids = list(range(start, min(start + batch_size, n)))
        batch = teacher_forcing_batch(dataset, ids, [targets[i] for i in ids])
        batch = utils.move_to_cuda(batch) if use_cuda else batch
        num_p = int(dataset.num_paragraphs[ids].max())
        with torch.no_grad():
            system, steps = system_distributions(model, kind, batch, num_p, sep, eos, pad)
            if steps is None and ids[0] < heatmaps:
                steps = step_attention(model, kind, batch["net_input"], num_p, sep, eos, pad)
        system = system.cpu().double().numpy()
        for row, i in enumerate(ids):
            p = int(dataset.num_paragraphs[i])
            gold = example_gold(dataset, i)
            if gold.sum() == 0:
                excluded.append(i)
            else:
                per_example[i] = cosine(system[row, :p], gold)
            if i < heatmaps:
                t = len(targets[i])
                rows = [tgt_dict[x] for x in targets[i][:-1].tolist()] + ["</s>"]
                maps.append({"id": i, "rows": rows, "cols": [f"P{k + 1}" for k in range(p)],
                             "weights": normalise_steps(steps[row, :t, :p]).cpu().tolist(),
                             "gold": gold.tolist()})
    if excluded:
        logger.warning(f"[{split}] {len(excluded)} of {n} examples excluded: the reference shares "
                       f"no tf-idf term with any kept paragraph (gold all zero); ids "
                       f"{excluded[:10]}{' ...' if len(excluded) > 10 else ''}")
    scored = [c for c in per_example if c is not None]
    if not scored:
        raise HierError(f"split '{split}': no example has a gold distribution (every reference "
                        f"shares no term with its paragraphs)")
    mean, low, high = mean_interval(scored, bootstrap_samples, seed)
    logger.info(f"[{split}] {kind} attention of {len(scored)} examples scored, {len(excluded)} "
                f"excluded")
    return {"kind": "paragraph", "attention": kind, "split": split, "examples": len(scored),
            "cosine": {"mean": mean, "low": low, "high": high},
            "per_example": per_example, "excluded": {"zero_gold": excluded}, "heatmaps": maps}


def load_system(path: str, data: str, cut: Dict[str, int]):
    """(model, cfg, task) of a hierarchical_summarization checkpoint, through fairseq's
    checkpoint_utils; ``cut`` overrides the task's paragraph cut (``max_paragraphs``,
    ``max_paragraph_tokens``, ``max_source_positions``) as fairseq-generate's task options do:
    the task only, the model as trained. ValueError (one line) for a missing file or another
    task."""
    import pickle

    import fairseq_hier
    from fairseq import checkpoint_utils
    from omegaconf import open_dict

    fairseq_hier.register()
    if not os.path.exists(path):
        raise HierError(f"--path {path}: no such checkpoint")
    try:
        state = checkpoint_utils.load_checkpoint_to_cpu(path, {"data": data})
    except HierError:  # the safe loader's one line (a refused or unreadable checkpoint)
        raise
    except (RuntimeError, EOFError, ValueError, pickle.UnpicklingError) as e:
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise HierError(f"--path {path}: not a fairseq checkpoint ({why})") from None
    task_cfg = getattr(state.get("cfg"), "task", None)
    task_name = (getattr(task_cfg, "_name", None) or getattr(task_cfg, "task", None)
                 or getattr(state.get("args"), "task", None))
    if task_name != "hierarchical_summarization":
        hint = (" (HAT's sentence attention: fairseq-generate --print-sentence-attention, then "
                "fairseq-hier-analyse heatmap)" if task_name == "hat_summarization" else "")
        raise HierError(f"{path} is a checkpoint of task {task_name!r}; the paragraph-attention "
                        f"cosine needs one of task 'hierarchical_summarization'{hint}")
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [path], arg_overrides={"data": data}, state=state)
    if cut:
        with open_dict(task.cfg):  # a DictConfig in struct mode
            for name, value in cut.items():
                task.cfg[name] = value
    return models[0], cfg, task


def score_system(path: str, data: str, subset: str, generate_log: str, cut: Dict[str, int],
                 batch_size: int, heatmaps: int, cpu: bool = False, bootstrap_samples: int = 1000,
                 seed: int = 1) -> Tuple[dict, int]:
    """The attention.json record of the system ``path`` on split ``subset`` of ``data`` (its
    hypotheses read from ``generate_log``; ``cut``: overrides of the checkpoint's paragraph cut),
    and the number of examples of the split."""
    model, cfg, task = load_system(path, data, cut)
    task.load_dataset(subset)
    n = len(task.datasets[subset])
    hypotheses = read_hypotheses(generate_log, expected=n, kind="H")
    use_cuda = torch.cuda.is_available() and not cpu
    model = (model.cuda() if use_cuda else model).eval()
    record = score_split(model, task, subset, hypotheses, generate_log,
                         batch_size=batch_size, heatmaps=heatmaps, use_cuda=use_cuda,
                         bootstrap_samples=bootstrap_samples, seed=seed)
    arch = getattr(cfg.model, "arch", None) or getattr(cfg.model, "_name", None)
    return {"kind": record.pop("kind"), "arch": arch,
            "checkpoint": os.path.abspath(path), **record}, n
