"""Decoding time of attention alignment vs vanilla beam search, same model, same inputs.

    python benchmarks/alignment_speed.py                 # paper-size PHT, random weights
    python benchmarks/alignment_speed.py --checkpoint demo_work/checkpoints/pht/checkpoint_last.pt \\
        --predictor demo_work/checkpoints/attention_predictor/checkpoint_best.pt \\
        --data demo_work/data-bin --max-paragraphs 30 --max-paragraph-tokens 100

Vanilla = fairseq's own SequenceGenerator; aligned = our generator with ``attalign`` (the
predictor runs on the encoder output, eta(y) is tracked every step, Eq. 17 at finalisation);
also timed: live-beam ranking and strCov. Runs alternate (vanilla, aligned, ...) and the median
of ``--repeats`` is reported, so the ratio is measured side by side. Without a checkpoint the
model is a randomly initialised PHT of the paper's size (3+3 layers, d 256, 30 paragraphs x 100
tokens); ``--min-len`` = ``--max-len`` then makes every hypothesis run the same number of steps
in both generators (a random model would otherwise stop at arbitrary points).

Also timed, without a checkpoint: fairseq's flat ``transformer`` of the same widths (3+3 layers,
d 256, FFN 1024, 4 heads, shared embeddings) decoding the same sources, flattened as the task
does (present paragraphs joined by a separator symbol, then EOS), with fairseq's generator and
the same rules; ``pht_decode_ratio_to_flat`` = PHT vanilla median / flat median (target <= 1.1).

The last output line is a JSON object with ``align_time_ratio`` (target <= 1.10) and
``pht_decode_ratio_to_flat``.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fairseq_hier  # noqa: E402,F401
from fairseq.data import Dictionary  # noqa: E402
from fairseq.sequence_generator import SequenceGenerator  # noqa: E402

from fairseq_hier.generation.sequence_generator import AttentionAlignmentSequenceGenerator  # noqa: E402
from fairseq_hier.models.attention_predictor import (  # noqa: E402
    AttentionPredictorConfig,
    AttentionPredictorModel,
)
from fairseq_hier.models.hierarchical_transformer import PHTModel, _papers_defaults  # noqa: E402


def synthetic(args):
    """Random paper-size PHT + predictor and a random B x P x L batch."""
    torch.manual_seed(0)
    dictionary = Dictionary()
    for i in range(args.vocab):
        dictionary.add_symbol(f"w{i}")
    model_args = argparse.Namespace()
    _papers_defaults(model_args)
    task = argparse.Namespace(source_dictionary=dictionary, target_dictionary=dictionary)
    model = PHTModel.build_model(model_args, task).eval()
    predictor = AttentionPredictorModel(AttentionPredictorConfig(input_dim=256)).eval()
    b, p, l = args.batch, args.max_paragraphs, args.max_paragraph_tokens
    src = torch.randint(dictionary.nspecial, len(dictionary), (b, p, l))
    # ragged paragraphs: the last quarter of each paragraph is padding in half of them
    src[:, ::2, 3 * l // 4:] = dictionary.pad()
    sample = {"id": torch.arange(b), "net_input": {
        "src_tokens": src, "src_lengths": src.ne(dictionary.pad()).sum((1, 2)),
        "prev_output_tokens": src.new_full((b, 1), dictionary.eos())}}
    return model, predictor, dictionary, sample, args.max_len


def flat_transformer(dictionary, sample):
    """fairseq's transformer with PHT's widths, and the batch's paragraphs flattened (B x S)."""
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
        max_target_positions=1024, encoder_layers=3, decoder_layers=3, encoder_embed_dim=256,
        decoder_embed_dim=256, encoder_ffn_embed_dim=1024, decoder_ffn_embed_dim=1024,
        encoder_attention_heads=4, decoder_attention_heads=4, dropout=0.3)
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
    return models[0].eval(), predictor, task.target_dictionary, sample, args.max_len


def time_once(generator, model, sample):
    start = time.perf_counter()
    with torch.no_grad():
        hypos = generator.generate([model], sample)
    return time.perf_counter() - start, hypos


def main():
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
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.checkpoint and not (args.predictor and args.data):
        parser.error("--checkpoint needs --predictor and --data")
    model, predictor, dictionary, sample, max_len = (from_checkpoint if args.checkpoint
                                                     else synthetic)(args)
    common = dict(beam_size=args.beam, max_len_b=max_len, no_repeat_ngram_size=3)
    if not args.checkpoint:
        common["min_len"] = max_len
    runs = {}  # name -> (generator, model, sample)
    if not args.checkpoint:
        flat_model, flat_sample = flat_transformer(dictionary, sample)
        runs["flat"] = (SequenceGenerator([flat_model], dictionary, **common), flat_model, flat_sample)
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
    times = {name: [] for name in runs}
    steps = {}
    for name in runs:  # warm-up
        time_once(*runs[name])
    for repeat in range(args.repeats):
        order = list(runs) if repeat % 2 == 0 else list(runs)[::-1]
        for name in order:  # alternate the order too, so no decoder always runs first
            seconds, hypos = time_once(*runs[name])
            times[name].append(seconds)
            steps[name] = sum(len(s[0]["tokens"]) for s in hypos)
    src = sample["net_input"]["src_tokens"]
    print(f"source {tuple(src.shape)} (B x P x L), beam {args.beam}, max len {max_len}, "
          f"{torch.get_num_threads()} threads, {args.repeats} alternating repeats")
    if "flat" in runs:
        print(f"flat source {tuple(runs['flat'][2]['net_input']['src_tokens'].shape)} (B x S)")
    print("ratio = median time / vanilla median; best-hyp tokens = tokens of the best hypotheses")
    base = statistics.median(times["vanilla"])
    print(f"{'decoder':<16}{'median s':>10}{'ratio':>8}{'best-hyp tokens':>17}")
    result = {}
    for name in runs:
        median = statistics.median(times[name])
        result[name] = median / base
        print(f"{name:<16}{median:>10.3f}{median / base:>8.3f}{steps[name]:>17}")
    summary = {"align_time_ratio": round(result["attalign"], 4),
               "align_live_time_ratio": round(result["attalign_live"], 4),
               "strcov_time_ratio": round(result["strcov"], 4),
               "vanilla_seconds": round(base, 4)}
    if "flat" in result:
        summary["pht_decode_ratio_to_flat"] = round(1.0 / result["flat"], 4)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
