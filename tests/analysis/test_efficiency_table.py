"""The efficiency table of paper 000 Table 4 (fairseq_hier/analysis/efficiency.py,
fairseq-hier-analyse efficiency), on CPU at tiny widths (1+1 layers, d 16, 200 source tokens):

- efficiency.json's schema, and the parameter counts equal to those of models built
  independently here from literal fairseq options;
- the max-batch search: with the real measurement, peak(max_batch) <= budget < peak(max_batch + 1)
  re-measured afresh; with a known monotone memory function in place of the measurement, the
  exact boundary (and the search limit, and a budget below batch 1);
- the command line (table, JSON file = last line, one-line usage error) and ``--data``: validation
  over the valid split of a real data-bin (8 examples), HAT's row left without a validation time.
"""

import argparse
import json

import pytest

from fairseq_hier.analysis import efficiency as eff
from tiny_models import one_thread  # noqa: F401  (module fixture: tiny models run on one thread)

TOKENS, LAYERS, DIM, HEADS, VOCAB = 200, 1, 16, 2, 200
BUDGET_GIB = 6 / 1024  # a few MiB: tiny models reach it at small batches
ARCHS = ("transformer", "pht", "parsingsum_ht")


@pytest.fixture(scope="module")
def table(one_thread):
    return eff.efficiency_table(ARCHS, TOKENS, BUDGET_GIB, LAYERS, DIM, "cpu", peak_batch=2,
                                valid_examples=6, valid_batch_size=4, vocab=VOCAB, heads=HEADS)


def literal_model(arch):
    """``arch`` built from literal options (not through the efficiency module)."""
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    d = Dictionary()
    for i in range(VOCAB - d.nspecial):
        d.add_symbol(f"w{i}")
    widths = dict(encoder_layers=1, decoder_layers=1, encoder_embed_dim=16, decoder_embed_dim=16,
                  encoder_ffn_embed_dim=64, decoder_ffn_embed_dim=64, encoder_attention_heads=2,
                  decoder_attention_heads=2)
    extra = {"transformer": dict(share_all_embeddings=True, max_source_positions=208),
             "pht": dict(pooling_heads=2),
             "parsingsum_ht": dict(global_layers="0", global_heads=2)}[arch]
    args = argparse.Namespace(task="translation", **widths, **extra)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = argparse.Namespace(source_dictionary=d, target_dictionary=d)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task)


def test_schema_and_parameters(table):
    assert {k: table[k] for k in ("device", "tokens", "budget_gib", "dtype", "layers",
                                  "embed_dim", "data")} == {
        "device": "cpu", "tokens": TOKENS, "budget_gib": BUDGET_GIB, "dtype": "fp32",
        "layers": LAYERS, "embed_dim": DIM, "data": None}
    assert [r["arch"] for r in table["rows"]] == list(ARCHS)
    for row in table["rows"]:
        params = sum(p.numel() for p in literal_model(row["arch"]).parameters())
        assert row["params"] == params, row["arch"]
        assert row["params_mb"] == round(params * 4 / 2**20, 2)
        assert row["max_batch_method"] == "cpu search (peak allocations)"
        assert isinstance(row["max_batch"], int) and row["max_batch"] >= 1
        assert row["max_batch_at_limit"] is False
        assert row["peak_batch"] == 2 and 0 < row["peak_mem_mb"] <= BUDGET_GIB * 1024 * 2
        assert row["valid_seconds"] > 0 and row["valid_examples"] == 6
        assert row["valid_note"] == "synthetic"
    assert json.loads(json.dumps(table)) == table
    assert "parsingsum_ht" in eff.format_table(table)


def test_max_batch_matches_fresh_measurements(table, one_thread):
    """The search's answer against the peaks measured again, step by step, afresh."""
    row = table["rows"][1]  # pht
    measured = eff.Measured("pht", TOKENS, eff.table_dims(LAYERS, DIM, heads=HEADS), "cpu",
                            vocab=VOCAB)
    at, above = (eff.step_total_mb(measured, b) for b in (row["max_batch"], row["max_batch"] + 1))
    assert at <= BUDGET_GIB * 1024 < above
    assert eff.step_total_mb(measured, 2) == pytest.approx(row["peak_mem_mb"], abs=0.01)


def test_max_batch_search_on_known_memory(monkeypatch, one_thread):
    """A known monotone memory function (5 + 2.5 b MiB) in place of the measurement."""
    tried = []

    def fake(measured, batch_size):
        tried.append(batch_size)
        return 5.0 + 2.5 * batch_size

    monkeypatch.setattr(eff, "step_total_mb", fake)
    measured = eff.Measured("transformer", TOKENS, eff.table_dims(LAYERS, DIM, heads=HEADS),
                            "cpu", vocab=VOCAB)
    assert eff.max_batch(measured, 30 / 1024, 1024) == {
        "max_batch": 10, "max_batch_at_limit": False,
        "max_batch_method": "cpu search (peak allocations)"}  # 5 + 2.5 * 10 = 30 <= 30 < 32.5
    assert tried == [1, 2, 4, 8, 16, 12, 10, 11]
    assert eff.max_batch(measured, 30 / 1024, 8)["max_batch"] == 8  # stopped at the limit
    assert eff.max_batch(measured, 30 / 1024, 8)["max_batch_at_limit"] is True
    assert eff.max_batch(measured, 7 / 1024, 64)["max_batch"] == 0  # 7.5 > 7 at batch 1


def test_cli_and_data_bin(data_bin, tmp_path, capsys, one_thread):
    from fairseq_hier.cli import analyse as cli

    assert cli.ARCHS == eff.TABLE_ARCHS
    out = tmp_path / "run" / "efficiency.json"
    assert cli.cli_main(["efficiency", "--archs", "pht", "hat_transformer", "--tokens", "200",
                         "--layers", "1",
                         "--embed-dim", "16", "--heads", "2", "--no-max-batch", "--cpu",
                         "--data", str(data_bin), "--valid-batch-size", "3",
                         "-o", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    result = json.loads(lines[-1])
    assert json.loads(out.read_text()) == result
    assert lines[0].split() == ["model", "max", "batch", "params", "(M)", "params", "(MB)", "peak",
                                "MiB", "valid", "(s)", "valid", "(cpu-s)"]
    pht, hat = result["rows"]
    assert result["data"] == str(data_bin) and pht["valid_examples"] == 8  # the toy valid split
    assert result["vocab"] == len((data_bin / "dict.src.txt").read_text().splitlines()) + 4
    assert pht["valid_seconds"] > 0 and pht["valid_note"] == f"valid split of {data_bin}"
    assert hat["valid_seconds"] is None and "hat_summarization" in hat["valid_note"]
    assert pht["max_batch"] is None and pht["max_batch_method"] == "not searched"
    with pytest.raises(ValueError, match="parsingsum_ft read.s. the source's dependency parse: "
                                         "pass --dependency-parse NAME"):
        eff.efficiency_table(["pht", "parsingsum_ft"], data=str(data_bin))  # before measuring
    with pytest.raises(SystemExit) as exit_info:
        cli.cli_main(["efficiency", "--tokens", "150"])
    assert exit_info.value.code == 2
    assert "--tokens must be a positive multiple of 100, got 150" in capsys.readouterr().err
