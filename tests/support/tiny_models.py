"""Every architecture fairseq-hier registers, built tiny in-process, with a fixed tiny batch and a
scalar training loss: shared by tests/models/test_checkpoint_activations.py and
tests/models/test_unused_parameters.py (imported by name, as conftest is).

``OUR_ARCHS`` lists the registered names, with their tiny dims, from the table of architectures
(``fairseq_hier/recipes/architectures.py``); :func:`registered_archs` reads fairseq's registries,
so a test can assert that the list is complete (a new architecture must be added to the table).
Dropout is 0 unless a caller overrides it.
"""

import types

import pytest
import torch
import torch.nn.functional as F
from conftest import bos_source, build_model, left_pad, make_dict, paragraph_dict
from conftest import random_prev_tokens

from fairseq_hier.recipes.architectures import ARCHITECTURES, TINY_FLAT, TINY_LIU, archs_with

# the tiny dims of fairseq_hier/recipes/architectures.py (the one table), by the names tests use
FLAT, LIU = TINY_FLAT, TINY_LIU

# arch -> (family, tiny dims) of every architecture fairseq-hier registers (the table's, ours);
# the family picks the dictionary, batch and loss
OUR_ARCHS = {a: (ARCHITECTURES[a].tiny_family, dict(ARCHITECTURES[a].tiny))
             for a in archs_with(ours=True)}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: one intra-op thread is faster than two (no spinning against the other
    processes of the suite); restored afterwards. Import it into a test module to apply it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def registered_archs():
    """Every architecture name whose model class or preset function is ours."""
    import fairseq_hier
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    fairseq_hier.register()
    return sorted(a for a, m in ARCH_MODEL_REGISTRY.items()
                  if m.__module__.startswith("fairseq_hier")
                  or ARCH_CONFIG_REGISTRY[a].__module__.startswith("fairseq_hier"))


def build_tiny(arch, **overrides):
    """(model in train mode, dictionary) for ``arch`` at tiny dims, seed 0."""
    import fairseq_hier

    fairseq_hier.register()
    family, dims = OUR_ARCHS[arch]
    kw = {**dims, **overrides}
    torch.manual_seed(0)
    if family == "predictor":
        from fairseq_hier.models.attention_predictor import (AttentionPredictorConfig,
                                                             AttentionPredictorModel)

        model = AttentionPredictorModel.build_model(AttentionPredictorConfig(**kw), None)
        return model.train(), None
    if family == "ranker":
        from fairseq_hier.models.paragraph_ranker import ParagraphRankerConfig, ParagraphRankerModel

        d = make_dict(30)
        task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
        return ParagraphRankerModel.build_model(ParagraphRankerConfig(**kw), task).train(), d
    d = paragraph_dict() if family.startswith("hier") else make_dict(30)
    return build_model(arch, d, **kw).train(), d


# ------------------------------------------------------------------------------ tiny batches
def paragraphs(d, g, shape=(2, 3, 5), lengths=((4, 5, 0), (2, 3, 5))):
    """``B x P x L`` sources: example b, paragraph p has ``lengths[b][p]`` tokens (0 = absent)."""
    src = torch.full(shape, d.pad())
    for b, row in enumerate(lengths):
        for p, n in enumerate(row):
            src[b, p, :n] = torch.randint(d.nspecial, len(d) - 1, (n,), generator=g)
    return src


def parse_of(src, pad):
    """Dependency ids of each piece (``src`` shape): word i = pieces 2i and 2i+1, each word's
    head the previous word (the first word is the root), -1 on padding."""
    pos = torch.arange(src.size(-1)).expand_as(src)
    words = (pos // 2).masked_fill(src.eq(pad), -1)
    heads = (words - 1).masked_fill(words <= 0, -1)
    return words, heads


def batch_of(arch, d, g, titles=(3, 2)):
    """The forward kwargs of ``arch`` for a fixed tiny batch drawn from ``g``."""
    family = OUR_ARCHS[arch][0]
    if family in ("hier", "hier_parse"):
        src = paragraphs(d, g)
        batch = {"src_tokens": src, "src_lengths": None,
                 "prev_output_tokens": random_prev_tokens(d, 2, 4)}
    elif family in ("flat", "flat_parse"):
        src = paragraphs(d, g, (2, 1, 7), ((7,), (5,))).squeeze(1)  # B x S (right padded)
        src[0, 6], src[1, 4] = d.eos(), d.eos()
        batch = {"src_tokens": src, "src_lengths": src.ne(d.pad()).sum(1),
                 "prev_output_tokens": random_prev_tokens(d, 2, 4)}
    elif family == "sentences":  # every sentence opens with BOS (HAT); left-padded
        src = left_pad([bos_source(3, 4, 2), bos_source(5), bos_source(2, 2, 2, 2)])
        batch = {"src_tokens": src, "src_lengths": src.ne(d.pad()).sum(1),
                 "prev_output_tokens": random_prev_tokens(d, 3, 5)}
    elif family == "predictor":
        mask = torch.tensor([[False, False, False, True], [False, False, False, False]])
        return {"paragraph_embeddings": torch.randn(2, 4, 8, generator=g),
                "paragraph_padding_mask": mask}
    elif family == "ranker":
        src = paragraphs(d, g)
        title = torch.full((2, max(max(titles), 1)), d.pad())
        for b, n in enumerate(titles):
            title[b, :n] = torch.randint(d.nspecial, len(d), (n,), generator=g)
        return {"src_tokens": src, "src_lengths": src.ne(d.pad()).sum(-1),
                "title_tokens": title, "title_lengths": torch.tensor(titles)}
    if family.endswith("parse"):
        batch["src_words"], batch["src_heads"] = parse_of(batch["src_tokens"], d.pad())
    return batch


def loss_of(arch, model, d, seed=0, extra=None, **batch_options):
    """A scalar training loss of ``model`` on the fixed tiny batch of ``seed`` (plus the
    forward kwargs ``extra``): cross entropy against fixed random targets; MSE against a fixed
    distribution (attention predictor); BCE on the present paragraphs (paragraph ranker, as its
    criterion)."""
    g = torch.Generator().manual_seed(seed)
    batch = {**batch_of(arch, d, g, **batch_options), **(extra or {})}
    family = OUR_ARCHS[arch][0]
    out = model(**batch)
    if family == "predictor":
        mask = batch["paragraph_padding_mask"]
        target = torch.softmax(torch.randn(mask.shape, generator=g), -1).masked_fill(mask, 0.0)
        return F.mse_loss(out, target, reduction="sum")
    if family == "ranker":
        present = batch["src_lengths"].gt(0)
        target = torch.rand(present.shape, generator=g)
        return F.binary_cross_entropy_with_logits(out[present], target[present], reduction="sum")
    logits = out[0]
    targets = torch.randint(d.nspecial, len(d), logits.shape[:2], generator=g)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1),
                           reduction="sum")


def stacks(model):
    """Every layer of every encoder/decoder stack of ``model`` (the attention predictor: its
    layers; pht / vht: fairseq's token encoder inside ours; HAT: its hierarchical layers too)."""
    enc = getattr(model, "encoder", None)
    if enc is None:
        return list(getattr(model, "layers", []))
    layers = list(getattr(enc, "token_encoder", enc).layers)
    layers.extend(getattr(enc, "hierarchical_layers", []))
    return layers + list(model.decoder.layers)
