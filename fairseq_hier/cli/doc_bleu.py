"""``fairseq-hier-doc-bleu``: chunk translations -> whole documents -> document-level sacreBLEU
(paper 004 Sec. 4.2 and Table 7: "We translate each chunk separately and afterwards concatenate
the translated chunks to compute the BLEU score for the entire document").

    fairseq-hier-doc-bleu transformer=work/decode/transformer/generate-test.txt \\
        hat=work/decode/hat/generate-test.txt --chunks work/data-bin/test.chunks \\
        --ref work/raw/test.de --tgt-lang de --output-dir work/decode

Per system (``NAME=LOG``, LOG: ``fairseq-generate`` output; its ``H-`` lines, or ``D-`` with
``--lines D``): every chunk must have exactly one hypothesis; BPE is removed (``@@ ``), stray
``<s>``/``</s>`` are dropped (counted), the text is detokenised (sacremoses, jieba's spaces for
zh), and the chunks of each document are concatenated in the chunk map's order (the map alone
aligns hypothesis and source chunk, whatever number of sentences the model emitted). References:
the raw target file (``fairseq-hier-doc-extract`` output: one sentence per line, documents
separated by an empty line) with its ``.docids``; documents and sentence counts must match the
chunk map. A reference document is its sentences joined by spaces.

Scores (sacreBLEU as a library, signature printed): **document BLEU** (corpus BLEU whose segments
are whole documents: the paper's), and for reference **chunk BLEU** (segments are chunks, each
against its reference sentences joined). With two or more systems the first is the baseline:
sacreBLEU's paired bootstrap resampling over documents gives each system's 95% interval and its
p-value against the baseline; one system gets its bootstrap interval alone. Written to
``--output-dir``: ``NAME.docs`` (one detokenised document a line, the docids' order) and
``NAME.chunks.tsv`` (docid, chunk, first and last sentence, hypothesis). Last line: JSON.
"""

import json
import logging
import os
import sys
from typing import Dict, List, Optional, Tuple

from fairseq_hier.cli.common import command_parser, run_command

logger = logging.getLogger("fairseq_hier.doc_bleu")
PROG = "fairseq-hier-doc-bleu"
STRAY = ("<s>", "</s>")


def load_references(ref: str, docids_path: str, rows) -> Tuple[List[str], List[str]]:
    """The reference of every document and of every chunk, checked against the chunk map."""
    from fairseq_hier.data.doc_chunks import documents_of
    from fairseq_hier.data.documents import read_sentence_blocks
    from fairseq_hier.io import read_lines

    blocks, docids = read_sentence_blocks(ref), read_lines(docids_path)
    if len(blocks) != len(docids):
        raise ValueError(f"{ref} has {len(blocks)} documents but {docids_path} names {len(docids)}")
    docs = documents_of(rows)
    if [d for d, _, _ in docs] != docids:
        first = next((i for i, (a, (b, _, _)) in enumerate(zip(docids, docs)) if a != b),
                     min(len(docs), len(docids)))
        raise ValueError(f"the chunk map's documents differ from {docids_path} at document "
                         f"{first + 1} ({len(docs)} vs {len(docids)} documents): is it the map of "
                         f"this split?")
    for (docid, _, n), block in zip(docs, blocks):
        if n != len(block):
            raise ValueError(f"document {docid!r}: {len(block)} reference sentences in {ref}, "
                             f"{n} in the chunk map")
    doc_refs = [" ".join(b) for b in blocks]
    by_doc = dict(zip(docids, blocks))
    chunk_refs = [" ".join(by_doc[r.docid][r.first:r.last + 1]) for r in rows]
    return doc_refs, chunk_refs


def clean_hypotheses(hyps: List[str], lang: str, log: str) -> List[str]:
    from fairseq_hier.data.doc_chunks import detokenizer, remove_bpe

    detok = detokenizer(lang)
    stray, out = 0, []
    for h in hyps:
        tokens = remove_bpe(h).split()
        kept = [t for t in tokens if t not in STRAY]
        stray += len(tokens) - len(kept)
        out.append(detok(" ".join(kept)) if kept else "")
    if stray:
        logger.info(f"{log}: dropped {stray} stray {'/'.join(STRAY)} token(s)")
    return out


