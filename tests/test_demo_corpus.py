"""The demo's synthetic corpus: deterministic, well formed, facts spread over paragraphs, Lead weak."""

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fairseq_hier.cli import make_demo_corpus as mdc
from fairseq_hier.cli.lead import lead

SPLITS = ("train", "valid", "test")
FILES = [f"{s}.{e}" for s in SPLITS for e in ("src", "tgt")]
VALUE_ATTR = {v: a for a, vs in mdc.VALUES.items() for v in vs}


def generate(folder: Path, *args) -> Path:
    mdc.cli_main(["--out-dir", str(folder), *map(str, args)])
    return folder


def read(folder: Path, split: str):
    src = (folder / f"{split}.src").read_text(encoding="utf-8").splitlines()
    tgt = (folder / f"{split}.tgt").read_text(encoding="utf-8").splitlines()
    assert len(src) == len(tgt)
    return src, tgt


def mentions(paragraph: str, name: str) -> bool:
    return f" {name} " in f" {paragraph} "


def bigram_recall(reference: str, hypothesis: str) -> float:
    ref, hyp = (Counter(zip(t.split(), t.split()[1:])) for t in (reference, hypothesis))
    return sum(min(c, hyp[b]) for b, c in ref.items()) / max(1, sum(ref.values()))


def oracle(title: str, paragraphs) -> str:
    """The summary template filled with the values found in paragraphs that mention the title
    (kind defaults to "town" where none is found)."""
    facts = {}
    for p in paragraphs:
        if mentions(p, title):
            for w in p.split():
                if w in VALUE_ATTR:
                    facts.setdefault(VALUE_ATTR[w], w)
    return mdc.summary(title, {"kind": "town", **facts})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The demo's corpus at the default sizes (4000/200/200)."""
    return generate(tmp_path_factory.mktemp("demo"), "--seed", 1)


def test_lexicon_is_closed_and_unambiguous():
    value_words = set(VALUE_ATTR)
    assert len(value_words) == sum(len(v) for v in mdc.VALUES.values())  # attributes disjoint
    assert all(20 <= len(v) <= 60 for a, v in mdc.VALUES.items() if a != "month")
    name_words = {w for n in mdc.NAMES for w in n.split()}
    assert 200 <= len(mdc.NAMES) == len(set(mdc.NAMES)) <= 500
    assert all(1 <= len(n.split()) <= 2 for n in mdc.NAMES)
    assert not name_words & value_words
    assert not set(mdc.NAMES) & name_words - {n for n in mdc.NAMES if " " not in n}  # no name in another
    texts = [t for ts in mdc.PHRASES.values() for t in ts] + mdc.MENTIONS + \
        mdc._SUBJECTS + mdc._VERBS + mdc._OBJECTS + mdc._TAILS
    text_words = set(re.sub(r"\{\w+\}", " ", " ".join(texts)).split())
    assert not text_words & (value_words | name_words | {mdc.SEP})


def test_deterministic_per_seed(tmp_path):
    small = ["--train", 50, "--valid", 10, "--test", 20]
    a = generate(tmp_path / "a", "--seed", 7, *small)
    b = generate(tmp_path / "b", "--seed", 7, *small)
    c = generate(tmp_path / "c", "--seed", 8, *small)
    for f in FILES:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
        assert (a / f).read_bytes() != (c / f).read_bytes(), f
    # one RNG stream per split: other splits' sizes do not change a split; splits do not overlap
    d = generate(tmp_path / "d", "--seed", 7, "--train", 80, "--valid", 10, "--test", 20)
    assert (a / "test.src").read_bytes() == (d / "test.src").read_bytes()
    assert (a / "valid.tgt").read_bytes() == (d / "valid.tgt").read_bytes()
    train, test = read(a, "train")[0], read(a, "test")[0]
    assert not set(train) & set(test)
    assert read(d, "train")[0][:50] == train  # a longer split extends the shorter one


