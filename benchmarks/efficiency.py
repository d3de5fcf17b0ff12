"""Training efficiency of flat vs hierarchical Transformers, side by side in one run (not a test).

For 1600 and 3000 source tokens (16 or 30 paragraphs x 100 tokens) and a 145-token target
(WikiSum's average), measures for fairseq's ``transformer``, ``pht``, ``vht`` and ``liu_ht`` with
the same layers and widths (the papers' 3 layers, d=256, FFN 1024, 4 heads, dropout 0.3; ``liu_ht``'s
3 encoder layers are 2 local + 1 global, as its 7 are 5 + 2):
- peak training memory of a training step (forward + backward + Adam), above the memory held
  before the step (model, gradients, optimizer state and batch). On CUDA:
  torch.cuda.max_memory_allocated; on CPU: the running sum of the allocation/free events that
  torch.profiler records during the step (exact for tensors, unlike RSS, which keeps freed pages);
- training throughput, (source + target) tokens per second over timed steps after warm-up;
- parameter count.
Each configuration runs in its own worker process so peaks do not mix. Prints a table, ratios to
``transformer``, and as its last line one JSON object of the ratios.

One more row, ``transformer-S2``, is fairseq's transformer with its self-attention forced onto
fairseq's explicit path, which materialises the S x S attention matrices as the papers'
implementations did: modern fairseq/torch run the flat encoder through memory-efficient
scaled-dot-product attention, which removes the quadratic term that made flat models expensive
in 000 Table 4. Its ratios are reported as extra keys (``*_vs_s2``), never instead of the default.

    python benchmarks/efficiency.py [--batch-size 2] [--steps 3] [--device cpu|cuda]
"""

import argparse
import json
import subprocess
import sys
import time
import types

LENGTHS = {1600: 16, 3000: 30}  # source tokens -> paragraphs of 100 tokens
PARAGRAPH_TOKENS, TARGET_TOKENS, VOCAB = 100, 145, 32000
ARCHS = ("transformer", "pht", "vht", "liu_ht", "transformer-S2")
DIMS = dict(encoder_layers=3, decoder_layers=3, encoder_embed_dim=256, decoder_embed_dim=256,
            encoder_ffn_embed_dim=1024, decoder_ffn_embed_dim=1024, encoder_attention_heads=4,
            decoder_attention_heads=4, dropout=0.3)


def build_model(arch, max_source_positions):
    import torch  # noqa: F401
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    import fairseq_hier  # noqa: F401

    d = Dictionary()
    for i in range(VOCAB - d.nspecial):
        d.add_symbol(f"w{i}")
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    materialize = arch == "transformer-S2"
    arch = "transformer" if materialize else arch
    args = argparse.Namespace(arch=arch, **DIMS)
    if arch == "liu_ht":  # the top encoder layer global, 4 pooling / inter-paragraph heads
        args.global_layers, args.global_heads = str(DIMS["encoder_layers"] - 1), 4
        args.attention_dropout = args.activation_dropout = 0.0  # as the others (002 has 0.1)
    if arch == "transformer":
        args.share_all_embeddings = True
        args.max_source_positions = max_source_positions
        args.max_target_positions = 1024
    ARCH_CONFIG_REGISTRY[arch](args)
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task)
    if materialize:  # fairseq's MultiheadAttention skips the fused kernel when this is set
        for layer in model.encoder.layers:
            layer.self_attn.skip_embed_dim_check = True
    return model, d


def make_batch(arch, d, batch_size, paragraphs, device):
    import torch

    g = torch.Generator().manual_seed(0)
    words = lambda *shape: torch.randint(d.nspecial, len(d), shape, generator=g)  # noqa: E731
    if arch.startswith("transformer"):
        src = torch.cat([words(batch_size, paragraphs * PARAGRAPH_TOKENS - 1),
                         torch.full((batch_size, 1), d.eos())], 1)  # B x S
    else:
        src = words(batch_size, paragraphs, PARAGRAPH_TOKENS)  # B x P x L
    target = torch.cat([words(batch_size, TARGET_TOKENS - 1), torch.full((batch_size, 1), d.eos())], 1)
    prev = torch.cat([torch.full((batch_size, 1), d.eos()), target[:, :-1]], 1)
    return src.to(device), prev.to(device), target.to(device)


