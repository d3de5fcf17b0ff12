"""HAT's sentence attention per hypothesis (004 Sec. 6, Figs. 2-3): the generator
(fairseq_hier/generation/sentence_attention.py) and the heatmap command
(fairseq_hier/cli/heatmap.py).

Generator: beam 3 over a left-padded batch of 3, 1 and 4 sentences, on both HAT bases; the
attention of every returned hypothesis equals teacher forcing of that hypothesis (which checks
fairseq's beam reordering of it), and the search equals fairseq's own."""

import json
import subprocess
import sys

import pytest
import torch
from fairseq.sequence_generator import SequenceGenerator

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import TINY_HAT, bos_source, build_model, left_pad, make_dict
from fairseq_hier.cli import analyse
from fairseq_hier.report import attention_heatmap, sentence_heatmap
from fairseq_hier.report.sentence_heatmap import parse_sentence_alignment
from fairseq_hier.generation.sentence_attention import (SentenceAttentionSequenceGenerator,
                                                        format_sentence_alignment)
from fairseq_hier.models.hat import HATModel

fairseq_hier.register()


# ------------------------------------------------ tiny models (conftest)
build = build_model
D = make_dict(30)
TINY = TINY_HAT
ARCHS = ["hat_bart_base", "hat_transformer_iwslt_zh_en"]
# EOS output row scale: with it, the hypotheses of seed 0 end at different steps (2..8 tokens)
EOS_SCALE = {"hat_bart_base": -1.0, "hat_transformer_iwslt_zh_en": 4.0}


def tiny_hat(arch):
    """A deterministic tiny HAT whose weights are drawn wide (std 0.3): BART's init (0.02)
    gives near-uniform attention and tied beams, which would make the checks weak."""
    torch.manual_seed(0)
    model = build(arch, D, **TINY).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
        model.decoder.output_projection.weight[D.eos()] *= EOS_SCALE[arch]
    return model


sentences = bos_source  # D: bos 0, pad 1, eos 2


COUNTS = [3, 1, 4]  # sentences per source
SRCS = left_pad([sentences(3, 4, 2), sentences(5), sentences(2, 2, 2, 2)])
SAMPLE = {"net_input": {"src_tokens": SRCS, "src_lengths": SRCS.ne(D.pad()).sum(1)}}


def teacher_forced(model, i, tokens, layer):
    """``T x N_i`` sentence attention of ``layer`` for source ``i`` teacher-forced on ``tokens``."""
    if isinstance(model, HATModel):  # undo BART's beamable attention (set by the generator)
        model.set_beam_size(1)
        model.encoder.__dict__.pop("reorder_encoder_out", None)
    model.decoder.sentence_attention_layer = layer
    prev = torch.cat([tokens.new_tensor([D.eos()]), tokens[:-1]])[None]
    with torch.no_grad():
        _, extra = model(SRCS[i:i + 1], SRCS[i:i + 1].ne(D.pad()).sum(1), prev)
    return extra["sentence_attn"][0][0]


def generate(model, **kw):
    generator = SentenceAttentionSequenceGenerator([model], D, beam_size=3, max_len_b=7, **kw)
    return generator.generate([model], SAMPLE)


@pytest.fixture(scope="module", params=ARCHS)
def run(request):
    """(arch, model, hypotheses) of the generator at the default (last) layer."""
    model = tiny_hat(request.param)
    return request.param, model, generate(model)


# ------------------------------------------------------------------------------ generator
def test_every_hypothesis_carries_its_teacher_forced_sentence_attention(run):
    _, model, hypos = run
    assert [len(beams) for beams in hypos] == [3, 3, 3]
    for i, beams in enumerate(hypos):
        for hypo in beams:
            steps = len(hypo["tokens"])  # final EOS included
            assert hypo["attention"].shape == (COUNTS[i], steps)
            alignment = hypo["alignment"]
            assert len(alignment) == steps and all(len(s) == COUNTS[i] for s in alignment)
            weights = torch.tensor([[float(w) for w in step] for step in alignment])  # T x N_i
            torch.testing.assert_close(weights.sum(-1), torch.ones(steps), atol=1e-5, rtol=0)
            full = teacher_forced(model, i, hypo["tokens"], layer=-1)  # T x N_i
            torch.testing.assert_close(hypo["attention"].t(), full, atol=1e-5, rtol=0)
            torch.testing.assert_close(weights, full, atol=1e-5, rtol=0)


