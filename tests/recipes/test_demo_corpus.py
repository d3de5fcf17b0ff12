"""The demo's synthetic corpus and its fact scorer: deterministic, ground truth consistent with
the summaries and the sources, facts spread over paragraphs among confusable distractors,
baselines that do not read the title weak, exact fact accuracy."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fairseq_hier.baselines.lead import lead
from fairseq_hier.cli import demo as demo_cli
from fairseq_hier.demo import corpus as mdc
from fairseq_hier.demo import facts as df

SPLITS = ("train", "valid", "test")
FILES = [f"{s}.{e}" for s in SPLITS for e in ("src", "tgt", "facts.jsonl")]
VALUE_ATTR = {v: a for a, vs in mdc.VALUES.items() for v in vs}
ROOT = Path(__file__).resolve().parents[2]


def generate(folder: Path, *args) -> Path:
    demo_cli.cli_main(["corpus", "--output-dir", str(folder), *map(str, args)])
    return folder


def read(folder: Path, split: str):
    src = (folder / f"{split}.src").read_text(encoding="utf-8").splitlines()
    tgt = (folder / f"{split}.tgt").read_text(encoding="utf-8").splitlines()
    facts = df.read_facts(str(folder / f"{split}.facts.jsonl"))
    assert len(src) == len(tgt) == len(facts)
    return src, tgt, facts


def sentences(paragraph: str):
    return [s.split() for s in f" {paragraph} ".split(" . ") if s.strip()]


def states(paragraph: str, name: str, value: str) -> bool:
    """Some sentence of ``paragraph`` has both ``name`` and ``value``."""
    return any(name in s and value in s for s in sentences(paragraph))


def title_reader(source: str) -> str:
    """What reading requires: the template filled with the values stated in sentences that name
    the title's place."""
    title, *paragraphs = source.split(f" {mdc.SEP} ")
    facts = {}
    for p in paragraphs:
        for s in sentences(p):
            if title in s:
                facts.update({VALUE_ATTR[w]: w for w in s if w in VALUE_ATTR})
    return mdc.summary(title, facts)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The demo's corpus at its default options, with a smaller training split."""
    return generate(tmp_path_factory.mktemp("demo"), "--seed", 1, "--train", 1000)


def test_lexicon_is_closed_and_unambiguous():
    value_words = set(VALUE_ATTR)
    assert len(value_words) == sum(len(v) for v in mdc.VALUES.values())  # attributes disjoint
    assert all(len(v) == mdc.MAX_VALUES == 20 for v in mdc.VALUES.values())
    assert sorted(mdc.KINDS) == sorted(mdc.KIND_VERB)
    assert len({mdc.KIND_VERB[k] for k in mdc.KINDS[:3]}) == 3  # --values 3 keeps all three verbs
    assert len(mdc.NAMES) == len(set(mdc.NAMES)) == 120 and all(" " not in n for n in mdc.NAMES)
    assert not set(mdc.NAMES) & value_words
    template = mdc.summary("NAME", {a: vs[0] for a, vs in mdc.VALUES.items()})
    texts = [t for ts in mdc.PHRASES.values() for t in ts] + mdc.MENTIONS + \
        mdc._SUBJECTS + mdc._VERBS + mdc._OBJECTS + mdc._TAILS + [template]
    text_words = set(re.sub(r"\{\w+\}", " ", " ".join(texts)).split()) - value_words - {"NAME"}
    assert not text_words & (value_words | set(mdc.NAMES) | {mdc.SEP})


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
    assert (a / "valid.facts.jsonl").read_bytes() == (d / "valid.facts.jsonl").read_bytes()
    train, test = read(a, "train")[0], read(a, "test")[0]
    assert not set(train) & set(test)
    assert read(d, "train")[0][:50] == train  # a longer split extends the shorter one


def test_module_entry_point_same_bytes_in_another_process(tmp_path):
    """``python -m`` works and gives the same files in a process with another hash seed."""
    args = ["--seed", "3", "--train", "30", "--valid", "5", "--test", "5"]
    ref = generate(tmp_path / "ref", *args)
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "fairseq_hier.cli.demo", "corpus", "--output-dir",
                           str(tmp_path / "sub"), *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, proc.stdout
    assert re.search(r"\[train\] 30 examples, [\d.]+ paragraphs, [\d.]+ source / [\d.]+ target",
                     proc.stdout), proc.stdout
    for f in FILES:
        assert (ref / f).read_bytes() == (tmp_path / "sub" / f).read_bytes(), f


