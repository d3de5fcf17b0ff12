"""Document-level BLEU of fairseq-generate logs of chunk translations (paper 004 Sec. 4.2 and
Table 7): each system's chunk hypotheses read from its log, post-processed, put back into whole
documents in the chunk map's order, and scored against the reference documents, with the
bootstrap intervals and the paired test against the first system
(``fairseq-hier-doc-bleu`` documents the inputs, the scores and the files written).

Plain-text outputs (:func:`sentence_rows`), the detokeniser choice and the checks before scoring
(:func:`check_inputs`, :func:`check_sides`, :func:`output_paths`, :func:`run_dir_paths`):
docs/evaluation.md, section fairseq_hier.analysis.doc_bleu.
Imports ``scoring``, ``readers``, ``data``, ``text``, ``analysis.generate_log``, ``io``, ``errors``.
"""

import json
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from fairseq_hier.analysis.generate_log import read_hypotheses
from fairseq_hier.data.chunk_map import ChunkRow, read_chunk_map, reassemble
from fairseq_hier.data.preprocessing_record import RECORD_FILE, read_record
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, check_outputs, read_lines
from fairseq_hier.readers.documents import read_sentence_blocks
from fairseq_hier.scoring import bleu as doc_bleu
from fairseq_hier.scoring.bootstrap import ALPHA, text_table
from fairseq_hier.scoring.significance import bleu_significance
from fairseq_hier.text.tokenizers import base_language

#: a file suffix read as a language code: two letters, and a region or script (en, zh-cn, pt_BR)
LANGUAGE_SUFFIX = re.compile(r"[A-Za-z]{2}([-_][A-Za-z0-9]{2,8})?")
#: the log fairseq-generate --results-path writes: generate-SUBSET.txt
GENERATE_LOG = re.compile(r"generate-.+\.txt")


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


def system_name(spec: str) -> Tuple[str, str]:
    """``NAME=LOG`` -> (name, log); a bare LOG is named after its run folder when it is
    fairseq-generate's ``generate-SUBSET.txt`` (``hat/generate-test.txt`` -> ``hat``), else
    after its file name without the extension (``base.txt`` -> ``base``). A name is a plain
    file name: the outputs are NAME.docs and NAME.chunks.tsv."""
    if "=" in spec:
        name, log = spec.split("=", 1)
    else:
        log = spec
        base = os.path.basename(log)
        folder = os.path.basename(os.path.dirname(os.path.abspath(log)))
        name = folder if GENERATE_LOG.fullmatch(base) and folder else os.path.splitext(base)[0]
    if not name or not log:
        raise HierError(f"bad system {spec!r}: expected NAME=LOG")
    if os.sep in name or name in (".", ".."):
        raise HierError(f"bad system {spec!r}: NAME {name!r} names the files NAME.docs and "
                        f"NAME.chunks.tsv, so it must be a plain file name (no {os.sep!r})")
    return name, log


def chunk_hypotheses(log: str, chunks: str, lines: str = "H") -> List[str]:
    """The hypotheses of a fairseq-generate log of a split's chunks, one per chunk of the chunk
    map ``chunks``, in its order (every chunk exactly once)."""
    return read_hypotheses(log, len(read_chunk_map(chunks)), lines)


def read_system(spec: str, rows, lines: str) -> Tuple[str, str, List[str]]:
    """``NAME=LOG`` -> (name, log, the chunk hypotheses in map order)."""
    name, log = system_name(spec)
    return name, log, read_hypotheses(log, len(rows), lines)


def sentence_rows(ref: str, docids_path: str) -> List[ChunkRow]:
    """The chunk map of plain-text outputs: one chunk per sentence of the reference ``ref``
    (one sentence a line, documents separated by an empty line), its documents named by
    ``docids_path``."""
    blocks, docids = read_sentence_blocks(ref), read_lines(docids_path)
    if len(blocks) != len(docids):
        raise HierError(f"{ref} has {len(blocks)} documents but {docids_path} names {len(docids)}")
    return [ChunkRow(docid, i, i, i) for docid, block in zip(docids, blocks)
            for i in range(len(block))]


