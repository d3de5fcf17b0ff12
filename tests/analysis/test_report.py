"""fairseq-hier-report: the log parser on real fairseq-train lines, and the whole report on
hand-made RUN_DIRs (scores = the `rouge` command's, significance marks, notes, one-line errors,
a self-contained HTML page whose every image is a PNG).

The train.log lines below were copied from a real ``fairseq-train`` run of this repository (a
1-layer PHT on the session toy corpus: tests/conftest.py ``train_args`` with ``--log-interval 2``,
run once with ``--log-format simple`` and once with ``--log-format json``).
"""

import base64
import json
import re
import struct

import pytest
from conftest import run_cli

from fairseq_hier.report.logs import read_train_log

HEADER = """\
/work/main/.venv/lib/python3.11/site-packages/hydra/experimental/initialize.py:43: UserWarning: hydra.experimental.initialize() is no longer experimental. Use hydra.initialize()
  deprecation_warning(message=message)
2026-11-24 09:52:17 | INFO | fairseq_cli.train | {'_name': None, 'common': {'_name': None, 'no_progress_bar': True, 'log_interval': 2, 'log_format': 'json'}}
2026-11-24 09:52:27 | INFO | fairseq.trainer | begin training epoch 1
"""
SIMPLE = HEADER + """\
2026-11-24 09:52:27 | INFO | train_inner | epoch 001:      2 / 5 loss=6.456, ppl=87.81, wps=2851.2, ups=46.14, wpb=88.5, bsz=12, num_updates=2, lr=0.001, gnorm=2.107, train_wall=0, wall=10
2026-11-24 09:52:27 | INFO | train_inner | epoch 001:      4 / 5 loss=6.278, ppl=77.59, wps=2831.3, ups=49.67, wpb=57, bsz=8, num_updates=4, lr=0.001, gnorm=2.088, train_wall=0, wall=10
2026-11-24 09:52:27 | INFO | fairseq_cli.train | begin validation on "valid" subset
2026-11-24 09:52:27 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 6.133 | ppl 70.17 | wps 0 | wpb 56 | bsz 8 | num_updates 5
2026-11-24 09:52:28 | INFO | fairseq_cli.train | end of epoch 1 (average epoch stats below)
2026-11-24 09:52:28 | INFO | train | epoch 001 | loss 6.301 | ppl 78.82 | wps 1913.2 | ups 33.78 | wpb 68.4 | bsz 9.6 | num_updates 5 | lr 0.001 | gnorm 2.067 | train_wall 0 | wall 11
2026-11-24 09:52:28 | INFO | train_inner | epoch 002:      1 / 5 loss=5.911, ppl=60.18, wps=1107.3, ups=18.3, wpb=60.5, bsz=8, num_updates=6, lr=0.001, gnorm=1.745, train_wall=0, wall=11
2026-11-24 09:52:28 | INFO | train_inner | epoch 002:      3 / 5 loss=5.776, ppl=54.79, wps=3987.5, ups=49.84, wpb=80, bsz=12, num_updates=8, lr=0.001, gnorm=1.605, train_wall=0, wall=11
2026-11-24 09:52:28 | INFO | train_inner | epoch 002:      5 / 5 loss=5.585, ppl=48, wps=3138.2, ups=56.04, wpb=56, bsz=8, num_updates=10, lr=0.001, gnorm=1.563, train_wall=0, wall=11
2026-11-24 09:52:28 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 5.763 | ppl 54.32 | wps 0 | wpb 56 | bsz 8 | num_updates 10 | best_loss 5.763
"""
JSON = HEADER + """\
2026-11-24 09:52:35 | INFO | train_inner | {"epoch": 1, "update": 0.4, "loss": "6.456", "ppl": "87.81", "wps": "4687.6", "ups": "75.86", "wpb": "88.5", "bsz": "12", "num_updates": "2", "lr": "0.001", "gnorm": "2.107", "train_wall": "0", "wall": "2"}
2026-11-24 09:52:36 | INFO | train_inner | {"epoch": 1, "update": 0.8, "loss": "6.278", "ppl": "77.59", "wps": "3707.1", "ups": "65.03", "wpb": "57", "bsz": "8", "num_updates": "4", "lr": "0.001", "gnorm": "2.088", "train_wall": "0", "wall": "2"}
2026-11-24 09:52:36 | INFO | valid | {"epoch": 1, "valid_loss": "6.133", "valid_ppl": "70.17", "valid_wps": "0", "valid_wpb": "56", "valid_bsz": "8", "valid_num_updates": "5"}
2026-11-24 09:52:36 | INFO | train | {"epoch": 1, "train_loss": "6.301", "train_ppl": "78.82", "train_wps": "2256.9", "train_ups": "39.88", "train_wpb": "68.4", "train_bsz": "9.6", "train_num_updates": "5", "train_lr": "0.001", "train_gnorm": "2.067", "train_train_wall": "0", "train_wall": "2"}
2026-11-24 09:52:36 | INFO | train_inner | {"epoch": 2, "update": 1.2, "loss": "5.911", "ppl": "60.18", "wps": "1144.4", "ups": "18.92", "wpb": "60.5", "bsz": "8", "num_updates": "6", "lr": "0.001", "gnorm": "1.745", "train_wall": "0", "wall": "2"}
2026-11-24 09:52:36 | INFO | train_inner | {"epoch": 2, "update": 1.6, "loss": "5.776", "ppl": "54.79", "wps": "3856.7", "ups": "48.21", "wpb": "80", "bsz": "12", "num_updates": "8", "lr": "0.001", "gnorm": "1.605", "train_wall": "0", "wall": "2"}
2026-11-24 09:52:36 | INFO | train_inner | {"epoch": 2, "update": 2.0, "loss": "5.585", "ppl": "48", "wps": "3298.1", "ups": "58.89", "wpb": "56", "bsz": "8", "num_updates": "10", "lr": "0.001", "gnorm": "1.563", "train_wall": "0", "wall": "2"}
2026-11-24 09:52:36 | INFO | valid | {"epoch": 2, "valid_loss": "5.763", "valid_ppl": "54.32", "valid_wps": "0", "valid_wpb": "56", "valid_bsz": "8", "valid_num_updates": "10", "valid_best_loss": "5.763"}
"""
TRAIN_INNER = [(2, 6.456), (4, 6.278), (6, 5.911), (8, 5.776), (10, 5.585)]
VALID = [(5, 6.133), (10, 5.763)]

