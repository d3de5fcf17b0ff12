"""The layers of the package (docs/design.md), read from the source with ``ast``: every import
statement of ``fairseq_hier/`` and ``benchmarks/``, those inside functions included.

- nothing outside ``fairseq_hier/cli/`` imports it;
- no import circle between modules, and none between packages ("rooms"), whose imports stay
  within what docs/design.md allows each;
- an import of one of our modules inside a function is there to keep startup light: the module
  it imports brings a third-party package (torch, fairseq, numpy, ...) that the importing module
  does not import at its top, and a comment says so.

An import of a module's own ancestor package is left out of the graphs: Python runs the
ancestors' ``__init__`` before the module in any case (``fairseq_hier.register()`` lives there).
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "fairseq_hier"
# room -> the rooms it may import (docs/design.md, "What each package holds and may import");
# a room is a subpackage or a top-level module of fairseq_hier; benchmarks/ is a room of its own
ALLOWED = {
    "errors": set(),
    "io": {"errors"},
    "workers": {"errors"},
    "safe_loading": {"errors"},
    "compat": {"errors", "io", "safe_loading"},
    "modules": {"errors"},
    "text": {"errors"},
    "data": {"errors", "io", "text", "workers"},
    "readers": {"errors", "io"},
    "criterions": {"errors"},
    "models": {"compat", "data", "errors", "modules"},
    "generation": {"data", "errors", "io", "models", "modules"},
    "tasks": {"data", "errors", "generation", "io", "models", "modules"},
    "demo": {"errors", "io", "scoring"},
    "recipes": {"errors"},
    "scoring": {"data", "errors", "io", "readers", "text"},
    "baselines": {"data", "errors", "io", "readers", "text"},
    "preparation": {"data", "errors", "io", "readers", "safe_loading", "text", "workers"},
    "ranking": {"data", "errors", "io", "preparation", "readers", "safe_loading", "tasks",
                "text", "workers"},
    "analysis": {"data", "errors", "io", "models", "preparation", "readers", "recipes",
                 "scoring", "text"},
    "inference": {"analysis", "data", "errors", "generation", "io", "preparation", "ranking",
                  "readers", "safe_loading", "scoring", "text"},
    "report": {"analysis", "data", "errors", "io", "readers", "scoring"},
    "pretrained": {"data", "errors", "io", "models", "safe_loading"},
    "runs": {"analysis", "errors", "inference", "io", "preparation", "readers", "recipes",
             "report", "scoring"},
}
ALLOWED["cli"] = set(ALLOWED) - {"cli"}
ALLOWED["benchmarks"] = set(ALLOWED) - {"cli"}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


class Module:
    """One source file: its dotted name, and each import as (line, in a function, target)."""

    def __init__(self, name: str, path: Path):
        self.name, self.path = name, path
        self.lines = path.read_text(encoding="utf-8").splitlines()
        self.tree = ast.parse("\n".join(self.lines))
        self.package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def imports(self):
        """(statement, in a function, dotted targets) of every import statement."""
        if not hasattr(self, "_imports"):
            self._imports = list(self._read_imports())
        return self._imports

    def _read_imports(self):
        in_function = set()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function |= {id(n) for n in ast.walk(node)
                                if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = self.package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                # `from pkg import name`: the submodule pkg.name where there is one, else pkg
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            else:
                continue
            yield node, id(node) in in_function, targets


def collect():
    modules = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = Module(".".join(parts), path)
    for path in sorted((ROOT / "benchmarks").glob("*.py")):  # the package `benchmarks`
        name = "benchmarks" if path.stem == "__init__" else f"benchmarks.{path.stem}"
        modules[name] = Module(name, path)
    return modules


MODULES = collect()


def resolve(importer: Module, target: str):
    """Our module that ``target`` names (the longest known prefix), or None."""
    while target:
        if target in MODULES:
            return target
        target = target.rpartition(".")[0]
    return None


def is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def with_ancestors(name: str):
    """``name`` and the packages above it that are ours (importing it runs their __init__)."""
    while name:
        if name in MODULES:
            yield name
        name = name.rpartition(".")[0]


def edges():
    """{importer: {imported: [(line, in a function), ...]}} between our modules."""
    out = {}
    for name, module in MODULES.items():
        for node, lazy, targets in module.imports():
            found = {resolve(module, t) for t in targets} - {None}
            for target in {a for t in found for a in with_ancestors(t)} - {name}:
                if not is_ancestor(target, name):
                    out.setdefault(name, {}).setdefault(target, []).append((node.lineno, lazy))
    return out


EDGES = edges()


def room(name: str) -> str:
    parts = name.split(".")
    return "benchmarks" if parts[0] == "benchmarks" else ".".join(parts[:2])[len(PACKAGE) + 1:]


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_reader_sees_every_module_and_its_imports():
    # the walk is not empty, and it sees imports at the top, inside functions and relative ones
    assert len(MODULES) > 140 and "fairseq_hier.cli.main" in MODULES
    assert "fairseq_hier.scoring.rouge" in EDGES["fairseq_hier.cli.rouge"]
    assert any(lazy for uses in EDGES["fairseq_hier.ranking.runtime"].values()
               for _, lazy in uses)
    assert "fairseq_hier.data.preprocessing_record" in EDGES["fairseq_hier.tasks.hat_summarization"]
    assert "benchmarks.harness" in EDGES["benchmarks.hat_training_cost"]


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_nothing_outside_cli_imports_cli():
    found = [f"{a} imports {b}" for a, targets in EDGES.items() for b in targets
             if room(b) == "cli" and room(a) != "cli"]
    assert not found, "\n".join(found)


def test_no_import_circle_between_modules():
    graph = {a: set(targets) for a, targets in EDGES.items()}
    assert cycles(graph) == []


def test_rooms_import_only_the_rooms_below_them():
    rooms = {}
    for a, targets in EDGES.items():
        for b in targets:  # the package itself (registration) stands above the rooms
            if room(a) != room(b) and PACKAGE not in (a, b):
                rooms.setdefault(room(a), {}).setdefault(room(b), f"{a} -> {b}")
    assert set(rooms) <= set(ALLOWED), set(rooms) - set(ALLOWED)
    wrong = [example for r, targets in rooms.items() for t, example in targets.items()
             if t not in ALLOWED[r]]
    assert not wrong, "imports docs/design.md does not allow:\n" + "\n".join(sorted(wrong))
    assert cycles({r: set(targets) for r, targets in rooms.items()}) == []
    assert cycles({r: allowed for r, allowed in ALLOWED.items()}) == []


_THIRD_PARTY = {}


def third_party_at_top(name: str) -> set:
    """The third-party packages that importing ``name`` imports (its top level, its ancestors'
    ``__init__`` and, transitively, the top level of our modules it imports there)."""
    if name in _THIRD_PARTY:
        return _THIRD_PARTY[name]
    _THIRD_PARTY[name] = set()  # while it is computed (a circle fails its own test)
    module, found = MODULES[name], set()
    ancestor = name.rpartition(".")[0]
    while ancestor:
        if ancestor in MODULES:
            found |= third_party_at_top(ancestor)
        ancestor = ancestor.rpartition(".")[0]
    for _, lazy, targets in module.imports():
        if lazy:
            continue
        for target in targets:
            ours = resolve(module, target)
            if ours is not None:
                if ours != name and not is_ancestor(ours, name):
                    found |= third_party_at_top(ours)
            elif target and target.split(".")[0] not in STDLIB:
                found.add(target.split(".")[0])
    _THIRD_PARTY[name] = found
    return found


def commented(module: Module, line: int) -> bool:
    """A comment on the import's own line, or among the imports, comments and blank lines
    directly above it (a comment may speak for a group of lazy imports)."""
    if "#" in module.lines[line - 1]:
        return True
    k = line - 1
    while k >= 1:
        text = module.lines[k - 1].strip()
        if not (text == "" or text.startswith(("#", "import ", "from "))
                or text.endswith((",", ")"))):
            return False
        if "#" in text:
            return True
        k -= 1
    return False


def test_an_import_inside_a_function_keeps_startup_light_and_says_so():
    hidden, silent, checked = [], [], 0
    for name, module in MODULES.items():
        own = third_party_at_top(name)
        for node, lazy, targets in module.imports():
            ours = {resolve(module, t) for t in targets} - {None, name}
            ours = {t for t in ours if not is_ancestor(t, name)}  # fairseq_hier: registration
            if not lazy or not ours:
                continue
            checked += 1
            where = f"{module.path.relative_to(ROOT)}:{node.lineno} imports {', '.join(ours)}"
            if not set().union(*map(third_party_at_top, ours)) - own:
                hidden.append(where + " (nothing heavier than the importer: move it up)")
            elif not commented(module, node.lineno):
                silent.append(where + " (no comment says why it is imported there)")
    assert not hidden, "\n".join(hidden)
    assert not silent, "\n".join(silent)
    assert checked >= 10  # the lazy imports that keep commands light are seen


@pytest.mark.parametrize("source,line,expected", [
    ("def f():\n    import torch  # keeps --help light\n", 2, True),
    ("def f():\n    # torch here: --help stays light\n    import numpy\n\n    import torch\n", 5,
     True),
    ("def f():\n    x = 1\n    import torch\n", 3, False),
    ("# a comment\ndef f():\n    import torch\n", 3, False),
])
def test_comment_detection(tmp_path, source, line, expected):
    path = tmp_path / "m.py"
    path.write_text(source)
    assert commented(Module("m", path), line) is expected


MODULE_DOCSTRING_MAX_LINES = 15


def test_module_docstrings_are_short():
    """A module docstring says what lives in the module and what it may import, in at most 15
    lines; file formats and design notes live in docs/ (docs/data-formats.md and the page of the
    subject), linked from the module."""
    long = []
    for folder in ("fairseq_hier", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
            if doc and len(doc.splitlines()) > MODULE_DOCSTRING_MAX_LINES:
                long.append(f"{path.relative_to(ROOT)}: {len(doc.splitlines())} lines")
    assert not long, "module docstrings over 15 lines:\n" + "\n".join(long)


def test_data_holds_what_tasks_models_and_generation_import():
    """``data/`` holds what a task, a model or generation imports (docs/design.md, "Where new code
    goes"): every module of it is imported by ``tasks/``, ``models/`` or ``generation/``, directly
    or through another module of ``data/``; a preparation step's own algorithm lives with its
    runner in ``preparation/``, a reader in ``readers/``, shared text helpers in ``text/``. No
    module is excepted (an exception would be listed here, with its reason)."""
    data = {name for name in MODULES if room(name) == "data" and name != f"{PACKAGE}.data"}
    reached = set()
    frontier = [b for a, targets in EDGES.items()
                if room(a) in ("tasks", "models", "generation") for b in targets if b in data]
    while frontier:
        name = frontier.pop()
        if name not in reached:
            reached.add(name)
            frontier += [b for b in EDGES.get(name, ()) if b in data]
    assert len(data) > 5  # the walk sees data/
    unread = sorted(data - reached)
    assert not unread, ("data/ modules that no task, model or generation module imports (move "
                        "them where their users are):\n" + "\n".join(unread))
