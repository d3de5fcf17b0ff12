"""Mixed precision for every architecture, on the CPU.

In-process (tiny models): for ``pht``, ``vht``, ``liu_ht``, ``parsingsum_ft``, ``parsingsum_ht``,
``hat_transformer``, ``hat_bart_base`` and ``attention_predictor``, one forward + backward of a
batch with absent paragraphs (sentences), padded tokens and padded target steps, in float32 and
under ``torch.autocast("cpu", torch.bfloat16)``, with the model cast to bfloat16 and to float16:
logits and gradients finite, logits within a stated tolerance of float32, gradients pointing the
same way (cosine), and the rows that are fully masked get what they must (absent paragraphs
exactly zero attention; a predictor row without paragraphs exactly 0).

Through the real commands (forked from one warm process, ``tests/support/cli_forkserver.py``): every
architecture trains 2 updates with ``--bf16`` and with ``--fp16``, and
decodes (``fairseq-generate``; ``fairseq-validate`` for the predictor) in float32, ``--bf16`` and
``--fp16``, including the attention-alignment generator (``--attention-alignment`` with a
predictor trained in bf16, ``--align-live-beams``, ``--print-alignment soft``).

``--fp16`` on the CPU: fairseq 0.12's ``FP16Optimizer.build_fp32_params`` keys the flattened
float32 master copy by ``torch.cuda.current_device()`` (asked even without a GPU; "Torch not
compiled with CUDA enabled" on a CPU-only torch): ``fairseq_hier.compat.patch_fp16_flat_on_cpu``
keys CPU parameters by their device index, as fairseq later groups them. The unflattened path
(``--fp16-no-flatten-grads``) runs too, and both give the same losses: with the key 0 the
flattened run updated without gradients, which only that comparison showed.
"""

import importlib.util
import re

import pytest
import torch
import torch.nn.functional as F

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import ROOT, TINY_HAT, bos_source, build_model, left_pad, make_dict, paragraph_batch
from conftest import paragraph_dict, random_prev_tokens
from fairseq_hier.models.attention_predictor import (AttentionPredictorConfig,
                                                     AttentionPredictorModel)
from fairseq_hier.modules.linguistic_attention import make_guide

MODES = ("autocast", "bf16", "fp16")
DIMS = dict(encoder_layers=2, decoder_layers=1, encoder_embed_dim=16, decoder_embed_dim=16,
            encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=2,
            decoder_attention_heads=2, pooling_heads=2, dropout=0.0, attention_dropout=0.0,
            activation_dropout=0.0)
HIER = dict(global_layers="1", global_heads=2)  # liu_ht / parsingsum_ht: 1 local + 1 global


def paragraphs(d, layout, num_l=5, seed=0):
    """``B x P x L`` paragraphs of the given lengths per example (0 = absent)."""
    g = torch.Generator().manual_seed(seed)
    examples = []
    for lengths in layout:
        out = torch.full((len(lengths), num_l), d.pad())
        for p, n in enumerate(lengths):
            out[p, :n] = torch.randint(d.nspecial, len(d) - 1, (n,), generator=g)
        examples.append(out)
    return paragraph_batch(d, examples)


def chain_parse(tokens, pad, sentence=5):
    """Word and head ids per piece of ``tokens`` (any shape; -1 on padding): each piece is a
    word, sentences of ``sentence`` words whose first word is the root and the others hang on
    their left neighbour."""
    real = tokens.ne(pad)
    words = (real.cumsum(-1) - 1).masked_fill(~real, -1)
    heads = torch.where(words % sentence == 0, torch.full_like(words, -1), words - 1)
    return words, heads.masked_fill(~real, -1)


def targets(d, b, t, seed=1):
    """(prev_output_tokens, target) ``B x T``: the last example one step shorter (padded)."""
    prev = random_prev_tokens(d, b, t, seed)
    target = torch.cat([prev[:, 1:], torch.full((b, 1), d.eos())], 1)
    prev[-1, -1], target[-1, -1] = d.pad(), d.pad()
    return prev, target