def read_text_system(spec: str, rows: List[ChunkRow], ref: str) -> Tuple[str, str, List[str]]:
    """``NAME=FILE`` of plain-text outputs -> (name, file, its lines): one translated sentence
    a line, as many as the reference ``ref`` has sentences (``rows``: :func:`sentence_rows`)."""
    name, path = system_name(spec)
    lines = read_lines(path)
    if len(lines) != len(rows):
        raise HierError(f"{path} has {len(lines)} lines but {ref} has {len(rows)} sentences (one "
                        f"translated sentence a line, in the reference's order, no line between "
                        f"documents)")
    return name, path, lines


def reference_language(ref: str, tgt_lang: str, chunks: str) -> Optional[str]:
    """Why ``ref`` looks like a file of another language than ``tgt_lang``, or None: its suffix
    is a language code (:data:`LANGUAGE_SUFFIX`, or a language of the preprocessing record
    beside ``chunks``) whose language is not ``tgt_lang``'s; the line names the file beside it
    with the ``tgt_lang`` suffix, where there is one."""
    stem, suffix = os.path.splitext(ref)
    suffix = suffix[1:]
    if not suffix or base_language(suffix) == base_language(tgt_lang):
        return None
    record = read_record(os.path.dirname(chunks) or ".")
    recorded = ({record["options"].get(k) for k in ("src_lang", "tgt_lang")}
                if record is not None and record["pipeline"] == "doc_chunks" else set())
    if not (LANGUAGE_SUFFIX.fullmatch(suffix) or suffix in recorded):
        return None
    sibling = f"{stem}.{tgt_lang}"
    side = f" ({sibling} is the {tgt_lang} side)" if os.path.isfile(sibling) else ""
    return (f"--ref {ref}: its suffix .{suffix} names the language {suffix}, not --tgt-lang "
            f"{tgt_lang}{side}")


def check_inputs(specs: List[str], chunks: str, ref: str, tgt_lang: str, force: bool = False,
                 warn=None) -> List[str]:
    """Check what can be checked before any file is read: the systems' names (plain, each
    once) and the reference's language (:func:`reference_language`; with ``force``, a warning
    that ``warn`` is told). Returns the warnings."""
    names = [system_name(spec)[0] for spec in specs]
    doubled = next((n for n in names if names.count(n) > 1), None)
    if doubled is not None:
        raise HierError(f"two systems named {doubled!r}: name them NAME=LOG")
    problem = reference_language(ref, tgt_lang, chunks)
    if problem is None:
        return []
    if not force:
        raise HierError(f"{problem}: give the reference of the target language, or --force to "
                        f"score against this file")
    warning = f"{problem} (scored as given: --force)"
    if warn is not None:
        warn(warning)
    return [warning]


