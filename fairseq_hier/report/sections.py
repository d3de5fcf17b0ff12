"""The report's sections as blocks (:mod:`fairseq_hier.report.render`): overview, scores,
efficiency, training curves, attention.

    blocks = build_report(load_runs(paths), ReportOptions())  # each run's own references
    blocks = build_report(load_runs(paths), ReportOptions(reference="raw/test.tgt"))

Every section works with what the RUN_DIRs hold and says in a note what is missing and how to
produce it; a present but malformed file stops the report with a one-line error.
"""

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from fairseq_hier.analysis.efficiency import TABLE_ARCHS
from fairseq_hier.errors import HierError
from fairseq_hier.io import iter_lines, read_lines
from fairseq_hier.report import scores
from fairseq_hier.report.figures import (MAX_STEPS, attention_ids, curve_png,
                                         paragraph_heatmap_png, sentence_heatmap_png)
from fairseq_hier.report.inputs import (Run, generate_file, hyp_files, read_json,
                                        reference_files, reported_files, run_metric)
from fairseq_hier.report.logs import read_train_log
from fairseq_hier.report.render import Block, Code, Heading, Image, Note, Table, Text

EFFICIENCY_COMMAND = ("fairseq-hier-analyse efficiency --archs {arch} --data DATA_BIN "
                      "--output {run}/efficiency.json")
COSINE_COMMAND = ("fairseq-hier-analyse attention-cosine DATA_BIN --path {checkpoint} "
                  "--generate-log {generate_log} --subset {subset} "
                  "--output {run}/attention.json")
# fairseq-generate --print-alignment writes word alignments ("0-1 2-3") on A- lines too
WORD_ALIGNMENT = re.compile(r"^\s*\d+-\d+(\s+\d+-\d+)*\s*$")


@dataclass
class ReportOptions:
    # the references of every run (one per line, or for ROUGE a .jsonl of lists; BLEU: see
    # scores.read_bleu_references); None: each run's own (inputs.reference_files)
    reference: Optional[str] = None
    metric: Optional[str] = None  # "rouge" or "bleu"; None: the runs' run.json (else rouge)
    baseline: Optional[str] = None  # default: the first scored run
    heatmaps: int = 3  # examples per run
    samples: int = 1000  # bootstrap resamples of the significance test
    seed: Optional[int] = None  # default: significance.py's (0 ROUGE, 12345 BLEU)
    tgt_lang: str = "en"  # BLEU's tokenisation (zh: sacreBLEU's zh)
    encoder_json: Optional[str] = None  # GPT-2 encoder.json: label HAT-BART's H- tokens


def _interval(value: float, low: Optional[float], high: Optional[float], mark: str = "",
              digits: int = 2) -> str:
    text = f"{value:.{digits}f}{mark}"
    return text if low is None else f"{text} [{low:.{digits}f}, {high:.{digits}f}]"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "run"


def _names(runs: Sequence[Run]) -> str:
    return ", ".join(r.name for r in runs)


# ------------------------------------------------------------------------------- overview
def overview(runs: Sequence[Run], metric: str) -> List[Block]:
    subset = runs[0].subset
    rows = []
    for r in runs:
        found = [f for f in (*reported_files(r.subset), *reference_files(r.subset, metric))
                 if r.file(f)]
        on_file = "; ".join(map(scores.scores_file_headline, r.scores_files)) or "-"
        rows.append([r.name, r.arch, r.path, ", ".join(found) or "(none of the report's files)",
                     on_file])
    return [Heading("Runs"),
            Table(["system", "arch", "RUN_DIR", "files read", "scores on file"], rows,
                  align="lllll",
                  caption=f"Scores on file: the run's own score reports ({subset}.rouge.txt, "
                          f"{subset}.rouge_KIND.txt, {subset}.bleu.txt) as the recipe printed "
                          f"them; the tables below score the runs again, together.")]


