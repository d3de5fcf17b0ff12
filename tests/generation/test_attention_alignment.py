"""Attention alignment (001 Sec. 4): scores by hand, tracking across beam reordering, the decoding
rules, and the three CLI steps train PHT -> extract labels -> train predictor -> generate."""

import os
import math
import re

import pytest
import torch

from conftest import USER_DIR, run_cli, small_disk, train_args
from fairseq_hier.generation.alignment import (
    AlignmentTracker,
    alignment_score,
    attention_distribution,
    structural_coverage,
)
from fairseq_hier.generation.sequence_generator import PreviousTokenBlocker

CUT = ["--max-paragraphs", "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30"]
GEN = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", *CUT, "--beam", "5",
       "--max-len-b", "12", "--batch-size", "8", "--num-workers", "0", "--gen-subset", "test"]
PREDICTOR = ["--user-dir", USER_DIR, "--task", "attention_prediction", "--arch",
             "attention_predictor", "--criterion", "attention_mse", "--input-dim", "32",
             "--encoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2", "--optimizer",
             "adam", "--lr", "1e-3", "--max-epoch", "4", "--batch-size", "16", "--num-workers", "0",
             "--no-progress-bar", "--seed", "1"]


# ---------------------------------------------------------------------------- scores by hand
def test_alignment_score_by_hand():
    eta = torch.tensor([[0.5, 0.3, 0.2, 0.0]])
    eta_hat = torch.tensor([[0.4, 0.4, 0.2, 0.0]])
    present = torch.tensor([[True, True, True, False]])
    expected = math.log(0.4) + math.log(0.3) + math.log(0.2)  # absent paragraph left out
    assert alignment_score(eta, eta_hat, present, 1e-6).item() == pytest.approx(expected, abs=1e-6)


def test_zero_attention_paragraph_is_floored_by_epsilon():
    eta = torch.tensor([[1.0, 0.0, 0.0]])
    eta_hat = torch.tensor([[0.5, 0.3, 0.2]])
    present = torch.ones(1, 3, dtype=torch.bool)
    score = alignment_score(eta, eta_hat, present, 1e-6).item()
    assert math.isfinite(score)
    assert score == pytest.approx(math.log(0.5) + 2 * math.log(1e-6), rel=1e-6)
    assert alignment_score(eta, eta_hat, present, 1e-3).item() == pytest.approx(
        math.log(0.5) + 2 * math.log(1e-3), rel=1e-6)


def test_normalisation_and_structural_coverage_by_hand():
    dist = attention_distribution(torch.tensor([[2.0, 1.0, 1.0, 0.0]]))
    assert dist.tolist() == [[0.5, 0.25, 0.25, 0.0]]
    alpha, previous = torch.tensor([[0.6, 0.4]]), torch.tensor([[0.5, 0.1]])
    assert structural_coverage(alpha, previous).item() == pytest.approx(1 - (0.5 + 0.1))


def test_tracker_keeps_each_hypothesis_statistics_through_reordering():
    tracker = AlignmentTracker()
    present = torch.ones(2, 3, dtype=torch.bool)
    tracker.start(present, torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]]))
    tracker.reorder(torch.tensor([0, 0, 1, 1]))  # beam expansion: 2 sentences x beam 2
    a1 = torch.tensor([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0.5, 0.5, 0]])
    tracker.update(a1)
    tracker.reorder(torch.tensor([1, 1, 3, 2]))  # beam selection: rows swap and duplicate
    a2 = torch.tensor([[0, 0, 1.0], [0, 1.0, 0], [0.5, 0.5, 0], [0, 0, 1.0]])
    tracker.update(a2)
    assert tracker.attention_sum.tolist() == [[0, 1, 1], [0, 2, 0], [1, 1, 0], [0, 0, 2]]
    # strCov: step 1 = 1 (nothing before); step 2 = 1 - sum min(a2, a1 of the row's parent)
    assert tracker.coverage_sum.tolist() == pytest.approx([2.0, 1.0, 1.0, 1.0])
    assert torch.equal(tracker.target, torch.tensor([[0.6, 0.3, 0.1], [0.6, 0.3, 0.1],
                                                     [0.2, 0.2, 0.6], [0.2, 0.2, 0.6]]))
    bonus = tracker.bonus("attalign", 1e-6, torch.tensor([2]))
    assert bonus.item() == pytest.approx(math.log(0.2) + math.log(0.2) + math.log(1e-6), rel=1e-6)
    assert tracker.bonus("strcov", 1e-6).tolist() == pytest.approx([1.0, 0.5, 0.5, 0.5])


