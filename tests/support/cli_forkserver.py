"""Run console scripts of this virtualenv as forks of one warm process (test helper).

Every fairseq command spends ~4 s importing torch and fairseq before it does anything; tests that
run dozens of tiny commands (tests/training/test_precision.py: each architecture trained and decoded in
three precisions) would spend most of their time there. This server imports the console scripts'
entry points once (``fairseq_cli.train:cli_main`` ...: the functions ``fairseq-train`` and the
others call), then runs each command in a forked child with its own ``sys.argv``, its stdout and
stderr written to a log file, in the job's working directory and environment, stdin empty: the
same code path as the command line, minus the imports. Children never share state (fork), and at
most ``--workers`` run at once. CPU only (see :func:`run_jobs`).

One server per test process (each pytest-xdist worker), started at the first request and stopped
when the process ends (:func:`run_jobs`), serves every test file: ``conftest.run_cli`` sends it
the fairseq commands the tests run one at a time, the test files that run many commands at
once send it their whole list, and the recipes' scripts send it theirs through shims
(:func:`gateway`).

Protocol: one request per line on stdin, ``{"jobs": [...], "workers": N, "stall": S}``, each job
``{"id", "script", "args", "log", "needs": [ids], "cwd", "env", "err"}`` (``cwd``, ``env`` and
``err``, a separate stderr file, optional); a
job starts once the jobs it needs succeeded (skipped, with ``rc`` null, when one failed). One JSON
line on stdout per request once all its jobs ended: ``{id: {"rc", "seconds", "cpu"}}`` (wall and
CPU seconds).

Usage: ``python tests/support/cli_forkserver.py`` (see :func:`run_jobs`).
"""

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
import threading
from importlib.metadata import entry_points
from pathlib import Path


def _child(entry, script: str, args, log: str, cwd=None, env=None, err=None) -> int:
    """In the forked child: run ``entry`` as ``script args`` with output to ``log``, in ``cwd``
    with the environment ``env`` (the server's when None) and nothing on stdin. ``err``: stderr
    goes there instead, and the log lines go where the command's own process sends them."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd if err is None else os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the server's stdin carries its requests
    if cwd is not None:
        os.chdir(cwd)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    sys.argv = [script, *args]
    # the logging fairseq_cli's modules set up when a command imports them (the server's
    # imports may have configured it otherwise): same format, level and stream
    logging.root.handlers.clear()
    if err is not None and script != "fairseq-train":
        # in a process of its own, fairseq's imports give the root logger Python's default
        # handler (stderr, DEBUG) before the command's own logging set-up, which then does
        # nothing; only fairseq_cli.train configures the root logger first (stdout)
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    else:
        logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                            datefmt="%Y-%m-%d %H:%M:%S", stream=sys.stdout,
                            level=os.environ.get("LOGLEVEL", "INFO").upper())
    try:
        rc = entry()  # our commands' cli_main returns the exit status; fairseq's return None
        return rc if isinstance(rc, int) else 0
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: B902  (a command's failure is its exit status)
        sys.excepthook(*sys.exc_info())  # as the interpreter would (our plugin's hook included)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _warm_up():
    """What every fairseq command does first, done once before forking: our registration
    (``--user-dir``), the imports fairseq defers (torch's optimizers import ``torch._dynamo``;
    hydra composes the config)."""
    import fairseq_hier
    import torch
    import torch._dynamo  # noqa: F401
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    fairseq_hier.register()
    torch.set_num_threads(1)
    parser = options.get_training_parser()
    convert_namespace_to_omegaconf(options.parse_args_and_arch(
        parser, ["data-bin", "--task", "translation", "--arch", "transformer"]))


def _log_size(job) -> int:
    size = 0
    for path in (job["log"], job.get("err")):
        try:
            size += os.path.getsize(path) if path else 0
        except OSError:
            pass
    return size


_ENTRIES = {}


def _entry(script: str):
    """The console script's entry point (loaded once per server)."""
    if script not in _ENTRIES:
        ep, = (ep for ep in entry_points(group="console_scripts") if ep.name == script)
        _ENTRIES[script] = ep.load()
    return _ENTRIES[script]


