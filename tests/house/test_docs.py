"""The documentation's links and paths: every relative Markdown link and every repository path
named in backticks in README.md, docs/*.md and examples/**/README.md exists, no page points
outside the repository, the front page stays short, and no page or source file names an issue
number.

A backtick span counts as a repository path when it is one path and nothing else (no spaces,
wildcards or shell variables), has a slash, ends in a file extension or a slash, and its first
component exists at the repository root or beside the page (`examples/...`, `fairseq_hier/...`,
`../hat_common/README.md`). Spans such as `--user-dir fairseq_hier`, `data-bin/dict.txt` or
`bart.large/model.pt` name no repository location and are not checked.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRONT_PAGE_MAX_LINES = 300

# a fenced code block, removed before links and spans are read (shell and Python, not prose)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"(?:\.\./|\./)*[A-Za-z0-9_][A-Za-z0-9_.\-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*"
                  r"(?:\.[A-Za-z0-9]+|/)")
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.I)


def pages():
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "examples").glob("**/README.md"))]
    return [p for p in found if p.is_file()]


def prose(page):
    return FENCE.sub("", page.read_text(encoding="utf-8"))


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page):
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", prose(page), re.M)}


def inside_repo(path):
    try:
        path.resolve().relative_to(ROOT)
        return True
    except ValueError:
        return False


def repo_paths(page):
    """(span, resolved path) of every backtick span of a page that names a repository path."""
    out = []
    for span in SPAN.findall(prose(page)):
        span = span.strip()
        if "/" not in span.rstrip("/") and not span.endswith("/"):
            continue
        if not PATH.fullmatch(span):
            continue
        first = span.split("/")[0]
        if first in ("..", "."):
            out.append((span, page.parent / span))
        elif (ROOT / first).exists():
            out.append((span, ROOT / span))
        elif (page.parent / first).exists():
            out.append((span, page.parent / span))
    return out


def links(page):
    out = []
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z][a-z0-9+.\-]*:", target) or target.startswith("#"):
            continue
        out.append(target)
    return out


def test_relative_links_exist():
    checked, broken = 0, []
    for page in pages():
        for target in links(page):
            file_part, _, anchor = target.partition("#")
            path = page.parent / file_part
            checked += 1
            if not path.exists() or not inside_repo(path):
                broken.append(f"{page.relative_to(ROOT)}: ({target})")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: ({target}) has no such heading")
    assert not broken, "broken links:\n" + "\n".join(broken)
    assert checked >= 30, f"only {checked} relative links found: is the link pattern right?"


def test_paths_in_backticks_exist():
    checked, missing = 0, []
    for page in pages():
        for span, path in repo_paths(page):
            checked += 1
            if not path.exists():
                missing.append(f"{page.relative_to(ROOT)}: `{span}` does not exist")
            elif not inside_repo(path):
                missing.append(f"{page.relative_to(ROOT)}: `{span}` is outside the repository")
    assert not missing, "\n".join(missing)
    assert checked >= 100, f"only {checked} repository paths found: is the path pattern right?"


def test_path_detection():
    page = ROOT / "docs" / "example.md"
    spans = {
        "examples/hat_common/README.md": True,
        "fairseq_hier/": True,
        "../README.md": True,
        "--user-dir fairseq_hier": False,
        "fairseq_hier": False,
        "a/b": False,
        "data-bin/dict.txt": False,
        "bart.large/model.pt": False,
        "SPLIT.graph.KIND.{sizes,offsets,values}.npy": False,
        "$WORK/data-bin": False,
    }
    for span, expected in spans.items():
        fake = type("Page", (), {"parent": page.parent,
                                 "read_text": lambda self, encoding=None, s=span: f"`{s}`"})()
        assert bool(repo_paths(fake)) is expected, span


def test_no_page_points_outside_the_repository():
    outside = []
    for page in pages():
        for span in SPAN.findall(prose(page)) + links(page):
            if "../shared" in span or "/work/" in span:
                outside.append(f"{page.relative_to(ROOT)}: {span}")
    assert not outside, "\n".join(outside)


def test_front_page_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= FRONT_PAGE_MAX_LINES, f"README.md has {lines} lines"


def test_no_page_names_an_issue_number():
    found = []
    for page in pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE.search(line):
                found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_no_source_file_names_an_issue_number():
    found = []
    for folder in ("fairseq_hier", "tests", "benchmarks", "examples", "scripts"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".sh", ".md", ".txt") and path.is_file():
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if ISSUE.search(line):
                        found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    for name in ("Makefile", "pyproject.toml", "setup.py"):
        for number, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
