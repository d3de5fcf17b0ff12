"""CNN/DailyMail layouts (fairseq_hier/readers/cnndm.py, shared/formats/MORE_LAYOUTS.md):
PreSumm's json shards, ``<t> ... </t>``-tagged text in every reader, the markup that would reach a
ROUGE reference (``fairseq-hier-sentence-bos``), and the CNN/DM recipe choosing its reader from
the files in DATA_DIR.

Every file is written here in the publisher's exact layout with made-up sentences."""

import collections
import json
import re

import pytest

from conftest import ROOT, run_cli, run_recipe, write_tiny_gpt2_bpe
from fairseq_hier.inference.pipelines import PIPELINES, RawExample
from fairseq_hier.inference.record import Assets
from fairseq_hier.readers.cnndm import presumm_shards, read_presumm, read_source_target
from fairseq_hier.readers.cohan import read_cohan
from fairseq_hier.readers.lines import ReaderError
from fairseq_hier.readers.qmsum import read_qmsum
from fairseq_hier.readers.records import Record
from fairseq_hier.readers.samsum import read_samsum

EXAMPLES = ROOT / "examples"


def exact(message):
    return f"^{re.escape(message)}$"


def write_shard(path, items):
    """One PreSumm shard: a JSON list of {"src": [[token, ...], ...], "tgt": [[...], ...]}."""
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def item(src, tgt):
    """A PreSumm item from sentences written as strings (split into their tokens)."""
    return {"src": [s.split() for s in src], "tgt": [t.split() for t in tgt]}


# ---------------------------------------------------------------------------------------------
# PreSumm json shards
# ---------------------------------------------------------------------------------------------

def test_presumm_shards_in_numeric_order_with_ptb_tokens_kept(tmp_path):
    write_shard(tmp_path / "cnndm.valid.0.json", [
        item(["-lrb- cnn -rrb- -- the mayor opened a bridge .", "`` it is long , '' she said ."],
             ["mayor opens bridge .", "it is long ."]),
        item(["rain fell all day ."], ["rain ."]),
    ])
    for k in range(1, 11):  # .10 must come after .9, not after .1
        write_shard(tmp_path / f"cnndm.valid.{k}.json", [item([f"story {k} ."], [f"sum {k} ."])])
    write_shard(tmp_path / "cnndm.train.0.json", [item(["other split ."], ["no ."])])
    (tmp_path / "cnndm.valid.0.bert.pt").write_bytes(b"not a shard")
    stats, skipped = collections.Counter(), []
    records = list(read_presumm(str(tmp_path / "cnndm.valid"), stats=stats, skipped=skipped))
    assert records[0] == Record(
        id="cnndm.valid.0.json:item 0", where=f"{tmp_path}/cnndm.valid.0.json:item 0",
        sentences=["-lrb- cnn -rrb- -- the mayor opened a bridge .",
                   "`` it is long , '' she said ."],
        text=None, speakers=None, summary="mayor opens bridge . it is long .",
        summary_sentences=["mayor opens bridge .", "it is long ."])
    assert [r.id for r in records[1:]] == ["cnndm.valid.0.json:item 1"] + [
        f"cnndm.valid.{k}.json:item 0" for k in range(1, 11)]
    assert stats == {"records": 12, "shards": 11} and skipped == []


def test_presumm_one_shard_file_empty_sentences_and_empty_items(tmp_path):
    path = write_shard(tmp_path / "cnndm.test.3.json", [
        {"src": [["a", "b", "."], [], ["c", " ", "."]], "tgt": [[], ["d", "."]]},
        {"src": [[]], "tgt": [["e", "."]]},
        {"src": [["f", "."]], "tgt": []},
    ])
    stats, skipped = collections.Counter(), []
    (record,) = read_presumm(str(path), stats=stats, skipped=skipped)
    assert record.sentences == ["a b .", "c ."] and record.summary_sentences == ["d ."]
    assert record.id == "cnndm.test.3.json:item 0"
    assert stats == {"records": 1, "shards": 1, "empty_sentences_dropped": 2,
                     "empty_summary_sentences_dropped": 1, "skipped_empty_source": 1,
                     "skipped_empty_summary": 1}
    assert skipped == [f"{path}:item 1: empty source", f"{path}:item 2: empty summary"]


