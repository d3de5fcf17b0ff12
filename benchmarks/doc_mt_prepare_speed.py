"""Preparation speed of the document-translation recipes, and the time estimates it gives for the
paper's corpora (not a test).

Writes a synthetic training split in our raw layout (Zipf-distributed made-up words,
``benchmarks/synthetic_text.py``), runs ``examples/common/doc_mt_prepare.sh`` on it at two
sizes (``--docs``), reads each step's time from its log and prints words per second per step and
the time each step would take on the paper's training sets (004 Table 2). Protocol and what the
text is like: docs/benchmarks.md, section doc_mt_prepare_speed.py.

    python benchmarks/doc_mt_prepare_speed.py [--docs 400,2000] [--pairs en-de,zh-en,en-cs]
        [--work DIR] [--workers 2]
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/__init__.py says why
from benchmarks.synthetic_text import word_sampler  # noqa: E402
from fairseq_hier.readers.documents import Document, write_documents  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PREPARE = ROOT / "examples" / "common" / "doc_mt_prepare.sh"
# the commands prepare.sh calls (fastbpe, fairseq-hier-*, fairseq-preprocess): this Python's first
TOOLS_PATH = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
SENTENCE_WORDS, DOC_SENTENCES, ZH_CHARS_PER_WORD = 22, 16, 1.8
# 004 Table 2: training documents, English words per document (the source side of En-De and
# En-Cs, the target side of Zh-En); the rates are per English word, both sides processed
PAPER = {"en-de": ("WMT20 En-De", 363_000, 354), "en-cs": ("WMT20 En-Cs", 42_000, 738),
         "zh-en": ("TED17 Zh-En", 1_906, 2107)}


def latin_sentence(rng, words):
    tokens = words(SENTENCE_WORDS)
    tokens[0] = tokens[0].capitalize()
    for i in range(1, SENTENCE_WORDS - 1):
        r = rng.random()
        if r < 0.06:
            tokens[i] += ","
        elif r < 0.08:
            tokens[i] += "-" + tokens[i + 1]
        elif r < 0.15:
            tokens[i] = tokens[i].capitalize()
    return " ".join(tokens) + "."


def zh_sentence(rng):
    chars = int(SENTENCE_WORDS * ZH_CHARS_PER_WORD)
    text = "".join(chr(rng.randint(0x4E00, 0x62FF)) for _ in range(chars))  # common CJK range
    return text[: chars // 2] + "，" + text[chars // 2:] + "。"


def write_corpus(raw: Path, pair: str, docs: int, seed: int = 0) -> int:
    """Raw-layout train (``docs`` documents), valid and test (8 each); returns the training
    split's English words."""
    src, tgt = pair.split("-")
    rng = random.Random(seed)
    samplers = {lang: word_sampler(rng, seed=f"{lang}{seed}") for lang in (src, tgt) if lang != "zh"}

    def sentence(lang):
        return zh_sentence(rng) if lang == "zh" else latin_sentence(rng, samplers[lang])

    raw.mkdir(parents=True, exist_ok=True)
    words = 0
    for split, n in (("train", docs), ("valid", 8), ("test", 8)):
        out = []
        for k in range(n):
            s = [sentence(src) for _ in range(DOC_SENTENCES)]
            t = [sentence(tgt) for _ in range(DOC_SENTENCES)]
            out.append(Document(f"{split}{k}", s, t))
            if split == "train":
                words += sum(len(x.split()) for x in (s if src == "en" else t))
        write_documents(str(raw / split), src, tgt, out)
    return words


