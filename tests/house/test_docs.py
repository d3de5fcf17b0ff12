"""The documentation's links and paths: every relative Markdown link and every repository path
named in backticks in README.md, docs/*.md and examples/**/README.md exists, no page points
outside the repository, the front page stays short, no page or source file names an issue
number, and each file format is specified once: under its heading of docs/data-formats.md.

A backtick span counts as a repository path when it is one path and nothing else (no spaces,
wildcards or shell variables), has a slash, ends in a file extension or a slash, and its first
component exists at the repository root or beside the page (`examples/...`, `fairseq_hier/...`,
`../hat_common/README.md`). Spans such as `--user-dir fairseq_hier`, `data-bin/dict.txt` or
`bart.large/model.pt` name no repository location and are not checked.
"""

import ast
import re
from functools import lru_cache
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


def test_links_within_a_page_exist():
    broken = [f"{page.relative_to(ROOT)}: ({target}) has no such heading"
              for page in pages() for target in LINK.findall(prose(page))
              if target.startswith("#") and target[1:] not in anchors(page)]
    assert not broken, "broken links:\n" + "\n".join(broken)


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



# ---- one specification per format -------------------------------------------------------------
# docs/data-formats.md opens with a table, "The formats", one row per format linking its heading.
# Each format's specification is that heading's section, and nothing else restates it: no other
# page has a heading naming the format, and none of its signatures (the distinctive text of the
# specification: a field list, a layout listing, a code table) appears in another page or in a
# docstring or help text of fairseq_hier/ and examples/. Other places link to the heading.

FORMATS_PAGE = ROOT / "docs" / "data-formats.md"
FORMATS_TABLE = "The formats"
# what may separate the parts of one signature: anything but a blank line
NEAR = r"(?:[^\n]|\n(?![ \t]*\n)){0,%d}"
SIGNATURES = {
    "our-raw-format": [
        ("the layout listing `train.src   title <P> paragraph ...`",
         r"(?m)^[ \t]*\S*\.src[ \t]{2,}title <P> paragraph"),
    ],
    "your-own-data-the-json-lines-schema": [
        ("an example object with the schema's keys", "JSONL_OBJECT"),
        ("the field table", r"(?m)^\|\s*`documents`\s*\|"),
    ],
    "cluster-files": [
        ("the document separator", r"lines? holding only `\|\|\|\|\|`"),
    ],
    "multiple-references": [
        ("`.refs.jsonl` as JSON lists", r"refs\.jsonl`?" + NEAR % 120 + r"JSON list"),
    ],
    "published-summarization-layouts": [
        ("arXiv/PubMed's `abstract_text` spans",
         r"abstract_text`?" + NEAR % 60 + r"<S> \.\.\. </S>"),
        ("SAMSum's keys", r'\{"id"(?::\s*str)?,\s*"summary"(?::\s*str)?,\s*"dialogue"'),
        ("QMSum's transcripts", r"meeting_transcripts`?" + NEAR % 40 + r'"speaker"'),
        ("PreSumm's shard items", r'\{"src":\s*\[\['),
        ("WikiSum's records", r"`tgt_str`:?\s\(?(?:the )?gold text"),
    ],
    "multi-news-and-wcep": [
        ("Multi-News's document terminator", r"terminated by `\|\|\|\|\|`"),
    ],
    "markup-in-summaries": [
        ("the tag-like token", r"up to 40 characters without space"),
    ],
    "sentence-bos-files": [
        ("the `.sentences` sidecar", r"sentences`?:?\s+the number of sentences"),
    ],
    "dependency-codes": [
        ("the code table", r"NOT_A_WORD\s*=\s*-32768"),
    ],
    "conll-u-from-any-parser": [
        ("the columns read", r"ID, FORM(?:,)? and HEAD"),
    ],
    "paragraph-graphs": [
        ("the offsets array", r"offsets\.npy`?:?\s*int64"),
    ],
    "paragraph-ranker-labels-and-scores": [
        ("the labels line", r"one\s+float in \[0, 1\] per paragraph"),
    ],
    "attention-alignment-labels": [
        ("the eta dataset", r"eta\.\{bin,idx\}`?:?\s*`?P_i"),
    ],
    "the-preprocessing-record": [
        ("the record's layout", r'"generation_for":\s*\{'),
    ],
    "document-translation-inputs": [
        ("a document of the JSON-lines layout", r'\{"id"\??[:,][^{}\n]{0,40}"src"\??:\s*\['),
    ],
    "document-chunks-and-the-chunk-map": [
        ("the chunk map line", r"docid<TAB>chunk<TAB>first<TAB>last"),
    ],
    "fastbpe-codes": [
        ("a codes line", r"one merge a\s+line,\s+`LEFT RIGHT COUNT`"),
    ],
    "bart-tokenizer-files": [
        ("the placeholder of a hole", r"madeupword0000"),
    ],
    "the-demo-corpus": [
        ("the facts file", r'"distractors":\s*\['),
    ],
    "shards-preparation-split-across-machines": [
        ("the shard marker", r'\{"shard":\s*"'),
    ],
    "the-run-folder": [
        ("`run.json`'s keys", r'\{"name",\s*"arch",\s*"task",\s*"metric"\}'),
        ("`SUBSET.decode.json`'s keys", r"`multi_references`,\s*`lines`"),
    ],
}
JSONL_KEYS = re.compile(r'"(?:id|title|summary)"')