@pytest.mark.parametrize("bad, error", [
    (["a", "b"], "item 1: the record is a JSON list (expected a JSON object with keys src, "
     "tgt)"),
    ({"src": [["a"]]}, "item 1: the record lacks the key(s) tgt (expected keys src, tgt; has "
     "src)"),
    ({"src": "a b .", "tgt": [["t"]]}, "item 1: 'src' is a JSON string (expected a list of "
     "sentences, each a list of tokens (str))"),
    ({"src": [["a"], "b c ."], "tgt": [["t"]]}, "item 1: 'src' sentence 1 is a JSON string "
     "(expected a list of tokens (str))"),
    ({"src": [["a"]], "tgt": [["t", 7]]}, "item 1: 'tgt' sentence 0 token 1 is a JSON number "
     "(expected a token (str))"),
])
def test_presumm_malformed_item_names_shard_and_item(tmp_path, bad, error):
    path = write_shard(tmp_path / "cnndm.train.0.json", [item(["s ."], ["t ."]), bad])
    records = read_presumm(str(tmp_path / "cnndm.train"))
    assert next(records).id == "cnndm.train.0.json:item 0"
    with pytest.raises(ReaderError, match=exact(f"{path}:{error}")):
        next(records)


def test_presumm_file_errors(tmp_path):
    prefix = str(tmp_path / "cnndm.train")
    expected = (f"expected PreSumm's json shards {prefix}.0.json, {prefix}.1.json, ..., or one "
                f"shard file")
    with pytest.raises(ReaderError, match=exact(
            f"{prefix}: no shard {prefix}.N.json found ({expected})")):
        presumm_shards(prefix)
    for k in (0, 1, 4):
        write_shard(tmp_path / f"cnndm.train.{k}.json", [])
    with pytest.raises(ReaderError, match=exact(
            f"{prefix}: shard(s) 2, 3 missing among {prefix}.0.json to .4.json (PreSumm numbers "
            f"a split's shards from 0 without gaps; name one shard file to read it alone)")):
        presumm_shards(prefix)
    write_shard(tmp_path / "cnndm.train.01.json", [])
    with pytest.raises(ReaderError, match=exact(
            f"{prefix}: shard number(s) 1 written twice ({expected})")):
        presumm_shards(prefix)
    (tmp_path / "cnndm.valid.0.json").write_text('{"src": []}', encoding="utf-8")
    with pytest.raises(ReaderError, match=exact(
            f"{tmp_path}/cnndm.valid.0.json:1: the file holds a JSON object (expected a JSON "
            f"list of objects with keys src, tgt)")):
        list(read_presumm(str(tmp_path / "cnndm.valid")))
    (tmp_path / "cnndm.test.0.json").write_text('[{"src": [["a"]],\n "tgt": [["b"]]', "utf-8")
    with pytest.raises(ReaderError, match=exact(
            f"{tmp_path}/cnndm.test.0.json:2: invalid JSON (Expecting ',' delimiter at column "
            f"16; expected one JSON list)")):
        list(read_presumm(str(tmp_path / "cnndm.test")))


# ---------------------------------------------------------------------------------------------
# <t> ... </t> sentence tags, in every reader
# ---------------------------------------------------------------------------------------------

def test_source_target_reads_t_tags_as_sentence_boundaries(tmp_path):
    (tmp_path / "test.source").write_text(
        "<t> The mayor opened a bridge. </t> <t> Crowds   cheered. </t>\n"
        "Rain fell all day. It stopped.\n", encoding="utf-8")
    (tmp_path / "test.target").write_text(
        "<t> a bridge opened . </t> <t> crowds cheered . </t>\n"
        "Rain fell. <t> it stopped . </t>\n", encoding="utf-8")
    stats = collections.Counter()
    first, second = read_source_target(str(tmp_path / "test"), stats=stats)
    assert first == Record(
        id="test.source:1", where=f"{tmp_path}/test.source:1",
        sentences=["The mayor opened a bridge.", "Crowds cheered."], text=None, speakers=None,
        summary="a bridge opened . crowds cheered .",
        summary_sentences=["a bridge opened .", "crowds cheered ."])
    # an untagged source stays text for pysbd; text before a tag is a sentence of its own
    assert (second.sentences, second.text) == (None, "Rain fell all day. It stopped.")
    assert second.summary_sentences == ["Rain fell.", "it stopped ."]
    assert second.summary == "Rain fell. it stopped ."
    assert stats == {"records": 2, "t_tagged_sources": 1, "t_tagged_summaries": 2}


