"""Document translation for any language pair: the JSON-lines document layout read by
``fairseq-hier-doc extract --format jsonl`` (each bad line one error naming the file, the line
and the field; a good file's split byte for byte), the tokenizer choice of
``fairseq-hier-doc tokenize`` (Moses with French rules, the stated fallback of a made-up
language code, ``--tokenizer none``), the choice kept in the preprocessing record and used by
the ``doc_chunks`` pipeline at inference and by ``fairseq-hier-doc-bleu``, and sacreBLEU's
tokenizer for Japanese and Korean targets."""

import json
import re

import pytest
from conftest import run_cli

from fairseq_hier.data.preprocessing_record import RECORD_FILE, RecordError, sha256
from fairseq_hier.inference.pipeline_base import RawExample
from fairseq_hier.inference.pipelines import PIPELINES
from fairseq_hier.inference.record import read_checked_record
from fairseq_hier.readers.documents import Document, write_documents
from fairseq_hier.scoring.bleu import default_tokenize, tokenize_note
from fairseq_hier.text.tokenizers import choose_tokenizer, tokenizer

EXPECTED = 'one document per line: {"id": ..., "src": [sentences], "tgt": [sentences]}'
GOOD = '{"id": "d1", "src": ["Un chat ."], "tgt": ["A cat ."]}'


def extract(*args):
    return run_cli("fairseq-hier-doc", "extract", "--format", "jsonl", "--src-lang", "fr",
                   "--tgt-lang", "en", *args, check=False)


# (second line of the file, the error after "PATH:2: "); the first line is GOOD
BAD_LINES = [
    ("not json", f"invalid JSON (Expecting value at column 1; expected {EXPECTED})"),
    ('["Un chat ."]', f"the line holds a JSON list (expected {EXPECTED})"),
    ('{"tgt": ["A dog ."]}', "'src' is missing (expected the document's source sentences, a "
                             f"list of strings; {EXPECTED})"),
    ('{"src": "Un chien .", "tgt": ["A dog ."]}',
     "'src' is a JSON string (expected the document's source sentences, a list of strings)"),
    ('{"src": ["Un chien .", 3], "tgt": ["A dog .", "Three ."]}',
     "'src' item 1 is a JSON number (expected a sentence, a string)"),
    ('{"src": ["Un chien ."]}', "'tgt' is missing (expected the document's target sentences, "
                                f"a list of strings; {EXPECTED})"),
    ('{"src": ["Un chien ."], "tgt": {"0": "A dog ."}}',
     "'tgt' is a JSON object (expected the document's target sentences, a list of strings)"),
    ('{"src": ["Un chien ."], "tgt": [null]}',
     "'tgt' item 0 is a JSON null (expected a sentence, a string)"),
    ('{"src": ["Un chien .", "Il dort ."], "tgt": ["A dog ."]}',
     "'src' has 2 sentences but 'tgt' has 1 (they must be aligned sentence by sentence)"),
    ('{"id": ["d2"], "src": ["Un chien ."], "tgt": ["A dog ."]}',
     "'id' is a JSON list (expected a string or an integer)"),
    ('{"id": true, "src": ["Un chien ."], "tgt": ["A dog ."]}',
     "'id' is a JSON boolean (expected a string or an integer)"),
    ('{"id": "d 2\\t", "src": ["Un chien ."], "tgt": ["A dog ."]}',
     "'id' 'd 2\\t' is empty, or holds a tab, a line break or surrounding spaces (expected an "
     "id on one line, or an integer)"),
    ('{"id": "d1", "src": ["Un chien ."], "tgt": ["A dog ."]}',
     "id 'd1' is also the id of line 1 (expected a different id on every line)"),
    ('{"src": ["Un chien .", " "], "tgt": ["A dog .", "It sleeps ."]}',
     "'src' item 1 is empty but 'tgt' item 1 is not (a pair of sentences is empty on both sides "
     "or on neither)"),
]


