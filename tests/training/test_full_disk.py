"""Writers on a full disk (a small tmpfs the test mounts): the command fails with one line naming
its outputs, exit status 1, and leaves no file behind, whatever closing the files raises (each
close fails to flush again). One writer of each kind: text files (rank-labels), numpy arrays
streamed by a StagedWriter (graph), a matplotlib figure (heatmap); fairseq's dataset builders
(extract-attention) in tests/generation/test_attention_alignment.py."""

import os

import pytest

from conftest import run_cli, small_disk, write_paragraph_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("disk")
    write_paragraph_corpus(root / "src", root / "tgt", 400, paragraphs=6, words=20)
    (root / "gen.out").write_text("S-0\ta b . c d .\nH-0\t-0.5\t5 6 7\n"
                                  "A-0\t0.5,0.5 0.2,0.8 0.1,0.9 0.3,0.7\n")
    return root


def failed_line(proc):
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    lines = [line for line in proc.stdout.splitlines() if " | INFO | " not in line]
    assert len(lines) == 1, proc.stdout[-3000:]
    return lines[0]


def test_numpy_arrays_of_graph(corpus, tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        proc = run_cli("fairseq-hier-graph", "-i", corpus / "src", "--kind", "tfidf",
                       "--output-prefix", disk / "train.graph.tfidf", "--no-progress-bar",
                       check=False)
        prefix = disk / "train.graph.tfidf"
        assert failed_line(proc) == (
            f"fairseq-hier-graph: error: No space left on device ({prefix}.sizes.npy, "
            f"{prefix}.offsets.npy, {prefix}.values.npy)")
        assert os.listdir(disk) == []


def test_text_file_of_rank_labels(corpus, tmp_path):
    with small_disk(tmp_path / "disk", "4k") as disk:
        proc = run_cli("fairseq-hier-rank", "labels", "--source", corpus / "src", "--target",
                       corpus / "tgt", "--output", disk / "train.labels", "--no-progress-bar",
                       check=False)
        assert failed_line(proc) == (f"fairseq-hier-rank labels: error: No space left on device "
                                     f"({disk / 'train.labels'})")
        assert os.listdir(disk) == []


def test_matplotlib_figure_of_heatmap(corpus, tmp_path):
    with small_disk(tmp_path / "disk", "4k") as disk:
        proc = run_cli("fairseq-hier-analyse", "heatmap", corpus / "gen.out", "--id", "0", "-o",
                       disk / "example.png", check=False)
        assert failed_line(proc) == (f"fairseq-hier-analyse heatmap: error: No space left on "
                                     f"device "
                                     f"({disk / 'example.png'})")
        assert os.listdir(disk) == []
    proc = run_cli("fairseq-hier-analyse", "heatmap", corpus / "gen.out", "--id", "0", "-o",
                   tmp_path / "example.png")  # the same figure fits on a real disk
    assert (tmp_path / "example.png").stat().st_size > 4096


def test_a_writer_closed_twice_on_a_full_disk_removes_its_files(tmp_path):
    """ParagraphGraphWriter fails in add() and again when its file is closed: both errors name
    the outputs, and the temporaries go."""
    import numpy as np

    from fairseq_hier.data.paragraph_graph import ParagraphGraphWriter

    with small_disk(tmp_path / "disk", "8k") as disk:
        with pytest.raises(OSError) as caught:
            with ParagraphGraphWriter(str(disk / "g")) as writer:
                for _ in range(100):
                    writer.add(np.ones((8, 8)))
        assert caught.value.filename == ", ".join(str(disk / f"g.{n}.npy")
                                                  for n in ("sizes", "offsets", "values"))
        assert os.listdir(disk) == []