def score(systems: Dict[str, Tuple[List[str], List[str]]], doc_refs: List[str],
          chunk_refs: List[str], tokenize: str, bootstrap: int) -> Tuple[str, Dict[str, dict]]:
    """Document and chunk BLEU of every system (``name -> (doc hyps, chunk hyps)``), with
    bootstrap intervals over documents; returns the document BLEU's signature and the results."""
    from sacrebleu.metrics import BLEU

    results: Dict[str, dict] = {}
    bleu = BLEU(tokenize=tokenize)
    for name, (docs, chunks) in systems.items():
        results[name] = {"doc_bleu": bleu.corpus_score(docs, [doc_refs]).score,
                         "chunk_bleu": BLEU(tokenize=tokenize).corpus_score(
                             chunks, [chunk_refs]).score}
    signature = str(bleu.get_signature())
    if bootstrap <= 0:
        return signature, results
    if len(systems) == 1:
        name, (docs, _) = next(iter(systems.items()))
        fields = json.loads(bleu.corpus_score(docs, [doc_refs], n_bootstrap=bootstrap)
                            .format(signature=str(bleu.get_signature()), is_json=True))
        results[name].update(doc_bleu_mean=fields["confidence_mean"],
                             doc_bleu_ci95=fields["confidence_var"])
        return str(bleu.get_signature()), results
    from sacrebleu.significance import PairedTest

    named = [(name, docs) for name, (docs, _) in systems.items()]
    metric = BLEU(tokenize=tokenize, references=[doc_refs])
    signatures, scores = PairedTest(named, {"BLEU": metric}, None, test_type="bs",
                                    n_samples=bootstrap)()
    for name, result in zip(scores["System"], scores["BLEU"]):
        results[name].update(doc_bleu_mean=result.mean, doc_bleu_ci95=result.ci,
                             p_value=result.p_value)
    return str(signatures["BLEU"]), results


def format_table(results: Dict[str, dict], baseline: str) -> str:
    rows = [("system", "doc BLEU", "95% CI", f"p vs {baseline}", "chunk BLEU")]
    for name, r in results.items():
        ci = f"{r['doc_bleu_mean']:.2f} ± {r['doc_bleu_ci95']:.2f}" if "doc_bleu_ci95" in r else "-"
        p = f"{r['p_value']:.4f}" if r.get("p_value") is not None else "-"
        rows.append((name, f"{r['doc_bleu']:.2f}", ci, p, f"{r['chunk_bleu']:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def run(args) -> dict:
    from fairseq_hier.cli.hypotheses import read_hypotheses
    from fairseq_hier.data.doc_chunks import read_chunk_map, reassemble

    rows = read_chunk_map(args.chunks)
    docids_path = args.docids or os.path.splitext(args.ref)[0] + ".docids"
    doc_refs, chunk_refs = load_references(args.ref, docids_path, rows)
    systems: Dict[str, Tuple[List[str], List[str]]] = {}
    for spec in args.systems:
        name, log = spec.split("=", 1) if "=" in spec else (os.path.basename(spec), spec)
        if name in systems:
            raise ValueError(f"two systems named {name!r}: name them NAME=LOG")
        chunks = clean_hypotheses(read_hypotheses(log, len(rows), args.lines), args.tgt_lang, log)
        docs = [text for _, text in reassemble(rows, chunks)]
        systems[name] = (docs, chunks)
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            with open(os.path.join(args.output_dir, f"{name}.docs"), "w", encoding="utf-8") as f:
                f.writelines(d + "\n" for d in docs)
            with open(os.path.join(args.output_dir, f"{name}.chunks.tsv"), "w",
                      encoding="utf-8") as f:
                f.writelines(r.line().rstrip("\n") + f"\t{c}\n" for r, c in zip(rows, chunks))
    signature, results = score(systems, doc_refs, chunk_refs, args.tokenize, args.bootstrap)
    baseline = next(iter(systems))
    print(format_table(results, baseline))
    print(f"{len(doc_refs)} documents, {len(rows)} chunks; signature: {signature}")
    summary = {"signature": signature, "documents": len(doc_refs), "chunks": len(rows),
               "baseline": baseline, "systems": results}
    print(json.dumps(summary))
    return summary


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("systems", nargs="+", metavar="NAME=LOG",
                   help="fairseq-generate output of each system (the first is the baseline)")
    p.add_argument("--chunks", required=True, help="the split's chunk map (DATA_BIN/test.chunks)")
    p.add_argument("--ref", required=True,
                   help="raw target file of the split (one sentence a line, documents separated "
                        "by an empty line)")
    p.add_argument("--docids", default=None, help="its docids (default: REF without its "
                                                  "language suffix + .docids)")
    p.add_argument("--tgt-lang", required=True, help="target language (detokenisation)")
    p.add_argument("--lines", choices=("H", "D"), default="H",
                   help="read fairseq-generate's H- lines (default) or its D- lines")
    p.add_argument("--tokenize", default=None,
                   help="sacreBLEU tokenizer (default: zh for a zh target, else 13a)")
    p.add_argument("--bootstrap", type=int, default=1000,
                   help="bootstrap resamples over documents for the intervals (0: none)")
    p.add_argument("--output-dir", default=None, help="write NAME.docs and NAME.chunks.tsv here")
    args = p.parse_args(argv)
    if args.tokenize is None:
        args.tokenize = "zh" if args.tgt_lang == "zh" else "13a"
    return run_command(PROG, run, args)

if __name__ == "__main__":
    sys.exit(cli_main())