@pytest.mark.parametrize("line,error", BAD_LINES, ids=[e.split(" (")[0] for _, e in BAD_LINES])
def test_a_bad_jsonl_line_is_one_error_naming_file_line_and_field(tmp_path, line, error):
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{GOOD}\n{line}\n", encoding="utf-8")
    proc = extract("--output-prefix", tmp_path / "out" / "train", "--file", path)
    assert proc.returncode == 1
    assert proc.stdout.strip().splitlines() == [f"fairseq-hier-doc extract: error: {path}:2: "
                                                f"{error}"]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_a_missing_id_defaults_to_file_and_line_and_may_collide(tmp_path):
    """The default id ``NAME:LINE`` is an id like any other: an explicit one equal to it is
    named with both lines."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "bad.jsonl:2", "src": ["Un ."], "tgt": ["One ."]}\n'
                    '{"src": ["Deux ."], "tgt": ["Two ."]}\n', encoding="utf-8")
    proc = extract("--output-prefix", tmp_path / "train", "--file", path)
    assert proc.returncode == 1
    assert proc.stdout.strip() == (
        f"fairseq-hier-doc extract: error: {path}:2: id 'bad.jsonl:2' is also the id of line 1 "
        f"(line 2 has no 'id': 'bad.jsonl:2' is its default id) (expected a different id on "
        f"every line)")


def test_a_good_jsonl_file_gives_the_raw_split_byte_for_byte(tmp_path):
    """Ids as given (an integer as its digits) or PATH:LINE relative to the inputs' common
    folder; whitespace as the text policy says; blank lines, pairs empty on both sides and
    documents left empty dropped, each counted; unknown keys named."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "more").mkdir()
    (tmp_path / "mine" / "train.jsonl").write_text(
        '{"id": "news-1", "src": ["Bonjour le monde.", "Il fait beau\\taujourd\'hui ."], '
        '"tgt": ["Hello world.", "The weather is nice today."]}\n'
        "\n"
        '{"src": ["Deux  phrases.", " "], "tgt": [" Two sentences.", ""], "meta": 1}\n'
        '{"id": 7, "src": [], "tgt": []}\n', encoding="utf-8")
    (tmp_path / "more" / "train.jsonl").write_text(
        '{"id": 8, "src": ["Oui\u00a0!"], "tgt": ["Yes!"]}\n'
        '{"src": ["Non."], "tgt": ["No."]}\n', encoding="utf-8")
    proc = extract("--output-prefix", tmp_path / "raw" / "train", "--file",
                   tmp_path / "mine" / "train.jsonl", "--file", tmp_path / "more" / "train.jsonl")
    assert proc.returncode == 0, proc.stdout
    raw = tmp_path / "raw"
    assert (raw / "train.fr").read_bytes() == (
        "Bonjour le monde.\nIl fait beau aujourd'hui .\n\nDeux phrases.\n\nOui\u00a0!\n\nNon.\n"
    ).encode()
    assert (raw / "train.en").read_bytes() == (
        b"Hello world.\nThe weather is nice today.\n\nTwo sentences.\n\nYes!\n\nNo.\n")
    assert (raw / "train.docids").read_bytes() == (
        b"news-1\nmine/train.jsonl:3\n8\nmore/train.jsonl:2\n")
    assert f"{tmp_path}/mine/train.jsonl: 2 documents, 3 sentences" in proc.stdout
    assert re.search(rf"{tmp_path}/mine/train.jsonl: 2 documents, 3 sentence pairs; "
                     rf"blank_lines_skipped=1; documents_without_sentences_skipped=1; "
                     rf"empty_line_pairs_skipped=1; sentences_trimmed=1; "
                     rf"sentences_whitespace_collapsed=2$", proc.stdout, re.M)
    assert f"{tmp_path}/mine/train.jsonl: unknown key(s) not read: 'meta' (1 document)" in proc.stdout
    assert "total: 4 documents, 5 sentences" in proc.stdout


# ------------------------------------------------------------------------------ tokenizers
FRENCH = "L'homme qu'il a vu... n'est-ce pas ? M. Dupont est là."


def test_french_gets_moses_with_its_own_rules():
    chosen = choose_tokenizer("fr")
    assert (chosen.kind, chosen.rules, chosen.fallback) == ("moses", "fr", False)
    # French rules: elisions keep their apostrophe, "M." is a French non-breaking prefix
    assert tokenizer("fr")(FRENCH) == "L' homme qu' il a vu ... n' est @-@ ce pas ? M. Dupont est là ."
    # a region subtag keeps the language's rules; a Latin-script language without rules of its
    # own gets Moses' language-independent rules, without a warning
    assert choose_tokenizer("fr_CA").rules == "fr"
    assert (choose_tokenizer("sw").rules, choose_tokenizer("sw").fallback) == (None, False)
    assert choose_tokenizer("zh").kind == "jieba"


