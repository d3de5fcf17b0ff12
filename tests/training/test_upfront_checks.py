"""What fairseq's own commands refuse, with our tasks, before the first update or decoded batch.

Through ``fairseq-train`` / ``-generate`` / ``-interactive`` / ``-preprocess`` on the session's
tiny data (run as forks of one warm process, ``cli_forkserver.py``; two runs go through the
console scripts themselves, for their real exit status):

- numeric task, model and criterion options out of range (``--max-paragraphs 0``,
  ``--beam -3`` ...): exit 1, the one line ``fairseq-train: error: --max-paragraphs must be >= 1,
  got 0``, no traceback, no checkpoint written;
- ``--max-target-positions`` below every example of a split: one line naming the split, the
  option and the longest example;
- a dictionary line without a count or with a count that is not an integer: one line naming the
  file and line; a dictionary with a UTF-8 byte-order mark is read without it;
- a garbage GPT-2 ``encoder.json`` (``--bpe gpt2``): one line naming the file;
- ``fairseq-interactive`` numbers bad lines over the whole input, whatever ``--buffer-size``, and
  counts the tokens that became ``<unk>`` in its log.
"""

import random
import re
import shutil
from pathlib import Path

import pytest
from conftest import SMALL_MODEL, USER_DIR, run_cli, tiny_bart_flags, train_args

PHT = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--max-paragraphs", "4",
       "--max-paragraph-tokens", "6", "--max-source-positions", "30"]
HAT = ["--user-dir", USER_DIR, "--task", "hat_summarization", "--source-lang", "source",
       "--target-lang", "target", "--max-source-positions", "32"]
TINY_TRANSFORMER = ["--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1",
                    "--encoder-embed-dim", "16", "--decoder-embed-dim", "16",
                    "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim", "32",
                    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
                    "--share-all-embeddings", "--optimizer", "adam", "--lr", "1e-3",
                    "--batch-size", "4", "--num-workers", "0", "--no-progress-bar"]
DECODE = ["--beam", "2", "--max-len-b", "5", "--batch-size", "2", "--cpu"]


def error_lines(log: str):
    return [line for line in log.splitlines() if ": error: " in line]


def checkpoints(folder: Path):
    return sorted(p.name for p in folder.glob("*.pt")) if folder.exists() else []


def write_hat_corpus(raw: Path, bart: Path):
    """HAT's raw layout without the prepare command: BART dictionary symbols, ``<s>`` before
    every sentence, and the ``.sentences`` counts."""
    rng = random.Random(0)
    symbols = [line.split()[0] for line in (bart / "dict.txt").read_text().splitlines()][:80]
    raw.mkdir(parents=True)
    for split, n in (("train", 8), ("valid", 2)):
        sources, targets, counts = [], [], []
        for _ in range(n):
            k = rng.randint(1, 3)
            sources.append(" ".join("<s> " + " ".join(rng.choices(symbols, k=rng.randint(2, 5)))
                                    for _ in range(k)))
            targets.append(" ".join(rng.choices(symbols, k=rng.randint(2, 5))))
            counts.append(str(k))
        for suffix, lines in (("source", sources), ("target", targets), ("sentences", counts)):
            (raw / f"{split}.{suffix}").write_text("\n".join(lines) + "\n")