# ------------------------------------------------------------------------------- scores
def scores_section(runs: Sequence[Run], opt: ReportOptions) -> List[Block]:
    metric = run_metric(list(runs), opt.metric)
    bleu = metric == "bleu"
    blocks: List[Block] = [Heading("Scores")]
    subset = runs[0].subset
    wanted = f"{subset}.docs" if bleu else " or ".join(hyp_files(subset))
    with_output = [r for r in runs if r.scored_file(metric)]
    unscored = [r for r in runs if r not in with_output]
    if unscored:
        blocks.append(Note(f"Not scored (no {wanted}): {_names(unscored)}."))
    scored = with_output
    if opt.reference is None:
        own = " or ".join(reference_files(subset, metric))
        scored = [r for r in with_output if r.reference_file(metric)]
        no_refs = [r for r in with_output if r not in scored]
        if no_refs:
            blocks.append(Note(f"Not scored (no {own} in the RUN_DIR, no --reference given): "
                               f"{_names(no_refs)}."))
    if not scored:
        return blocks
    baseline = opt.baseline or scored[0].name
    if baseline not in [r.name for r in scored]:
        raise HierError(f"--baseline {baseline!r} is not a scored run (scored: "
                        f"{_names(scored)})")
    refs, ref_name = _references(scored, metric, opt.reference)
    if bleu:
        systems = {r.name: read_lines(r.docs_file) for r in scored}
        sources = {r.name: r.docs_file for r in scored}
        table = scores.bleu_table(refs, systems, baseline, opt.tgt_lang, opt.samples,
                                  12345 if opt.seed is None else opt.seed, ref_name, sources)
        what = (f"Document BLEU [95% interval] and document chrF (sacreBLEU; segments are "
                f"whole documents) of {len(refs)} documents against {ref_name}")
    else:
        systems = {r.name: r.hypotheses() for r in scored}
        sources = {r.name: r.hyp_file for r in scored}
        table = scores.rouge_table(refs, systems, baseline, opt.samples,
                                   0 if opt.seed is None else opt.seed, ref_name, sources)
        most = scores.most_references(refs)
        several = (f" (up to {most} references per summary: ROUGE-1.5.5's multi-model "
                   f"scoring)" if most > 1 else "")
        what = (f"ROUGE F1 x100 of {len(refs)} summaries against {ref_name}{several} "
                f"(ROUGE-1.5.5 with files2rouge's settings, as the `rouge` command; empty "
                f"summaries score 0) [95% interval of ROUGE's bootstrap]")
    rows = [[name + (" (baseline)" if name == table.baseline else "")]
            + [_interval(c.value, c.low, c.high, c.mark) for c in cells]
            for name, cells in table.rows]
    blocks.append(Table(["system", *table.columns], rows, caption=what))
    if table.comparisons:
        blocks.append(Text(f"\u2020 p < 0.05, \u2021 p < 0.01: better than {table.baseline} in a "
                           f"one-sided paired bootstrap over the documents ({table.samples} "
                           f"resamples; p = share of resamples in which the system does not beat "
                           f"the baseline; fairseq_hier.scoring.significance). No mark: not "
                           f"shown to be better."))
        rows = [[name] + [f"{c.delta:+.2f} [{c.low:+.2f}, {c.high:+.2f}] p={c.p_value:.3f}"
                          for c in comps.values()]
                for name, comps in table.comparisons.items()]
        compared = list(next(iter(table.comparisons.values())))  # the columns with a test
        blocks.append(Table(["system", *[f"\u0394 {c}" for c in compared]], rows,
                            caption=f"Difference to {table.baseline} (system - baseline) with its "
                                    f"95% paired-bootstrap interval and one-sided p-value."))
    blocks += [Note(n) for n in table.notes]
    if table.second is not None:
        blocks.append(_rouge_score_block(table.second, len(refs), scores.most_references(refs)))
    return blocks


def _references(scored: Sequence[Run], metric: str,
                given: Optional[str]) -> Tuple[list, str]:
    """(the references every scored run is scored against, their name in captions and errors):
    ``given`` (--reference) when given, else the runs' own, which must be the same in every run
    (one error naming the two runs and the first line that differs)."""
    if given is not None:
        return scores.load_references(given, metric), given
    first = scored[0]
    first_path = first.reference_file(metric)
    refs = scores.load_references(first_path, metric)
    for run in scored[1:]:
        path = run.reference_file(metric)
        other = scores.load_references(path, metric)
        i = scores.first_difference(refs, other)
        if i is not None:
            mine, theirs = scores.describe_difference(refs, other, i)
            raise HierError(f"{first.name} and {run.name} are scored against different "
                            f"references: line {i + 1} of {first_path} ({mine}) differs from "
                            f"line {i + 1} of {path} ({theirs}); a table compares runs on the "
                            f"same references (or give --reference)")
    others = scored[1:]
    several = ("" if not others else f" (the same in {_names(others)})" if len(others) <= 3
               else f" (the same in the {len(others)} other runs)")
    return refs, first_path + several