# Hand-made systems on REFS: "good" copies the references, "base" and HAT (the same text as
# base) share one wrong word per summary: good must be marked against base, HAT must not.
REFS = [f"the team w{i} agrees on the w{i + 1} design . the price is w{i + 2} ." for i in range(10)]
BASE = [f"a model w{i + 5} reads long w{i + 7} papers ." for i in range(10)]


def _hat_generate(hyps):
    """fairseq-generate output of a HAT run with --print-sentence-attention: 3 sentences."""
    lines = []
    for i, hyp in enumerate(hyps):
        steps = len(hyp.split()) + 1
        weights = " ".join(f"{(t % 3) / 3 + 0.1:.6f},0.300000,{0.6 - (t % 3) / 3:.6f}"
                           for t in range(steps))
        lines += [f"S-{i}\tsource", f"H-{i}\t-0.5\t{hyp}", f"D-{i}\t-0.5\t{hyp}",
                  f"P-{i}\t" + " ".join(["-0.1"] * steps), f"A-{i}\t{weights}"]
    lines.append("Generate test with beam=3: BLEU4 = 0.00")  # the closing line of a whole log
    return "\n".join(lines) + "\n"


def _heatmap(i, tokens, paragraphs):
    rows = tokens + ["</s>"]
    weights = [[(1 + (t + p) % paragraphs) / sum(1 + (t + q) % paragraphs
                                                 for q in range(paragraphs))
                for p in range(paragraphs)] for t in range(len(rows))]
    return {"id": i, "rows": rows, "cols": [f"P{p + 1}" for p in range(paragraphs)],
            "weights": weights, "gold": [1 / paragraphs] * paragraphs}


EFFICIENCY = {  # as fairseq-hier-analyse efficiency --output writes it
    "device": "cpu", "tokens": 1600, "budget_gib": 11.0, "dtype": "fp32", "layers": 3,
    "embed_dim": 256, "heads": 4, "target_tokens": 145, "vocab": 32000, "data": None, "rows": [
        {"arch": "transformer", "params": 2500000, "params_mb": 9.54, "max_batch": 12,
         "max_batch_at_limit": False, "max_batch_method": "cpu search (peak allocations)",
         "peak_mem_mb": 812.5, "peak_batch": 1, "valid_seconds": 3.25, "valid_examples": 64,
         "valid_batch_size": 8, "valid_note": "synthetic"},
        {"arch": "pht", "params": 3100000, "params_mb": 11.83, "max_batch": 1024,
         "max_batch_at_limit": True, "max_batch_method": "cpu search (peak allocations)",
         "peak_mem_mb": 412.5, "peak_batch": 1, "valid_seconds": 2.5, "valid_examples": 64,
         "valid_batch_size": 8, "valid_note": "synthetic"}]}