def damaged_dictionary(data_bin: Path, folder: Path, lineno: int, text: str) -> Path:
    """A copy of ``data_bin`` whose ``dict.src.txt`` has line ``lineno`` replaced by ``text``."""
    shutil.copytree(data_bin, folder)
    path = folder / "dict.src.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[lineno - 1] = text.format(symbol=lines[lineno - 1].split()[0])
    path.write_text("\n".join(lines), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def runs(data_bin, raw_corpus, tiny_bart_dir, tmp_path_factory):
    """Every command of this module, as jobs of one forkserver: {job id: (rc, log, save dir)}."""
    from cli_forkserver import run_jobs

    root = tmp_path_factory.mktemp("upfront")
    bart = tiny_bart_dir
    jobs, save_dirs = [], {}

    def job(name, script, args, needs=()):
        jobs.append({"id": name, "script": script, "args": [str(a) for a in args],
                     "log": str(root / f"{name}.log"), "needs": list(needs)})

    def train(name, data, args, needs=()):
        save_dirs[name] = root / f"{name}.ckpt"
        job(name, "fairseq-train", [data, *args, "--save-dir", save_dirs[name]], needs)

    # hierarchical_summarization: one good run (1 update) for generate / interactive
    save_dirs["pht"] = root / "pht.ckpt"
    job("pht", "fairseq-train", train_args(data_bin, "pht", save_dirs["pht"], 1,
                                           ["--disable-validation"]))
    pht = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--arch", "pht",
           "--max-paragraphs", "4", "--max-paragraph-tokens", "6", "--max-source-positions", "30",
           "--optimizer", "adam",
           "--lr", "1e-3", "--max-tokens", "300", "--max-update", "1", "--no-progress-bar",
           "--num-workers", "0", *SMALL_MODEL]
    for name, extra in {"max-paragraphs": ["--max-paragraphs", "0"],
                        "max-paragraph-tokens": ["--max-paragraph-tokens", "-1"],
                        "max-target-positions": ["--max-target-positions", "3"],
                        "some-too-long": ["--max-target-positions", "8"],
                        "heads": ["--encoder-attention-heads", "3"],
                        "dropout": ["--dropout", "1.5"],
                        "block-previous-tokens": ["--block-previous-tokens", "-2"]}.items():
        train(f"train-{name}", data_bin, pht + extra)
    train("ranking-max-paragraphs", data_bin, [
        "--user-dir", USER_DIR, "--task", "paragraph_ranking", "--arch", "paragraph_ranker",
        "--criterion", "paragraph_ranking", "--max-paragraphs", "0", "--optimizer", "adam",
        "--lr", "1e-3", "--batch-size", "2"])
    train("doc-mt-max-chunk-tokens", data_bin, [
        "--user-dir", USER_DIR, "--task", "document_translation", "--source-lang", "src",
        "--target-lang", "tgt", "--max-chunk-tokens", "0", *TINY_TRANSFORMER])
    for name, (lineno, text) in {"no-count": (5, "{symbol}"),
                                 "bad-count": (7, "{symbol} 12x")}.items():
        data = damaged_dictionary(data_bin, root / f"dict-{name}", lineno, text)
        train(f"dict-{name}", data, pht)

    # hierarchical_summarization: generate and interactive on the good checkpoint
    ckpt = ["--path", save_dirs["pht"] / "checkpoint_last.pt"]
    for name, extra in {"beam": ["--beam", "-3"], "max-len-b": ["--max-len-b", "-5"],
                        "max-target-positions": ["--max-target-positions", "3"]}.items():
        job(f"generate-{name}", "fairseq-generate",
            [data_bin, *PHT, *ckpt, "--gen-subset", "test", *DECODE, *extra], ["pht"])
    lines = (raw_corpus / "test.src").read_text().splitlines()[:6]
    lines[1] += " 😀 中"  # two tokens that are not in the dictionary
    lines[4] = "a title and no paragraph"  # no separator: refused, as line 5
    (root / "input.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    job("interactive", "fairseq-interactive",
        [data_bin, *PHT, *ckpt, "--input", root / "input.txt", "--buffer-size", "2", *DECODE],
        ["pht"])

    # hat_summarization: data-bin, one update, options and the BPE files
    write_hat_corpus(root / "hat-raw", bart)
    hat_bin = root / "hat-bin"
    hat_bin.mkdir()
    for split in ("train", "valid"):
        shutil.copy(root / "hat-raw" / f"{split}.sentences", hat_bin)
    job("hat-preprocess", "fairseq-preprocess", [
        "--user-dir", USER_DIR, "--task", "hat_summarization", "--source-lang", "source",
        "--target-lang", "target", "--trainpref", root / "hat-raw" / "train", "--validpref",
        root / "hat-raw" / "valid", "--destdir", hat_bin, "--srcdict", bart / "dict.txt",
        "--joined-dictionary", "--workers", "1"])
    train("hat", hat_bin, [*HAT, *TINY_TRANSFORMER, "--max-update", "1", "--disable-validation",
                           "--no-epoch-checkpoints"], ["hat-preprocess"])
    train("hat-max-target-positions", hat_bin, [*HAT, *TINY_TRANSFORMER, "--max-update", "1",
                                                "--max-target-positions", "2"], ["hat-preprocess"])
    train("hat-segment-embeddings", hat_bin, [
        *HAT, *TINY_TRANSFORMER, "--arch", "hat_bart_base", *tiny_bart_flags(),
        "--segment-embeddings", "-3", "--max-update", "1"], ["hat-preprocess"])
    job("hat-interactive-beam", "fairseq-interactive", [
        hat_bin, *HAT, "--path", save_dirs["hat"] / "checkpoint_last.pt", "--input",
        root / "hat-input.txt", "--buffer-size", "2", *DECODE, "--beam", "-3"], ["hat"])
    (root / "encoder.json").write_text('{"the": 4, "model": ')  # cut short
    (root / "hat-input.txt").write_text("<s> the model reads <s> long papers\n")
    job("hat-interactive-encoder-json", "fairseq-interactive", [
        hat_bin, *HAT, "--path", save_dirs["hat"] / "checkpoint_last.pt", "--input",
        root / "hat-input.txt", "--buffer-size", "2", "--bpe", "gpt2", "--gpt2-encoder-json",
        root / "encoder.json", "--gpt2-vocab-bpe", bart / "vocab.bpe", *DECODE], ["hat"])

    # a dictionary with a byte-order mark, given to fairseq-preprocess with our task
    bom_dict = root / "bom.dict.txt"
    bom_dict.write_text("\ufeff" + (data_bin / "dict.src.txt").read_text(encoding="utf-8"),
                        encoding="utf-8")
    job("preprocess-bom", "fairseq-preprocess", [
        "--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--source-lang", "src",
        "--target-lang", "tgt", "--trainpref", raw_corpus / "train", "--destdir",
        root / "bom-bin", "--srcdict", bom_dict, "--joined-dictionary", "--workers", "1"])

    results = run_jobs(jobs)
    out = {name: (result["rc"], (root / f"{name}.log").read_text(encoding="utf-8"),
                  save_dirs.get(name)) for name, result in results.items()}
    for name in ("pht", "hat-preprocess", "hat", "preprocess-bom"):
        assert out[name][0] == 0, f"{name} failed:\n{out[name][1][-3000:]}"
    out["root"] = root
    return out


