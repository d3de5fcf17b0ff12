"""``fairseq-hier analyse``: what trained systems do: attention-cosine, heatmap, efficiency.

    fairseq-hier analyse attention-cosine DATA_BIN --path RUN/checkpoint_best.pt \\
        --generate-log RUN/generate-test.txt --subset test -o RUN/attention.json
    fairseq-hier analyse heatmap gen.out --id 3 -o example3.png [--gpt2-encoder-json F]
    fairseq-hier analyse efficiency --archs transformer pht vht --tokens 1600 -o efficiency.json

Specification: docs/commands.md, section analyse (the metrics: :mod:`fairseq_hier.analysis`).
Imports ``fairseq_hier.analysis``, ``report``, ``io``, ``errors``, ``safe_loading`` and
``fairseq_hier.cli.common`` (torch and fairseq inside functions).
"""

import argparse
import json
import os
import sys
from typing import Tuple

from fairseq_hier.analysis import efficiency as eff
from fairseq_hier.cli.common import (count, family_commands, positive_int, ranged, renamed,
                                     run_subcommand, split_option, subcommand)
from fairseq_hier.errors import HierError, shell_words
from fairseq_hier.io import atomic_outputs
from fairseq_hier.report import attention_heatmap
from fairseq_hier.safe_loading import UnreadableCheckpoint, trusting

PROG = "fairseq-hier-analyse"
ARCHS = eff.TABLE_ARCHS  # the rows --archs may name
# efficiency's --help text after the description: usage, rules and output
EFFICIENCY_EPILOG = """    fairseq-hier analyse efficiency --archs transformer pht vht liu_ht --tokens 1600 \\
        --memory-budget-gib 11 --layers 3 --embed-dim 256 --output efficiency.json [--cpu]
    fairseq-hier analyse efficiency --archs transformer pht vht --data demo_work/data-bin \\
        --output demo_work/runs/pht/efficiency.json     # valid time on a real split

Every column, the rows and the JSON schema are described in :mod:`fairseq_hier.analysis.efficiency`.
On CUDA (the default when present) the max batch is searched with real out-of-memory under a
capped allocator; on CPU (``--cpu`` or no GPU) on the measured peak allocations of each tried
batch, which costs one training step per try: at 000's widths that is minutes per model on a
few cores (use ``--max-batch-limit``, smaller ``--tokens`` / ``--embed-dim``, or
``--no-max-batch``). Prints the table, then the JSON as its last line; ``--output`` is checked
before anything is measured and written whole or not at all.
"""


def attention_cosine(args) -> dict:
    # refused before the model is loaded when --output is one of the inputs
    with atomic_outputs([args.output], inputs=[args.generate_log, args.path]) as (f,), \
            trusting(args.trust_checkpoint):
        record, n = score(args)
        json.dump(record, f, indent=1)
    print_summary(args, record, n)
    return record


def score(args) -> Tuple[dict, int]:
    """The attention.json record of the system, and the number of examples of the split."""
    # imported here, not at the top: the analysis imports torch and fairseq; --help stays light
    from fairseq_hier.analysis.attention_cosine import score_system

    cut = {name: getattr(args, name) for name in
           ("max_paragraphs", "max_paragraph_tokens", "max_source_positions")
           if getattr(args, name) is not None}
    try:
        return score_system(args.path, args.data, args.subset, args.generate_log, cut,
                            args.batch_size, args.heatmaps, cpu=args.cpu,
                            bootstrap_samples=args.bootstrap_samples, seed=args.seed)
    except UnreadableCheckpoint as e:
        raise HierError(f"--path {args.path}: not a fairseq checkpoint ({e})") from None


def print_summary(args, record: dict, n: int) -> None:
    c, excluded = record["cosine"], record["excluded"]["zero_gold"]
    print(f"{args.output}: {record['arch']} ({record['attention']} attention), split "
          f"{args.subset}, {record['examples']} of {n} examples scored, "
          f"{len(excluded)} excluded (gold all zero), {len(record['heatmaps'])} heatmaps")
    print(f"paragraph-attention cosine {c['mean']:.4f} (95% CI {c['low']:.4f}-{c['high']:.4f}, "
          f"{record['examples']} examples)")