def test_the_search_is_fairseqs(run):
    arch, _, hypos = run
    plain = tiny_hat(arch)  # same weights, decoder attributes at their defaults
    expected = SequenceGenerator([plain], D, beam_size=3, max_len_b=7).generate([plain], SAMPLE)
    for beams, plain_beams in zip(hypos, expected):
        assert [h["tokens"].tolist() for h in beams] == [h["tokens"].tolist() for h in plain_beams]
        for hypo, plain_hypo in zip(beams, plain_beams):
            torch.testing.assert_close(hypo["score"], plain_hypo["score"], atol=1e-6, rtol=0)
            torch.testing.assert_close(hypo["positional_scores"], plain_hypo["positional_scores"],
                                       atol=1e-6, rtol=0)


@pytest.mark.parametrize("arch", ARCHS)
def test_another_layer_gives_that_layers_weights(arch):
    model = tiny_hat(arch)
    hypos = generate(model, sentence_attention_layer=0)
    differs = 0.0
    for i in (0, 2):  # the examples with several sentences
        for hypo in hypos[i]:
            first = teacher_forced(model, i, hypo["tokens"], layer=0)
            torch.testing.assert_close(hypo["attention"].t(), first, atol=1e-5, rtol=0)
            last = teacher_forced(model, i, hypo["tokens"], layer=-1)
            differs = max(differs, float((first - last).abs().max()))
    assert differs > 1e-2


def test_a_model_that_is_not_hat_is_refused():
    plain = build("transformer", D, **TINY)
    with pytest.raises(ValueError, match=r"^SentenceAttentionSequenceGenerator needs a HAT model "
                                         r"\(hat, hat_transformer\), got TransformerModel$"):
        SentenceAttentionSequenceGenerator([plain], D, beam_size=2)
    with pytest.raises(ValueError, match=r"sentence attention layer 2 does not exist: the decoder "
                                         r"has 2 layers \(0..1 or -2..-1\)"):
        SentenceAttentionSequenceGenerator([tiny_hat("hat_bart_base")], D,
                                           sentence_attention_layer=2)


def test_fairseq_options_pass_through():
    model = tiny_hat("hat_transformer_iwslt_zh_en")
    generator = SentenceAttentionSequenceGenerator(
        [model], D, sentence_attention_layer=-2, beam_size=2, lm_model=None, lm_weight=0.5,
        normalize_scores=False, max_len_b=3)
    assert (generator.beam_size, generator.lm_weight, generator.normalize_scores) == (2, 0.5, False)
    assert model.decoder.sentence_attention_layer == -2
    assert model.decoder.sentence_attention_as_attn is True


def test_alignment_text_round_trip_and_errors():
    attention = torch.tensor([[0.25, 1.0], [0.75, 0.0]])  # N x T
    alignment = format_sentence_alignment(attention)
    assert alignment == [["0.250000", "0.750000"], ["1.000000", "0.000000"]]
    payload = " ".join(",".join(step) for step in alignment)  # as fairseq-generate prints it
    assert payload == "0.250000,0.750000 1.000000,0.000000"
    assert parse_sentence_alignment(payload) == [[0.25, 0.75], [1.0, 0.0]]
    with pytest.raises(ValueError, match=r"^step 2 has 1 weights, step 1 has 2 \(one weight per "):
        parse_sentence_alignment("0.5,0.5 1.0")
    with pytest.raises(ValueError, match=r"^step 1 \('0-1'\) is not comma-separated weights"):
        parse_sentence_alignment("0-1 1-2")


