"""Cost of one PHT update with the papers' WikiSum settings (not a test).

Batch 16 x (30 paragraphs x 100 tokens + 145 target tokens), 3+3 layers, d=256, FFN 1024, 4 heads,
32k vocabulary. Measures seconds per update on this machine and the floating-point operations of
one update (torch.profiler's FLOP counts of matrix products, forward + backward), then estimates a
full run (600k updates, 000 Sec. 4.2) on one GPU sustaining ``--assumed-tflops``.

    python benchmarks/wikisum_step.py [--arch pht] [--assumed-tflops 20] [--updates 600000]
"""

import argparse
import time

import torch
import torch.nn.functional as F

from fairseq_hier.analysis.efficiency import build_model, make_batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="pht")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--updates", type=int, default=600_000)
    parser.add_argument("--assumed-tflops", type=float, default=20.0,
                        help="sustained TFLOP/s assumed for the GPU estimate")
    args = parser.parse_args()
    torch.manual_seed(0)
    model, d = build_model(args.arch, 3008)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    src, prev, target = make_batch(args.arch, d, args.batch_size, 30, "cpu")

    def step():
        opt.zero_grad()
        logits, _ = model(src, None, prev)
        F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1)).backward()
        opt.step()

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_flops=True) as prof:
        step()
    flops = sum(e.flops for e in prof.key_averages() if e.flops)
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = (time.perf_counter() - start) / args.steps
    gpu_seconds = flops / (args.assumed_tflops * 1e12)
    print(f"{args.arch}: {flops / 1e12:.2f} TFLOP per update; {seconds:.1f} s/update here "
          f"({torch.get_num_threads()} threads)")
    print(f"estimate at {args.assumed_tflops:g} sustained TFLOP/s: {gpu_seconds:.3f} s/update, "
          f"{args.updates} updates = {args.updates * gpu_seconds / 3600:.1f} h")


if __name__ == "__main__":
    main()