# Each case: (build the model, run it) -> logits B x T x V (or B x P for the predictor), the
# target (None: a weighted sum) and a dict of tensors that must be exactly zero.
def hierarchical_case(arch, extra=None):
    d = paragraph_dict()
    src = paragraphs(d, [[5, 3, 4], [2, 5, 0], [4, 0, 0]])  # B=3, P=3, L=5
    prev, target = targets(d, 3, 4)

    def build():
        return build_model(arch, d, **DIMS, **(extra or {}))

    def run(model):
        logits, out = model(src, None, prev)
        absent = src.eq(d.pad()).all(-1)  # B x P
        zeros = {}
        if arch in ("pht", "vht"):  # their paragraph attention, B x T x P
            zeros["attention to absent paragraphs"] = out["attn"][0].masked_select(
                absent.unsqueeze(1))
        return logits, target, zeros

    return d, build, run


def parsingsum_ht_case():
    d = paragraph_dict()
    src = paragraphs(d, [[5, 3, 4], [2, 5, 0], [4, 0, 0]])
    words, heads = chain_parse(src, d.pad())
    prev, target = targets(d, 3, 4)

    def run(model):
        return model(src, None, prev, src_words=words, src_heads=heads)[0], target, {}

    return d, lambda: build_model("parsingsum_ht", d, **DIMS, **HIER), run


def parsingsum_ft_case():
    """A long row (200 pieces: LGA's banded path, chunks of 64) and a short one, whose windows
    past its end hold padding only."""
    d = paragraph_dict()
    g = torch.Generator().manual_seed(0)
    src = torch.full((2, 200), d.pad())
    for row, n in enumerate((200, 20)):
        src[row, :n] = torch.randint(d.nspecial, len(d) - 1, (n,), generator=g)
        src[row, n - 1] = d.eos()
    words, heads = chain_parse(src, d.pad())
    assert make_guide(words, heads, "alpha", 2.0, "word").num_chunks == 4  # the banded path
    prev, target = targets(d, 2, 4)

    def run(model):
        return model(src, None, prev, src_words=words, src_heads=heads)[0], target, {}

    return d, lambda: build_model("parsingsum_ft", d, **DIMS, max_source_positions=256), run


def hat_case(arch):
    """Sources of 2, 1 and 3 sentences (absent sentences in the hierarchical layer)."""
    d = make_dict(30)
    src = left_pad([bos_source(3, 4), bos_source(5), bos_source(2, 2, 2)])
    prev, target = targets(d, 3, 4)
    dims = {**TINY_HAT, "attention_dropout": 0.0, "activation_dropout": 0.0}

    def run(model):
        return model(src, None, prev)[0], target, {}

    return d, lambda: build_model(arch, d, **dims), run


def predictor_case():
    """Rows with 3, 1 and no present paragraph (the last fully masked)."""
    phi = torch.randn(3, 4, 16, generator=torch.Generator().manual_seed(0))
    absent = torch.tensor([[0, 0, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]]).bool()
    cfg = AttentionPredictorConfig(input_dim=16, encoder_layers=2, encoder_attention_heads=2,
                                   encoder_ffn_embed_dim=32, dropout=0.0)

    def run(model):
        eta = model(phi, absent)  # B x P
        return eta, None, {"eta_hat of absent paragraphs": eta[absent]}

    return None, lambda: AttentionPredictorModel(cfg), run


CASES = {
    "pht": lambda: hierarchical_case("pht"),
    "vht": lambda: hierarchical_case("vht"),
    "liu_ht": lambda: hierarchical_case("liu_ht", HIER),
    "parsingsum_ht": parsingsum_ht_case,
    "parsingsum_ft": parsingsum_ft_case,
    "hat_transformer": lambda: hat_case("hat_transformer_iwslt_zh_en"),
    "hat_bart_base": lambda: hat_case("hat_bart_base"),
    "attention_predictor": predictor_case,
}


