"""The papers' decoding rules against their references: OpenNMT's summary coverage penalty over a
source without EOS, the authors' comma rule of PHT/VHT's token blocking (yema2018/wiki_sum),
hiersumm's stopping rule for liu_ht (nlpyang/hiersumm), each against a literal transcription of
the reference code; and the defaults that follow them, each with its source."""

import os
import subprocess
from pathlib import Path

import pytest
import torch
from conftest import BIN, build_model, make_dict
from fairseq.models import FairseqDecoder, FairseqEncoder, FairseqEncoderDecoderModel
from tiny_models import FLAT, one_thread  # noqa: F401

from fairseq_hier.generation.sequence_generator import (AttentionAlignmentSequenceGenerator,
                                                        CoveragePenalty, PreviousTokenBlocker)
from fairseq_hier.recipes.settings import PAPERS, generation_settings
from fairseq_hier.tasks.hierarchical_summarization import HierarchicalSummarizationConfig

ROOT = Path(__file__).resolve().parents[2]
SPM = Path("/work/shared/wikisum/spm9998_3.model")


# ---------------------------------------------------------------------------------- defaults
def test_defaults_are_the_papers_and_their_authors_code():
    cfg = HierarchicalSummarizationConfig()
    # yema2018/wiki_sum main.py lines 215-218 (eval_by_beam_search): "bnw_block =
    # list(out[0][0, -(bnw*2):])", "while 10 in bnw_block: bnw_block.remove(10)", "bnw_block =
    # bnw_block[-bnw:]": id 10 of spm9998_3 ('\u2581,') only, skipped when counting
    assert cfg.block_previous_exceptions == "\u2581,"
    assert cfg.block_previous_count_exceptions is False
    # OpenNMT-py onmt/translate/penalties.py coverage_summary runs over the source's keys, and
    # OpenNMT's sources have no EOS: fairseq's appended EOS is left out
    assert cfg.coverage_count_eos is False
    # fairseq's own stopping rule unless a recipe asks for hiersumm's
    assert cfg.stop_on_top_beam is False
    # PHT/VHT (000 Sec. 4.2, 001 Sec. 5.2) and the authors' comma
    pht = dict(zip(PAPERS["pht"].generation[::2], PAPERS["pht"].generation[1::2]))
    assert pht["--block-previous-tokens"] == "2" and pht["--block-previous-exceptions"] == "\u2581,"
    assert PAPERS["pht"].max_len == 200  # 000 Sec. 4.2 "terminated til the length exceeds 200"
    liu = PAPERS["liu_ht"]
    # nlpyang/hiersumm README.md line 43, the evaluation command: "-alpha 0.4 -max_length 400"
    assert liu.max_len == 400
    # nlpyang/hiersumm src/train_abstractive.py line 376: "'-min_length', default=20" (the
    # evaluation command keeps it)
    assert liu.min_len == 20
    # src/abstractive/predictor_builder.py lines 328-329: "End condition is top beam is finished"
    args, _ = generation_settings("liu_ht")
    assert "--stop-on-top-beam" in args and args[args.index("--lenpen") + 1] == "0.4"
    assert args[args.index("--max-len-b") + 1] == "400"
    assert args[args.index("--min-len") + 1] == "20"


def shell_array(name):
    """The words of a bash array of examples/wikisum/generation.sh."""
    script = f'source examples/wikisum/generation.sh; printf "%s\\n" "${{{name}[@]}}"'
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")  # fairseq-hier-settings
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                         check=True, env=env).stdout
    return out.splitlines()


def test_the_wikisum_recipe_decodes_with_the_settings_table():
    """generation.sh, which prepare.sh records, states the settings' rules."""
    pht, liu = shell_array("GENERATION"), shell_array("LIU_GENERATION")
    for words, arch in ((pht, "pht"), (liu, "liu_ht")):
        expected, _ = generation_settings(arch)
        for i, word in enumerate(expected):
            if word.startswith("--"):
                assert word in words, (arch, word)
                values = expected[i + 1: i + 2]
                if values and not values[0].startswith("--"):
                    assert words[words.index(word) + 1] == values[0], (arch, word)


# ---------------------------------------------------------------------------------- coverage
def opennmt_coverage_summary(cov, beta=0.0):
    """OpenNMT-py onmt/translate/penalties.py ``PenaltyBuilder.coverage_summary``, verbatim."""
    penalty = torch.max(cov, cov.clone().fill_(1.0)).sum(-1)
    penalty -= cov.size(-1)
    return beta * penalty


