"""Every recipe README listed here has one "## Deviations from the paper" section, a list of
bullets, and every option it names exists: each ``--flag`` is defined by fairseq-hier or by the
installed fairseq (an ``add_argument`` string or a dataclass field of that name), and each
environment setting (```NAME=value```) is read by a script of ``examples/``. A list that names an
option nobody defines would send the reader to the paper's form through a flag that fails.

And the values the lists state are the code's (:data:`PINS`, one table): each row parses a value
out of a README's deviations section and compares it with every place in the code that holds it
(the table of architectures, ``fairseq_hier/recipes/architectures.py``, with its data-set
variants; the decoding rules a recipe records with its data-bin, the architectures' configs as
``fairseq-train`` builds them, the task's options, the scripts' defaults), so that a change on
either side fails here.
"""

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, NamedTuple, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
TITLE = "## Deviations from the paper"
# every recipe README that follows a paper (examples/demo has no README: it follows none)
READMES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*/README.md"))
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
ENV = re.compile(r"`([A-Z][A-Z0-9_]*)=[^`\s]*`")


def section(readme: str, title: str = TITLE) -> str:
    """The text of the README's deviations section (or another ``title``), up to the next
    ``## `` heading."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    assert text.count(f"\n{title}\n") == 1, f"{readme}: expected one '{title}' section"
    body = text.split(f"\n{title}\n", 1)[1]
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


# ------------------------------------------------------------------------ the stated values
def number(text: str):
    """A value as a README writes it: ``20,000`` -> 20000, ``1e-6`` -> 1e-06, ``0.8`` -> 0.8,
    ``off`` / ``on`` -> False / True, anything else lowercased."""
    if re.fullmatch(r"\d{1,3}(,\d{3})+", text):
        text = text.replace(",", "")
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"off": False, "on": True}.get(text.lower(), text.lower())


def stated(readme: str, pattern: str, title: str = TITLE) -> tuple:
    """The values ``pattern``'s groups match in the README's section ``title`` (lines joined)."""
    text = " ".join(section(readme, title).split())
    match = re.search(pattern, text)
    assert match, f"{readme}: its section {title!r} no longer says {pattern!r}"
    return tuple(number(g) for g in match.groups())


# ------------------------------------------------------------------------ the code's values
@lru_cache(maxsize=None)
def papers():
    """The table's rows with paper settings (fairseq_hier/recipes/architectures.py)."""
    from fairseq_hier.recipes.architectures import PAPER_SETTINGS

    return PAPER_SETTINGS


def variant(arch: str, dataset: str):
    """``arch``'s settings for a recipe's ``dataset`` (the table's data-set variants)."""
    from fairseq_hier.recipes.architectures import variant as of

    return of(arch, dataset)


def option(args, name):
    """The value after ``name`` in an option list (``True`` for a flag without one, ``None`` when
    absent), as a number where it is one."""
    args = list(args)
    if name not in args:
        return None
    i = args.index(name)
    if i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
        return number(str(args[i + 1]))
    return True


@lru_cache(maxsize=None)
def arch_args(arch: str, task: str = "hierarchical_summarization"):
    """``fairseq-train``'s arguments for ``--arch ARCH --task TASK`` and nothing else: the
    architecture's config and the task's options as ``build_model`` receives them."""
    from fairseq import options as fairseq_options

    parser = fairseq_options.get_training_parser()
    return fairseq_options.parse_args_and_arch(
        parser, ["data-bin", "--user-dir", str(ROOT / "fairseq_hier"), "--task", task,
                 "--arch", arch])


def script_text(script: str) -> str:
    """A script's lines without comments, continuation lines joined."""
    lines = (ROOT / "examples" / script).read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#")).replace(
        "\\\n", " ")


def shell_value(script: str, name: str):
    """The default a script gives ``NAME``: ``${NAME:-v}``, ``${NAME:=v}`` or ``NAME=v``; the
    same wherever the script writes it."""
    text = script_text(script)
    values = set(re.findall(rf"\$\{{{name}:[-=]([^}}]*)\}}", text))
    values |= set(re.findall(rf"(?<![\w$]){name}=([^\s;$]+)", text))
    assert len(values) == 1, f"examples/{script}: {name} = {sorted(values)}"
    return number(values.pop())