def check_sides(ref: str, ref_sentences: List[str], hypotheses: List[str], tgt_lang: str,
                detokenize: bool, tgt_tokenizer: str, force: bool = False, warn=None) -> List[str]:
    """Refuse sides that do not look alike (:func:`fairseq_hier.scoring.bleu.check_sides_alike`:
    one tokenised, the other not) unless ``force``, when they are warnings (``warn``)."""
    warnings = doc_bleu.check_sides_alike(ref_sentences, hypotheses, tgt_lang, detokenize, ref,
                                          tgt_tokenizer)
    if warnings and not force:
        raise HierError(f"{warnings[0]}; or --force to score the two sides as they are")
    for warning in warnings:
        if warn is not None:
            warn(warning)
    return warnings


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
             seed: int = 0, warn=None, tgt_tokenizer: Optional[str] = None,
             force: bool = False, text: bool = False) -> DocBleu:
    """Score the systems ``NAME=LOG`` (the first is the baseline) on the documents of the chunk
    map ``chunks`` and the reference file ``ref`` (its docids: ``docids``, by default REF
    without its language suffix + ``.docids``). A reference in another language than
    ``tgt_lang`` and sides that do not look alike are refused (:func:`check_inputs`,
    :func:`check_sides`), or with ``force`` told to ``warn(message)``. ``tgt_tokenizer``: the
    target side's tokenizer choice (default: the record's, module docstring). ``text``: the
    systems are plain-text outputs (module docstring; ``chunks``, ``lines``, ``detokenize`` and
    ``tgt_tokenizer`` unused)."""
    warnings = check_inputs(specs, chunks or ref, ref, tgt_lang, force, warn)
    docids_path = docids or os.path.splitext(ref)[0] + ".docids"
    rows = sentence_rows(ref, docids_path) if text else read_chunk_map(chunks)
    origin = ""
    if text:
        detokenize, tgt_tokenizer = False, "auto"  # scored as given; the sides' check below
    elif tgt_tokenizer is None:
        tgt_tokenizer, recorded = recorded_tgt_tokenizer(chunks, tgt_lang)
        tgt_tokenizer, origin = tgt_tokenizer or "auto", recorded or ""
    doc_refs, chunk_refs, ref_sentences = doc_bleu.load_references(ref, docids_path, rows)
    systems: Dict[str, Tuple[List[str], List[str]]] = {}
    hyp_steps: Dict[str, str] = {}
    for spec in specs:
        if text:
            name, log, chunk_hyps = read_text_system(spec, rows, ref)
            steps = doc_bleu.Postprocessing([f"as given in {log}",
                                             "a document = its sentences joined by a space"])
        else:
            name, log, raw = read_system(spec, rows, lines)
            chunk_hyps, steps = doc_bleu.postprocess_hypotheses(raw, tgt_lang, detokenize, log,
                                                                tgt_tokenizer, origin)
        if not systems:  # the baseline: are the two sides alike, before the others are read
            warnings += check_sides(ref, ref_sentences, chunk_hyps, tgt_lang, detokenize,
                                    tgt_tokenizer, force, warn)
        docs = [text for _, text in reassemble(rows, chunk_hyps)]
        systems[name], hyp_steps[name] = (docs, chunk_hyps), steps.describe()
    baseline = next(iter(systems))
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
               "segments": "sentences" if text else "chunks",
               "postprocessing": {"hypotheses": hyp_steps,
                                  "references": doc_bleu.reference_postprocessing(ref).describe()},
               "warnings": warnings, "systems": results}
    return DocBleu(summary, rows, systems, input_paths(specs, chunks, ref, docids), doc_refs)


def input_paths(specs: List[str], chunks: Optional[str], ref: str,
                docids: Optional[str]) -> List[str]:
    """Every file the command reads (no output may be one of them; ``chunks`` None: plain-text
    outputs)."""
    docids_path = docids or os.path.splitext(ref)[0] + ".docids"
    return [*([chunks] if chunks else []), ref, docids_path,
            *(system_name(spec)[1] for spec in specs)]


def output_paths(folder: str, names: List[str]) -> List[str]:
    """``NAME.docs`` and ``NAME.chunks.tsv`` of every system under ``folder``."""
    return [os.path.join(folder, f"{name}{ext}") for name in names
            for ext in (".docs", ".chunks.tsv")]


def write_outputs(folder: str, result: DocBleu) -> None:
    """``NAME.docs`` and ``NAME.chunks.tsv`` of every system, all written together; none may be
    one of the files read."""
    paths = output_paths(folder, list(result.systems))
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


def run_dir_paths(run_dir: str, subset: str) -> List[str]:
    """``SUBSET.docs``, ``SUBSET.ref`` and ``SUBSET.bleu.txt`` under ``run_dir``."""
    return [os.path.join(run_dir, f"{subset}{ext}") for ext in (".docs", ".ref", ".bleu.txt")]


def write_run_dir(run_dir: str, subset: str, result: DocBleu, report: str) -> List[str]:
    """One system's scored split in its run directory, the three files together:
    ``SUBSET.docs`` (its documents, one a line, as scored), ``SUBSET.ref`` (the reference
    documents, one a line, as scored) and ``SUBSET.bleu.txt`` (``report``, the command's
    output). Returns the paths written."""
    if len(result.systems) != 1:
        raise HierError(f"--run-dir holds one system's files: give one NAME=LOG, not "
                        f"{len(result.systems)}")
    (docs, _), = result.systems.values()
    paths = run_dir_paths(run_dir, subset)
    with atomic_outputs(paths, result.inputs) as (f_docs, f_ref, f_report):
        f_docs.writelines(d + "\n" for d in docs)
        f_ref.writelines(r + "\n" for r in result.references)
        f_report.write(report)
    return paths


