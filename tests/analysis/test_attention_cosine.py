"""Paragraph-attention cosine (000 Table 1 / Sec. 5.1, 001 Table 4):
fairseq_hier/analysis/attention_cosine.py and ``fairseq-hier-analyse attention-cosine``.

Oracles: the gold distribution against hand-computed numbers, a literal loop implementation and
scikit-learn; the per-paragraph sums of a flat source built by the dataset from a raw line with a
title and an empty paragraph, by hand; liu_ht's memory index against the model's own
``flat_memory``; the step aggregation against extract_attention's. Through the real commands
(forked from one warm process): a tiny PHT and a tiny flat Transformer trained 2 updates,
decoded, scored; the JSON checked, and one example's cosine recomputed from an independent
forward of the model with literal loops.
"""

import json
import math
import random
import re

import numpy as np
import pytest
import torch

from conftest import USER_DIR, build_model, paragraph_dict, random_prev_tokens, train_args
from fairseq_hier.analysis import attention_cosine as ac

CUT = ["--max-paragraphs", "4", "--max-paragraph-tokens", "6"]


def literal_gold(paragraphs, reference):
    """The gold distribution written out: terms = lowercased tokens with a letter or digit;
    idf = ln((1 + D) / (1 + df)) + 1 over the P paragraphs and the reference; cosines of the
    tf-idf vectors with the reference's, normalised to sum 1."""
    docs = [[t.lower() for t in doc if any(c.isalnum() for c in t)]
            for doc in list(paragraphs) + [reference]]
    n = len(docs)
    idf = {}
    for doc in docs:
        for term in doc:
            idf[term] = math.log((1 + n) / (1 + sum(term in d for d in docs))) + 1
    vectors = [{term: doc.count(term) * idf[term] for term in set(doc)} for doc in docs]
    ref = vectors[-1]
    sims = []
    for vec in vectors[:-1]:
        dot = sum(w * ref.get(term, 0.0) for term, w in vec.items())
        norm = math.sqrt(sum(w * w for w in vec.values()))
        norm *= math.sqrt(sum(w * w for w in ref.values()))
        sims.append(dot / norm if norm else 0.0)
    total = sum(sims)
    return [s / total for s in sims] if total else [0.0] * len(sims)


# ------------------------------------------------------------------------------------ the gold
def test_gold_distribution_by_hand():
    # terms: P1 {a, b} (',' dropped, 'A' lowercased), P2 {b, c}, P3 {d}, reference {a, b, b};
    # D = 4, df: a 2, b 3, c 1, d 1 -> idf_a = 1 + ln(5/3), idf_b = 1 + ln(5/4), idf_c = 1 + ln(5/2)
    # cos(ref, P1) = (ia^2 + 2 ib^2) / (|(ia, ib)| |(ia, 2 ib)|) = 0.943758...
    # cos(ref, P2) = 2 ib^2 / (|(ib, ic)| |(ia, 2 ib)|) = 0.457764...; cos(ref, P3) = 0
    paragraphs, reference = [["A", "b", ","], ["b", "c"], ["d"]], ["a", "b", "B", "."]
    ia, ib, ic = 1 + math.log(5 / 3), 1 + math.log(5 / 4), 1 + math.log(5 / 2)
    c1 = (ia ** 2 + 2 * ib ** 2) / (math.hypot(ia, ib) * math.hypot(ia, 2 * ib))
    c2 = 2 * ib ** 2 / (math.hypot(ib, ic) * math.hypot(ia, 2 * ib))
    assert (c1, c2) == pytest.approx((0.9437583, 0.4577637), abs=1e-7)
    gold = ac.gold_distribution(paragraphs, reference)
    assert gold.tolist() == pytest.approx([0.6733810, 0.3266190, 0.0], abs=1e-7)
    assert gold.tolist() == pytest.approx([c1 / (c1 + c2), c2 / (c1 + c2), 0.0], abs=1e-12)
    assert gold.tolist() == pytest.approx(literal_gold(paragraphs, reference), abs=1e-12)