def test_module_entry_point_same_bytes_in_another_process(tmp_path):
    """``python -m`` works and gives the same files in a process with another hash seed."""
    args = ["--seed", "3", "--train", "30", "--valid", "5", "--test", "5"]
    ref = generate(tmp_path / "ref", *args)
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "fairseq_hier.cli.make_demo_corpus", "--out-dir",
                           str(tmp_path / "sub"), *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, proc.stdout
    assert re.search(r"\[train\] 30 examples, [\d.]+ paragraphs, [\d.]+ source / [\d.]+ target",
                     proc.stdout), proc.stdout
    for f in FILES:
        assert (ref / f).read_bytes() == (tmp_path / "sub" / f).read_bytes(), f


def test_format(corpus):
    for split, n in zip(SPLITS, (4000, 200, 200)):
        src, tgt = read(corpus, split)
        assert len(src) == n
        for s, t in zip(src, tgt):
            assert s == s.strip() and "\t" not in s and "  " not in s
            assert all(w == w.lower() for w in s.split() if w != mdc.SEP)
            title, *paragraphs = s.split(f" {mdc.SEP} ")
            assert title in mdc.NAMES
            assert 6 <= len(paragraphs) <= 12
            for p in paragraphs:
                assert p.strip() == p and mdc.SEP not in p.split()
                assert 10 <= len(p.split()) <= 40, p
            assert t == t.strip().lower() and mdc.SEP not in t and t.endswith(" .")
            sentences = t[:-2].split(" . ")
            assert all(sentence.split() for sentence in sentences)
            assert t.split()[: len(title.split())] == title.split()
            assert 3 <= sum(w in VALUE_ATTR for w in t.split()) <= 5


def test_facts_are_in_the_source_and_spread(corpus):
    src, tgt = read(corpus, "test")
    in_one_paragraph = top_is_distractor = 0
    for s, t in zip(src, tgt):
        title, *paragraphs = s.split(f" {mdc.SEP} ")
        values = [w for w in t.split() if w in VALUE_ATTR]
        about = [set(p.split()) for p in paragraphs if mentions(p, title)]
        for v in values:  # each fact is stated in a paragraph about the title's entity
            assert any(v in p for p in about), (v, s)
        in_one_paragraph += any(all(v in set(p.split()) for v in values) for p in paragraphs)
        relevant = [i for i, p in enumerate(paragraphs)
                    if mentions(p, title) and any(w in VALUE_ATTR for w in p.split())]
        assert len(relevant) >= 2
        top_is_distractor += relevant[0] != 0
    assert in_one_paragraph <= 0.05 * len(src)
    # ranked with noise: relevant paragraphs usually, not always, come first
    assert 0.05 * len(src) <= top_is_distractor <= 0.5 * len(src)


def test_lead_is_weak_and_reading_the_facts_is_strong(corpus):
    src, tgt = read(corpus, "test")
    lead_r = sum(bigram_recall(t, lead(s, t)) for s, t in zip(src, tgt)) / len(src)
    examples = [(s.split(f" {mdc.SEP} "), t) for s, t in zip(src, tgt)]
    oracle_r = sum(bigram_recall(t, oracle(title, ps)) for (title, *ps), t in examples) / len(src)
    # the first paragraph stating a fact of the entity alone is not enough
    first_only = [bigram_recall(t, oracle(title, [next(p for p in ps if mentions(p, title) and
                                                      set(p.split()) & set(VALUE_ATTR))]))
                  for (title, *ps), t in examples]
    print(f"bigram recall: Lead {lead_r:.3f}, oracle {oracle_r:.3f}, "
          f"first relevant paragraph {sum(first_only) / len(src):.3f}")
    assert lead_r < 0.25
    assert oracle_r > 0.95
    assert sum(first_only) / len(src) < 0.75


def test_closed_vocabulary(corpus):
    """Small vocabulary, and every test token is seen in training (fairseq's dictionary)."""
    words = {split: set(" ".join(sum(read(corpus, split), [])).split()) - {mdc.SEP} for split in SPLITS}
    assert 300 <= len(words["train"]) <= 1500
    assert words["test"] <= words["train"] and words["valid"] <= words["train"]