def test_every_reader_drops_t_tags_from_summaries(tmp_path):
    tagged, sentences = "<t> the team met . </t> <t> it agreed . </t>", ["the team met .",
                                                                         "it agreed ."]
    (tmp_path / "train.txt").write_text(json.dumps({
        "article_id": "a1", "article_text": ["<t> one . </t> <t> two . </t>", "three ."],
        "abstract_text": [f"<S> {tagged} </S>"], "labels": None, "section_names": [],
        "sections": []}) + "\n", encoding="utf-8")
    (tmp_path / "train.json").write_text(json.dumps([{
        "id": "d1", "summary": tagged, "dialogue": "Kim: <t> hi there </t>\r\nLee: hello"}]),
        encoding="utf-8")
    (tmp_path / "train.jsonl").write_text(json.dumps({
        "meeting_transcripts": [{"speaker": "Marketing", "content": "<t> we met . </t>"}],
        "general_query_list": [{"query": "Summarize the whole meeting.", "answer": tagged}]})
        + "\n", encoding="utf-8")
    write_shard(tmp_path / "cnndm.train.0.json", [
        {"src": [["<t>", "a", ".", "</t>", "<t>", "b", ".", "</t>"]],
         "tgt": [["<t>", "the", "team", "met", ".", "</t>", "<t>", "it", "agreed", ".",
                  "</t>"]]}])
    stats = {name: collections.Counter() for name in ("cohan", "samsum", "qmsum", "presumm")}
    (cohan,) = read_cohan(str(tmp_path / "train.txt"), stats=stats["cohan"])
    (samsum,) = read_samsum(str(tmp_path / "train.json"), stats=stats["samsum"])
    (qmsum,) = read_qmsum(str(tmp_path / "train.jsonl"), stats=stats["qmsum"])
    (presumm,) = read_presumm(str(tmp_path / "cnndm.train"), stats=stats["presumm"])
    for record in (cohan, samsum, qmsum, presumm):
        assert (record.summary, record.summary_sentences) == (" ".join(sentences), sentences)
    assert cohan.sentences == ["one .", "two .", "three ."]
    assert presumm.sentences == ["a .", "b ."]
    # a dialogue turn stays one sentence (one BOS per turn): its tags are dropped
    assert samsum.sentences == ["Kim: hi there", "Lee: hello"]
    assert qmsum.sentences == ["Marketing: we met ."]
    for name in stats:
        assert (stats[name]["t_tagged_sources"], stats[name]["t_tagged_summaries"]) == (1, 1)


def test_sentence_pipeline_reads_t_tags_as_the_reader_does(tmp_path):
    """Raw documents under format source_target / presumm give the reader's sentences."""
    def sentences(fmt, text):
        pipeline = PIPELINES["sentence_bos"]({"format": fmt}, None)
        record = pipeline.record(text, "example 1")
        return record.sentences, record.text, dict(pipeline.counts)

    assert sentences("source_target", "<t> One here. </t>\n<t> Two. </t>") == (
        ["One here.", "Two."], None, {"source_target reader: t_tagged_sources": 1})
    assert sentences("source_target", "One here. Two.") == (None, "One here. Two.", {})
    assert sentences("presumm", "<t> a . </t> <t> b . </t>\n\nc .\n") == (
        ["a .", "b .", "c ."], None, {"presumm reader: t_tagged_sources": 1})


# ---------------------------------------------------------------------------------------------
# fairseq-hier-sentence-bos: the written reference, and markup named before scoring
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bpe(tmp_path_factory):
    return write_tiny_gpt2_bpe(tmp_path_factory.mktemp("bpe"))


def sentence_bos(bpe, *args):
    return run_cli("fairseq-hier-sentence-bos", *args, "--gpt2-encoder-json",
                   bpe / "encoder.json", "--gpt2-vocab-bpe", bpe / "vocab.bpe",
                   "--no-progress-bar").stdout