# -------------------------------------------------------------------------------- heatmap
GENERATE_OUTPUT = """\
S-1\tw1 w2 w3 w4 w5 w6
T-1\tw3 w4
H-1\t-0.5\tw3 w4 w5
D-1\t-0.5\tw3 w4 w5
P-1\t-0.1 -0.2 -0.3 -0.4
A-1\t0.500000,0.300000,0.200000 0.100000,0.600000,0.300000 0.2,0.2,0.6 0.333333,0.333333,0.333334
H-1\t-0.9\tw5 w6
D-1\t-0.9\tw5 w6
P-1\t-0.1 -0.2 -0.3
A-1\t1.0,0.0,0.0 0.0,1.0,0.0 0.0,0.0,1.0
2024-01-01 00:00:00 | INFO | fairseq_cli.generate | a log line between examples
S-0\tw7 w8
T-0\tw7
H-0\t-0.2\tw7
D-0\t-0.2\tw7
P-0\t-0.1 -0.1
A-0\t1.000000 1.000000
"""
PNG = b"\x89PNG\r\n\x1a\n"


def close(rows, expected):
    torch.testing.assert_close(torch.tensor(rows), torch.tensor(expected), atol=1e-6, rtol=0)


def run_heatmap(monkeypatch, *args):
    monkeypatch.setattr(sys, "argv", ["fairseq-hier-analyse", "heatmap", *map(str, args)])
    return analyse.cli_main()


@pytest.fixture
def gen_out(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text(GENERATE_OUTPUT, encoding="utf-8")
    return path


def test_heatmap_writes_a_png(tmp_path, gen_out, monkeypatch, capsys):
    import matplotlib.image

    out = tmp_path / "fig.png"
    run_heatmap(monkeypatch, gen_out, "--id", 1, "-o", out)
    assert capsys.readouterr().out == f"{out}: 4 target steps x 3 sentences\n"
    assert out.read_bytes()[:8] == PNG
    height, width, _ = matplotlib.image.imread(out).shape
    assert 200 <= height <= 1000 and 200 <= width <= 1000, (height, width)


def test_heatmap_picks_the_hypothesis_and_renormalises_top_k(gen_out, monkeypatch):
    drawn = {}
    monkeypatch.setattr(attention_heatmap, "draw_heatmap",
                        lambda rows, labels, out, title, inputs=(): drawn.update(
                            rows=rows, labels=labels, title=title))
    run_heatmap(monkeypatch, gen_out, "--id", 1, "-o", "x.png", "--top-k", "2")
    assert drawn["labels"] == ["w3", "w4", "w5", "</s>"]
    assert drawn["title"] == "example 1, hypothesis 0, top-2 renormalised"
    # the top 2 of the printed weights; a tie keeps the earlier sentence
    expected = [[0.625, 0.375, 0.0], [0.0, 2 / 3, 1 / 3], [0.25, 0.0, 0.75],
                [0.333333 / 0.666667, 0.0, 0.333334 / 0.666667]]
    close(drawn["rows"], expected)
    run_heatmap(monkeypatch, gen_out, "--id", 1, "-o", "x.png", "--hypothesis", 1,
                "--max-steps", 2)
    assert drawn["labels"] == ["w5", "w6"] and drawn["rows"] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_top_k_renormalise():
    rows = [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.0, 0.0, 0.0]]
    close(sentence_heatmap.top_k_renormalise(rows, 2),
          [[0.625, 0.375, 0.0], [0.0, 2 / 3, 1 / 3], [0.0, 0.0, 0.0]])
    assert sentence_heatmap.top_k_renormalise(rows, 1)[1] == [0.0, 1.0, 0.0]
    assert sentence_heatmap.top_k_renormalise(rows, 0) == rows \
        == sentence_heatmap.top_k_renormalise(rows, 3)


