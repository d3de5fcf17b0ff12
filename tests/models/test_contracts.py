"""The contracts every architecture of the plugin keeps, written once and run on each:

- incremental decoding equals the full forward (1e-5), through a cache reordered as beam search
  reorders it (examples expanded to beams, beams swapped, an example finished), and beam
  search's scores equal teacher forcing of its hypotheses (1e-5): for the models with a decoder;
- save/load round trip: the state_dict, serialised, loaded into a fresh build gives bit-identical
  outputs;
- batch invariance: an example alone gives its outputs inside a padded batch (logits 1e-5,
  attention weights and distributions 1e-6);
- masking: padding, absent paragraphs and absent sentences get exactly zero attention weight,
  and what sits under them (token embeddings, the graph's entries, the encoder's states) changes
  no output bit.

The cases are the table of architectures (fairseq_hier/recipes/architectures.py: every
architecture whose model class or preset is ours), built at the table's tiny dims by
tests/support/tiny_models.py; the batches are built here, by the table's tiny family, with
small but distinct sizes so that a wrong transpose fails: B=3 examples, P=4 paragraphs of L=5
tokens, flat sources of S=7, HAT sources of up to 5 sentences (S=13 tokens), T=6 target steps,
C=16, H=2 heads (HAT: 4); the attention predictor and the paragraph ranker: C=8, titles of 2
tokens.
"""

import copy
import io

import pytest
import torch
from conftest import bos_source, left_pad, random_prev_tokens
from fairseq.sequence_generator import SequenceGenerator
from tiny_models import build_tiny, one_thread, paragraphs, parse_of, registered_archs  # noqa: F401

from fairseq_hier.recipes.architectures import ARCHITECTURES, archs_with

# registered architectures that the battery leaves out, each with its reason: none today
EXCLUDED = {}
# the architectures without a decoder: every contract but incremental decoding applies
NO_DECODER = {"attention_predictor": "one distribution over paragraphs per example",
              "paragraph_ranker": "one logit per paragraph"}
# option variants whose masking and reordering differ from their architecture's defaults:
# case name -> (architecture, options)
VARIANTS = {"liu_ht+graph": ("liu_ht", dict(graph_attention=True, graph_head=1,
                                            global_layers="1,2", global_heads=4)),
            "vht+authors": ("vht", dict(dynamic_paragraph_embedding="authors"))}
CASES = {**{arch: (arch, {}) for arch in archs_with(ours=True) if arch not in EXCLUDED},
         **VARIANTS}
DECODER_CASES = [case for case, (arch, _) in CASES.items() if arch not in NO_DECODER]

LOGITS_TOL = 1e-5
WEIGHTS_TOL = 1e-6  # attention weights and predicted distributions (values in [0, 1])
T = 6  # target steps
# step -> new order of the cache's rows, as fairseq's beam search reorders them: the examples
# expand to beams of 2 (each beam then takes its own tokens), the beams of each example swap
# (same size: fairseq keeps the encoder-attention cache, equal within an example), example 0
# finishes (its rows leave)
REORDERS = {2: (0, 0, 1, 1, 2, 2), 3: (1, 0, 3, 2, 5, 4), 4: (2, 3, 4, 5)}


def test_the_battery_covers_every_registered_architecture():
    """Every architecture in fairseq's registry whose model class or preset is ours (the second:
    transformer_iwslt_zh_en, fairseq's Transformer at 004's sizes) is a case, unless excluded."""
    assert sorted(case for case in CASES if case not in VARIANTS) == \
        sorted(set(registered_archs()) - set(EXCLUDED))
    for arch in NO_DECODER:
        model, _ = build_tiny(arch)
        assert not hasattr(model, "decoder"), f"{arch} has a decoder: test its decoding"


# ------------------------------------------------------------------------------ tiny batches
def build(case):
    """(model in eval mode, dictionary) for a case, seed 0."""
    arch, options = CASES[case]
    model, d = build_tiny(arch, **options)
    return model.eval(), d