def make_runs(root):
    """base (transformer, simple log), good (pht, json log, attention.json), HAT (generate-test.txt
    with A- lines, no log, no efficiency.json), empty (nothing)."""
    (root / "ref.txt").write_text("\n".join(REFS) + "\n")
    base, good, hat, empty = (root / n for n in ("base", "good", "hat", "empty"))
    for d in (base, good, hat, empty):
        d.mkdir()
    (base / "train.log").write_text(SIMPLE)
    (base / "test.hyp").write_text("\n".join(BASE) + "\n")
    (base / "run.json").write_text(json.dumps({"name": "base", "arch": "transformer"}))
    (good / "train.log").write_text(JSON)
    (good / "test.hyp").write_text("\n".join(REFS) + "\n")
    (good / "run.json").write_text(json.dumps({"name": "good", "arch": "pht"}))
    for d in (base, good):  # one measurement listing both archs, shared by both runs
        (d / "efficiency.json").write_text(json.dumps(EFFICIENCY))
    attention = {"kind": "paragraph", "arch": "pht", "checkpoint": "/x/checkpoint_best.pt",
                 "split": "test", "examples": 10,
                 "cosine": {"mean": 0.612, "low": 0.551, "high": 0.674},
                 "per_example": [0.6] * 10,
                 "heatmaps": [_heatmap(i, REFS[i].split()[:6], 3 + i) for i in range(3)]}
    (good / "attention.json").write_text(json.dumps(attention))
    (hat / "generate-test.txt").write_text(_hat_generate(BASE))
    (hat / "run.json").write_text(json.dumps({"name": "HAT", "arch": "hat_transformer"}))
    return root


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = make_runs(tmp_path_factory.mktemp("runs"))
    out = root / "report"
    proc = run_cli("fairseq-hier-report", root / "base", root / "good", root / "hat",
                   root / "empty", "--reference", root / "ref.txt", "--heatmaps", "2",
                   "--title", "test report", "--output-dir", out)
    # rouge-score's scorers are built with their tokenizer given: no absl line per scorer
    assert "Using default tokenizer" not in proc.stdout, proc.stdout[-2000:]
    return root, (out / "report.html").read_text(), (out / "report.md").read_text(), proc.stdout


# ----------------------------------------------------------------------------- log parser
@pytest.mark.parametrize("text,fmt", [(SIMPLE, "simple"), (JSON, "json")])
def test_log_parser_reads_both_formats(tmp_path, text, fmt):
    path = tmp_path / "train.log"
    path.write_text(text)
    log = read_train_log(str(path))
    assert log.log_format == fmt
    assert log.series("train_inner", "loss") == TRAIN_INNER
    assert log.series("train_inner", "lr") == [(u, 0.001) for u, _ in TRAIN_INNER]
    assert log.series("valid", "loss") == VALID
    assert log.series("train", "loss") == [(5, 6.301)]
    assert log.train[0]["ppl"] == 78.82 and log.train[0]["gnorm"] == 2.067
    assert log.valid["valid"][1]["best_loss"] == 5.763  # json's valid_ prefix removed
    assert log.train_inner[0]["epoch"] == 1 and "update" not in log.train_inner[0]