def serve(jobs, workers: int, stall: float = 600.0):
    """Run ``jobs`` (module docstring); returns their results."""
    entries = {job["script"]: _entry(job["script"]) for job in jobs}
    results, running, pending = {}, {}, list(jobs)
    while pending or running:
        for job in list(pending):
            needs = job.get("needs", [])
            if any(n in results and results[n]["rc"] != 0 for n in needs):
                results[job["id"]] = {"rc": None, "seconds": 0.0}  # a job it needs failed
                pending.remove(job)
            elif len(running) < workers and all(n in results for n in needs):
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    os._exit(_child(entries[job["script"]], job["script"], job["args"],
                                    job["log"], job.get("cwd"), job.get("env"), job.get("err")))
                now = time.perf_counter()
                running[pid] = [job, now, 0, now]  # job, start, log size, when it last grew
                pending.remove(job)
        if running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:  # none finished: kill a child whose log has not grown for `stall` s
                time.sleep(0.05)
                for child, entry in running.items():
                    size = _log_size(entry[0])
                    if size != entry[2]:
                        entry[2], entry[3] = size, time.perf_counter()
                    elif time.perf_counter() - entry[3] > stall:
                        os.kill(child, signal.SIGKILL)
                continue
            job, start = running.pop(pid)[:2]
            results[job["id"]] = {"rc": os.waitstatus_to_exitcode(status),
                                  "seconds": round(time.perf_counter() - start, 2),
                                  "cpu": round(usage.ru_utime + usage.ru_stime, 2)}
    return results


class _Server:
    """The warm server of this process (module docstring), started at the first request."""

    def __init__(self):
        self.proc, self.lock = None, threading.Lock()

    def request(self, jobs, workers: int, stall: float):
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
                           CUDA_VISIBLE_DEVICES="")
                self.stderr = open(os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                f"cli_forkserver.{os.getpid()}.log"), "w+")
                self.proc = subprocess.Popen([sys.executable, __file__], env=env, text=True,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self.stderr)
            request = {"jobs": jobs, "workers": workers, "stall": stall}
            try:
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.flush()
                reply = self.proc.stdout.readline()
            except BrokenPipeError:
                reply = ""
            if not reply:
                self.proc.wait()
                self.stderr.seek(0)
                raise AssertionError(f"cli_forkserver failed ({self.proc.returncode}):\n"
                                     f"{self.stderr.read()[-4000:]}")
            return json.loads(reply)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


_SERVER = _Server()


def run_jobs(jobs, workers: int = 2, stall: float = 600.0):
    """From a test: run ``jobs`` (see the module docstring) through this process's warm server;
    returns ``{id: {"rc", "seconds", "cpu"}}``. A job is killed (``rc`` -9) only when its log
    has not grown for ``stall`` seconds (stuck), never for being slow. CPU only (no CUDA device
    visible): the jobs are forks, and a CUDA context cannot be forked."""
    return _SERVER.request(jobs, workers, stall)


def stop_server():
    """Stop this process's server (pytest_sessionfinish in conftest)."""
    _SERVER.stop()


def run_checked(jobs, folder, workers: int = 2, stall: float = 600.0):
    """:func:`run_jobs` with every job's arguments made strings and its log at
    ``folder/ID.log``; asserts that every job succeeded; returns ``{id: log text}``."""
    for job in jobs:
        job["args"] = [str(a) for a in job["args"]]
        job["log"] = str(Path(folder) / f"{job['id']}.log")
    results = run_jobs(jobs, workers, stall)
    logs = {name: Path(job["log"]).read_text() for name, job in
            ((j["id"], j) for j in jobs) if results[name]["rc"] is not None}
    for name, result in results.items():
        assert result["rc"] == 0, f"{name} failed ({result['rc']}):\n{logs.get(name, '')[-3000:]}"
    return logs


