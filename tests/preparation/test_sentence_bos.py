"""HAT data (paper 004 Sec. 3.1, 4.1): BOS marking, GPT-2 BPE, truncation at sentence
boundaries (fairseq_hier/preparation/sentence_bos.py), the up-front checks of the binarized
sources and their sidecars (fairseq_hier/data/sentence_dataset.py), speaker segment embeddings,
and the PTB-tokenisation step before ROUGE."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import BIN, TINY_HAT, build_model, make_dict, write_tiny_gpt2_bpe
from fairseq_hier.readers.records import Record
from fairseq_hier.preparation.sentence_bos import (SentenceBOSEncoder, fit_sentences,
                                                   speaker_indices, write_split)


@pytest.fixture(scope="module")
def bpe_dir(tmp_path_factory):
    return write_tiny_gpt2_bpe(tmp_path_factory.mktemp("bpe"))


def encoder(bpe_dir, src=64, tgt=16, speakers=False):
    return SentenceBOSEncoder(str(bpe_dir / "encoder.json"), str(bpe_dir / "vocab.bpe"), src, tgt,
                              speakers=speakers)


def record(sentences=None, text=None, speakers=None, summary="we study the notes ."):
    return Record(id="x1", where="file.txt:3", sentences=sentences, text=text, speakers=speakers,
                  summary=summary, summary_sentences=[summary])


def test_the_bpe_is_fairseqs_own_and_does_not_import_fairseq(bpe_dir):
    """gpt2_encoder loads fairseq's gpt2_bpe_utils from its file: the same ids and text as
    fairseq's get_encoder, and in a fresh process neither fairseq nor torch is imported."""
    from fairseq.data.encoders.gpt2_bpe_utils import get_encoder

    from fairseq_hier.data.bart_files import gpt2_encoder

    files = (str(bpe_dir / "encoder.json"), str(bpe_dir / "vocab.bpe"))
    ours, theirs = gpt2_encoder(*files), get_encoder(*files)
    assert type(ours).__module__ == "fairseq.data.encoders.gpt2_bpe_utils"  # fairseq imported
    for text in ("the model reads long papers .", " we study  meetings!", "caf\u00e9 \u2014 ok", ""):
        ids = ours.encode(text)
        assert ids == theirs.encode(text) and ours.decode(ids) == theirs.decode(ids) == text
    code = ("import sys; from fairseq_hier.data.bart_files import gpt2_encoder; "
            f"e = gpt2_encoder({files[0]!r}, {files[1]!r}); print(e.encode('the model'), "
            "type(e).__module__, sorted(m for m in ('fairseq', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"{theirs.encode('the model')} gpt2_bpe_utils []"


def test_fit_sentences_keeps_whole_sentences_or_cuts_only_the_first():
    assert fit_sentences([3, 4, 5], 100) == (3, -1)
    assert fit_sentences([3, 4, 5], 9) == (2, -1)  # (1+3) + (1+4) = 9 fits, +6 does not
    assert fit_sentences([3, 4, 5], 8) == (1, -1)
    assert fit_sentences([10, 1], 6) == (0, 5)  # first sentence cut to 5 ids after its BOS


def test_bos_before_every_sentence_and_ids_of_the_whole_text(bpe_dir):
    enc = encoder(bpe_dir)
    sentences = ["the model reads long papers .", "we study meetings .", "results show gains ."]
    out = enc(record(sentences))
    tokens = out.source.split()
    assert tokens.count("<s>") == 3 == out.sentences and tokens[0] == "<s>"
    # the sentences' ids are exactly those of the whole text (leading spaces as BART saw them)
    whole = [str(i) for i in enc.bpe.encode(" ".join(sentences))]
    assert [t for t in tokens if t != "<s>"] == whole
    assert out.target == " ".join(str(i) for i in enc.bpe.encode("we study the notes ."))
    assert out.ref == "we study the notes ." and out.id == "x1"
    assert out.stats["source_truncated"] == 0 and out.stats["own_segmentation"] == 1


def test_truncation_at_sentence_boundaries_with_counts(bpe_dir):
    sentences = ["the model reads long papers and writes short notes ."] * 3 + ["a b c d e f ."]
    enc = encoder(bpe_dir, src=30, tgt=4)
    ids = len(enc.bpe.encode(" " + sentences[0]))
    out = enc(record(sentences, summary="we study the notes and the budget ."))
    assert ids == 11 and out.sentences == 2  # (1 + 11) * 2 = 24 <= 29 (EOS excluded); 3: 36
    assert len(out.source.split()) == 24
    assert out.stats["sentences_dropped"] == 2 and out.stats["source_truncated"] == 1
    # the third sentence was encoded (it crossed the budget), the fourth never was
    assert out.stats["source_ids_dropped"] == 11 and out.stats["words_dropped_unencoded"] == 7
    assert len(out.target.split()) == 3 and out.stats["target_ids_cut"] == 9 - 3
    # not even the first sentence fits: it is cut inside, its BOS kept
    out = encoder(bpe_dir, src=6)(record(sentences))
    assert out.source.split()[0] == "<s>" and len(out.source.split()) == 5 and out.sentences == 1
    assert out.stats["cut_inside_first_sentence"] == 1 and out.stats["source_ids_cut"] == 11 - 4
    assert out.stats["sentences_dropped"] == 3 and out.stats["words_dropped_unencoded"] == 27


def test_text_without_segmentation_is_split_by_pysbd(bpe_dir):
    out = encoder(bpe_dir)(record(text="The team agrees on the price. We study the budget! Tests?"))
    assert out.sentences == 3 and out.stats["split_by_pysbd"] == 1


def test_whitespace_changes_count_every_gap_that_is_not_one_space():
    from fairseq_hier.preparation.sentence_bos import whitespace_changes

    assert whitespace_changes("A b. C d.", ["A b.", "C d."]) == 0
    assert whitespace_changes("A b.  C d.\nE.", ["A b.", "C d.", "E."]) == 2 + 1
    assert whitespace_changes(" \tA b.C d. ", ["A b.", "C d."]) == 2 + 1 + 1  # around, none
    assert whitespace_changes("A b. C d.", ["A b.", "X."]) == len(" C d.")  # not found


def test_whitespace_made_one_space_is_counted_and_logged(bpe_dir):
    """Documents one a line (JSON-lines examples) and a double space between two sentences: the
    source line holds the sentences one space apart, and the change is counted."""
    from fairseq_hier.preparation.sentence_bos import format_totals

    text = "The team agrees on the price.  We study the budget!\nTests are due."
    out = encoder(bpe_dir)(record(text=text))
    assert out.sentences == 3
    assert out.stats["whitespace_changed_examples"] == 1
    assert out.stats["whitespace_chars_changed"] == 2 + 1
    assert format_totals(out.stats, 64, 16).endswith(
        "; whitespace between sentences made one space: 1 examples (3 characters changed)")
    plain = encoder(bpe_dir)(record(text="The team agrees on the price. We study the budget!"))
    assert plain.stats["whitespace_changed_examples"] == plain.stats["whitespace_chars_changed"] == 0


def test_speakers_give_indices_in_order_of_first_turn(bpe_dir):
    assert speaker_indices(["Ben", "Anna", "Ben", "Carla", "Anna"]) == [0, 1, 0, 2, 1]
    turns = ["Ben: the price .", "Anna: the colour .", "Ben: the team ."]
    out = encoder(bpe_dir, speakers=True)(record(turns, speakers=["Ben", "Anna", "Ben"]))
    assert out.segments == [0, 1, 0]
    with pytest.raises(ValueError, match="file.txt:3: --speakers needs one speaker per turn"):
        encoder(bpe_dir, speakers=True)(record(turns))
    with pytest.raises(ValueError, match="file.txt:3: the source has no sentence"):
        encoder(bpe_dir)(record(text="   "))


def test_worker_processes_give_the_same_lines_in_order(bpe_dir):
    from fairseq_hier.preparation.sentence_bos import encode_records

    records = [record([f"the {w} reads notes .", "we study it ."]) for w in ("model", "team", "a")]
    records[1].sentences.append("results show gains .")
    one = [e.source for e in encode_records(encoder(bpe_dir), records, workers=1, chunk=1)]
    two = [e.source for e in encode_records(encoder(bpe_dir), records, workers=2, chunk=1)]
    assert one == two and [s.count("<s>") for s in two] == [2, 3, 2]


def test_write_split_renames_only_when_complete(bpe_dir, tmp_path):
    enc = encoder(bpe_dir, speakers=True)
    good = enc(record(["Ben: the price ."], speakers=["Ben"]))

    def examples():
        yield good
        raise ValueError("data.json:item 1: bad")

    with pytest.raises(ValueError):
        write_split(examples(), str(tmp_path / "train"), speakers=True)
    assert list(tmp_path.iterdir()) == []  # no half-written file a recipe would skip over
    totals = write_split([good, good], str(tmp_path / "train"), speakers=True)
    assert totals["examples"] == 2
    assert (tmp_path / "train.segments").read_text() == "0\n0\n"
    assert (tmp_path / "train.sentences").read_text() == "1\n1\n"


def test_cli_reports_a_bad_record_in_one_line(bpe_dir, tmp_path):
    data = tmp_path / "train.txt"
    ok = {"article_id": "a", "article_text": ["the model ."], "abstract_text": ["<S> a . </S>"],
          "labels": None, "section_names": [], "sections": []}
    data.write_text(json.dumps(ok) + "\n" + json.dumps(dict(ok, article_text="flat")) + "\n")
    proc = subprocess.run([str(BIN / "fairseq-hier-sentence-bos"), "--format", "cohan", "--input",
                           str(data), "--output-prefix", str(tmp_path / "out" / "train"),
                           "--gpt2-encoder-json", str(bpe_dir / "encoder.json"),
                           "--gpt2-vocab-bpe", str(bpe_dir / "vocab.bpe"), "--no-progress-bar"],
                          text=True, capture_output=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"fairseq-hier-sentence-bos: error: {data}:2: ") and "article_text" in last
    assert not list((tmp_path / "out").glob("train.*"))


# ------------------------------------------------------------ checks of the binarized sources
def binarized(tmp_path, lines, bos=0):
    """An mmap indexed dataset (fairseq's own builder) holding ``lines`` of token ids + EOS."""
    from fairseq.data import data_utils, indexed_dataset

    prefix = str(tmp_path / "valid.source-target.source")
    builder = indexed_dataset.make_builder(prefix + ".bin", impl="mmap", vocab_size=100)
    for line in lines:
        builder.add_item(torch.tensor(line + [2], dtype=torch.int32))
    builder.finalize(prefix + ".idx")
    return data_utils.load_indexed_dataset(prefix, None, dataset_impl="mmap"), prefix


def test_check_sentences_names_the_bad_examples(tmp_path):
    from fairseq_hier.data.sentence_dataset import check_sentences

    src, path = binarized(tmp_path, [[0, 5, 6, 0, 7], [0, 5], [5, 0, 6], [8, 9], [0, 5, 0, 6, 0, 7]])
    with pytest.raises(ValueError) as e:
        check_sentences(src, 0, np.array([2, 1, 1, 1, 2]), 6, path, "valid.sentences")
    msg = str(e.value)
    assert msg.startswith(f"{path}: 1 example(s) with no BOS: example 4: the source has no BOS "
                          f"symbol | 1 example(s) with text before the first BOS: example 3: the "
                          f"source does not start with the BOS symbol | 1 example(s) with BOS "
                          f"count: example 5: 3 BOS symbols but 2 sentences in valid.sentences | "
                          f"1 example(s) with too long: example 5: 7 tokens > --max-source-positions 6")
    good, path = binarized(tmp_path, [[0, 5, 6, 0, 7], [0, 5]])
    check_sentences(good, 0, np.array([2, 1]), 6, path, "valid.sentences")  # no error


def test_sidecar_files_are_checked_line_by_line(tmp_path):
    from fairseq_hier.data.sentence_dataset import read_segments, read_sentence_counts

    (tmp_path / "valid.sentences").write_text("2\n1\n")
    with pytest.raises(ValueError, match=r"valid.sentences has 2 lines, the binarized source has 3"):
        read_sentence_counts(str(tmp_path / "valid.sentences"), 3)
    counts = read_sentence_counts(str(tmp_path / "valid.sentences"), 2)
    (tmp_path / "valid.segments").write_text("0 1\n0 1\n")
    with pytest.raises(ValueError, match=r"valid.segments:2: 2 speaker indices for 1 sentences"):
        read_segments(str(tmp_path / "valid.segments"), counts)
    with pytest.raises(ValueError, match=r"nope.segments not found \(fairseq-hier-sentence-bos"):
        read_segments(str(tmp_path / "nope.segments"), counts)


# ------------------------------------------------------------------- speaker segment embeddings
def test_segment_embeddings_follow_each_tokens_sentence():
    """Oracle: token j of example b gets the embedding of the speaker of the last BOS at or
    before j, computed with plain loops."""
    model = build_hat(segment_embeddings=3).eval()
    src = torch.tensor([[1, 1, 0, 11, 12, 0, 13, 2],  # left-padded: 2 sentences
                        [0, 11, 0, 12, 13, 0, 14, 2]])  # 3 sentences
    segments = torch.tensor([[2, 0, 0], [0, 1, 0]])
    encoder = model.encoder
    got = encoder.embed_with_segments(src, segments)
    for b in range(2):
        sentence = -1
        for j, tok in enumerate(src[b].tolist()):
            sentence += tok == 0
            expected = encoder.embed_tokens.weight[tok]
            if sentence >= 0:
                expected = expected + encoder.embed_segments.weight[segments[b, sentence]]
            elif tok == 1:  # left padding: zeroed by fairseq's encoder anyway
                continue
            torch.testing.assert_close(got[b, j], expected)
    with torch.no_grad():
        prev = torch.tensor([[2, 11, 12]] * 2)
        a, _ = model(src, src.ne(1).sum(1), prev, src_segments=segments)
        b, _ = model(src, src.ne(1).sum(1), prev, src_segments=segments.flip(1))
    assert (a - b).abs().max() > 1e-4  # the speakers reach the output
    with pytest.raises(ValueError, match="this model has 3 segment embeddings"):
        model(src, src.ne(1).sum(1), prev)
    assert build_hat().encoder.embed_segments is None  # off by default


def build_hat(**kw):
    torch.manual_seed(0)
    return build_model("hat_bart_base", make_dict(30), **dict(TINY_HAT, **kw))


# --------------------------------------------------------------------------- PTB tokenisation
def test_ptb_tokenize_splits_sentences_and_keeps_lines(tmp_path):
    src = tmp_path / "hyp.txt"
    src.write_text("Anna can't find Betty's number. She'll call (later)!\n\nIt costs $5.\n")
    subprocess.run([str(BIN / "fairseq-hier-ptb-tokenize"), str(src), "-o", str(tmp_path / "out")],
                   check=True)
    assert (tmp_path / "out").read_text().splitlines() == [
        "Anna ca n't find Betty 's number . She 'll call ( later ) !", "", "It costs $ 5 ."]
    proc = subprocess.run([str(BIN / "fairseq-hier-ptb-tokenize"), str(tmp_path / "nope"),
                           "-o", str(tmp_path / "out")], text=True, capture_output=True)
    assert proc.returncode == 1 and proc.stderr.startswith("fairseq-hier-ptb-tokenize: error: ")


def test_hypotheses_can_read_detokenised_lines(tmp_path):
    log = tmp_path / "gen.log"
    log.write_text("H-1\t-0.5\t13 14\nD-1\t-0.5\tthe notes\nH-0\t-0.2\t15\nD-0\t-0.2\ta model\n"
                   "Generate test with beam=4: BLEU4 = 0.00\n")
    out = subprocess.run([str(BIN / "fairseq-hier-hypotheses"), str(log), "--expected", "2",
                          "--lines", "D"], text=True, capture_output=True, check=True).stdout
    assert out == "a model\nthe notes\n"