def test_coverage_leaves_the_source_eos_out_as_opennmt():
    """The summed increments of a row equal OpenNMT's coverage_summary of the same attention with
    the EOS (and padding) columns deleted; --coverage-count-eos keeps them."""
    d = make_dict(12)
    src = torch.tensor([[5, 6, 7, 8, d.eos()], [9, 10, d.eos(), d.pad(), d.pad()]])  # B x S
    keys = src.ne(d.eos()) & src.ne(d.pad())  # B x S
    g = torch.Generator().manual_seed(1)
    steps = []
    for _ in range(6):  # attention parked on EOS: most of the mass, step after step
        logits = torch.randn(2, 5, generator=g)
        logits[0, 4] += 3.0
        logits[1, 2] += 3.0
        logits[1, 3:] = -float("inf")  # padding gets no attention
        steps.append(torch.softmax(logits, -1))
    for count_eos in (False, True):
        cov = CoveragePenalty(5.0)
        cov.start(None if count_eos else keys)
        total = sum(cov.step(attn) for attn in steps)  # B
        summed = sum(steps)  # B x S
        for b in range(2):
            columns = [i for i in range(5) if count_eos or bool(keys[b, i])]  # literal deletion
            expected = opennmt_coverage_summary(summed[b, columns], 5.0)
            assert float(total[b]) == pytest.approx(float(expected), abs=1e-5)
    kept = CoveragePenalty(5.0)
    kept.start(keys)
    every = CoveragePenalty(5.0)
    every.start(None)
    assert float(sum(every.step(a) for a in steps)[0]) > \
        float(sum(kept.step(a) for a in steps)[0]) + 1.0  # EOS's coverage would weigh


@torch.no_grad()
def test_generator_coverage_with_and_without_eos_on_a_flat_model():
    """Through the generator (the ensemble takes the keys from the batch): the final score is
    (sum log p - cp) / lp with cp over the source tokens, or over every key with
    coverage_count_eos."""
    d = make_dict(24)
    torch.manual_seed(0)
    model = build_model("transformer_copy", d, **dict(FLAT, share_all_embeddings=True)).eval()
    src = torch.tensor([[7, 8, 9, 10, d.eos()]])
    sample = {"net_input": {"src_tokens": src, "src_lengths": torch.tensor([5])}}
    for count_eos in (False, True):
        gen = AttentionAlignmentSequenceGenerator([model], d, beam_size=2, max_len_b=6, min_len=2,
                                                  coverage_beta=5.0, coverage_count_eos=count_eos)
        hypo = gen.generate([model], sample)[0][0]
        tokens = hypo["tokens"]
        prev = torch.cat([tokens.new_tensor([d.eos()]), tokens[:-1]]).unsqueeze(0)
        out = model(src, torch.tensor([5]), prev)
        logp = model.get_normalized_probs(out, log_probs=True)[0].gather(
            1, tokens.unsqueeze(1)).sum()
        summed = out[1]["attn"][0][0].sum(0)  # S
        columns = list(range(5)) if count_eos else [0, 1, 2, 3]
        cp = opennmt_coverage_summary(summed[columns], 5.0)
        assert float(hypo["score"]) == pytest.approx(float((logp - cp) / len(tokens)), abs=2e-4)


# ---------------------------------------------------------------------------------- blocking
def authors_blocked(generated, n, comma):
    """yema2018/wiki_sum main.py lines 215-218, verbatim on a list of generated ids."""
    bnw = n
    bnw_block = list(generated[-(bnw * 2):])
    while comma in bnw_block:
        bnw_block.remove(comma)
    bnw_block = bnw_block[-bnw:]
    return set(bnw_block)


def ours_blocked(blocker, rows, vocab):
    """The ids our blocker forbids after each row of generated ids (BOS prepended)."""
    tokens = torch.tensor([[2] + row for row in rows])  # N x (step + 1)
    out = blocker(tokens, torch.zeros(len(rows), vocab), len(rows), 1, step=len(rows[0]))
    return [set(torch.nonzero(r.isinf()).view(-1).tolist()) - {blocker.pad} for r in out]


def test_blocking_skips_the_comma_as_the_authors_code_on_a_tiny_dictionary():
    comma, pad, vocab = 4, 1, 9
    blocker = PreviousTokenBlocker(None, 2, [comma], pad)
    g = torch.Generator().manual_seed(0)
    for length in range(1, 8):
        # ids 4..8, commas frequent: runs of commas, a comma last, none at all
        rows = torch.randint(4, 9, (40, length), generator=g)
        rows[::3] = torch.where(rows[::3] % 2 == 0, comma, rows[::3])
        rows = rows.tolist()
        assert ours_blocked(blocker, rows, vocab) == [authors_blocked(r, 2, comma) for r in rows]
    # "a , b": the authors block a and b; counting the comma as one of the two spares a
    assert ours_blocked(blocker, [[5, comma, 6]], vocab) == [{5, 6}]
    counted = PreviousTokenBlocker(None, 2, [comma], pad, count_exceptions=True)
    assert ours_blocked(counted, [[5, comma, 6]], vocab) == [{6}]