def heatmap(args) -> None:
    steps, sentences = attention_heatmap.heatmap(args.generate_output, args.id, args.output,
                                                 args.hypothesis,
                               args.gpt2_encoder_json, args.top_k, args.max_steps)
    print(f"{args.output}: {steps} target steps x {sentences} sentences")


def _check_efficiency(parser: argparse.ArgumentParser, args) -> None:
    """The rules between options (each option's own range is checked when parsed)."""
    if args.tokens % 100:
        parser.error(f"--tokens must be a positive multiple of 100, got {args.tokens}")
    if args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} is not divisible by --heads {args.heads}")
    if args.data is not None and not os.path.isdir(args.data):
        parser.error(f"--data {args.data}: no such directory")
    if (args.dependency_parse or args.task_args) and args.data is None:
        parser.error("--dependency-parse and --task-args need --data")
    split_option(parser, "--task-args", args.task_args)
    if len(set(args.archs)) != len(args.archs):
        parser.error(f"--archs: an architecture is given twice: {' '.join(args.archs)}")


def efficiency(args) -> dict:
    if args.output:  # a bad --output is refused before minutes of measuring
        with atomic_outputs([args.output]) as (f,):
            result = measure(args)
            json.dump(result, f, indent=1)
            f.write("\n")
        print(f"wrote {args.output}")
    else:
        result = measure(args)
    print(json.dumps(result))
    return result


def measure(args) -> dict:
    """Measure the table and print it."""
    import torch  # lazy: --help and the option checks start without torch

    if args.threads:
        torch.set_num_threads(args.threads)
    device = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    result = eff.efficiency_table(
        args.archs, args.tokens, args.memory_budget_gib, args.layers, args.embed_dim, device,
        args.dtype, args.batch_size, args.valid_examples, args.valid_batch_size,
        args.max_batch_limit, args.data, args.dependency_parse,
        shell_words("--task-args", args.task_args),
        args.vocab, args.heads, not args.no_max_batch, eff.log_stderr, args.valid_repeats)
    print(eff.format_table(result))
    return result


def _add_attention_cosine(sub) -> None:
    p = subcommand(sub, "attention-cosine", attention_cosine, "paragraph-attention cosine of a "
                   "trained system against the reference's tf-idf distribution")
    p.add_argument("data", help="data-bin of the hierarchical_summarization task")
    p.add_argument("--path", required=True, help="the system's checkpoint")
    p.add_argument("--generate-log", required=True,
                   help="fairseq-generate's output for --subset (its H- lines are read)")
    p.add_argument("--subset", default="test", help="split of the data-bin (default: test)")
    p.add_argument("-o", "--output", required=True, help="attention.json to write")
    p.add_argument("--heatmaps", type=count, default=3,
                   help="store the per-step attention of the first K examples (default 3)")
    p.add_argument("--batch-size", type=positive_int, default=16,
                   help="examples per forward pass")
    p.add_argument("--max-paragraphs", type=positive_int, default=None,
                   help="override the checkpoint's paragraph count")
    p.add_argument("--max-paragraph-tokens", type=positive_int, default=None,
                   help="override the checkpoint's paragraph length")
    p.add_argument("--max-source-positions", type=positive_int, default=None,
                   help="override the checkpoint's flat cut (flat models)")
    p.add_argument("--bootstrap-samples", type=positive_int, default=1000,
                   help="bootstrap resamples of the 95%% interval (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--cpu", action="store_true", help="do not use a GPU")
    p.add_argument("--trust-checkpoint", action="store_true",
                   help="load a checkpoint that holds objects beyond weights and options "
                        "(torch.load(weights_only=False): it may run code; only for files you "
                        "trust)")


