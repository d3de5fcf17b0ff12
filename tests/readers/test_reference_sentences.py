"""A reference's sentences reach ROUGE in every reader whose layout marks them, and a tagged span
far longer than a sentence is split by pysbd and counted.

Oracle: ROUGE-1.5.5.pl itself on SEE files written here with one reference sentence per line
(:func:`rouge_oracle.perl_direct`), the form the official scores read (PreSumm's ROUGE step
splits its references on ``<q>``: nlpyang/PreSumm src/others/pyrouge.py, ``text.split("<q>")``).
"""

import collections
import json

import pytest

from fairseq_hier.preparation.ptb_tokenize import PTBTokenizer
from fairseq_hier.readers import cnndm, layouts, records
from fairseq_hier.readers.markup import join_sentences, t_sentences
from fairseq_hier.scoring import rouge

from rouge_oracle import perl_direct

needs_official = pytest.mark.skipif(
    rouge.official_unavailable() is not None,
    reason=f"official ROUGE-1.5.5 cannot run here: {rouge.official_unavailable()}")

# two reference sentences without a final period: joined by " ", no -e split can find them
SENTENCES = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "barked", "at", "it"]]
# one hypothesis sentence: ROUGE-L finds both reference sentences only if they are apart
HYPOTHESIS = "a dog barked at it the cat sat on the mat ."


def layout_records(tmp_path):
    """{layout: its first record} for a fixture of each layout holding SENTENCES as its summary."""
    text = [" ".join(s) for s in SENTENCES]
    cohan = tmp_path / "test.txt"
    cohan.write_text(json.dumps({
        "article_id": "a1", "article_text": ["an article ."],
        "abstract_text": [f"<S> {s} </S>" for s in text], "labels": None,
        "section_names": [], "sections": []}) + "\n")
    (tmp_path / "st.source").write_text("an article .\n")
    (tmp_path / "st.target").write_text(" ".join(f"<t> {s} </t>" for s in text) + "\n")
    presumm = tmp_path / "cnndm.test.0.json"
    presumm.write_text(json.dumps([{"src": [["an", "article", "."]], "tgt": SENTENCES}]))
    paths = {"cohan": str(cohan), "source_target": str(tmp_path / "st"),
             "presumm": str(tmp_path / "cnndm.test")}
    return {name: next(layouts.READERS[name](path)) for name, path in paths.items()}


@needs_official
def test_every_layouts_reference_reaches_rouge_with_its_sentences(tmp_path):
    records = layout_records(tmp_path)
    tokenize = PTBTokenizer()  # the recipes' step before ROUGE (fairseq-hier-score --protocol ptb)
    for name, record in records.items():
        assert record.reference == "the cat sat on the mat <q> a dog barked at it", name
        # the training target is unchanged: the sentences joined with " "
        assert record.summary == "the cat sat on the mat a dog barked at it", name
        assert tokenize(record.reference) == record.reference, name
    refs = [tokenize(r.reference) for r in records.values()]
    hyps = [HYPOTHESIS] * len(refs)
    official = rouge.parse_report(perl_direct(tmp_path / "perl", [[[" ".join(s) for s in
                                                                    SENTENCES]]] * len(refs),
                                              hyps))
    for eos in (".", "<q>"):  # the default splits at <q> too; -e "<q>" only there
        ours = rouge.rouge_scores(refs, hyps, eos)
        assert ours["rouge-l"] == official["rouge-l"], eos
    assert official["rouge-l"]["f"] == 1.0  # apart, each sentence is found whole


@needs_official
def test_rouges_advice_for_t_tags_reproduces_the_one_sentence_per_line_score(tmp_path):
    """The <q> form that the <t> error advises scores as ROUGE-1.5.5 on one sentence a line;
    stripping the tags instead gives the lower one-sentence ROUGE-L."""
    tagged = "<t> the cat sat on the mat </t> <t> a dog barked at it </t>"
    advised = join_sentences(t_sentences(tagged))  # 'a b . <q> c .', as the error says
    assert advised == "the cat sat on the mat <q> a dog barked at it"
    official = rouge.parse_report(perl_direct(tmp_path, [[[" ".join(s) for s in SENTENCES]]],
                                              [HYPOTHESIS]))
    assert rouge.rouge_scores([advised], [HYPOTHESIS], "<q>")["rouge-l"] == official["rouge-l"]
    stripped = " ".join(" ".join(s) for s in SENTENCES)  # joined: one LCS of 6 of 11 words
    assert rouge.rouge_scores([stripped], [HYPOTHESIS])["rouge-l"]["r"] == round(6 / 11, 5)