def write_raw(prefix, src, tgt):
    docs = [Document("d1", ["Dr. Mwangi alisema: \u201cNdiyo.\u201d", "Habari-njema!"],
                     ["Dr. Mwangi said: \u201cYes.\u201d", "Good-news!"])]
    write_documents(str(prefix), src, tgt, docs)


def test_a_language_without_rules_gets_the_stated_fallback(tmp_path):
    """A made-up code: Moses' language-independent rules (no non-breaking prefixes: "Dr." is
    split) and one warning line saying so and how to choose otherwise; never a refusal."""
    write_raw(tmp_path / "raw", "xx", "en")
    proc = run_cli("fairseq-hier-doc", "tokenize", "--input-prefix", tmp_path / "raw",
                   "--output-prefix",
                   tmp_path / "tok", "--src-lang", "xx", "--tgt-lang", "en", "--no-progress-bar")
    warnings = [line for line in proc.stdout.splitlines() if "| WARNING |" in line]
    assert len(warnings) == 1
    assert warnings[0].endswith(
        "| WARNING | fairseq_hier.doc_tokenize | no tokenizer rules for language 'xx' "
        "(sacremoses has none and it is not among the Latin-script languages): Moses' "
        "language-independent rules are used; choose otherwise with --tokenizer none (text "
        "already tokenised, or a script that Moses splits apart: Thai, Hangul), "
        "--tokenizer jieba (Chinese characters) or --tokenizer moses (this choice, without "
        "this warning)")
    assert ("tokenizer for xx (auto): sacremoses Moses punctuation normalisation and "
            "tokenisation (language-independent rules)") in proc.stdout
    assert (tmp_path / "tok.xx").read_text(encoding="utf-8") == (
        'Dr . Mwangi alisema : " Ndiyo . "\nHabari @-@ njema !\n')
    # English keeps its rules: "Dr." is an English non-breaking prefix
    assert (tmp_path / "tok.en").read_text(encoding="utf-8") == (
        'Dr. Mwangi said : " Yes . "\nGood @-@ news !\n')


def test_tokenizer_none_splits_at_whitespace_only(tmp_path):
    write_raw(tmp_path / "raw", "xx", "en")
    proc = run_cli("fairseq-hier-doc", "tokenize", "--input-prefix", tmp_path / "raw",
                   "--output-prefix",
                   tmp_path / "tok", "--src-lang", "xx", "--tgt-lang", "en", "--tokenizer",
                   "none", "--no-progress-bar")
    assert "WARNING" not in proc.stdout
    for suffix in ("xx", "en", "docids"):
        assert (tmp_path / f"tok.{suffix}").read_bytes() == (tmp_path / f"raw.{suffix}").read_bytes()
    proc = run_cli("fairseq-hier-doc", "tokenize", "--input-prefix", tmp_path / "raw",
                   "--output-prefix",
                   tmp_path / "tok2", "--src-lang", "xx", "--tgt-lang", "en", "--tokenizer",
                   "spacy", check=False)
    assert proc.returncode == 2
    assert proc.stdout.strip() == ("fairseq-hier-doc tokenize: error: argument --tokenizer: "
                                   "invalid choice: 'spacy' (choose from 'auto', 'moses', "
                                   "'jieba', 'none')")


# ------------------------------------------------------------------ the record and inference
def write_record_folder(folder, **options):
    """A data-bin's record as prepare.sh writes it (pipeline doc_chunks, a BPE codes asset)."""
    (folder / "hier_assets").mkdir(parents=True)
    codes = folder / "hier_assets" / "bpe.codes"
    codes.write_text("a b 2\n")
    record = {"format": 1, "task": "document_translation", "pipeline": "doc_chunks",
              "options": {"src_lang": "xx", "tgt_lang": "en", "max_chunk_tokens": 64, **options},
              "assets": {"bpe.codes": {"file": "hier_assets/bpe.codes", "sha256": sha256(codes)}},
              "generation": ["--beam", "4"]}
    (folder / RECORD_FILE).write_text(json.dumps(record))


def pipeline_of(folder):
    """The pipeline as fairseq-hier-summarize builds it from a checkpoint's record."""
    from fairseq_hier.data.preprocessing_record import Assets

    record = read_checked_record(str(folder))
    return PIPELINES[record["pipeline"]](record["options"], Assets.of(record, str(folder)))


