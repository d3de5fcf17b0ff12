"""The score step of a decoded run folder: a paper's ROUGE protocol
(:mod:`fairseq_hier.runs.protocols`) -> ``SUBSET.hyp``, ``SUBSET.ref`` (``SUBSET.refs.jsonl``)
and the ROUGE-1.5.5 reports; or, for a run scored by BLEU, the one-system document BLEU of
``fairseq-hier-doc-bleu --run-dir`` -> ``SUBSET.docs``, ``SUBSET.ref``, ``SUBSET.bleu.txt``.

What it reads (``run.json``, ``SUBSET.decode.json``) and prints: docs/run-folder.md.
Imports ``analysis``, ``report``, ``scoring``, ``io``, ``errors``.
"""

import logging
import os
from dataclasses import dataclass
from typing import List, Optional

from ..analysis.doc_bleu import score_systems
from ..errors import HierError
from ..io import atomic_outputs, read_lines
from ..report.inputs import generate_file, load_run, read_json
from ..scoring.bleu import default_tokenize
from ..scoring.bootstrap import SAMPLES
from ..scoring.rouge import default_rouge_args, file_report, parse_report, parse_rouge_score
from ..scoring.significance import BLEU_SEED
from .decode import chunk_map_file, decode_file, metric_of, raw_hypotheses_file
from .protocols import DEFAULT_PROTOCOL, PROTOCOLS, Protocol, copied

logger = logging.getLogger("fairseq_hier.runs.score")
DECODE_KEYS = ("data", "subset", "task", "references", "multi_references", "lines", "command")


@dataclass
class ScoreRequest:
    """The options of ``fairseq-hier-score`` (docs/run-folder.md)."""

    run_dir: str
    subset: str = "test"
    protocol: Optional[str] = None  # default plain (ROUGE); none for BLEU
    samples: int = SAMPLES
    seed: Optional[int] = None  # document BLEU's bootstrap (default sacreBLEU's)
    tgt_lang: Optional[str] = None  # document BLEU (default: the decoding's --target-lang)
    references: Optional[str] = None  # default: the decoding's
    multi_references: Optional[str] = None  # default: the decoding's (with --references: none)


def read_decoding(request: ScoreRequest) -> dict:
    """``SUBSET.decode.json`` of the run folder, checked, its references replaced by
    ``--references`` (and ``--multi-references``) when given. A folder of hypotheses written
    otherwise (a baseline's SUBSET.hyp.raw, no decode.json) needs ``--references``; one-line
    error when both are missing."""
    run_dir, subset = request.run_dir, request.subset
    if not os.path.isdir(run_dir):
        raise HierError(f"RUN_DIR {run_dir}: no such folder")
    path = os.path.join(run_dir, decode_file(subset))
    if os.path.isfile(path):
        facts = read_json(path)
        missing = [key for key in DECODE_KEYS if key not in facts]
        if missing:
            raise HierError(f"{path}: has no {missing[0]!r} (written by fairseq-hier-decode)")
        resolve_paths(facts)
    elif request.references is not None:
        facts = {"data": None, "subset": subset, "task": None, "lines": "H", "command": []}
    else:
        raise HierError(f"{path} not found: decode split {subset!r} first "
                        f"(fairseq-hier-decode {run_dir} --subset {subset} ...), or give "
                        f"--references for hypotheses written otherwise")
    if request.references is not None:
        facts.update(references=request.references, multi_references=request.multi_references)
    return facts


def resolve_paths(facts: dict) -> None:
    """The decoding's relative paths (kept as given: the BLEU report names them) joined to the
    folder decode ran in (``cwd``), when score runs in another one."""
    base = facts.get("cwd")
    if not isinstance(base, str) or os.path.abspath(base) == os.getcwd():
        return
    for key in ("data", "checkpoint", "references", "multi_references"):
        if isinstance(facts.get(key), str) and not os.path.isabs(facts[key]):
            facts[key] = os.path.join(base, facts[key])