def forward_backward(case, mode):
    """One training step's forward + backward in ``mode`` ('fp32', 'autocast', 'bf16', 'fp16')
    on the same initial weights; returns (logits, {name: grad}, zeros), all as float32."""
    d, build, run = case
    torch.manual_seed(0)
    model = build().train()
    if mode in ("bf16", "fp16"):
        model = model.to(torch.bfloat16 if mode == "bf16" else torch.float16)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "autocast"):
        logits, target, zeros = run(model)
    if target is None:  # the predictor: a weighted sum of eta_hat, as an MSE would weigh it
        loss = (logits.float() * torch.arange(1.0, logits.size(-1) + 1)).sum()
    else:  # cross-entropy over the real target steps, computed in float32 as fairseq's is
        loss = F.cross_entropy(logits.float().flatten(0, 1), target.flatten(),
                               ignore_index=d.pad(), reduction="sum")
    loss.backward()
    grads = {n: p.grad.float() for n, p in model.named_parameters() if p.grad is not None}
    return logits.detach().float(), grads, {k: v.detach().float() for k, v in zeros.items()}


# max |logit - float32 logit| allowed, relative to max(1, max |float32 logit|) (the logits here
# reach 0.4-4): bfloat16 keeps 8 significant bits (rounding 2^-9 per operation), float16 11
# (2^-12). Measured (2 CPU cores, torch 2.13): at most 0.015 (bf16, autocast) and 0.0013 (fp16)
# of that scale; gradient cosines to float32 at least 0.9998
LOGIT_TOL = {"autocast": 0.03, "bf16": 0.03, "fp16": 0.004}
GRAD_COSINE = {"autocast": 0.995, "bf16": 0.995, "fp16": 0.9995}


@pytest.mark.parametrize("arch", list(CASES))
def test_forward_backward_in_bf16_autocast_and_fp16(arch):
    case = CASES[arch]()
    ref_logits, ref_grads, ref_zeros = forward_backward(case, "fp32")
    for name, zero in ref_zeros.items():
        assert zero.numel() and torch.all(zero == 0), f"fp32: {name} not exactly 0"
    for mode in MODES:
        logits, grads, zeros = forward_backward(case, mode)
        assert torch.isfinite(logits).all(), f"{mode}: non-finite outputs"
        assert set(grads) == set(ref_grads), f"{mode}: parameters without gradient"
        bad = [n for n, g in grads.items() if not torch.isfinite(g).all()]
        assert not bad, f"{mode}: non-finite gradients in {bad}"
        err = (logits - ref_logits).abs().max().item()
        scale = max(1.0, ref_logits.abs().max().item())
        # > 0: the precision really changed; <= tol: and no more than rounding explains
        assert 0 < err <= LOGIT_TOL[mode] * scale, \
            f"{mode}: max |logit difference| to fp32 {err} (scale {scale})"
        flat, ref = (torch.cat([g[n].flatten() for n in sorted(ref_grads)])
                     for g in (grads, ref_grads))
        cosine = F.cosine_similarity(flat, ref, dim=0).item()
        assert cosine >= GRAD_COSINE[mode], f"{mode}: gradient cosine to fp32 {cosine}"
        for name, zero in zeros.items():  # fully masked rows: exactly 0, never NaN
            assert torch.all(zero == 0), f"{mode}: {name} not exactly 0: {zero}"