def test_the_recorded_choice_tokenises_and_detokenises_at_inference(tmp_path):
    write_record_folder(tmp_path / "none", src_tokenizer="none", tgt_tokenizer="none")
    pipeline = pipeline_of(tmp_path / "none")
    example = RawExample(["Dr. Mwangi alisema: Ndiyo.\nHabari-njema!\n"])
    assert pipeline.sentences(example) == ["Dr. Mwangi alisema: Ndiyo.", "Habari-njema!"]
    assert pipeline.decode(["Good @-@ news !", "Dr. Mwangi"]) == "Good @-@ news ! Dr. Mwangi"
    # a record without the options reads as auto: the fallback for xx, Moses for English
    write_record_folder(tmp_path / "auto")
    pipeline = pipeline_of(tmp_path / "auto")
    assert pipeline.sentences(example) == ["Dr . Mwangi alisema : Ndiyo .", "Habari @-@ njema !"]
    assert pipeline.decode(["Good @-@ news !", "Dr. Mwangi"]) == "Good-news! Dr. Mwangi"
    write_record_folder(tmp_path / "bad", src_tokenizer="spacy")
    with pytest.raises(RecordError, match=r"option src_tokenizer='spacy' is not one of auto, "
                                          r"moses, jieba, none$"):
        pipeline_of(tmp_path / "bad")


def test_doc_bleu_detokenises_with_the_recorded_target_tokenizer(tmp_path):
    """The record beside the chunk map says the target was not tokenised: the hypotheses are
    scored as written (a Moses detokeniser would join "Good @-@ news"), stated in the output; the run
    directory gets the documents, references and output as scored."""
    bin_dir = tmp_path / "data-bin"
    write_record_folder(bin_dir, src_tokenizer="none", tgt_tokenizer="none")
    (bin_dir / "test.chunks").write_text("d1\t0\t0\t1\n")
    write_documents(str(tmp_path / "raw" / "test"), "xx", "en",
                    [Document("d1", ["a", "b"], ["Good @-@ news !", "Dr. Mwangi"])])
    log = tmp_path / "run" / "generate-test.txt"
    log.parent.mkdir()
    log.write_text("S-0\tx\nH-0\t-0.5\tGood @-@ news ! Dr. Mwan@@ gi\n"
                   "Generate test with beam=4: BLEU4 = 0.00\n")
    proc = run_cli("fairseq-hier-doc-bleu", f"hat={log}", "--chunks", bin_dir / "test.chunks",
                   "--reference", tmp_path / "raw" / "test.en", "--tgt-lang", "en", "--bootstrap", "0",
                   "--run-dir", tmp_path / "run")
    assert (f"hypotheses (hat): BPE '@@ ' removed; 0 stray <s>/</s> token(s) dropped; detokenised "
            f"(none: tokenizer none, tokens joined by single spaces; target tokenizer none of "
            f"{bin_dir}/{RECORD_FILE})") in proc.stdout
    assert json.loads(proc.stdout.splitlines()[-1])["systems"]["hat"]["doc_bleu"] == pytest.approx(100)
    run = tmp_path / "run"
    assert (run / "test.docs").read_text() == "Good @-@ news ! Dr. Mwangi\n"
    assert (run / "test.ref").read_text() == "Good @-@ news ! Dr. Mwangi\n"
    assert (run / "test.bleu.txt").read_text() == proc.stdout[proc.stdout.index("system "):]
    # told otherwise, the Moses detokeniser makes "Good-news!" of it, and the score drops (the
    # references then look tokenised: scored with --force)
    proc = run_cli("fairseq-hier-doc-bleu", f"hat={log}", "--chunks", bin_dir / "test.chunks",
                   "--reference", tmp_path / "raw" / "test.en", "--tgt-lang", "en", "--bootstrap", "0",
                   "--tgt-tokenizer", "moses", "--force")
    assert "detokenised (sacremoses MosesDetokenizer, lang en)" in proc.stdout
    assert json.loads(proc.stdout.splitlines()[-1])["systems"]["hat"]["doc_bleu"] < 100


def test_sacrebleu_tokenizer_for_japanese_and_korean_targets():
    assert [default_tokenize(lang) for lang in ("zh", "ja", "ko", "en", "xx")] == [
        "zh", "char", "13a", "13a", "13a"]
    assert tokenize_note("ja", "char").startswith("Japanese target: sacreBLEU's char tokenizer")
    assert tokenize_note("ko", "13a").startswith("Korean target: sacreBLEU's 13a tokenizer")
    assert tokenize_note("ja", "ja-mecab") is None and tokenize_note("de", "13a") is None