def test_log_parser_demo_line_and_tqdm(tmp_path):
    # a line of the demo's log (--no-progress-bar, label_smoothed_cross_entropy: nll_loss), and a
    # tqdm redraw followed by a record on the same physical line
    path = tmp_path / "train.log"
    path.write_text(
        "2026-11-24 04:31:43 | INFO | train_inner | epoch 001:    100 / 188 loss=3.206, "
        "nll_loss=3.206, ppl=9.23, wps=4743.3, ups=5.32, wpb=891.5, bsz=31.8, num_updates=100, "
        "lr=0.002, gnorm=1.439, train_wall=18, wall=20\n"
        "epoch 001: 100%|##########| 188/188 [00:35<00:00]\r2026-11-24 04:31:59 | INFO | train | "
        "epoch 001 | loss 1.964 | nll_loss 1.964 | ppl 3.9 | num_updates 188 | lr 0.00145865\n")
    log = read_train_log(str(path))
    assert log.train_inner == [{"epoch": 1, "loss": 3.206, "nll_loss": 3.206, "ppl": 9.23,
                                "wps": 4743.3, "ups": 5.32, "wpb": 891.5, "bsz": 31.8,
                                "num_updates": 100, "lr": 0.002, "gnorm": 1.439,
                                "train_wall": 18, "wall": 20}]
    assert log.series("train", "lr") == [(188, 0.00145865)]


@pytest.mark.parametrize("line,message", [
    ("2026-11-24 09:52:27 | INFO | train_inner | epoch 001:      2 / 5 loss=6.4 ppl=87.81",
     "train.log:5: loss is '6.4 ppl=87.81', not a number"),
    ("2026-11-24 09:52:27 | INFO | train_inner | epoch 001 loss=6.456",
     "train.log:5: a train_inner record must read 'epoch N:  I / M key=value, ...'"),
    ('2026-11-24 09:52:36 | INFO | valid | {"epoch": 1, "valid_loss": "6.1',
     "train.log:5: the valid record is not JSON (Unterminated string"),
    ("2026-11-24 09:52:28 | INFO | train | epoch 001 | ppl 78.82 | num_updates 5",
     "train.log:5: the train record has no loss"),
])
def test_log_parser_errors_name_the_line(tmp_path, line, message):
    path = tmp_path / "train.log"
    path.write_text(HEADER + line + "\n")
    with pytest.raises(ValueError) as e:
        read_train_log(str(path))
    assert str(e.value).startswith(f"{path.parent}/{message}")


# ----------------------------------------------------------------------------- the report
def _png_size(data: bytes):
    """(width, height) from a PNG's IHDR chunk; AssertionError if it is not a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_html_is_self_contained_and_images_are_pngs(report):
    root, html, md, _ = report
    sources = re.findall(r'src="([^"]*)"', html)
    # 3 curves (train loss, valid loss, lr), 2 paragraph heatmaps (good), 2 sentence heatmaps
    assert len(sources) == 7 and html.count("<img") == 7
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http" not in html and "<link" not in html and "@import" not in html
    for s in sources:
        width, height = _png_size(base64.b64decode(s.split(",", 1)[1]))
        assert width > 0 and height > 0
    assert "report: images ok " in html and "naturalWidth === 0" in html  # the load check
    linked = re.findall(r"\]\((report_files/[^)]+\.png)\)", md)
    assert len(linked) == 7
    for rel in linked:
        assert _png_size((root / "report" / rel).read_bytes())[0] > 0
    assert sorted(p.name for p in (root / "report" / "report_files").iterdir()) == sorted(
        rel.split("/")[1] for rel in linked)


def _md_rows(md, header_start):
    """The rows of the Markdown table whose header begins with ``header_start``."""
    block = md.split(header_start, 1)[1].split("\n\n", 1)[0]
    return [[c.strip() for c in row.strip("|").split(" | ")] for row in block.splitlines()[2:]]


def test_scores_are_the_rouge_commands_and_marks_the_strong_pair(report):
    from fairseq_hier.scoring.rouge import rouge_scores

    root, _, md, _ = report
    rows = _md_rows(md, "| system | ROUGE-1 | ROUGE-2 | ROUGE-L |")
    assert [r[0] for r in rows] == ["base (baseline)", "good", "HAT"]
    marks = {"base (baseline)": "", "good": "\u2021", "HAT": ""}  # good: p = 0 < 0.01
    for row, hyps in zip(rows, (BASE, REFS, BASE)):
        scores = rouge_scores(REFS, hyps, zero_empty_summary=True)
        expected = [f"{100 * scores[k]['f']:.2f}{marks[row[0]]} [{100 * scores[k]['f_low']:.2f}, "
                    f"{100 * scores[k]['f_high']:.2f}]" for k in ("rouge-1", "rouge-2", "rouge-l")]
        assert row[1:] == expected
    assert md.count("\u2020") == 1 and md.count("\u2021") == 4  # legend once each, 3 marks
    deltas = _md_rows(md, "| system | \u0394 ROUGE-1 |")
    assert [r[0] for r in deltas] == ["good", "HAT"]
    assert all(c.endswith("p=0.000") for c in deltas[0][1:])
    assert all(c.startswith("+0.00 [+0.00, +0.00] p=1.000") for c in deltas[1][1:])
    assert "Not scored (no test.hyp or generate-test.txt): empty." in md


def test_rouge_score_table_beside_rouge_is_rouge_scores_own_scorer(report):
    """The second table: Google's rouge-score F1 x100, labelled as a different scorer; its values
    are rouge-score's own RougeScorer on the same pairs (sentences on newlines)."""
    from rouge_score import rouge_scorer

    from fairseq_hier.report import scores

    _, _, md, _ = report
    rows = _md_rows(md, "| system | rouge1 (rouge-score) | rouge2 (rouge-score) | rougeL "
                        "(rouge-score) | rougeLsum (rouge-score) |")
    assert rows == [["base", "0.00", "0.00", "0.00", "0.00"],
                    ["good", "100.00", "100.00", "100.00", "100.00"],
                    ["HAT", "0.00", "0.00", "0.00", "0.00"]]
    assert ("F1 x100 of 10 summaries (Google's rouge-score, as `rouge --also-rouge-score`: "
            "use_stemmer=True, rougeLsum on the newline-split sentences; empty summaries score "
            "0): a different scorer from ROUGE-1.5.5") in md
    assert "NOT ROUGE-1.5.5: the rouge-score fallback" not in md  # the official tool ran
    # values in between, against the scorer itself
    refs = ["the cats sat on the mat . it was happy .", "a dog ran home . it barked ."]
    systems = {"a": ["the cat sat . it was sad .", "the dog ran . it barked loudly ."],
               "b": ["a cat sat on a mat .", ""]}
    second = scores.rouge_table(refs, systems, "a", samples=50).second
    keys = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(keys, use_stemmer=True)
    assert second.columns == keys and second.metric.startswith("rouge-score ")
    for (name, cells), hyps in zip(second.rows, systems.values()):
        by_doc = [scorer.score(r.replace(" . ", " .\n"), h.replace(" . ", " .\n"))
                  for r, h in zip(refs, hyps)]
        assert [c.value for c in cells] == pytest.approx(
            [100 * sum(s[k].fmeasure for s in by_doc) / 2 for k in keys], abs=1e-9), name
    assert 0 < second.rows[1][1][0].value < second.rows[0][1][0].value < 100