def format_table(results: Dict[str, dict], baseline: str, segments: str = "chunks") -> str:
    """The systems' scores side by side: document BLEU and its bootstrap interval, chrF, the
    paired test against ``baseline``, chunk (or sentence) BLEU."""
    unit = "sentence" if segments == "sentences" else "chunk"
    rows = [("system", "doc BLEU", "95% CI", "doc chrF", f"delta vs {baseline} [95% interval]",
             "p", f"{unit} BLEU")]
    for name, r in results.items():
        ci = (f"{r['sacrebleu_mean']:.2f} ± {r['sacrebleu_ci95']:.2f}" if "sacrebleu_ci95" in r
              else "-")
        if "delta" in r:
            delta = f"{r['delta']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]"
            p = f"{r['p_value']:.3f}" + ("*" if r["p_value"] < ALPHA else "")
        else:
            delta, p = ("(baseline)" if name == baseline and len(results) > 1 else "-"), "-"
        rows.append((name, f"{r['doc_bleu']:.2f}", ci, f"{r['chrf']:.2f}", delta, p,
                     f"{r['chunk_bleu']:.2f}"))
    return text_table(rows)


def report_text(result: DocBleu, tgt_lang: str, tokenize: str, bootstrap: int,
                seed: int) -> str:
    """What ``fairseq-hier-doc-bleu`` prints (and writes to ``SUBSET.bleu.txt``): the table, the
    counts, the signatures, the post-processing, the summary as JSON."""
    summary = result.summary
    note = (f"; {bootstrap} paired resamples (seed {seed}); p: one-sided, share of "
            f"resamples in which the system does not beat {summary['baseline']}; * p < {ALPHA}"
            if bootstrap > 0 and len(result.systems) > 1 else "")
    lines = [format_table(summary["systems"], summary["baseline"], summary["segments"]),
             f"{summary['documents']} documents, {summary['chunks']} {summary['segments']}{note}",
             f"BLEU signature: {summary['signature']}",
             f"chrF signature: {summary['chrf_signature']}"]
    tokenizer_note = doc_bleu.tokenize_note(tgt_lang, tokenize)
    if tokenizer_note:
        lines.append(f"sacreBLEU tokenizer: {tokenizer_note}")
    lines += [f"hypotheses ({name}): {steps}"
              for name, steps in summary["postprocessing"]["hypotheses"].items()]
    lines += [f"references: {summary['postprocessing']['references']}", json.dumps(summary)]
    return "".join(line + "\n" for line in lines)


def score_systems(specs: List[str], chunks: Optional[str], ref: str, tgt_lang: str,
                  tokenize: str, docids: Optional[str] = None, lines: str = "H",
                  detokenize: bool = True, bootstrap: int = 1000, seed: int = 0, warn=None,
                  tgt_tokenizer: Optional[str] = None, force: bool = False, text: bool = False,
                  run_dir: Optional[str] = None, subset: Optional[str] = None,
                  output_dir: Optional[str] = None) -> Tuple[DocBleu, str]:
    """Document BLEU of the systems (:func:`evaluate`, same arguments) and its report
    (:func:`report_text`), the outputs checked before scoring and written after: one system's
    ``run_dir`` files (:func:`write_run_dir`, ``subset`` by default the chunk map's) and every
    system's ``output_dir`` files (:func:`write_outputs`). Returns (result, report)."""
    names = [system_name(spec)[0] for spec in specs]
    inputs = input_paths(specs, chunks, ref, docids)
    subset = subset or default_subset(chunks or ref)
    if run_dir:
        check_outputs("--run-dir", run_dir, run_dir_paths(run_dir, subset), inputs)
    if output_dir:
        check_outputs("--output-dir", output_dir, output_paths(output_dir, names), inputs)
    result = evaluate(specs, chunks, ref, docids, tgt_lang, tokenize, lines, detokenize,
                      bootstrap, seed, warn=warn, tgt_tokenizer=tgt_tokenizer, force=force,
                      text=text)
    report = report_text(result, tgt_lang, tokenize, bootstrap, seed)
    if run_dir:
        write_run_dir(run_dir, subset, result, report)
    if output_dir:
        write_outputs(output_dir, result)
    return result, report