def main():
    _warm_up()
    for line in sys.stdin:
        request = json.loads(line)
        results = serve(request["jobs"], request["workers"], request["stall"])
        sys.stdout.write(json.dumps(results) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()


# ------------------------------------------------------------------ the recipes' commands
# A recipe's shell script runs its commands by name; :func:`gateway` puts a folder of shims first
# on its PATH, one per warm command, so that those commands run in this process's warm server
# too. A shim (the code below, written as a script) sends its command to a UNIX socket that a
# thread of the test process serves: the job runs in the warm server, and the shim prints the
# job's stderr and stdout once it ends and exits with its status. A command the shim
# cannot send (not warm: a fairseq command without --user-dir) runs as its own process.
SHIM = '''#!{python}
import json, os, socket, sys
name, args = os.path.basename(sys.argv[0]), sys.argv[1:]
real = os.path.join({bin!r}, name)
if not (name.startswith("fairseq-hier-") or name == "fairseq-preprocess" or "--user-dir" in args):
    os.execv(real, [real, *args])
conn = socket.socket(socket.AF_UNIX)
conn.connect({socket!r})
conn.sendall((json.dumps({{"script": name, "args": args, "cwd": os.getcwd(),
                          "env": dict(os.environ)}}) + "\\n").encode())
reply = json.loads(conn.makefile().readline())
for key, stream in (("err", sys.stderr), ("log", sys.stdout)):
    with open(reply[key], "rb") as f:
        stream.buffer.write(f.read())
    stream.flush()
    os.unlink(reply[key])
sys.exit(reply["rc"] if reply["rc"] >= 0 else 128 - reply["rc"])
'''
# the recipes' commands sent to the warm server: none reads its stdin (the forks get none)
SHIMMED = ("fairseq-train", "fairseq-generate", "fairseq-validate", "fairseq-preprocess",
           "fairseq-hier-record", "fairseq-hier-extract-attention", "fairseq-hier-rank")


def _serve_gateway(listener, shims: str):
    import tempfile

    def handle(conn):
        with conn:
            request = json.loads(conn.makefile().readline())
            env = dict(request["env"])  # the shims off PATH: a command's own commands run plain
            env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                          if p != shims)
            logs = []
            for suffix in (".out", ".err"):
                fd, name = tempfile.mkstemp(prefix=f"{request['script']}.", suffix=suffix)
                os.close(fd)
                logs.append(name)
            log, err = logs
            job = {"id": "recipe", "script": request["script"], "args": request["args"],
                   "log": log, "err": err, "cwd": request["cwd"], "env": env}
            try:
                rc = run_jobs([job], workers=1)["recipe"]["rc"]
            except AssertionError as e:  # the server itself failed: say so in the log
                with open(log, "a") as f:
                    f.write(str(e))
                rc = 1
            conn.sendall((json.dumps({"rc": rc, "log": log, "err": err}) + "\n").encode())

    while True:
        try:
            conn, _ = listener.accept()
        except OSError:  # closed: the recipe ended
            return
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


@contextlib.contextmanager
def gateway(bin_dir):
    """A folder of shims for :data:`SHIMMED` (put it first on a recipe's PATH), served by a
    thread of this process while the context lasts."""
    import shutil
    import socket
    import tempfile

    folder = tempfile.mkdtemp(prefix="shims.")
    path = os.path.join(folder, "gateway.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(8)
    script = os.path.join(folder, "shim")
    with open(script, "w") as f:
        f.write(SHIM.format(python=sys.executable, bin=str(bin_dir), socket=path))
    os.chmod(script, 0o755)
    for name in SHIMMED:
        os.symlink(script, os.path.join(folder, name))
    thread = threading.Thread(target=_serve_gateway, args=(listener, folder), daemon=True)
    thread.start()
    try:
        yield folder
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
