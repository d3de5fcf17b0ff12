"""Decoding time of attention alignment vs vanilla beam search, same model, same inputs.

fairseq's SequenceGenerator vs ours with ``attalign`` (also timed: live-beam ranking, strCov, and
without a checkpoint fairseq's flat ``transformer`` on the flattened sources): alternated rounds
in process CPU time, ratios of the medians with 95% bootstrap intervals; ``--until-decided``
adds rounds until ``align_time_ratio``'s interval lies on one side of the 1.10 target.
Protocol and the JSON keys: docs/benchmarks.md, section alignment_speed.py.

    python benchmarks/alignment_speed.py [--repeats 6] [--until-decided] [--max-repeats 40]
    python benchmarks/alignment_speed.py --checkpoint demo_work/runs/pht/checkpoint_last.pt \\
        --predictor demo_work/runs/attention_predictor/checkpoint_best.pt \\
        --data demo_work/data-bin --max-paragraphs 30 --max-paragraph-tokens 100
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why

import fairseq_hier  # noqa: E402,F401
from fairseq.data import Dictionary  # noqa: E402
from fairseq.models import ARCH_CONFIG_REGISTRY  # noqa: E402
from fairseq.sequence_generator import SequenceGenerator  # noqa: E402

from fairseq_hier.generation.sequence_generator import AttentionAlignmentSequenceGenerator  # noqa: E402
from fairseq_hier.models.attention_predictor import (  # noqa: E402
    AttentionPredictorConfig,
    AttentionPredictorModel,
)
from fairseq_hier.models.hierarchical_transformer import PHTModel  # noqa: E402

from benchmarks.harness import median_ratio  # noqa: E402
from fairseq_hier.analysis.efficiency import TINY  # noqa: E402

TARGET = 1.10
# widths -> PHT options set before the papers' defaults (the flat model and the predictor follow)
WIDTHS = {"paper": {}, "tiny": TINY}


def synthetic(args):
    """A random PHT (``--widths``) + predictor and a random B x P x L batch."""
    torch.manual_seed(0)
    dictionary = Dictionary()
    for i in range(args.vocab):
        dictionary.add_symbol(f"w{i}")
    model_args = argparse.Namespace(**WIDTHS[args.widths])
    ARCH_CONFIG_REGISTRY["pht"](model_args)  # the papers' defaults
    task = argparse.Namespace(source_dictionary=dictionary, target_dictionary=dictionary)
    model = PHTModel.build_model(model_args, task).eval()
    predictor = AttentionPredictorModel(AttentionPredictorConfig(
        input_dim=model_args.encoder_embed_dim, encoder_attention_heads=2 if
        args.widths == "tiny" else 4, encoder_ffn_embed_dim=2 * model_args.encoder_embed_dim
        if args.widths == "tiny" else 1024)).eval()
    b, p, l = args.batch, args.max_paragraphs, args.max_paragraph_tokens
    src = torch.randint(dictionary.nspecial, len(dictionary), (b, p, l))
    # ragged paragraphs: the last quarter of each paragraph is padding in half of them
    src[:, ::2, 3 * l // 4:] = dictionary.pad()
    sample = {"id": torch.arange(b), "net_input": {
        "src_tokens": src, "src_lengths": src.ne(dictionary.pad()).sum((1, 2)),
        "prev_output_tokens": src.new_full((b, 1), dictionary.eos())}}
    return model, predictor, dictionary, sample, args.max_len, model_args


def flat_transformer(dictionary, sample, pht_args):
    """fairseq's transformer with PHT's widths (``pht_args``), and the batch's paragraphs
    flattened (B x S)."""
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    src = sample["net_input"]["src_tokens"]  # B x P x L
    sep = dictionary.index("w0")  # any ordinary symbol stands in for <P>
    rows = []
    for example in src:  # building the benchmark input, not a forward
        paragraphs = [par[par.ne(dictionary.pad())] for par in example if par.ne(dictionary.pad()).any()]
        joined = [t for par in paragraphs for t in (par, par.new_tensor([sep]))][:-1]
        rows.append(torch.cat(joined + [example.new_tensor([dictionary.eos()])]))
    flat = torch.full((len(rows), max(len(r) for r in rows)), dictionary.pad())
    for i, r in enumerate(rows):
        flat[i, flat.size(1) - len(r):] = r  # left-padded, as fairseq's LanguagePairDataset
    args = argparse.Namespace(
        arch="transformer", share_all_embeddings=True, max_source_positions=flat.size(1) + 8,
        max_target_positions=1024, dropout=pht_args.dropout,
        **{name: getattr(pht_args, name) for name in (
            "encoder_layers", "decoder_layers", "encoder_embed_dim", "decoder_embed_dim",
            "encoder_ffn_embed_dim", "decoder_ffn_embed_dim", "encoder_attention_heads",
            "decoder_attention_heads")})
    ARCH_CONFIG_REGISTRY["transformer"](args)
    task = argparse.Namespace(source_dictionary=dictionary, target_dictionary=dictionary)
    torch.manual_seed(0)
    model = ARCH_MODEL_REGISTRY["transformer"].build_model(args, task).eval()
    flat_sample = {"id": sample["id"], "net_input": {
        "src_tokens": flat, "src_lengths": flat.ne(dictionary.pad()).sum(1),
        "prev_output_tokens": sample["net_input"]["prev_output_tokens"]}}
    return model, flat_sample


def from_checkpoint(args):
    from fairseq import checkpoint_utils

    overrides = {"data": args.data, "max_paragraphs": args.max_paragraphs,
                 "max_paragraph_tokens": args.max_paragraph_tokens}
    models, _, task = checkpoint_utils.load_model_ensemble_and_task([args.checkpoint],
                                                                    arg_overrides=overrides)
    predictor = checkpoint_utils.load_model_ensemble([args.predictor])[0][0].eval()
    task.load_dataset(args.split)
    dataset = task.datasets[args.split]
    sample = dataset.collater([dataset[i] for i in range(min(args.batch, len(dataset)))])
    return models[0].eval(), predictor, task.target_dictionary, sample, args.max_len, None


def time_once(generator, model, sample, clock):
    start = clock()
    with torch.no_grad():
        hypos = generator.generate([model], sample)
    return clock() - start, hypos


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="a trained PHT (else a random paper-size one)")
    parser.add_argument("--predictor", help="its attention predictor (with --checkpoint)")
    parser.add_argument("--data", help="data-bin (with --checkpoint)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--batch", type=int, default=4, help="examples decoded at once")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--max-len", type=int, default=40, help="max target tokens")
    parser.add_argument("--max-paragraphs", type=int, default=30)
    parser.add_argument("--max-paragraph-tokens", type=int, default=100)
    parser.add_argument("--vocab", type=int, default=32000, help="synthetic model vocabulary")
    parser.add_argument("--widths", choices=sorted(WIDTHS), default="paper",
                        help="synthetic model widths: paper (PHT's) or tiny (smoke runs)")
    parser.add_argument("--repeats", type=int, default=6, help="alternated timed rounds")
    parser.add_argument("--until-decided", action="store_true",
                        help="more rounds until align_time_ratio's interval lies on one side of "
                             f"{TARGET}")
    parser.add_argument("--max-repeats", type=int, default=40,
                        help="rounds at most, with --until-decided")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: this process's CPU time; wall: elapsed time")
    parser.add_argument("--device", default="cpu", choices=("cpu",),
                        help="decoding runs on CPU (the only device this benchmark supports)")
    args = parser.parse_args(argv)
    if args.checkpoint and not (args.predictor and args.data):
        parser.error("--checkpoint needs --predictor and --data")
    return args


def build_runs(args):
    """{decoder name: (generator, model, sample)} and the batch's sample."""
    model, predictor, dictionary, sample, max_len, pht_args = (
        from_checkpoint if args.checkpoint else synthetic)(args)
    common = dict(beam_size=args.beam, max_len_b=max_len, no_repeat_ngram_size=3)
    if not args.checkpoint:
        common["min_len"] = max_len
    runs = {}  # name -> (generator, model, sample)
    if not args.checkpoint:
        flat_model, flat_sample = flat_transformer(dictionary, sample, pht_args)
        runs["flat"] = (SequenceGenerator([flat_model], dictionary, **common), flat_model,
                        flat_sample)
    generators = {
        "vanilla": SequenceGenerator([model], dictionary, **common),
        "attalign": AttentionAlignmentSequenceGenerator(
            [model], dictionary, strategy="attalign", beta=0.8, predictor=predictor, **common),
        "attalign_live": AttentionAlignmentSequenceGenerator(
            [model], dictionary, strategy="attalign", beta=0.8, predictor=predictor,
            live_beams=True, **common),
        "strcov": AttentionAlignmentSequenceGenerator([model], dictionary, strategy="strcov",
                                                      beta=0.8, **common),
    }
    runs.update({name: (g, model, sample) for name, g in generators.items()})
    return runs, sample, max_len


