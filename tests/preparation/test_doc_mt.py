"""Document-level translation (paper 004 Sec. 4.2): chunking at sentence boundaries, the chunk map,
the ``document_translation`` task's checks, reassembly, document BLEU against sacreBLEU, and the
WMT20 and TED recipes end to end through the real CLIs on files in the published layouts (made-up
sentences written here)."""

import json
import random
import re
import shutil

import pytest
import sacrebleu
from conftest import ROOT, run_cli, run_recipe

from fairseq_hier.data.bpe_codes import remove_bpe
from fairseq_hier.data.chunk_map import ChunkRow, read_chunk_map, reassemble
from fairseq_hier.demo.translation_corpus import toy_document, write_nc_tsv, write_sgm
from fairseq_hier.preparation.doc_chunk import chunk_spans, split_source_chunk
from fairseq_hier.readers.documents import read_sentence_blocks
from fairseq_hier.text.tokenizers import detokenizer, tokenizer

EXAMPLES = ROOT / "examples"
TINY = ["--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "16",
        "--decoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim",
        "32", "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
        "--num-workers", "0", "--seed", "1"]
MAX_CHUNK = 48
ENV = dict(BPE_CODES="80", MAX_CHUNK=str(MAX_CHUNK), UPDATES="4", WARMUP="1", MAX_TOKENS="400",
           UPDATE_FREQ="1", LOG_INTERVAL="1", BEAM="2", MAX_LEN_A="1", MAX_LEN_B="4",
           BATCH_TOKENS="2000")


@pytest.fixture(scope="module")
def wmt(tmp_path_factory):
    """The WMT20 En-De recipe, every step, on a toy corpus: News Commentary TSV for training,
    newstest2018 SGML for validation, newstest2020 SGML for test (one document longer than a
    chunk, one sentence longer than the limit)."""
    rng = random.Random(0)
    data, work = tmp_path_factory.mktemp("wmt_data"), tmp_path_factory.mktemp("wmt_work")
    write_nc_tsv(data / "news-commentary-v15.de-en.tsv",
                 [toy_document(rng, rng.randint(2, 9)) for _ in range(30)])
    write_sgm(data, 2018, [toy_document(rng, rng.randint(2, 5)) for _ in range(3)])
    test_docs = [toy_document(rng, 3), toy_document(rng, 16), toy_document(rng, 3, True)]
    write_sgm(data, 2020, test_docs)
    recipe = EXAMPLES / "wmt20_doc" / "recipe.sh"
    logs = {step: run_recipe(recipe, "en-de", step, data, work, *args, env=ENV)
            for step, args in (("extract", []), ("prepare", []), ("train", TINY), ("decode", []))}
    return {"data": data, "work": work, "logs": logs, "test_docs": test_docs}


def test_chunk_spans_are_greedy_sentence_chunks_within_the_limit():
    """Against a literal reading of the rule, on random documents: chunks tile the sentences in
    order; a chunk holds sentences while both sides fit (a source sentence costs its tokens + its
    BOS); the next sentence would not have fitted; an over-long sentence stands alone."""
    rng = random.Random(3)
    for _ in range(300):
        n, limit = rng.randint(0, 12), rng.randint(4, 30)
        src = [rng.randint(1, 35) for _ in range(n)]
        tgt = [rng.randint(1, 35) for _ in range(n)]
        spans, overlong = chunk_spans(src, tgt, limit)
        assert [i for a, b in spans for i in range(a, b + 1)] == list(range(n))
        assert overlong == [i for i in range(n) if src[i] + 1 > limit or tgt[i] > limit]
        for k, (a, b) in enumerate(spans):
            cost = (sum(s + 1 for s in src[a:b + 1]), sum(tgt[a:b + 1]))
            if a in overlong:
                assert a == b
                continue
            assert max(cost) <= limit and not set(range(a, b + 1)) & set(overlong)
            if k + 1 < len(spans):  # greedy: the next sentence did not fit
                nxt = spans[k + 1][0]
                assert cost[0] + src[nxt] + 1 > limit or cost[1] + tgt[nxt] > limit
    with pytest.raises(ValueError, match="--max-chunk-tokens must be at least 2"):
        chunk_spans([1], [1], 1)


