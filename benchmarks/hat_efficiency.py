"""Training cost of HAT vs plain BART, side by side in one run (not a test).

``hat_bart_base`` vs ``long_bart_base`` (fairseq's ``bart_base`` with the same 3072 source
positions) at 1024 and 3072 source tokens, a BOS symbol opening a sentence every 25 tokens
(004's arXiv inputs: ~25 BPE tokens a sentence), a 256-token target, BART's 50265 symbols,
dropout 0.1. Per configuration, in its own worker process: training tokens/s over timed Adam
steps after a warm-up step, and the peak memory of one step above the pre-step state
(CUDA: ``torch.cuda.max_memory_allocated``; CPU: torch.profiler's allocation events, as
``benchmarks/efficiency.py``). The paper paid 1.15x time (115 h vs 100 h on arXiv); targets:
time <= 1.10x, memory <= 1.15x. Last line: one JSON object with ``hat_time_ratio_3072``,
``hat_mem_ratio_3072``, ``hat_time_ratio_1024``, ``hat_mem_ratio_1024``.

    python benchmarks/hat_efficiency.py [--batch-size 1] [--steps 2] [--device cpu|cuda]
"""

import argparse
import json
import types

from efficiency import measure, side_by_side, training_step  # one definition of the measurements

LENGTHS = (1024, 3072)
ARCHS = ("long_bart_base", "hat_bart_base")
SENTENCE_TOKENS, TARGET_TOKENS, VOCAB = 25, 256, 50265


def build_model(arch):
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    import fairseq_hier

    fairseq_hier.register()
    d = Dictionary()
    for i in range(VOCAB - len(d)):
        d.add_symbol(f"w{i}")
    args = argparse.Namespace(task="translation", dropout=0.1, max_target_positions=1024)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task), d


def make_batch(d, batch_size, tokens, device):
    """``B x S`` sources with a BOS every SENTENCE_TOKENS tokens and a final EOS."""
    import torch

    g = torch.Generator().manual_seed(0)
    words = lambda *shape: torch.randint(d.nspecial, len(d), shape, generator=g)  # noqa: E731
    src = words(batch_size, tokens)
    src[:, ::SENTENCE_TOKENS] = d.bos()
    src[:, -1] = d.eos()
    target = torch.cat([words(batch_size, TARGET_TOKENS - 1), torch.full((batch_size, 1), d.eos())], 1)
    prev = torch.cat([torch.full((batch_size, 1), d.eos()), target[:, :-1]], 1)
    return src.to(device), prev.to(device), target.to(device)


def worker(arch, tokens, batch_size, steps, device):
    import torch

    torch.manual_seed(0)
    model, d = build_model(arch)
    model.to(device).train()
    src, prev, target = make_batch(d, batch_size, tokens, device)
    lengths = torch.full((batch_size,), tokens, device=device)
    elapsed, peak = measure(training_step(model, 1e-5, src, lengths, prev, target), steps, device)
    print(json.dumps({"arch": arch, "tokens": tokens, "peak_mb": round(peak, 1),
                      "s_per_step": round(elapsed / steps, 3),
                      "params": sum(p.numel() for p in model.parameters())}))


def main():
    configs = [(arch, tokens) for tokens in LENGTHS for arch in ARCHS]
    args, device, results = side_by_side(__doc__, __file__, worker, configs, batch_size=1, steps=2)

    print(f"device: {device}, batch {args.batch_size} x (S source + {TARGET_TOKENS} target tokens), "
          f"BOS every {SENTENCE_TOKENS} tokens, {args.steps} timed steps; ratios HAT / plain")
    print(f"{'model':<16}{'src tokens':>11}{'params':>14}{'peak MB':>10}{'s/step':>9}"
          f"{'tokens/s':>10}{'time ratio':>12}{'mem ratio':>11}")
    ratios = {}
    for tokens in LENGTHS:
        plain = results[("long_bart_base", tokens)]
        for arch in ARCHS:
            r = results[(arch, tokens)]
            time_ratio = r["s_per_step"] / plain["s_per_step"]
            mem_ratio = r["peak_mb"] / plain["peak_mb"]
            tps = args.batch_size * (tokens + TARGET_TOKENS) / r["s_per_step"]
            print(f"{arch:<16}{tokens:>11}{r['params']:>14,}{r['peak_mb']:>10.0f}"
                  f"{r['s_per_step']:>9.2f}{tps:>10.0f}{time_ratio:>12.3f}{mem_ratio:>11.3f}")
        hat = results[("hat_bart_base", tokens)]
        ratios[f"hat_time_ratio_{tokens}"] = round(hat["s_per_step"] / plain["s_per_step"], 3)
        ratios[f"hat_mem_ratio_{tokens}"] = round(hat["peak_mb"] / plain["peak_mb"], 3)
    print(json.dumps({k: ratios[k] for k in ("hat_time_ratio_3072", "hat_mem_ratio_3072",
                                             "hat_time_ratio_1024", "hat_mem_ratio_1024")}))


if __name__ == "__main__":
    main()