def batch_of(case, d, g):
    """The forward kwargs of a case's fixed tiny batch (B=3), drawn from ``g``."""
    arch, options = CASES[case]
    family = ARCHITECTURES[arch].tiny_family
    if family == "predictor":  # B x P x C, 2 / 4 / 3 present paragraphs
        mask = torch.arange(4)[None, :] >= torch.tensor([2, 4, 3])[:, None]
        return {"paragraph_embeddings": torch.randn(3, 4, 8, generator=g),
                "paragraph_padding_mask": mask}
    if family in ("hier", "hier_parse", "ranker"):  # B x P x L: example 0 alone is 2 x 3
        src = paragraphs(d, g, (3, 4, 5), ((3, 2, 0, 0), (5, 4, 5, 2), (4, 1, 2, 0)))
        batch = {"src_tokens": src, "src_lengths": None}
    elif family in ("flat", "flat_parse"):  # B x S, right-padded, EOS last
        lengths = (4, 7, 5)
        src = paragraphs(d, g, (3, 1, 7), tuple((n,) for n in lengths)).squeeze(1)
        for b, n in enumerate(lengths):
            src[b, n - 1] = d.eos()
        batch = {"src_tokens": src, "src_lengths": src.ne(d.pad()).sum(1)}
    else:  # "sentences": every sentence opens with BOS (HAT); B x S, left-padded
        src = left_pad([bos_source(3, 2), bos_source(3, 4, 2), bos_source(1, 2, 1, 2, 1)])
        batch = {"src_tokens": src, "src_lengths": src.ne(d.pad()).sum(1)}
    if family == "ranker":  # titles of 2 / 1 / 2 tokens, B x Lt
        titles = torch.tensor([2, 1, 2])
        title = torch.full((3, 2), d.pad())
        for b, n in enumerate(titles.tolist()):
            title[b, :n] = torch.randint(d.nspecial, len(d), (n,), generator=g)
        return {**batch, "src_lengths": src.ne(d.pad()).sum(-1), "title_tokens": title,
                "title_lengths": titles}
    if family.endswith("parse"):
        words, heads = parse_of(src, d.pad())
        eos = src.eq(d.eos())  # EOS is no word (as the parse files give it)
        batch["src_words"] = words.masked_fill(eos, -1)
        batch["src_heads"] = heads.masked_fill(eos, -1)
    if options.get("graph_attention"):
        batch["paragraph_graph"] = torch.rand(3, 4, 4, generator=g)  # B x P x P
    batch["prev_output_tokens"] = random_prev_tokens(d, 3, T)
    return batch


def select(batch, order):
    """The batch's examples ``order`` (a 1-D index): every tensor argument has the batch first."""
    return {k: v.index_select(0, order) if torch.is_tensor(v) else v for k, v in batch.items()}


def alone(batch, b, pad):
    """Example ``b`` of the batch as a batch of one, without the padding its batch gave it: each
    source dimension cut to the span of its real tokens (paragraphs and tokens of a right-padded
    source, the left padding of HAT's sources); the parse, the graph, the lengths and the
    ranker's title cut alike."""
    if "paragraph_embeddings" in batch:
        present = ~batch["paragraph_padding_mask"][b]
        n = int(present.sum())
        return {"paragraph_embeddings": batch["paragraph_embeddings"][b:b + 1, :n],
                "paragraph_padding_mask": batch["paragraph_padding_mask"][b:b + 1, :n]}
    real = batch["src_tokens"][b].ne(pad)  # P x L or S
    cuts = []
    for dim in range(real.dim()):
        others = [k for k in range(real.dim()) if k != dim]
        span = real.any(others[0]) if others else real
        idx = span.nonzero().squeeze(1)
        cuts.append(slice(int(idx[0]), int(idx[-1]) + 1))
    one = {}
    for key, value in batch.items():
        if not torch.is_tensor(value):
            one[key] = value
        elif key in ("src_tokens", "src_words", "src_heads"):
            one[key] = value[b][tuple(cuts)][None]
        elif key == "paragraph_graph":
            one[key] = value[b][cuts[0], cuts[0]][None]
        elif key == "src_lengths" and value.dim() == 2:  # the ranker's B x P
            one[key] = value[b][cuts[0]][None]
        elif key == "src_lengths":
            one[key] = one["src_tokens"].ne(pad).sum(1)
        elif key == "title_tokens":
            one[key] = value[b:b + 1, : max(int(batch["title_lengths"][b]), 1)]
        else:
            one[key] = value[b:b + 1]
    return one