def run_metric(run_dir: str, subset: str, facts: dict) -> str:
    """run.json's metric, else the decoded task's (:func:`fairseq_hier.runs.decode.metric_of`),
    else ROUGE."""
    return load_run(run_dir, subset).metric or metric_of(facts["task"] or "")


def score(request: ScoreRequest) -> List[str]:
    """Score the decoded split (docs/run-folder.md, score); returns the lines to print."""
    if request.multi_references is not None and request.references is None:
        raise HierError("--multi-references comes with --references")
    facts = read_decoding(request)
    metric = run_metric(request.run_dir, request.subset, facts)
    if metric == "bleu":
        if request.protocol is not None:
            raise HierError(f"--protocol {request.protocol}: the protocols are ROUGE's; "
                            f"{request.run_dir} is scored by document BLEU (its run.json)")
        if facts["data"] is None:
            raise HierError(f"{request.run_dir} is scored by document BLEU, which reads the "
                            f"decoding's chunk map: decode it with fairseq-hier-decode first")
        return score_bleu(request, facts)
    for option, value in (("--seed", request.seed), ("--tgt-lang", request.tgt_lang)):
        if value is not None:
            raise HierError(f"{option}: applies to document BLEU; {request.run_dir} is scored "
                            f"by ROUGE (ROUGE-1.5.5's bootstrap takes --samples only)")
    name = request.protocol or DEFAULT_PROTOCOL
    if name not in PROTOCOLS:
        raise HierError(f"--protocol {name}: no such protocol (one of: "
                        f"{', '.join(PROTOCOLS)})")
    return score_rouge(request, facts, PROTOCOLS[name])


def _path(run_dir: str, subset: str, ext: str) -> str:
    return os.path.join(run_dir, f"{subset}.{ext}")


def check_inputs(request: ScoreRequest, facts: dict, protocol: Protocol) -> None:
    raw = os.path.join(request.run_dir, raw_hypotheses_file(request.subset))
    decoded = os.path.join(request.run_dir, decode_file(request.subset))
    for what, path in (("hypotheses", raw), ("references", facts["references"]),
                       ("multi-references", facts["multi_references"])):
        if path is not None and not os.path.isfile(path):
            raise HierError(f"{path} not found (the {what} of {decoded}, or the option's)")
    examples = len(read_lines(raw))
    for path in (facts["references"], facts["multi_references"]):
        n = None if path is None else len(read_lines(path))
        if n is not None and n != examples:
            raise HierError(f"{path}: has {n} lines, {raw} has {examples} (one reference line "
                            f"per hypothesis; decode again after the references changed)")
    if facts["multi_references"] is not None and protocol.reference_lists is None:
        raise HierError(f"--protocol {protocol.name} scores one reference per example; "
                        f"{decoded} names multi-references: score with plain or ptb")
    ref = _path(request.run_dir, request.subset, "ref")
    if (os.path.exists(ref) and os.path.samefile(ref, facts["references"])
            and protocol.references is not copied):
        raise HierError(f"the references {facts['references']} are {ref} itself, which "
                        f"--protocol {protocol.name} rewrites: decode with references kept "
                        f"elsewhere")


def normalise(request: ScoreRequest, facts: dict, protocol: Protocol) -> str:
    """Write SUBSET.hyp, SUBSET.ref and SUBSET.refs.jsonl (together); returns the references
    file the ROUGE runs score. A stale SUBSET.refs.jsonl (no multi-references) is removed."""
    run_dir, subset = request.run_dir, request.subset
    raw = os.path.join(run_dir, raw_hypotheses_file(subset))
    hyp, ref, refs = (_path(run_dir, subset, ext) for ext in ("hyp", "ref", "refs.jsonl"))
    multi = facts["multi_references"]
    outputs = {hyp: protocol.hypotheses(raw)}
    if not (os.path.exists(ref) and os.path.samefile(ref, facts["references"])):
        outputs[ref] = protocol.references(facts["references"])  # else: a copy of itself
    if multi is not None:
        outputs[refs] = protocol.reference_lists(multi)
    with atomic_outputs(list(outputs), inputs=[raw, facts["references"], multi],
                        binary=True) as files:
        for f, data in zip(files, outputs.values()):
            f.write(data)
    if multi is None and os.path.lexists(refs):
        os.remove(refs)
    return refs if multi is not None else ref