def test_chunk_map_checks_name_file_and_line(tmp_path):
    path = tmp_path / "test.chunks"
    good = "a\t0\t0\t2\na\t1\t3\t3\nb\t0\t0\t0\n"
    path.write_text(good)
    assert [r.line() for r in read_chunk_map(str(path), 3)] == good.splitlines(keepends=True)
    for text, error in (
            ("a\t0\t0\n", r"test.chunks:1: expected docid<TAB>chunk<TAB>first<TAB>last, got 'a\\t0\\t0'"),
            ("a\t0\t0\t2\na\t1\t4\t5\n", r"test.chunks:2: document 'a' chunk 1 covers sentences "
                                         r"4-5; expected chunk 1 starting at sentence 3"),
            ("a\t1\t0\t2\n", r"test.chunks:1: document 'a' chunk 1 covers sentences 0-2; "
                             r"expected chunk 0 starting at sentence 0"),
            ("a\t0\t0\t0\nb\t0\t0\t0\na\t1\t1\t1\n", r"test.chunks:3: document 'a' continues after "
                                                     r"another document began")):
        path.write_text(text)
        with pytest.raises(ValueError, match=error):
            read_chunk_map(str(path))
    path.write_text(good)
    with pytest.raises(ValueError, match=r"test.chunks has 3 chunks, the binarized split has 4"):
        read_chunk_map(str(path), 4)


def test_reassembly_follows_the_map_whatever_the_hypotheses_hold():
    """Chunk outputs go back to their documents in the map's order, joined by a space, even when
    a hypothesis has more or fewer sentences than its source span (or none)."""
    rows = [ChunkRow("d1", 0, 0, 2), ChunkRow("d1", 1, 3, 3), ChunkRow("d2", 0, 0, 0),
            ChunkRow("d3", 0, 0, 1), ChunkRow("d3", 1, 2, 4)]
    hyps = ["A. B.", "C. D. E.", "", "F.", " G. "]
    assert reassemble(rows, hyps) == [("d1", "A. B. C. D. E."), ("d2", ""), ("d3", "F. G.")]
    with pytest.raises(ValueError, match="4 chunk outputs for 5 chunks"):
        reassemble(rows, hyps[:4])


@pytest.mark.parametrize("lang,text", [
    ("en", "The well-known \"river\" (it's 3.5 km long) - isn't it?"),
    ("de", "Die Brücke über den Fluss ist 1.200 Meter lang, oder?"),
    ("cs", "Řeka je klidná; přístav (starý) je malý.")])
def test_moses_detokenisation_inverts_tokenisation(lang, text):
    tokens = tokenizer(lang)(text)
    assert len(tokens.split()) > len(text.split())  # split off punctuation, '@-@' hyphens
    assert detokenizer(lang)(remove_bpe(tokens)) == text


def test_chinese_is_segmented_by_jieba_and_joined_back():
    tokens = tokenizer("zh")("我们今天去北京大学。")
    assert tokens.split() == ["我们", "今天", "去", "北京大学", "。"]
    assert detokenizer("zh")(tokens) == "我们今天去北京大学。"


def test_chunks_keep_every_sentence_once_in_order(wmt):
    """Source chunks split at their BOS markers, BPE removed and put back by the chunk map, give
    every tokenised sentence of every document exactly once, in order (the over-long sentence as
    its cut prefix); target chunks concatenate to the tokenised target documents."""
    work = wmt["work"]
    rows = read_chunk_map(str(work / "data-bin" / "test.chunks"))
    src_lines = (work / "chunks" / "test.en").read_text(encoding="utf-8").splitlines()
    tgt_lines = (work / "chunks" / "test.de").read_text(encoding="utf-8").splitlines()
    tok_src = read_sentence_blocks(str(work / "tok" / "test.en"))
    tok_tgt = read_sentence_blocks(str(work / "tok" / "test.de"))
    assert len(rows) == len(src_lines) == len(tgt_lines)
    assert [r.docid for r in rows].count("story2020.1") > 1  # the 16-sentence document is cut
    sentences = {}
    for row, line in zip(rows, src_lines):
        assert len(line.split()) <= MAX_CHUNK  # BOS markers included
        got = [remove_bpe(s) for s in split_source_chunk(line)]
        assert len(got) == row.last - row.first + 1
        sentences.setdefault(row.docid, []).extend(got)
    docids = (work / "raw" / "test.docids").read_text().split()
    assert list(sentences) == docids
    for docid, doc in zip(docids, tok_src):
        if docid == "story2020.2":  # its sentence 1 is the over-long one: a prefix survives
            assert sentences[docid][:1] + sentences[docid][2:] == doc[:1] + doc[2:]
            assert doc[1].startswith(sentences[docid][1]) and sentences[docid][1] != doc[1]
        else:
            assert sentences[docid] == doc
    joined = {}
    for row, line in zip(rows, tgt_lines):
        assert len(line.split()) <= MAX_CHUNK
        joined.setdefault(row.docid, []).append(remove_bpe(line))
    assert " ".join(joined["story2020.1"]) == " ".join(tok_tgt[1])


