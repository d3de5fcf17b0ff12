"""``fairseq-hier settings``: each architecture's paper settings scaled to the data and GPUs
(fairseq_hier/recipes/settings.py), against the rules written out literally here."""

import math
import subprocess

import pytest

from conftest import BIN
from fairseq_hier.errors import HierError
from fairseq_hier.recipes.settings import (MIN_UPDATES, PAPERS, generation_settings, merge,
                                           scale, split_options, train_settings)


def option(args, name):
    """The value(s) following ``name`` in an argument list (the last occurrence)."""
    i = len(args) - 1 - args[::-1].index(name)
    return args[i + 1]


def oracle(arch, examples, gpus):
    """The rules of the module docstring, literally: (updates, warm-up, per-GPU batch, freq)."""
    p = PAPERS[arch]
    updates = max(min(MIN_UPDATES, p.updates), math.ceil(p.updates * examples / p.train_examples))
    updates = min(updates, p.updates)
    warmup = max(1, round(p.warmup * updates / p.updates))
    total = p.batch * p.gpus * p.update_freq  # per update, on the paper's GPUs
    # one example at the cut: flat 500 pieces, paragraphs P x L tokens (BART: 1 example)
    smallest = {"pht": 1, "vht": 1, "liu_ht": 10_500, "transformer": 500, "transformer_copy": 500,
                "parsingsum_ft": 500, "parsingsum_ht": 1600}.get(arch, 1)
    batch = p.batch if gpus <= p.gpus * p.update_freq else max(smallest, math.ceil(total / gpus))
    freq = max(1, math.ceil(total / (batch * gpus)))
    return updates, warmup, batch, freq


@pytest.mark.parametrize("arch", sorted(PAPERS))
@pytest.mark.parametrize("examples,gpus", [(50_000, 1), (50_000, 8), (40, 1), (5_000_000, 3),
                                           (1000, 64)])
def test_updates_and_batch_follow_the_rules(arch, examples, gpus):
    args, notes = train_settings(arch, examples, gpus)
    updates, warmup, batch, freq = oracle(arch, examples, gpus)
    p = PAPERS[arch]
    assert int(option(args, "--max-update")) == updates
    assert int(option(args, "--warmup-updates")) == warmup
    assert int(option(args, p.batch_option)) == batch
    assert int(option(args, "--update-freq")) == freq
    assert option(args, "--arch") == arch and option(args, "--task") == p.task
    # the effective batch is the paper's whenever the per-GPU batch x GPUs divides it
    if (p.batch * p.gpus * p.update_freq) % (batch * gpus) == 0:
        assert batch * gpus * freq == p.batch * p.gpus * p.update_freq
    assert any(n.startswith("effective batch:") for n in notes)
    if p.polynomial:
        assert int(option(args, "--total-num-update")) == updates


def test_pht_on_fifty_thousand_examples_and_eight_gpus():
    args, notes = train_settings("pht", 50_000, 8)
    # 600,000 x 50,000 / 1,579,360 = 18,995.03 -> 18,996; 16 examples per update as 2 x 8 GPUs
    assert option(args, "--max-update") == "18996"
    assert option(args, "--batch-size") == "2" and option(args, "--update-freq") == "1"
    assert option(args, "--max-paragraphs") == "30"
    assert notes[2] == ("effective batch: 2 examples x 8 GPU(s) x update-freq 1 = 16 examples per "
                        "update (the paper: 16 x 1 GPU(s) x 1 = 16)")


def test_a_gpu_holds_one_example_at_least_and_the_log_says_the_batch_grew():
    args, notes = train_settings("transformer", 44_972, 16)
    # 4,096 tokens x 1 GPU: 16 GPUs would get 256 tokens each, below one 500-piece source
    assert option(args, "--max-tokens") == "500" and option(args, "--update-freq") == "1"
    assert notes[2] == (
        "effective batch: 500 tokens x 16 GPU(s) x update-freq 1 = 8,000 tokens per update "
        "(the paper: 4,096 x 1 GPU(s) x 1 = 4,096); more than the paper's: a GPU needs at least "
        "500 tokens (one example at the cut), so use fewer GPUs to train with the paper's batch")
    _, notes = train_settings("pht", 50_000, 3)
    assert notes[2].endswith("= 18 examples per update (the paper: 16 x 1 GPU(s) x 1 = 16); the "
                             "nearest to the paper's that 3 GPUs allow")