# ------------------------------------------------------------------ the real commands, per arch
CUT = ["--max-paragraphs", "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30"]
SUMMARIZATION = ["--task", "hierarchical_summarization", *CUT]
PARSED = ["--dependency-parse", "chain", "--num-workers", "0"]
HAT_TASK = ["--task", "hat_summarization", "--max-source-positions", "64"]
LOCAL_GLOBAL = ["--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2"]
# arch -> (data-bin name, task flags, model flags after SMALL_MODEL)
ARCHS = {
    "pht": ("data_bin", SUMMARIZATION, ["--arch", "pht"]),
    "vht": ("data_bin", SUMMARIZATION, ["--arch", "vht"]),
    "liu_ht": ("data_bin", SUMMARIZATION, ["--arch", "liu_ht", *LOCAL_GLOBAL]),
    "parsingsum_ht": ("parsed_bin", [*SUMMARIZATION, *PARSED],
                      ["--arch", "parsingsum_ht", *LOCAL_GLOBAL]),
    "parsingsum_ft": ("parsed_bin", ["--task", "hierarchical_summarization", "--source-layout",
                                     "flat", "--max-source-positions", "60", *PARSED],
                      ["--arch", "parsingsum_ft", "--share-all-embeddings"]),
    "hat_transformer": ("hat_bin", HAT_TASK, ["--arch", "hat_transformer_iwslt_zh_en",
                                              "--share-all-embeddings"]),
    "hat_bart_base": ("hat_bin", HAT_TASK, ["--arch", "hat_bart_base"]),
}
TRAIN_PRECISION = {"bf16": ["--bf16"], "fp16": ["--fp16"]}
DECODE_PRECISION = {"fp32": [], "bf16": ["--bf16"], "fp16": ["--fp16"]}
TRAIN = ["--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "400", "--max-update", "2",
         "--no-progress-bar", "--log-interval", "1", "--seed", "3", "--num-workers", "0",
         "--no-epoch-checkpoints"]
GENERATE = ["--gen-subset", "valid", "--beam", "2", "--max-len-b", "8", "--batch-size", "8",
            "--num-workers", "0"]
PREDICTOR = ["--task", "attention_prediction", "--arch", "attention_predictor", "--criterion",
             "attention_mse", "--input-dim", "32", "--encoder-layers", "1",
             "--encoder-attention-heads", "2", "--encoder-ffn-embed-dim", "32"]


def write_chain_conllu(raw_src, path):
    """scripts/gpu_check.py's chain parse (one sentence per segment, every word attached to its
    left neighbour), loaded from the script (standard library only at its top)."""
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_chain_conllu(raw_src, path)


def write_hat_raw(raw, folder, bin_dir):
    """HAT sources from the same corpus: every segment a sentence opened by ``<s>``; the
    ``SPLIT.sentences`` counts go beside the binarized data."""
    folder.mkdir()
    bin_dir.mkdir()
    for split in ("train", "valid", "test"):
        lines = (raw / f"{split}.src").read_text().splitlines()
        sentences = [line.split(" <P> ") for line in lines]
        (folder / f"{split}.src").write_text(
            "".join(" ".join(f"<s> {s}" for s in line) + "\n" for line in sentences))
        (folder / f"{split}.tgt").write_text((raw / f"{split}.tgt").read_text())
        (bin_dir / f"{split}.sentences").write_text("".join(f"{len(s)}\n" for s in sentences))