def test_gold_distribution_matches_the_literal_loop_and_sklearn():
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = random.Random(4)
    words = ["Paris", "paris", "the", "▁city", "▁of", "2019", ",", ".", "--", "x1", "Y"]
    for _ in range(30):
        paragraphs = [rng.choices(words, k=rng.randint(1, 8)) for _ in range(rng.randint(1, 5))]
        reference = rng.choices(words, k=rng.randint(1, 6))
        gold = ac.gold_distribution(paragraphs, reference)
        assert gold.tolist() == pytest.approx(literal_gold(paragraphs, reference), abs=1e-12)
        terms = [[t.lower() for t in d if any(c.isalnum() for c in t)]
                 for d in paragraphs + [reference]]
        if any(terms[:-1]) and terms[-1]:
            x = TfidfVectorizer(analyzer=lambda d: d).fit_transform(terms).toarray()
            sims = x[:-1] @ x[-1]
            if sims.sum() > 0:
                assert gold == pytest.approx(sims / sims.sum(), abs=1e-12)
    # a paragraph without any term gets 0; no shared term at all: all zero (the caller excludes)
    assert ac.gold_distribution([[",", "."], ["a"]], ["a"]).tolist() == [0.0, 1.0]
    assert ac.gold_distribution([["a"], ["b"]], ["c", "."]).tolist() == [0.0, 0.0]


def test_cosine_values():
    assert ac.cosine([1, 0], [0, 1]) == 0.0
    assert ac.cosine([1, 2, 2], [2, 4, 4]) == pytest.approx(1.0, abs=1e-15)
    assert ac.cosine([1, 1, 0], [1, 0, 0]) == pytest.approx(1 / math.sqrt(2), abs=1e-15)
    assert ac.cosine([0.5, 0.5], [0.2, 0.8]) == pytest.approx(
        (0.1 + 0.4) / (math.sqrt(0.5) * math.sqrt(0.68)), abs=1e-15)
    with pytest.raises(ValueError, match="zero vector"):
        ac.cosine([0, 0], [1, 0])
    with pytest.raises(ValueError, match="different sizes"):
        ac.cosine([1, 0], [1, 0, 0])


def test_bootstrap_interval():
    """The interval of the cosine (bootstrap.mean_interval, shared with the ROUGE fallback)."""
    from fairseq_hier.scoring.bootstrap import mean_interval

    assert mean_interval([0.7] * 5) == pytest.approx((0.7, 0.7, 0.7))
    values = [0.0, 1.0] * 200  # mean 0.5, standard error 0.5 / sqrt(400) = 0.025
    mean, low, high = mean_interval(values, samples=2000, seed=1)
    assert mean == 0.5
    assert low == pytest.approx(0.5 - 1.96 * 0.025, abs=0.006)
    assert high == pytest.approx(0.5 + 1.96 * 0.025, abs=0.006)
    assert mean_interval(values, 300, 5) == mean_interval(values, 300, 5)
    # the draw of bootstrap_indices, chunked: the same resamples as one draw
    from fairseq_hier.scoring.bootstrap import bootstrap_indices

    means = np.asarray(values)[bootstrap_indices(len(values), 300, 5)].mean(axis=1)
    assert mean_interval(values, 300, 5)[1:] == pytest.approx(
        tuple(np.percentile(means, [2.5, 97.5])), abs=0)
    with pytest.raises(ValueError):
        mean_interval([])


# ------------------------------------------------------------------ attention -> paragraphs
def close(actual, expected, atol=1e-6):
    torch.testing.assert_close(actual, torch.tensor(expected, dtype=actual.dtype), atol=atol,
                               rtol=0)


class Lines(list):
    """An in-memory indexed dataset: a list of token tensors with ``sizes``."""

    @property
    def sizes(self):
        return np.array([len(x) for x in self])