@pytest.mark.skipif(not SPM.exists(), reason=f"{SPM} (hiersumm's sentencepiece model) not here")
def test_blocking_on_the_published_sentencepiece_pieces():
    """The task's default exception is the authors' id 10 of spm9998_3, '\u2581,' (WikiSum is
    tokenised: its commas stand alone); ',' glued to a word (id 923) is not exempt, as there."""
    import sentencepiece
    from fairseq.data import Dictionary

    sp = sentencepiece.SentencePieceProcessor(model_file=str(SPM))
    assert sp.id_to_piece(10) == "\u2581,"
    d = Dictionary()
    for i in range(sp.get_piece_size()):
        d.add_symbol(sp.id_to_piece(i))
    symbols = HierarchicalSummarizationConfig().block_previous_exceptions.split()
    exempt = [d.index(s) for s in symbols]
    assert exempt == [d.index("\u2581,")] and d.index(",") not in exempt
    pieces = sp.encode("the city , on the river , is old , big , and green", out_type=str)
    assert pieces.count("\u2581,") == 4
    ids = [d.index(p) for p in pieces]
    blocker = PreviousTokenBlocker(None, 2, exempt, d.pad())
    for end in range(1, len(ids) + 1):
        spm_ids = [sp.piece_to_id(p) for p in pieces[:end]]  # the authors' ids
        expected = {d.index(sp.id_to_piece(i)) for i in authors_blocked(spm_ids, 2, 10)}
        assert ours_blocked(blocker, [ids[:end]], len(d)) == [expected], pieces[:end]


# ---------------------------------------------------------------------------------- stopping
def scripted_lprobs(example, prefix, vocab, eos):
    """Log-probabilities after ``prefix`` (generated ids) for example ``example``: random per
    prefix, EOS likelier as the prefix grows; specials other than EOS never chosen. Every
    fourth example is a trap for the top-beam rule: after 3 tokens EOS (0.5) narrowly beats
    id 5 (0.45), which leads to three near-certain tokens and EOS, a better score under Wu's
    length penalty."""
    seed = example * 1_000_003
    for t in prefix:
        seed = (seed * 31 + int(t) + 7) % 2_147_483_647
    logits = torch.randn(vocab, generator=torch.Generator().manual_seed(seed)) * 1.5
    logits[eos] += 0.7 * len(prefix) - 2.5
    if example % 4 == 0 and len(prefix) >= 3:
        logits = torch.full((vocab,), -20.0)
        if len(prefix) == 3:
            logits[eos], logits[5] = 0.5, 0.45  # probabilities, nearly
            logits[6] = 0.05
            logits = logits.clamp_min(1e-6).log()
        elif prefix[3] == 5 and len(prefix) < 7:
            logits[6] = 0.0
        else:
            logits[eos] = 0.0
    logits[[0, 1, 3]] = -1e9  # bos, pad, unk
    return torch.log_softmax(logits, -1)


class ScriptedEncoder(FairseqEncoder):
    def forward(self, src_tokens, src_lengths=None, **kwargs):
        return {"example": [src_tokens[:, 0]]}  # B: the example's number

    def reorder_encoder_out(self, encoder_out, new_order):
        return {"example": [encoder_out["example"][0].index_select(0, new_order)]}


class ScriptedDecoder(FairseqDecoder):
    def forward(self, prev_output_tokens, encoder_out=None, **kwargs):
        rows = [scripted_lprobs(int(e), p[1:].tolist(), len(self.dictionary),
                                self.dictionary.eos())
                for e, p in zip(encoder_out["example"][0], prev_output_tokens)]
        return torch.stack(rows).unsqueeze(1), {"attn": [None]}  # N x 1 x V