# ---------------------------------------------------------------------------- running models
ATTENTION_KEYS = ("attn", "sentence_attn")


def run(model, batch):
    """The model's outputs by name: ``logits`` (``B x T x V``) and each attention of its
    decoder (``B x T x X``), or ``out`` for the models without a decoder (``B x P``)."""
    with torch.no_grad():
        out = model(**batch)
    if not isinstance(out, tuple):
        return {"out": out}
    outputs = {"logits": out[0]}
    outputs.update({k: out[1][k][0] for k in ATTENTION_KEYS if out[1].get(k)})
    return outputs


def encode(model, batch):
    with torch.no_grad():
        return model.encoder(**{k: v for k, v in batch.items() if k != "prev_output_tokens"})


def padding_masks(enc):
    """The encoder's ``B x X`` padding masks (True = padding, absent paragraph or sentence)."""
    return [v[0] for k, v in enc.items() if k.endswith("padding_mask") and v and v[0].dim() == 2]


def mask_of(attn, enc):
    """The one padding mask of the encoder that ``attn`` (``B x T x X``) attends over."""
    masks = [m for m in padding_masks(enc) if m.shape == (attn.size(0), attn.size(-1))]
    assert len(masks) == 1, f"attention over {attn.size(-1)} positions: masks {masks}"
    return masks[0]


def real_positions(batch, outputs, enc):
    """Per output name, the ``B x X`` mask of its real (not padded, not absent) positions."""
    if "out" in outputs:
        if "paragraph_padding_mask" in batch:
            return {"out": ~batch["paragraph_padding_mask"]}
        return {"out": batch["src_lengths"].gt(0)}
    real = {"logits": None}
    real.update({k: ~mask_of(outputs[k], enc) for k in ATTENTION_KEYS if k in outputs})
    return real


def outputs_of(model, batch):
    """(outputs by name, their real positions) of the batch."""
    outputs = run(model, batch)
    enc = encode(model, batch) if hasattr(model, "encoder") else None
    return outputs, real_positions(batch, outputs, enc)


def assert_equal_outputs(got, expected):
    assert got.keys() == expected.keys()
    for name in expected:
        assert torch.equal(got[name], expected[name]), f"{name} changed"


# ------------------------------------------------------------------- incremental decoding
@pytest.mark.parametrize("case", DECODER_CASES)
def test_incremental_equals_full_with_beam_reorder(case):
    """Step by step with the cache, reordered as beam search reorders it (:data:`REORDERS`):
    the logits and attention weights of every step equal the full forward of the rows decoded
    at that step, to 1e-5."""
    model, d = build(case)
    batch = batch_of(case, d, torch.Generator().manual_seed(5))
    g = torch.Generator().manual_seed(9)
    rows, order = batch["prev_output_tokens"], torch.arange(3)  # tokens and example of each row
    enc = encode(model, batch)
    state = {}
    for t in range(T):
        if t in REORDERS:
            new_order = torch.tensor(REORDERS[t])
            model.decoder.reorder_incremental_state_scripting(state, new_order)
            enc = model.encoder.reorder_encoder_out(enc, new_order)
            rows, order = rows[new_order], order[new_order]
            if t == min(REORDERS):  # the second beam of each example goes its own way
                rows[1::2, t:] = torch.randint(d.nspecial, len(d), rows[1::2, t:].shape,
                                               generator=g)
        with torch.no_grad():
            logits, extra = model.decoder(rows[:, : t + 1], encoder_out=enc,
                                          incremental_state=state)
        step = {"logits": logits[:, -1]}
        step.update({k: extra[k][0][:, -1] for k in ATTENTION_KEYS if extra.get(k)})
        full = run(model, {**select(batch, order), "prev_output_tokens": rows[:, : t + 1]})
        assert step.keys() == full.keys()
        for name in full:
            tol = LOGITS_TOL if name == "logits" else WEIGHTS_TOL
            torch.testing.assert_close(step[name], full[name][:, t], atol=tol, rtol=0,
                                       msg=lambda m: f"step {t}, {name}: {m}")
    if enc.get("src_tokens"):  # the copy attention's source tokens follow the beams
        assert torch.equal(enc["src_tokens"][0], batch["src_tokens"][order])


