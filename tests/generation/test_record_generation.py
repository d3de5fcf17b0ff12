"""Decoding options per architecture in a preprocessing record: ``generation_for`` replaces
``generation`` for checkpoints of that architecture (fairseq-hier-summarize, the recipes through
``fairseq-hier-record data --print-generation``); a record without it stays valid; malformed entries
are one-line errors."""

import json
import shutil

import pytest

from cli_forkserver import run_checked
from conftest import run_cli, train_args

DEFAULT = ["--beam", "3", "--lenpen", "1.0", "--max-len-b", "6", "--no-repeat-ngram-size", "3"]
LIU = ["--beam", "2", "--lenpen", "0.4", "--max-len-b", "9", "--min-len", "2",
       "--no-repeat-ngram-size", "0"]
LIU_MODEL = ["--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2"]


@pytest.fixture(scope="module")
def runs(data_bin, tmp_path_factory):
    from fairseq_hier.inference.record import write_record

    root = tmp_path_factory.mktemp("record_generation")
    bin_dir = root / "bin"
    shutil.copytree(data_bin, bin_dir)
    write_record(str(bin_dir), "hierarchical_summarization", "paragraphs", {}, {}, DEFAULT,
                 {"liu_ht": LIU})
    jobs = [{"id": f"{arch}-train", "script": "fairseq-train",
             "args": train_args(bin_dir, arch, root / arch, 1, extra)}
            for arch, extra in (("pht", []), ("liu_ht", LIU_MODEL))]
    run_checked(jobs, root)
    return root


def generation_of(summarizer):
    g = summarizer.cfg.generation
    return g.beam, g.lenpen, g.max_len_b, g.min_len, g.no_repeat_ngram_size


def test_summarizer_decodes_with_the_checkpoints_own_architectures_options(runs):
    from fairseq_hier.inference import HierSummarizer

    liu = HierSummarizer.from_pretrained(str(runs / "liu_ht"), cpu=True)
    assert generation_of(liu) == (2, 0.4, 9, 2, 0)
    pht = HierSummarizer.from_pretrained(str(runs / "pht"), cpu=True)
    assert generation_of(pht) == (3, 1.0, 6, 1, 3)
    # the caller's options still win over the record's
    assert generation_of(HierSummarizer.from_pretrained(str(runs / "liu_ht"), cpu=True,
                                                        lenpen=0.7))[1] == 0.7


def test_print_generation_and_arch_for_the_recipes(runs):
    proc = run_cli("fairseq-hier-record", "data", "--print-arch",
                   runs / "liu_ht" / "checkpoint_last.pt")
    assert proc.stdout.strip().splitlines()[-1] == "liu_ht"
    proc = run_cli("fairseq-hier-record", "data", runs / "bin", "--print-generation", "liu_ht")
    assert proc.stdout.splitlines() == LIU
    proc = run_cli("fairseq-hier-record", "data", runs / "bin", "--print-generation", "vht")
    assert proc.stdout.splitlines() == DEFAULT  # no entry: the default


def test_a_record_without_per_architecture_entries_stays_valid(tmp_path):
    from fairseq_hier.data.preprocessing_record import check_layout, generation_for

    record = {"format": 1, "task": "hierarchical_summarization", "pipeline": "paragraphs",
              "options": {}, "assets": {}, "generation": DEFAULT}
    assert check_layout(record, "r") is record
    assert generation_for(record, "liu_ht") == DEFAULT
    assert generation_for({**record, "generation_for": {"liu_ht": LIU}}, "liu_ht") == LIU
    assert generation_for({**record, "generation_for": {"liu_ht": LIU}}, "pht") == DEFAULT


@pytest.mark.parametrize("entry, message", [
    ({"liu_ht": "--lenpen 0.4"}, "r: 'generation_for' entry 'liu_ht' must be a list of "
                                 "fairseq-generate arguments"),
    ({"liu_ht": ["--beam", 5]}, "r: 'generation_for' entry 'liu_ht' must be a list of "
                                "fairseq-generate arguments"),
    (["--beam"], "r: 'generation_for' must map architecture names to lists of fairseq-generate "
                 "arguments, not a list"),
])
def test_malformed_per_architecture_entries_in_a_record(entry, message):
    from fairseq_hier.data.preprocessing_record import RecordError, check_layout

    record = {"format": 1, "task": "hierarchical_summarization", "pipeline": "paragraphs",
              "options": {}, "assets": {}, "generation": [], "generation_for": entry}
    with pytest.raises(RecordError) as e:
        check_layout(record, "r")
    assert str(e.value) == message


@pytest.mark.parametrize("args, message", [
    (["--generation-for", "liu_ht"], "--generation-for 'liu_ht': expected NAME=VALUE"),
    (["--generation-for", "no_such_arch=--beam 2"],
     "--generation-for no_such_arch: no such architecture (fairseq-train --arch's choices, with "
     "fairseq-hier's registered)"),
    (["--generation-for", "liu_ht=--beam -3"],
     "--generation-for liu_ht: --generation '--beam -3': "),
    (["--generation-for", "liu_ht=--no-such-option 1"],
     "--generation-for liu_ht: --generation '--no-such-option 1': unknown option(s) "
     "--no-such-option"),
    (["--generation-for", "liu_ht=--beam 2", "--generation-for", "liu_ht=--beam 3"],
     "--generation-for liu_ht is given twice"),
    (["--generation-for", "liu_ht=--lenpen '0.4"],
     "--generation-for liu_ht: cannot split \"--lenpen '0.4\" into arguments as a shell would "
     "(no closing quotation): close the quote or escape it"),
    (["--generation", "--beam '5"],
     "--generation: cannot split \"--beam '5\" into arguments as a shell would (no closing "
     "quotation): close the quote or escape it"),
])
def test_malformed_generation_for_is_one_line(data_bin, tmp_path, args, message):
    shutil.copytree(data_bin, tmp_path / "bin")
    proc = run_cli("fairseq-hier-record", "data", tmp_path / "bin", "--task",
                   "hierarchical_summarization",
                   "--pipeline", "paragraphs", *args, check=False)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout
    assert lines[0].startswith(f"fairseq-hier-record data: error: {message}"), lines[0]
    assert not (tmp_path / "bin" / "hier_preprocess.json").exists()


def test_record_written_with_per_architecture_options(data_bin, tmp_path):
    shutil.copytree(data_bin, tmp_path / "bin")
    run_cli("fairseq-hier-record", "data", tmp_path / "bin", "--task", "hierarchical_summarization",
            "--pipeline", "paragraphs", "--generation", " ".join(DEFAULT),
            "--generation-for", f"liu_ht={' '.join(LIU)}",
            "--generation-for", "transformer=--lenpen 0.4")
    record = json.loads((tmp_path / "bin" / "hier_preprocess.json").read_text())
    assert record["generation"] == DEFAULT
    assert record["generation_for"] == {"liu_ht": LIU, "transformer": ["--lenpen", "0.4"]}
