"""Graph-informed attention (002 Eq. 24) through the real CLIs on the shared data-bin:
fairseq-hier-graph writes the graphs beside the binarized splits -> fairseq-train --arch liu_ht
--paragraph-graph -> fairseq-generate; the task's checks (a graph that disagrees with its split,
a graph for a model that does not read one, a graph model decoded without its graph)."""

import re
import shutil

import pytest

from conftest import USER_DIR, run_cli, train_args
from fairseq_hier.errors import HierError

LIU = ["--encoder-layers", "2", "--global-layers", "1", "--global-heads", "2", "--graph-head", "1"]
GEN = ["--user-dir", USER_DIR, "--task", "hierarchical_summarization", "--max-paragraphs", "4",
       "--max-paragraph-tokens", "6", "--beam", "3", "--max-len-b", "8", "--batch-size", "8",
       "--required-batch-size-multiple", "1", "--num-workers", "0"]


@pytest.fixture(scope="module")
def graph_bin(raw_corpus, data_bin, tmp_path_factory):
    """A copy of the shared data-bin with tf-idf graphs for every split, and a 'bad' test graph
    built from the valid split's sources (same example count, other paragraph counts)."""
    data = tmp_path_factory.mktemp("graphbin") / "data-bin"
    shutil.copytree(data_bin, data)
    for split in ("train", "valid", "test"):
        run_cli("fairseq-hier-graph", "--source", raw_corpus / f"{split}.src", "--kind", "tfidf",
                "--output-prefix", data / f"{split}.graph.tfidf")
    run_cli("fairseq-hier-graph", "--source", raw_corpus / "valid.src", "--kind", "tfidf",
            "--output-prefix", data / "test.graph.bad")  # valid's graphs: 8 examples, other sizes
    return data


@pytest.fixture(scope="module")
def graph_model(graph_bin, tmp_path_factory):
    save = tmp_path_factory.mktemp("ck_liu_graph")
    log = run_cli("fairseq-train", *train_args(graph_bin, "liu_ht", save, 3,
                                               LIU + ["--paragraph-graph", "tfidf"])).stdout
    return save, log


def test_train_and_generate_with_a_graph(graph_bin, graph_model):
    save, log = graph_model
    assert "num_updates 3" in log and "source layout: hierarchical" in log
    import torch

    cfg = torch.load(save / "checkpoint_last.pt", weights_only=False)["cfg"]["model"]
    assert cfg.graph_attention is True  # recorded, so decoding can insist on the graph
    # trained on 4 paragraphs, decoded on 5 (002's train-1,600 / test-3,000 tokens: positions
    # and ranks are sinusoidal; the graph is cropped by the decode-time cut)
    gen = run_cli("fairseq-generate", graph_bin, "--path", save / "checkpoint_last.pt", *GEN,
                  "--paragraph-graph", "tfidf", "--max-paragraphs", "5").stdout
    assert "[test] 8 examples; hierarchical cut to 5 paragraphs x 6 tokens" in gen
    ids = sorted(int(m) for m in re.findall(r"^H-(\d+)\t", gen, re.M))
    assert ids == list(range(8))


def test_graph_model_decoded_without_its_graph_takes_it_from_the_checkpoint(graph_bin,
                                                                            graph_model):
    save, _ = graph_model
    given = run_cli("fairseq-generate", graph_bin, "--path", save / "checkpoint_last.pt", *GEN,
                    "--paragraph-graph", "tfidf")
    taken = run_cli("fairseq-generate", graph_bin, "--path", save / "checkpoint_last.pt", *GEN)
    line, = [x for x in taken.stdout.splitlines() if "taking the training cuts" in x]
    assert line.endswith("from the checkpoint: --max-source-positions 30 --paragraph-graph tfidf")

    def hyps(proc):
        return [line for line in proc.stdout.splitlines() if line.startswith("H-")]

    assert hyps(taken) == hyps(given) and len(hyps(given)) == 8


def _task(data, kind):
    """The task as fairseq-train sets it up, in this process (no CLI start-up cost)."""
    from fairseq_hier.tasks.hierarchical_summarization import (
        HierarchicalSummarizationConfig, HierarchicalSummarizationTask)

    return HierarchicalSummarizationTask.setup_task(HierarchicalSummarizationConfig(
        data=str(data), max_paragraphs=4, max_paragraph_tokens=6, paragraph_graph=kind))


def test_graph_that_disagrees_with_its_split_names_the_example(graph_bin):
    task = _task(graph_bin, "bad")
    with pytest.raises(ValueError) as err:
        task.load_dataset("test")
    assert re.fullmatch(
        r"paragraph graphs do not match the data: the example on line 1 has 5 graph nodes in "
        r"\S+/test\.graph\.bad\.sizes\.npy but 3 paragraphs in \S+/test\.src-tgt\.src \(8 of 8 "
        r"examples differ\); write the graphs again from the split's raw source with "
        r"fairseq-hier-graph --output-prefix \S+/test\.graph\.bad", str(err.value)), str(err.value)
    with pytest.raises(HierError, match="fairseq-hier-graph"):
        _task(graph_bin, "missing").load_dataset("test")


def test_graph_for_a_model_without_graph_attention_is_an_error(graph_bin):
    import argparse

    from fairseq.models import ARCH_CONFIG_REGISTRY

    task = _task(graph_bin, "tfidf")
    args = argparse.Namespace(arch="pht", encoder_layers=1, decoder_layers=1,
                              encoder_embed_dim=8, decoder_embed_dim=8)
    ARCH_CONFIG_REGISTRY["pht"](args)
    with pytest.raises(ValueError, match=r"^--paragraph-graph tfidf: model PHTModel does not read "
                                         r"paragraph graphs \(liu_ht does\)$"):
        task.build_model(args)
