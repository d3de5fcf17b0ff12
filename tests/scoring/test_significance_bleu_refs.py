"""``fairseq-hier-significance bleu`` with several reference files
(fairseq_hier/scoring/significance.py): the reported BLEU is the ``sacrebleu`` command's on the
same files (``sacrebleu REF1 REF2 -i SYS``), the bootstrap figures are sacreBLEU's own paired
bootstrap given the same reference streams, and a reference file of another line count is one
error line naming it."""

import json
import random
import subprocess

import pytest
from conftest import BIN

from fairseq_hier.cli.significance import cli_main

WORDS = ("the council met on monday and agreed to raise the budget for schools while critics "
         "said the plan came too late for many families in the north").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def noisy(rng, text, p):
    """``text`` with each word replaced by a random one with probability ``p``."""
    return " ".join(rng.choice(WORDS) if rng.random() < p else w for w in text.split())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("bleu_refs")
    ref_a = [" ".join(sentence(rng, rng.randint(5, 12)) for _ in range(3)) for _ in range(40)]
    ref_b = [noisy(rng, r, 0.3) for r in ref_a]  # a second translation of each document
    sys_x = [noisy(rng, r, 0.5) for r in ref_a]
    sys_y = [noisy(rng, r, 0.25) for r in ref_b]
    paths = {}
    for name, lines in (("ref_a", ref_a), ("ref_b", ref_b), ("x", sys_x), ("y", sys_y),
                        ("short", ref_b[:-3])):
        paths[name] = root / f"{name}.txt"
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return paths


def sacrebleu_command(refs, hyp):
    """The corpus BLEU the ``sacrebleu`` command prints for ``hyp`` against ``refs`` (4 digits)."""
    out = subprocess.run([str(BIN / "sacrebleu"), *map(str, refs), "-i", str(hyp), "-m", "bleu",
                          "-b", "-w", "4"], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def significance(capsys, *args):
    assert cli_main(["bleu", *map(str, args), "--samples", "200"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_two_references_give_the_sacrebleu_commands_bleu(files, capsys):
    refs = (files["ref_a"], files["ref_b"])
    result = significance(capsys, *refs, f"X={files['x']}", f"Y={files['y']}")
    for name in ("x", "y"):
        expected = sacrebleu_command(refs, files[name])
        assert round(result["systems"][name.upper()]["bleu"], 4) == expected
    assert result["signature"].startswith("nrefs:2|")
    # the second reference counts: one reference alone scores differently
    single = significance(capsys, files["ref_a"], f"X={files['x']}", f"Y={files['y']}")
    assert round(single["systems"]["Y"]["bleu"], 4) == sacrebleu_command(refs[:1], files["y"])
    assert single["systems"]["Y"]["bleu"] < result["systems"]["Y"]["bleu"]


def test_two_references_give_sacrebleus_paired_bootstrap(files, capsys, monkeypatch):
    """sacreBLEU's ``--paired-bs`` with the same reference streams and seed (its PairedTest, as
    its command builds it) gives each system's bootstrap mean and 95% half-width."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    result = significance(capsys, files["ref_a"], files["ref_b"], f"X={files['x']}",
                          f"Y={files['y']}")
    read = {k: files[k].read_text(encoding="utf-8").splitlines() for k in files}
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    _, scores = PairedTest([("X", read["x"]), ("Y", read["y"])],
                           {"BLEU": BLEU(references=[read["ref_a"], read["ref_b"]])}, None,
                           test_type="bs", n_samples=200)()
    for name, oracle in zip(scores["System"], scores["BLEU"]):
        assert result["systems"][name]["sacrebleu_mean"] == pytest.approx(oracle.mean, abs=1e-9)
        assert result["systems"][name]["sacrebleu_ci95"] == pytest.approx(oracle.ci, abs=1e-9)


def test_a_reference_of_another_line_count_is_one_error_line(files, capsys):
    argv = ["bleu", str(files["ref_a"]), str(files["short"]), f"X={files['x']}",
            f"Y={files['y']}"]
    assert cli_main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"fairseq-hier-significance bleu: error: line counts differ: {files['ref_a']} "
                   f"has "
                   f"40 lines, {files['short']} has 37 lines (one example per line is expected)")