@pytest.fixture(scope="module")
def runs(raw_corpus, data_bin, tmp_path_factory):
    """Every command of this module, run once (two at a time); returns {job id: (rc, log)}."""
    import shutil

    from cli_forkserver import run_jobs
    from conftest import SMALL_MODEL, USER_DIR
    from test_attention_predictor import write_labels

    root = tmp_path_factory.mktemp("precision")
    bins = {"data_bin": data_bin, "parsed_bin": root / "parsed-bin", "hat_bin": root / "hat-bin"}
    shutil.copytree(data_bin, bins["parsed_bin"])
    write_hat_raw(raw_corpus, root / "hat-raw", bins["hat_bin"])
    labels = write_labels(root / "labels", sizes=(("train", 32), ("valid", 8)), c=32)
    jobs = []

    def job(name, script, args, needs=()):
        jobs.append({"id": name, "script": script, "args": [str(a) for a in args],
                     "log": str(root / f"{name}.log"), "needs": list(needs)})

    data_jobs = []
    for split in ("train", "valid", "test"):
        write_chain_conllu(raw_corpus / f"{split}.src", root / f"{split}.conllu")
        job(f"parse-{split}", "fairseq-hier-parse", [
            "project", "--conllu", root / f"{split}.conllu", "--source", raw_corpus / f"{split}.src",
            "--subword", "none", "--output-prefix", bins["parsed_bin"] / f"{split}.parse.chain"])
        data_jobs.append(f"parse-{split}")
    hat_raw = root / "hat-raw"
    job("hat-preprocess", "fairseq-preprocess", [
        "--source-lang", "src", "--target-lang", "tgt", "--trainpref", hat_raw / "train",
        "--validpref", hat_raw / "valid", "--testpref", hat_raw / "test", "--destdir",
        bins["hat_bin"], "--joined-dictionary", "--workers", "1"])
    data_jobs.append("hat-preprocess")

    for arch, (data, task, model) in ARCHS.items():
        data, user = bins[data], ["--user-dir", USER_DIR]
        for precision, flags in TRAIN_PRECISION.items():
            job(f"{arch}-train-{precision}", "fairseq-train", [
                data, *user, *task, *model[:2], *SMALL_MODEL, *model[2:], *TRAIN, "--save-dir",
                root / f"{arch}-{precision}", *flags], data_jobs)
        checkpoint = root / f"{arch}-bf16" / "checkpoint_last.pt"
        for precision, flags in DECODE_PRECISION.items():
            job(f"{arch}-generate-{precision}", "fairseq-generate", [
                data, *user, *task, "--path", checkpoint, *GENERATE, *flags],
                [f"{arch}-train-bf16"])
    # fairseq's unflattened fp16 master copies (one float32 copy per parameter)
    job("pht-train-fp16-unflat", "fairseq-train", [
        data_bin, "--user-dir", USER_DIR, *SUMMARIZATION, "--arch", "pht", *SMALL_MODEL, *TRAIN,
        "--save-dir", root / "pht-unflat", "--fp16", "--fp16-no-flatten-grads"])

    user = ["--user-dir", USER_DIR]
    for precision, flags in TRAIN_PRECISION.items():
        job(f"predictor-train-{precision}", "fairseq-train", [
            labels, *user, *PREDICTOR, *TRAIN, "--batch-size", "16", "--save-dir",
            root / f"predictor-{precision}", *flags])
    predictor = root / "predictor-bf16" / "checkpoint_last.pt"
    for precision, flags in DECODE_PRECISION.items():
        job(f"predictor-validate-{precision}", "fairseq-validate", [
            labels, *user, "--task", "attention_prediction", "--path", predictor,
            "--batch-size", "16", "--num-workers", "0", "--valid-subset", "valid", *flags],
            ["predictor-train-bf16"])
        job(f"aligned-generate-{precision}", "fairseq-generate", [
            data_bin, *user, *SUMMARIZATION, "--path", root / "pht-bf16" / "checkpoint_last.pt",
            *GENERATE, "--attention-alignment", "--align-predictor", predictor,
            "--align-live-beams", "--print-alignment", "soft", *flags],
            ["predictor-train-bf16", "pht-train-bf16"])

    results = run_jobs(jobs)
    return {name: (result["rc"], (root / f"{name}.log").read_text() if result["rc"] is not None
                   else "(not run: a job it needs failed)")
            for name, result in results.items()}


def succeeded(runs, name):
    rc, log = runs[name]
    assert rc == 0, f"{name} failed ({rc}):\n{log[-4000:]}"
    return log


def train_losses(log):
    """[(update, loss)] of the train_inner lines, and the final validation loss."""
    updates = [(int(u), float(loss)) for loss, u in
               re.findall(r"train_inner \|.* loss=([\w.]+),.* num_updates=(\d+),", log)]
    valid = re.findall(r"valid on 'valid' subset \| loss ([\w.]+)", log)
    return updates, float(valid[-1]) if valid else None


def hypotheses(log):
    """{id: (score, text)} from fairseq-generate's H- lines."""
    return {int(i): (float(score), text) for i, score, text in
            re.findall(r"^H-(\d+)\t(\S+)\t(.*)$", log, flags=re.M)}