def script_option(script: str, flag: str):
    """The value a script passes with ``flag`` (the same wherever it passes it)."""
    words = shlex.split(script_text(script))
    values = {words[i + 1] for i, w in enumerate(words[:-1]) if w == flag}
    assert len(values) == 1, f"examples/{script}: {flag} {sorted(values)}"
    return number(values.pop())


@lru_cache(maxsize=None)
def shell_array(script: str, name: str) -> Tuple[str, ...]:
    """A bash array of a sourced script (the decoding rules a recipe records), with the script's
    defaults."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])  # its commands
    out = subprocess.run(["bash", "-c", f'source "$0"; printf "%s\\n" "${{{name}[@]}}"',
                          str(ROOT / "examples" / script)], capture_output=True, text=True,
                         check=True, env=dict(os.environ, PATH=path))
    return tuple(out.stdout.splitlines())


def opennmt_eps() -> float:
    """The default ``eps`` of fairseq-hier's OpenNMT LayerNorm."""
    import inspect

    from fairseq_hier.modules.opennmt_layer_norm import OpenNMTLayerNorm

    return inspect.signature(OpenNMTLayerNorm).parameters["eps"].default


def hat_examples_per_GPU() -> int:
    """hat_common/recipe.sh's default examples per update before accumulation (the table's arXiv
    batch: per-GPU batch x GPUs)."""
    arxiv = variant("hat_bart_large", "arxiv")
    return arxiv.batch * arxiv.gpus


def paper_batch(arch: str) -> int:
    """The paper's examples or tokens per update: per-GPU batch x GPUs x accumulation."""
    return paper_batch_of(papers()[arch])


def paper_batch_of(row) -> int:
    return row.batch * row.gpus * row.update_freq