def test_a_whole_article_in_one_t_span_is_split_by_pysbd_and_counted(tmp_path):
    article = " ".join(f"Sentence number {i} says something about the story." for i in range(30))
    (tmp_path / "st.source").write_text(f"<t> {article} </t> <t> A short one. </t>\n")
    (tmp_path / "st.target").write_text("a summary .\n")
    stats = collections.Counter()
    record = next(cnndm.read_source_target(str(tmp_path / "st"), stats=stats))
    assert len(record.sentences) == 31 and record.sentences[-1] == "A short one."
    assert record.sentences[0] == "Sentence number 0 says something about the story."
    assert (stats["long_spans_split"], stats["long_span_sentences"]) == (1, 30)
    stats = collections.Counter()
    record = next(cnndm.read_source_target(str(tmp_path / "st"), stats=stats,
                                             max_span_words=0))  # 0: never split
    assert len(record.sentences) == 2 and "long_spans_split" not in stats
    # PreSumm's src and arXiv's article_text: only a <t>-tagged sentence is a span to split
    presumm = tmp_path / "cnndm.test.0.json"
    presumm.write_text(json.dumps([{"src": [[f"<t> {article} </t>"], article.split()],
                                    "tgt": [["a", "b"]]}]))
    stats = collections.Counter()
    record = next(cnndm.read_presumm(str(presumm), stats=stats))
    assert len(record.sentences) == 31 and stats["long_spans_split"] == 1


def test_a_long_span_without_a_boundary_is_kept_and_counted():
    stats = collections.Counter()
    words = " ".join(["word"] * 200)
    assert records.split_long_spans([words, "a b"], 150, stats) == [words, "a b"]
    assert stats == {"long_spans_kept_whole": 1}


def test_sentence_bos_writes_the_reference_with_its_sentences_and_logs_split_spans(
        tmp_path, caplog):
    """fairseq-hier-sentence-bos: PREFIX.ref keeps the tgt sentences apart (`` <q> ``); the
    target the model learns is the BPE of the sentences joined with " ", as before; a source span
    of a whole article is split and the log says how many."""
    from conftest import write_tiny_gpt2_bpe
    from fairseq_hier.preparation.sentence_bos import SentenceBOSEncoder, encode_split

    bpe = write_tiny_gpt2_bpe(tmp_path / "bpe")
    article = " ".join(f"the story says thing {i} ." for i in range(40))
    shard = tmp_path / "cnndm.test.0.json"
    shard.write_text(json.dumps([{"src": [f"<t> {article} </t>".split()], "tgt": SENTENCES}]))
    files = (str(bpe / "encoder.json"), str(bpe / "vocab.bpe"))
    with caplog.at_level("INFO"):
        totals = encode_split("presumm", str(shard), str(tmp_path / "out" / "test"), *files,
                              1024, 64, progress_bar=False, max_span_words=100)
    out = tmp_path / "out"
    assert (out / "test.ref").read_text() == "the cat sat on the mat <q> a dog barked at it\n"
    joined = SentenceBOSEncoder(*files, 1024, 64).encode_ids(
        "the cat sat on the mat a dog barked at it")
    assert (out / "test.target").read_text() == " ".join(joined) + "\n"
    assert totals["sentences"] == 40
    assert (f"{shard}: 1 <t> spans longer than 100 words split by pysbd into 40 sentences, "
            f"0 kept whole (no boundary found)") in caplog.text


def test_summarize_splits_a_one_line_article_and_counts_it():
    """fairseq-hier summarize (pipeline sentence_bos): under format cohan/presumm a line is a
    sentence, so a one-line article would be one sentence cut inside; it is split instead."""
    from fairseq_hier.inference.pipelines import PIPELINES

    article = " ".join(f"The report lists finding {i} in detail." for i in range(25))
    for fmt in ("cohan", "presumm"):
        pipeline = PIPELINES["sentence_bos"]({"format": fmt}, None)
        record = pipeline.record(f"{article}\nA second line.\n", "example 1")
        assert len(record.sentences) == 26, fmt
        assert pipeline.counts == {f"{fmt} reader: long_spans_split": 1,
                                   f"{fmt} reader: long_span_sentences": 25}, fmt
    pipeline = PIPELINES["sentence_bos"]({"format": "source_target"}, None)
    record = pipeline.record(f"<t> {article} </t>", "example 1")
    assert len(record.sentences) == 25
    assert pipeline.counts["source_target reader: long_spans_split"] == 1