def assert_refused(runs, name, line):
    """Exit status 1, exactly ``line`` as the error, no traceback, no checkpoint."""
    rc, log, save_dir = runs[name]
    assert rc == 1, log[-3000:]
    assert error_lines(log) == [line], log[-3000:]
    assert "Traceback" not in log
    if save_dir is not None:
        assert checkpoints(save_dir) == []


# ------------------------------------------------------------------------------- options
REFUSED = [
    ("train-max-paragraphs", "fairseq-train: error: --max-paragraphs must be >= 1, got 0"),
    ("train-max-paragraph-tokens",
     "fairseq-train: error: --max-paragraph-tokens must be >= 1, got -1"),
    ("train-heads", "fairseq-train: error: --encoder-embed-dim 32 must be divisible by "
                    "--encoder-attention-heads 3 (each head reads --encoder-embed-dim / "
                    "--encoder-attention-heads dimensions)"),
    ("train-dropout", "fairseq-train: error: --dropout must be >= 0 and <= 1, got 1.5"),
    ("train-block-previous-tokens",
     "fairseq-train: error: --block-previous-tokens must be >= 0, got -2"),
    ("ranking-max-paragraphs", "fairseq-train: error: --max-paragraphs must be >= 1, got 0"),
    ("doc-mt-max-chunk-tokens", "fairseq-train: error: --max-chunk-tokens must be >= 1, got 0"),
    ("generate-beam", "fairseq-generate: error: --beam must be >= 1, got -3"),
    ("generate-max-len-b", "fairseq-generate: error: --max-len-b must be >= 0, got -5"),
    ("hat-segment-embeddings", "fairseq-train: error: --segment-embeddings must be >= 0, got -3"),
    ("hat-interactive-beam", "fairseq-interactive: error: --beam must be >= 1, got -3"),
]


@pytest.mark.parametrize("name, line", REFUSED, ids=[name for name, _ in REFUSED])
def test_options_out_of_range_are_refused_before_the_first_step(runs, name, line):
    assert_refused(runs, name, line)
    if "generate" in name or "interactive" in name:
        assert "H-" not in runs[name][1]  # nothing decoded


def test_a_split_longer_than_max_target_positions_names_split_option_and_size(runs, data_bin):
    assert_refused(runs, "train-max-target-positions", (
        f"fairseq-train: error: split 'valid' ({data_bin}/valid.src-tgt.tgt): all 8 examples are "
        f"longer than --max-target-positions 3, so none would be kept: the longest has 9 tokens "
        f"(a target with its EOS); raise --max-target-positions (to 9 to keep them all)"))
    assert_refused(runs, "generate-max-target-positions", (
        f"fairseq-generate: error: split 'test' ({data_bin}/test.src-tgt.tgt): all 8 examples "
        f"are longer than --max-target-positions 3, so none would be kept: the longest has 9 "
        f"tokens (a target with its EOS); raise --max-target-positions (to 9 to keep them all)"))
    # some too long, in a valid split: fairseq would stop with a traceback; one line instead
    assert_refused(runs, "train-some-too-long", (
        "fairseq-train: error: split 'valid': 2 example(s) are over the length limits (source, "
        "target) (30, 8) of the task's and the model's --max-source-positions / "
        "--max-target-positions; example 6 has (6, 9): raise the limits, or skip such examples "
        "with --skip-invalid-size-inputs-valid-test"))
    assert ("split 'train' (" in runs["train-some-too-long"][1]
            and "12 of 48 examples are longer than --max-target-positions 8"
            in runs["train-some-too-long"][1])
    hat_bin = runs["root"] / "hat-bin"
    rc, log, _ = runs["hat-max-target-positions"]
    assert error_lines(log) == [
        f"fairseq-train: error: split 'valid' ({hat_bin}/valid.source-target.target): all 2 "
        f"examples are longer than --max-target-positions 2, so none would be kept: the longest "
        f"has 5 tokens (a target with its EOS); raise --max-target-positions (to 5 to keep them "
        f"all)"]
    assert rc == 1 and "Traceback" not in log