def toy_dataset(d, sources, targets, max_source_positions, layout="flat"):
    from fairseq_hier.data.hierarchical_dataset import HierarchicalSummarizationDataset

    def enc(lines):
        return Lines(d.encode_line(x, add_if_not_exist=False, append_eos=True).long()
                     for x in lines)

    return HierarchicalSummarizationDataset(enc(sources), enc(targets), d, d, d.index("<P>"), 4,
                                            6, max_source_positions, "src", "tgt", "test",
                                            layout=layout)


def test_flat_paragraph_sums_with_title_and_empty_paragraph():
    d = paragraph_dict()
    # title "w1 w2" opens P1; the empty paragraph between two separators is dropped
    line = "w1 w2 <P> w3 <P> <P> w4 w5 <P> w6"
    full = toy_dataset(d, [line, line], ["w1 .", "w6 w4"], max_source_positions=64)
    cut = toy_dataset(d, [line], ["w1 ."], max_source_positions=7)  # 6 tokens, then EOS
    sep, eos, pad = d.index("<P>"), d.eos(), d.pad()
    w = [d.index(f"w{i}") for i in range(7)]
    assert full[0]["source"].tolist() == [w[1], w[2], w[3], sep, w[4], w[5], sep, w[6], eos]
    assert cut[0]["source"].tolist() == [w[1], w[2], w[3], sep, w[4], w[5], eos]
    assert int(full.num_paragraphs[0]) == 3
    batch = full.collater([full[0], cut[0]])  # the cut source is padded to 9
    index = ac.flat_paragraph_index(batch["net_input"]["src_tokens"], sep, eos, pad)
    assert index.tolist() == [[0, 0, 0, -1, 1, 1, -1, 2, -1], [0, 0, 0, -1, 1, 1, -1, -1, -1]]
    attn = torch.tensor([[[.1, .1, .1, .05, .2, .1, .05, .2, .1],  # P 0.3 0.3 0.2; rest 0.2
                          [0, 0, .5, 0, 0, 0, 0, .25, .25]],       # P 0.5 0 0.25
                         [[.1, .1, .1, .1, .2, .2, .2, 0, 0],      # P 0.3 0.4, P3 cut away
                          [0, 0, 0, 0, 1, 0, 0, 0, 0]]])
    sums = ac.paragraph_sums(attn, index, 3)
    close(sums, [[[.3, .3, .2], [.5, 0, .25]], [[.3, .4, 0], [0, 1, 0]]])
    steps = ac.normalise_steps(sums)
    close(steps, [[[.375, .375, .25], [2 / 3, 0, 1 / 3]], [[3 / 7, 4 / 7, 0], [0, 1, 0]]])
    # summary: the steps whose target is not padding (the second example has one step)
    target = torch.tensor([[w[1], eos], [eos, pad]])
    summary = ac.summary_distribution(steps, target, pad)
    close(summary, [[(.375 + 2 / 3) / 2, .375 / 2, (.25 + 1 / 3) / 2], [3 / 7, 4 / 7, 0]])
    # the gold: the title's w1 is paragraph 1's; "w6 w4" shares w4 with P2 and w6 with P3
    assert ac.example_gold(full, 0).tolist() == [1.0, 0.0, 0.0]
    assert ac.example_gold(full, 1).tolist() == pytest.approx(
        literal_gold([["w1", "w2", "w3"], ["w4", "w5"], ["w6"]], ["w6", "w4"]), abs=1e-12)
    with pytest.raises(ValueError, match="paragraph 3 but only 2"):
        ac.paragraph_sums(attn, index, 2)


DIMS = dict(encoder_layers=2, decoder_layers=1, encoder_embed_dim=16, decoder_embed_dim=16,
            encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=2,
            decoder_attention_heads=2, pooling_heads=2, dropout=0.0, attention_dropout=0.0,
            activation_dropout=0.0, global_layers="1", global_heads=2)