def score_rouge(request: ScoreRequest, facts: dict, protocol: Protocol) -> List[str]:
    """The protocol's normalisation and ROUGE runs (reports written together)."""
    check_inputs(request, facts, protocol)
    references = normalise(request, facts, protocol)
    hyp = _path(request.run_dir, request.subset, "hyp")
    rouge_args = None if request.samples == SAMPLES else default_rouge_args(samples=request.samples)
    reports = {_path(request.run_dir, request.subset, f"{run.report}.txt"):
               file_report([references], hyp, run.eos, rouge_args=rouge_args,
                           zero_empty_summary=True, also_rouge_score=run.also_rouge_score)
               for run in protocol.runs}
    with atomic_outputs(list(reports), inputs=[references, hyp]) as files:
        for f, text in zip(files, reports.values()):
            f.write(text)
    lines = []
    for path, text in reports.items():
        lines += rouge_lines(path, text, protocol.name)
    return lines


def rouge_lines(path: str, report: str, protocol: str) -> List[str]:
    """ROUGE-1.5.5's F1 with its 95% interval (x 100) per metric, and rouge-score's F1."""
    lines = [f"{path} (protocol {protocol}): ROUGE-1.5.5 F1 [95% interval]"]
    for metric, s in parse_report(report).items():
        lines.append(f"  {metric.upper():8} {100 * s['f']:6.2f} "
                     f"[{100 * s['f_low']:.2f}, {100 * s['f_high']:.2f}]")
    lines += [f"  rouge-score {key} F1 {100 * value:.2f} (a different scorer)"
              for key, value in parse_rouge_score(report).items()]
    return lines


def target_language(request: ScoreRequest, facts: dict) -> str:
    """``--tgt-lang``, else the decoding's ``--target-lang`` (``-t``)."""
    if request.tgt_lang:
        return request.tgt_lang
    command = facts["command"]
    for i, arg in enumerate(command[:-1]):
        if arg in ("--target-lang", "-t"):
            return command[i + 1]
    for arg in command:
        if arg.startswith("--target-lang="):
            return arg.split("=", 1)[1]
    raise HierError("--tgt-lang needed: the decoding named no --target-lang")


def score_bleu(request: ScoreRequest, facts: dict) -> List[str]:
    """The one-system document BLEU of ``fairseq-hier-doc-bleu LOG --chunks DATA/SUBSET.chunks
    --ref REFS --tgt-lang L --run-dir RUN_DIR --subset SUBSET`` (the same function)."""
    tgt_lang = target_language(request, facts)
    log = os.path.join(request.run_dir, generate_file(request.subset))
    result, _ = score_systems([log], chunk_map_file(facts["data"], request.subset),
                              facts["references"], tgt_lang, default_tokenize(tgt_lang),
                              lines=facts["lines"], bootstrap=request.samples,
                              seed=BLEU_SEED if request.seed is None else request.seed,
                              warn=logger.warning, run_dir=request.run_dir,
                              subset=request.subset)
    (name, r), = result.summary["systems"].items()
    interval = (f" [95% interval {r['sacrebleu_mean']:.2f} \u00b1 {r['sacrebleu_ci95']:.2f}]"
                if "sacrebleu_ci95" in r else "")
    report = _path(request.run_dir, request.subset, "bleu.txt")
    return [f"{report}: document BLEU {r['doc_bleu']:.2f}{interval}, chrF {r['chrf']:.2f} "
            f"({name}, {result.summary['documents']} documents)"]