def format_table(text):
    """{anchor: name} of the table under the heading "The formats" of docs/data-formats.md."""
    section = re.search(rf"^## {FORMATS_TABLE}\n(.*?)(?=^#)", text, re.S | re.M)
    assert section, f"docs/data-formats.md has no section '{FORMATS_TABLE}'"
    return {anchor: name for name, anchor in
            re.findall(r"^\|\s*\[([^\]]+)\]\(#([^)]+)\)", section.group(1), re.M)}


def sections(text):
    """{anchor: [section text, ...]} of every heading of a page (fenced code kept)."""
    out, fence, anchor, lines = {}, False, None, []
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else re.match(r"#+\s+(.*)$", line)
        if heading:
            if anchor is not None:
                out.setdefault(anchor, []).append("\n".join(lines))
            anchor, lines = slug(heading.group(1)), []
        else:
            lines.append(line)
    if anchor is not None:
        out.setdefault(anchor, []).append("\n".join(lines))
    return out


def restatements(where, text, signatures=SIGNATURES):
    """One line per signature of a format found in ``text`` (a page or a docstring)."""
    found = []
    for anchor, marks in signatures.items():
        for what, pattern in marks:
            if pattern == "JSONL_OBJECT":
                hits = [m for m in re.findall(r"\{[^{}]{0,300}\}", text)
                        if '"documents"' in m and JSONL_KEYS.search(m)]
            else:
                hits = [m.group(0) for m in re.finditer(pattern, text)]
            for hit in hits:
                excerpt = " ".join(hit.split())[:70]
                found.append(f"{where}: restates {anchor} ({what}: '{excerpt}'); link "
                             f"docs/data-formats.md#{anchor} instead")
    return found


def section_text(text, anchor):
    """The text of a heading's section together with its subsections."""
    out, level, fence = [], None, False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else re.match(r"(#+)\s+(.*)$", line)
        if heading and level is not None and len(heading.group(1)) <= level:
            break
        if heading and slug(heading.group(2)) == anchor:
            level = len(heading.group(1))
            continue
        if level is not None:
            out.append(line)
    return "\n".join(out)


def help_texts(source):
    """The docstrings and the help/description/epilog texts of a Python source."""
    tree, out = ast.parse(source), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append(doc)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in ("help", "description", "epilog"):
                    out.append("".join(n.value for n in ast.walk(kw.value)
                                       if isinstance(n, ast.Constant) and isinstance(n.value, str)))
    return out


@lru_cache(maxsize=1)
def python_sources():
    return [path for folder in ("fairseq_hier", "examples")
            for path in sorted((ROOT / folder).rglob("*.py"))]


def test_format_table_lists_each_heading_once():
    text = FORMATS_PAGE.read_text(encoding="utf-8")
    table = format_table(text)
    assert len(table) >= 15, f"only {len(table)} formats in the table: is its pattern right?"
    found = sections(text)
    problems = [f"docs/data-formats.md: the table links #{a} ({n}), which is "
                f"{'not a heading' if a not in found else 'a heading %d times' % len(found[a])}"
                for a, n in table.items() if len(found.get(a, [])) != 1]
    level2 = [slug(h) for h in re.findall(r"^## (.*)$", FENCE.sub("", text), re.M)]
    problems += [f"docs/data-formats.md: the section '## {a}' is not in the table '{FORMATS_TABLE}'"
                 for a in level2 if a not in table and a != slug(FORMATS_TABLE)]
    problems += [f"tests/house/test_docs.py: no signature for the format #{a}"
                 for a in table if not SIGNATURES.get(a)]
    problems += [f"tests/house/test_docs.py: a signature of #{a}, which the table does not list"
                 for a in SIGNATURES if a not in table]
    assert not problems, "\n".join(problems)