def tiny_batch(d, layout=((4, 2, 3), (2, 4, 0)), num_l=4, t=5):
    """B x P x L paragraphs (lengths per paragraph, 0 = absent), targets with padding."""
    g = torch.Generator().manual_seed(3)
    src = torch.full((len(layout), len(layout[0]), num_l), d.pad())
    for b, lengths in enumerate(layout):
        for p, n in enumerate(lengths):
            src[b, p, :n] = torch.randint(d.nspecial, len(d) - 1, (n,), generator=g)
    prev = random_prev_tokens(d, len(layout), t)
    target = torch.cat([prev[:, 1:], prev.new_full((len(layout), 1), d.eos())], 1)
    target[1, 3:] = d.pad()
    prev[1, 4:] = d.pad()
    net_input = {"src_tokens": src, "src_lengths": src.ne(d.pad()).sum((1, 2)),
                 "prev_output_tokens": prev}
    return {"net_input": net_input, "target": target}


def test_memory_index_follows_liu_ht_memory_and_step_sums_by_loop():
    from fairseq_hier.models.liu_ht import flat_memory

    d = paragraph_dict()
    batch = tiny_batch(d)
    src, pad = batch["net_input"]["src_tokens"], d.pad()
    b, p, l = src.shape
    index = ac.memory_paragraph_index(src, pad)
    # the model's own memory layout, fed the paragraph rank + 1 as the only feature
    padding = src.eq(pad).view(b * p, l)
    rows = (~padding).any(1).nonzero().squeeze(1)
    feature = (rows % p + 1).float().view(1, -1, 1).expand(l, -1, 1)  # L x N x 1
    memory, mask = flat_memory(feature, padding[rows], rows // p, b)
    assert torch.equal(index, torch.where(mask, -1, memory[..., 0].t().long() - 1))
    assert index.tolist() == [[0] * 4 + [1] * 2 + [2] * 3, [0] * 2 + [1] * 4 + [-1] * 3]

    model = build_model("liu_ht", d, **DIMS).eval()
    assert ac.attention_kind(model) == "memory"
    with torch.no_grad():
        system, steps = ac.system_distributions(model, "memory", batch, p, d.index("<P>"),
                                                d.eos(), pad)
        attn = model(**batch["net_input"])[1]["attn"][0]  # B x T x S
    for i in range(b):
        total = [0.0] * p
        for t in range(batch["target"].size(1)):
            if batch["target"][i, t] == pad:
                continue
            row, slot = [0.0] * p, 0
            for k in range(p):
                for j in range(l):
                    if src[i, k, j] != pad:
                        row[k] += float(attn[i, t, slot])
                        slot += 1
            total = [a + r / sum(row) for a, r in zip(total, row)]
            assert steps[i, t].tolist() == pytest.approx([r / sum(row) for r in row], abs=1e-6)
        assert system[i].tolist() == pytest.approx([x / sum(total) for x in total], abs=1e-6)


def test_pht_reuses_extract_attention_and_agrees_with_the_step_sum():
    from fairseq_hier.preparation.attention_labels import teacher_forced_labels

    d = paragraph_dict()
    batch = tiny_batch(d)
    model = build_model("pht", d, **{k: v for k, v in DIMS.items() if "global" not in k}).eval()
    assert ac.attention_kind(model) == "paragraph"
    sep, eos, pad = d.index("<P>"), d.eos(), d.pad()
    with torch.no_grad():
        system, steps = ac.system_distributions(model, "paragraph", batch, 3, sep, eos, pad)
        eta = teacher_forced_labels(model, batch["net_input"], batch["target"], pad)[1]
        by_steps = ac.summary_distribution(
            ac.step_attention(model, "paragraph", batch["net_input"], 3, sep, eos, pad),
            batch["target"], pad)
    assert steps is None and torch.equal(system, eta.float())
    assert torch.allclose(by_steps, eta, atol=1e-6)


def test_attention_kinds_and_unmappable_models():
    import types

    d = paragraph_dict()
    small = {k: v for k, v in DIMS.items() if k not in ("global_layers", "global_heads",
                                                        "pooling_heads")}
    assert ac.attention_kind(build_model("transformer", d, **small)) == "flat"
    other = types.SimpleNamespace(hierarchical_source=True, decoder=None)
    with pytest.raises(ValueError, match="no known mapping onto paragraphs"):
        ac.attention_kind(other)
    with pytest.raises(ValueError, match="no decoder cross-attention"):
        ac.attention_kind(types.SimpleNamespace())


def test_hypotheses_with_symbols_outside_the_dictionary_are_named():
    d = paragraph_dict()
    tokens = ac.encode_hypotheses(["w1 w2", "", "<unk> w3"], d, "gen.txt")
    assert [t.tolist() for t in tokens] == [[d.index("w1"), d.index("w2"), d.eos()], [d.eos()],
                                            [d.unk(), d.index("w3"), d.eos()]]
    with pytest.raises(ValueError, match=r"gen.txt: 2 hypotheses hold symbols that are not in "
                                         r"the target dictionary, example ids 1 \('Paris'\), "
                                         r"2 \('x'\)"):
        ac.encode_hypotheses(["w1", "w1 Paris", "x w2"], d, "gen.txt")


# ------------------------------------------------------------------------------- the command
@pytest.fixture(scope="module")
def runs(data_bin, tmp_path_factory):
    """pht and transformer, 2 updates each, decoded and scored through the real commands. The
    transformer is decoded and scored with a flat cut of 16 tokens, so that some paragraphs lie
    beyond what it reads, and keeps the heatmaps of all 8 examples (pht: the first 3)."""
    from cli_forkserver import run_checked

    root = tmp_path_factory.mktemp("cosine")
    jobs, out = [], {"root": root}
    for arch, flat, maps in (("pht", [], 3), ("transformer", ["--max-source-positions", "16"], 8)):
        run = root / arch
        jobs += [
            {"id": f"train-{arch}", "script": "fairseq-train",
             "args": train_args(data_bin, arch, run, 2)},
            {"id": f"gen-{arch}", "script": "fairseq-generate", "needs": [f"train-{arch}"],
             "args": [data_bin, "--path", run / "checkpoint_last.pt", "--user-dir", USER_DIR,
                      "--task", "hierarchical_summarization", *CUT, *flat, "--beam", "2",
                      "--max-len-b", "6", "--batch-size", "8", "--gen-subset", "test",
                      "--num-workers", "0", "--results-path", run]},
            {"id": f"cos-{arch}", "script": "fairseq-hier-analyse", "needs": [f"gen-{arch}"],
             "args": ["attention-cosine", data_bin, "--path", run / "checkpoint_last.pt",
                      "--generate-log",
                      run / "generate-test.txt", "--subset", "test", "--heatmaps", maps,
                      "--batch-size", "5", "--output", run / "attention.json", *flat]}]
    out.update(run_checked(jobs, root))
    for arch in ("pht", "transformer"):
        out[arch] = json.loads((root / arch / "attention.json").read_text())
    return out


def h_lines(path):
    return {int(i): h for i, h in re.findall(r"^H-(\d+)\t\S+\t(.*)$", path.read_text(), re.M)}


@pytest.mark.parametrize("arch", ["pht", "transformer"])
def test_attention_json_schema(runs, raw_corpus, arch):
    from fairseq_hier.data.paragraphs import text_paragraphs

    rec = runs[arch]
    assert set(rec) == {"kind", "arch", "checkpoint", "split", "examples", "cosine",
                        "per_example", "heatmaps", "attention", "excluded"}
    assert (rec["kind"], rec["arch"], rec["split"]) == ("paragraph", arch, "test")
    assert rec["attention"] == {"pht": "paragraph", "transformer": "flat"}[arch]
    assert rec["checkpoint"].endswith(f"{arch}/checkpoint_last.pt")
    # the gold, recomputed from the raw text by the dataset's rules (4 paragraphs x 6 tokens)
    sources = (raw_corpus / "test.src").read_text().splitlines()
    targets = (raw_corpus / "test.tgt").read_text().splitlines()
    golds = [literal_gold([p[:6] for p in text_paragraphs(s)[:4]], t.split())
             for s, t in zip(sources, targets)]
    excluded = [i for i, g in enumerate(golds) if not any(g)]
    assert rec["excluded"] == {"zero_gold": excluded} and len(excluded) < 8
    per = rec["per_example"]
    assert len(per) == 8 and [i for i, c in enumerate(per) if c is None] == excluded
    scored = [c for c in per if c is not None]
    assert rec["examples"] == len(scored) and all(0 <= c <= 1 for c in scored)
    cos = rec["cosine"]
    assert cos["mean"] == pytest.approx(np.mean(scored), abs=1e-12)
    assert cos["low"] <= cos["mean"] <= cos["high"]
    hyps = h_lines(runs["root"] / arch / "generate-test.txt")
    maps = {"pht": 3, "transformer": 8}[arch]
    assert [m["id"] for m in rec["heatmaps"]] == list(range(maps))
    for m in rec["heatmaps"]:
        n = len(golds[m["id"]])
        assert m["rows"] == hyps[m["id"]].split() + ["</s>"]
        assert m["cols"] == [f"P{k + 1}" for k in range(n)]
        assert len(m["weights"]) == len(m["rows"])
        assert all(len(w) == n and sum(w) == pytest.approx(1.0, abs=1e-5) for w in m["weights"])
        assert m["gold"] == pytest.approx(golds[m["id"]], abs=1e-12)
    summary, headline = runs[f"cos-{arch}"].strip().splitlines()[-2:]
    assert re.fullmatch(rf"\S+attention.json: {arch} \({rec['attention']} attention\), split "
                        rf"test, {len(scored)} of 8 examples scored, {len(excluded)} excluded "
                        rf"\(gold all zero\), {maps} heatmaps", summary)
    assert headline == (f"paragraph-attention cosine {cos['mean']:.4f} (95% CI {cos['low']:.4f}"
                        f"-{cos['high']:.4f}, {len(scored)} examples)")


@pytest.mark.parametrize("arch", ["pht", "transformer"])
def test_cosine_equals_an_independent_forward(runs, data_bin, arch):
    """One example alone (not batched as the command batches it): the model's attention on its
    own hypothesis, aggregated by literal loops, against the gold of the literal tf-idf."""
    from fairseq import checkpoint_utils

    rec = runs[arch]
    k = next(i for i, c in enumerate(rec["per_example"]) if c is not None)
    from omegaconf import open_dict

    models, _, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(runs["root"] / arch / "checkpoint_last.pt")], arg_overrides={"data": str(data_bin)})
    if arch == "transformer":
        with open_dict(task.cfg):
            task.cfg.max_source_positions = 16  # the task's cut only, as fairseq-generate's
    task.load_dataset("test")
    ds, model, d = task.datasets["test"], models[0].eval(), task.target_dictionary
    hyp = [d.index(w) for w in h_lines(runs["root"] / arch / "generate-test.txt")[k].split()]
    target = torch.tensor(hyp + [d.eos()])
    prev = torch.tensor([d.eos()] + hyp).unsqueeze(0)
    rows = ds.paragraphs(k)  # P x L
    p = rows.size(0)
    with torch.no_grad():
        if arch == "pht":
            attn = model.decoder(prev, encoder_out=model.encoder(rows.unsqueeze(0)))[1]["attn"][0]
            steps = [attn[0, t].tolist() for t in range(len(target))]
        else:
            src = ds[k]["source"]
            assert len(src) <= 16
            attn = model(src.unsqueeze(0), torch.tensor([len(src)]), prev)[1]["attn"][0][0]
            steps = []
            for t in range(len(target)):
                row, para = [0.0] * p, 0
                for s, tok in enumerate(src.tolist()):
                    if tok == task.separator:
                        para += 1
                    elif tok != d.eos():
                        row[para] += float(attn[t, s])
                steps.append([x / sum(row) for x in row])
    system = [sum(col) for col in zip(*steps)]
    paragraphs = [[d[x] for x in row.tolist() if x != d.pad()] for row in rows]
    gold = literal_gold(paragraphs, [d[x] for x in ds.tgt[k].tolist()[:-1]])
    dot = sum(a * b for a, b in zip(system, gold))
    want = dot / (math.sqrt(sum(a * a for a in system)) * math.sqrt(sum(b * b for b in gold)))
    assert rec["per_example"][k] == pytest.approx(want, abs=1e-5)
    if arch == "transformer":  # paragraphs beyond the 16-token flat cut get exactly zero
        seen = {m["id"]: ds[m["id"]]["source"].eq(task.separator).sum().item() + 1
                for m in rec["heatmaps"]}
        cut = [m for m in rec["heatmaps"] if seen[m["id"]] < len(m["cols"])]
        assert len(cut) >= 2, "--max-source-positions 16 should hide paragraphs of some examples"
        for m in cut:
            hidden = range(seen[m["id"]], len(m["cols"]))
            assert all(w[j] == 0.0 for w in m["weights"] for j in hidden)
            assert all(sum(w[:seen[m["id"]]]) == pytest.approx(1.0, abs=1e-5) for w in m["weights"])