def test_the_overlong_sentence_is_counted_and_located(wmt):
    log = wmt["logs"]["prepare"]
    work = wmt["work"]
    # document 3 (story2020.2) starts after 3 + 16 sentences and two empty lines: line 22 holds
    # its sentence 0, line 23 the 60-word sentence 1
    assert re.search(rf"1 sentence\(s\) longer than --max-chunk-tokens {MAX_CHUNK} on a side: each "
                     rf"is its own chunk, cut to {MAX_CHUNK} tokens on that side; first: "
                     rf"story2020.2 sentence 1: {re.escape(str(work))}/tok/test.en:23 \(\d+ "
                     rf"tokens\), {re.escape(str(work))}/tok/test.de:23 \(\d+ tokens\)", log)
    assert len(read_sentence_blocks(str(work / "tok" / "test.en"))[2][1].split()) == 63  # It, verb, 60, .


def doc_bleu_summary(text):
    return json.loads(text.strip().splitlines()[-1])


def independent_documents(log, chunk_map, lang):
    """Documents rebuilt from a fairseq-generate log without the tool's code: the H- lines by
    example id, BPE removed (fastBPE's '@@ '), <s>/</s> tokens stripped, Moses-detokenised
    (sacremoses), and joined per document in the chunk map's order (docid, chunk, first, last)."""
    from sacremoses import MosesDetokenizer

    hyps = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        if line.startswith("H-"):
            head, _, text = line.split("\t")
            hyps[int(head[2:])] = text
    detok = MosesDetokenizer(lang=lang)
    docs = {}
    for i, row in enumerate(chunk_map.read_text().splitlines()):
        tokens = [t for t in (hyps[i] + " ").replace("@@ ", "").split() if t not in ("<s>", "</s>")]
        docs.setdefault(row.split("\t")[0], []).append(detok.detokenize(tokens))
    return {docid: " ".join(c for c in chunks if c) for docid, chunks in docs.items()}


def test_document_bleu_equals_sacrebleu_called_directly(wmt):
    """The recipe's scores, recomputed with sacreBLEU from documents rebuilt here from the H-
    lines and the raw references: whole documents (the paper's) and chunks."""
    work = wmt["work"]
    summary = doc_bleu_summary((work / "decode" / "test.bleu").read_text())
    docids = (work / "raw" / "test.docids").read_text().split()
    blocks = read_sentence_blocks(str(work / "raw" / "test.de"))
    refs = [" ".join(d) for d in blocks]
    ref_docs = dict(zip(docids, blocks))
    assert summary["documents"] == 3 and summary["baseline"] == "plain"
    assert summary["signature"].startswith("nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a")
    for kind in ("plain", "hat"):
        rebuilt = independent_documents(work / "runs" / kind / "generate-test.txt",
                                        work / "data-bin" / "test.chunks", "de")
        assert list(rebuilt) == docids
        docs = [rebuilt[d] for d in docids]
        direct = sacrebleu.corpus_bleu(docs, [refs]).score
        assert summary["systems"][kind]["doc_bleu"] == pytest.approx(direct, abs=1e-9)
        assert summary["systems"][kind]["chrf"] == pytest.approx(
            sacrebleu.corpus_chrf(docs, [refs]).score, abs=1e-9)
        assert (work / "decode" / "test" / f"{kind}.docs").read_text(
            encoding="utf-8").splitlines() == docs
        chunk_rows = [line.split("\t") for line in (work / "decode" / "test" / f"{kind}.chunks.tsv")
                      .read_text(encoding="utf-8").splitlines()]
        chunk_refs = [" ".join(ref_docs[d][int(a):int(b) + 1]) for d, _, a, b, _ in chunk_rows]
        direct = sacrebleu.corpus_bleu([r[4] for r in chunk_rows], [chunk_refs]).score
        assert summary["systems"][kind]["chunk_bleu"] == pytest.approx(direct, abs=1e-9)
    assert summary["systems"]["plain"]["p_value"] is None
    assert 0 <= summary["systems"]["hat"]["p_value"] <= 1


