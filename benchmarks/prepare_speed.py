"""Preparation speed of the summarization recipes at corpus scale, and the hours it gives for the
papers' corpora on 2, 16 and 64 cores (not a test).

Generates news-like English (``benchmarks/synthetic_text.py``) in each step's input layout and
runs each step (``bos_arxiv``, ``bos_cnndm``, ``parse``, ``graph_tfidf``, ``graph_adg``) through
the library function its command calls, with each worker count of ``--workers``; prints rates,
speed-ups and Amdahl estimates of the hours for the papers' corpora (:data:`PAPER`). Protocol:
docs/benchmarks.md, section prepare_speed.py.

    python benchmarks/prepare_speed.py [--mb 20] [--arxiv-mb 80] [--workers 1,2]
        [--steps bos_arxiv,bos_cnndm,parse,graph_tfidf,graph_adg]
        [--prefix-mb bos_cnndm=5,parse=5,graph_adg=2] [--work DIR]

Last line: one JSON object with every rate, speed-up and estimate and the configuration.
"""

import argparse
import itertools
import json
import logging
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
from benchmarks.synthetic_text import NewsWriter, tokenised  # noqa: E402
from fairseq_hier.data.bart_files import gpt2_encoder  # noqa: E402
from fairseq_hier.preparation.graphs import write_graphs  # noqa: E402
from fairseq_hier.preparation.parse import parse_file  # noqa: E402
from fairseq_hier.preparation.sentence_bos import encode_split  # noqa: E402

STEPS = ("bos_arxiv", "bos_cnndm", "parse", "graph_tfidf", "graph_adg")
CORES = (2, 16, 64)
#: the papers' corpora, per step: (name, number of units, the unit: "examples" or "words")
PAPER = {
    # Cohan et al. 2018 arXiv: 203,037 + 6,436 + 6,440 papers (004 Sec. 4.1)
    "bos_arxiv": ("arXiv (215,913 papers)", 215_913, "examples"),
    # CNN/DailyMail: 287,226 + 13,368 + 11,490 articles
    "bos_cnndm": ("CNN/DailyMail (312,084 articles)", 312_084, "examples"),
    # 003 Sec. 4: 56,216 examples of 2,103.49 source and 263.66 summary words; the recipe
    # parses sources and summaries
    "parse": ("Multi-News (56,216 x 2,367 words)", round(56_216 * (2103.49 + 263.66)), "words"),
    # 002 Sec. 4: 1,579,360 + 38,144 + 38,205 instances of 40 ranked paragraphs
    "graph_tfidf": ("WikiSum (1,655,709 examples)", 1_655_709, "examples"),
    "graph_adg": ("WikiSum (1,655,709 examples)", 1_655_709, "examples"),
}
#: WMT20 En-De's preparation steps as ``benchmarks/doc_mt_prepare_speed.py`` measured them
#: (examples/wmt20_doc/README.md: English words/s with 2 workers on 2 cores) and the parallel
#: share assumed for them (not measured at 1 worker): tokenising and binarising run
#: ``--workers`` processes (1.0, ideal); fastBPE's merge learning and the chunking run in one
#: process (0.0)
WMT20_WORDS = 128_502_000  # 004 Table 2: 363K documents x 354 English words
WMT20_MEASURED = {
    "wmt20 tokenise": (128_000, 1.0),
    "wmt20 learn 40000 joint BPE merges": (125_156, 0.0),
    "wmt20 chunk": (76_108, 0.0),
    "wmt20 binarize": (57_469, 1.0),
}
BPE_MERGES = 50_000


# ----------------------------------------------------------------------------- the layouts
class Counts(dict):
    """examples, sentences, words (and bytes) of one layout's file, or of a prefix of it."""

    def add(self, examples=0, sentences=0, words=0, size=0):
        for key, n in (("examples", examples), ("sentences", sentences), ("words", words),
                       ("bytes", size)):
            self[key] = self.get(key, 0) + n


