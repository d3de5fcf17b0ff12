"""No unused parameters: which ``--ddp-backend`` each architecture can use.

torch's DistributedDataParallel (fairseq's default ``--ddp-backend pytorch_ddp``, alias ``c10d``)
all-reduces gradients in buckets as autograd produces them; a parameter that gets no gradient
in a step leaves its bucket unreduced, and the *next* forward fails with "Expected to have
finished reduction in the prior iteration" unless ``--find-unused-parameters`` (a graph walk
per step) is given. fairseq's ``--ddp-backend legacy_ddp`` all-reduces every gradient after the
backward pass and does not care.

For EVERY architecture fairseq-hier registers (the list is checked against fairseq's
registries), on a tiny model and batch:

- one forward + backward leaves no parameter that requires grad without a gradient;
- two steps through fairseq's own ``DistributedFairseqModel`` with ``pytorch_ddp`` and
  ``find_unused_parameters=False`` (a 1-rank gloo group in this process, on CPU thanks to
  ``fairseq_hier.compat.patch_ddp_on_cpu``) run without the error.

The one inherent exception is ``paragraph_ranker`` on a batch whose titles are ALL empty (002
allows empty titles: ``t_hat = 0``): its title LSTM then gets no gradient. The test names exactly
those parameters, shows that ``pytorch_ddp`` fails on them and that ``--find-unused-parameters``
fixes it (the README's table says so). The 2-process runs with the real backend are in
tests/training/test_distributed.py.
"""

import argparse

import pytest
import torch
import torch.distributed as dist
from conftest import free_port
from tiny_models import OUR_ARCHS, build_tiny, loss_of, one_thread, registered_archs  # noqa: F401

RANKER_TITLE_LSTM = ["title_lstm.bias_hh_l0", "title_lstm.bias_ih_l0", "title_lstm.weight_hh_l0",
                     "title_lstm.weight_ih_l0"]
DDP_ERROR = "Expected to have finished reduction in the prior iteration"


@pytest.fixture(scope="module")
def process_group():
    """A 1-rank gloo process group in this process, destroyed afterwards."""
    if dist.is_initialized():
        pytest.skip("torch.distributed is already initialised in this process")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", world_size=1,
                            rank=0)
    yield dist.group.WORLD
    dist.destroy_process_group()


def fairseq_ddp(model, group, find_unused_parameters=False):
    """``model`` wrapped as fairseq-train wraps it for ``--ddp-backend pytorch_ddp`` on rank 0
    (``device_ids=[0]``, which the compat fix turns into ``None`` for a CPU module)."""
    from fairseq.models import DistributedFairseqModel

    args = argparse.Namespace(tpu=False, ddp_backend="pytorch_ddp", device_id=0,
                              broadcast_buffers=False, bucket_cap_mb=25,
                              find_unused_parameters=find_unused_parameters,
                              gradient_as_bucket_view=False, ddp_comm_hook="none",
                              heartbeat_timeout=-1)
    return DistributedFairseqModel(args, model, process_group=group, device=torch.device("cpu"))


def without_gradient(model):
    return sorted(n for n, p in model.named_parameters() if p.requires_grad and p.grad is None)


def test_the_list_covers_every_registered_architecture():
    assert registered_archs() == sorted(OUR_ARCHS)


@pytest.mark.parametrize("arch", sorted(OUR_ARCHS))
def test_one_step_gives_every_parameter_a_gradient(arch):
    model, d = build_tiny(arch)
    loss = loss_of(arch, model, d)
    loss.backward()
    assert without_gradient(model) == []
    assert sum(p.numel() for p in model.parameters()) > 100 and torch.isfinite(loss)


@pytest.mark.parametrize("arch", sorted(OUR_ARCHS))
def test_pytorch_ddp_trains_without_find_unused_parameters(arch, process_group):
    model, d = build_tiny(arch)
    ddp = fairseq_ddp(model, process_group)
    assert isinstance(ddp.module, torch.nn.parallel.DistributedDataParallel)  # the real backend
    for step in range(2):  # an unused parameter of step 0 fails step 1's forward
        model.zero_grad()
        loss_of(arch, ddp, d, seed=step).backward()
    assert without_gradient(model) == []


VARIANTS = {  # options that add parameters or change which ones a step uses
    "vht --dynamic-paragraph-embedding authors": (
        "vht", dict(dynamic_paragraph_embedding="authors"), {}),
    "liu_ht --paragraph-graph (Eq. 24 head)": (
        "liu_ht", dict(graph_attention=True, graph_head=1),
        {"paragraph_graph": torch.rand(2, 3, 3, generator=torch.Generator().manual_seed(0))}),
    "hat_bart_base --segment-embeddings 3": (
        "hat_bart_base", dict(segment_embeddings=3),
        {"src_segments": torch.tensor([[0, 1, 0, 0], [2, 0, 0, 0], [0, 1, 2, 1]])}),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_options_that_add_parameters_leave_none_unused(variant, process_group):
    arch, options, inputs = VARIANTS[variant]
    model, d = build_tiny(arch, **options)
    plain, _ = build_tiny(arch)
    assert sum(p.numel() for p in model.parameters()) >= sum(p.numel() for p in plain.parameters())
    ddp = fairseq_ddp(model, process_group)
    for step in range(2):
        model.zero_grad()
        loss_of(arch, ddp, d, seed=step, extra=inputs).backward()
    assert without_gradient(model) == []


def test_paragraph_ranker_with_only_empty_titles_needs_find_unused_parameters(process_group):
    model, d = build_tiny("paragraph_ranker")
    loss_of("paragraph_ranker", model, d, titles=(0, 0)).backward()
    assert without_gradient(model) == RANKER_TITLE_LSTM
    # the real backend fails on them in the next step ...
    model, d = build_tiny("paragraph_ranker")
    ddp = fairseq_ddp(model, process_group)
    loss_of("paragraph_ranker", ddp, d, titles=(0, 0)).backward()
    with pytest.raises(RuntimeError, match=DDP_ERROR):
        loss_of("paragraph_ranker", ddp, d, seed=1).backward()
    # ... unless --find-unused-parameters
    model, d = build_tiny("paragraph_ranker")
    ddp = fairseq_ddp(model, process_group, find_unused_parameters=True)
    for step, titles in enumerate([(0, 0), (3, 2), (0, 0)]):
        model.zero_grad(set_to_none=True)
        loss_of("paragraph_ranker", ddp, d, seed=step, titles=titles).backward()
        assert (without_gradient(model) == RANKER_TITLE_LSTM) == (titles == (0, 0))
