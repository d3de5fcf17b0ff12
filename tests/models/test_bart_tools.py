"""``fairseq-hier bart``: random BARTs in both layouts and conversions both ways, through the real
command, judged against the reference tools: fairseq's own ``bart_base`` loaded from the fairseq
folder and transformers' BartForConditionalGeneration from the Hugging Face folder give the same
logits (1e-5) on the same input, and fairseq's GPT-2 BPE, ``tokenizers`` and transformers'
BartTokenizer the same ids; round trips keep every weight and id; the old name ``bart-files``
gives the output of ``bart files``; bad inputs are one line and leave no file."""

import argparse
import json
import shutil

import pytest
import torch
from bart_ids import TEXTS, fairseq_ids, hf_tokenizer
from conftest import TINY_BART, WORDS, run_cli
from fairseq import checkpoint_utils
from fairseq.data import Dictionary
from fairseq.models import ARCH_MODEL_REGISTRY

import fairseq_hier
from fairseq_hier.pretrained.bart import FILES, width_flags

fairseq_hier.register()

CORPUS = [" ".join(WORDS[i:i + 9]) + " ." for i in range(0, len(WORDS), 3)] + [
    "Zürich naïve données — the papers the papers the papers", "東京 😀 it's we'll 3.14"]


def bart(*args, check=True):
    return run_cli("fairseq-hier-bart", *args, check=check)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A tiny random BART in each layout, each converted to the other, and the conversions back."""
    root = tmp_path_factory.mktemp("bart_tools")
    text = root / "corpus.txt"
    text.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    logs = {"fs": bart("random", "--output-dir", root / "fs", "--text", text, "--seed", "3").stdout,
            "hf": bart("random", "--output-dir", root / "hf", "--layout", "huggingface").stdout}
    for src, dst, to in (("fs", "fs_hf", "huggingface"), ("fs_hf", "fs_hf_fs", "fairseq"),
                         ("hf", "hf_fs", "fairseq"), ("hf_fs", "hf_fs_hf", "huggingface")):
        logs[dst] = bart("convert", "--input-dir", root / src, "--output-dir", root / dst,
                         "--to", to).stdout
    return dict(root=root, logs=logs, text=text)


def fairseq_model(folder):
    """fairseq's own BART (the architecture in model.pt's args) over the folder's dict.txt plus
    <mask>, loaded by fairseq's checkpoint reader."""
    checkpoint = checkpoint_utils.load_checkpoint_to_cpu(str(folder / "model.pt"))
    args = checkpoint["args"]
    d = Dictionary.load(str(folder / "dict.txt"))
    d.add_symbol("<mask>")
    task = argparse.Namespace(source_dictionary=d, target_dictionary=d)
    model = ARCH_MODEL_REGISTRY[args.arch].build_model(args, task)
    model.load_state_dict(checkpoint["model"], strict=True)
    return model.eval(), checkpoint


def test_random_writes_each_layout_whole_with_a_tokenizer_for_any_text(folders):
    root, logs = folders["root"], folders["logs"]
    for name, layout in (("fs", "fairseq"), ("hf", "huggingface")):
        assert sorted(p.name for p in (root / name).iterdir()) == sorted(FILES[layout])
    assert f"its widths, for fairseq-train: {' '.join(width_flags(TINY_BART))}" in logs["fs"]
    assert "(0 merges)" in logs["hf"]  # no --text: the 256 byte symbols alone
    args = fairseq_model(root / "fs")[1]["args"]
    assert (args.arch, args.encoder_layers, args.encoder_embed_dim) == ("bart_base", 2, 16)
    d = Dictionary.load(str(root / "fs" / "dict.txt"))
    for text in TEXTS + CORPUS:  # byte-level: nothing is unknown
        assert d.unk() not in fairseq_ids(root / "fs", text), text
    # the corpus's most frequent words are whole tokens
    assert len(fairseq_ids(root / "fs", " papers")) == 1 == len(fairseq_ids(root / "fs", " the"))
    assert len(fairseq_ids(root / "hf_fs", " papers")) == 7  # no merges: one id per byte