def test_format(corpus):
    for split, n in zip(SPLITS, (1000, 200, 200)):
        src, tgt, _ = read(corpus, split)
        assert len(src) == n
        for s, t in zip(src, tgt):
            assert s == s.strip() and "\t" not in s and "  " not in s
            assert all(w == w.lower() for w in s.split() if w != mdc.SEP)
            title, *paragraphs = s.split(f" {mdc.SEP} ")
            assert title in mdc.NAMES[:8]  # --names 8
            # 3-5 relevant (+1 restating) + 2 x 3-5 of other places + 1 mention (no filler)
            assert 10 <= len(paragraphs) <= 16, len(paragraphs)
            for p in paragraphs:
                assert p.strip() == p and mdc.SEP not in p.split()
                assert 8 <= len(p.split()) <= 22, p
                # every paragraph is about a place: it opens with that place's heading, and
                # its sentences name that place only
                heading, mark, *text = p.split()
                assert heading in mdc.NAMES[:8] and mark == mdc.HEADING_MARK
                assert {w for w in text if w in mdc.NAMES} == {heading}, p
            assert t == t.strip().lower() and mdc.SEP not in t and t.endswith(" .")
            assert t.split()[0] == title
            assert sum(w in VALUE_ATTR for w in t.split()) == len(mdc.ATTRIBUTES)
        # --values 8: only the first 8 values of each attribute occur
        assert {w for line in src for w in line.split() if w in VALUE_ATTR} == \
            {v for vs in mdc.VALUES.values() for v in vs[:8]}


def test_facts_file_matches_summaries_and_sources(corpus):
    src, tgt, truths = read(corpus, "test")
    for s, t, truth in zip(src, tgt, truths):
        title, *paragraphs = s.split(f" {mdc.SEP} ")
        assert truth["entity"] == title
        gold = {a: f["value"] for a, f in truth["facts"].items()}
        assert list(gold) == sorted(mdc.ATTRIBUTES) and t == mdc.summary(title, gold)
        holders = set()
        for a, f in truth["facts"].items():  # every gold fact is stated where the file says
            assert f["paragraphs"], (a, s)
            for i in f["paragraphs"]:
                assert states(paragraphs[i - 1], title, f["value"]), (a, i, s)
            holders.update(f["paragraphs"])
            others = [i for i, p in enumerate(paragraphs, 1) if i not in f["paragraphs"]]
            assert not any(states(paragraphs[i - 1], title, f["value"]) for i in others)
        assert not any(all(i in f["paragraphs"] for f in truth["facts"].values()) for i in holders)
        assert len(holders) >= 3  # 5 facts, at most 2 per paragraph


def test_distractors_state_the_same_attributes_for_other_places(corpus):
    src, _, truths = read(corpus, "test")
    first_is_distractor, relevant_rank = 0, 0.0
    for s, truth in zip(src, truths):
        title, *paragraphs = s.split(f" {mdc.SEP} ")
        others = {d["entity"] for d in truth["distractors"]}
        assert len(others) == 2 and title not in others
        for d in truth["distractors"]:
            p = paragraphs[d["paragraph"] - 1]
            assert states(p, d["entity"], d["value"]) and title not in p.split()
            assert d["value"] != truth["facts"][d["attribute"]]["value"]
        for other in others:  # each other place has every attribute of the summary
            assert sorted(d["attribute"] for d in truth["distractors"]
                          if d["entity"] == other) == sorted(truth["facts"])
        relevant = {i for f in truth["facts"].values() for i in f["paragraphs"]}
        first_is_distractor += min(d["paragraph"] for d in truth["distractors"]) < min(relevant)
        relevant_rank += sum(relevant) / len(relevant) / len(paragraphs) / len(src)
    # ranked with noise: relevant paragraphs tend to come first, but often do not
    assert relevant_rank < 0.45  # 0.5 (plus 1/2P) without ranking
    assert 0.3 * len(src) <= first_is_distractor <= 0.7 * len(src)


def test_fact_scorer_counts_exactly():
    truth = {"entity": "x", "facts": {"kind": {"value": "castle"}, "region": {"value": mdc.REGIONS[0]},
                                      "river": {"value": mdc.RIVERS[0]}},
             "distractors": [{"entity": "y", "attribute": "region", "value": mdc.REGIONS[1],
                              "paragraph": 1}]}
    gold = mdc.summary("x", {a: f["value"] for a, f in truth["facts"].items()})
    assert df.score_example(truth, gold) == {"gold": 3, "correct": 3, "stated": 3, "wrong": 0,
                                             "confused": 0}
    # wrong region (a distractor's), river missing, an extra founder: 1 of 3 right
    hyp = mdc.summary("x", {"kind": "castle", "region": mdc.REGIONS[1], "founder": mdc.FOUNDERS[0]})
    assert df.score_example(truth, hyp) == {"gold": 3, "correct": 1, "stated": 3, "wrong": 2,
                                            "confused": 1}
    # hedging with two values for one attribute is not rewarded
    assert df.score_example(truth, gold + f" or {mdc.RIVERS[2]} .")["correct"] == 2
    s = df.fact_scores([truth, truth], [gold, hyp])
    assert (s["accuracy"], s["wrong_rate"], s["confused_rate"]) == (4 / 6, 2 / 6, 1 / 6)
    assert s["low"] == pytest.approx(1 / 3) and s["high"] == 1.0  # bootstrap over the 2 examples