def test_each_system_has_its_run_directory(wmt):
    """WORK/runs/KIND: run.json, the generate log, the documents and references as scored
    and that system's doc-bleu output, with the scores of the side-by-side table."""
    work = wmt["work"]
    table = doc_bleu_summary((work / "decode" / "test.bleu").read_text())
    refs = [" ".join(d) for d in read_sentence_blocks(str(work / "raw" / "test.de"))]
    for kind, arch in (("plain", "transformer_wmt_en_de_big"), ("hat", "hat_transformer_wmt_en_de")):
        run = work / "runs" / kind
        assert json.loads((run / "run.json").read_text()) == {
            "name": kind, "arch": arch, "task": "document_translation", "metric": "bleu"}
        assert (run / "test.docs").read_bytes() == (work / "decode" / "test" / f"{kind}.docs").read_bytes()
        assert (run / "test.ref").read_text(encoding="utf-8").splitlines() == refs
        own = (run / "test.bleu.txt").read_text(encoding="utf-8")
        assert re.search(rf"^{kind} +[\d.]+ +[\d.]+ ± [\d.]+ +[\d.]+ +- +- +[\d.]+$", own, re.M)
        scores = doc_bleu_summary(own)["systems"][kind]
        for key in ("doc_bleu", "chrf", "chunk_bleu", "sacrebleu_mean", "sacrebleu_ci95"):
            assert scores[key] == table["systems"][kind][key]
        assert (run / "generate-test.txt").is_file() and (run / "train.log").is_file()


def test_the_recipe_trains_both_systems_and_prints_them_side_by_side(wmt):
    logs, work = wmt["logs"], wmt["work"]
    assert "hat_transformer_wmt_en_de, --max-tokens 400 --update-freq 1, 4 updates" in logs["train"]
    assert "transformer_wmt_en_de_big, --max-tokens 400 --update-freq 1, 4 updates" in logs["train"]
    assert "effective batch: 400 tokens x 1 GPU(s) x update-freq 1 = 400 tokens" in logs["train"]
    for kind in ("plain", "hat"):
        assert (work / "runs" / kind / "checkpoint_best.pt").exists()
    table = logs["decode"]
    assert "== newstest2020 (en-de), document-level sacreBLEU" in table
    assert re.search(r"^system +doc BLEU +95% CI +doc chrF +delta vs plain \[95% interval\] +p "
                     r"+chunk BLEU$", table, re.M)
    assert re.search(r"^plain +[\d.]+ +[\d.]+ ± [\d.]+ +[\d.]+ +\(baseline\) +- +[\d.]+$",
                     table, re.M)
    assert re.search(r"^hat +[\d.]+ +[\d.]+ ± [\d.]+ +[\d.]+ +[-+][\d.]+ \[[-+][\d.]+, "
                     r"[-+][\d.]+\] +[\d.]+\*? +[\d.]+$", table, re.M)
    assert "3 documents, " in table and "BLEU signature: nrefs:1|bs:1000" in table
    assert "chrF signature: nrefs:1|case:mixed|eff:yes|nc:6" in table
    # the test's short length limit is flagged (fairseq-generate's defaults would cut chunks)
    assert (f"--max-len-a 1.0 --max-len-b 4 allow {MAX_CHUNK + 4} tokens for a chunk of up to "
            f"{MAX_CHUNK} source tokens: long chunks may be cut before EOS") in table
    # the tokenizer choice (the default, auto) is kept beside the tokenised text and recorded
    assert (work / "tok" / "tokenizers").read_text() == "auto auto\n"
    options = json.loads((work / "data-bin" / "hier_preprocess.json").read_text())["options"]
    assert (options["src_tokenizer"], options["tgt_tokenizer"]) == ("auto", "auto")
    # a second run skips every finished step
    again = run_recipe(EXAMPLES / "wmt20_doc" / "recipe.sh", "en-de", "prepare", wmt["data"], work, env=ENV)
    assert again.count("exists, skipped") == 8  # tokenise x3, BPE, chunk x3, binarize
    # another tokenizer than the one that made WORK/tok is refused, not recorded
    with pytest.raises(AssertionError, match=re.escape(
            f"prepare.sh: {work}/tok was tokenised with source and target tokenizers auto auto, "
            f"not none auto: set SRC_TOKENIZER/TGT_TOKENIZER back, or remove {work}/tok")):
        run_recipe(EXAMPLES / "wmt20_doc" / "recipe.sh", "en-de", "prepare", wmt["data"], work,
                   env=dict(ENV, SRC_TOKENIZER="none"))


