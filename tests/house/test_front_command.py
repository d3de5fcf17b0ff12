"""The front command ``fairseq-hier COMMAND ...`` and the packaging around it, through the
installed console scripts: the listing of ``fairseq-hier --help`` holds every command of
pyproject.toml in its group with its summary (the old names, aliases, not listed);
``fairseq-hier NAME`` behaves exactly as ``fairseq-hier-NAME``; an unknown command is one line naming the closest one; the ROUGE command is
``fairseq-hier-rouge`` (no bare ``rouge`` of ours); and without fairseq, ``import fairseq_hier``
and every command fail with one line naming the install step."""

import importlib.metadata
import os
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from pathlib import Path

import pytest
from conftest import BIN, ROOT, run_cli

from fairseq_hier import FAIRSEQ_MISSING, __version__
from fairseq_hier.cli import aliases, main

GROUPS = ["prepare", "train/decode", "score", "analyse", "report"]
# fairseq made missing in a fresh interpreter: the path finder no longer sees it
NO_FAIRSEQ = textwrap.dedent("""
    import sys
    from importlib.machinery import PathFinder

    class NoFairseq(PathFinder):
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name == "fairseq" or name.startswith("fairseq."):
                return None
            return super().find_spec(name, path, target)

    sys.meta_path[:] = [NoFairseq if f is PathFinder else f for f in sys.meta_path]
""")


def scripts():
    """pyproject.toml's console scripts: name -> entry point (module:function)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    return dict(project["scripts"])


def listing(text):
    """``fairseq-hier --help``'s listing: group -> {command: summary}."""
    groups, group = {}, None
    for line in text.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            group = groups.setdefault(line[:-1], {})
        elif group is not None and line.startswith("  "):
            name, summary = line.strip().split(None, 1)
            group[name] = summary
    return groups


