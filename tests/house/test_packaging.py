"""Packaging: pyproject.toml's declared dependencies and the pins of scripts/constraints.txt agree,
this environment holds the pinned versions, and scripts/install.sh picks the environment
(virtualenv, else conda), checks the Python version (3.11-3.13, a warning but for 3.11) and never
runs sudo: where Perl's XML::Parser is missing it names the package, and installs it itself only
on the fresh-machine path (as root, FAIRSEQ_HIER_SYSTEM_PACKAGES=1).

install.sh runs against a stand-in environment: its ``bin/python`` records its calls and passes
them to this Python (or answers the version query with a chosen one), its installed stamp makes
the script skip the pip steps, and stand-ins for perl, sudo and apt-get sit first on PATH.
"""

import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import ROOT

INSTALL = ROOT / "scripts" / "install.sh"


def declared():
    """pyproject.toml's requirements: runtime and every extra."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return {canonicalize_name(r.name): r for r in reqs}


def pins():
    """scripts/constraints.txt: name -> pinned version (``==``), and the other constraints."""
    exact, other = {}, {}
    for line in (ROOT / "scripts" / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            spec, = req.specifier
            (exact if spec.operator == "==" else other)[canonicalize_name(req.name)] = spec
    return exact, other


def test_every_declared_dependency_is_pinned_and_its_range_admits_the_pin():
    exact, _ = pins()
    requirements = declared()
    assert len(requirements) >= 20
    for name, req in requirements.items():
        assert name in exact, f"{name} is declared in pyproject.toml but not pinned"
        assert req.specifier.contains(exact[name].version), (name, str(req.specifier), exact[name])


def test_pins_outside_pyproject_are_the_build_tools_and_fairseq():
    exact, other = pins()
    assert set(exact) - set(declared()) == {"cython", "fairseq-fixed"}
    assert set(other) == {"setuptools"}


def test_this_environment_holds_the_pinned_versions():
    exact, _ = pins()
    for name, spec in exact.items():
        installed = importlib.metadata.version(name)
        if name == "torch" and not spec.contains(installed):
            continue  # install.sh keeps an installed torch >= 2.1 (a GPU build)
        assert spec.contains(installed), (name, installed, str(spec))  # 2.13.0+cpu is 2.13.0


# -------------------------------------------------------------------------------- install.sh
@pytest.fixture
def stand_ins(tmp_path):
    """(environment folder, fake bin folder, call log): the environment's python records its
    calls and answers ``sys.version_info`` queries with $FAKE_VERSION when set."""
    stamp = re.search(r"^STAMP_VERSION=(\d+)", INSTALL.read_text(), re.M).group(1)
    env_dir, bin_dir, log = tmp_path / "env", tmp_path / "fakebin", tmp_path / "calls.log"
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / f".fairseq_hier_installed_v{stamp}").touch()
    bin_dir.mkdir()
    python = env_dir / "bin" / "python"
    python.write_text(f"""#!/bin/sh
echo "python $*" >> {log}
case "$*" in *version_info*) if [ -n "$FAKE_VERSION" ]; then echo "$FAKE_VERSION"; exit 0; fi;; esac
exec {sys.executable} "$@"
""")
    for name, rc in (("perl", 1), ("sudo", 0), ("apt-get", 0)):  # perl: no XML::Parser
        (bin_dir / name).write_text(f"#!/bin/sh\necho \"{name} $*\" >> {log}\nexit {rc}\n")
    for path in (python, *bin_dir.iterdir()):
        path.chmod(0o755)
    return env_dir, bin_dir, log


def install(stand_ins, **env):
    env_dir, bin_dir, _ = stand_ins
    base = {k: v for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "FAIRSEQ_HIER_SYSTEM_PACKAGES")}
    base["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(["bash", str(INSTALL)], env=dict(base, **env), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def calls(log):
    return log.read_text().splitlines() if log.exists() else []


def test_install_uses_the_active_conda_environment(stand_ins):
    env_dir, _, log = stand_ins
    proc = install(stand_ins, CONDA_PREFIX=str(env_dir))
    assert proc.returncode == 0, proc.stdout
    assert any(c.startswith("python -c import sys") for c in calls(log)), calls(log)


def test_an_active_virtualenv_comes_before_conda(stand_ins, tmp_path):
    env_dir, _, log = stand_ins
    proc = install(stand_ins, VIRTUAL_ENV=str(env_dir), CONDA_PREFIX=str(tmp_path / "nowhere"))
    assert proc.returncode == 0, proc.stdout
    assert any(c.startswith("python") for c in calls(log))


@pytest.mark.parametrize("version,rc,message", [
    ("3.11", 0, None),
    ("3.13", 0, "[install] WARNING: Python 3.13 is accepted, but only 3.11 is tested here"),
    ("3.10", 1, "install.sh: fairseq-hier needs Python 3.11-3.13"),
])
def test_install_accepts_python_3_11_to_3_13(stand_ins, version, rc, message):
    env_dir, _, _ = stand_ins
    proc = install(stand_ins, CONDA_PREFIX=str(env_dir), FAKE_VERSION=version)
    assert proc.returncode == rc, proc.stdout
    if message is None:
        assert "Python 3." not in proc.stdout
    else:
        assert message in proc.stdout


def test_a_missing_xml_parser_is_named_and_nothing_runs_sudo(stand_ins):
    env_dir, _, log = stand_ins
    proc = install(stand_ins, CONDA_PREFIX=str(env_dir))
    assert proc.returncode == 0, proc.stdout
    assert "Perl's XML::Parser is missing" in proc.stdout
    assert "apt-get install libxml-parser-perl" in proc.stdout
    assert not [c for c in calls(log) if c.startswith(("sudo", "apt-get"))], calls(log)


@pytest.mark.skipif(os.geteuid() != 0, reason="the fresh-machine path runs as root")
def test_the_fresh_machine_path_installs_it_without_sudo(stand_ins):
    env_dir, _, log = stand_ins
    proc = install(stand_ins, CONDA_PREFIX=str(env_dir), FAIRSEQ_HIER_SYSTEM_PACKAGES="1")
    assert proc.returncode == 0, proc.stdout
    made = [c for c in calls(log) if c.startswith(("sudo", "apt-get"))]
    assert made == ["apt-get update -qq", "apt-get install -y -qq libxml-parser-perl"], made