@pytest.mark.parametrize("case", DECODER_CASES)
def test_beam_search_scores_equal_teacher_forcing(case):
    """fairseq's beam search (beam 3, its reorders; BART's beamable attention where the model
    has it, set_beam_size) scores each hypothesis as the full forward of its tokens, to 1e-5."""
    model, d = build(case)
    teacher = copy.deepcopy(model)  # set_beam_size changes the model it is called on
    batch = batch_of(case, d, torch.Generator().manual_seed(7))
    net_input = {k: v for k, v in batch.items() if k != "prev_output_tokens"}
    generator = SequenceGenerator([model], d, beam_size=3, max_len_b=T, min_len=T)
    hypos = generator.generate([model], {"net_input": net_input})
    assert [len(beams) for beams in hypos] == [3, 3, 3]
    for i, beams in enumerate(hypos):
        for hypo in beams:
            tokens = hypo["tokens"]
            prev = torch.cat([tokens.new_tensor([d.eos()]), tokens[:-1]])[None]
            one = {**select(net_input, torch.tensor([i])), "prev_output_tokens": prev}
            logits = run(teacher, one)["logits"]
            lprobs = teacher.get_normalized_probs((logits, None), log_probs=True)[0]
            full = lprobs.gather(-1, tokens[:, None]).squeeze(-1)
            torch.testing.assert_close(hypo["positional_scores"], full, atol=LOGITS_TOL, rtol=0)


# ----------------------------------------------------------------------- save/load round trip
@pytest.mark.parametrize("case", CASES)
def test_save_load_round_trip(case):
    """The state_dict, through torch.save / torch.load (weights only), into a fresh build of
    other weights: every output is bit-identical to the saved model's."""
    model, d = build(case)
    batch = batch_of(case, d, torch.Generator().manual_seed(2))
    expected = run(model, batch)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    fresh, _ = build(case)
    with torch.no_grad():
        for p in fresh.parameters():
            p.add_(torch.randn_like(p))
    changed = run(fresh, batch)
    assert any(not torch.equal(changed[k], expected[k]) for k in expected)
    buffer.seek(0)
    fresh.load_state_dict(torch.load(buffer, weights_only=True), strict=True)
    assert_equal_outputs(run(fresh, batch), expected)


# --------------------------------------------------------------------------- batch invariance
@pytest.mark.parametrize("case", CASES)
def test_batch_invariance(case):
    """Each example alone (no padding: its own paragraphs, tokens and sentences only) gives the
    outputs it gets inside the padded batch: logits to 1e-5, attention weights and predicted
    distributions to 1e-6 on its real positions."""
    model, d = build(case)
    batch = batch_of(case, d, torch.Generator().manual_seed(3))
    together, real = outputs_of(model, batch)
    for b in range(3):
        one = alone(batch, b, d.pad() if d is not None else None)
        by_itself, real_alone = outputs_of(model, one)
        for name, out in together.items():
            tol = LOGITS_TOL if name == "logits" else WEIGHTS_TOL
            if real[name] is None:  # logits: every target step is real
                torch.testing.assert_close(out[b], by_itself[name][0], atol=tol, rtol=0)
                continue
            # the real positions, in order: the same count alone as in the batch
            assert int(real_alone[name].sum()) == int(real[name][b].sum())
            torch.testing.assert_close(out[b][..., real[name][b]],
                                       by_itself[name][0][..., real_alone[name][0]],
                                       atol=tol, rtol=0)


# ---------------------------------------------------------------------------------- masking
GARBAGE = 1e4


@pytest.mark.parametrize("case", CASES)
def test_masked_positions_get_zero_weight(case):
    """Padding, absent paragraphs and absent sentences get exactly zero attention weight (the
    attention predictor: exactly zero probability; the ranker: logit -inf), and each row of
    weights sums to 1 over the real positions."""
    model, d = build(case)
    batch = batch_of(case, d, torch.Generator().manual_seed(4))
    outputs, real = outputs_of(model, batch)
    assert any(r is not None and not r.all() for r in real.values()), "nothing is masked"
    for name, out in outputs.items():
        if real[name] is None:
            continue
        masked = ~real[name]
        if name == "out" and "src_lengths" in batch:  # the ranker's logits
            assert out[masked].eq(float("-inf")).all() and out[~masked].isfinite().all()
            continue
        weights = out if out.dim() == 3 else out[:, None]  # B x T x X (T = 1: a distribution)
        assert weights.masked_select(masked[:, None]).eq(0).all(), f"{name}: weight on padding"
        assert weights.masked_select(~masked[:, None]).gt(0).all()
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:2]),
                                   atol=WEIGHTS_TOL, rtol=0)


