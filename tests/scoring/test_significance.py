"""Paired bootstrap significance (fairseq_hier/scoring/significance.py, fairseq-hier-significance).

- paired_bootstrap against a literal loop (same seed -> the same numbers), and on hand-made
  extremes: B better on every document (p = 0), identical systems (delta 0, p = 1);
- ROUGE: the per-document F parsed from ROUGE-1.5.5's ``-d`` lines belong to the right documents
  (they match rouge-score's per-document F on 12 documents, where pyrouge's lexicographic EVAL
  order s.0, s.1, s.10, s.11, s.2 ... differs from document order), and ROUGE's printed average
  is exactly what ROUGE-1.5.5 computes from them: the mean of its 1000 bootstrap resample means
  (Perl's srand(i)/rand, i.e. drand48, re-implemented here), NOT their plain mean;
- BLEU: our resamples are sacreBLEU's (same resampled mean), the delta is the BLEU difference;
- the command line on tiny files (both subcommands) and its one-line errors.
"""

import itertools
import json
import math
import random
import statistics

import numpy as np
import pytest

from fairseq_hier.cli.significance import cli_main
from fairseq_hier.scoring import rouge
from fairseq_hier.scoring import significance as sig

# integer scores: every sum is exact, so ties (delta == 0) are the same in both implementations
A = [3, 5, 2, 8, 6, 1, 4]
B = [4, 5, 1, 9, 7, 3, 2]


def literal_paired_bootstrap(a, b, samples, seed):
    """Koehn's paired bootstrap written out: one resample at a time, plain Python sums."""
    rng = np.random.default_rng(seed)
    n, deltas = len(a), []
    for _ in range(samples):
        idx = rng.integers(0, n, size=n)
        deltas.append(sum(b[i] for i in idx) / n - sum(a[i] for i in idx) / n)
    cuts = statistics.quantiles(deltas, n=40, method="inclusive")  # 2.5%, 5%, ..., 97.5%
    return {"mean_a": sum(a) / n, "mean_b": sum(b) / n, "delta": sum(b) / n - sum(a) / n,
            "low": cuts[0], "high": cuts[-1],
            "p_value": sum(d <= 0 for d in deltas) / samples, "samples": samples}


def test_paired_bootstrap_matches_literal_loop():
    for seed, samples in ((0, 300), (7, 101)):
        ours = sig.paired_bootstrap(A, B, samples=samples, seed=seed)
        oracle = literal_paired_bootstrap(A, B, samples, seed)
        assert ours.keys() == oracle.keys()
        for key in oracle:
            assert ours[key] == pytest.approx(oracle[key], abs=1e-12), key
    assert 0 < ours["p_value"] < 1  # B is better on some documents, worse on others


def exact_bootstrap(a, b):
    """The bootstrap distribution itself, not a sample of it: every one of the N^N equally
    likely resamples of the N documents, each one's delta (mean of b - a over its documents)."""
    n = len(a)
    return sorted(sum(b[i] - a[i] for i in idx) / n
                  for idx in itertools.product(range(n), repeat=n))


def exact_quantile(values, q):
    """The q-quantile of the equally weighted sorted ``values``: the smallest v with
    P(delta <= v) >= q."""
    return values[max(math.ceil(q * len(values)) - 1, 0)]


def test_paired_bootstrap_estimates_the_exact_bootstrap():
    """Whatever the draw order, the bootstrap's defining property: its p-value estimates
    P(delta* <= 0) under resampling and its interval the 2.5% / 97.5% quantiles of delta*,
    here against the exact distribution over all 5^5 resamples (20,000 draws: the p-value's
    standard error is at most 0.0035; every seed)."""
    a, b = [3, 5, 2, 8, 6], [4, 4, 1, 9, 7]
    exact = exact_bootstrap(a, b)
    p_exact = sum(d <= 0 for d in exact) / len(exact)
    assert 0.1 < p_exact < 0.5  # neither extreme: an error in the draw would show
    for seed in (0, 5):
        ours = sig.paired_bootstrap(a, b, samples=20000, seed=seed)
        assert ours["p_value"] == pytest.approx(p_exact, abs=0.02), seed
        eps = 1e-12  # ours sums floats in another order
        low, high = ours["low"], ours["high"]
        assert exact_quantile(exact, 0.015) - eps <= low <= exact_quantile(exact, 0.035) + eps
        assert exact_quantile(exact, 0.965) - eps <= high <= exact_quantile(exact, 0.985) + eps
        # the mean of delta* over all resamples is delta
        assert ours["delta"] == pytest.approx(sum(exact) / len(exact), abs=eps)
        assert ours["delta"] == pytest.approx(0.2, abs=eps)


