"""The score step's protocols against literal re-implementations of the recipes' shell, sed and
Python (oracles written here), and ``fairseq-hier-score`` against ``fairseq-hier-rouge`` run by
hand on the same files, byte for byte. No fairseq: the run folders are written by hand (what
``fairseq-hier-decode`` leaves: SUBSET.hyp.raw and SUBSET.decode.json)."""

import json
import re
import shutil
import subprocess
import sys

import pytest
from conftest import BIN, run_cli

from fairseq_hier.runs.protocols import PROTOCOLS

# what a hypothesis file and a reference file can hold that each normalisation must get right
HYPOTHESES = ["The River <unk> was built .<Q> Caf<unk> is   here . <Q>",
              "",
              "a < b > c <unk> d",
              "Ünïcode words and a\ttab .",
              "plain words . <q> more words ."]
REFERENCES = "the river was built . <q> cafe is here .\n<t> x </t>\n<unk> a < b\n" \
             "unicode words .\ntrailing   spaces  \n"

# examples/wikisum/postprocess.py as the recipe ran it (python postprocess.py < raw > hyp)
POSTPROCESS_PY = '''
import sys
from fairseq_hier.preparation.wikisum import Converter
UNK = "UNK"
def hypothesis(line):
    return Converter.reference(line).replace("<unk>", UNK)
for line in sys.stdin:
    print(hypothesis(line))
'''
# examples/hat_common/decode.sh's heredoc (several references per example, PTB-tokenised)
HAT_REFS_PY = '''
import json, sys
from fairseq_hier.io import write_text
from fairseq_hier.preparation.ptb_tokenize import PTBTokenizer
from fairseq_hier.scoring.rouge import read_references
tokenize = PTBTokenizer()
write_text(sys.argv[2], "".join(json.dumps([tokenize(r) for r in refs], ensure_ascii=False) + "\\n"
                                for refs in read_references([sys.argv[1]])))
'''


def sed(*expressions):
    """The recipes' ``sed -e ...`` as Python: each expression ``s/PATTERN/REPL/g`` applied to
    every line in turn."""
    rules = [re.fullmatch(r"s/(.*)/(.*)/g", e).groups() for e in expressions]

    def apply(text: str) -> str:
        out = []
        for line in text.split("\n"):
            for pattern, repl in rules:
                line = re.sub(pattern, repl, line)
            out.append(line)
        return "\n".join(out)
    return apply


@pytest.fixture
def files(tmp_path):
    raw = tmp_path / "test.hyp.raw"
    raw.write_text("".join(h + "\n" for h in HYPOTHESES), encoding="utf-8")
    ref = tmp_path / "refs.txt"
    ref.write_text(REFERENCES.rstrip("\n"), encoding="utf-8")  # no final line end, as sed keeps
    return raw, ref


def test_plain_copies_both_sides_byte_for_byte(files):
    raw, ref = files
    plain = PROTOCOLS["plain"]
    assert plain.hypotheses(str(raw)) == raw.read_bytes()
    assert plain.references(str(ref)) == ref.read_bytes()  # cp: no line end added


def test_hiersumm_hypotheses_are_postprocess_py_byte_for_byte(files, tmp_path):
    raw, ref = files
    with open(raw, "rb") as stdin:
        oracle = subprocess.run([sys.executable, "-c", POSTPROCESS_PY], stdin=stdin,
                                capture_output=True, check=True).stdout
    out = PROTOCOLS["hiersumm"].hypotheses(str(raw))
    assert out == oracle
    assert out.decode().split("\n")[:3] == ["the river UNK was built . <q> cafUNK is here .", "",
                                            "a < b > c UNK d"]
    assert PROTOCOLS["hiersumm"].references(str(ref)) == ref.read_bytes()  # copied


def test_parsingsum_is_the_recipes_sed(files):
    raw, ref = files
    parsingsum = PROTOCOLS["parsingsum"]
    hyp_sed = sed("s/<unk>/UNK/g", "s/[<>]/ /g")
    ref_sed = sed("s/[<>]/ /g")
    assert parsingsum.hypotheses(str(raw)).decode() == hyp_sed(raw.read_text())
    assert parsingsum.references(str(ref)).decode() == ref_sed(ref.read_text())
    assert parsingsum.hypotheses(str(raw)).decode().split("\n")[2] == "a   b   c UNK d"
    if shutil.which("sed"):  # and GNU sed itself, as the script ran it
        assert parsingsum.hypotheses(str(raw)) == subprocess.run(
            ["sed", "-e", "s/<unk>/UNK/g", "-e", "s/[<>]/ /g", str(raw)], capture_output=True,
            check=True).stdout
        assert parsingsum.references(str(ref)) == subprocess.run(
            ["sed", "-e", "s/[<>]/ /g", str(ref)], capture_output=True, check=True).stdout