def test_signatures_match_their_own_specification():
    """Each signature is text of its format's section (subsections included), so that finding it
    elsewhere finds a restatement."""
    text = FORMATS_PAGE.read_text(encoding="utf-8")
    stale = [f"#{anchor}: its signature '{what}' is not in its section"
             for anchor, marks in SIGNATURES.items() for what, pattern in marks
             if not restatements("", section_text(text, anchor), {anchor: [(what, pattern)]})]
    assert not stale, "\n".join(stale)


def format_restatements(pages, sources, text_of_page=None):
    """Every restatement of a format outside its specification: headings of other pages naming a
    format, and signatures in other pages and in docstrings and help texts."""
    read = text_of_page or (lambda p: p.read_text(encoding="utf-8"))
    table = format_table(FORMATS_PAGE.read_text(encoding="utf-8"))
    names = {slug(name): anchor for anchor, name in table.items()}
    found = []
    for page in pages:
        if page == FORMATS_PAGE:
            continue
        text, where = read(page), page.relative_to(ROOT)
        for heading in re.findall(r"^#+\s+(.*)$", FENCE.sub("", text), re.M):
            anchor = names.get(slug(heading)) or (slug(heading) if slug(heading) in table else None)
            if anchor:
                found.append(f"{where}: the heading '{heading}' specifies {anchor} again; link "
                             f"docs/data-formats.md#{anchor} instead")
        found += restatements(where, text)
    for path in sources:
        text = read(path)
        if not any(restatements("", text, {a: [m]}) for a, marks in SIGNATURES.items()
                   for m in marks):
            continue  # the quick way out: no signature anywhere in the file
        for doc in help_texts(text):
            found += restatements(path.relative_to(ROOT), doc)
    return found


def test_each_format_is_specified_once():
    found = format_restatements(pages(), python_sources())
    assert not found, "\n".join(found)


def test_a_restated_format_fails_and_is_named():
    page = ROOT / "docs" / "restating.md"
    module = ROOT / "fairseq_hier" / "restating.py"
    texts = {
        page: '# Restating\n\n## Our raw format\n\nOne example a line:\n\n```json\n'
              '{"id": "c1", "title": "t", "documents": ["d"], "summary": "s"}\n```\n',
        module: '"""Reads ``{"title"?, "documents": [str, ...]}`` lines."""\n'
                'import argparse\nargparse.ArgumentParser().add_argument(\n'
                '    "--x", help="a RUN_DIR: run.json {\\"name\\", \\"arch\\", \\"task\\", '
                '\\"metric\\"}")\n',
    }
    found = format_restatements(list(texts)[:1], list(texts)[1:], lambda p: texts[p])
    assert any(line.startswith("docs/restating.md: the heading 'Our raw format' specifies "
                               "our-raw-format") for line in found), found
    assert any(line.startswith("docs/restating.md: restates your-own-data-the-json-lines-schema")
               for line in found), found
    assert any(line.startswith("fairseq_hier/restating.py: restates "
                               "your-own-data-the-json-lines-schema") for line in found), found
    assert any(line.startswith("fairseq_hier/restating.py: restates the-run-folder")
               for line in found), found
    # the same texts linking the specification instead pass
    link = "data-formats.md#your-own-data-the-json-lines-schema"
    texts[page] = f"# Linking\n\n[The JSON-lines schema]({link}).\n"
    texts[module] = f'"""JSON lines of your own data: docs/{link}."""\n'
    assert format_restatements(list(texts)[:1], list(texts)[1:], lambda p: texts[p]) == []


def test_python_sources_link_existing_format_headings():
    """A docstring or help text naming ``docs/PAGE.md#anchor`` names a heading that exists."""
    broken = []
    for path in python_sources():
        text = path.read_text(encoding="utf-8")
        for page, anchor in re.findall(r"docs/([\w\-]+\.md)#([\w\-]+)", text):
            target = ROOT / "docs" / page
            if not target.exists() or anchor not in anchors(target):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor} has no such heading")
    assert not broken, "\n".join(broken)