def test_efficiency_curves_attention_and_notes(report):
    root, html, md, _ = report
    eff = _md_rows(md, "| arch | params (M) |")  # each arch once: both runs list both archs
    assert eff == [["transformer", "2.50", "9.54", "12 (cpu search (peak allocations))",
                    "812.5 (batch 1)", "3.250 (64 examples, synthetic)", "base"],
                   ["pht", "3.10", "11.83", "1,024+ (cpu search (peak allocations))",
                    "412.5 (batch 1)", "2.500 (64 examples, synthetic)", "good"]]
    assert ("Measured on cpu, fp32: 1600 source tokens, memory budget 11.0 GiB, 3 layers of "
            "width 256, 4 heads (efficiency.json).") in md
    assert "Not measured for HAT, empty (no efficiency.json); to measure:" in md
    assert (f"fairseq-hier-analyse efficiency --archs hat_transformer --data DATA_BIN --output "
            f"{root / 'hat'}/efficiency.json") in md
    assert "fairseq-hier-analyse efficiency builds none of the archs of empty (empty)" in md
    assert ("Records read: base: 5 train_inner, 1 train, 2 valid records (simple format); "
            "good: 5 train_inner, 1 train, 2 valid records (json format).") in md
    assert "No train.log (fairseq-train's output) in: HAT, empty." in md
    cos = _md_rows(md, "| system | kind | split |")
    assert cos == [["good", "paragraph", "test", "10", "0.612 [0.551, 0.674]",
                    "checkpoint_best.pt"]]
    assert "good: example 1, paragraph attention" in md and "good: example 2" not in md
    assert "HAT: example 1, HAT sentence attention" in md
    assert "No heatmap for base, empty" in md


def _fail(tmp_path, *args):
    proc = run_cli("fairseq-hier-report", *args, "--output-dir", tmp_path / "out", check=False)
    assert proc.returncode == 1, proc.stdout
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stdout, proc.stdout
    return lines[0]