def test_yours_replace_the_settings_and_a_new_batch_keeps_the_effective_batch():
    args, notes = train_settings("hat_bart_base", 203_037, 1,
                                 ["--lr", "1e-4", "--batch-size", "8", "--fp16"])
    assert option(args, "--lr") == "1e-4" and args.count("--lr") == 1
    assert option(args, "--batch-size") == "8"
    assert option(args, "--update-freq") == "16"  # 8 x 1 x 16 = the paper's 128
    assert "--fp16" in args
    assert "overridden: --lr 1e-4 (yours; the setting was --lr 3e-5)" in notes
    assert "overridden: --fp16 (yours)" in notes
    args, _ = train_settings("hat_bart_base", 203_037, 1, ["--update-freq=3"])
    assert option(args, "--update-freq") == "3" and option(args, "--max-update") == "30000"


def test_split_and_merge():
    assert split_options(["--lr", "1e-3", "--fp16", "--x=1", "--betas", "(0.9,", "0.98)"]) == [
        ("--lr", ["1e-3"]), ("--fp16", []), ("--x", ["1"]), ("--betas", ["(0.9,", "0.98)"])]
    merged, notes = merge(["--a", "1", "--b"], ["--a", "2", "--c", "x"])
    assert merged == ["--a", "2", "--b", "--c", "x"]
    with pytest.raises(HierError, match="'1e-3': a fairseq option"):
        split_options(["1e-3"])


def test_decoding_lengths_from_the_training_targets():
    lengths = list(range(1, 201))  # 1..200 tokens
    args, notes = generation_settings("parsingsum_ft", lengths)
    # nearest-rank percentiles: 99th = the 198th value, 5th = the 10th value
    assert option(args, "--max-len-b") == "198" and option(args, "--min-len") == "10"
    assert option(args, "--beam") == "5"
    args, _ = generation_settings("pht", lengths)
    assert "--min-len" not in args and option(args, "--max-len-b") == "198"
    assert option(args, "--block-previous-tokens") == "2"
    args, notes = generation_settings("pht")
    assert option(args, "--max-len-b") == "200" and "the paper's" in notes[1]


def test_bad_counts_are_refused():
    with pytest.raises(HierError, match="--gpus 0"):
        scale(PAPERS["pht"], 10, 0)


def test_command_prints_one_argument_per_line_and_the_reasons_on_stderr():
    proc = subprocess.run([str(BIN / "fairseq-hier-settings"), "vht", "--stage", "train",
                           "--examples", "1579360", "--gpus", "1", "--", "--lr", "5e-4"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == ["--task", "hierarchical_summarization", "--arch", "vht"]
    assert "(0.9, 0.98)" in lines and option(lines, "--max-update") == "600000"
    assert "fairseq-hier-settings: overridden: --lr 5e-4 (yours; the setting was --lr 4.94e-4)" \
        in proc.stderr
    facts = subprocess.run([str(BIN / "fairseq-hier-settings"), "hat_bart_large", "--stage",
                            "facts"], capture_output=True, text=True).stdout
    assert "SUBWORD=gpt2\n" in facts and "PRETRAINED=bart.large\n" in facts
    bad = subprocess.run([str(BIN / "fairseq-hier-settings"), "pht", "--stage", "train"],
                         capture_output=True, text=True)
    assert (bad.returncode, bad.stderr) == (
        1, "fairseq-hier-settings: error: --stage train needs --examples (the training "
           "examples)\n")


def test_batch_stage_keeps_a_recipes_own_paper_batch():
    """--stage batch, as the paper recipes call it (examples/hat_common/train.sh: 004's 4 x 16 x
    2 GPUs; examples/mds_common/train.sh: 003's 4,096 tokens on one GPU)."""
    def batch(*args):
        proc = subprocess.run([str(BIN / "fairseq-hier-settings"), "--stage", "batch", *args],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines(), proc.stderr

    out, err = batch("--batch-size", "4", "--paper-gpus", "2", "--paper-update-freq", "16",
                     "--gpus", "8")
    assert out == ["--batch-size", "4", "--update-freq", "4"]
    assert "= 128 examples per update (the paper: 4 x 2 GPU(s) x 16 = 128)" in err
    out, err = batch("--batch-size", "4", "--paper-gpus", "2", "--paper-update-freq", "16",
                     "--gpus", "64")
    assert out == ["--batch-size", "2", "--update-freq", "1"]
    out, err = batch("--max-tokens", "4096", "--smallest", "1600", "--gpus", "2")
    assert out == ["--max-tokens", "2048", "--update-freq", "1"]
    out, err = batch("--max-tokens", "4096", "--smallest", "1600", "--gpus", "4")
    assert out == ["--max-tokens", "1600", "--update-freq", "1"]
    assert "more than the paper's: a GPU needs at least 1,600 tokens" in err
    out, err = batch("--batch-size", "4", "--paper-update-freq", "16", "--update-freq", "3",
                     "--gpus", "2")  # yours, kept: the log gives the batch it makes
    assert out == ["--batch-size", "4", "--update-freq", "3"]
    assert "= 24 examples per update (the paper: 4 x 1 GPU(s) x 16 = 64)" in err
