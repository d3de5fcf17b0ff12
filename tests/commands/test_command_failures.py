"""How our commands fail and write, through the real console scripts: every output is written
whole or not at all (two runs writing one output, Ctrl-C in the middle of a write), an output
that is one of the command's inputs is refused and the input left as it was, devices and
symlinks are written through, options out of range are refused when parsed, and files that are
not what they claim (fastBPE codes, a cut fairseq-generate log, JSON lines holding U+2028, an
empty run folder) get one line naming the file, line or option.

Each test asserts the exit status, the one line printed and what is on disk afterwards."""

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import time

import pytest

from conftest import BIN, USER_DIR, run_cli, train_args


def lines_of(proc):
    """The lines a command printed (stdout and stderr), without the log lines."""
    return [line for line in proc.stdout.splitlines() if " | INFO | " not in line
            and " | WARNING | " not in line]


#: the line the old name fairseq-hier-hypotheses (an alias) prints before it runs
HYPOTHESES_NOTE = "fairseq-hier-hypotheses: now a step of 'fairseq-hier decode' (this name will go)"


def one_line(proc, rc=1):
    """The single line of a failed command (its exit status checked); an alias's line naming
    its new command before it is not counted."""
    assert proc.returncode == rc, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    printed = lines_of(proc)
    if printed and printed[0] == HYPOTHESES_NOTE:
        printed = printed[1:]
    assert len(printed) == 1, proc.stdout[-3000:]
    return printed[0]


def leftovers(folder):
    """Temporary files a writer left in ``folder`` (``.NAME.XXXX.part`` and friends)."""
    return sorted(n for n in os.listdir(folder) if n.startswith(".") or n.endswith(
        (".part", ".tmp", ".partial", ".old")))


