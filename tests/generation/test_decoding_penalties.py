"""Wu's length penalty and OpenNMT's stepwise "summary" coverage penalty in our sequence
generator: the formulas against literal ones, the coverage kept in beam order, and every final
hypothesis score against a teacher-forced forward pass of the same tiny model (flat with copy
attention, flat plain, hierarchical liu_ht)."""

import argparse

import pytest
import torch
from conftest import build_model, make_dict, paragraph_batch, paragraph_dict
from fairseq.sequence_generator import SequenceGenerator
from tiny_models import FLAT, LIU, one_thread  # noqa: F401

from fairseq_hier.errors import HierError
from fairseq_hier.generation.options import NO_PENALTIES, decoding_penalties
from fairseq_hier.generation.sequence_generator import (AttentionAlignmentSequenceGenerator,
                                                        CoveragePenalty, summary_coverage_penalty,
                                                        wu_length_penalty)


def literal_summary(cov_row, beta, real):
    """beta * (sum over the real keys of max(cov_i, 1) - their number)."""
    return beta * (sum(max(float(cov_row[i]), 1.0) for i in real) - len(real))


def test_formulas_against_literal_ones():
    for length in (1, 2, 7, 300):
        for alpha in (0.0, 0.4, 0.9, 1.0):
            assert wu_length_penalty(length, alpha) == pytest.approx(((5 + length) / 6) ** alpha,
                                                                     rel=1e-12)
    cov = torch.tensor([[0.2, 1.7, 0.9, 2.5, 0.0], [1.2, 0.3, 0.0, 0.0, 0.0]])
    real = [[0, 1, 2, 3, 4], [0, 1]]  # example 1: 2 real keys, 3 padded (coverage 0)
    got = summary_coverage_penalty(cov, 5.0)
    assert got.tolist() == pytest.approx([literal_summary(cov[n], 5.0, real[n]) for n in (0, 1)],
                                         abs=1e-5)
    assert got.tolist() == pytest.approx([5.0 * (0.7 + 1.5), 5.0 * 0.2], abs=1e-5)


def test_coverage_follows_the_beams():
    """The increments, summed along a reordered path, are cp of that path's summed attention."""
    g = torch.Generator().manual_seed(0)
    steps = [torch.softmax(torch.randn(3, 4, generator=g) * 3, -1) for _ in range(4)]
    orders = [None, torch.tensor([0, 0, 2]), torch.tensor([2, 1, 1]), torch.tensor([1, 0, 2])]
    cov = CoveragePenalty(2.0)
    cov.start()
    total = torch.zeros(3)
    paths = [[r] for r in range(3)]  # the rows each current row came from, step by step
    for attn, order in zip(steps, orders):
        if order is not None:
            cov.reorder(order)
            total = total[order]
            paths = [paths[int(o)] + [r] for r, o in enumerate(order)]
        total = total + cov.step(attn)
    for r, path in enumerate(paths):
        summed = sum(steps[t][row] for t, row in enumerate(path))
        assert float(total[r]) == pytest.approx(literal_summary(summed, 2.0, range(4)), abs=1e-5)
    with pytest.raises(HierError, match="needs a model whose decoder returns its encoder"):
        cov.step(None)


def test_task_options_are_checked_and_off_by_default():
    from fairseq_hier.tasks.hierarchical_summarization import HierarchicalSummarizationConfig

    cfg = HierarchicalSummarizationConfig()
    assert (cfg.length_penalty_form, cfg.coverage_penalty, cfg.coverage_beta) == \
        ("fairseq", "none", 5.0)
    assert decoding_penalties(cfg) == NO_PENALTIES
    ns = argparse.Namespace(length_penalty_form="wu", coverage_penalty="summary",
                            coverage_beta=5.0)
    assert decoding_penalties(ns) == {"length_penalty_form": "wu", "coverage_beta": 5.0}
    for bad, text in ((dict(coverage_beta=-1.0), "--coverage-beta must be a finite number >= 0"),
                      (dict(coverage_penalty="wu"), "--coverage-penalty must be none or summary"),
                      (dict(length_penalty_form="avg"), "--length-penalty-form must be")):
        with pytest.raises(HierError, match=text):
            decoding_penalties(argparse.Namespace(**{**vars(ns), **bad}))


# ------------------------------------------------------------------ beam search vs teacher forcing
def flat_case(arch):
    d = make_dict(24)
    torch.manual_seed(0)
    model = build_model(arch, d, **dict(FLAT, share_all_embeddings=True)).eval()
    g = torch.Generator().manual_seed(4)
    src = torch.randint(d.nspecial, len(d), (2, 6), generator=g)
    src[:, -1] = d.eos()
    src[1, 4:] = d.pad()
    src[1, 3] = d.eos()
    lengths = src.ne(d.pad()).sum(1)
    return model, d, {"net_input": {"src_tokens": src, "src_lengths": lengths}}, \
        lambda i: (src[i: i + 1, : int(lengths[i])], lengths[i: i + 1])


