"""Every recipe README listed here has one "## Deviations from the paper" section, a list of
bullets, and every option it names exists: each ``--flag`` is defined by fairseq-hier or by the
installed fairseq (an ``add_argument`` string or a dataclass field of that name), and each
environment setting (```NAME=value```) is read by a script of ``examples/``. A list that names an
option nobody defines would send the reader to the paper's form through a flag that fails.
"""

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TITLE = "## Deviations from the paper"
# every recipe README that follows a paper (examples/demo has no README: it follows none)
READMES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*/README.md"))
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
ENV = re.compile(r"`([A-Z][A-Z0-9_]*)=[^`\s]*`")


def section(readme: str) -> str:
    """The text of the README's deviations section (up to the next ``## `` heading)."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    assert text.count(f"\n{TITLE}\n") == 1, f"{readme}: expected one '{TITLE}' section"
    body = text.split(f"\n{TITLE}\n", 1)[1]
    return body.split("\n## ", 1)[0]


@lru_cache(maxsize=None)
def python_sources() -> str:
    """fairseq-hier's and the installed fairseq's Python sources, in one string."""
    spec = importlib.util.find_spec("fairseq")  # located, not imported (no torch)
    folders = [ROOT / "fairseq_hier", Path(spec.origin).parent]
    return "\n".join(p.read_text(encoding="utf-8", errors="replace")
                     for folder in folders for p in sorted(folder.rglob("*.py")))


@lru_cache(maxsize=None)
def scripts() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.sh")))


def defined(flag: str) -> bool:
    field = flag.replace("-", "_")
    return (f'"--{flag}"' in python_sources() or f"'--{flag}'" in python_sources()
            or re.search(rf"^\s+{field}: ", python_sources(), re.M) is not None)


@pytest.mark.parametrize("readme", READMES)
def test_section_is_a_list(readme):
    bullets = [line for line in section(readme).splitlines() if line.startswith("- ")]
    assert bullets, f"{readme}: the deviations section lists no item"


@pytest.mark.parametrize("readme", READMES)
def test_named_options_exist(readme):
    text = section(readme)
    flags = sorted(set(FLAG.findall(text)))
    assert [f for f in flags if not defined(f)] == []
    settings = sorted(set(ENV.findall(text)))
    assert [s for s in settings if not re.search(rf"\b{s}\b", scripts())] == []


def test_an_undefined_flag_is_caught():
    """The check itself: a made-up flag and a made-up setting are not found."""
    assert not defined("no-such-flag-anywhere")
    assert defined("activation-fn") and defined("align-epsilon") and defined("clip-norm")
    assert not re.search(r"\bNO_SUCH_SETTING\b", scripts())
