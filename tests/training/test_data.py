"""Paragraph segmentation rules and the bad inputs of the task, found before training starts."""

import re

import numpy as np
import pytest

from conftest import preprocess, run_cli, train_args, write_toy_corpus
from fairseq_hier.data.paragraphs import ALL_EMPTY, NO_PARAGRAPH, NO_TOKENS, segment

SEP, EOS = 7, 2


def seg(lines, max_paragraphs=2, max_tokens=3):
    toks = np.concatenate([np.array(line) for line in lines])
    return segment(toks, np.array([len(line) for line in lines]), SEP, EOS, max_paragraphs,
                   max_tokens), toks


def kept(result, toks, lines, i):
    start = sum(len(line) for line in lines[:i])
    sl = slice(start, start + len(lines[i]))
    k = result.keep[sl]
    return list(zip(toks[sl][k].tolist(), result.paragraph[sl][k].tolist(),
                    result.position[sl][k].tolist()))


def test_title_joins_first_paragraph_and_cuts_are_counted():
    lines = [[10, 11, SEP, 20, 21, 22, SEP, 30, SEP, 40, EOS]]
    r, toks = seg(lines)
    # title (10 11) + first paragraph (20 21 22) cut to 3 tokens; third paragraph cut
    assert kept(r, toks, lines, 0) == [(10, 0, 0), (11, 0, 1), (20, 0, 2), (30, 1, 0)]
    assert (r.num_paragraphs[0], r.cut_paragraphs[0], r.cut_tokens[0]) == (2, 1, 3)
    assert r.max_paragraph_len[0] == 3 and r.kept_tokens[0] == 4 and r.error == [""]


def test_empty_paragraphs_dropped_and_counted_empty_title_allowed():
    lines = [[SEP, 20, SEP, SEP, 30, 31, SEP, EOS]]
    r, toks = seg(lines, max_paragraphs=5)
    assert kept(r, toks, lines, 0) == [(20, 0, 0), (30, 1, 0), (31, 1, 1)]
    assert r.empty_paragraphs[0] == 2 and r.error == [""]


def test_every_empty_paragraph_is_counted_as_a_literal_count_of_the_segments():
    """Oracle: the empty segments after the title, counted one by one on the token lists; an
    empty paragraph right after a title (which then stands alone in paragraph 0) included."""
    import random

    rng = random.Random(5)
    lines = [[10, 11, SEP, SEP, 20, EOS], [SEP, SEP, 20, EOS], [10, SEP, 20, SEP, SEP, EOS]]
    for _ in range(200):
        lines.append(rng.choices([10, 11, 12, SEP, SEP], k=rng.randint(1, 12)) + [EOS])
    r, _ = seg(lines, max_paragraphs=50, max_tokens=50)
    for i, line in enumerate(lines):
        segments = [[]]
        for token in line[:-1]:
            segments.append([]) if token == SEP else segments[-1].append(token)
        if not r.error[i]:
            assert r.empty_paragraphs[i] == sum(1 for s in segments[1:] if not s), line
    assert r.empty_paragraphs[:3].tolist() == [1, 1, 2]


def test_invalid_examples_are_reported():
    lines = [[SEP, SEP, EOS], [10, 11, EOS], [10, SEP, SEP, EOS], [10, SEP, 20, EOS]]
    r, _ = seg(lines)
    assert r.error == [NO_TOKENS, NO_PARAGRAPH, ALL_EMPTY, ""]


@pytest.fixture(scope="module")
def bad_bin(tmp_path_factory):
    """valid = good; valid1 = separator-only line + empty paragraphs; valid2 = title-only line;
    valid3 = one target line too many; valid4 = an empty summary."""
    raw = write_toy_corpus(tmp_path_factory.mktemp("badraw"))
    good_src = (raw / "valid.src").read_text().splitlines()
    good_tgt = (raw / "valid.tgt").read_text().splitlines()
    variants = {
        "bad1": (good_src[:2] + ["<P> <P>", "title a <P> <P> b c <P>"], good_tgt[:4]),
        "bad2": (good_src[:3] + ["just a title"], good_tgt[:4]),
        "bad3": (good_src[:4], good_tgt[:5]),
        "bad4": (good_src[:3], good_tgt[:1] + [""] + good_tgt[2:3]),
    }
    for name, (src, tgt) in variants.items():
        (raw / f"{name}.src").write_text("\n".join(src) + "\n")
        (raw / f"{name}.tgt").write_text("\n".join(tgt) + "\n")
    prefixes = ",".join(str(raw / n) for n in ("valid", "bad1", "bad2", "bad3", "bad4"))
    return preprocess(raw, tmp_path_factory.mktemp("badbin") / "data-bin", validpref=prefixes)


def train_on(data, subset, tmp_path):
    args = train_args(data, "pht", tmp_path / "ck", 1, extra=["--valid-subset", subset, "--ignore-unused-valid-subsets"])
    return run_cli("fairseq-train", *args, check=False)


@pytest.mark.parametrize("subset,expected", [
    ("valid1", r"1 example\(s\): the line holds only paragraph separators \(or nothing\); line\(s\) 3"),
    ("valid2", r"1 example\(s\): no paragraph: the line has a title but no paragraph separator; line\(s\) 4"),
    ("valid3", r"source/target count mismatch in split 'valid3': .*valid3\.src-tgt\.src has 4 "
               r"examples, .*valid3\.src-tgt\.tgt has 5"),
    ("valid4", r"1 empty target summaries in .*valid4\.src-tgt\.tgt; line\(s\) 2"),
])
def test_bad_inputs_fail_before_training(bad_bin, tmp_path, subset, expected):
    proc = train_on(bad_bin, subset, tmp_path)
    assert proc.returncode != 0
    assert re.search(expected, proc.stdout), proc.stdout[-2000:]
    assert "begin training epoch" not in proc.stdout
    assert f"invalid source examples in {bad_bin}/{subset}.src-tgt.src" in proc.stdout or subset in ("valid3", "valid4")


def test_separator_missing_from_dictionary_is_named(tmp_path):
    raw = tmp_path / "raw"
    write_toy_corpus(raw)
    for split in ("train", "valid", "test"):
        p = raw / f"{split}.src"
        p.write_text(p.read_text().replace("<P>", "||"))
    data = preprocess(raw, tmp_path / "bin")
    proc = run_cli("fairseq-train", *train_args(data, "pht", tmp_path / "ck", 1), check=False)
    assert proc.returncode != 0
    assert "paragraph separator '<P>' (--paragraph-separator) is not in the source dictionary" in proc.stdout


def test_chunked_scan_equals_single_pass(data_bin, monkeypatch):
    """The up-front scan segments large splits in chunks; chunk boundaries change nothing."""
    import fairseq_hier.data.hierarchical_dataset as hd
    from fairseq_hier.tasks.hierarchical_summarization import (
        HierarchicalSummarizationConfig, HierarchicalSummarizationTask)

    task = HierarchicalSummarizationTask.setup_task(HierarchicalSummarizationConfig(
        data=str(data_bin), max_paragraphs=3, max_paragraph_tokens=5))
    results = []
    for chunk in (10**9, 37):
        monkeypatch.setattr(hd, "_CHUNK_TOKENS", chunk)
        task.load_dataset("train")
        ds = task.datasets["train"]
        results.append((ds.num_paragraphs.copy(), ds.max_paragraph_len.copy(), ds.cut_stats))
    assert all(np.array_equal(x, y) for x, y in zip(results[0][:2], results[1][:2]))
    assert results[0][2] == results[1][2] and results[0][2]["cut_tokens"] > 0