@pytest.mark.parametrize("arch", [*ARCHS, "predictor"])
def test_trains_in_bf16_and_fp16(runs, arch):
    logs = {p: succeeded(runs, f"{arch}-train-{p}") for p in TRAIN_PRECISION}
    assert "training in torch.bfloat16 on cpu" in logs["bf16"], logs["bf16"][-3000:]
    assert "loss_scale=128" in logs["fp16"]  # fairseq's FP16Optimizer, dynamic loss scaling
    losses = {p: train_losses(log) for p, log in logs.items()}
    for precision, (updates, valid) in losses.items():
        assert [u for u, _ in updates] == [1, 2], logs[precision][-3000:]
        assert all(0 < loss < 20 for _, loss in updates) and 0 < valid < 20, losses
    # the same initial weights: the first update's loss in either precision, and the
    # validation after two updates, differ only by rounding (and do differ)
    first = {p: losses[p][0][0][1] for p in losses}
    assert first["bf16"] != first["fp16"] or losses["bf16"] != losses["fp16"], losses
    assert abs(first["bf16"] - first["fp16"]) <= 0.02 * first["fp16"], losses
    assert abs(losses["bf16"][1] - losses["fp16"][1]) <= 0.02 * losses["fp16"][1], losses


def close_where_texts_agree(reference, other, tolerance):
    """The scores of the hypotheses both precisions chose alike differ by rounding only."""
    same = [i for i in reference if other[i][1] == reference[i][1]]
    assert len(same) >= 5, (reference, other)
    diffs = [abs(other[i][0] - reference[i][0]) for i in same]
    assert any(d > 0 for d in diffs) and max(diffs) < tolerance, diffs


@pytest.mark.parametrize("arch", [*ARCHS, "aligned"])
def test_decodes_in_bf16_and_fp16(runs, arch):
    logs = {p: succeeded(runs, f"{arch}-generate-{p}") for p in DECODE_PRECISION}
    assert "1 model(s) loaded in torch.bfloat16" in logs["bf16"]
    hypos = {p: hypotheses(log) for p, log in logs.items()}
    for precision, hyps in hypos.items():
        assert sorted(hyps) == list(range(8)), (precision, logs[precision][-3000:])
    close_where_texts_agree(hypos["fp32"], hypos["bf16"], 0.05)
    close_where_texts_agree(hypos["fp32"], hypos["fp16"], 0.01)
    if arch == "aligned":  # the paragraph attention of every step: a distribution, in each
        # precision (printed with 4 decimals; bfloat16 rounds each weight by up to 2^-9)
        for precision, log in logs.items():
            rows = re.findall(r"^A-\d+\t(.*)$", log, flags=re.M)
            assert len(rows) == 8
            sums = [sum(float(w) for w in step.split(",")) for row in rows for step in row.split()]
            worst = max(abs(total - 1) for total in sums)
            assert worst <= (5e-3 if precision == "bf16" else 1e-3), (precision, worst)


def test_predictor_validates_in_bf16_and_fp16(runs):
    mse = {}
    for precision in DECODE_PRECISION:
        log = succeeded(runs, f"predictor-validate-{precision}")
        mse[precision] = float(re.search(r"valid on 'valid' subset \| loss \S+ \| mse ([\d.]+)",
                                         log).group(1))
    assert mse["bf16"] != mse["fp32"] and mse["bf16"] == pytest.approx(mse["fp32"], rel=2e-2)
    assert mse["fp16"] == pytest.approx(mse["fp32"], rel=5e-3)


def test_fp16_flattened_and_not_train_alike_on_the_cpu(runs):
    """Plain ``--fp16`` without a CUDA device (the jobs see none) trains (before the compat fix:
    "Torch not compiled with CUDA enabled" in ``build_fp32_params``); flattened and per-parameter
    master copies give the same updates (the same float32 arithmetic, laid out differently)."""
    flat = succeeded(runs, "pht-train-fp16")
    unflat = succeeded(runs, "pht-train-fp16-unflat")
    assert "build_fp32_params" not in flat
    flat_losses, unflat_losses = train_losses(flat)[0], train_losses(unflat)[0]
    assert [u for u, _ in flat_losses] == [1, 2], flat[-3000:]
    assert flat_losses == unflat_losses