def hiersumm_decode(example, vocab, eos, beam_size, max_length, min_length, alpha):
    """nlpyang/hiersumm src/abstractive/predictor_builder.py ``_fast_translate_batch`` (lines
    219-371) for one example, transcribed: (best ids up to its first EOS, its score, whether a
    hypothesis other than the top one ended before the search did)."""
    topk_log_probs = torch.tensor([0.0] + [float("-inf")] * (beam_size - 1))
    alive_seq = [[] for _ in range(beam_size)]
    hypotheses = []
    early = False
    for step in range(max_length):
        log_probs = torch.stack([scripted_lprobs(example, s, vocab, eos) for s in alive_seq])
        if step < min_length:
            log_probs[:, eos] = -1e20
        log_probs += topk_log_probs.view(-1).unsqueeze(1)
        length_penalty = ((5.0 + (step + 1)) / 6.0) ** alpha
        curr_scores = (log_probs / length_penalty).reshape(-1)
        topk_scores, topk_ids = curr_scores.topk(beam_size)
        topk_log_probs = topk_scores * length_penalty
        topk_beam_index, topk_ids = topk_ids // vocab, topk_ids.fmod(vocab)
        alive_seq = [alive_seq[b] + [int(t)] for b, t in zip(topk_beam_index, topk_ids)]
        is_finished = topk_ids.eq(eos)
        if step + 1 == max_length:
            is_finished.fill_(1)
        end_condition = bool(is_finished[0])
        if is_finished.any():
            if end_condition:
                is_finished.fill_(1)
            else:
                early = True
            for j in is_finished.nonzero().view(-1).tolist():
                hypotheses.append((float(topk_scores[j]), alive_seq[j]))
            if end_condition:
                score, pred = sorted(hypotheses, key=lambda x: x[0], reverse=True)[0]
                return pred[: pred.index(eos) + 1] if eos in pred else pred, score, early
    raise AssertionError("unreachable: the last step finishes every beam")


@torch.no_grad()
def test_stop_on_top_beam_decodes_as_hiersumm():
    """Ours with --stop-on-top-beam returns hiersumm's hypothesis and score whenever no other
    hypothesis ended first (then hiersumm keeps it in its beam, fairseq does not: the deviation
    the recipe lists); fairseq's rule differs on some of the same examples."""
    d = make_dict(14)
    model = FairseqEncoderDecoderModel(ScriptedEncoder(d), ScriptedDecoder(d)).eval()
    examples = 40
    src = torch.arange(examples).unsqueeze(1).expand(examples, 3).contiguous()  # B x 3
    sample = {"net_input": {"src_tokens": src, "src_lengths": torch.full((examples,), 3)}}
    common = dict(beam_size=3, max_len_b=30, min_len=2, len_penalty=0.4,
                  length_penalty_form="wu")
    ours = AttentionAlignmentSequenceGenerator([model], d, stop_on_top_beam=True, **common)
    fairseqs = AttentionAlignmentSequenceGenerator([model], d, **common)
    hypos, stock = ours.generate([model], sample), fairseqs.generate([model], sample)
    compared = differ = 0
    for i in range(examples):
        pred, score, early = hiersumm_decode(i, len(d), d.eos(), 3, 30, 2, 0.4)
        assert pred[-1] == d.eos()  # the top beam ended with EOS, not at the length limit
        best = hypos[i][0]
        if not early:
            compared += 1
            assert best["tokens"].tolist() == pred
            assert float(best["score"]) == pytest.approx(score, abs=1e-4)
            differ += stock[i][0]["tokens"].tolist() != pred
    assert compared >= 20 and differ >= 5, (compared, differ)  # 23 and 10 with these seeds


def test_stop_on_top_beam_needs_beam_search():
    from fairseq import search

    from fairseq_hier.errors import HierError

    d = make_dict(8)
    model = FairseqEncoderDecoderModel(ScriptedEncoder(d), ScriptedDecoder(d))
    with pytest.raises(HierError, match="--stop-on-top-beam works with beam search only"):
        AttentionAlignmentSequenceGenerator([model], d, stop_on_top_beam=True,
                                            search_strategy=search.Sampling(d))


def test_task_options_reach_the_generator():
    """The task's options become the generator's keyword arguments (fairseq-generate's path)."""
    import argparse
    from types import SimpleNamespace

    from fairseq_hier.generation.options import alignment_generator_kwargs

    d = make_dict(8)
    flat = SimpleNamespace(hierarchical_source=False)
    for on in (False, True):
        cfg = HierarchicalSummarizationConfig(
            stop_on_top_beam=on, coverage_penalty="summary", coverage_count_eos=on,
            block_previous_tokens=2, block_previous_count_exceptions=on)
        task = SimpleNamespace(cfg=cfg, target_dictionary=d, datasets={})
        kwargs = alignment_generator_kwargs(task, [flat], argparse.Namespace())
        assert (kwargs["stop_on_top_beam"], kwargs["coverage_count_eos"],
                kwargs["block_count_exceptions"]) == (on, on, on)