@pytest.mark.parametrize("case", CASES)
def test_what_sits_under_padding_changes_nothing(case):
    """Garbage (1e4 x noise) in place of the token embeddings of padding (every embedding table
    that has a padding index; fairseq's encoders zero them, LGA and the ranker's LSTMs read them
    as they come), of the graph's entries of absent paragraphs, of the predictor's absent
    paragraph embeddings: every output is bit-identical."""
    model, d = build(case)
    batch = batch_of(case, d, torch.Generator().manual_seed(6))
    clean = run(model, batch)
    g = torch.Generator().manual_seed(0)
    noisy = dict(batch)
    if "paragraph_embeddings" in batch:
        mask = batch["paragraph_padding_mask"][..., None]  # B x P x 1
        noise = GARBAGE * torch.randn(batch["paragraph_embeddings"].shape, generator=g)
        noisy["paragraph_embeddings"] = torch.where(mask, noise, batch["paragraph_embeddings"])
        assert_equal_outputs(run(model, noisy), clean)
        return
    if "paragraph_graph" in batch:
        absent = batch["src_tokens"].ne(d.pad()).any(-1).logical_not()  # B x P
        graph = batch["paragraph_graph"].clone()
        graph.masked_fill_(absent[:, :, None] | absent[:, None, :], 5.0)
        noisy["paragraph_graph"] = graph

    def garbage(module, inputs, out):
        pad = inputs[0].eq(module.padding_idx).unsqueeze(-1)
        return torch.where(pad, GARBAGE * torch.randn(out.shape, generator=g), out)

    tables = [m for m in model.modules()
              if isinstance(m, torch.nn.Embedding) and m.padding_idx == d.pad()]
    assert tables, "no embedding table with a padding index"
    hooks = [m.register_forward_hook(garbage) for m in tables]
    try:
        assert_equal_outputs(run(model, noisy), clean)
    finally:
        for hook in hooks:
            hook.remove()


@pytest.mark.parametrize("case", DECODER_CASES)
def test_encoder_states_under_padding_do_not_reach_the_decoder(case):
    """Garbage (1e4 x noise) in the encoder's states of padding tokens, absent paragraphs and
    absent sentences (each state tensor with its padding mask): the decoder's logits and
    attention weights are bit-identical."""
    model, d = build(case)
    batch = batch_of(case, d, torch.Generator().manual_seed(8))
    prev = batch["prev_output_tokens"]
    enc = encode(model, batch)
    g = torch.Generator().manual_seed(0)
    noisy, perturbed = dict(enc), 0
    for key, value in enc.items():
        if not value or not torch.is_floating_point(value[0]) or value[0].dim() < 3:
            continue
        masks = [m[0] for k, m in enc.items() if k.endswith("padding_mask") and m]
        # time-major states (L x B x P x C, S x B x C) or batch-major (B x S x C)
        fits = [m.movedim(-1, 0) for m in masks if m.movedim(-1, 0).shape == value[0].shape[:-1]]
        fits += [m for m in masks if m.shape == value[0].shape[:-1]]
        if not fits:
            continue
        assert len(fits) == 1, f"{key}: more than one padding mask fits"
        noise = GARBAGE * torch.randn(value[0].shape, generator=g)
        noisy[key] = [torch.where(fits[0].unsqueeze(-1), noise, value[0])]
        perturbed += int(fits[0].sum())
    assert perturbed > 0, "no encoder state sits under padding"
    with torch.no_grad():
        clean = model.decoder(prev, encoder_out=enc)
        out = model.decoder(prev, encoder_out=noisy)
    assert torch.equal(out[0], clean[0])
    for key in ATTENTION_KEYS:
        if clean[1].get(key):
            assert torch.equal(out[1][key][0], clean[1][key][0]), f"{key} changed"