def hier_case():
    d = paragraph_dict()
    torch.manual_seed(0)
    model = build_model("liu_ht", d, **LIU).eval()
    g = torch.Generator().manual_seed(4)
    examples = [torch.randint(4, 20, (3, 4), generator=g), torch.randint(4, 20, (2, 3), generator=g)]
    src = paragraph_batch(d, examples)
    lengths = src.ne(d.pad()).sum((1, 2))
    return model, d, {"net_input": {"src_tokens": src, "src_lengths": lengths}}, \
        lambda i: (paragraph_batch(d, [examples[i]]), lengths[i: i + 1])


@torch.no_grad()
def teacher_forced(model, d, source, tokens):
    """(sum of the hypothesis' token log-probs, its attention summed over the steps)."""
    src, lengths = source
    prev = torch.cat([tokens.new_tensor([d.eos()]), tokens[:-1]]).unsqueeze(0)
    out = model(src, lengths, prev)
    lprobs = model.get_normalized_probs(out, log_probs=True)[0]  # T x V
    cov = out[1]["attn"][0][0].sum(0)  # S
    if src.dim() == 2:  # flat: the EOS column left out, as OpenNMT's sources have none
        cov = cov[src[0].ne(d.eos())]
    return lprobs.gather(1, tokens.unsqueeze(1)).sum(), cov


CASES = {"transformer_copy": lambda: flat_case("transformer_copy"),
         "transformer": lambda: flat_case("transformer"), "liu_ht": hier_case}


@pytest.mark.parametrize("arch", list(CASES))
def test_final_scores_equal_the_teacher_forced_formula(arch):
    """score = (sum log p - beta * (sum_i max(cov_i, 1) - n)) / ((5 + |y|) / 6) ** alpha."""
    model, d, sample, source = CASES[arch]()
    alpha, beta = 0.9, 5.0
    gen = AttentionAlignmentSequenceGenerator([model], d, beam_size=3, max_len_b=9, min_len=2,
                                              len_penalty=alpha, length_penalty_form="wu",
                                              coverage_beta=beta)
    hypos = gen.generate([model], sample)
    penalties = []
    for i, sentence in enumerate(hypos):
        assert len(sentence) == 3
        for hypo in sentence:
            logp, cov = teacher_forced(model, d, source(i), hypo["tokens"])
            cp = beta * (cov.clamp_min(1.0).sum() - cov.numel())
            lp = ((5 + len(hypo["tokens"])) / 6) ** alpha
            assert float(hypo["score"]) == pytest.approx(float((logp - cp) / lp), abs=2e-4)
            assert float(hypo["positional_scores"].sum()) == pytest.approx(float(logp - cp),
                                                                           abs=2e-4)
            penalties.append(float(cp))
        scores = [float(h["score"]) for h in sentence]
        assert scores == sorted(scores, reverse=True)
    assert max(penalties) > 0.5  # the coverage term is exercised


@pytest.mark.parametrize("arch", ["transformer_copy", "liu_ht"])
def test_fairseq_form_without_coverage_is_stock_beam_search(arch):
    model, d, sample, _ = CASES[arch]()
    ours = AttentionAlignmentSequenceGenerator([model], d, beam_size=3, max_len_b=9,
                                               len_penalty=0.7).generate([model], sample)
    stock = SequenceGenerator([model], d, beam_size=3, max_len_b=9,
                              len_penalty=0.7).generate([model], sample)
    for a, b in zip(ours, stock):
        assert [h["tokens"].tolist() for h in a] == [h["tokens"].tolist() for h in b]
        assert [float(h["score"]) for h in a] == pytest.approx([float(h["score"]) for h in b])
    # Wu's form with alpha 0 and no coverage divides by 1, as fairseq's lenpen 0
    wu0 = AttentionAlignmentSequenceGenerator([model], d, beam_size=3, max_len_b=9, len_penalty=0,
                                              length_penalty_form="wu").generate([model], sample)
    flat0 = SequenceGenerator([model], d, beam_size=3, max_len_b=9,
                              len_penalty=0).generate([model], sample)
    for a, b in zip(wu0, flat0):
        assert [float(h["score"]) for h in a] == pytest.approx([float(h["score"]) for h in b])


def test_coverage_beta_is_checked_with_fairseqs_options():
    """fairseq-generate, fairseq-hier-record data and the summarisation API refuse it up front."""
    from fairseq_hier.generation.checks import check_generation_options

    with pytest.raises(ValueError, match="--coverage-beta must be >= 0, got -1.0"):
        check_generation_options(argparse.Namespace(beam=5, coverage_beta=-1.0))
    check_generation_options(argparse.Namespace(beam=5, coverage_beta=5.0))