def test_command_errors_are_one_line(runs, data_bin, tmp_path, capsys):
    from fairseq_hier.cli.analyse import cli_main

    ck = runs["root"] / "pht" / "checkpoint_last.pt"
    log = (runs["root"] / "pht" / "generate-test.txt").read_text().splitlines()
    common = ["attention-cosine", str(data_bin), "--path", str(ck), "-o", str(tmp_path / "a.json")]

    def fails(*args):
        assert cli_main([*common, *map(str, args)]) == 1
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith("fairseq-hier-analyse attention-cosine: error: ")
        assert not (tmp_path / "a.json").exists()
        return err

    missing = tmp_path / "missing.txt"
    missing.write_text("\n".join(x for x in log if not re.match(r"H-[25]\t", x)) + "\n")
    assert "2 of 8 examples have no hypothesis (first ids: [2, 5])" in fails(
        "--generate-log", missing)
    post = tmp_path / "post.txt"
    post.write_text("\n".join(re.sub(r"^(H-3\t\S+\t)", r"\1Paris ", x) for x in log) + "\n")
    assert "example ids 3 ('Paris')" in fails("--generate-log", post)
    state = torch.load(ck, weights_only=False)
    state["cfg"]["task"]["_name"] = "hat_summarization"
    torch.save(state, tmp_path / "hat.pt")
    err = fails("--generate-log", missing, "--path", tmp_path / "hat.pt")
    assert err.endswith("is a checkpoint of task 'hat_summarization'; the paragraph-attention "
                        "cosine needs one of task 'hierarchical_summarization' (HAT's sentence "
                        "attention: fairseq-generate --print-sentence-attention, then "
                        "fairseq-hier-analyse heatmap)")
    assert "no such checkpoint" in fails("--generate-log", missing, "--path", tmp_path / "no.pt")
    (tmp_path / "text.pt").write_text("not a checkpoint\n")
    assert f"--path {tmp_path / 'text.pt'}: not a fairseq checkpoint (" in fails(
        "--generate-log", missing, "--path", tmp_path / "text.pt")