def lead_inputs(folder, name, n, seed):
    """A raw source / reference pair of ``n`` examples for fairseq-hier-baseline lead."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(50)]
    src, ref = folder / f"{name}.src", folder / f"{name}.tgt"
    src.write_text("".join(f"title {rng.choice(words)} <P> " + " ".join(rng.choices(words, k=30))
                           + "\n" for _ in range(n)))
    ref.write_text("".join(" ".join(rng.choices(words, k=rng.randint(5, 25))) + "\n"
                           for _ in range(n)))
    return src, ref


# ------------------------------------------------------------------ one way to write outputs
def test_two_runs_writing_one_output_leave_one_runs_whole_output(tmp_path):
    from fairseq_hier.baselines.lead import lead_file

    inputs = [lead_inputs(tmp_path, name, 60000, seed) for seed, name in enumerate("ab")]
    alone = []
    for k, (src, ref) in enumerate(inputs):  # what each run writes on its own
        lead_file(str(src), str(ref), str(tmp_path / f"alone{k}.hyp"))
        alone.append((tmp_path / f"alone{k}.hyp").read_bytes())
    assert alone[0] != alone[1]
    out = tmp_path / "out" / "lead.hyp"
    procs = [subprocess.Popen([str(BIN / "fairseq-hier-baseline"), "lead", "--source", str(src),
                               "--reference", str(ref), "-o", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for src, ref in inputs]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    written = out.read_bytes()
    assert written in alone and b"\0" not in written
    assert leftovers(out.parent) == []


def test_ctrl_c_in_the_middle_of_a_write_leaves_no_file(tmp_path):
    src = tmp_path / "summaries.txt"
    src.write_text("Anna can't find Betty's number. She'll call later! It costs $5.\n" * 20000)
    out = tmp_path / "out" / "summaries.tok"
    # Ctrl-C's default action, as in a terminal's foreground job: a test run started in the
    # background of a non-interactive shell ignores SIGINT, and its children would inherit that
    proc = subprocess.Popen([str(BIN / "fairseq-hier-ptb-tokenize"), str(src), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the command prints no progress line; its progress signal is its temporary output: created
    # empty before the input is read, it grows only once tokenised lines fill the first write
    # buffer (~120 of the 20000 lines), i.e. the command is past its start-up and inside its loop,
    # with ~99% of its work left, however fast the machine
    deadline = time.monotonic() + 300

    def written():
        parts = leftovers(out.parent) if out.parent.exists() else []
        try:
            return sum(os.path.getsize(out.parent / n) for n in parts if n.endswith(".part"))
        except FileNotFoundError:  # moved into place: finished (the loop then fails)
            return 0

    while written() == 0:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    printed, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130 and printed.splitlines() == ["fairseq-hier-ptb-tokenize: "
                                                               "interrupted"], printed
    assert os.listdir(out.parent) == []


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(tmp_path):
    src, ref = lead_inputs(tmp_path, "test", 3, 0)
    before = src.read_bytes()
    proc = run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref,
                   "--output", src,
                   check=False)
    assert one_line(proc) == (f"fairseq-hier-baseline lead: error: output {src} is also an input "
                              f"of this "
                              f"command: it would be overwritten; choose another output path")
    assert src.read_bytes() == before and leftovers(tmp_path) == []

    log = tmp_path / "generate.log"
    log.write_text("H-0\t-0.5\ta b\nGenerate test with beam=5: BLEU4 = 0.00\n")
    before = log.read_bytes()
    proc = run_cli("fairseq-hier-hypotheses", log, "-o", log, check=False)
    assert one_line(proc) == (f"fairseq-hier-hypotheses: error: output {log} is also an input "
                              f"of this command: it would be overwritten; choose another output "
                              f"path")
    assert log.read_bytes() == before

    # refused before the checkpoint is looked at (there is none here)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(json.dumps({"title": "t", "documents": ["w1 w2", "w3"]}) + "\n")
    before = jsonl.read_bytes()
    proc = run_cli("fairseq-hier-summarize", tmp_path / "no_checkpoint", jsonl, "-o", jsonl,
                   "--no-progress-bar", check=False)
    assert one_line(proc) == (f"fairseq-hier-summarize: error: output {jsonl} is also an input "
                              f"of this command: it would be overwritten; choose another output "
                              f"path")
    assert jsonl.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["docs.jsonl", "generate.log", "test.src", "test.tgt"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_device_is_one_line_and_stays_a_device(tmp_path):
    src, ref = lead_inputs(tmp_path, "test", 3, 0)
    proc = run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref, "--output",
                   "/dev/full", check=False)
    assert one_line(proc) == "fairseq-hier-baseline lead: error: No space left on device (/dev/full)"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert leftovers("/dev") == [] or all(not n.endswith(".part") for n in os.listdir("/dev"))


def test_a_symlink_output_is_written_through(tmp_path):
    src, ref = lead_inputs(tmp_path, "test", 3, 0)
    target = tmp_path / "runs" / "lead.hyp"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "lead.hyp"
    link.symlink_to(target)
    run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref, "--output", link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().count("\n") == 3 and target.read_text() != "old\n"
    assert leftovers(tmp_path) == leftovers(target.parent) == []


def test_an_output_that_is_a_folder_or_cannot_be_created_is_one_line(tmp_path):
    src, ref = lead_inputs(tmp_path, "test", 3, 0)
    proc = run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref, "--output",
                   tmp_path, check=False)
    assert one_line(proc) == (f"fairseq-hier-baseline lead: error: output {tmp_path} is a folder "
                              f"(a file "
                              f"path is expected)")
    if os.geteuid() != 0:  # a folder without write permission (root writes there anyway)
        folder = tmp_path / "read_only"
        folder.mkdir(mode=0o500)
    else:  # sysfs: not even root creates files there
        folder = "/sys"
    out = os.path.join(folder, "lead.hyp")
    try:  # the reason the system gives for this folder
        os.close(os.open(os.path.join(folder, ".probe"), os.O_CREAT | os.O_WRONLY))
        pytest.skip(f"{folder} is writable here")
    except OSError as e:
        reason = e.strerror
    proc = run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref,
                   "--output", out,
                   check=False)
    assert one_line(proc) == f"fairseq-hier-baseline lead: error: {reason} ({out})"
    assert not os.path.exists(out)


# ----------------------------------------------------------------- options checked when parsed
@pytest.mark.parametrize("command,args,line", [
    ("fairseq-hier-doc tokenize", ["--input-prefix", "x", "--output-prefix", "y", "--src-lang",
                                   "en", "--tgt-lang", "de", "--workers", "-3"],
     "argument --workers: must be >= 1, got -3"),
    ("fairseq-hier-demo doc-corpus", ["--output-dir", "{tmp}/corpus", "--train-docs", "-5"],
     "argument --train-docs: must be >= 0, got -5"),
    ("fairseq-hier-doc-bleu", ["a=b", "--chunks", "c", "--reference", "r", "--tgt-lang", "de",
                               "--bootstrap", "-5"],
     "argument --bootstrap: must be >= 0, got -5"),
    ("fairseq-hier-summarize", ["{tmp}", "{tmp}/in.txt", "--batch-size", "0"],
     "argument --batch-size: must be >= 1, got 0"),
    ("fairseq-hier-demo corpus", ["--output-dir", "{tmp}/demo", "--repeat-prob", "1.5"],
     "argument --repeat-prob: must be >= 0 and <= 1, got 1.5"),
    ("fairseq-hier-rank eval", ["--source", "s", "--target", "t", "--L", "5", "0"],
     "argument --L: must be >= 1, got 0"),
    ("fairseq-hier-hypotheses", ["log", "--expected", "0"],
     "argument --expected: must be >= 1, got 0"),
    ("fairseq-hier-analyse heatmap", ["log", "--id", "-1", "-o", "{tmp}/x.png"],
     "argument --id: must be >= 0, got -1"),
    ("fairseq-hier-rouge", ["r", "h", "-n", "0"], "argument -n/--rouge_n: must be >= 1, got 0"),
])
def test_numbers_out_of_range_are_refused_when_parsed(tmp_path, command, args, line):
    name, *subcommand = command.split()  # a family's subcommand: its prog is "NAME SUB"
    proc = run_cli(name, *subcommand, *(a.format(tmp=tmp_path) for a in args), check=False)
    assert one_line(proc, rc=2) == f"{command}: error: {line}"
    assert os.listdir(tmp_path) == []


SPLIT = "cannot split {text!r} into arguments as a shell would (no closing quotation): close " \
    "the quote or escape it"


@pytest.mark.parametrize("command,args,rc,line", [
    ("fairseq-hier-rouge", ["r", "h", "-a", "-c 95 -n '2"], 2,
     "-a/--args: " + SPLIT.format(text="-c 95 -n '2")),
    ("fairseq-hier-analyse efficiency", ["--data", "{tmp}", "--task-args", '--max-source "1'], 2,
     "--task-args: " + SPLIT.format(text='--max-source "1')),
    ("fairseq-hier-record data", ["{tmp}", "--task", "hierarchical_summarization", "--pipeline",
                                  "paragraphs", "--generation", "--beam '2"], 1,
     "--generation: " + SPLIT.format(text="--beam '2")),
    ("fairseq-hier-summarize", ["{tmp}", "{tmp}", "--generation=--beam '2"], 2,
     "--generation: " + SPLIT.format(text="--beam '2")),
])
def test_an_unbalanced_quote_in_an_option_is_one_line(tmp_path, command, args, rc, line):
    """Every option whose value is split like a shell line goes through one splitter."""
    name, *subcommand = command.split()
    proc = run_cli(name, *subcommand, *(a.format(tmp=tmp_path) for a in args), check=False)
    assert one_line(proc, rc=rc) == f"{command}: error: {line}"
    assert os.listdir(tmp_path) == []


def test_record_parses_its_generation_options_before_writing(tmp_path):
    data = tmp_path / "data-bin"
    data.mkdir()
    proc = run_cli("fairseq-hier-record", "data", data, "--task", "hierarchical_summarization",
                   "--pipeline", "paragraphs", "--generation", "--beam -3 --max-len-b 20",
                   check=False)
    assert one_line(proc) == ("fairseq-hier-record data: error: --generation '--beam -3 "
                              "--max-len-b "
                              "20': --beam must be >= 1, got -3")
    proc = run_cli("fairseq-hier-record", "data", data, "--task", "hierarchical_summarization",
                   "--pipeline", "paragraphs", "--generation", "--beam 2 --no-such-option 4",
                   check=False)
    assert one_line(proc) == ("fairseq-hier-record data: error: --generation '--beam 2 "
                              "--no-such-option 4': unknown option(s) --no-such-option 4 "
                              "(fairseq-generate's options and task hierarchical_summarization's "
                              "are expected)")
    assert os.listdir(data) == []


# ------------------------------------------------------------------------- fastBPE codes
CODES = "t h 19\nth e</w> 17\ni t</w> 15\na n 15\n"


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """A tokenised split (``doc.{en,de,docids}``) for fairseq-hier-doc chunk."""
    folder = tmp_path_factory.mktemp("doc_chunk")
    (folder / "doc.en").write_text("the river is old .\nit sings .\n\nthe bridge is green .\n")
    (folder / "doc.de").write_text("der Fluss ist alt .\ner singt .\n\ndie Brücke ist grün .\n")
    (folder / "doc.docids").write_text("d0\nd1\n")
    return folder


@pytest.mark.parametrize("case,line", [
    ("random", "{codes}:1: not UTF-8 (invalid start byte at byte 0 of the line): not fastBPE "
               "codes"),
    ("empty", "{codes}: empty file, not fastBPE codes (learn them with: fastbpe learnbpe 40000 "
              "train.tok.SRC train.tok.TGT > CODES)"),
    ("folder", "{codes}: is a folder, not fastBPE codes (learn them with: fastbpe learnbpe 40000 "
               "train.tok.SRC train.tok.TGT > CODES)"),
    ("cut", "{codes}:4: the last line has no line end: the codes file is cut (fastbpe learnbpe "
            "ends every line)"),
    ("two_fields", "{codes}:2: not a fastBPE codes line (expected 'LEFT RIGHT COUNT', single "
                   "spaces), got 'th e</w>'"),
    ("joined", "{codes}:5: count 19 is above the line before's 15: fastbpe learnbpe writes its "
               "merges by decreasing count (are two codes files joined?)"),
])
def test_doc_chunk_refuses_what_is_not_fastbpe_codes(documents, tmp_path, case, line):
    codes = tmp_path / "bpe.codes"
    if case == "folder":
        codes.mkdir()
    else:
        codes.write_bytes({"random": b"\x80\x03\xff\x00\x12 garbage\n\x99",
                           "empty": b"",
                           "cut": CODES[:-2].encode(),  # "a n 1": the count cut
                           "two_fields": b"t h 19\nth e</w>\n",
                           "joined": (CODES + CODES).encode()}[case])
    out = tmp_path / "out" / "train"
    proc = run_cli("fairseq-hier-doc", "chunk", "--input-prefix", documents / "doc",
                   "--output-prefix", out,
                   "--src-lang", "en", "--tgt-lang", "de", "--codes", codes,
                   "--no-progress-bar", check=False)
    assert one_line(proc) == f"fairseq-hier-doc chunk: error: {line.format(codes=codes)}"
    assert not out.parent.exists()


def test_doc_chunk_applies_good_codes(documents, tmp_path):
    codes = tmp_path / "bpe.codes"
    codes.write_text(CODES)
    out = tmp_path / "train"
    run_cli("fairseq-hier-doc", "chunk", "--input-prefix", documents / "doc", "--output-prefix",
            out,
            "--src-lang", "en", "--tgt-lang", "de", "--codes", codes, "--no-progress-bar")
    # "the" and "it" merged by the codes, the other words split into characters
    assert (tmp_path / "train.en").read_text().split("\n")[0] == (
        "<s> the r@@ i@@ v@@ e@@ r i@@ s o@@ l@@ d . <s> it s@@ i@@ n@@ g@@ s .")
    assert sorted(os.listdir(tmp_path)) == ["bpe.codes", "train.chunks", "train.de", "train.en"]


# ------------------------------------------------- a real fairseq-generate log, a checkpoint
@pytest.fixture(scope="module")
def trained(data_bin, tmp_path_factory):
    """A data-bin with a preprocessing record, a transformer trained one update on it, and
    fairseq-generate's output for its test split (8 examples)."""
    root = tmp_path_factory.mktemp("failures")
    data = root / "data-bin"
    shutil.copytree(data_bin, data)
    run_cli("fairseq-hier-record", "data", data, "--task", "hierarchical_summarization",
            "--pipeline",
            "paragraphs", "--generation", "--beam 2 --max-len-b 6")
    run_cli("fairseq-train", *train_args(data, "transformer", root / "ck", 1))
    proc = subprocess.run(
        [str(BIN / "fairseq-generate"), str(data), "--user-dir", USER_DIR, "--task",
         "hierarchical_summarization", "--max-paragraphs", "4", "--max-paragraph-tokens", "6",
         "--max-source-positions", "30", "--path", str(root / "ck" / "checkpoint_last.pt"),
         "--gen-subset", "test", "--beam", "2", "--max-len-b", "5", "--batch-size", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1"))
    assert proc.returncode == 0
    (root / "generate.log").write_text(proc.stdout)  # stdout only, as `> generate.log` keeps it
    return root


def test_hypotheses_refuse_a_generate_log_cut_short(trained, tmp_path):
    log = (trained / "generate.log").read_text()
    assert log.splitlines()[-1].startswith("Generate test with beam=2: ")
    proc = run_cli("fairseq-hier-hypotheses", trained / "generate.log", "--expected", "8",
                   "-o", tmp_path / "whole.hyp")
    assert proc.returncode == 0 and len((tmp_path / "whole.hyp").read_text().splitlines()) == 8
    lines = log.splitlines(keepends=True)
    last_h = max(i for i, line in enumerate(lines) if line.startswith("H-"))
    cut = tmp_path / "cut.log"  # killed while it printed its last hypothesis
    cut.write_text("".join(lines[:last_h]) + lines[last_h][:-4])
    proc = run_cli("fairseq-hier-hypotheses", cut, "--expected", "8", "-o", tmp_path / "cut.hyp",
                   check=False)
    assert one_line(proc) == (f"fairseq-hier-hypotheses: error: {cut} line {last_h + 1}: the "
                              f"file ends inside this line (no line end): fairseq-generate's "
                              f"output is cut")
    unfinished = tmp_path / "unfinished.log"  # every line whole, but no closing line
    unfinished.write_text("".join(lines[:last_h + 1]))
    proc = run_cli("fairseq-hier-hypotheses", unfinished, "-o", tmp_path / "unfinished.hyp",
                   check=False)
    assert one_line(proc) == (f"fairseq-hier-hypotheses: error: {unfinished}: no 'Generate ... "
                              f"with beam=' line after the last hypothesis (line {last_h + 1}): "
                              f"fairseq-generate did not finish, or its output is cut")
    assert sorted(os.listdir(tmp_path)) == ["cut.log", "unfinished.log", "whole.hyp"]


def test_summarize_reads_json_lines_holding_line_separators(trained, tmp_path):
    jsonl = tmp_path / "docs.jsonl"
    examples = [{"title": "w3", "documents": ["w1 w2 \u2028 w3", "w4\u2029w5"]},
                {"documents": ["w7 w8 w9\x0cw10"]}]
    jsonl.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in examples))
    assert len(jsonl.read_text().splitlines()) > 2  # str.splitlines would cut them
    out = tmp_path / "out" / "summaries.txt"
    proc = run_cli("fairseq-hier-summarize", trained / "ck", jsonl, "-o", out, "--cpu",
                   "--no-progress-bar")
    assert proc.returncode == 0 and len(out.read_text().split("\n")) == 3  # two lines
    assert leftovers(out.parent) == []


# ------------------------------------------------------------------------------- report
def test_report_over_empty_run_folders(tmp_path):
    empty, other = tmp_path / "empty", tmp_path / "other"
    empty.mkdir()
    out = tmp_path / "report"
    proc = run_cli("fairseq-hier-report", empty, "--output-dir", out, check=False)
    assert one_line(proc) == (
        f"fairseq-hier-report: error: nothing to report: {empty} hold(s) none of train.log, "
        f"test.hyp, generate-test.txt, test.docs, efficiency.json, attention.json (is RUN_DIR "
        f"the folder of a trained system?)")
    assert not out.exists()
    other.mkdir()
    (other / "test.hyp").write_text("a b c\n")
    proc = run_cli("fairseq-hier-report", empty, other, "--output-dir", out)
    assert lines_of(proc) == [
        f"fairseq-hier-report: warning: {empty} holds none of train.log, test.hyp, "
        f"generate-test.txt, test.docs, efficiency.json, attention.json; the report only notes "
        f"what it lacks", f"{out}/report.html"]
    assert sorted(os.listdir(out)) == ["report.html", "report.md"]