def test_the_task_checks_chunks_against_their_map_before_generating(wmt, tmp_path):
    bin_dir = tmp_path / "data-bin"
    shutil.copytree(wmt["work"] / "data-bin", bin_dir)
    lines = (bin_dir / "test.chunks").read_text().splitlines()
    # merge the first two chunks' spans of the long document in the map only: BOS counts differ
    k = next(i for i, line in enumerate(lines) if line.startswith("story2020.1\t1\t"))
    first, second = lines[k - 1].split("\t"), lines[k].split("\t")
    lines[k - 1] = "\t".join([first[0], first[1], first[2], str(int(first[3]) + 1)])
    lines[k] = "\t".join([second[0], second[1], str(int(second[2]) + 1), second[3]])
    (bin_dir / "test.chunks").write_text("\n".join(lines) + "\n")
    proc = run_cli("fairseq-generate", bin_dir, "--user-dir", ROOT / "fairseq_hier", "--task",
                   "document_translation", "--source-lang", "en", "--target-lang", "de",
                   "--max-chunk-tokens", MAX_CHUNK, "--path",
                   wmt["work"] / "runs" / "hat" / "checkpoint_best.pt", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout
    bos = [line.split().count("<s>") for line in (wmt["work"] / "chunks" / "test.en").read_text()
           .splitlines()[k - 1:k + 1]]
    chunks = re.escape(f"{bin_dir}/test.chunks")
    assert re.search(rf"^fairseq-generate: error: {re.escape(str(bin_dir))}/test.en-de.en: 2 "
                     rf"example\(s\) with "
                     rf"BOS count: example {k}: {bos[0]} BOS symbols but {bos[0] + 1} sentences in "
                     rf"{chunks}; example {k + 1}: {bos[1]} BOS symbols but {bos[1] - 1} sentences "
                     rf"in {chunks}; every sentence must open with BOS \(fairseq-hier-doc chunk "
                     rf"--max-chunk-tokens\) and sources must be cut at sentence boundaries there",
                     proc.stdout, flags=re.M)


def test_doc_bleu_errors_are_one_line(wmt, tmp_path):
    work = wmt["work"]
    log = (work / "runs" / "hat" / "generate-test.txt").read_text().splitlines()
    cut = tmp_path / "cut.txt"
    cut.write_text("\n".join(line for line in log if not line.startswith(("H-3\t", "D-3\t"))) + "\n")
    args = ["--chunks", work / "data-bin" / "test.chunks", "--reference", work / "raw" / "test.de",
            "--tgt-lang", "de"]
    proc = run_cli("fairseq-hier-doc-bleu", f"hat={cut}", *args, check=False)
    assert proc.returncode == 1
    assert proc.stdout.strip().splitlines()[-1] == (
        f"fairseq-hier-doc-bleu: error: {cut}: 1 of {len(read_chunk_map(str(args[1])))} examples "
        f"have no hypothesis (first ids: [3]); was a batch dropped or filtered?")
    proc = run_cli("fairseq-hier-doc-bleu", f"hat={cut}", *args[:2], "--reference",
                   work / "raw" / "valid.de",
                   "--docids", work / "raw" / "test.docids", "--tgt-lang", "de", check=False)
    assert proc.returncode == 1 and "error: " in proc.stdout and "Traceback" not in proc.stdout


def test_a_special_symbol_in_the_text_is_an_error_naming_its_line(tmp_path):
    """A token that stays one of fairseq's special symbols after BPE would be read as that symbol
    (BOS markers!): codes that merge '<unk>' whole make it one."""
    (tmp_path / "codes").write_text("< u 10\n<u n 10\n<un k 10\n<unk ></w> 10\n")
    for lang, text in (("en", "a b\nc <unk> d\n\ne f\n"), ("de", "A B\nC D\n\nE F\n")):
        (tmp_path / f"tok.{lang}").write_text(text)
    (tmp_path / "tok.docids").write_text("x\ny\n")
    proc = run_cli("fairseq-hier-doc", "chunk", "--input-prefix", tmp_path / "tok",
                   "--output-prefix",
                   tmp_path / "out", "--src-lang", "en", "--tgt-lang", "de", "--codes",
                   tmp_path / "codes", check=False)
    assert proc.returncode == 1
    assert proc.stdout.strip().splitlines()[-1] == (
        f"fairseq-hier-doc chunk: error: {tmp_path}/tok.en:2: the sentence holds '<unk>', one of "
        f"fairseq's special symbols ('<s>', '<pad>', '</s>', '<unk>'): escape or remove it "
        f"before chunking")


TED_ZH = "今天 河流 很 安静 。 渔夫 在 早上 卖 新鲜 的 面包 。 孩子 慢慢 走 过 绿色 的 桥 。".split(" 。 ")


def ted_talk(rng, talkid, n):
    idx = [rng.randrange(3) for _ in range(n)]
    zh = [TED_ZH[i].replace(" ", "") + "。" for i in idx]
    en = [["Today the river is quiet.", "The fisherman sells fresh bread in the morning.",
           "The child walks slowly over the green bridge."][i] for i in idx]
    return talkid, zh, en


def write_ted(data, rng):
    """IWSLT17 layouts: train.tags.zh-en.{zh,en} and the dev/test mteval XML."""
    talks = [ted_talk(rng, str(100 + k), rng.randint(3, 7)) for k in range(8)]
    for side, lang in ((1, "zh"), (2, "en")):
        lines = []
        for talk in talks:
            lines += [f"<url>http://www.ted.com/talks/talk_{talk[0]}.html</url>",
                      "<keywords>talks, rivers</keywords>", "<speaker>A Speaker</speaker>",
                      f"<talkid>{talk[0]}</talkid>", "<title>A talk</title>",
                      "<description>About rivers.</description>", *talk[side]]
        (data / f"train.tags.zh-en.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, first in (("dev2010", 500), ("tst2012", 600), ("tst2017", 700)):
        for side, lang, tag in ((1, "zh", "srcset"), (2, "en", "refset")):
            lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<mteval>",
                     f'<{tag} setid="iwslt2017-{name}" srclang="chinese" trglang="english">']
            for k in range(2):
                talk = ted_talk(random.Random(first + k), str(first + k), 4)
                lines += [f'<doc docid="{talk[0]}" genre="lectures">',
                          f"<url>http://www.ted.com/talks/t{talk[0]}.html</url>",
                          "<description>About rivers.</description>",
                          "<keywords>talks</keywords>", f"<talkid>{talk[0]}</talkid>",
                          "<title>A talk</title>"]
                lines += [f'<seg id="{i + 1}"> {s} </seg>' for i, s in enumerate(talk[side])]
                lines.append("</doc>")
            lines += [f"</{tag}>", "</mteval>"]
            (data / f"IWSLT17.TED.{name}.zh-en.{lang}.xml").write_text("\n".join(lines) + "\n",
                                                                        encoding="utf-8")


def test_ted_recipe_reads_iwslt17_and_prepares_jieba_chunks(tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    data.mkdir()
    write_ted(data, random.Random(5))
    recipe = EXAMPLES / "ted_zh_en" / "recipe.sh"
    log = run_recipe(recipe, "extract", data, work, env=ENV)
    assert "tst2016 (with its reference) not in" in log
    log += run_recipe(recipe, "prepare", data, work, env=ENV)
    assert (work / "raw" / "valid.docids").read_text().split() == ["500", "501", "600", "601"]
    assert (work / "raw" / "test.docids").read_text().split() == ["700", "701"]
    assert (work / "raw" / "test.name").read_text().strip() == "tst2017"
    assert len((work / "raw" / "train.docids").read_text().split()) == 8
    tok = read_sentence_blocks(str(work / "tok" / "test.zh"))
    assert all(" " in s for doc in tok for s in doc)  # jieba segmented the Chinese side
    assert (work / "data-bin" / "test.chunks").exists() and (work / "data-bin" / "dict.zh.txt").exists()
    chunks = (work / "chunks" / "test.zh").read_text(encoding="utf-8").splitlines()
    assert all(line.startswith("<s> ") for line in chunks)
    assert sum(line.split().count("<s>") for line in chunks) == 8


def test_tokenising_with_worker_processes_gives_the_same_files(wmt, tmp_path):
    work = wmt["work"]
    run_cli("fairseq-hier-doc", "tokenize", "--input-prefix", work / "raw" / "test",
            "--output-prefix",
            tmp_path / "test", "--src-lang", "en", "--tgt-lang", "de", "--workers", "2")
    for suffix in ("en", "de", "docids"):
        assert (tmp_path / f"test.{suffix}").read_bytes() == (work / "tok" / f"test.{suffix}").read_bytes()