def test_sentence_bos_writes_references_without_t_tags_and_names_other_markup(tmp_path, bpe):
    (tmp_path / "test.source").write_text(
        "<t> the model reads long papers . </t> <t> we study meetings . </t> <t> results show "
        "gains . </t>\nThe team agrees. The price is new.\n", encoding="utf-8")
    (tmp_path / "test.target").write_text(
        "<t> the model reads <unk> papers . </t> <t> we study <unk> . </t>\n"
        "The team agrees on the <file_gif> budget.\n", encoding="utf-8")
    log = sentence_bos(bpe, "--format", "source_target", "--input", tmp_path / "test",
                       "--output-prefix", tmp_path / "bpe" / "test")
    assert (tmp_path / "bpe" / "test.ref").read_text() == (
        "the model reads <unk> papers . <q> we study <unk> .\n"
        "The team agrees on the <file_gif> budget.\n")
    # the tagged article keeps its 3 sentences; pysbd splits the untagged one in 2
    assert (tmp_path / "bpe" / "test.sentences").read_text() == "3\n2\n"
    assert f"read {tmp_path}/test: records=2 t_tagged_sources=1 t_tagged_summaries=1" in log
    assert ("(1 with the dataset's own segmentation, 1 split by pysbd)") in log
    assert (f"{tmp_path}/bpe/test.ref: 2 of 2 references hold markup that ROUGE-1.5.5 reads "
            f"only up to its '<' (kept: it is the dataset's text): 2 x <unk>, 1 x <file_gif>"
            ) in log, log


# ---------------------------------------------------------------------------------------------
# examples/hat_cnndm/recipe.sh prepare: the reader chosen from DATA_DIR's files
# ---------------------------------------------------------------------------------------------

def test_cnndm_recipe_reads_presumm_shards(tmp_path, tiny_bart_dir):
    data = tmp_path / "presumm"
    data.mkdir()
    words = ["the model reads long papers .", "we study meetings .", "results show gains ."]
    for split, shards in (("train", 2), ("valid", 1), ("test", 1)):
        for k in range(shards):
            write_shard(data / f"cnndm.{split}.{k}.json",
                        [item(words[j:] + words[:j], [words[j]]) for j in range(2)])
    work = tmp_path / "work"
    log = run_recipe(EXAMPLES / "hat_cnndm" / "recipe.sh", "prepare", data, work, tiny_bart_dir)
    assert (f"recipe.sh: {data} read as LAYOUT=presumm: {data}/cnndm.train {data}/cnndm.valid "
            f"{data}/cnndm.test") in log
    assert f"read {data}/cnndm.train: records=4 shards=2" in log
    assert "4 examples, 12 sentences kept (4 with the dataset's own segmentation, 0 split by " \
           "pysbd)" in log, log[-3000:]
    assert (work / "bpe" / "valid.ids").read_text() == \
        "cnndm.valid.0.json:item 0\ncnndm.valid.0.json:item 1\n"
    assert (work / "bpe" / "test.ref").read_text() == "the model reads long papers .\n" \
                                                       "we study meetings .\n"
    assert (work / "data-bin" / "train.sentences").read_text() == "3\n3\n3\n3\n"
    record = json.loads((work / "data-bin" / "hier_preprocess.json").read_text())
    assert record["options"]["format"] == "presumm"
    # a raw document, one sentence a line, is lowercased as PreSumm's tokens are
    pipeline = PIPELINES["sentence_bos"](record["options"], Assets({
        "encoder.json": str(tiny_bart_dir / "encoder.json"),
        "vocab.bpe": str(tiny_bart_dir / "vocab.bpe")}))
    raw = "The Model reads long papers .\nWe study MEETINGS .\nResults show gains .\n"
    line = pipeline.encode(RawExample([raw]))[0]
    assert line == (work / "bpe" / "train.source").read_text().splitlines()[0]


def test_cnndm_recipe_refuses_ambiguous_or_unknown_layouts(tmp_path):
    (tmp_path / "cnndm.train.0.json").write_text("[]")
    (tmp_path / "train.source").write_text("")
    with pytest.raises(AssertionError, match="set LAYOUT=source_target or LAYOUT=presumm"):
        run_recipe(EXAMPLES / "hat_cnndm" / "recipe.sh", "prepare", tmp_path, tmp_path / "w",
                   tmp_path)
    with pytest.raises(AssertionError, match=r"holds neither train\.source/\.target"):
        run_recipe(EXAMPLES / "hat_cnndm" / "recipe.sh", "prepare", tmp_path / "empty",
                   tmp_path / "w", tmp_path)
