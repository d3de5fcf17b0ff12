"""``fairseq-hier settings``: each architecture's paper settings scaled to the data and GPUs
(fairseq_hier/recipes/settings.py), against the rules written out literally here; the one table
of architectures (fairseq_hier/recipes/architectures.py) against the papers' numbers written out
literally here (the outside check; tests/recipes/test_recipe_deviations.py holds the READMEs to
the table), against the models' own traits, and as the only home of the recipes' numbers."""

import math
import re
import subprocess
from pathlib import Path

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
    """--stage batch, as the paper recipes call it (examples/hat_common/recipe.sh: 004's 4 x 16 x
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


# ------------------------------------------------------------------- the table of architectures
def settings_command(*args):
    proc = subprocess.run([str(BIN / "fairseq-hier-settings"), *args], capture_output=True,
                          text=True)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


# The papers' numbers, literally (the one outside check of the table): arch or (arch, data set)
# -> (lr, warm-up, updates, effective batch, beam, min length, max length)
PAPER_NUMBERS = {
    "pht": ("4.94e-4", 16_000, 600_000, 16, "5", None, 200),  # 000 Sec. 4.2, 001 Sec. 5.2
    "vht": ("4.94e-4", 16_000, 600_000, 16, "5", None, 200),
    "liu_ht": ("1.3975e-3", 8000, 500_000, 168_000, "5", 20, 400),  # 002 Sec. 4, hiersumm
    "transformer_copy": ("1e-3", 8000, 20_000, 4096, "5", 200, 300),  # 003 Sec. 3.2, fn. 3
    "parsingsum_ft": ("1e-3", 8000, 20_000, 4096, "5", 200, 300),
    "parsingsum_ht": ("1e-3", 8000, 100_000, 13_000, "5", 200, 300),  # 003 fn. 2
    "hat_bart_large": ("3e-5", 900, 30_000, 128, "2", 72, 966),  # 004 Sec. 4.1, arXiv
    ("hat_bart_large", "cnndm"): ("3e-5", 500, 20_000, 64, "1", 40, 120),  # 004, CNN/DM
    "hat_transformer_wmt_en_de": ("1e-4", 1250, 50_000, 1024 * 8 * 16, "4", None, 1023),  # 004 4.2
    ("hat_transformer_wmt_en_de", "wmt20_en_cs"): ("5e-4", 500, 15_000, 1024 * 8 * 16, "4", None,
                                                   1023),
    "hat_transformer_iwslt_zh_en": ("1e-3", 100, 8000, 8192 * 2, "4", None, 1023),
}


@pytest.mark.parametrize("key", list(PAPER_NUMBERS), ids=str)
def test_the_table_holds_the_papers_numbers(key):
    from fairseq_hier.recipes.architectures import variant

    row = variant(*key) if isinstance(key, tuple) else variant(key)
    lr, warmup, updates, batch, beam, min_len, max_len = PAPER_NUMBERS[key]
    train = row.paper_train()
    assert (option(train, "--lr"), int(option(train, "--warmup-updates")),
            int(option(train, "--max-update"))) == (lr, warmup, updates)
    assert row.batch * row.gpus * row.update_freq == batch
    assert (option(list(row.generation), "--beam"), row.min_len, row.max_len) == (
        beam, min_len, max_len)


def test_the_traits_are_the_models():
    """The table's kind of source against the models' own ``hierarchical_source``; every
    architecture fairseq-hier registers is in the table (tests/support/tiny_models.py builds
    each from its tiny dims)."""
    from fairseq.models import ARCH_MODEL_REGISTRY

    import fairseq_hier
    from fairseq_hier.recipes.architectures import (ARCHITECTURES, HIERARCHICAL, archs_with,
                                                    tiny_dims)

    fairseq_hier.register()
    for arch in archs_with(ours=True):
        model = ARCH_MODEL_REGISTRY[arch]
        if ARCHITECTURES[arch].task in ("attention_prediction", "paragraph_ranking"):
            continue  # not summarisers: they read paragraph embeddings, titles and paragraphs
        assert getattr(model, "hierarchical_source", False) == (
            ARCHITECTURES[arch].layout == HIERARCHICAL), arch
        assert tiny_dims(arch), arch
    assert archs_with(parse=True) == ("parsingsum_ft", "parsingsum_ht")


def test_the_paper_stages_print_the_tables_options():
    rc, out, _ = settings_command("liu_ht", "--stage", "paper-train")
    assert rc == 0 and out == [
        "--optimizer", "adam", "--adam-betas", "(0.9, 0.998)", "--adam-eps", "1e-09",
        "--lr-scheduler", "inverse_sqrt", "--lr", "1.3975e-3", "--warmup-init-lr", "0",
        "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1",
        "--warmup-updates", "8000", "--max-update", "500000"]
    # a data set's variant, yours replacing the setting in its place
    rc, out, _ = settings_command("hat_bart_large", "--stage", "paper-decode", "--dataset",
                                  "cnndm", "--", "--beam", "3")
    assert out == ["--beam", "3", "--lenpen", "1.0", "--min-len", "40", "--max-len-a", "0",
                   "--max-len-b", "120"]
    rc, out, _ = settings_command("hat_transformer_iwslt_zh_en", "--stage", "paper-batch",
                                  "--dataset", "ted_zh_en", "--paper-gpus", "2")
    assert out == ["--max-tokens", "8192", "--paper-gpus", "2", "--paper-update-freq", "2"]
    rc, out, err = settings_command("liu_ht", "--stage", "batch", "--gpus", "2")
    assert out == ["--max-tokens", "10500", "--update-freq", "8"]
    assert "(the paper: 10,500 x 1 GPU(s) x 16 = 168,000)" in err
    rc, _, err = settings_command("pht", "--stage", "paper-decode", "--dataset", "cnndm")
    assert (rc, err) == (1, "fairseq-hier-settings: error: --dataset cnndm: no settings of pht "
                            "for it (expected alignment_demo, demo)\n")
    # document MT has paper settings, but own data does not scale them
    rc, _, err = settings_command("hat_transformer_wmt_en_de", "--stage", "facts")
    assert rc == 2 and "invalid choice: 'hat_transformer_wmt_en_de' (choose from 'pht', " in err


@pytest.mark.parametrize("argv,message", [
    (("pht", "--stage", "paper-train", "--", "--lr"), "argument --lr: expected one argument"),
    (("pht", "--stage", "paper-train", "--", "--lrr", "1"), "unknown option(s) --lrr 1 "),
    (("liu_ht", "--stage", "paper-decode", "--", "--beam", "x"),
     "argument --beam: invalid int value: 'x'"),
    (("hat_transformer_wmt_en_de", "--stage", "paper-train", "--", "--max-update", "x"),
     "argument --max-update: invalid int value: 'x'"),
])
def test_the_paper_stages_check_your_options_as_fairseq_will(argv, message):
    """Yours after ``--`` are parsed by fairseq's own parser of the row's task and model before
    the options are printed: a missing value, an unknown option or a malformed value is one
    line, not a malformed command line for the recipe."""
    rc, out, err = settings_command(*argv)
    assert (rc, out) == (1, []) and err.startswith(
        f"fairseq-hier-settings: error: fairseq options after --: {message}") \
        and err.count("\n") == 1


# what examples/ scripts may not write with a literal value: the table holds it
NUMBER_FLAGS = ("--lr", "--warmup-updates", "--warmup-init-lr", "--max-len-a", "--max-len-b",
                "--min-len", "--lenpen", "--beam", "--lr-deacy-period", "--label-smoothing",
                "--total-num-update", "--end-learning-rate")
NUMBER_VARIABLES = ("LR", "WARMUP", "BEAM", "LENPEN", "MIN_LEN", "MAX_LEN", "MAX_LEN_A",
                    "MAX_LEN_B", "SMOOTHING", "DECAY_PERIOD")


def literal_settings(path: Path):
    """(line, text) of each learning rate, warm-up or decoding length written with a value in
    a script: a flag of :data:`NUMBER_FLAGS` followed by a value that is not a plain variable
    (``"$LR"``), or a default of :data:`NUMBER_VARIABLES` (``${LR:-1e-4}``, ``LR=1e-4``)."""
    found = []
    flag = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, NUMBER_FLAGS)) + r")(?:=|\s+)(\S+)")
    variable = re.compile(r"(?<![\w$])(" + "|".join(NUMBER_VARIABLES)
                          + r")(?:=|:-|:=)['\"]?[\d.]")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0] if path.suffix == ".sh" else line
        if path.suffix == ".py" and code.lstrip().startswith(("#", '"', "'")):
            continue
        for name, value in flag.findall(code):
            if re.search(r"\d", value.replace("$", "").split("}")[0]) and not re.fullmatch(
                    r"[\"']?\$\{?[A-Z_]+\}?[\"']?\)?", value):
                found.append((n, line.strip()))
        if variable.search(code):
            found.append((n, line.strip()))
    return sorted(set(found))


def test_no_recipe_script_writes_a_learning_rate_warmup_or_decoding_length():
    """The papers' (and the demos') learning rates, warm-ups and decoding lengths live in the
    table of architectures; examples/ scripts read them with ``fairseq-hier settings ARCH --stage
    paper-train|paper-decode|paper-batch`` and pass on only what a user sets (``${LR:+--lr
    "$LR"}``)."""
    root = Path(__file__).resolve().parents[2] / "examples"
    found = {str(p.relative_to(root)): literal_settings(p)
             for p in sorted([*root.rglob("*.sh"), *root.rglob("*.py")])}
    assert {k: v for k, v in found.items() if v} == {}


def test_a_written_setting_is_caught(tmp_path):
    script = tmp_path / "x.sh"
    script.write_text('fairseq-train --lr 1e-3 --beam "$BEAM" ${MAX_LEN:+--max-len-b "$MAX_LEN"}\n'
                      ': "${WARMUP:=100}"  # --warmup-updates 3 in a comment is fine\n'
                      'X=(--min-len "${MIN_LEN:-5}")\n')
    assert [n for n, _ in literal_settings(script)] == [1, 2, 3]