def test_previous_token_blocking_spares_the_exceptions():
    comma, pad = 7, 1
    blocker = PreviousTokenBlocker(None, 2, [comma], pad, count_exceptions=True)
    tokens = torch.tensor([[2, 5, 6, 9], [2, 5, comma, 6]])  # BOS + 3 generated tokens
    out = blocker(tokens, torch.zeros(2, 12), 2, 1, step=3)
    blocked = [sorted(set(torch.nonzero(row.isinf()).view(-1).tolist()) - {pad}) for row in out]
    assert blocked == [[6, 9], [6]]  # the last two; the comma stays allowed (pad: -inf anyway)
    assert not blocker(tokens[:, :1], torch.zeros(2, 12), 2, 1, step=0).isinf().any()


# ---------------------------------------------------------------------------- the CLI pipeline
@pytest.fixture(scope="module")
def pipeline(data_bin, tmp_path_factory):
    """Train PHT and VHT, extract PHT's labels, train the predictor: the recipe's three steps."""
    root = tmp_path_factory.mktemp("align")
    out = {"root": root}
    for arch, updates in (("pht", 30), ("vht", 30), ("transformer", 10)):
        save = root / f"ck_{arch}"
        run_cli("fairseq-train", *train_args(data_bin, arch, save, updates))
        out[arch] = save / "checkpoint_last.pt"
    labels = root / "labels"
    log = run_cli("fairseq-hier-extract-attention", data_bin, "--path", out["pht"], "--output-dir",
                  labels, "--splits", "train", "valid", "test", "--batch-size", "16").stdout
    out["extract_log"], out["labels"] = log, labels
    out["train_log"] = run_cli("fairseq-train", labels, *PREDICTOR, "--save-dir",
                               root / "pred").stdout
    out["predictor"] = root / "pred" / "checkpoint_best.pt"
    return out


def test_labels_on_a_full_disk_leave_no_file(pipeline, data_bin, tmp_path):
    """fairseq's dataset builders fail to write, then to flush when closed: one line naming the
    split's files, and none left."""
    with small_disk(tmp_path / "disk", "8k") as disk:
        proc = run_cli("fairseq-hier-extract-attention", data_bin, "--path", pipeline["pht"],
                       "--output-dir", disk, "--splits", "train", "--batch-size", "16", check=False)
        lines = [line for line in proc.stdout.splitlines() if " | " not in line]
        assert proc.returncode == 1 and "Traceback" not in proc.stdout, proc.stdout[-3000:]
        names = ", ".join(str(disk / f"train.{kind}.{ext}")
                          for kind in ("phi", "eta") for ext in ("bin", "idx"))
        assert lines == [f"fairseq-hier-extract-attention: error: No space left on device "
                         f"({names})"]
        assert os.listdir(disk) == []


def test_extracted_labels_are_the_teacher_forced_attention(pipeline, data_bin):
    from fairseq import checkpoint_utils

    from fairseq_hier.data.attention_prediction_dataset import load_split, read_meta
    from fairseq_hier.preparation.attention_labels import teacher_forced_labels

    meta = read_meta(pipeline["labels"])
    assert meta["splits"] == {"train": 48, "valid": 8, "test": 8} and meta["embed_dim"] == 32
    phi, eta, c = load_split(pipeline["labels"], "test")
    models, _, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(pipeline["pht"])], arg_overrides={"data": str(data_bin)})
    task.load_dataset("test")
    dataset, model = task.datasets["test"], models[0].eval()
    batch = dataset.collater([dataset[i] for i in range(len(dataset))])
    with torch.no_grad():
        want_phi, want_eta, present = teacher_forced_labels(model, batch["net_input"],
                                                            batch["target"], 1)
    for i in range(len(dataset)):
        n = int(dataset.num_paragraphs[i])
        assert eta[i].shape == (n,) and present[i].sum() == n
        assert eta[i].sum().item() == pytest.approx(1.0, abs=1e-6)
        assert torch.allclose(eta[i], want_eta[i, :n].float(), atol=1e-6)
        assert torch.allclose(phi[i].view(n, c), want_phi[i, :n], atol=2e-2, rtol=1e-3)  # float16
    # the label is the step-average of the per-step paragraph attention of the gold summary
    _, extra = model.decoder(batch["net_input"]["prev_output_tokens"],
                             encoder_out=model.encoder(batch["net_input"]["src_tokens"]))
    steps = int(batch["target"][0].ne(1).sum())
    by_hand = extra["attn"][0][0, :steps].mean(0)[: int(dataset.num_paragraphs[0])]
    assert torch.allclose(eta[0], by_hand, atol=1e-6)