def test_malformed_inputs_are_one_line_errors(tmp_path):
    root = make_runs(tmp_path)
    (root / "good" / "attention.json").write_text('{"kind": "paragraph", "cosine": {"mean": 0.5,')
    line = _fail(tmp_path, root / "good")
    assert line.startswith(f"fairseq-hier-report: error: {root / 'good'}/attention.json:1: not "
                           f"JSON (Expecting property name enclosed in double quotes")
    bad = json.loads(json.dumps({"cosine": {"mean": 0.5, "low": 0.4, "high": 0.6},
                                 "examples": 2, "heatmaps": [_heatmap(0, ["a", "b"], 3)]}))
    bad["heatmaps"][0]["weights"].pop()
    (root / "good" / "attention.json").write_text(json.dumps(bad))
    assert _fail(tmp_path, root / "good") == (
        f"fairseq-hier-report: error: {root / 'good'}/attention.json: heatmaps[0].weights has 2 "
        f"rows, rows names 3 (one per target token)")
    (root / "base" / "train.log").write_text(SIMPLE.replace("loss=6.278,", "loss=6.278;"))
    assert _fail(tmp_path, root / "base") == (
        f"fairseq-hier-report: error: {root / 'base'}/train.log:6: loss is '6.278; ppl=77.59', "
        f"not a number")


def test_bleu_report(tmp_path):
    from sacrebleu.metrics import BLEU

    docs = [" ".join(REFS[i:i + 2]) for i in range(0, 10, 2)]
    # the reference as fairseq-hier-doc extract writes it: sentences, documents by empty lines
    (tmp_path / "ref.de").write_text("\n\n".join(f"{REFS[i]}\n{REFS[i + 1]}"
                                                  for i in range(0, 10, 2)) + "\n")
    systems = {"base": [" ".join(BASE[i:i + 2]) for i in range(0, 10, 2)], "good": docs}
    for name, hyps in systems.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "test.docs").write_text("\n".join(hyps) + "\n")
    run_cli("fairseq-hier-report", tmp_path / "base", tmp_path / "good", "--metric", "bleu",
            "--reference", tmp_path / "ref.de", "--samples", "200", "--output-dir",
            tmp_path / "out")
    rows = _md_rows((tmp_path / "out" / "report.md").read_text(), "| system | doc BLEU |")
    for row, (name, hyps) in zip(rows, systems.items()):
        assert row[1].split("\u2021")[0].split(" [")[0] == (
            f"{BLEU(tokenize='13a').corpus_score(hyps, [docs]).score:.2f}")
    assert rows[0][0] == "base (baseline)" and "\u2021" in rows[1][1]
    # run folders of document MT: run.json's metric, each run's test.ref (one document a line)
    for name in systems:
        (tmp_path / name / "test.ref").write_text("\n".join(docs) + "\n")
        (tmp_path / name / "run.json").write_text(json.dumps({"name": name, "arch": "hat",
                                                              "metric": "bleu"}))
    run_cli("fairseq-hier-report", tmp_path / "base", tmp_path / "good", "--samples", "200",
            "--output-dir", tmp_path / "own")
    assert _md_rows((tmp_path / "own" / "report.md").read_text(), "| system | doc BLEU |") == rows


# ----------------------------------------------------------------------------- run folders
# The layout every recipe writes: run.json, SUBSET.hyp (or generate-SUBSET.txt), the references
# used (SUBSET.ref; SUBSET.refs.jsonl when an example has several), SUBSET.rouge.txt.
def _run_folder(root, name, hyps, refs, arch="pht", subset="test", metric="rouge"):
    """A run folder; ``refs``: one string per example, or a list of its references."""
    run = root / name
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"name": name, "arch": arch,
                                              "task": "hierarchical_summarization",
                                              "metric": metric}))
    (run / f"{subset}.hyp").write_text("\n".join(hyps) + "\n")
    firsts = [r if isinstance(r, str) else r[0] for r in refs]
    (run / f"{subset}.ref").write_text("\n".join(firsts) + "\n")
    if any(not isinstance(r, str) for r in refs):
        (run / f"{subset}.refs.jsonl").write_text(
            "".join(json.dumps([r] if isinstance(r, str) else r) + "\n" for r in refs))
    return run


def _score_rows(out):
    return _md_rows((out / "report.md").read_text(), "| system | ROUGE-1 | ROUGE-2 | ROUGE-L |")