def test_the_console_scripts_exit_1_with_one_line(data_bin, tmp_path):
    """The same refusals through the installed scripts themselves (the plugin's exception
    hook, the interpreter's exit status)."""
    proc = run_cli("fairseq-train", *train_args(data_bin, "pht", tmp_path / "ck", 1,
                                                ["--max-paragraphs", "0"]), check=False)
    assert proc.returncode == 1
    assert error_lines(proc.stdout) == ["fairseq-train: error: --max-paragraphs must be >= 1, "
                                        "got 0"]
    assert "Traceback" not in proc.stdout and checkpoints(tmp_path / "ck") == []


# ------------------------------------------------------------------------------- files
def test_a_dictionary_line_without_an_integer_count_names_file_and_line(runs):
    root = runs["root"]
    assert_refused(runs, "dict-no-count", (
        f"fairseq-train: error: {root}/dict-no-count/dict.src.txt:5: expected '<symbol> "
        f"<count>' (a fairseq dictionary line), got 'w36'"))
    assert_refused(runs, "dict-bad-count", (
        f"fairseq-train: error: {root}/dict-bad-count/dict.src.txt:7: the count of 'w1' must "
        f"be an integer, got '12x'"))


def test_a_dictionary_with_a_byte_order_mark_is_read_without_it(runs, data_bin):
    rc, log, _ = runs["preprocess-bom"]
    root = runs["root"]
    assert f"{root}/bom.dict.txt: removed the UTF-8 byte-order mark at the start of line 1" in log
    # the first symbol (<P>) is found in the text: nothing became <unk>
    assert rc == 0 and "train.src: 48 sents, 1405 tokens, 0.0% replaced (by <unk>)" in log
    written = (root / "bom-bin" / "dict.src.txt").read_text(encoding="utf-8")
    assert written == (data_bin / "dict.src.txt").read_text(encoding="utf-8")


def test_a_garbage_encoder_json_is_one_line_naming_it(runs):
    root = runs["root"]
    assert_refused(runs, "hat-interactive-encoder-json", (
        f"fairseq-interactive: error: {root}/encoder.json: not a JSON file (Expecting value: "
        f"line 1 column 21 (char 20))"))


# ------------------------------------------------------------------------------- interactive
def test_interactive_numbers_lines_over_the_whole_input_and_counts_unknown_tokens(runs):
    rc, log, _ = runs["interactive"]
    assert rc == 1 and "Traceback" not in log
    assert error_lines(log) == [
        "fairseq-interactive: error: invalid source examples in input: 1 example(s): no "
        "paragraph: the line has a title but no paragraph separator; line(s) 5"]
    # the buffers before the bad one were decoded, the bad one was not
    assert sorted(int(x) for x in re.findall(r"^H-(\d+)\t", log, flags=re.M)) == [0, 1, 2, 3]
    assert ("input lines 1-2: 2 tokens of 1 line became <unk> (characters not in the "
            "dictionary: '😀', '中')") in log


def test_unknown_report_names_characters_or_tokens():
    from fairseq.data import Dictionary

    from fairseq_hier.tasks.checks import unknown_report

    d = Dictionary()
    for word in ("the", "cat"):
        d.add_symbol(word)
    assert unknown_report(d, [[], []]) is None
    assert unknown_report(d, [["😀", "ta"], ["中😀"]]) == (
        "3 tokens of 2 lines became <unk> (characters not in the dictionary: '😀', '中'; "
        "tokens not in the dictionary: 'ta')")


def test_fastbpe_codes_are_checked_before_fastbpe_reads_them(tmp_path):
    from fairseq_hier.errors import HierError
    from fairseq_hier.data.bpe_codes import check_codes as check_fastbpe_codes

    good = tmp_path / "codes"
    good.write_text("a t</w> 4\nt h 3\n")
    check_fastbpe_codes(str(good))
    cut = tmp_path / "cut"
    cut.write_text("a t</w> 4\nt h")
    with pytest.raises(HierError, match=rf"^{cut}:2: not a fastBPE codes line"):
        check_fastbpe_codes(str(cut))
    rnd = tmp_path / "random"
    rnd.write_bytes(bytes(range(128, 256)))
    with pytest.raises(HierError, match=rf"^{rnd}:1: not UTF-8 "):
        check_fastbpe_codes(str(rnd))
