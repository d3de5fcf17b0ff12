"""One run-folder layout in every recipe and demo, WORK/runs/RUN (docs/recipes.md): a static check
over the scripts, Python helpers and READMEs of examples/ (and docs/recipes.md). None names a
checkpoints/ folder; every folder a script trains into (--save-dir), records a run in, decodes into
or scores lies under a runs/ folder, or is one its caller passes; every such path a README types
(and every fairseq-hier-report argument) does too."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCRIPTS = sorted(EXAMPLES.rglob("*.sh"))
READMES = sorted([*EXAMPLES.rglob("*.md"), ROOT / "docs" / "recipes.md"])
TEXTS = sorted([*SCRIPTS, *EXAMPLES.rglob("*.py"), *READMES])

# a checkpoints folder named as a path: `checkpoints/...`, `.../checkpoints`, "checkpoints"
# (Python); not fairseq's options (--no-epoch-checkpoints) nor the word in prose
CHECKPOINTS = re.compile(r"(?<![\w.-])checkpoints/|[/\"']checkpoints(?![\w-])")
# a shell word: a double-quoted string (with $(...) inside), or anything up to a blank
WORD = r"(\"(?:[^\"$]|\$\([^)]*\)|\$)*\"|[^\s\"]+(?:\"[^\"]*\")?[^\s\"]*)"
# the operations that write a run folder, and the word naming it
RUN_OPS = re.compile(r"(?:--save-dir|fairseq-hier[- ]record run|fairseq-hier[- ]decode"
                     r"|fairseq-hier[- ]score|/decode\.sh\"?|paper_train\.sh\"?\s+" + WORD + r")\s+"
                     + WORD)
README_OPS = re.compile(r"(?:--save-dir|fairseq-hier[- ]record run|fairseq-hier[- ]decode"
                        r"|fairseq-hier[- ]score|fairseq-hier[- ]report"
                        r"|(?:train_pht|train_liu_ht|train_ft|five_best)\.sh\s+\S+)[ =]([^\s`]+)"
                        r"|\bRUN=([^\s`]+)")
VARIABLE = re.compile(r"\$\{?(\w+)\}?")
# "$X", "${X}", "${X:-default}": one variable (its default checked as a word of its own)
ONE_VARIABLE = re.compile(r"\$\{(\w+)(?::-(.*))?\}|\$(\w+)()")


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def shell_code(path: Path) -> str:
    """The script without comments and usage lines, its continued lines joined."""
    lines = [line for line in path.read_text().splitlines()
             if not line.lstrip().startswith("#") and "usage" not in line]
    return "\n".join(lines).replace("\\\n", " ")


def assignments(code: str) -> dict:
    """Each variable's first assigned value (`X=...`, `local X=...`, `export X=...`)."""
    found = {}
    for m in re.finditer(r"(?<![\w$\-{:])(\w+)=(\"[^\"]*\"|'[^']*'|[^\s;)]+)", code):
        found.setdefault(m.group(1), m.group(2))
    return found


def expand(word: str, values: dict, depth: int = 0) -> str:
    """The word with the script's own variables replaced by their values (a few levels deep)."""
    if depth > 4:
        return word
    return VARIABLE.sub(lambda m: expand(values[m.group(1)].strip("\"'"), values, depth + 1)
                        if m.group(1) in values else m.group(0), word)


def under_runs(word: str, values: dict) -> bool:
    """A run folder under runs/, or one its caller names: a positional parameter, a variable the
    script does not set (the caller's environment), or the folder of a checkpoint given so."""
    text = expand(word.strip("\"'"), values)
    if "runs/" in text:
        return True
    if re.fullmatch(r"\$\(dirname \"?\$\{?\w+\}?\"?\)", text):
        return True
    one = ONE_VARIABLE.fullmatch(text)
    if one is None:
        return False
    name, default = one.group(1) or one.group(3), one.group(2)
    if name in values:  # a value expand left as it is: set from another variable
        return under_runs(values[name], {k: v for k, v in values.items() if k != name})
    return default is None or under_runs(default, values)


@pytest.mark.parametrize("path", TEXTS, ids=rel)
def test_no_recipe_names_a_checkpoints_folder(path):
    lines = enumerate(path.read_text().splitlines(), 1)
    hits = [f"{rel(path)}:{n}: {line.strip()}" for n, line in lines if CHECKPOINTS.search(line)]
    assert not hits, "a checkpoints folder (the run folder is WORK/runs/RUN):\n" + "\n".join(hits)


@pytest.mark.parametrize("path", SCRIPTS, ids=rel)
def test_every_run_folder_a_script_writes_is_under_runs(path):
    code = shell_code(path)
    values = assignments(code)
    bad = [m.group(0) for m in RUN_OPS.finditer(code)
           if not under_runs(m.group(m.lastindex), values)]
    assert not bad, f"{rel(path)}: run folders outside WORK/runs/: {bad}"


@pytest.mark.parametrize("path", READMES, ids=rel)
def test_every_run_folder_a_readme_types_is_under_runs(path):
    text = path.read_text().replace("\\\n", " ")
    bad = []
    for m in README_OPS.finditer(text):
        word = (m.group(1) or m.group(2)).strip("\"'")
        placeholder = (word.startswith(("-", "...")) or re.fullmatch(r"[A-Z_$.\[\]]+", word)
                       or (m.group(2) and "/" not in word))  # RUN=NAME: a name, not a folder
        if not placeholder and "runs/" not in word:
            bad.append(m.group(0))
    assert not bad, f"{rel(path)}: run folders outside WORK/runs/: {bad}"


def test_the_checks_catch_the_old_layouts():
    """What the checks above refuse: the layouts the recipes had before WORK/runs/RUN."""
    assert CHECKPOINTS.search('SAVE="$WORK/checkpoints/$RUN"')
    assert CHECKPOINTS.search('folder = os.path.join(args.work, "checkpoints")')
    assert CHECKPOINTS.search("--save-dir $R/checkpoints")
    assert not CHECKPOINTS.search("--no-epoch-checkpoints --keep-best-checkpoints 5; the 5 best "
                                  "checkpoints")
    code = ('OUT="$WORK/alignment"\nCK="$WORK/ranker/ck"\nRUN="$WORK/runs/$KIND"\nSAVE=$2\n'
            'bash "$HERE/../common/decode.sh" "$OUT/$NAME" "--protocol plain"\n'
            'fairseq-train "$BIN" --save-dir "$CK" --no-epoch-checkpoints\n'
            'fairseq-hier-record run "$RUN" --name x\nfairseq-train "$BIN" --save-dir "$SAVE"\n'
            'bash "$HERE/decode.sh" "${RUN_DIR:-$(dirname "$CKPT")}" "--protocol hiersumm"\n')
    values = assignments(code)
    words = [m.group(m.lastindex) for m in RUN_OPS.finditer(code)]
    assert words == ['"$OUT/$NAME"', '"$CK"', '"$RUN"', '"$SAVE"',
                     '"${RUN_DIR:-$(dirname "$CKPT")}"']
    assert [under_runs(w, values) for w in words] == [False, False, True, True, True]