def test_ptb_is_ptb_tokenize_and_the_hat_heredoc(files, tmp_path):
    raw, ref = files
    ptb = PROTOCOLS["ptb"]
    for src in (raw, ref):
        out = tmp_path / f"{src.name}.ptb"
        run_cli("fairseq-hier-ptb-tokenize", src, out)
        assert ptb.hypotheses(str(src)) == out.read_bytes()
        assert ptb.references(str(src)) == out.read_bytes()
    lists = tmp_path / "test.refs.jsonl"
    lists.write_text(json.dumps(["Don't stop.", "It's <q> here."]) + "\n"
                     + json.dumps(["Ünïcode \"quoted\" text."]) + "\n" + json.dumps(["x"]) + "\n"
                     + json.dumps(["y"]) + "\n" + json.dumps(["z"]) + "\n", encoding="utf-8")
    oracle = tmp_path / "oracle.jsonl"
    subprocess.run([sys.executable, "-c", HAT_REFS_PY, str(lists), str(oracle)], check=True)
    assert ptb.reference_lists(str(lists)) == oracle.read_bytes()
    assert json.loads(oracle.read_text().splitlines()[0]) == ["Do n't stop .", "It 's <q> here ."]


# ---------------------------------------------------------------- the score command, by hand
def decoded_folder(folder, refs, multi=None, task="hierarchical_summarization"):
    """A run folder as fairseq-hier-decode leaves it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.hyp.raw").write_text("".join(h + "\n" for h in HYPOTHESES))
    (folder / "test.decode.json").write_text(json.dumps({
        "data": "unused", "checkpoint": "unused", "subset": "test", "task": task,
        "arch": "pht", "references": str(refs), "multi_references": multi and str(multi),
        "lines": "H", "examples": len(HYPOTHESES), "command": ["fairseq-generate"]}))
    return folder


def score(folder, *args, check=True):
    return run_cli("fairseq-hier-score", folder, *args, check=check) \
        if (BIN / "fairseq-hier-score").exists() else \
        subprocess.run([sys.executable, "-m", "fairseq_hier.cli.score", str(folder), *args],
                       capture_output=True, text=True, check=check)


def rouge_by_hand(refs, hyp, out, *options):
    run_cli("fairseq-hier-rouge", refs, hyp, *options, "--saveto", out)
    return out.read_bytes()


# each protocol's fairseq-hier-rouge runs as its recipe ran them: [(report, options)]
RECIPES = {
    "plain": [(".rouge.txt", ["-zs"])],
    "hiersumm": [(".rouge.txt", ["-e", "<q>", "-zs", "--also-rouge-score"])],
    "parsingsum": [(".rouge.txt", ["-zs", "--also-rouge-score"]),
                   (".rouge_whole.txt", ["-zs", "-e", "<nosplit>"])],
    "ptb": [(".rouge.txt", ["-zs", "--also-rouge-score"])],
}


def hand_normalised(protocol, folder, refs, hand):
    """SUBSET.hyp and SUBSET.ref the way the recipe's shell wrote them, in ``hand``."""
    raw = folder / "test.hyp.raw"
    hyp, ref = hand / "test.hyp", hand / "test.ref"
    if protocol == "plain":
        shutil.copy(raw, hyp)
        shutil.copy(refs, ref)
    elif protocol == "hiersumm":
        with open(raw, "rb") as stdin, open(hyp, "wb") as out:
            subprocess.run([sys.executable, "-c", POSTPROCESS_PY], stdin=stdin, stdout=out,
                           check=True)
        shutil.copy(refs, ref)
    elif protocol == "parsingsum":
        hyp.write_text(sed("s/<unk>/UNK/g", "s/[<>]/ /g")(raw.read_text()))
        ref.write_text(sed("s/[<>]/ /g")(refs.read_text()))
    else:
        run_cli("fairseq-hier-ptb-tokenize", raw, hyp)
        run_cli("fairseq-hier-ptb-tokenize", refs, ref)
    return hyp, ref