def test_predictor_learns_the_labels(pipeline):
    mse = [float(m) for m in re.findall(r"valid on 'valid' subset \| loss \S+ \| mse (\S+)",
                                        pipeline["train_log"])]
    assert len(mse) == 4 and mse[-1] < mse[0]


def _hypotheses(stdout):
    return {int(m.group(1)): (float(m.group(2)), m.group(3))
            for m in re.finditer(r"^H-(\d+)\t(\S+)\t(.*)$", stdout, re.M)}


def _token_lines(stdout, tag):
    return {int(m.group(1)): m.group(2) for m in re.finditer(rf"^{tag}-(\d+)\t(.*)$", stdout, re.M)}


@pytest.mark.parametrize("arch", ["pht", "vht"])
def test_beta_zero_is_vanilla_beam_search_token_for_token(pipeline, data_bin, arch):
    ck = pipeline[arch]
    vanilla = run_cli("fairseq-generate", data_bin, "--path", ck, *GEN).stdout
    for extra in ([], ["--align-live-beams"]):
        aligned = run_cli("fairseq-generate", data_bin, "--path", ck, *GEN, "--attention-alignment",
                          "--align-beta", "0", "--align-predictor", pipeline["predictor"],
                          *extra).stdout
        assert len(_hypotheses(aligned)) == 8
        assert _hypotheses(aligned) == _hypotheses(vanilla)  # tokens and scores
        assert _token_lines(aligned, "P") == _token_lines(vanilla, "P")


def _in_process_generation(pipeline, data_bin, arch, generation=None, **task_options):
    """Generate the test split in-process; returns (hypotheses, sample, task, models, generator)."""
    from fairseq import checkpoint_utils
    from fairseq.dataclass.configs import GenerationConfig

    from fairseq_hier.tasks.hierarchical_summarization import (
        HierarchicalSummarizationConfig,
        HierarchicalSummarizationTask,
    )

    cfg = HierarchicalSummarizationConfig(data=str(data_bin), max_paragraphs=4,
                                          max_paragraph_tokens=6, seed=1, **task_options)
    task = HierarchicalSummarizationTask.setup_task(cfg)
    task.load_dataset("test")
    models, _ = checkpoint_utils.load_model_ensemble([str(pipeline[arch])], task=task)
    generator = task.build_generator(models, GenerationConfig(beam=5, max_len_b=12,
                                                              **(generation or {})))
    dataset = task.datasets["test"]
    sample = dataset.collater([dataset[i] for i in range(len(dataset))])
    return task.inference_step(generator, models, sample), sample, task, models, generator


@pytest.mark.parametrize("arch,live", [("pht", False), ("vht", False), ("pht", True)])
def test_finished_scores_are_eq17_of_each_hypothesis_own_attention(pipeline, data_bin, arch, live):
    beta, eps = 0.8, 1e-6
    hypos, sample, _, models, generator = _in_process_generation(
        pipeline, data_bin, arch, attention_alignment=True, align_beta=beta,
        align_predictor=str(pipeline["predictor"]), align_live_beams=live)
    model = models[0]
    with torch.no_grad():
        encoder_out = model.encoder(sample["net_input"]["src_tokens"])
        eta_hat = generator.predictor(model.encoder.paragraph_embeddings(encoder_out),
                                      encoder_out["paragraph_padding_mask"][0])
    present = ~encoder_out["paragraph_padding_mask"][0]
    checked = 0
    for row, sentence in enumerate(hypos):
        assert len(sentence) == 5
        for hypo in sentence:  # every finished hypothesis, not only the best
            attention = hypo["attention"]  # P x |y|, fairseq's own per-hypothesis record
            assert attention.size(1) == len(hypo["tokens"])
            eta_y = attention.sum(1) / attention.sum()
            floor = torch.minimum(eta_y, eta_hat[row]).clamp(min=eps).log()[present[row]]
            want = hypo["positional_scores"].sum() / len(hypo["tokens"]) + beta * floor.sum()
            assert hypo["score"].item() == pytest.approx(want.item(), abs=1e-4)
            checked += 1
        scores = [h["score"].item() for h in sentence]
        assert scores == sorted(scores, reverse=True)  # fairseq's final sort used Eq. 17
    assert checked == 40


def _write_ranker_scores(task, path):
    """Scores favouring the last kept paragraph, then decreasing from the first."""
    counts = task.datasets["test"].num_paragraphs
    path.write_text("".join(" ".join([f"{0.1 / (j + 1):.4f}" for j in range(int(n) - 1)] + ["0.9"])
                            + "\n" for n in counts))
    return path