def test_paired_bootstrap_extremes():
    better = sig.paired_bootstrap(A, [x + 0.5 for x in A], samples=200)
    assert better["p_value"] == 0.0 and better["delta"] == pytest.approx(0.5)
    assert better["low"] == pytest.approx(0.5) and better["high"] == pytest.approx(0.5)
    assert sig.paired_bootstrap(A, B, seed=None) == sig.paired_bootstrap(A, B, seed=0)
    same = sig.paired_bootstrap(A, A, samples=200)
    assert (same["delta"], same["low"], same["high"], same["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="same documents: got 7 and 6 scores"):
        sig.paired_bootstrap(A, B[:6])


# ----------------------------------------------------------------------------- ROUGE
def corpus(n=12, seed=0):
    """References and two systems, every summary two sentences; the systems keep different
    shares of each reference, so per-document scores differ from document to document."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    refs, sys_a, sys_b = [], [], []
    for i in range(n):
        s1, s2 = rng.choices(words, k=8), rng.choices(words, k=6)
        refs.append(" ".join(s1) + " . " + " ".join(s2) + " .")
        keep_a, keep_b = 2 + i % 5, 2 + i % 7
        sys_a.append(" ".join(s1[:keep_a] + rng.choices(words, k=3)) + " .")
        sys_b.append(" ".join(s1[:keep_b] + rng.choices(words, k=1 + i % 3)) + " . "
                     + " ".join(s2[: 1 + (3 * i) % 5]) + " .")
    return refs, sys_a, sys_b


def drand48(seed):
    """Perl's rand() after srand(seed) (Perl >= 5.20 has its own drand48 on every platform)."""
    x = ((seed & 0xFFFFFFFF) << 16) + 0x330E
    while True:
        x = (0x5DEECE66D * x + 0xB) % (1 << 48)
        yield x / float(1 << 48)


def rouge_printed_average(per_doc, resamples=1000):
    """ROUGE-1.5.5's Average_F from its per-evaluation scores (its computeAverages): the mean
    over resamples i = 0..999 (srand(i), N draws int(rand(N)) over the evaluations sorted as
    strings "1.1", "10.1", "11.1", "2.1", ...) of the resample's mean, printed %7.5f."""
    n = len(per_doc)
    order = sorted(range(n), key=lambda i: f"s.{i}.txt")  # EVAL k+1 = document order[k]
    by_eval = {f"{k + 1}.1": per_doc[doc] for k, doc in enumerate(order)}
    instances = sorted(by_eval)
    means = []
    for i in range(resamples):
        rand = drand48(i)
        means.append(sum(by_eval[instances[int(next(rand) * n)]] for _ in range(n)) / n)
    return float(f"{sum(means) / resamples:7.5f}")


@pytest.fixture(scope="module")
def rouge_result():
    """One rouge_significance run (a ROUGE-1.5.5 run per system) and rouge_scores of B."""
    if rouge.official_unavailable():
        pytest.skip(f"official ROUGE-1.5.5 cannot run: {rouge.official_unavailable()}")
    refs, sys_a, sys_b = corpus()
    result = sig.rouge_significance(refs, {"A": sys_a, "B": sys_b}, "A", samples=500, seed=1)
    return refs, sys_a, sys_b, result, rouge.rouge_scores(refs, sys_b)


def test_rouge_per_document_belongs_to_its_document(rouge_result):
    """ROUGE-1.5.5's per-document F (-d) in document order == rouge-score's per document (the
    two agree on these plain lowercase words, up to ROUGE's 5-digit rounding)."""
    refs, _, sys_b, result, _ = rouge_result
    pairs, _ = rouge.select_pairs(refs, sys_b)
    fallback = sig.fallback_per_document(pairs, ".", stemming=True)
    for metric in sig.METRICS:
        official = result["systems"]["B"][metric]["per_document"]
        assert len(set(official)) >= 10, metric  # distinct scores: a misplaced one would show
        assert official == pytest.approx(fallback[metric], abs=1e-4), metric


def test_rouge_average_is_rouges_bootstrap_mean(rouge_result):
    """rouge's printed score = ROUGE-1.5.5's mean of 1000 bootstrap means of the per-document F,
    re-computed exactly from them; the plain mean (our ``f``, on which deltas are taken) lies
    inside ROUGE's 95% interval but is a different number."""
    _, _, _, result, scores = rouge_result
    for metric in sig.METRICS:
        entry = result["systems"]["B"][metric]
        assert entry["reported_f"] == scores[metric]["f"]  # -d changes nothing else
        assert rouge_printed_average(entry["per_document"]) == pytest.approx(
            scores[metric]["f"], abs=1.1e-5), metric
        assert entry["f"] == pytest.approx(np.mean(entry["per_document"]), abs=1e-12)
        assert scores[metric]["f_low"] <= entry["f"] <= scores[metric]["f_high"]


def test_rouge_per_document_with_several_references():
    """A list of references per document: ROUGE-1.5.5's multi-model score of each document, the
    same as that document scored alone (one EVAL: ROUGE's average is its score)."""
    if rouge.official_unavailable():
        pytest.skip(f"official ROUGE-1.5.5 cannot run: {rouge.official_unavailable()}")
    refs = [["the cat sat on the mat .", "a cat was on a mat ."],
            ["a dog barked . it ran home .", "the dog ran home ."],
            ["birds sing in the morning .", "in the morning , birds sing . it is loud ."]]
    hyps = ["the cat was on the mat .", "the dog barked and ran .", "birds sing loudly ."]
    per_doc = sig.rouge_per_document(refs, hyps)
    for i in range(3):
        alone = rouge.rouge_scores([refs[i]], [hyps[i]])
        for metric in sig.METRICS:
            assert per_doc[metric][i] == alone[metric]["f"], (i, metric)
    assert len(set(per_doc["rouge-1"])) == 3


def test_rouge_significance_is_the_paired_bootstrap(rouge_result):
    _, _, _, result, _ = rouge_result
    assert result["official"] and result["documents"] == 12 and result["baseline"] == "A"
    assert set(result["systems"]["A"]["rouge-1"]) == {"f", "reported_f", "per_document"}
    for metric in sig.METRICS:
        a = result["systems"]["A"][metric]["per_document"]
        b = result["systems"]["B"][metric]
        assert result["systems"]["A"][metric]["f"] == pytest.approx(sum(a) / 12, abs=1e-12)
        assert b["f"] == pytest.approx(sum(b["per_document"]) / 12, abs=1e-12)
        # the paired bootstrap written out (one resample at a time), on the per-document F
        expected = literal_paired_bootstrap(a, b["per_document"], samples=500, seed=1)
        for key in ("delta", "low", "high", "p_value", "samples"):
            assert b[key] == pytest.approx(expected[key], abs=1e-12), (metric, key)
        assert b["delta"] > 0 and b["p_value"] < 0.05  # B keeps more of every reference


# ----------------------------------------------------------------------------- BLEU
def test_bleu_significance_uses_sacrebleus_resamples(monkeypatch):
    """Each system's mean and 95% half-width are sacreBLEU's own paired bootstrap's (the oracle,
    run here with the same seed); delta, interval and one-sided p are the ROUGE test's."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    refs, sys_a, sys_b = corpus(10, seed=3)
    result = sig.bleu_significance(refs, {"A": sys_a, "B": sys_b, "A2": list(sys_a)}, "A",
                                   samples=200)
    bleu = {name: BLEU().corpus_score(hyps, [refs]).score
            for name, hyps in (("A", sys_a), ("B", sys_b))}
    systems = result["systems"]
    assert systems["A"]["bleu"] == pytest.approx(bleu["A"])
    assert systems["A"]["p_value"] is None and "delta" not in systems["A"]
    assert systems["B"]["delta"] == pytest.approx(bleu["B"] - bleu["A"])
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    _, scores = PairedTest([("A", sys_a), ("B", sys_b), ("A2", list(sys_a))],
                           {"BLEU": BLEU(references=[refs])}, None, test_type="bs",
                           n_samples=200)()
    for name, oracle in zip(scores["System"], scores["BLEU"]):
        assert systems[name]["sacrebleu_mean"] == pytest.approx(oracle.mean, abs=1e-9)
        assert systems[name]["sacrebleu_ci95"] == pytest.approx(oracle.ci, abs=1e-9)
    assert scores["BLEU"][2].p_value == pytest.approx(1 / 201)  # sacreBLEU's: A vs itself
    assert systems["B"]["p_value"] == 0.0 and systems["B"]["low"] > 0
    assert (systems["A2"]["delta"], systems["A2"]["p_value"]) == (0.0, 1.0)
    assert result["signature"].startswith("nrefs:1|bs:200|seed:12345")
    with pytest.raises(ValueError, match="seed must not be 0"):
        sig.bleu_significance(refs, {"A": sys_a, "B": sys_b}, "A", seed=0)


# ----------------------------------------------------------------------------- command line
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("significance")
    refs, sys_a, sys_b = corpus(6, seed=5)
    for name, lines in (("ref", refs), ("a", sys_a), ("b", sys_b), ("short", sys_b[:4]),
                        ("empty", [])):
        (folder / name).write_text("".join(line + "\n" for line in lines))
    return folder


def test_cli_rouge(files, capsys):
    out_json = files / "rouge.json"
    assert cli_main(["rouge", str(files / "ref"), f"A={files / 'a'}", f"B={files / 'b'}",
                     "--fallback", "--samples", "200", "-o", str(out_json)]) == 0
    out, err = capsys.readouterr()
    assert "NOT OFFICIAL ROUGE-1.5.5" in err  # rouge's loud fallback banner
    lines = out.strip().splitlines()
    summary = json.loads(lines[-1])
    b = summary["systems"]["B"]["rouge-1"]
    assert b["p_value"] < 0.05 and "*" in lines[2] and lines[1].startswith("A ")
    assert f"{100 * b['delta']:+.2f} [{100 * b['low']:+.2f}, {100 * b['high']:+.2f}]" in lines[2]
    assert "rouge-score FALLBACK" in out and summary["official"] is False
    full = json.loads(out_json.read_text())
    assert len(full["systems"]["B"]["rouge-2"]["per_document"]) == 6


def test_cli_bleu(files, capsys):
    assert cli_main(["bleu", str(files / "ref"), f"A={files / 'a'}", f"B={files / 'b'}",
                     "--samples", "100", "--tgt-lang", "de"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert summary["metric"] == "bleu" and summary["documents"] == 6
    assert summary["systems"]["B"]["bleu"] > summary["systems"]["A"]["bleu"]
    assert lines[0].split()[:3] == ["system", "doc", "BLEU"] and "*" in lines[2]


def test_cli_rouge_with_several_reference_files(files, capsys):
    """Two reference files: line i of each is a reference of summary i, scored as the library
    scores a list of references per summary."""
    refs, sys_a, sys_b = corpus(6, seed=5)
    second = files / "ref2"
    second.write_text("".join(a + "\n" for a in sys_a))  # A's own output: a second reference
    assert cli_main(["rouge", str(files / "ref"), str(second), f"A={files / 'a'}",
                     f"B={files / 'b'}", "--fallback", "--samples", "100"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # the scorer's per-document F with both references per summary, then the paired bootstrap
    # written out (the command's seed, ROUGE_SEED)
    both = [[r, a] for r, a in zip(refs, sys_a)]
    per_a = sig.rouge_per_document(both, sys_a, fallback=True)
    per_b = sig.rouge_per_document(both, sys_b, fallback=True)
    for metric in sig.METRICS:
        expected = literal_paired_bootstrap(per_a[metric], per_b[metric], 100, sig.ROUGE_SEED)
        got = summary["systems"]["B"][metric]
        assert got["f"] == pytest.approx(sum(per_b[metric]) / 6, abs=1e-12)
        for key in ("delta", "low", "high", "p_value"):
            assert got[key] == pytest.approx(expected[key], abs=1e-12), (metric, key)
    single = sig.rouge_per_document(refs, sys_a, fallback=True)["rouge-1"]
    assert summary["systems"]["A"]["rouge-1"]["f"] > sum(single) / 6


@pytest.mark.parametrize("argv, message", [
    (["rouge", "{ref}", "A={a}", "B={short}"],
     "line counts differ: {ref} has 6 lines, {short} has 4 lines"),
    (["bleu", "{ref}", "A={a}", "B{b}"], "bad system 'B{b}': expected NAME=PATH"),
    (["bleu", "{ref}", "A={a}", "B={empty}"], "{empty} is empty"),
    (["bleu", "{ref}", "A={a}"], "give at least two systems"),
    (["bleu", "{ref}", "{short}", "A={a}", "B={b}"],
     "line counts differ: {ref} has 6 lines, {short} has 4 lines"),
    (["rouge", "A={a}", "B={b}"], "give the reference file(s) first, then the systems"),
    (["rouge", "{ref}", "{short}", "A={a}", "B={b}"],
     "line counts differ: {ref} has 6 lines, {short} has 4 lines"),
])
def test_cli_errors(files, capsys, argv, message):
    paths = {name: files / name for name in ("ref", "a", "b", "short", "empty")}
    assert cli_main([x.format(**paths) for x in argv]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"fairseq-hier-significance {argv[0]}: error: ")
    assert message.format(**paths) in err and "\n" not in err


# ----------------------------------------------------------------------------- sets of files
def literal_set_bootstrap(base, members, samples, seed):
    """The set test written out: a document's set score is the mean over the members, a
    resample's score the mean of those over its documents, one resample at a time."""
    rng = np.random.default_rng(seed)
    n, k = len(base), len(members)
    doc = [sum(m[i] for m in members) / k for i in range(n)]
    deltas, means = [], []
    for _ in range(samples):
        idx = rng.integers(0, n, size=n)
        mean_set = sum(doc[i] for i in idx) / n
        deltas.append(mean_set - sum(base[i] for i in idx) / n)
        means.append(mean_set)
    cuts = statistics.quantiles(deltas, n=40, method="inclusive")
    mean_cuts = statistics.quantiles(means, n=40, method="inclusive")
    return {"f": sum(doc) / n, "delta": sum(doc) / n - sum(base) / n, "low": cuts[0],
            "high": cuts[-1], "p_value": sum(d <= 0 for d in deltas) / samples,
            "f_low": mean_cuts[0], "f_high": mean_cuts[-1]}


def test_a_set_of_one_is_the_single_file():
    refs, sys_a, sys_b = corpus(8, seed=2)
    single = sig.rouge_significance(refs, {"A": sys_a, "B": sys_b}, "A", 300, fallback=True)
    one = sig.rouge_significance(refs, {"A": sys_a, "B": sig.HypothesisSet([sys_b])}, "A", 300,
                                 fallback=True)
    for metric in sig.METRICS:
        ours, plain = one["systems"]["B"][metric], single["systems"]["B"][metric]
        for key in ("f", "reported_f", "delta", "low", "high", "p_value", "per_document"):
            assert ours[key] == plain[key], (metric, key)
        assert ours["members"] == [{"name": "#1", "f": plain["f"],
                                    "reported_f": plain["reported_f"]}]
    assert one["reported"]["B"] == [single["reported"]["B"]]


def test_a_set_equals_the_literal_set_bootstrap():
    refs, sys_a, sys_b = corpus(9, seed=4)
    _, sys_c, sys_d = corpus(9, seed=6)  # two more systems' outputs for the same documents
    members = [sys_b, sys_c, sys_d]
    result = sig.rouge_significance(refs, {"A": sys_a, "S": sig.HypothesisSet(members)}, "A",
                                    400, seed=3, fallback=True)
    for metric in sig.METRICS:
        base = sig.rouge_per_document(refs, sys_a, fallback=True)[metric]
        member_scores = [sig.rouge_per_document(refs, m, fallback=True)[metric] for m in members]
        oracle = literal_set_bootstrap(base, member_scores, 400, 3)
        entry = result["systems"]["S"][metric]
        for key, value in oracle.items():
            assert entry[key] == pytest.approx(value, abs=1e-12), (metric, key)
        assert [m["f"] for m in entry["members"]] == pytest.approx(
            [sum(s) / 9 for s in member_scores], abs=1e-12)
        assert entry["reported_f"] == pytest.approx(
            sum(m["reported_f"] for m in entry["members"]) / 3, abs=1e-12)
        assert entry["f_low"] <= entry["f"] <= entry["f_high"]


def test_cli_rouge_sets(files, tmp_path, capsys):
    """NAME=A,B and NAME=DIR name the same set; one set alone prints its members, mean and
    interval; sets are refused for BLEU."""
    folder = tmp_path / "best5"
    folder.mkdir()
    for k, name in enumerate(("a", "b")):
        (folder / f"ck{k}.hyp").write_text((files / name).read_text())
    (folder / "notes.txt").write_text("not a hypothesis file\n")
    listed = [f"S={files / 'a'},{files / 'b'}"]
    results = []
    for spec in (listed, [f"S={folder}"]):
        assert cli_main(["rouge", str(files / "ref"), f"A={files / 'a'}", *spec, "--fallback",
                         "--samples", "100"]) == 0
        results.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    for metric in sig.METRICS:
        for key in ("f", "delta", "low", "high", "p_value", "f_low", "f_high"):
            assert results[0]["systems"]["S"][metric][key] == results[1]["systems"]["S"][metric][key]
    assert cli_main(["rouge", str(files / "ref"), f"S={folder}", "--fallback",
                     "--samples", "100"]) == 0
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    s = summary["systems"]["S"]["rouge-1"]
    assert [m["name"] for m in s["members"]] == [str(folder / "ck0.hyp"), str(folder / "ck1.hyp")]
    rows = [line.split("  ") for line in out.splitlines() if line.startswith("S ")]
    rows = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    assert rows[-2][:3] == ["S", "mean", f"{100 * s['reported_f']:.2f}"]
    assert rows[-1][:3] == ["S", "per-document mean [95% interval]",
                            f"{100 * s['f']:.2f} [{100 * s['f_low']:.2f}, {100 * s['f_high']:.2f}]"]
    assert cli_main(["bleu", str(files / "ref"), f"A={files / 'a'}", f"S={folder}"]) == 1
    assert capsys.readouterr().err.strip() == (
        "fairseq-hier-significance bleu: error: system 'S' is a set of hypothesis files: sets are "
        "scored on rouge only")
    (tmp_path / "none").mkdir()
    assert cli_main(["rouge", str(files / "ref"), f"S={tmp_path / 'none'}"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"fairseq-hier-significance rouge: error: system 'S': directory {tmp_path / 'none'} holds no "
        f"*.hyp file")
    assert cli_main(["rouge", str(files / "ref"), f"S={files / 'a'},{files / 'short'}"]) == 1
    err = capsys.readouterr().err.strip()
    assert "line counts differ" in err and str(files / "short") in err and "\n" not in err
