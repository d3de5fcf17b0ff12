"""From the task's decoding options to the keyword arguments of our generator (attention
alignment, token blocking, the length-penalty form, the coverage penalty and the stopping rule).

Kept apart from the generator so that the task reads its own config (fairseq's GenerationConfig
is closed) and every option is validated, with the flag named, before any batch is decoded.
"""

import logging
import math
from typing import Dict, Optional

import torch
from fairseq import checkpoint_utils

from .ranker_scores import RankerScores
from ..errors import HierError

logger = logging.getLogger(__name__)


def _load_predictor(path: str, like: torch.nn.Module, embed_dim: int) -> torch.nn.Module:
    """The attention-prediction model of ``path``, in eval mode, on the device/dtype of ``like``."""
    try:
        models, _ = checkpoint_utils.load_model_ensemble([path])
    except FileNotFoundError:
        raise HierError(f"--align-predictor {path}: no such checkpoint") from None
    predictor = models[0]
    input_dim = getattr(predictor, "input_dim", None)
    if input_dim is not None and input_dim != embed_dim:
        raise HierError(f"--align-predictor {path} reads {input_dim}-dim paragraph embeddings, "
                        f"the summarisation model's are {embed_dim}-dim")
    reference = next(like.parameters())
    return predictor.to(device=reference.device, dtype=reference.dtype).eval()


#: the generator's keyword arguments for fairseq's own scoring (length ** lenpen, no coverage)
NO_PENALTIES = {"length_penalty_form": "fairseq", "coverage_beta": None}


def decoding_penalties(cfg) -> Dict:
    """The length-penalty form and coverage penalty of the task's config, as the generator's
    keyword arguments (``coverage_beta`` None: no coverage penalty); checked here, before any
    batch."""
    form = str(getattr(cfg, "length_penalty_form", "fairseq"))
    coverage = str(getattr(cfg, "coverage_penalty", "none"))
    beta = getattr(cfg, "coverage_beta", 0.0)
    if form not in ("fairseq", "wu"):
        raise HierError(f"--length-penalty-form must be fairseq or wu, got {form!r}")
    if coverage not in ("none", "summary"):
        raise HierError(f"--coverage-penalty must be none or summary, got {coverage!r}")
    if not (beta >= 0 and math.isfinite(beta)):
        raise HierError(f"--coverage-beta must be a finite number >= 0, got {beta}")
    return {"length_penalty_form": form,
            "coverage_beta": float(beta) if coverage == "summary" else None}


def alignment_generator_kwargs(task, models, args) -> Optional[Dict]:
    """None when no option of ours is set (fairseq's generator is then used as is)."""
    cfg = task.cfg
    print_alignment = getattr(args, "print_alignment", None)
    hierarchical = all(getattr(m, "hierarchical_source", False) for m in models)
    scoring = decoding_penalties(cfg)
    wanted = (cfg.attention_alignment or cfg.align_keep_paragraphs > 0 or cfg.align_live_beams
              or cfg.block_previous_tokens > 0 or (print_alignment and hierarchical)
              or scoring != NO_PENALTIES or getattr(cfg, "stop_on_top_beam", False))
    # hierarchical models always get our generator: it gives --max-len-a its meaning for
    # B x P x L sources (fairseq's would multiply it by the number of paragraphs)
    if not wanted and not hierarchical:
        return None
    if not hierarchical and (cfg.attention_alignment or cfg.align_keep_paragraphs):
        raise HierError("--attention-alignment / --align-keep-paragraphs need a hierarchical "
                        "model (pht, vht): they use its paragraph attention")
    if print_alignment and not hierarchical:
        raise HierError("--print-alignment together with --block-previous-tokens, "
                        "--length-penalty-form wu or --coverage-penalty summary needs a "
                        "hierarchical model (fairseq's alignment generator handles flat ones)")
    strategy = str(cfg.align_strategy) if cfg.attention_alignment else None
    if cfg.align_epsilon <= 0:
        raise HierError(f"--align-epsilon must be > 0, got {cfg.align_epsilon}")
    if cfg.align_keep_paragraphs < 0:
        raise HierError(f"--align-keep-paragraphs must be >= 0, got {cfg.align_keep_paragraphs}")

    predictor = ranker = None
    needs_predictor = strategy == "attalign" or (cfg.align_keep_paragraphs and strategy != "extprob")
    if needs_predictor:
        if not cfg.align_predictor:
            raise HierError("--align-predictor PATH is required by --align-strategy attalign and "
                            "by --align-keep-paragraphs (except with --align-strategy extprob)")
        embed_dim = models[0].encoder.rank_encoding.embed_dim
        predictor = _load_predictor(cfg.align_predictor, models[0], embed_dim)
    if strategy == "extprob":
        if not cfg.align_ranker_scores:
            raise HierError("--align-strategy extprob needs --align-ranker-scores FILE")
        ranker = RankerScores(cfg.align_ranker_scores)
        for split, dataset in task.datasets.items():  # fairseq-generate has loaded gen_subset
            ranker.check(dataset.num_paragraphs, split)

    allowed = []
    count_exceptions = bool(getattr(cfg, "block_previous_count_exceptions", False))
    count_eos = bool(getattr(cfg, "coverage_count_eos", False))
    if cfg.block_previous_tokens > 0:
        dictionary = task.target_dictionary
        for symbol in cfg.block_previous_exceptions.split():
            if symbol in dictionary.indices:
                allowed.append(dictionary.index(symbol))
        logger.info(f"--block-previous-tokens {cfg.block_previous_tokens}: exempt symbols in the "
                    f"dictionary: {[dictionary[i] for i in allowed]} (of "
                    f"{cfg.block_previous_exceptions.split()}), "
                    f"{'counted among' if count_exceptions else 'skipped when counting'}"
                    f" the previous tokens")
    if strategy is not None:
        logger.info(f"attention alignment: strategy {strategy}, beta {cfg.align_beta}, epsilon "
                    f"{cfg.align_epsilon}, live beams {cfg.align_live_beams}")
    if scoring != NO_PENALTIES:
        logger.info(f"decoding penalties: length penalty {scoring['length_penalty_form']}, "
                    f"coverage beta {scoring['coverage_beta']} (None: no coverage penalty)"
                    + (", coverage over every key (EOS included)"
                       if count_eos and scoring["coverage_beta"] is not None else ""))
    stop = bool(getattr(cfg, "stop_on_top_beam", False))
    if stop:
        logger.info("--stop-on-top-beam: a sentence ends at the first step whose best candidate "
                    "is EOS")
    return dict(**scoring, strategy=strategy, beta=cfg.align_beta, predictor=predictor, ranker_scores=ranker,
                epsilon=cfg.align_epsilon, live_beams=cfg.align_live_beams,
                keep_paragraphs=cfg.align_keep_paragraphs,
                block_previous=cfg.block_previous_tokens, block_allowed=allowed,
                block_count_exceptions=count_exceptions, coverage_count_eos=count_eos,
                stop_on_top_beam=stop,
                print_alignment=print_alignment if hierarchical else None)