@pytest.mark.parametrize("strategy,match", [("strcov", False), ("extprob", False),
                                            ("strcov", True)])
def test_finished_scores_of_strcov_and_extprob_by_hand(pipeline, data_bin, tmp_path, strategy,
                                                       match):
    """Every finished hypothesis: score = log P / |y| + beta * bonus, the bonus recomputed from
    fairseq's own per-hypothesis attention record: strCov (1/|y|) sum_t (1 - sum_p
    min(alpha_t, sum_{t'<t} alpha_t')), extProb Eq. 18 against the normalised ranker scores.
    With --match-source-len fairseq stores scores from a new tensor (torch.where), so only an
    explicit write of each finished hypothesis' score gets Eq. 17 right."""
    beta, eps = 0.8, 1e-6
    options = dict(attention_alignment=True, align_beta=beta, align_strategy=strategy)
    if strategy == "extprob":
        _, _, task, _, _ = _in_process_generation(pipeline, data_bin, "pht")
        options["align_ranker_scores"] = str(_write_ranker_scores(task, tmp_path / "t.scores"))
    hypos, sample, task, _, _ = _in_process_generation(
        pipeline, data_bin, "pht", generation={"match_source_len": match}, **options)
    present = sample["net_input"]["src_tokens"].ne(task.target_dictionary.pad()).any(-1)
    differs = 0
    for row, sentence in enumerate(hypos):
        for hypo in sentence:
            alpha = hypo["attention"].t().double()  # |y| x P
            if strategy == "strcov":
                before = torch.cumsum(alpha, 0) - alpha  # sum over t' < t
                bonus = (1 - torch.minimum(alpha, before).sum(-1)).mean()
            else:
                ranks = torch.tensor([float(f"{0.1 / (j + 1):.4f}")  # as written to the file
                                      for j in range(int(present[row].sum()) - 1)] + [0.9],
                                     dtype=torch.float64)
                target = ranks / ranks.sum()
                eta = alpha.sum(0) / alpha.sum()
                bonus = torch.minimum(eta[present[row]], target).clamp(min=eps).log().sum()
            log_p = hypo["positional_scores"].double().sum() / len(hypo["tokens"])
            if hypo["score"].item() == float("-inf"):  # --match-source-len: longer than source
                assert match
                continue
            assert hypo["score"].item() == pytest.approx((log_p + beta * bonus).item(), abs=1e-4)
            differs += abs(beta * bonus.item()) > 1e-3
        scores = [h["score"].item() for h in sentence]
        assert scores == sorted(scores, reverse=True)
    assert differs >= 20  # the bonus really changed the scores


def test_max_len_a_counts_source_tokens_for_hierarchical_sources(pipeline, data_bin):
    """--max-len-a multiplies the source tokens (longest example of the batch), not the number
    of paragraphs; --match-source-len reads the kept source tokens of each example."""
    from fairseq.dataclass.configs import GenerationConfig

    _, sample, task, models, _ = _in_process_generation(pipeline, data_bin, "pht")
    tokens = sample["net_input"]["src_lengths"]
    assert int(tokens.max()) > 2 * sample["net_input"]["src_tokens"].size(1)  # tokens >> P
    max_len = int(0.25 * int(tokens.max()) + 1)
    generator = task.build_generator(models, GenerationConfig(
        beam=2, max_len_a=0.25, max_len_b=1, min_len=max_len))  # fairseq's a*P+b < min_len
    hypos = task.inference_step(generator, models, sample)
    assert {len(h["tokens"]) for s in hypos for h in s} == {max_len + 1}  # + EOS
    assert (generator.max_len_a, generator.max_len_b) == (0.25, 1)  # restored after the batch
    matched = task.inference_step(task.build_generator(models, GenerationConfig(
        beam=2, match_source_len=True)), models, sample)
    for row, sentence in enumerate(matched):  # fairseq: longer than the source -> -inf
        for h in sentence:
            assert len(h["tokens"]) <= int(tokens.max()) + 1
            if len(h["tokens"]) > int(tokens[row]) + 1:
                assert h["score"].item() == float("-inf")