def cpu_peak_mb(fn):
    """Peak of the net bytes allocated while ``fn`` runs, from torch.profiler's memory events."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    current = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        current += e.nbytes()
        peak = max(peak, current)
    return peak / 2**20


def training_step(model, lr, src_tokens, src_lengths, prev_output_tokens, target):
    """One Adam training step (cross-entropy) of ``model`` on a fixed batch, as a closure."""
    import torch
    import torch.nn.functional as F

    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def step():
        opt.zero_grad(set_to_none=False)
        logits, _ = model(src_tokens, src_lengths, prev_output_tokens)
        F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1)).backward()
        opt.step()

    return step


def step_flops(step):
    """Floating-point operations of one call of ``step`` as torch's FlopCounterMode counts them:
    matrix products (``mm``, ``addmm``, ``bmm``, attention kernels) forward and backward, 2 per
    multiply-add; elementwise work, softmax and the optimizer's update are not counted. The same
    on any machine, so a ratio of two models' counts is free of timing noise."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def measure(step, steps, device):
    """``step`` once as warm-up (it allocates gradients and Adam state, so the baseline holds
    them), then ``steps`` timed calls, then the peak MB of one more above the pre-step state.
    Returns (seconds for the timed calls, peak MB)."""
    import torch

    step()
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    elapsed = time.perf_counter() - start
    if device == "cuda":
        base = torch.cuda.memory_allocated() / 2**20
        torch.cuda.reset_peak_memory_stats()
        step()
        return elapsed, torch.cuda.max_memory_allocated() / 2**20 - base
    return elapsed, cpu_peak_mb(step)


def run_workers(script, configs, batch_size, steps, device):
    """Each (arch, tokens) of ``configs`` in its own process (``script --worker``), so peaks
    do not mix; returns {(arch, tokens): the worker's JSON line}."""
    results = {}
    for arch, tokens in configs:
        cmd = [sys.executable, script, "--worker", arch, str(tokens), "--batch-size",
               str(batch_size), "--steps", str(steps), "--device", device]
        out = subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE).stdout
        results[(arch, tokens)] = json.loads(out.strip().splitlines()[-1])
        print(f"measured {arch} @ {tokens}: {results[(arch, tokens)]}", file=sys.stderr)
    return results


def side_by_side(doc, script, worker_fn, configs, batch_size, steps):
    """The command line of a side-by-side benchmark: in a worker process (``--worker ARCH
    TOKENS``) runs ``worker_fn`` and exits; else runs every config in its own worker and
    returns (args, device, results)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--steps", type=int, default=steps, help="timed steps after one warm-up step")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    parser.add_argument("--worker", nargs=2, metavar=("ARCH", "TOKENS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.worker:
        worker_fn(args.worker[0], int(args.worker[1]), args.batch_size, args.steps, device)
        sys.exit(0)
    return args, device, run_workers(script, configs, args.batch_size, args.steps, device)


def worker(arch, tokens, batch_size, steps, device):
    """One configuration in this process; prints a JSON line."""
    import torch

    torch.manual_seed(0)
    model, d = build_model(arch, tokens + 8)
    model.to(device).train()
    src, prev, target = make_batch(arch, d, batch_size, LENGTHS[tokens], device)
    elapsed, peak = measure(training_step(model, 1e-4, src, None, prev, target), steps, device)
    tokens_per_step = batch_size * (tokens + TARGET_TOKENS)
    print(json.dumps({"arch": arch, "tokens": tokens, "peak_mb": round(peak, 1),
                      "tokens_per_s": round(steps * tokens_per_step / elapsed, 1),
                      "params": sum(p.numel() for p in model.parameters())}))


def main():
    configs = [(arch, tokens) for tokens in LENGTHS for arch in ARCHS]
    args, device, results = side_by_side(__doc__, __file__, worker, configs, batch_size=2, steps=3)

    print(f"device: {device}, batch {args.batch_size} x (S source + {TARGET_TOKENS} target tokens),"
          f" {args.steps} timed training steps; memory = peak above the pre-step state; ratios to "
          f"fairseq's transformer")
    print(f"{'model':<16}{'src tokens':>11}{'params':>12}{'peak MB':>10}{'tokens/s':>10}"
          f"{'mem ratio':>11}{'tps ratio':>11}")
    ratios = {}
    for tokens in LENGTHS:
        flat, s2 = results[("transformer", tokens)], results[("transformer-S2", tokens)]
        for arch in ARCHS:
            r = results[(arch, tokens)]
            mem, tps = r["peak_mb"] / flat["peak_mb"], r["tokens_per_s"] / flat["tokens_per_s"]
            if arch in ("pht", "vht", "liu_ht"):
                ratios[f"{arch}_mem_ratio_{tokens}"] = round(mem, 3)
                ratios[f"{arch}_tps_ratio_{tokens}"] = round(tps, 3)
                ratios[f"{arch}_mem_ratio_{tokens}_vs_s2"] = round(r["peak_mb"] / s2["peak_mb"], 3)
            print(f"{arch:<16}{tokens:>11}{r['params']:>12,}{r['peak_mb']:>10.0f}"
                  f"{r['tokens_per_s']:>10.0f}{mem:>11.2f}{tps:>11.2f}")
    print(json.dumps(ratios))


if __name__ == "__main__":
    main()