@pytest.mark.parametrize("protocol", list(RECIPES))
def test_score_writes_what_the_recipe_wrote(protocol, tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("the river was built . <q> cafe is here .\nsome words here .\n"
                    "a c d words .\nunicode words and a tab .\nplain words . <q> more .\n")
    folder = decoded_folder(tmp_path / "run", refs)
    (folder / "test.refs.jsonl").write_text("stale\n")  # from an earlier decoding: removed
    proc = score(folder, "--protocol", protocol)
    hand = tmp_path / "hand"
    hand.mkdir()
    hyp, ref = hand_normalised(protocol, folder, refs, hand)
    assert (folder / "test.hyp").read_bytes() == hyp.read_bytes()
    assert (folder / "test.ref").read_bytes() == ref.read_bytes()
    assert not (folder / "test.refs.jsonl").exists()
    for report, options in RECIPES[protocol]:
        assert (folder / f"test{report}").read_bytes() == rouge_by_hand(
            ref, hyp, hand / f"test{report}", *options)
    assert f"(protocol {protocol}): ROUGE-1.5.5 F1 [95% interval]" in proc.stdout
    assert re.search(r"ROUGE-1 +\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", proc.stdout)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["test.hyp.raw", "test.decode.json", "test.hyp", "test.ref",
         *(f"test{report}" for report, _ in RECIPES[protocol])])


@pytest.mark.parametrize("protocol", ["plain", "ptb"])
def test_multi_references_are_scored_together(protocol, tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("".join(f"reference {i} words .\n" for i in range(len(HYPOTHESES))))
    multi = tmp_path / "refs.jsonl"
    multi.write_text("".join(json.dumps([f"reference {i} words .", "Other words here."]) + "\n"
                             for i in range(len(HYPOTHESES))))
    folder = decoded_folder(tmp_path / "run", refs, multi)
    score(folder, "--protocol", protocol)
    hand = tmp_path / "hand"
    hand.mkdir()
    hyp, _ = hand_normalised(protocol, folder, refs, hand)
    lists = hand / "test.refs.jsonl"
    if protocol == "plain":
        shutil.copy(multi, lists)
    else:
        subprocess.run([sys.executable, "-c", HAT_REFS_PY, str(multi), str(lists)], check=True)
    assert (folder / "test.refs.jsonl").read_bytes() == lists.read_bytes()
    options = ["-zs"] + (["--also-rouge-score"] if protocol == "ptb" else [])
    assert (folder / "test.rouge.txt").read_bytes() == rouge_by_hand(
        lists, hyp, hand / "test.rouge.txt", *options)


def one_line_error(proc, prog="fairseq-hier-score"):
    output = (proc.stdout or "") + (getattr(proc, "stderr", "") or "")
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), output
    return lines[0]