def test_aligned_generation_through_the_cli(pipeline, data_bin):
    common = [data_bin, "--path", pipeline["pht"], *GEN, "--attention-alignment",
              "--align-predictor", pipeline["predictor"]]
    out = run_cli("fairseq-generate", *common, "--align-beta", "0.8", "--print-alignment", "soft",
                  "--block-previous-tokens", "2", "--block-previous-exceptions", "w3",
                  "--nbest", "2").stdout
    assert len(re.findall(r"^H-\d+\t", out, re.M)) == 16  # --nbest still works
    hyps = _hypotheses(out)  # the second best of each example (later lines win)
    assert sorted(hyps) == list(range(8))
    alignments = _token_lines(out, "A")
    for i, (_, text) in hyps.items():
        columns = alignments[i].split()
        assert len(columns) == len(text.split()) + 1  # one distribution per token and EOS
        for column in columns:
            assert sum(map(float, column.split(","))) == pytest.approx(1.0, abs=2e-3)
        toks = text.split()
        for t in range(2, len(toks)):
            assert toks[t] == "w3" or toks[t] not in toks[t - 2:t], text
    # an unknown option value and a missing predictor are reported with the flag
    bad = run_cli("fairseq-generate", data_bin, "--path", pipeline["pht"], *GEN,
                  "--attention-alignment", check=False)
    assert bad.returncode != 0 and "--align-predictor PATH is required" in bad.stdout


def test_extprob_strcov_and_top_s_compression(pipeline, data_bin, tmp_path):
    from fairseq_hier.generation.ranker_scores import RankerScores

    # ranker scores: the last kept paragraph first, then the first one, then decreasing
    _, sample, task, _, _ = _in_process_generation(pipeline, data_bin, "pht")
    counts = task.datasets["test"].num_paragraphs
    scores = _write_ranker_scores(task, tmp_path / "test.scores")
    hypos, _, _, _, generator = _in_process_generation(
        pipeline, data_bin, "pht", attention_alignment=True, align_strategy="extprob",
        align_ranker_scores=str(scores), align_keep_paragraphs=2)
    assert all(len(s) == 5 for s in hypos)
    # top-2 by ranker score, kept in source order: the first and the last paragraph
    src = sample["net_input"]["src_tokens"]
    present = src.ne(1).any(-1)
    generator._batch_target = RankerScores(str(scores)).batch(sample["id"], present)
    kept = generator._keep_top_paragraphs(sample, present)["net_input"]["src_tokens"]
    for row, n in enumerate(counts.tolist()):
        want = src[row, [0, n - 1]] if n > 2 else src[row, :2]
        assert torch.equal(kept[row], want)
    for h in hypos[0]:
        assert h["attention"].size(0) == 2  # decoded over the 2 kept paragraphs only

    strcov = run_cli("fairseq-generate", data_bin, "--path", pipeline["pht"], *GEN,
                     "--attention-alignment", "--align-strategy", "strcov").stdout
    vanilla = run_cli("fairseq-generate", data_bin, "--path", pipeline["pht"], *GEN).stdout
    assert sorted(_hypotheses(strcov)) == list(range(8))
    # the CLI path applies the bonus: same hypotheses may win, but the reported scores move
    assert any(_hypotheses(strcov)[i][0] != _hypotheses(vanilla)[i][0] for i in range(8))

    short = tmp_path / "short.scores"
    short.write_text("0.5\n" * len(counts))
    bad = run_cli("fairseq-generate", data_bin, "--path", pipeline["pht"], *GEN,
                  "--attention-alignment", "--align-strategy", "extprob", "--align-ranker-scores",
                  short, check=False)
    assert bad.returncode != 0 and f"{short}:1: 1 ranker scores for" in bad.stdout


def _no_repeat_within(text, n, allowed):
    toks = text.split()
    return all(toks[t] in allowed or toks[t] not in toks[max(0, t - n):t] for t in range(len(toks)))


@pytest.mark.parametrize("arch", ["pht", "transformer"])
def test_previous_token_blocking_through_the_cli(pipeline, data_bin, arch):
    """The papers' rule works for every model of the task, flat baselines included."""
    args = [data_bin, "--path", pipeline[arch], *GEN, "--max-len-b", "20"]
    vanilla = _hypotheses(run_cli("fairseq-generate", *args).stdout)
    blocked = _hypotheses(run_cli("fairseq-generate", *args, "--block-previous-tokens", "2",
                                  "--block-previous-exceptions", ".").stdout)
    assert sorted(blocked) == list(range(8))
    assert all(_no_repeat_within(text, 2, {"."}) for _, text in blocked.values())
    blocked_all = _hypotheses(run_cli("fairseq-generate", *args, "--block-previous-tokens", "2",
                                      "--block-previous-exceptions", "").stdout)
    assert all(_no_repeat_within(text, 2, set()) for _, text in blocked_all.values())
    # the undertrained models repeat '.', so the rule changes their output
    assert any(not _no_repeat_within(text, 2, set()) for _, text in vanilla.values())