def write_lines(path: Path, lines: Iterator, mb: float) -> List[tuple]:
    """Write ``(line, sentences, words)`` items to ``path`` until ``mb`` MB; returns
    ``(sentences, words, bytes)`` of each line written."""
    sizes, total = [], 0
    with open(path, "w", encoding="utf-8") as f:
        for line, sentences, words in lines:
            size = len(line.encode("utf-8")) + 1
            f.write(line + "\n")
            sizes.append((sentences, words, size))
            total += size
            if total >= mb * 1e6:
                break
    return sizes


def counts_of(sizes: Sequence[tuple]) -> Counts:
    counts = Counts()
    for sentences, words, size in sizes:
        counts.add(1, sentences, words, size)
    return counts


def around(rng: random.Random, mean: int) -> int:
    return max(mean // 4, int(rng.gauss(mean, mean / 4)))


def arxiv_lines(writer: NewsWriter) -> Iterator:
    rng, k = writer.rng, 0
    while True:
        article = [tokenised(s, rng) for s in writer.sentences(around(rng, 6000))]
        abstract = writer.sentences(around(rng, 270))
        k += 1
        obj = {"article_id": f"paper{k}", "article_text": article,
               "abstract_text": [f"<S> {tokenised(s, rng)} </S>" for s in abstract],
               "labels": None, "section_names": ["introduction"], "sections": [article]}
        yield (json.dumps(obj), len(article) + len(abstract),
               sum(len(s.split()) for s in article + abstract))


def cnndm_lines(writer: NewsWriter, target: Path) -> Iterator:
    """``.source`` lines, their highlights written to ``target`` line by line."""
    rng = writer.rng
    with open(target, "w", encoding="utf-8") as t:
        while True:
            article = writer.sentences(around(rng, 700))
            highlights = [writer.sentence() for _ in range(4)]
            t.write(" ".join(highlights) + "\n")
            yield (" ".join(article), len(article) + 4,
                   sum(len(s.split()) for s in article + highlights))


def multi_news_lines(writer: NewsWriter) -> Iterator:
    rng = writer.rng
    while True:
        articles = rng.randint(2, 5)
        docs = [writer.sentences(around(rng, 2100 // articles)) for _ in range(articles)]
        yield ("<P> " + " <P> ".join(" ".join(d) for d in docs), sum(map(len, docs)),
               sum(len(s.split()) for d in docs for s in d))


def wikisum_lines(writer: NewsWriter, paragraphs: int = 40, words: int = 55) -> Iterator:
    rng = writer.rng
    while True:
        title = " ".join(writer.tail(1)[0].capitalize() for _ in range(rng.randint(1, 4)))
        paras = [writer.sentences(around(rng, words)) for _ in range(paragraphs)]
        line = "<P> " + " <P> ".join(f"{title} <T> {' '.join(p)}" for p in paras)
        yield (line, sum(map(len, paras)),
               sum(len(s.split()) for p in paras for s in p) + paragraphs * len(title.split()))


LAYOUTS = {"bos_arxiv": "arxiv", "bos_cnndm": "cnndm", "parse": "multi_news",
           "graph_tfidf": "wikisum", "graph_adg": "wikisum"}
#: the file each step reads, per layout (cnndm: the prefix of .source / .target)
INPUTS = {"arxiv": "train.txt", "cnndm": "train", "multi_news": "train.src",
          "wikisum": "train.src"}
FILES = {"arxiv": ("train.txt",), "cnndm": ("train.source", "train.target"),
         "multi_news": ("train.src",), "wikisum": ("train.src",)}


def write_layout(layout: str, folder: Path, mb: float, prefixes: Sequence[float],
                 seed: int) -> Dict[str, Counts]:
    """``folder/whole/...`` (``mb`` MB) and ``folder/first-X/...``, its first lines up to X MB,
    for each X of ``prefixes`` below ``mb``; returns the counts of each, by folder name."""
    whole_dir = folder / "whole"
    whole_dir.mkdir(parents=True, exist_ok=True)
    writer = NewsWriter(seed)
    lines = {"arxiv": lambda: arxiv_lines(writer),
             "cnndm": lambda: cnndm_lines(writer, whole_dir / "train.target"),
             "multi_news": lambda: multi_news_lines(writer),
             "wikisum": lambda: wikisum_lines(writer)}[layout]()
    sizes = write_lines(whole_dir / FILES[layout][0], lines, mb)
    lines.close()  # closes the cnndm target file
    out = {"whole": counts_of(sizes)}
    for prefix in sorted(x for x in set(prefixes) if x < mb):
        n = next(k for k in range(1, len(sizes) + 1)
                 if sum(size for _, _, size in sizes[:k]) >= prefix * 1e6)
        part = f"first-{prefix:g}"
        (folder / part).mkdir(exist_ok=True)
        for name in FILES[layout]:
            with open(whole_dir / name, encoding="utf-8") as src, \
                    open(folder / part / name, "w", encoding="utf-8") as dst:
                dst.writelines(itertools.islice(src, n))
        out[part] = counts_of(sizes[:n])
    return out


# ----------------------------------------------------------------------------- the BPE
def train_bpe(folder: Path, mb: float, seed: int):
    """GPT-2's byte-level BPE with up to :data:`BPE_MERGES` merges learnt by ``tokenizers`` on
    ``mb`` MB of the same text; returns (encoder.json, vocab.bpe, the tokenizers model)."""
    from tokenizers import ByteLevelBPETokenizer

    writer = NewsWriter(seed + 1)
    texts = (" ".join(writer.sentences(20_000)) for _ in range(max(1, int(mb * 1e6 / 120_000))))
    tokenizer = ByteLevelBPETokenizer()  # GPT-2's pre-tokenizer, no prefix space
    tokenizer.train_from_iterator(texts, vocab_size=256 + BPE_MERGES, min_frequency=2,
                                  show_progress=False, special_tokens=[])
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_model(str(folder))  # vocab.json, merges.txt in GPT-2's layout
    os.replace(folder / "vocab.json", folder / "encoder.json")
    os.replace(folder / "merges.txt", folder / "vocab.bpe")
    return str(folder / "encoder.json"), str(folder / "vocab.bpe"), tokenizer


# ----------------------------------------------------------------------------- the steps
def preload(steps: Sequence[str]) -> None:
    """Import the steps' libraries here, before any timing: a command pays them once, a
    corpus-sized run never notices (the worker processes still import theirs, as they would)."""
    import tqdm  # noqa: F401

    if any(s.startswith("bos_") for s in steps):
        import pysbd  # noqa: F401

    if "parse" in steps or "graph_adg" in steps:
        import spacy  # noqa: F401
    if "graph_tfidf" in steps or "graph_adg" in steps:
        import sklearn.feature_extraction.text  # noqa: F401

        import fairseq_hier.text.graphs  # noqa: F401
        import fairseq_hier.data.paragraph_graph  # noqa: F401


def run_step(step: str, source: Path, out: Path, bpe, workers: int) -> None:
    """The library function of the step's command on ``source``, outputs under ``out``."""
    if step in ("bos_arxiv", "bos_cnndm"):
        layout, positions = (("cohan", (3072, 512)) if step == "bos_arxiv"
                             else ("source_target", (1024, 256)))
        encode_split(layout, str(source), str(out / "train"), bpe[0], bpe[1], *positions,
                     workers=workers, progress_bar=False)
    elif step == "parse":
        parse_file(str(source), str(out / "train"), workers=workers, progress_bar=False)
    else:
        write_graphs(str(source), step.split("_")[1], str(out / "train"), workers=workers,
                     progress_bar=False)


def cpu_seconds():
    """(this process's CPU seconds, its finished children's): the workers of a step are
    children, joined when the step returns."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def amdahl(fraction: float, cores: int) -> float:
    """Amdahl's speed-up on ``cores`` cores of work whose share ``fraction`` runs in parallel."""
    return 1 / ((1 - fraction) + fraction / cores)


def estimate_hours(units: float, rate_1: float, fraction: float) -> Dict[str, float]:
    """Hours for ``units`` at ``rate_1`` units/s on one worker, on each of :data:`CORES` cores
    (one worker a core), the share ``fraction`` of the work parallel."""
    return {str(n): units / (rate_1 * amdahl(fraction, n)) / 3600 for n in CORES}


def measure_step(step: str, work: Path, data: dict, bpe, worker_counts: List[int],
                 prefix: float) -> dict:
    """Each worker count's run of ``step``: the whole file at the last count, the first
    ``prefix`` MB (where it is a part of its layout's ``data``) at the others."""
    layout = LAYOUTS[step]
    name, units, unit = PAPER[step]
    runs = {}
    for n in worker_counts:
        part = f"first-{prefix:g}"
        if part not in data[layout] or n == worker_counts[-1]:
            part = "whole"
        counts = data[layout][part]
        out = work / "out" / step
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        cpu = cpu_seconds()
        start = time.perf_counter()
        run_step(step, work / layout / part / INPUTS[layout], out, bpe, n)
        seconds = time.perf_counter() - start
        main_cpu, workers_cpu = (b - a for a, b in zip(cpu, cpu_seconds()))
        shutil.rmtree(out)
        runs[str(n)] = {
            "input": "whole" if part == "whole" else f"first {counts['bytes'] / 1e6:.2f} MB",
            "seconds": round(seconds, 6), **{k: counts[k] for k in ("examples", "sentences",
                                                                   "words")},
            **{f"{k}_per_s": float(f"{counts[k] / seconds:.6g}") for k in ("examples", "sentences",
                                                                      "words")},
            "cpu_main_s": round(main_cpu, 3), "cpu_workers_s": round(workers_cpu, 3)}
        r = runs[str(n)]
        print(f"{step:<12}{n:>3} {r['input']:<16}{seconds:>9.1f}{r['examples_per_s']:>11.1f}"
              f"{r['sentences_per_s']:>12.0f}{r['words_per_s']:>11.0f}"
              f"{(main_cpu + workers_cpu) / seconds:>7.2f}{main_cpu:>9.1f}{workers_cpu:>9.1f}",
              flush=True)
    first, last = runs[str(worker_counts[0])], runs[str(worker_counts[-1])]
    speed_up = last[f"{unit}_per_s"] / first[f"{unit}_per_s"]
    # the share of the work that ran in the workers, by CPU time (busy cores do not change it)
    fraction = round(last["cpu_workers_s"] / max(last["cpu_workers_s"] + last["cpu_main_s"],
                                                 1e-9), 4)
    hours = estimate_hours(units, first[f"{unit}_per_s"], fraction)  # the figures printed
    return {"runs": runs, "unit": unit, "speed_up": float(f"{speed_up:.6g}"),
            "parallel_fraction": fraction, "paper": name, "paper_units": units,
            "hours": {k: float(f"{v:.4g}") for k, v in hours.items()}}


# ----------------------------------------------------------------------------- alternatives
def cnndm_articles(folder: Path, limit: int) -> List[str]:
    with open(folder / "train.source", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in itertools.islice(f, limit)]


def alternatives(data: dict, work: Path, bpe, articles: int) -> dict:
    """Where bos_cnndm's time goes, on its first ``articles`` articles, one process: pysbd's
    segmentation, fairseq's pure-Python GPT-2 BPE of the sentences, and the same BPE run by
    ``tokenizers`` (one call per sentence: one thread); blingfire's sentence splitter where it
    is installed. words/s of the articles' words."""
    import pysbd

    texts = cnndm_articles(work / "cnndm" / "whole", articles)
    words = sum(len(t.split()) for t in texts)
    segmenter = pysbd.Segmenter(language="en", clean=False)
    start = time.perf_counter()
    split = [[s.strip() for s in segmenter.segment(t) if s.strip()] for t in texts]
    pysbd_s = time.perf_counter() - start
    pieces = [s if i == 0 else " " + s for sentences in split for i, s in enumerate(sentences)]
    encoder = gpt2_encoder(bpe[0], bpe[1])
    start = time.perf_counter()
    ours = [encoder.encode(p) for p in pieces]
    fairseq_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = [bpe[2].encode(p).ids for p in pieces]
    rust_s = time.perf_counter() - start
    out = {"articles": len(texts), "words": words,
           "pysbd_words_per_s": round(words / pysbd_s, 1),
           "fairseq_bpe_words_per_s": round(words / fairseq_s, 1),
           "tokenizers_bpe_words_per_s": round(words / rust_s, 1),
           "tokenizers_same_ids": ours == theirs}
    try:
        import blingfire
    except ImportError:
        out["blingfire"] = "not installed"
    else:
        start = time.perf_counter()
        other = [blingfire.text_to_sentences(t).split("\n") for t in texts]
        out["blingfire_words_per_s"] = round(words / (time.perf_counter() - start), 1)
        out["blingfire_sentences_vs_pysbd"] = [sum(map(len, other)), sum(map(len, split))]
        out["blingfire_same_articles"] = sum(a == b for a, b in zip(other, split))
    return out


# ----------------------------------------------------------------------------- main
def parse_prefixes(text: str) -> Dict[str, float]:
    out = {}
    for item in filter(None, text.split(",")):
        step, _, mb = item.partition("=")
        if step not in STEPS:
            raise argparse.ArgumentTypeError(f"unknown step {step!r} (steps: {', '.join(STEPS)})")
        out[step] = float(mb)
    return out


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=20, help="MB of each layout's file")
    p.add_argument("--workers", default="1,2",
                   help="worker counts, increasing from 1; the speed-up is the last's over 1")
    p.add_argument("--steps", default=",".join(STEPS), help=f"some of {', '.join(STEPS)}")
    p.add_argument("--arxiv-mb", type=float, default=None,
                   help="MB of the arXiv file (default: 4 x --mb: the step encodes only the "
                        "first 3072 tokens of a paper, so --mb MB is a few seconds of work, "
                        "too short to time a worker pool)")
    p.add_argument("--prefix-mb", type=parse_prefixes, default="bos_cnndm=5,parse=5,graph_adg=2",
                   help="STEP=MB,...: time these steps on the first MB of their file at every "
                        "worker count but the last (which reads the whole file)")
    p.add_argument("--alternative-articles", type=int, default=300,
                   help="CNN/DM-shaped articles of the bos_cnndm profile and alternatives")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", default=None, help="working folder, kept (default: a temporary one)")
    return p


def main(argv=None):
    p = get_parser()
    args = p.parse_args(argv)
    if args.arxiv_mb is None:
        args.arxiv_mb = 4 * args.mb
    workers = [int(n) for n in args.workers.split(",")]
    if len(workers) < 2 or workers[0] != 1 or workers != sorted(set(workers)):
        p.error(f"--workers: increasing counts from 1, at least two, got {args.workers!r}")
    steps = args.steps.split(",")
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        p.error(f"--steps: unknown {unknown}; choose from {', '.join(STEPS)}")
    logging.getLogger("fairseq_hier").setLevel(logging.WARNING)
    work = Path(args.work or tempfile.mkdtemp(prefix="prepare_speed_"))
    begin = time.perf_counter()
    data = {}
    for layout in sorted({LAYOUTS[s] for s in steps}):
        mb = args.arxiv_mb if layout == "arxiv" and args.arxiv_mb else args.mb
        data[layout] = write_layout(layout, work / layout, mb, [
            args.prefix_mb[s] for s in steps if LAYOUTS[s] == layout and s in args.prefix_mb],
            args.seed)
        whole = data[layout]["whole"]
        print(f"{layout}: {whole['bytes'] / 1e6:.1f} MB, {whole['examples']} examples, "
              f"{whole['sentences']} sentences, {whole['words']} words; "
              + ", ".join(f"{part}: {c['examples']} examples" for part, c in data[layout].items()
                          if part != "whole"), flush=True)
    preload(steps)
    bpe = None
    if any(s.startswith("bos_") for s in steps):
        bpe = train_bpe(work / "bpe", min(args.mb, 8), args.seed)
        print(f"GPT-2 byte-level BPE: {bpe[2].get_vocab_size() - 256} merges learnt", flush=True)
    print(f"{'step':<12}{'n':>3} {'input':<16}{'seconds':>9}{'examples/s':>11}"
          f"{'sentences/s':>12}{'words/s':>11}{'cores':>7}{'main s':>9}{'workers s':>9}"
          f"   (cores: CPU seconds / seconds; main s, workers s: CPU seconds)")
    results = {}
    for step in steps:
        results[step] = measure_step(step, work, data, bpe, workers,
                                     args.prefix_mb.get(step, args.mb))
    print(f"\nthe papers' corpora, hours: units / (rate at 1 worker x S(n)), S(n) Amdahl's "
          f"speed-up on n cores, its parallel share f the workers' CPU time in the "
          f"{workers[-1]}-worker run; 'speed-up' is the measured one (wall time)")
    print(f"{'step':<36}{'corpus':<36}{'speed-up':>9}{'f':>6}" + "".join(
        f"{f'{n} cores':>10}" for n in CORES))
    for step, r in results.items():
        print(f"{step:<36}{r['paper']:<36}{r['speed_up']:>9.2f}{r['parallel_fraction']:>6.2f}"
              + "".join(f"{r['hours'][str(n)]:>10.2f}" for n in CORES))
    wmt20 = {}
    for step, (rate_2, fraction) in WMT20_MEASURED.items():
        hours = estimate_hours(WMT20_WORDS, rate_2 / amdahl(fraction, 2), fraction)
        wmt20[step] = {"words_per_s_2_workers": rate_2, "assumed_parallel_fraction": fraction,
                       "hours": {k: float(f"{v:.4g}") for k, v in hours.items()}}
        print(f"{step:<36}{'WMT20 En-De (128.5M words)':<36}{'':>9}{fraction:>6.2f}"
              + "".join(f"{wmt20[step]['hours'][str(n)]:>10.2f}" for n in CORES))
    alt = {}
    if bpe and "bos_cnndm" in steps:
        alt = alternatives(data, work, bpe, args.alternative_articles)
        print(f"\nbos_cnndm, one process, {alt['articles']} articles: pysbd "
              f"{alt['pysbd_words_per_s']:.0f} words/s, fairseq's GPT-2 BPE "
              f"{alt['fairseq_bpe_words_per_s']:.0f}, the same BPE in tokenizers "
              f"{alt['tokenizers_bpe_words_per_s']:.0f} (same ids: {alt['tokenizers_same_ids']})"
              + (f", blingfire's splitter {alt['blingfire_words_per_s']:.0f} words/s "
                 f"({alt['blingfire_sentences_vs_pysbd'][0]} sentences vs pysbd's "
                 f"{alt['blingfire_sentences_vs_pysbd'][1]}; {alt['blingfire_same_articles']} "
                 f"articles split alike)" if "blingfire_words_per_s" in alt
                 else ", blingfire not installed"))
    wall = time.perf_counter() - begin
    if not args.work:
        shutil.rmtree(work)
    config = {"mb": args.mb, "workers": workers, "cpus": os.cpu_count(),
              "bpe_merges": bpe[2].get_vocab_size() - 256 if bpe else None,
              "corpus": data,
              "estimate": "hours(n) = units / (rate at 1 worker x S(n)), S(n) = 1 / ((1 - f) + "
                          "f / n), f = cpu_workers_s / (cpu_workers_s + cpu_main_s) of the run "
                          "with the most workers",
              "wall_s": round(wall, 1)}
    print(json.dumps({"config": config, "steps": results, "wmt20_from_doc_mt_prepare_speed": wmt20,
                      "alternatives": alt}))


if __name__ == "__main__":
    sys.exit(main())
