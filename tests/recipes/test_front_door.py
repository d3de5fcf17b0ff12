"""The front page's commands as a newcomer types them: the README's block of fairseq's own
commands (its options those of the library's settings table, and the block run as written on a
small JSON-lines set, with tiny widths and a few updates appended), and ``make try``'s script
(examples/own_data/try.sh) at tiny sizes: what it prints and the files it writes."""

import json
import os
import re
import shlex
import subprocess

from cli_forkserver import gateway
from conftest import BIN, ROOT, SMALL_MODEL, run_cli, run_recipe

README = ROOT / "README.md"
TRY_SH = ROOT / "examples" / "own_data" / "try.sh"


def plugin_blocks() -> list:
    """The bash blocks under the README heading of fairseq's own commands: fairseq's commands,
    then decoding and scoring the run folder."""
    text = README.read_text()
    section = text[text.index("## The plugin with fairseq's own commands"):]
    section = section[:section.index("\n## ", 3)]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def plugin_block() -> str:
    return plugin_blocks()[0]


def command_of(block: str, program: str) -> list:
    """The words of ``program``'s command line in ``block`` (continuation lines joined)."""
    joined = block.replace("\\\n", " ")
    line = next(line for line in joined.splitlines() if line.strip().startswith(program + " "))
    return shlex.split(line, comments=True)


def settings(*args) -> list:
    return run_cli("fairseq-hier-settings", "pht", *args).stdout.splitlines()


def pairs(words: list) -> set:
    """(option, value or None) of a command line's options."""
    out = set()
    for i, word in enumerate(words):
        if word.startswith("--"):
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") \
                else None
            out.add((word, value))
    return out


def test_the_readme_block_has_the_papers_settings_from_the_library():
    block = plugin_block()
    train = pairs(command_of(block, "fairseq-train"))
    generate = pairs(command_of(block, "fairseq-generate"))
    # the paper's optimisation and batch, and PHT's cut (the task defaults the recipes pass)
    assert pairs(settings("--stage", "paper-train")) <= train, train
    batch = settings("--stage", "paper-batch")
    assert ("--batch-size", batch[batch.index("--batch-size") + 1]) in train
    facts = run_cli("fairseq-hier-settings", "pht", "--stage", "train", "--examples", "1000",
                    ).stdout.split("\n")
    for option in ("--max-paragraphs", "--max-paragraph-tokens"):
        assert (option, facts[facts.index(option) + 1]) in train
    assert pairs(settings("--stage", "paper-decode")) <= generate, generate
    assert ("--user-dir", "fairseq_hier") in train and ("--arch", "pht") in train


def test_the_readme_block_runs_as_written(tmp_path):
    """The blocks in a folder of their own (``--user-dir fairseq_hier`` naming the repository's
    package by its path, as it resolves at the repository root), fairseq-train and
    fairseq-generate given tiny sizes after the block's own options (the last occurrence wins),
    the run folder then decoded and scored."""
    data = tmp_path / "my_data"
    run_cli("fairseq-hier-demo", "corpus", "--format", "jsonl", "--output-dir", data,
            "--train", "40", "--valid", "4", "--test", "4", "--other-entities", "1")
    tiny = " ".join([*SMALL_MODEL, "--max-update", "2", "--num-workers", "0"])
    script = ('set -euo pipefail\nexport OMP_NUM_THREADS=1\n'
              f'fairseq-train() {{ command fairseq-train "$@" {tiny}; }}\n'
              f'fairseq-generate() {{ command fairseq-generate "$@" --max-len-b 8 --beam 2; }}\n'
              + plugin_blocks()[0].replace("--user-dir fairseq_hier ",
                                           f"--user-dir {ROOT / 'fairseq_hier'} ")
              + plugin_blocks()[1].replace("paper-decode)", "paper-decode) --max-len-b 8"))
    with gateway(BIN) as shims:  # fairseq's commands through the warm server, as the recipes'
        env = dict(os.environ, PATH=os.pathsep.join([shims, str(BIN), os.environ["PATH"]]))
        proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, text=True, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert (tmp_path / "runs" / "pht" / "checkpoint_best.pt").is_file()
    hypotheses = [line for line in proc.stdout.splitlines() if line.startswith("H-")]
    assert len(hypotheses) == 4, proc.stdout[-3000:]
    assert "▁" not in " ".join(hypotheses)  # --post-process sentencepiece
    run = tmp_path / "runs" / "pht"
    assert len((run / "test.hyp").read_text().splitlines()) == 4
    command = json.loads((run / "test.decode.json").read_text())["command"]
    assert "--block-previous-tokens" in command and "--post-process" in command  # the library's
    rouge = (run / "test.rouge.txt").read_text()
    assert re.search(r"ROUGE-1 Average_F: \d\.\d+ \(95%-conf\.int\.", rouge), rouge


def test_make_try_prints_its_stages_scores_and_files(tmp_path):
    work = tmp_path / "try_work"
    out = run_recipe(TRY_SH, env=dict(WORK=str(work), UPDATES="3", TRAIN="60", TEST="6"))
    steps = re.findall(r"^== (\d)/5 ", out, re.M)
    assert steps == ["1", "2", "3", "4", "5"], out[-3000:]
    assert re.search(r"^ +ROUGE-1 +\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]$", out, re.M), out[-3000:]
    assert "expected: ROUGE-1 99-100 after 600 updates" in out
    summary = re.search(r"^   summary: (.+)$", out, re.M).group(1)
    assert summary.strip() == (work / "new.summaries").read_text().strip()
    assert f"{work}/runs/pht/" in out and "Next: your own data" in out
    run = work / "runs" / "pht"
    for name in ("checkpoint_best.pt", "train.log", "settings.log", "generate-test.txt",
                 "test.hyp", "test.ref", "test.rouge.txt", "run.json"):
        assert (run / name).is_file(), name
    assert len((run / "test.hyp").read_text().splitlines()) == 6
    examples = [json.loads(line) for line in (work / "data" / "train.jsonl").read_text().splitlines()]
    assert len(examples) == 60 and {"title", "documents", "summary"} <= set(examples[0])
    # sentencepiece's BPE model (SPM_TYPE=bpe): whole words of the small vocabulary
    assert "▁lies" in (work / "spm" / "pieces" / "test.src").read_text()