def timed_rounds(runs, rounds, clock, times, steps):
    """``rounds`` more rounds of one call of every decoder into ``times`` ({name: [s]}), the
    order reversed every other round (so that no decoder always runs first)."""
    for _ in range(rounds):
        order = list(runs) if len(times["vanilla"]) % 2 == 0 else list(runs)[::-1]
        for name in order:
            seconds, hypos = time_once(*runs[name], clock)
            times[name].append(seconds)
            steps[name] = sum(len(s[0]["tokens"]) for s in hypos)


def main(argv=None):
    args = parse_args(argv)
    runs, sample, max_len = build_runs(args)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    times, steps = {name: [] for name in runs}, {}
    for name in runs:  # warm-up
        time_once(*runs[name], clock)
    timed_rounds(runs, args.repeats, clock, times, steps)
    while args.until_decided and len(times["vanilla"]) < args.max_repeats:
        _, low, high = median_ratio(times, "attalign", "vanilla")
        if high <= TARGET or low > TARGET:
            break
        print(f"{len(times['vanilla'])} rounds: align_time_ratio interval [{low:.3f}, "
              f"{high:.3f}] undecided", file=sys.stderr)
        timed_rounds(runs, min(4, args.max_repeats - len(times["vanilla"])), clock, times, steps)
    report(args, runs, sample, max_len, times, steps)