def test_gpt2_labels(tmp_path, monkeypatch):
    table = sentence_heatmap.bytes_to_unicode()
    assert table[ord(" ")] == "\u0120" and table[ord("\n")] == "\u010a" and table[ord("A")] == "A"
    assert sorted(table) == list(range(256)) and len(set(table.values())) == 256
    pieces = {"ĠHello": 31414, "orld": 7, "".join(table[b] for b in "é".encode()): 8,
              "$": 9, "Ċ": 10}
    encoder_json = tmp_path / "encoder.json"
    encoder_json.write_text(json.dumps(pieces), encoding="utf-8")
    assert sentence_heatmap.gpt2_labels(["31414", "7", "8", "9", "10", "<unk>", "99"], pieces) == \
        ["▁Hello", "orld", "é", "$", "\\n", "<unk>", "99"]
    gen_out = tmp_path / "gen.out"
    gen_out.write_text("H-4\t-0.3\t31414 7 9\nA-4\t0.1,0.9 0.5,0.5 0.9,0.1 0.3,0.7\n",
                       encoding="utf-8")
    out = tmp_path / "gpt2.png"
    run_heatmap(monkeypatch, gen_out, "--id", 4, "-o", out, "--gpt2-encoder-json", encoder_json)
    assert out.read_bytes()[:8] == PNG  # '$' drawn as text, not as mathtext


def test_a_long_example_stays_readable(tmp_path, monkeypatch):
    """60 target steps x 100 sentences: the figure grows (8-pt labels, every 5th sentence)."""
    import matplotlib.image

    steps = [",".join(["0.010000"] * 100)] * 61
    gen_out = tmp_path / "gen.out"
    gen_out.write_text(f"H-0\t-1.0\t{' '.join(['w1'] * 60)}\nA-0\t{' '.join(steps)}\n")
    out = tmp_path / "long.png"
    run_heatmap(monkeypatch, gen_out, "--id", 0, "-o", out)
    height, width, _ = matplotlib.image.imread(out).shape
    assert height >= 61 * 20 and width >= 100 * 12, (height, width)  # >= 0.2 in per row at 100 dpi


@pytest.mark.parametrize("case,args,message", [
    ("missing", ["--id", 1], "cannot read {path}: No such file or directory"),
    ("latin1", ["--id", 1], "{path} is not UTF-8 text (invalid continuation byte at byte 6)"),
    ("ok", ["--id", 5], "{path} has no hypothesis for example 5 (no H-5 line)"),
    ("ok", ["--id", 1, "--hypothesis", 2],
     "example 1 has 2 hypotheses in {path}; --hypothesis 2 does not exist (0..1)"),
    ("no_a", ["--id", 0], "{path} has no A-0 line for hypothesis 0 of example 0: run "
                          "fairseq-generate with --print-sentence-attention"),
    ("steps", ["--id", 0], "{path} line 2: A-0 has 3 steps, H-0 has 1 tokens: expected 2 (one "
                           "per H- token plus the final </s>; H- lines written with "
                           "--post-process, or missing the <s> tokens fairseq drops, do not fit)"),
    ("widths", ["--id", 0], "{path} line 2 (A-0): step 2 has 1 weights, step 1 has 2 (one weight "
                            "per source sentence expected at every step)"),
])
def test_heatmap_errors(tmp_path, gen_out, monkeypatch, capsys, case, args, message):
    path = gen_out if case == "ok" else tmp_path / f"{case}.out"
    content = {"latin1": "H-1\t-0\xe9\t\n".encode("latin-1"),
               "no_a": b"H-0\t-0.2\tw7\nP-0\t-0.1 -0.1\n",
               "steps": b"H-0\t-0.2\tw7\nA-0\t1.0 1.0 1.0\n",
               "widths": b"H-0\t-0.2\tw7\nA-0\t0.5,0.5 1.0\n"}.get(case)
    if content is not None:
        path.write_bytes(content)
    assert run_heatmap(monkeypatch, path, *args, "-o", tmp_path / "never.png") == 1
    assert capsys.readouterr().err == (f"fairseq-hier-analyse heatmap: error: "
                                       f"{message.format(path=path)}\n")
    assert not (tmp_path / "never.png").exists()


def test_importing_the_heatmap_command_is_light():
    code = ("import sys, fairseq_hier.cli.analyse; "
            "print(sorted(m for m in ('torch', 'fairseq', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
