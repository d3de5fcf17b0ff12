"""Document-level BLEU of fairseq-generate logs of chunk translations (paper 004 Sec. 4.2 and
Table 7): each system's chunk hypotheses read from its log, post-processed, put back into whole
documents in the chunk map's order, and scored against the reference documents, with the
bootstrap intervals and the paired test against the first system
(``fairseq-hier-doc-bleu`` documents the inputs, the scores and the files written).

The hypotheses are detokenised with the inverse of the target side's tokenizer choice: the one
given, else the ``tgt_tokenizer`` of the preprocessing record beside the chunk map (the
data-bin's ``hier_preprocess.json``, pipeline ``doc_chunks``, same target language), else
``auto``.
"""

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from fairseq_hier.analysis.generate_log import read_hypotheses
from fairseq_hier.data.doc_chunks import ChunkRow, read_chunk_map, reassemble
from fairseq_hier.data.preprocessing_record import RECORD_FILE, read_record
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.scoring import bleu as doc_bleu
from fairseq_hier.scoring.significance import bleu_significance


@dataclass
class DocBleu:
    """What :func:`evaluate` found: the summary (scores, signatures, post-processing, warnings),
    the chunk map's rows, the reference documents (each its sentences joined by a space, as
    scored) and each system's documents and chunk hypotheses (post-processed)."""

    summary: dict
    rows: List[ChunkRow]
    systems: Dict[str, Tuple[List[str], List[str]]] = field(default_factory=dict)
    inputs: List[str] = field(default_factory=list)  # every file read
    references: List[str] = field(default_factory=list)


def read_system(spec: str, rows, lines: str) -> Tuple[str, str, List[str]]:
    """``NAME=LOG`` -> (name, log, the chunk hypotheses in map order)."""
    name, log = spec.split("=", 1) if "=" in spec else (os.path.basename(spec), spec)
    if not name or not log:
        raise HierError(f"bad system {spec!r}: expected NAME=LOG")
    return name, log, read_hypotheses(log, len(rows), lines)


def recorded_tgt_tokenizer(chunks: str, tgt_lang: str) -> Tuple[Optional[str], Optional[str]]:
    """(the target side's tokenizer choice, the record it comes from) of the preprocessing
    record beside the chunk map ``chunks``, when it is a ``doc_chunks`` record of the target
    language ``tgt_lang``; (None, None) otherwise."""
    folder = os.path.dirname(chunks) or "."
    record = read_record(folder)
    if record is None or record["pipeline"] != "doc_chunks":
        return None, None
    options = record["options"]
    if options.get("tgt_lang", tgt_lang) != tgt_lang:
        return None, None
    return options.get("tgt_tokenizer", "auto"), os.path.join(folder, RECORD_FILE)