def _rouge_score_block(table, summaries: int, most: int = 1) -> Table:
    """rouge-score's table (:func:`fairseq_hier.report.scores.rouge_score_table`), labelled as the
    different scorer it is."""
    rows = [[name] + [f"{c.value:.2f}" for c in cells] for name, cells in table.rows]
    several = ("; several references: the best one per metric (rouge-score's score_multi)"
               if most > 1 else "")
    return Table(["system", *[f"{c} (rouge-score)" for c in table.columns]], rows,
                 caption=f"{table.metric} F1 x100 of {summaries} summaries (Google's rouge-score, "
                         f"as `rouge --also-rouge-score`: use_stemmer=True, rougeLsum on the "
                         f"newline-split sentences; empty summaries score 0{several}): a "
                         f"different scorer from ROUGE-1.5.5 (the scorer of PEGASUS-X, PRIMERA, "
                         f"LongT5), not comparable with the ROUGE-1.5.5 table above.")


# ------------------------------------------------------------------------------- efficiency
def _num(value, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def _efficiency_row(row: dict, names: List[str]) -> List[str]:
    params = _num(row["params"] / 1e6, 2) if row.get("params") is not None else "-"
    batch = _num(row.get("max_batch")) + ("+" if row.get("max_batch_at_limit") else "")
    if row.get("max_batch_method"):
        batch += f" ({row['max_batch_method']})"
    peak = _num(row.get("peak_mem_mb"))
    if row.get("peak_batch") is not None:
        peak += f" (batch {row['peak_batch']})"
    valid = _num(row.get("valid_seconds"), 3)
    details = [f"{row['valid_examples']} examples"] if row.get("valid_examples") is not None else []
    details += [row["valid_note"]] if row.get("valid_note") else []
    if details:
        valid += f" ({', '.join(details)})"
    return [row["arch"], params, _num(row.get("params_mb"), 2), batch, peak, valid,
            ", ".join(names)]


def _settings(e: dict) -> tuple:
    """What a row's numbers depend on besides the arch: rows are compared within one setting."""
    return tuple((k, e.get(k)) for k in ("device", "dtype", "tokens", "budget_gib", "layers",
                                         "embed_dim", "heads", "data"))


def efficiency_section(runs: Sequence[Run]) -> List[Block]:
    blocks: List[Block] = [Heading("Efficiency")]
    groups: Dict[tuple, Dict[str, list]] = {}  # settings -> row key -> [row, run names]
    notes = []
    for r in runs:
        if r.efficiency is None:
            continue
        rows = [row for row in r.efficiency["rows"] if row["arch"] == r.arch]
        if not rows:
            rows = r.efficiency["rows"]
            notes.append(f"{r.file('efficiency.json')} has no row for arch {r.arch!r}: all its "
                         f"rows are shown.")
        for row in rows:
            key = repr(sorted(row.items()))  # the same measurement listed by several runs: once
            entry = groups.setdefault(_settings(r.efficiency), {}).setdefault(key, [row, []])
            entry[1].append(r.name)
    for settings, entries in groups.items():
        s = dict(settings)
        caption = (f"Measured on {s['device']}, {s['dtype']}: {s['tokens']} source tokens, "
                   f"memory budget {s['budget_gib']} GiB")
        if s["layers"] is not None:
            caption += f", {s['layers']} layers of width {s['embed_dim']}, {s['heads']} heads"
        caption += (f"; validation on {s['data']}" if s["data"] else "") + " (efficiency.json)."
        blocks.append(Table(["arch", "params (M)", "params (MB)", "max batch", "peak memory MiB",
                             "validation seconds", "runs"],
                            [_efficiency_row(row, names) for row, names in entries.values()],
                            caption=caption, align="lrrrrrl"))
    if len(groups) > 1:
        notes.append("The efficiency.json files were measured in different settings: compare "
                     "rows within one table only.")
    blocks += [Note(n) for n in notes]
    blocks += _efficiency_missing([r for r in runs if r.efficiency is None])
    return blocks


def _efficiency_missing(missing: Sequence[Run]) -> List[Block]:
    """The note on the runs without efficiency.json, with the command for those whose arch
    ``fairseq-hier-analyse efficiency`` builds (the others, e.g. Lead, are no model to measure)."""
    if not missing:
        return []
    models = [r for r in missing if r.arch in TABLE_ARCHS]
    others = [r for r in missing if r.arch not in TABLE_ARCHS]
    blocks: List[Block] = [Note(f"Not measured for {_names(missing)} (no efficiency.json)"
                                + ("; to measure:" if models else "."))]
    if models:
        blocks.append(Code("\n".join(EFFICIENCY_COMMAND.format(arch=r.arch, run=r.path)
                                     for r in models)))
    if others:
        blocks.append(Text(f"fairseq-hier-analyse efficiency builds none of the archs of "
                           f"{_names(others)} ({', '.join(dict.fromkeys(r.arch for r in others))});"
                           f" it measures {', '.join(TABLE_ARCHS)}."))
    return blocks


# ------------------------------------------------------------------------------- curves
def curves_section(runs: Sequence[Run]) -> List[Block]:
    blocks: List[Block] = [Heading("Training curves")]
    train, valid, lr, counts = {}, {}, {}, []
    no_log = [r for r in runs if r.train_log is None]
    for r in runs:
        if r.train_log is None:
            continue
        log = read_train_log(r.train_log)
        counts.append(f"{r.name}: {log.counts()} ({log.log_format or 'no'} format)")
        inner = log.series("train_inner", "loss")
        if inner:
            train[r.name] = inner
        elif log.series("train", "loss"):
            train[f"{r.name} (epoch means)"] = log.series("train", "loss")
        for subset in log.valid:
            label = r.name if subset == "valid" else f"{r.name} ({subset})"
            valid[label] = log.series("valid", "loss", subset)
        if log.series("train_inner", "lr"):
            lr[r.name] = log.series("train_inner", "lr")
    if no_log:
        blocks.append(Note(f"No train.log (fairseq-train's output) in: {_names(no_log)}."))
    if counts:
        blocks.append(Text("Records read: " + "; ".join(counts) + "."))
    figures = (("curve-train-loss", train, "training loss (train_inner records)", False),
               ("curve-valid-loss", valid, "validation loss (valid records)", True),
               ("curve-lr", lr, "learning rate", False))
    for name, series, title, markers in figures:
        if series:
            ylabel = "learning rate" if name == "curve-lr" else "loss (base 2)"
            png = curve_png(series, title, "update", ylabel, markers)
            blocks.append(Image(name, png, f"{title} per update: {', '.join(series)}"))
    if counts and not train:
        blocks.append(Note("No training records in the logs (--log-format none?)."))
    if counts and not valid:
        blocks.append(Note("No validation records in the logs: the runs were trained with "
                           "--disable-validation (or no epoch ended)."))
    return blocks


# ------------------------------------------------------------------------------- attention
def attention_section(runs: Sequence[Run], opt: ReportOptions) -> List[Block]:
    blocks: List[Block] = [Heading("Attention")]
    with_json = [r for r in runs if r.attention is not None]
    if with_json:
        rows = []
        for r in with_json:
            a, c = r.attention, r.attention["cosine"]
            rows.append([r.name, str(a.get("kind", "-")), str(a.get("split", "-")),
                         str(a["examples"]), _interval(c["mean"], c["low"], c["high"], digits=3),
                         os.path.basename(str(a.get("checkpoint", "-")))])
        blocks.append(Table(["system", "kind", "split", "examples", "cosine [95% interval]",
                             "checkpoint"], rows, align="lllrrl",
                            caption="Cosine between the system's paragraph attention and the gold "
                                    "tf-idf paragraph distribution (000 Sec. 5.1), mean over "
                                    "examples with its 95% bootstrap interval (attention.json)."))
    else:
        blocks.append(Note("No attention.json in any RUN_DIR: no attention cosine."))
    blocks += heatmaps(runs, opt)
    # the command for trained systems (a checkpoint in RUN_DIR) that read paragraphs (not HAT)
    missing = [(r, _checkpoint(r)) for r in runs
               if r.attention is None and not r.arch.startswith("hat")]
    missing = [(r, c) for r, c in missing if c]
    if missing:
        logs = "" if all(r.generate_file for r, _ in missing) else (
            " (GENERATE_LOG: the run's fairseq-generate output)")
        blocks.append(Note(f"No attention.json for {_names([r for r, _ in missing])}; to "
                           f"measure{logs}:"))
        blocks.append(Code("\n".join(
            COSINE_COMMAND.format(checkpoint=c, run=r.path, subset=r.subset,
                                  generate_log=r.generate_file or "GENERATE_LOG")
            for r, c in missing)))
    return blocks


def _checkpoint(run: Run) -> Optional[str]:
    """RUN_DIR's checkpoint_best.pt, else checkpoint_last.pt, else None."""
    return run.file("checkpoint_best.pt") or run.file("checkpoint_last.pt")


def _sentence_ids(path: str) -> List[int]:
    """Ids with sentence-attention A- lines; [] when the A- lines are word alignments."""
    for _, line in iter_lines(path):
        if line.startswith("A-"):
            if WORD_ALIGNMENT.match(line.rstrip("\n").split("\t", 1)[-1]):
                return []
            break
    return attention_ids(path)


def heatmaps(runs: Sequence[Run], opt: ReportOptions) -> List[Block]:
    if opt.heatmaps == 0:
        return []
    blocks: List[Block] = []
    encoder = read_json(opt.encoder_json) if opt.encoder_json else None
    none = []
    for i, r in enumerate(runs):
        drawn = 0
        for h in ((r.attention or {}).get("heatmaps") or [])[:opt.heatmaps]:
            steps = len(h["rows"])
            cut = f", first {MAX_STEPS} of {steps} steps" if steps > MAX_STEPS else ""
            title = (f"{r.name}: example {h.get('id', '?')}, "
                     f"{r.attention.get('kind', 'paragraph')} attention{cut}")
            png = paragraph_heatmap_png(h["rows"][:MAX_STEPS], h["cols"],
                                        h["weights"][:MAX_STEPS], h.get("gold"), title)
            gold = "; bottom row: gold distribution" if h.get("gold") else ""
            blocks.append(Image(f"heatmap-{i}-{_slug(r.name)}-p{drawn}", png,
                                f"{title} (rows: generated tokens; columns: source "
                                f"paragraphs{gold})"))
            drawn += 1
        generate = r.generate_file
        ids = _sentence_ids(generate)[:opt.heatmaps] if generate else []
        for example in ids:
            png, steps, total = sentence_heatmap_png(generate, example, f"{r.name}: example "
                                                     f"{example}, sentence attention", encoder)
            cut = f", first {steps} of {total} steps" if steps < total else ""
            blocks.append(Image(f"heatmap-{i}-{_slug(r.name)}-s{example}", png,
                                f"{r.name}: example {example}, HAT sentence attention{cut} "
                                f"(rows: generated tokens; columns: source sentences)"))
            drawn += 1
        if not drawn:
            none.append(r)
    if blocks:
        blocks.insert(0, Heading(f"Attention heatmaps (first {opt.heatmaps} examples per run)", 3))
    if none:
        blocks.append(Note(f"No heatmap for {_names(none)}: no heatmaps in attention.json and no "
                           f"A- lines in {generate_file(runs[0].subset)} (HAT: fairseq-generate "
                           f"--print-sentence-attention --results-path RUN_DIR)."))
    return blocks


# ------------------------------------------------------------------------------- all
def build_report(runs: Sequence[Run], opt: ReportOptions) -> List[Block]:
    metric = run_metric(list(runs), opt.metric)
    return (overview(runs, metric) + scores_section(runs, opt) + efficiency_section(runs)
            + curves_section(runs) + attention_section(runs, opt))