def test_bad_inputs_of_score(tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("a .\n" * len(HYPOTHESES))
    empty = tmp_path / "empty"
    empty.mkdir()
    line = one_line_error(score(empty, check=False))
    assert "test.decode.json not found: decode split 'test' first" in line
    folder = decoded_folder(tmp_path / "run", refs)
    line = one_line_error(score(folder, "--protocol", "nosuch", check=False))
    assert "--protocol nosuch: no such protocol (one of: plain, hiersumm, parsingsum, ptb)" in line
    line = one_line_error(score(folder, "--seed", "3", check=False))
    assert "--seed: applies to document BLEU" in line
    refs.write_text("a .\n")  # the references changed since the decoding: wrong line count
    line = one_line_error(score(folder, check=False))
    assert f"{refs}: has 1 lines, {folder / 'test.hyp.raw'} has {len(HYPOTHESES)}" in line
    assert sorted(p.name for p in folder.iterdir()) == ["test.decode.json", "test.hyp.raw"]
    refs.write_text("a .\n" * len(HYPOTHESES))
    multi = tmp_path / "refs.jsonl"
    multi.write_text('["a ."]\n' * len(HYPOTHESES))
    folder = decoded_folder(tmp_path / "multi", refs, multi)
    line = one_line_error(score(folder, "--protocol", "hiersumm", check=False))
    assert "--protocol hiersumm scores one reference per example" in line
    assert not any(p.name.endswith(".part") for p in tmp_path.rglob("*"))


REF_DOCS = [["The cat sat on the mat.", "It wasn't happy, though."],
            ["We'll meet at noon.", "Bring the blue file.", "Don't be late!"],
            ["Prices rose by 3% in May.", "Analysts had expected less."]]
HYP_DOCS = [["The cat sat on a mat .", "It wasn &apos;t hap@@ py ."],
            ["We will meet at noon .", "Bring the blue file .", "Do not be late !"],
            ["Prices rose 3 % in May .", "Analy@@ sts expected less ."]]


def write_doc_split(folder):
    """A document-translation split as the recipes lay it out: REF (a sentence a line,
    documents split by an empty line), its .docids, a chunk map of one sentence per chunk, and
    a complete fairseq-generate log of the chunks, out of order."""
    folder.mkdir(parents=True)
    (folder / "test.en").write_text("\n\n".join("\n".join(d) for d in REF_DOCS) + "\n")
    (folder / "test.docids").write_text("".join(f"talk{i}\n" for i in range(len(REF_DOCS))))
    rows = [f"talk{d}\t{k}\t{k}\t{k}\n" for d, doc in enumerate(HYP_DOCS) for k in range(len(doc))]
    (folder / "test.chunks").write_text("".join(rows))
    hyps = [h for doc in HYP_DOCS for h in doc]
    log = folder / "generate-test.txt"
    log.write_text("".join(reversed([f"S-{i}\tx\nH-{i}\t-0.5\t{h}\nP-{i}\t-0.5\n"
                                     for i, h in enumerate(hyps)]))
                   + "Generate test with beam=5: BLEU4 = 0.00\n")
    return log


def test_score_of_a_bleu_run_is_doc_bleu_run_dir(tmp_path):
    """metric bleu: the files of ``fairseq-hier-doc-bleu LOG --chunks --ref --tgt-lang --run-dir
    --subset`` byte for byte, and the score printed with its interval."""
    data = tmp_path / "data-bin"
    log = write_doc_split(data)
    run = tmp_path / "runs" / "hat"
    run.mkdir(parents=True)
    shutil.copy(log, run / "generate-test.txt")
    (run / "run.json").write_text(json.dumps({"name": "hat", "arch": "hat_mt", "task":
                                              "document_translation", "metric": "bleu"}))
    run_cli("fairseq-hier-doc-bleu", run / "generate-test.txt", "--chunks", data / "test.chunks",
            "--reference", data / "test.en", "--tgt-lang", "en", "--run-dir", run,
            "--subset", "test")
    by_hand = {name: (run / name).read_bytes() for name in ("test.docs", "test.ref",
                                                           "test.bleu.txt")}
    for name in by_hand:
        (run / name).unlink()
    (run / "test.decode.json").write_text(json.dumps({
        "data": str(data), "checkpoint": "unused", "subset": "test",
        "task": "document_translation", "arch": "hat_mt", "references": str(data / "test.en"),
        "multi_references": None, "lines": "H", "examples": 7,
        "command": ["fairseq-generate", str(data), "--source-lang", "de", "--target-lang", "en"]}))
    proc = score(run)
    for name, text in by_hand.items():
        assert (run / name).read_bytes() == text, name
    assert re.search(r"test\.bleu\.txt: document BLEU \d+\.\d\d \[95% interval \d+\.\d\d ± "
                     r"\d+\.\d\d\], chrF \d+\.\d\d \(hat, 3 documents\)", proc.stdout)
    line = one_line_error(score(run, "--protocol", "ptb", check=False))
    assert "the protocols are ROUGE's" in line


def test_hypotheses_written_otherwise_are_scored_with_references(tmp_path):
    """A baseline's run folder (run.json and SUBSET.hyp.raw, no decoding): --references."""
    refs = tmp_path / "refs.txt"
    refs.write_text("".join(f"reference {i} . <q> more .\n" for i in range(len(HYPOTHESES))))
    folder = tmp_path / "lead"
    folder.mkdir()
    (folder / "test.hyp.raw").write_text("".join(h + "\n" for h in HYPOTHESES))
    (folder / "run.json").write_text(json.dumps({"name": "lead", "arch": "lead", "task":
                                                 "hierarchical_summarization",
                                                 "metric": "rouge"}))
    line = one_line_error(score(folder, "--protocol", "hiersumm", check=False))
    assert "or give --references for hypotheses written otherwise" in line
    score(folder, "--protocol", "hiersumm", "--references", refs)
    hand = tmp_path / "hand"
    hand.mkdir()
    hyp, ref = hand_normalised("hiersumm", folder, refs, hand)
    assert (folder / "test.hyp").read_bytes() == hyp.read_bytes()
    assert (folder / "test.rouge.txt").read_bytes() == rouge_by_hand(
        ref, hyp, hand / "test.rouge.txt", "-e", "<q>", "-zs", "--also-rouge-score")
