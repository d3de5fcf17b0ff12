"""The one worker pool (fairseq_hier/workers.py) through the commands that take ``--workers``: a
worker killed with SIGKILL mid-run ends the command within seconds with one line naming the step
and the signal, exit status 1 and no output; SIGTERM and SIGINT sent to the command's process
group end it with 143 / 130, every time, leaving neither output nor worker behind."""

import json
import os
import random
import signal
import subprocess
import time

import pytest

from conftest import BIN, write_paragraph_corpus, write_tiny_gpt2_bpe

WORDS = [f"w{i}" for i in range(300)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Inputs for each command, large enough to keep two workers busy for several seconds."""
    root = tmp_path_factory.mktemp("workers")
    write_paragraph_corpus(root / "src", root / "tgt", 12000, paragraphs=8, words=40)
    rng = random.Random(0)
    sentences = [" ".join(rng.choices(("the", "model", "reads", "long", "papers", "and", "notes"),
                                      k=12)).capitalize() + "." for _ in range(400)]
    with open(root / "bos.source", "w") as s, open(root / "bos.target", "w") as t:
        for i in range(6000):
            s.write(" ".join(sentences[(i + k) % 400] for k in range(12)) + "\n")
            t.write(sentences[i % 400] + "\n")
    with open(root / "doc.en", "w") as en, open(root / "doc.de", "w") as de, \
            open(root / "doc.docids", "w") as ids:
        for doc in range(6000):  # documents of 10 sentences, a blank line between two
            for _ in range(10):
                en.write(f"The model's notes, {' '.join(rng.choices(WORDS, k=20))}; it reads.\n")
                de.write(f"Das Modell's Notizen, {' '.join(rng.choices(WORDS, k=20))}.\n")
            if doc < 5999:
                en.write("\n")
                de.write("\n")
            ids.write(f"doc{doc}\n")
    with open(root / "parse.src", "w") as f:
        for _ in range(3000):
            f.write("A title <P> " + " <P> ".join(
                "The model reads long papers. It writes short notes about them." for _ in range(4))
                + "\n")
    write_tiny_gpt2_bpe(root / "bpe")
    return root


def commands(root, out):
    """(step, command line, outputs) of each command with --workers 2."""
    bpe = ["--gpt2-encoder-json", root / "bpe" / "encoder.json",
           "--gpt2-vocab-bpe", root / "bpe" / "vocab.bpe"]
    table = {
        "rank-labels": (["fairseq-hier-rank", "labels", "--source", root / "src", "--target",
                         root / "tgt", "-o", out / "train.labels"], ["train.labels"]),
        "graph": (["fairseq-hier-graph", "-i", root / "src", "--kind", "tfidf",
                   "--output-prefix", out / "train.graph.tfidf"],
                  ["train.graph.tfidf.values.npy", "train.graph.tfidf.sizes.npy"]),
        "rank-eval": (["fairseq-hier-rank", "eval", "--source", root / "src", "--target",
                       root / "tgt"], []),
        "sentence-bos": (["fairseq-hier-sentence-bos", "--format", "source_target", "--input",
                          root / "bos", "--output-prefix", out / "train", *bpe],
                         ["train.source", "train.target"]),
        "tokenize en": (["fairseq-hier-doc", "tokenize", "--input-prefix", root / "doc",
                         "--output-prefix", out / "tok", "--src-lang", "en", "--tgt-lang", "de"],
                        ["tok.en", "tok.de", "tok.docids"]),
        "parse": (["fairseq-hier-parse", "spacy", "--input", root / "parse.src", "--output-prefix",
                   out / "parsed"], ["parsed.conllu", "parsed.tok"]),
    }
    return {step: ([str(BIN / argv[0]), *map(str, argv[1:]), "--workers", "2",
                    "--no-progress-bar"], outputs) for step, (argv, outputs) in table.items()}


def start(argv):
    """The command in a process group of its own (as a shell job, a Slurm step), with Python's
    fault handler on (:func:`communicate` dumps its threads' stacks if it hangs) and Ctrl-C's
    default action, as a terminal's foreground job has it: a test run started in the background
    of a non-interactive shell ignores SIGINT, and its children would inherit that."""
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env=dict(os.environ, PYTHONFAULTHANDLER="1"),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def communicate(proc, timeout=20):
    """The command's output once it ends; if it has not ended within ``timeout`` seconds, a
    failure with the stacks of its threads (SIGABRT, which the fault handler prints)."""
    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            out = proc.communicate(timeout=30)[0]
        except subprocess.TimeoutExpired as e:  # still alive (a core being written)
            out = (e.output or b"").decode(errors="replace") if isinstance(e.output, bytes) \
                else e.output or ""
            os.killpg(proc.pid, signal.SIGKILL)
        alive = group_alive(proc.pid)
        raise AssertionError(f"{proc.args[0]} still running after {timeout} s (processes of its "
                             f"group alive: {alive}); its stacks:\n{out[-8000:]}") from None


def children(pid):
    """The pids of ``pid``'s child processes that are pool workers (spawned)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if ppid == pid and b"spawn_main" in cmdline:
            found.append(int(entry))
    return sorted(found)


def wait_for_workers(proc, n=2, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        workers = children(proc.pid)
        if len(workers) >= n:
            return workers
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        time.sleep(0.05)
    raise AssertionError(f"no {n} workers after {timeout} s")


def group_alive(pgid):
    """Processes of the process group ``pgid`` still running (zombies excluded)."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(int(entry))
    return alive


def printed(output):
    return [line for line in output.splitlines() if " | INFO | " not in line
            and " | WARNING | " not in line]


@pytest.mark.parametrize("step", ["rank-labels", "graph", "rank-eval", "sentence-bos",
                                  "tokenize en", "parse"])
def test_a_worker_killed_mid_run_ends_the_command_with_one_line(inputs, tmp_path, step):
    argv, outputs = commands(inputs, tmp_path / "out")[step]
    proc = start(argv)
    if step == "graph":  # its first pass counts the paragraphs: wait for the pass that writes
        deadline = time.monotonic() + 60
        while not list((tmp_path / "out").glob(".train.graph.tfidf.values.npy.*.part")):
            assert time.monotonic() < deadline and proc.poll() is None, "no second pass"
            time.sleep(0.05)
    wait_for_workers(proc)
    time.sleep(0.5)  # the workers are at work
    victim = wait_for_workers(proc)[0]
    assert proc.poll() is None, "the input is too small to kill a worker mid-run"
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    out = proc.communicate(timeout=30)[0]
    assert time.monotonic() - killed < 30
    assert proc.returncode == 1, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    prog = os.path.basename(argv[0])  # a family's subcommand names itself: "PROG SUB"
    prog += f" {argv[1]}" if not argv[1].startswith("-") else ""
    assert printed(out) == [
        f"{prog}: error: {step}: worker process {victim} was killed by SIGKILL (out of memory? "
        f"the kernel log, dmesg, says); stopped without writing the output"]
    folder = tmp_path / "out"
    assert not folder.exists() or sorted(os.listdir(folder)) == []  # no output, no .part
    assert not any((folder / name).exists() for name in outputs)
    deadline = time.monotonic() + 10
    while group_alive(proc.pid) and time.monotonic() < deadline:  # the other worker is gone
        time.sleep(0.1)
    assert group_alive(proc.pid) == []


def test_sigterm_to_the_process_group_never_hangs(inputs, tmp_path):
    argv, _ = commands(inputs, tmp_path / "out")["rank-labels"]
    rng = random.Random(1)
    handled = 0
    for attempt in range(20):
        proc = start(argv)
        if attempt % 2:  # half of the time while the workers start, half while they work
            wait_for_workers(proc)
        time.sleep(rng.uniform(0.0, 0.5))
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out = proc.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"attempt {attempt + 1}: still running 20 s after SIGTERM")
        if proc.returncode == -signal.SIGTERM:  # before Python ran the command: nothing began
            assert attempt % 2 == 0 and out == "", (attempt, out[-3000:])
        else:
            assert proc.returncode == 143, (attempt, out[-3000:])
            assert printed(out) == ["fairseq-hier-rank labels: interrupted"], (attempt, out)
            handled += 1
        assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []
        deadline = time.monotonic() + 10
        while group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group_alive(proc.pid) == [], attempt
    assert handled >= 10


@pytest.mark.parametrize("signum, group", [(signal.SIGINT, True), (signal.SIGINT, False),
                                           (signal.SIGTERM, False)])
def test_ctrl_c_and_sigterm_end_every_worker(inputs, tmp_path, signum, group):
    argv, _ = commands(inputs, tmp_path / "out")["graph"]
    proc = start(argv)
    wait_for_workers(proc)
    time.sleep(0.3)
    (os.killpg if group else os.kill)(proc.pid, signum)
    out = communicate(proc)
    assert proc.returncode == 128 + signum, out[-3000:]
    assert printed(out) == ["fairseq-hier-graph: interrupted"], out[-3000:]
    deadline = time.monotonic() + 10
    while group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group_alive(proc.pid) == []
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


# ------------------------------------------------------------------------- the pool itself
def _square(x):
    if x == 7:
        from fairseq_hier.errors import HierError

        raise HierError("item 7: refused")
    return x * x


def test_ordered_map_keeps_the_order_and_raises_the_workers_error():
    from fairseq_hier.errors import HierError
    from fairseq_hier.workers import ordered_map

    items = [3, 1, 4, 1, 5, 9, 2, 6]
    assert list(ordered_map(_square, items, 2, "squares", in_flight=3)) == [x * x for x in items]
    assert list(ordered_map(_square, items, 1, "squares")) == [x * x for x in items]
    with pytest.raises(HierError, match="^item 7: refused$"):
        list(ordered_map(_square, [1, 2, 7, 3], 2, "squares"))


def test_exit_description_names_the_signal():
    from fairseq_hier.workers import exit_description

    assert exit_description(-9) == "killed by SIGKILL"
    assert exit_description(-15) == "killed by SIGTERM"
    assert exit_description(3) == "exited with status 3"
    assert json.dumps(exit_description(None)) == '"ended"'


def test_parse_with_workers_writes_what_one_process_writes():
    """Chunks parsed by two workers, examples numbered across the chunks, equal byte for byte
    the one-process parse (and the counts sum to its counts)."""
    import io

    from fairseq_hier.preparation.parse import (DEFAULT_MODEL, ParseCounts, load_parser,
                                                parse_lines, parse_parallel)

    lines = [f"Title {i} <P> The model reads {i} papers. It writes notes. <P>  <P> We agree."
             for i in range(10)]
    outputs = []
    for workers in (1, 2):
        conllu, tok, counts = io.StringIO(), io.StringIO(), ParseCounts()
        if workers == 1:
            parse_lines(lines, load_parser(DEFAULT_MODEL), conllu, tok, counts=counts)
        else:
            parse_parallel(lines, DEFAULT_MODEL, conllu, tok, "<P>", 64, workers, counts,
                           chunk=3)
        outputs.append((conllu.getvalue(), tok.getvalue(), counts))
    assert outputs[0] == outputs[1]
    assert outputs[1][2].lines == 10 and "# newdoc id = 10\n" in outputs[1][0]