def test_run_folders_are_scored_against_their_own_references(tmp_path):
    """No --reference: each run's test.ref, with the scores (and marks) of --reference pointing
    at the same file; the run's own ROUGE report is listed with the run; --subset picks the
    split's files."""
    base = _run_folder(tmp_path, "base", BASE, REFS, arch="transformer")
    _run_folder(tmp_path, "good", REFS, REFS)
    (base / "test.rouge.txt").write_text(run_cli("fairseq-hier-rouge", base / "test.ref",
                                                 base / "test.hyp").stdout)
    run_cli("fairseq-hier-report", tmp_path / "base", tmp_path / "good", "--samples", "100",
            "--output-dir", tmp_path / "own")
    run_cli("fairseq-hier-report", tmp_path / "base", tmp_path / "good", "--samples", "100",
            "--reference", tmp_path / "good" / "test.ref", "--output-dir", tmp_path / "given")
    own, given = _score_rows(tmp_path / "own"), _score_rows(tmp_path / "given")
    assert own == given and [r[0] for r in own] == ["base (baseline)", "good"]
    assert own[1][1].startswith("100.00\u2021 [")
    md = (tmp_path / "own" / "report.md").read_text()
    assert (f"ROUGE F1 x100 of 10 summaries against {tmp_path / 'base' / 'test.ref'} (the same "
            f"in good) (ROUGE-1.5.5") in md
    runs = _md_rows(md, "| system | arch | RUN_DIR |")
    assert runs[0][3] == "test.hyp, test.ref"
    assert runs[0][4] == "test.rouge.txt: ROUGE-1/2/L F1 x100 " + " / ".join(
        given[0][k].split(" [")[0] for k in (1, 2, 3))
    assert runs[1][4] == "-"
    # another split: its own files, the test split's ignored
    _run_folder(tmp_path, "valid_only", REFS[:4], REFS[:4], subset="valid")
    run_cli("fairseq-hier-report", tmp_path / "valid_only", tmp_path / "base", "--subset",
            "valid", "--output-dir", tmp_path / "valid")
    md = (tmp_path / "valid" / "report.md").read_text()
    assert [r[0] for r in _score_rows(tmp_path / "valid")] == ["valid_only"]
    assert "Not scored (no valid.hyp or generate-valid.txt): base." in md


def test_several_references_per_example_score_as_fairseq_hier_rouge(tmp_path):
    """test.refs.jsonl (1 to 3 references per summary) is what the report scores, as
    fairseq-hier-rouge scores the same files (ROUGE-1.5.5's multi-model scoring), for both runs
    of a table with its paired bootstrap."""
    from fairseq_hier.scoring.rouge import parse_report

    refs = [[REFS[i], f"the team w{i} agrees on the design .",
             f"w{i + 2} is the price ."][:1 + i % 3] for i in range(10)]
    half = [REFS[i] if i % 2 else BASE[i] for i in range(10)]
    for name, hyps in (("base", BASE), ("half", half)):
        _run_folder(tmp_path, name, hyps, refs)
    assert json.loads((tmp_path / "half" / "test.refs.jsonl").read_text().splitlines()[2]) == \
        refs[2] and len(refs[2]) == 3
    run_cli("fairseq-hier-report", tmp_path / "base", tmp_path / "half", "--samples", "100",
            "--output-dir", tmp_path / "out")
    rows = _score_rows(tmp_path / "out")
    for row, name in zip(rows, ("base", "half")):
        printed = run_cli("fairseq-hier-rouge", tmp_path / name / "test.refs.jsonl",
                          tmp_path / name / "test.hyp").stdout
        expected = parse_report(printed)
        cells = [c.replace("\u2021", "").replace("\u2020", "") for c in row[1:]]
        assert cells == [f"{100 * expected[k]['f']:.2f} [{100 * expected[k]['f_low']:.2f}, "
                         f"{100 * expected[k]['f_high']:.2f}]"
                         for k in ("rouge-1", "rouge-2", "rouge-l")], name
    # the first reference alone scores differently: the extra references count
    first_only = parse_report(run_cli("fairseq-hier-rouge", tmp_path / "half" / "test.ref",
                                      tmp_path / "half" / "test.hyp").stdout)
    assert rows[1][1].split(" [")[0].rstrip("\u2020\u2021") != \
        f"{100 * first_only['rouge-1']['f']:.2f}"
    md = (tmp_path / "out" / "report.md").read_text()
    assert (f"against {tmp_path / 'base' / 'test.refs.jsonl'} (the same in half) (up to 3 "
            f"references per summary: ROUGE-1.5.5's multi-model scoring)") in md
    assert "several references: the best one per metric (rouge-score's score_multi)" in md