def test_fact_scorer_cli(corpus, tmp_path, capsys):
    _, tgt, truths = read(corpus, "test")
    bad = list(tgt)
    for i in range(0, 200, 2):  # every other summary gets another river: 100 of 1000 facts wrong
        river = truths[i]["facts"]["river"]["value"]
        bad[i] = tgt[i].replace(river, next(r for r in mdc.RIVERS if r != river))
    (tmp_path / "bad.hyp").write_text("\n".join(bad) + "\n", encoding="utf-8")
    demo_cli.cli_main(["facts", "score", str(corpus / "test.facts.jsonl"), f"gold={corpus / 'test.tgt'}",
                 f"bad={tmp_path / 'bad.hyp'}"])
    out = capsys.readouterr().out.splitlines()
    assert re.match(r"gold +100\.0 \[100\.0, 100\.0\] +0\.0 +0\.0$", out[1]), out
    assert re.match(r"bad +90\.0 \[ *\d\d\.\d, *\d\d\.\d\] +10\.0 +\d+\.\d$", out[2]), out
    (tmp_path / "short.hyp").write_text("\n".join(tgt[:5]) + "\n", encoding="utf-8")
    assert demo_cli.cli_main(["facts", "score", str(corpus / "test.facts.jsonl"),
                        str(tmp_path / "short.hyp")]) == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-demo facts score: error: line counts differ: {corpus / 'test.facts.jsonl'} has "
        f"200 lines, {tmp_path / 'short.hyp'} has 5 lines (one example per line is expected)\n")
    (tmp_path / "bad.jsonl").write_text('{"entity": "x", "facts": {"kind": {"value": "ox"}}}\n')
    assert demo_cli.cli_main(["facts", "score", str(tmp_path / "bad.jsonl"), str(tmp_path / "short.hyp")]) == 1
    assert capsys.readouterr().err == (
        f"fairseq-hier-demo facts score: error: {tmp_path / 'bad.jsonl'}:1: not a ground-truth "
        f"line of fairseq-hier-demo corpus (unknown fact kind = 'ox')\n")


def test_only_reading_the_title_gets_the_facts(corpus, tmp_path):
    """Lead, the most frequent values and the first stated values are weak; the values stated
    next to the title's name are the gold facts."""
    src, tgt, truths = read(corpus, "test")
    train_truths = read(corpus, "train")[2]
    scores = {
        "reader": df.fact_scores(truths, [title_reader(s) for s in src]),
        "lead": df.fact_scores(truths, [lead(s, t) for s, t in zip(src, tgt)]),
        "frequent": df.fact_scores(truths, df.frequent_summaries(truths, train_truths)),
        "first": df.fact_scores(truths, df.first_summaries(truths, src)),
    }
    print({k: round(v["accuracy"], 3) for k, v in scores.items()})
    assert scores["reader"]["accuracy"] == 1.0 and [title_reader(s) for s in src] == tgt
    assert scores["lead"]["accuracy"] < 0.25
    assert scores["frequent"]["accuracy"] < 0.2
    assert scores["first"]["accuracy"] < 0.55  # 3 places per attribute, ranked with noise
    # its errors are other places' facts
    assert scores["first"]["confused_rate"] > 0.9 * (1 - scores["first"]["accuracy"])


def test_closed_vocabulary(corpus):
    """Small vocabulary, and every test token is seen in training (fairseq's dictionary)."""
    words = {split: set(" ".join(sum(read(corpus, split)[:2], [])).split()) - {mdc.SEP}
             for split in SPLITS}
    assert 150 <= len(words["train"]) <= 250
    assert words["test"] <= words["train"] and words["valid"] <= words["train"]


def test_score_table_prints_facts_and_rouge_intervals(corpus, tmp_path):
    """The demo's table through its script: gold summaries score 100 on facts and ROUGE."""
    _, tgt, truths = read(corpus, "test")
    for name, lines in (("refs.txt", tgt[:8]), ("facts.jsonl", [json.dumps(t) for t in truths[:8]])):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "examples/demo/score_table.py"), "--facts",
                           str(tmp_path / "facts.jsonl"), str(tmp_path / "refs.txt"),
                           f"gold={tmp_path / 'refs.txt'}"], text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    assert header.split() == ["system", "facts", "[95%", "CI]", "wrong", "confused", "ROUGE-1",
                              "[95%", "CI]", "ROUGE-2", "[95%", "CI]", "ROUGE-L", "[95%", "CI]"]
    assert row.split() == ["gold", "100.0", "[100.0,100.0]", "0.0", "0.0"] + ["100.0", "[100.0,100.0]"] * 3