def report(args, runs, sample, max_len, times, steps):
    """The table and the JSON summary (last line)."""
    src = sample["net_input"]["src_tokens"]
    rounds = len(times["vanilla"])
    print(f"source {tuple(src.shape)} (B x P x L), beam {args.beam}, max len {max_len}, "
          f"{torch.get_num_threads()} threads, {rounds} alternated rounds, "
          f"{'process CPU' if args.clock == 'cpu' else 'wall'} time")
    if "flat" in runs:
        print(f"flat source {tuple(runs['flat'][2]['net_input']['src_tokens'].shape)} (B x S)")
    print("ratio = median time / vanilla median (95% bootstrap interval over the rounds); "
          "best-hyp tokens = tokens of the best hypotheses")
    seconds = {name: statistics.median(t) for name, t in times.items()}
    print(f"{'decoder':<16}{'median s':>10}{'ratio':>8}{'95% interval':>18}{'best-hyp tokens':>17}")
    summary = {}
    keys = {"attalign": "align_time_ratio", "attalign_live": "align_live_time_ratio",
            "strcov": "strcov_time_ratio"}
    for name in runs:
        ratio, low, high = median_ratio(times, name, "vanilla")
        print(f"{name:<16}{seconds[name]:>10.3f}{ratio:>8.3f}{f'[{low:.3f}, {high:.3f}]':>18}"
              f"{steps[name]:>17}")
        if name in keys:
            summary[keys[name]] = round(ratio, 4)
            summary[keys[name] + "_ci95"] = [round(low, 4), round(high, 4)]
    if "flat" in runs:
        ratio, low, high = median_ratio(times, "vanilla", "flat")
        summary["pht_decode_ratio_to_flat"] = round(ratio, 4)
        summary["pht_decode_ratio_to_flat_ci95"] = [round(low, 4), round(high, 4)]
    summary.update(vanilla_seconds=round(seconds["vanilla"], 4), seconds=seconds,
                   clock=args.clock, rounds=rounds)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