def _add_heatmap(sub) -> None:
    p = subcommand(sub, "heatmap", heatmap, "heatmap of HAT's sentence attention for one "
                   "generated example (paper 004, Sec. 6, Figs. 2-3)",
                   "fairseq-generate data-bin --path hat.pt --print-sentence-attention ... > "
                   "gen.out\nfairseq-hier analyse heatmap gen.out --id 3 -o example3.png")
    p.add_argument("generate_output", metavar="GENERATE_LOG",
                   help="fairseq-generate's output (stdout) with A- lines")
    p.add_argument("--id", type=count, required=True, help="example id (the N of H-N)")
    p.add_argument("-o", "--output", required=True,
                        help="image file to write (PNG; its extension names the format)")
    renamed(p, "--output", "--out")
    p.add_argument("--hypothesis", type=count, default=0,
                        help="which hypothesis of the example with --nbest > 1 (default 0: the "
                             "first H- line of that id)")
    p.add_argument("--gpt2-encoder-json", default=None,
                        help="GPT-2's encoder.json: label the H- tokens (BART: GPT-2 BPE ids) "
                             "with their text pieces")
    p.add_argument("--top-k", type=count, default=0,
                        help="per target token keep the k largest sentence weights, renormalised "
                             "to sum 1 (default 0: all). The paper (004 Figs. 2-3) kept the top "
                             "16 BOS tokens across the heads; our weights are already averaged "
                             "over the heads")
    p.add_argument("--max-steps", type=positive_int, default=None,
                        help="draw only the first M target steps (default: all)")


def _add_efficiency(sub) -> None:
    p = subcommand(sub, "efficiency", efficiency, "the computational-efficiency table of paper "
                   "000 (Table 4, Sec. 5.4) for our architectures at the same widths: parameters, "
                   "peak training memory, the largest batch under a memory budget, validation "
                   "time; written as efficiency.json for the report")
    p.epilog = EFFICIENCY_EPILOG
    p.add_argument("--archs", nargs="+", choices=ARCHS, default=list(ARCHS), metavar="ARCH",
                   help=f"rows, in order (default: all of {', '.join(ARCHS)})")
    p.add_argument("--tokens", type=ranged(int, 100), default=1600,
                   help="source tokens, a multiple of 100 (paragraphs of 100); 000: 1600")
    p.add_argument("--memory-budget-gib", type=ranged(float, 0, low_open=True), default=11.0,
                   help="memory budget of the max-batch search (000: an 11 GB 2080 Ti)")
    p.add_argument("--layers", type=positive_int, default=3,
                   help="encoder and decoder layers (000: 3)")
    p.add_argument("--embed-dim", type=positive_int, default=256,
                   help="model dimension d (FFN 4d; 000: 256)")
    p.add_argument("--heads", type=positive_int, default=4, help="attention heads (000: 4)")
    p.add_argument("--vocab", type=ranged(int, 8), default=None,
                   help="symbols of the synthetic dictionary (default 32000; with --data: the "
                        "data-bin's dictionary)")
    p.add_argument("--batch-size", type=positive_int, default=1,
                   help="batch of the peak-memory column (default 1)")
    p.add_argument("--max-batch-limit", type=positive_int, default=1024,
                   help="largest batch the search tries")
    p.add_argument("--no-max-batch", action="store_true", help="skip the max-batch search")
    p.add_argument("--valid-examples", type=positive_int, default=64,
                   help="synthetic validation examples (without --data)")
    p.add_argument("--valid-batch-size", type=positive_int, default=8, help="validation batch size")
    p.add_argument("--valid-repeats", type=positive_int, default=1,
                   help="timed validation passes; the fastest counts (default 1)")
    p.add_argument("--data", default=None, metavar="DATA_BIN",
                   help="time validation on this data-bin's valid split (hierarchical_"
                        "summarization task); the models then use its dictionary")
    p.add_argument("--dependency-parse", default=None, metavar="NAME",
                   help="with --data: the parse ParsingSum's rows read (valid.parse.NAME.*)")
    p.add_argument("--task-args", default="",
                   help="with --data: more task flags, one string (e.g. \"--paragraph-separator "
                        "'<P>'\"); they come after the ones set from --tokens")
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                   help="fp32 or bf16 autocast (weights and Adam stay fp32)")
    p.add_argument("--cpu", action="store_true", help="measure on CPU even if CUDA is present")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="torch CPU threads (1 on a shared machine: several threads slow down "
                        "unevenly when other processes take cores)")
    p.add_argument("-o", "--output", default=None, help="write efficiency.json here")
    p.checks.append(_check_efficiency)


get_parser, cli_main = family_commands(
    PROG, __doc__, (_add_attention_cosine, _add_heatmap, _add_efficiency))
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