def hat_generation(name: str) -> Tuple[str, ...]:
    """The decoding rules examples/hat_NAME records: the table's for its data set
    (examples/common/paper_decoding.sh)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    dataset = shell_value(f"hat_{name}/recipe.sh", "SETTINGS_DATASET")
    out = subprocess.run(["bash", "-c", 'source "$0"; paper_decoding hat_bart_large "$1"; '
                          'printf "%s\\n" "${GENERATION[@]}"',
                          str(ROOT / "examples" / "common" / "paper_decoding.sh"), dataset],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, PATH=path))
    return tuple(out.stdout.splitlines())


class Pin(NamedTuple):
    """A README's stated value(s) (the groups of ``pattern`` in its deviations section, or in the
    section ``title`` that lists the recipe's options) and the code that must hold them:
    {where: the values there, in the groups' order}."""

    readme: str
    pattern: str
    code: Dict[str, Callable[[], tuple]]
    title: str = TITLE


def liu_generation(name: str = "LIU_GENERATION") -> Tuple[str, ...]:
    """liu_ht's (or FT's) decoding rules as the wikisum recipe records them with its data-bin."""
    return shell_array("wikisum/generation.sh", name)


MDS_ARCHS = ("transformer_copy", "parsingsum_ft", "parsingsum_ht")
HAT = "examples/hat_common/README.md"
WIKISUM = "examples/wikisum/README.md"
MDS = "examples/mds_common/README.md"
NEWS = "examples/multi_news/README.md"
WCEP = "examples/wcep/README.md"
OWN = "examples/own_data/README.md"
DOC_MT = "examples/doc_mt_common/README.md"
PINS = [
    # ---- wikisum: PHT/VHT
    Pin(WIKISUM, r"of the checkpoints saved every ([\d,]+) updates\.", {
        "PAPERS pht interval": lambda: (papers()["pht"].interval,),
        "PAPERS vht interval": lambda: (papers()["vht"].interval,),
        "train_pht.sh --save-interval-updates": lambda: (
            script_option("wikisum/train_pht.sh", "--save-interval-updates"),),
        "train_pht.sh --validate-interval-updates": lambda: (
            script_option("wikisum/train_pht.sh", "--validate-interval-updates"),)}),
    # ---- wikisum: liu_ht and FT
    Pin(WIKISUM, r"ends when none is left \(or after (\d+) steps\)", {
        "PAPERS pht max_len": lambda: (papers()["pht"].max_len,),
        "PAPERS vht max_len": lambda: (papers()["vht"].max_len,),
        "generation.sh GENERATION (the record's)": lambda: (
            option(shell_array("wikisum/generation.sh", "GENERATION"), "--max-len-b"),)}),
    Pin(WIKISUM, r"at most (\d+) and at least (\d+) tokens are hiersumm's", {
        "PAPERS liu_ht": lambda: (papers()["liu_ht"].max_len, papers()["liu_ht"].min_len),
        "generation.sh LIU_GENERATION (the record's)": lambda: (
            option(liu_generation(), "--max-len-b"), option(liu_generation(), "--min-len")),
        "generation.sh FT_GENERATION": lambda: (
            option(liu_generation("FT_GENERATION"), "--max-len-b"),
            option(liu_generation("FT_GENERATION"), "--min-len"))}),
    Pin(WIKISUM, r"(`--stop-on-top-beam`) does the same \(fairseq's own rule, `beam` finished "
                 r"hypotheses, is the task's default\)", {
        "PAPERS liu_ht, LIU_GENERATION, FT_GENERATION, not PHT's, off in the task": lambda: (
            "`--stop-on-top-beam`" if option(papers()["liu_ht"].generation, "--stop-on-top-beam")
            and option(liu_generation(), "--stop-on-top-beam")
            and option(liu_generation("FT_GENERATION"), "--stop-on-top-beam")
            and not option(shell_array("wikisum/generation.sh", "GENERATION"),
                           "--stop-on-top-beam")
            and arch_args("liu_ht").stop_on_top_beam is False else "missing",)}),
    Pin(WIKISUM, r"`--keep-best-checkpoints (\d+)` ranks", {
        "train_002.sh": lambda: (
            script_option("wikisum/train_002.sh", "--keep-best-checkpoints"),)}),
    Pin(WIKISUM, r"ranks the checkpoints saved every ([\d,]+) updates \(hiersumm's", {
        "PAPERS liu_ht interval": lambda: (papers()["liu_ht"].interval,),
        "train_002.sh --save-interval-updates": lambda: (
            script_option("wikisum/train_002.sh", "--save-interval-updates"),)}),
    Pin(WIKISUM, r"`--clone-recall ([\d.]+)` counts", {
        "preparation.wikisum.CLONE_RECALL": lambda: (
            __import__("fairseq_hier.preparation.wikisum", fromlist=["x"]).CLONE_RECALL,)}),
    Pin(WIKISUM, r"liu_ht's (\d+) decoder layers follow the paper's reading", {
        "liu_ht's config": lambda: (arch_args("liu_ht").decoder_layers,)}),
    Pin(WIKISUM, r"FT has (\d+) heads, as liu_ht", {
        "liu_ht's config": lambda: (arch_args("liu_ht").encoder_attention_heads,),
        "train_ft.sh --encoder-attention-heads": lambda: (
            script_option("wikisum/train_ft.sh", "--encoder-attention-heads"),),
        "train_ft.sh --decoder-attention-heads": lambda: (
            script_option("wikisum/train_ft.sh", "--decoder-attention-heads"),)}),
    # ---- attention alignment
    Pin("examples/attention_alignment/README.md", r"`--block-previous-exceptions`, default `(\S+)`, "
        r"skipped when the two previous tokens are counted", {
            "the task's --block-previous-exceptions": lambda: (
                arch_args("pht").block_previous_exceptions,),
            "PAPERS pht": lambda: (option(papers()["pht"].generation,
                                          "--block-previous-exceptions"),),
            "wikisum/generation.sh GENERATION (the record's)": lambda: (
                option(shell_array("wikisum/generation.sh", "GENERATION"),
                       "--block-previous-exceptions"),),
            "the task's --block-previous-count-exceptions off": lambda: (
                "\u2581," if arch_args("pht").block_previous_count_exceptions is False
                else "counted",)}, title="## 3. Decode with alignment"),
    Pin("examples/attention_alignment/README.md", r"clamped to `--align-epsilon` \(([\d.e-]+)\)", {
        "the task's --align-epsilon": lambda: (arch_args("pht").align_epsilon,)}),
    Pin("examples/attention_alignment/README.md", r"`--align-live-beams` \((off) by default", {
        "the task's --align-live-beams": lambda: (arch_args("pht").align_live_beams,)}),
    # ---- multi-document summarisation (003)
    Pin(MDS, r"Self-links: (none) \(Eq\. 1, `--lga-diagonal none`, the default\)", {
        "parsingsum_ft / parsingsum_ht configs": lambda: tuple(
            {arch_args(a).lga_diagonal for a in ("parsingsum_ft", "parsingsum_ht")})}),
    Pin(MDS, r"\(`--ft-form (\S+)`, `--copy-projection (\S+)`: the defaults of `transformer_copy` "
             r"and `parsingsum_ft`\)", {
        f"{a}'s config": (lambda a=a: (arch_args(a).ft_form, arch_args(a).copy_projection))
        for a in ("transformer_copy", "parsingsum_ft")}, title="## Choices, and why"),
    Pin(MDS, r"`--attention-dropout` and `--activation-dropout` default to `--dropout` "
             r"\(([\d.]+)\)", {
        f"{a}'s config": (lambda a=a: tuple({arch_args(a).attention_dropout,
                                             arch_args(a).activation_dropout,
                                             arch_args(a).dropout}))
        for a in ("transformer_copy", "parsingsum_ft")}, title="## Choices, and why"),
    Pin(MDS, r"fairseq's `--encoder-normalize-before --decoder-normalize-before` layers, which "
             r"add the final LayerNorms\. The LayerNorm itself is OpenNMT's, .*? eps ([\d.e-]+)", {
        "transformer_copy / parsingsum_ft configs (pre-LN), OpenNMTLayerNorm's eps": lambda: (
            opennmt_eps() if all(arch_args(a).encoder_normalize_before
                                 and arch_args(a).decoder_normalize_before
                                 for a in ("transformer_copy", "parsingsum_ft")) else "post-LN",)},
        title="## Choices, and why"),
    Pin(MDS, r"fairseq's appended EOS and the padding are (left out), as OpenNMT's", {
        "the task's --coverage-count-eos": lambda: (
            "left out" if arch_args("transformer_copy").coverage_count_eos is False
            else "counted",)}, title="## Choices, and why"),
    Pin(MDS, r"sentencepiece unigram, ([\d,]+) pieces", {
        "common/spm.sh VOCAB": lambda: (shell_value("common/spm.sh", "VOCAB"),)}),
    Pin(MDS, r"`--min-len (\d+)` allows EOS after (\d+) pieces", {
        "PAPERS (FT, ParsingSum-FT)": lambda: tuple(
            {papers()[a].min_len for a in ("transformer_copy", "parsingsum_ft")}) * 2,
        "mds_common/generation.sh GENERATION_FLAT (the record's)": lambda: (
            option(shell_array("mds_common/generation.sh", "GENERATION_FLAT"), "--min-len"),)
        * 2}),
    Pin(MDS, r"the multi-step decay period \(([\d,]+) / ([\d,]+)\) is ours", {
        "PAPERS decay periods (flat / hierarchical)": lambda: (
            papers()["transformer_copy"].decay_period, papers()["parsingsum_ht"].decay_period)}),
    Pin(MDS, r"label smoothing ([\d.]+) for the hierarchical systems", {
        "PAPERS parsingsum_ht": lambda: (option(papers()["parsingsum_ht"].optimisation,
                                                "--label-smoothing"),)}),
    Pin(MDS, r"we use 003 Sec\. 3\.2's dropout ([\d.]+), Adam lr ([\d.e-]+) and step decay "
             r"for all four", {
        f"PAPERS {a}": (lambda a=a: (option(papers()[a].optimisation, "--dropout"),
                                     option(papers()[a].optimisation, "--lr")))
        for a in MDS_ARCHS}),
    Pin(MDS, r"Training targets\*\* cut to (\d+) pieces", {
        "common/parse_prepare.sh TARGET_PIECES": lambda: (
            shell_value("common/parse_prepare.sh", "TARGET_PIECES"),)}),
    Pin(NEWS, r"the (\d+) source / (\d+) target cut and (\d+)-(\d+) decoding lengths", {
        "multi_news/run.sh, common/parse_prepare.sh, the table's multi_news": lambda: (
            shell_value("multi_news/run.sh", "FLAT_POSITIONS"),
            shell_value("common/parse_prepare.sh", "TARGET_PIECES"),
            variant("transformer_copy", "multi_news").min_len,
            variant("parsingsum_ht", "multi_news").max_len),
        "PAPERS transformer_copy (the target cut: prepare.sh's only)": lambda: (
            option(papers()["transformer_copy"].model, "--max-source-positions"),
            shell_value("common/parse_prepare.sh", "TARGET_PIECES"),
            papers()["transformer_copy"].min_len, papers()["transformer_copy"].max_len)}),
    Pin(NEWS, r"label smoothing (\d+) \(flat, as OpenNMT's copy loss\) and ([\d.]+)", {
        "PAPERS transformer_copy / parsingsum_ht": lambda: (
            option(papers()["transformer_copy"].optimisation, "--label-smoothing"),
            option(papers()["parsingsum_ht"].optimisation, "--label-smoothing"))}),
    Pin(NEWS, r"dropout ([\d.]+) and Adam lr ([\d.e-]+) \(003\)", {
        "PAPERS transformer_copy": lambda: (
            option(papers()["transformer_copy"].optimisation, "--dropout"),
            option(papers()["transformer_copy"].optimisation, "--lr"))}),
    Pin(NEWS, r"Hierarchical cut\*\* (\d+) x (\d+) pieces", {
        "multi_news/run.sh": lambda: (shell_value("multi_news/run.sh", "MAX_PARAGRAPHS"),
                                      shell_value("multi_news/run.sh", "MAX_PARAGRAPH_TOKENS")),
        "PAPERS parsingsum_ht": lambda: (
            option(papers()["parsingsum_ht"].model, "--max-paragraphs"),
            option(papers()["parsingsum_ht"].model, "--max-paragraph-tokens"))}),
    Pin(WCEP, r"Decoding lengths\*\* (\d+)-(\d+) pieces", {
        f"the table's {a} wcep": (lambda a=a: (variant(a, "wcep").min_len,
                                               variant(a, "wcep").max_len))
        for a in ("transformer_copy", "parsingsum_ht")}),
    Pin(WCEP, r"for the flat systems' (\d+) cut", {
        "wcep/run.sh": lambda: (shell_value("wcep/run.sh", "FLAT_POSITIONS"),)}),
    Pin(WCEP, r"Hierarchical cut\*\* (\d+) x (\d+) pieces", {
        "wcep/run.sh": lambda: (shell_value("wcep/run.sh", "MAX_PARAGRAPHS"),
                                shell_value("wcep/run.sh", "MAX_PARAGRAPH_TOKENS"))}),
    # ---- HAT (004)
    Pin(HAT, r"`--max-span-words` \((\d+) words\)", {
        "readers.records.MAX_SPAN_WORDS": lambda: (
            __import__("fairseq_hier.readers.records", fromlist=["x"]).MAX_SPAN_WORDS,)}),
    Pin(HAT, r"(No) gradient clipping", {
        "PAPERS hat_bart_large, hat_common/recipe.sh": lambda: (
            "no" if option(papers()["hat_bart_large"].optimisation, "--clip-norm") is None
            and "--clip-norm" not in script_text("hat_common/recipe.sh")
            and arch_args("hat_bart_large", "hat_summarization").clip_norm == 0 else "yes",)}),
    Pin(HAT, r"Options of ours, (off) by default: `--position-init tile`, `--hierarchical-layers "
             r"N` with N > 1", {
        "models.hat": lambda: (
            __import__("fairseq_hier.models.hat", fromlist=["x"]).POSITION_INIT == "tile"
            or arch_args("hat_bart_large", "hat_summarization").hierarchical_layers > 1,)}),
    Pin("examples/hat_arxiv/README.md", r"the recipe trains (\d+) only", {
        "PAPERS hat_bart_large (batch x GPUs x accumulation)": lambda: (
            paper_batch("hat_bart_large"),),
        "the table's arxiv (hat_common/recipe.sh's default)": lambda: (
            paper_batch_of(variant("hat_bart_large", "arxiv")),)}),
    Pin("examples/hat_cnndm/README.md", r"Warmup: (\d+) updates", {
        "the table's cnndm (hat_cnndm/recipe.sh)": lambda: (
            variant("hat_bart_large", "cnndm").warmup,)}),
    Pin("examples/hat_cnndm/README.md", r"the recipe trains batch (\d+) for (\d+) updates", {
        "the table's cnndm (hat_cnndm/recipe.sh)": lambda: (
            paper_batch_of(variant("hat_bart_large", "cnndm")),
            variant("hat_bart_large", "cnndm").updates)}),
]
for name, unit in (("ami", "meetings"), ("icsi", "meetings"), ("samsum", "dialogues")):
    PINS.append(Pin(f"examples/hat_{name}/README.md",
                    rf"Training \((\d+) updates of (\d+) {unit}, warmup (\d+)\)", {
                        f"the table's {name} (hat_{name}/recipe.sh)": (lambda name=name: (
                            variant("hat_bart_large", name).updates,
                            paper_batch_of(variant("hat_bart_large", name)),
                            variant("hat_bart_large", name).warmup))}))
    PINS.append(Pin(f"examples/hat_{name}/README.md",
                    r"beam (\d+), length penalty (\d+), (\d+) to (\d+) tokens", {
                        f"hat_{name}/recipe.sh's data set, common/paper_decoding.sh": (
                            lambda name=name: tuple(
                                option(hat_generation(name), v)
                                for v in ("--beam", "--lenpen", "--min-len", "--max-len-b")))}))
for name in ("ami", "icsi"):  # hat_icsi/recipe.sh runs hat_ami's
    PINS.append(Pin(f"examples/hat_{name}/README.md", r"Source length (\d+), target (\d+)", {
        "hat_ami/recipe.sh": lambda: (shell_value("hat_ami/recipe.sh", "MAX_SOURCE"),
                                      shell_value("hat_ami/recipe.sh", "MAX_TARGET"))}))
PINS += [
    Pin("examples/hat_ami/README.md", r"Options of ours, not the default: `SPEAKER_IDS=(\w+)`", {
        "hat_ami/recipe.sh's default is not it": lambda: (
            "appearance" if shell_value("hat_ami/recipe.sh", "SPEAKER_IDS") != "appearance"
            else "the default",)}),
    # ---- document-level MT (004)
    Pin(DOC_MT, r"Both systems use (ReLU)", {
        "the HAT and plain archs' configs": lambda: tuple(
            {arch_args(shell_value("common/doc_mt_train.sh", a), "document_translation")
             .activation_fn for a in ("HAT_ARCH", "PLAIN_ARCH")})}),
    Pin(DOC_MT, r"attention dropout stays ([\d.]+) \(the `transformer_wmt_en_de_big` preset\) and "
                r"activation dropout (\d+)", {
        f"{a}'s config": (lambda a=a: (
            arch_args(shell_value("common/doc_mt_train.sh", a), "document_translation")
            .attention_dropout,
            arch_args(shell_value("common/doc_mt_train.sh", a), "document_translation")
            .activation_dropout)) for a in ("HAT_ARCH", "PLAIN_ARCH")}),
    Pin(DOC_MT, r"a chunk's (\d+) tokens include", {
        "common/doc_mt_prepare.sh MAX_CHUNK": lambda: (
            shell_value("common/doc_mt_prepare.sh", "MAX_CHUNK"),)}),
    Pin(DOC_MT, r"fewer than (\d+) merges yield", {
        "common/doc_mt_prepare.sh BPE_CODES": lambda: (
            shell_value("common/doc_mt_prepare.sh", "BPE_CODES"),)}),
    Pin("examples/ted_zh_en/README.md",
        r"attention dropout ([\d.]+) while `DROPOUT` is ([\d.]+)", {
        "hat_transformer_iwslt_zh_en, the table's ted_zh_en (ted_zh_en/recipe.sh)": lambda: (
            arch_args("hat_transformer_iwslt_zh_en", "document_translation").attention_dropout,
            option(variant("hat_transformer_iwslt_zh_en", "ted_zh_en").optimisation,
                   "--dropout"))}),
    Pin("examples/wmt20_doc/README.md", r"GPU counts that do not divide (\d+)", {
        "the table's wmt20_en_de (wmt20_doc/recipe.sh) GPUs x accumulation": lambda: (
            variant("hat_transformer_wmt_en_de", "wmt20_en_de").gpus
            * variant("hat_transformer_wmt_en_de", "wmt20_en_de").update_freq,)}),
    # ---- own data: the settings table applied to any data
    Pin(OWN, r"at least ([\d,]+) and at most the paper's", {
        "settings.MIN_UPDATES": lambda: (
            __import__("fairseq_hier.recipes.settings", fromlist=["x"]).MIN_UPDATES,)}),
    Pin(OWN, r"training targets \(at most ([\d,]+)\)", {
        "PAPERS max_target_positions": lambda: tuple(
            {p.max_target_positions for p in papers().values()})}),
    Pin(OWN, r"PHT/VHT at most (\d+), liu_ht (\d+)-(\d+), FT (\d+)-(\d+), "
             r"HAT (\d+)-(\d+)", {
        "PAPERS min_len / max_len": lambda: (
            papers()["pht"].max_len, papers()["liu_ht"].min_len, papers()["liu_ht"].max_len,
            papers()["transformer_copy"].min_len, papers()["transformer_copy"].max_len,
            papers()["hat_bart_large"].min_len, papers()["hat_bart_large"].max_len)}),
    Pin(OWN, r"lr 1e-3, 8k warm-up then x0\.5 every 4k, label smoothing ([\d.]+), "
             r"([\d,]+) tokens, 20k updates; beam 5, trigram blocking, (\d+)-(\d+) "
             r"tokens", {
        "PAPERS transformer / parsingsum_ft": lambda: tuple(
            {(option(papers()[a].optimisation, "--label-smoothing"), paper_batch(a),
              papers()[a].min_len, papers()[a].max_len)
             for a in ("transformer", "parsingsum_ft")}.pop())},
        title="## How the settings are chosen"),
    Pin(OWN, r"PHT/VHT (\d+) pieces, liu_ht (\d+), `parsingsum_ht` (\d+)", {
        "PAPERS --max-paragraph-tokens": lambda: tuple(
            option(papers()[a].model, "--max-paragraph-tokens")
            for a in ("pht", "liu_ht", "parsingsum_ht"))}),
    Pin(OWN, r"`VOCAB` ([\d,]+) pieces", {
        "own_data/run.sh VOCAB": lambda: (shell_value("own_data/run.sh", "VOCAB"),)}),
    Pin(OWN, r"FT batch\*\*: ([\d,]+) tokens per update", {
        "PAPERS transformer_copy": lambda: (paper_batch("transformer_copy"),)}),
]


def pin_id(pin) -> str:
    pin = pin.values[0] if hasattr(pin, "values") else pin  # a pytest.param
    return f"{Path(pin.readme).parent.name}:{re.sub(r'[^A-Za-z0-9]+', '_', pin.pattern)[:40]}"


@pytest.mark.parametrize("pin", PINS, ids=[pin_id(p) for p in PINS])
def test_stated_value_is_the_codes(pin):
    """The value a README's deviation list states is the one in each place of the code."""
    values = stated(pin.readme, pin.pattern, pin.title)
    for where, code in pin.code.items():
        assert tuple(code()) == values, (f"{pin.readme} states {values}; {where} has "
                                         f"{tuple(code())}")


def test_hat_arxiv_other_batches():
    """hat_arxiv's README: the paper's other batches come from ``PAPER_UPDATE_FREQ=4`` / ``8``
    on the recipe's examples per GPU."""
    small, middle, _ = stated("examples/hat_arxiv/README.md", r"batches of (\d+), (\d+) and (\d+)")
    freqs = stated("examples/hat_arxiv/README.md",
                   r"\(`PAPER_UPDATE_FREQ=(\d+)` / `(\d+)` give the others\)")
    assert tuple(hat_examples_per_GPU() * f for f in freqs) == (small, middle)


def test_a_changed_value_is_caught(monkeypatch):
    """The check itself: a README stating another number, or code holding another, fails."""
    pin = next(p for p in PINS if not hasattr(p, "values") and "decay period" in p.pattern)
    text = " ".join(section(pin.readme).split())
    monkeypatch.setattr(sys.modules[__name__], "section", lambda readme, title: text.replace(
        "(4,000 / 20,000)", "(4,000 / 10,000)"))
    assert stated(pin.readme, pin.pattern) == (4000, 10000) != pin.code[next(iter(pin.code))]()
