"""Run console scripts of this virtualenv as forks of one warm process (test helper).

Every fairseq command spends ~4 s importing torch and fairseq before it does anything; tests that
run dozens of tiny commands (tests/test_precision.py: each architecture trained and decoded in
three precisions) would spend most of their time there. This server imports the console scripts'
entry points once (``fairseq_cli.train:cli_main`` ...: the functions ``fairseq-train`` and the
others call), then runs each command in a forked child with its own ``sys.argv``, its stdout and
stderr written to a log file: the same code path as the command line, minus the imports. Children
never share state (fork), and at most ``--workers`` run at once. CPU only (see :func:`run_jobs`).

Protocol: a JSON list of jobs on stdin, ``{"id", "script", "args", "log", "needs": [ids]}``; a job
starts once the jobs it needs succeeded (skipped, with ``rc`` null, when one failed). One JSON
line on stdout at the end: ``{id: {"rc", "seconds", "cpu"}}`` (wall and CPU seconds).

Usage: ``python tests/cli_forkserver.py --workers 2 < jobs.json`` (see :func:`run_jobs`).
"""

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from importlib.metadata import entry_points


def _child(entry, script: str, args, log: str) -> int:
    """In the forked child: run ``entry`` as ``script args`` with output to ``log``."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.argv = [script, *args]
    # the logging fairseq_cli's modules set up when a command imports them (the server's
    # imports may have configured it otherwise): same format, level and stream
    logging.root.handlers.clear()
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
    try:
        return os.path.getsize(job["log"])
    except OSError:
        return 0


def serve(jobs, workers: int, stall: float = 600.0):
    scripts = {ep.name: ep for ep in entry_points(group="console_scripts")}
    entries = {job["script"]: scripts[job["script"]].load() for job in jobs}
    _warm_up()
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
                                    job["log"]))
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


def run_jobs(jobs, workers: int = 2, stall: float = 600.0):
    """From a test: run ``jobs`` (see the module docstring) through a fresh server process;
    returns ``{id: {"rc", "seconds", "cpu"}}``. A job is killed (``rc`` -9) only when its log
    has not grown for ``stall`` seconds (stuck), never for being slow. CPU only (no CUDA device visible): the jobs are forks, and a
    CUDA context cannot be forked."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, __file__, "--workers", str(workers), "--stall",
                           str(stall)], env=env, input=json.dumps(jobs), text=True,
                          capture_output=True)
    if proc.returncode != 0:
        raise AssertionError(f"cli_forkserver failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--stall", type=float, default=600.0)
    args = parser.parse_args()
    results = serve(json.load(sys.stdin), args.workers, args.stall)
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