def test_round_trips_keep_every_weight_and_id(folders):
    root = folders["root"]
    first, back = fairseq_model(root / "fs")[1]["model"], fairseq_model(root / "fs_hf_fs")[1]
    assert back["args"].encoder_ffn_embed_dim == 32 and back["args"].max_source_positions == 32
    back = back["model"]  # as fairseq's BART loads it (its output projection: the tied table)
    assert back.keys() == first.keys()
    for key, value in back.items():
        assert torch.equal(value, first[key]), key
    for text in TEXTS + CORPUS:
        assert fairseq_ids(root / "fs_hf_fs", text) == fairseq_ids(root / "fs", text), text
    from safetensors.torch import load_file

    for name in ("config.json", "vocab.json", "merges.txt"):
        assert (root / "hf_fs_hf" / name).read_text() == (root / "hf" / name).read_text(), name
    a, b = (load_file(str(root / n / "model.safetensors")) for n in ("hf", "hf_fs_hf"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("fs,hf", [("fs", "fs_hf"), ("hf_fs", "hf")])
def test_transformers_reads_what_fairseq_reads(folders, fs, hf):
    """fairseq's BART (fairseq folder) and transformers' (Hugging Face folder) on one input: the
    same logits; fairseq's BPE, tokenizers and BartTokenizer: the same ids."""
    transformers = pytest.importorskip("transformers")
    root = folders["root"]
    ours, _ = fairseq_model(root / fs)
    theirs, info = transformers.BartForConditionalGeneration.from_pretrained(
        str(root / hf), output_loading_info=True)
    theirs.eval()
    assert [k for k, v in info.items() if v] == [], info  # nothing missing, unused or resized
    rows = len(ours.decoder.dictionary)
    assert theirs.config.vocab_size == rows
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, rows - 1, (2, 11), generator=g)
    src[:, -1] = 2
    prev = torch.randint(4, rows - 1, (2, 7), generator=g)
    prev[:, 0] = 2
    with torch.no_grad():
        expected = ours(src, torch.tensor([11, 11]), prev)[0]  # B x T x V
        got = theirs(input_ids=src, attention_mask=torch.ones_like(src),
                     decoder_input_ids=prev).logits
    assert got.shape == expected.shape == (2, 7, rows)
    assert expected.std() > 0.01  # not a constant: random weights at work
    assert (got - expected).abs().max().item() < 1e-5
    tokenizer = transformers.BartTokenizer.from_pretrained(str(root / hf))
    reference = hf_tokenizer(root / hf)
    for text in TEXTS + CORPUS:
        ids = tokenizer(text, add_special_tokens=False).input_ids
        assert ids == fairseq_ids(root / fs, text) == reference.encode(text).ids, text


def test_the_old_name_bart_files_gives_the_output_of_bart_files(folders, tmp_path):
    hf = folders["root"] / "fs_hf"
    new = bart("files", hf, "--output-dir", tmp_path / "new").stdout
    old = run_cli("fairseq-hier-bart-files", hf, "--output-dir", tmp_path / "old", fork=False)
    lines = old.stdout.splitlines()
    assert lines[0] == "fairseq-hier-bart-files: now 'fairseq-hier bart files' (this name will go)"
    assert [x.split(" | ")[-1].replace("/old/", "/new/") for x in lines[1:]] == \
        [x.split(" | ")[-1] for x in new.splitlines()]
    for name in ("dict.txt", "encoder.json", "vocab.bpe"):
        assert (tmp_path / "old" / name).read_text() == (tmp_path / "new" / name).read_text()


def broken(folders, tmp_path, name):
    """A copy of the folders' fairseq (fs) or Hugging Face (hf) BART with one thing wrong."""
    root = folders["root"]
    if name in ("normalize_before", "not_an_id"):
        folder = shutil.copytree(root / "fs", tmp_path / "in")
        if name == "normalize_before":
            checkpoint = torch.load(folder / "model.pt", weights_only=False)
            checkpoint["args"].encoder_normalize_before = True
            torch.save(checkpoint, folder / "model.pt")
        else:
            lines = (folder / "dict.txt").read_text().splitlines()
            (folder / "dict.txt").write_text("\n".join(lines[:4] + ["hello 1"] + lines[5:]) + "\n")
        return folder
    folder = shutil.copytree(root / "hf", tmp_path / "in")
    config = json.loads((folder / "config.json").read_text())
    del config["d_model"]
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize("case,argv,status,message", [
    ("text", ["random", "--text", "{tmp}/missing.txt"], 1,
     "cannot read {tmp}/missing.txt: No such file or directory"),
    ("file", ["random"], 1, "--output-dir {out}: is a file (a folder is expected)"),
    ("size", ["random", "--size", "huge"], 2, "argument --size: invalid choice: 'huge'"),
    ("hf", ["convert", "--input-dir", "{hf}", "--to", "huggingface"], 1,
     "{hf}: no model.pt (a fairseq BART release folder holds model.pt, dict.txt, encoder.json "
     "and vocab.bpe)"),
    ("fs", ["convert", "--input-dir", "{fs}", "--to", "fairseq"], 1,
     "{fs}: no config.json (a Hugging Face BART folder holds config.json, model.safetensors or "
     "pytorch_model.bin, vocab.json and merges.txt)"),
    ("absent", ["convert", "--input-dir", "{tmp}/none", "--to", "fairseq"], 1,
     "--input-dir {tmp}/none: not a folder"),
    ("normalize_before", ["convert", "--input-dir", "{in}", "--to", "huggingface"], 1,
     "{in}/model.pt: not a BART that Hugging Face's layout holds: --encoder-normalize-before is "
     "set (BART's layers are post-norm)"),
    ("not_an_id", ["convert", "--input-dir", "{in}", "--to", "huggingface"], 1,
     "{in}/dict.txt:5: 'hello' is not an id of {in}/encoder.json (a BART dict.txt lists GPT-2 "
     "ids)"),
    ("d_model", ["convert", "--input-dir", "{in}", "--to", "fairseq"], 1,
     "{in}/config.json: d_model is null (a BART's config.json gives it as an integer >= 1)"),
])
def test_a_bad_input_is_one_line_and_no_file(folders, tmp_path, case, argv, status, message):
    out = tmp_path / "out"
    if case == "file":
        out.write_text("")
    names = {"tmp": tmp_path, "out": out, "hf": folders["root"] / "hf",
             "fs": folders["root"] / "fs"}
    if case in ("normalize_before", "not_an_id", "d_model"):
        names["in"] = broken(folders, tmp_path, case)
    argv = [a.format(**names) for a in argv]
    proc = bart(*argv, "--output-dir", out, check=False)
    sub = argv[0]
    assert proc.returncode == status, proc.stdout
    assert proc.stdout.splitlines() == [f"fairseq-hier-bart {sub}: error: "
                                        f"{message.format(**names)}"] or (
        status == 2 and message in proc.stdout and len(proc.stdout.splitlines()) == 1), proc.stdout
    assert case == "file" or not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_folder_is_written_whole_or_not_at_all(tmp_path):
    """A writer that fails after two files were written: none of the folder's files is left, and
    no temporary file; an existing folder keeps its files as they were."""
    from fairseq_hier.pretrained.bart import write_folder

    def fail(path):
        raise OSError(28, "No space left on device")

    out = tmp_path / "bart"
    out.mkdir()
    (out / "dict.txt").write_text("before\n")
    writers = {name: (lambda path: open(path, "w").write("x")) for name in FILES["fairseq"]}
    writers["encoder.json"] = fail
    with pytest.raises(OSError, match="No space left on device"):
        write_folder(str(out), "fairseq", writers)
    assert [p.name for p in out.iterdir()] == ["dict.txt"]
    assert (out / "dict.txt").read_text() == "before\n"