def run_prepare(work: Path, pair: str, workers: int):
    """Run prepare.sh; returns {step name: seconds} from its log."""
    src, tgt = pair.split("-")
    env = dict(os.environ, BPE_CODES="40000", MAX_CHUNK="512", WORKERS=str(workers), PATH=TOOLS_PATH)
    start = time.perf_counter()
    proc = subprocess.run(["bash", str(PREPARE), str(work), src, tgt], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode:
        sys.exit(f"prepare.sh failed for {pair}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    took = {}
    for name, seconds in re.findall(r"prepare\.sh: (.+?) took ([\d.]+) s", proc.stdout):
        took[name] = float(seconds)
    return took, wall


STEPS = ("tokenise train", "learn 40000 joint BPE merges", "chunk train", "binarize")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", default="400,2000",
                   help="two sizes of the synthetic training split, in documents: the rates are "
                        "the marginal ones between them (start-up costs cancel)")
    p.add_argument("--pairs", default="en-de,zh-en", help="comma-separated language pairs")
    p.add_argument("--workers", type=int, default=2, help="tokeniser / binariser processes")
    p.add_argument("--work", default=None, help="working folder, kept (default: a temporary one)")
    args = p.parse_args()
    sizes = [int(n) for n in args.docs.split(",")]
    if len(sizes) != 2 or not 0 < sizes[0] < sizes[1]:
        p.error(f"--docs: two increasing document counts, got {args.docs!r}")
    pairs = args.pairs.split(",")
    unknown = [x for x in pairs if x not in PAPER]
    if unknown:
        p.error(f"--pairs: unknown {unknown}; choose from {', '.join(PAPER)}")
    if not shutil.which("fastbpe", path=TOOLS_PATH):
        sys.exit(f"doc_mt_prepare_speed.py: no fastbpe command beside {sys.executable} or on PATH "
                 f"(scripts/install.sh builds it into the virtualenv)")
    base = Path(args.work or tempfile.mkdtemp(prefix="doc_mt_prep_"))
    summary = {}
    print(f"{'pair':<7}{'step':<30}{'s @ ' + str(sizes[0]):>9}{'s @ ' + str(sizes[1]):>9}"
          f"{'start s':>9}{'En words/s':>11}   the paper's training set (004 Table 2) at this rate")
    for pair in pairs:
        runs = []
        for docs in sizes:
            work = base / f"{pair}-{docs}"
            if work.exists():
                shutil.rmtree(work)
            words = write_corpus(work / "raw", pair, docs)
            took, wall = run_prepare(work, pair, args.workers)
            missing = [step for step in STEPS if step not in took]
            if missing:
                sys.exit(f"doc_mt_prepare_speed.py: prepare.sh printed no time for {missing}")
            runs.append((words, took, wall))
        (w0, t0, wall0), (w1, t1, wall1) = runs
        name, paper_docs, paper_words = PAPER[pair]
        paper_total = paper_docs * paper_words
        total = 0.0
        for step in STEPS:
            # time = start + words / rate, through the two runs
            rate = (w1 - w0) / max(t1[step] - t0[step], 0.05)
            start = max(t0[step] - w0 / rate, 0.0)
            estimate = start + paper_total / rate
            total += estimate
            print(f"{pair:<7}{step:<30}{t0[step]:>9.1f}{t1[step]:>9.1f}{start:>9.1f}{rate:>11.0f}"
                  f"   {name}: {estimate / 60:.0f} min")
            summary.setdefault(pair, {})[step] = {
                "seconds": [t0[step], t1[step]], "words_per_s": round(rate),
                "start_s": round(start, 1), "paper_estimate_min": round(estimate / 60, 1)}
        summary[pair].update(english_words=[w0, w1], wall_s=[round(wall0), round(wall1)],
                             paper_english_words=paper_total,
                             paper_estimate_min=round(total / 60, 1))
        print(f"{pair:<7}{sizes[0]} / {sizes[1]} documents: {w0} / {w1} English words, whole "
              f"prepare.sh {wall0:.0f} / {wall1:.0f} s; {name} ({paper_total / 1e6:.1f}M English "
              f"words): {total / 3600:.1f} h for these steps with {args.workers} worker(s)")
    if not args.work:
        shutil.rmtree(base)
    print(json.dumps({"docs": sizes, "workers": args.workers, "cpus": os.cpu_count(), **summary}))


if __name__ == "__main__":
    main()