def evaluate(specs: List[str], chunks: str, ref: str, docids: Optional[str], tgt_lang: str,
             tokenize: str, lines: str = "H", detokenize: bool = True, bootstrap: int = 1000,
             seed: int = 0, warn=None, tgt_tokenizer: Optional[str] = None) -> DocBleu:
    """Score the systems ``NAME=LOG`` (the first is the baseline) on the documents of the chunk
    map ``chunks`` and the reference file ``ref`` (its docids: ``docids``, by default REF
    without its language suffix + ``.docids``); ``warn(message)`` is told when the two sides
    do not look alike. ``tgt_tokenizer``: the target side's tokenizer choice (default: the
    record's, module docstring)."""
    rows = read_chunk_map(chunks)
    origin = ""
    if tgt_tokenizer is None:
        tgt_tokenizer, recorded = recorded_tgt_tokenizer(chunks, tgt_lang)
        tgt_tokenizer, origin = tgt_tokenizer or "auto", recorded or ""
    docids_path = docids or os.path.splitext(ref)[0] + ".docids"
    doc_refs, chunk_refs, ref_sentences = doc_bleu.load_references(ref, docids_path, rows)
    systems: Dict[str, Tuple[List[str], List[str]]] = {}
    hyp_steps: Dict[str, str] = {}
    logs = []
    for spec in specs:
        name, log, raw = read_system(spec, rows, lines)
        logs.append(log)
        if name in systems:
            raise HierError(f"two systems named {name!r}: name them NAME=LOG")
        chunk_hyps, steps = doc_bleu.postprocess_hypotheses(raw, tgt_lang, detokenize, log,
                                                            tgt_tokenizer, origin)
        docs = [text for _, text in reassemble(rows, chunk_hyps)]
        systems[name], hyp_steps[name] = (docs, chunk_hyps), steps.describe()
    baseline = next(iter(systems))
    warnings = doc_bleu.check_sides_alike(ref_sentences, systems[baseline][1], tgt_lang,
                                          detokenize, ref, tgt_tokenizer)
    for warning in warnings:
        if warn is not None:
            warn(warning)
    results, signatures = {}, {}
    for name, (docs, chunk_hyps) in systems.items():
        results[name], signatures = doc_bleu.corpus_scores(docs, doc_refs, chunk_hyps, chunk_refs,
                                                           tokenize)
    if bootstrap > 0:
        test = bleu_significance(doc_refs, {n: docs for n, (docs, _) in systems.items()},
                                 baseline, tgt_lang, bootstrap, seed, tokenize, ref_name=ref,
                                 min_systems=1)
        signatures["bleu"] = test["signature"]
        for name, entry in test["systems"].items():
            results[name].update({k: v for k, v in entry.items() if k != "bleu"})
            if len(systems) == 1:
                results[name].pop("p_value", None)
    summary = {"signature": signatures["bleu"], "chrf_signature": signatures["chrf"],
               "documents": len(doc_refs), "chunks": len(rows), "baseline": baseline,
               "postprocessing": {"hypotheses": hyp_steps,
                                  "references": doc_bleu.reference_postprocessing(ref).describe()},
               "warnings": warnings, "systems": results}
    return DocBleu(summary, rows, systems, [chunks, ref, docids_path, *logs], doc_refs)


def write_outputs(folder: str, result: DocBleu) -> None:
    """``NAME.docs`` and ``NAME.chunks.tsv`` of every system, all written together; none may be
    one of the files read."""
    paths = [os.path.join(folder, f"{name}{ext}") for name in result.systems
             for ext in (".docs", ".chunks.tsv")]
    with atomic_outputs(paths, result.inputs) as files:
        for k, (docs, chunks) in enumerate(result.systems.values()):
            f_docs, f_chunks = files[2 * k: 2 * k + 2]
            f_docs.writelines(d + "\n" for d in docs)
            f_chunks.writelines(r.line().rstrip("\n") + f"\t{c}\n"
                                for r, c in zip(result.rows, chunks))


def default_subset(chunks: str) -> str:
    """The split a chunk map belongs to: its file name without ``.chunks`` (``test``)."""
    name = os.path.basename(chunks)
    return name[:-len(".chunks")] if name.endswith(".chunks") else os.path.splitext(name)[0]


def write_run_dir(run_dir: str, subset: str, result: DocBleu, report: str) -> List[str]:
    """One system's scored split in its run directory, the three files together:
    ``SUBSET.docs`` (its documents, one a line, as scored), ``SUBSET.ref`` (the reference
    documents, one a line, as scored) and ``SUBSET.bleu.txt`` (``report``, the command's
    output). Returns the paths written."""
    if len(result.systems) != 1:
        raise HierError(f"--run-dir holds one system's files: give one NAME=LOG, not "
                        f"{len(result.systems)}")
    (docs, _), = result.systems.values()
    paths = [os.path.join(run_dir, f"{subset}{ext}") for ext in (".docs", ".ref", ".bleu.txt")]
    with atomic_outputs(paths, result.inputs) as (f_docs, f_ref, f_report):
        f_docs.writelines(d + "\n" for d in docs)
        f_ref.writelines(r + "\n" for r in result.references)
        f_report.write(report)
    return paths