def test_runs_with_different_references_are_one_line_errors(tmp_path):
    refs = list(REFS)
    _run_folder(tmp_path, "a", BASE, refs)
    refs[3] = "the team w3 agrees on nothing ."
    _run_folder(tmp_path, "b", REFS, refs)
    a, b = tmp_path / "a", tmp_path / "b"
    assert _fail(tmp_path, a, b) == (
        f"fairseq-hier-report: error: a and b are scored against different references: line 4 of "
        f"{a / 'test.ref'} ('{REFS[3]}') differs from line 4 of {b / 'test.ref'} ('the team w3 "
        f"agrees on nothing .'); a table compares runs on the same references (or give "
        f"--reference)")
    # one reference more than the other: the first line one of them lacks
    (b / "test.ref").write_text("\n".join(REFS + ["one more ."]) + "\n")
    assert _fail(tmp_path, a, b).endswith(
        f"line 11 of {a / 'test.ref'} (no line) differs from line 11 of {b / 'test.ref'} ('one "
        f"more .'); a table compares runs on the same references (or give --reference)")
    # several references against the first one only
    (b / "test.ref").write_text("\n".join(REFS) + "\n")
    (b / "test.refs.jsonl").write_text("".join(json.dumps([r, "x ."] if i == 6 else [r]) + "\n"
                                               for i, r in enumerate(REFS)))
    assert f"line 7 of {a / 'test.ref'} (1 reference) differs from line 7 of " \
           f"{b / 'test.refs.jsonl'} (reference 2 of 2: 'x .');" in _fail(tmp_path, a, b)
    # run.json: a metric that is neither, and two runs naming different ones
    (b / "run.json").write_text(json.dumps({"name": "b", "metric": "meteor"}))
    assert _fail(tmp_path, a, b) == (f"fairseq-hier-report: error: {b / 'run.json'}: metric must "
                                     f"be rouge or bleu, got 'meteor'")
    (b / "run.json").write_text(json.dumps({"name": "b", "metric": "bleu"}))
    assert _fail(tmp_path, a, b) == (
        f"fairseq-hier-report: error: a is scored by rouge ({a}/run.json), b by bleu "
        f"({b}/run.json): one report scores one metric; give --metric or report them apart")


def test_run_json_written_by_the_recipes_and_inherited_by_a_second_decoding(tmp_path):
    from fairseq_hier.errors import HierError
    from fairseq_hier.report.inputs import inherit_run_json, load_run, write_run_json

    trained = tmp_path / "runs" / "liu_ht"
    write_run_json(str(trained), "liu_ht", "liu_ht", "hierarchical_summarization", "rouge")
    run = load_run(str(trained))
    assert (run.name, run.arch, run.task, run.metric) == (
        "liu_ht", "liu_ht", "hierarchical_summarization", "rouge")
    # the same checkpoint decoded into a run folder of its own: its name, the trained run's arch
    second = tmp_path / "runs" / "liu_ht_3000"
    inherit_run_json(str(second), str(trained), "other_task", "rouge")
    assert json.loads((second / "run.json").read_text()) == {
        "name": "liu_ht_3000", "arch": "liu_ht", "task": "hierarchical_summarization",
        "metric": "rouge"}
    inherit_run_json(str(trained), str(trained), "other_task", "bleu")  # kept as training wrote it
    assert load_run(str(trained)).metric == "rouge"
    untracked = tmp_path / "old" / "pht"  # trained without a run.json: the folder's name
    untracked.mkdir(parents=True)
    (untracked / "checkpoint_best.pt").write_bytes(b"")
    inherit_run_json(str(tmp_path / "pht_align"), str(untracked), "hierarchical_summarization",
                     "rouge")
    assert load_run(str(tmp_path / "pht_align")).arch == "pht"
    with pytest.raises(HierError, match="run.json: metric must be rouge or bleu, got 'f1'"):
        write_run_json(str(tmp_path / "x"), "x", "pht", "hierarchical_summarization", "f1")