def python(code, *args):
    """Run ``code`` in a fresh interpreter; return (exit code, output lines)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc.returncode, proc.stdout.splitlines()


def test_help_lists_every_console_script_in_its_group_with_its_summary():
    declared = scripts()
    assert declared.pop("fairseq-hier") == "fairseq_hier.cli.main:cli_main"
    old = {script: entry for script, entry in declared.items()
           if entry.startswith("fairseq_hier.cli.aliases:")}
    proc = run_cli("fairseq-hier", "--help")
    groups = listing(proc.stdout)
    assert list(groups) == GROUPS
    listed = {name: summary for commands in groups.values() for name, summary in commands.items()}
    assert sum(map(len, groups.values())) == len(listed) == len(declared) - len(old)
    for script, entry in declared.items():
        assert script.startswith("fairseq-hier-"), script
        name = script[len("fairseq-hier-"):]
        if script in old:  # an old name: runs its new command line, not listed
            assert entry == f"fairseq_hier.cli.aliases:entry.{name.replace('-', '_')}"
            assert name in aliases.ALIASES and name not in listed, script
            continue
        module = entry.split(":")[0]
        assert entry == f"{main.COMMANDS[name]}:cli_main", script  # runs the same command
        assert listed[name] == main.summary(module) and listed[name], script
        assert "\n" not in listed[name] and len(listed[name]) <= main.SUMMARY_WIDTH
    assert sorted(name[len("fairseq-hier-"):] for name in old) == sorted(aliases.ALIASES)
    assert "rouge" in groups["score"] and "report" in groups["report"]
    # no argument: the same listing, as a usage error
    bare = run_cli("fairseq-hier", check=False)
    assert bare.returncode == 2 and bare.stdout == proc.stdout
    assert run_cli("fairseq-hier", "--version").stdout == f"fairseq-hier {__version__}\n"
    # the folder for fairseq's --user-dir: the package that registers the plugin
    assert run_cli("fairseq-hier", "--user-dir").stdout == f"{ROOT / 'fairseq_hier'}\n"


def test_a_command_gives_the_same_output_as_its_alias(tmp_path):
    src, ref = tmp_path / "test.src", tmp_path / "test.tgt"
    src.write_text("title a <P> the cat sat on the mat .\nt b <P> one two three four five\n")
    ref.write_text("the cat sat .\none two .\n")
    outputs = {}
    for how in (["fairseq-hier", "baseline", "lead"], ["fairseq-hier-baseline", "lead"]):
        out = tmp_path / f"{len(how)}.hyp"
        proc = run_cli(*how, "--source", src, "--reference", ref, "-o", out)
        printed = [line.split(" | ", 1)[-1] for line in proc.stdout.splitlines()]  # no log time
        outputs[len(how)] = ([line.replace(str(out), "OUT") for line in printed], out.read_text())
    assert outputs[2] == outputs[3] and outputs[2][1] == "title a the cat\nt b one\n"
    # help and failures alike: each command keeps its own name (a command the user can type)
    for args, rc in ((["--help"], 0), (["--source", src], 2)):
        front = run_cli("fairseq-hier", "baseline", "lead", *args, check=False)
        script = run_cli("fairseq-hier-baseline", "lead", *args, check=False)
        assert front.returncode == script.returncode == rc
        assert front.stdout == script.stdout and "fairseq-hier-baseline lead" in front.stdout


@pytest.mark.parametrize("typed,hint", [
    ("roge", "did you mean 'rouge'?"),
    ("extract-atention", "did you mean 'extract-attention'?"),
    ("xyzzy", "'fairseq-hier --help' lists the commands"),
])
def test_an_unknown_command_is_one_line_with_the_closest_one(typed, hint):
    proc = run_cli("fairseq-hier", typed, "--help", check=False)
    assert proc.returncode == 2
    assert proc.stdout == f"fairseq-hier: error: unknown command '{typed}' ({hint})\n"


def test_rouge_is_fairseq_hier_rouge_and_no_bare_rouge_of_ours():
    # the installed metadata (a stale fairseq_hier.egg-info in the checkout is not what pip made)
    installed, = Path(sysconfig.get_paths()["purelib"]).glob("fairseq_hier-*.dist-info")
    ours = {ep.name: ep.value for ep in importlib.metadata.Distribution.at(installed)
            .entry_points if ep.group == "console_scripts"}
    assert ours["fairseq-hier-rouge"] == "fairseq_hier.cli.rouge:cli_main"
    assert "rouge" not in ours
    assert ours == scripts()
    bare = BIN / "rouge"  # another package's `rouge` may be installed: never ours
    assert not bare.exists() or "fairseq_hier" not in bare.read_text(errors="replace")
    front = run_cli("fairseq-hier", "rouge", "--help")
    assert front.stdout == run_cli("fairseq-hier-rouge", "--help").stdout
    assert "ROUGE-1.5.5" in front.stdout


def test_without_fairseq_the_import_fails_with_one_line_naming_the_install_step(tmp_path):
    # a Python user: `import fairseq_hier` is one line (uncaught), an ImportError (caught)
    rc, lines = python(NO_FAIRSEQ + "import fairseq_hier\n")
    assert (rc, lines) == (1, [f"-c: error: {FAIRSEQ_MISSING}"])
    rc, lines = python(NO_FAIRSEQ + textwrap.dedent("""
        try:
            import fairseq_hier
        except ImportError as e:
            print(type(e).__name__, e.name, "fairseq" in sys.modules)
    """))
    assert (rc, lines) == (0, ["FairseqMissing fairseq False"])
    # every command, through the front command and through its alias, a scoring one included
    for args in (["extract-attention", tmp_path, "--path", tmp_path / "x.pt", "--output-dir",
                  tmp_path / "o"], ["rouge", tmp_path / "ref", tmp_path / "hyp"]):
        for argv in ([BIN / "fairseq-hier", *args], [BIN / f"fairseq-hier-{args[0]}", *args[1:]]):
            rc, lines = python(NO_FAIRSEQ + "import runpy\nsys.argv = sys.argv[1:]\n"
                               "runpy.run_path(sys.argv[0], run_name='__main__')\n", *argv)
            assert (rc, lines) == (1, [f"{argv[0].name}: error: {FAIRSEQ_MISSING}"]), argv
    assert os.listdir(tmp_path) == []
    # with fairseq present, importing the package imports neither fairseq nor torch
    rc, lines = python("import sys, fairseq_hier\n"
                       "print(sorted(m for m in ('fairseq', 'torch') if m in sys.modules))")
    assert (rc, lines) == (0, ["[]"])


@pytest.mark.parametrize("args", [["--help"], ["rouge", "--help"], ["baseline", "lead", "--help"]])
def test_the_front_command_stays_light(args):
    # neither the listing nor a scoring command through the front command imports torch/fairseq
    code = textwrap.dedent("""
        import atexit, json, runpy, sys
        atexit.register(lambda: print(json.dumps(sorted(m for m in ("torch", "fairseq")
                                                        if m in sys.modules))))
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    """)
    rc, lines = python(code, BIN / "fairseq-hier", *args)
    assert rc == 0 and lines[0].startswith("usage:") and lines[-1] == "[]"
