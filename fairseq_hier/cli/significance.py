"""``fairseq-hier significance``: paired bootstrap significance against a baseline: rouge,
bleu.

    fairseq-hier significance rouge REFS A=A.hyp B=B.hyp [-o RESULT.json]
    fairseq-hier significance bleu REFS A=A.docs B=B.docs --tgt-lang de

Its ``--help`` prints the file formats, sets of decodings and the table (:data:`EPILOG`); the
test: :mod:`fairseq_hier.scoring.significance`. Specification: docs/commands.md, section
significance. Imports ``fairseq_hier.scoring``, ``io`` and ``fairseq_hier.cli.common``
(sacreBLEU inside a function).
"""

# the --help text after the description: usage, rules and output
EPILOG = """    fairseq-hier-significance rouge test.tgt PHT=pht/test.hyp PHT+align=align/test.hyp \\
        [--samples 1000] [--seed 0] [--eos .] [-o OUT.json]
    fairseq-hier-significance rouge ref.A ref.B ref.C PHT=pht/test.hyp VHT=vht/test.hyp
    fairseq-hier-significance rouge test.ref lead=lead/test.hyp \\
        liu_ht=liu_ht/a.hyp,liu_ht/b.hyp,liu_ht/c.hyp,liu_ht/d.hyp,liu_ht/e.hyp
    fairseq-hier-significance rouge test.ref liu_ht=liu_ht/best/      # every best/*.hyp, alone
    fairseq-hier-significance bleu test.docs.de transformer=transformer.docs hat=hat.docs \\
        [--tgt-lang de] [--samples 1000] [--seed 12345] [-o OUT.json]
    fairseq-hier-significance bleu ref.A.de ref.B.de transformer=transformer.docs hat=hat.docs

Files: one document (summary / reference) per line, line i of every file the same document; the
first ``NAME=PATH`` is the baseline. ``rouge``: references and hypotheses as ``rouge`` reads them
(tokenised, sentences ending in ``--eos``); an empty hypothesis scores 0; several reference
files give every summary several references, scored as ``rouge REF1 REF2 ... HYPS`` scores
them. ``bleu``: detokenised
documents (``fairseq-hier-doc-bleu --output-dir``'s ``NAME.docs``) against the reference
documents; several reference files give every document several references, scored as
``sacrebleu REF1 REF2 -i SYS`` and its ``--paired-bs`` score them (every reference file must
have the systems' line count).

A system given as several files (``NAME=A,B,...``, or ``NAME=DIR`` for every ``*.hyp`` in DIR)
is a set, ROUGE only: the decodings of one system's checkpoints (e.g. its 5 best on validation).
Its per-document score is the mean over its files, and each bootstrap resample averages those
means over its documents (:mod:`fairseq_hier.scoring.significance`); a set of one file is that
file. A second table lists each member's ROUGE-1.5.5 F, the set's mean and its 95% percentile
interval over test documents (the members held fixed: it does not cover training-run variance).
One set alone is allowed (its table only, no test).

Prints a table: every system's score (ROUGE F x 100 / BLEU), its delta to the baseline, the 95%
percentile interval of the delta and the one-sided p-value (share of resamples in which the
system does not beat the baseline; ``*``: p < 0.05), as defined in
:mod:`fairseq_hier.scoring.significance` (the same test as ``fairseq-hier-doc-bleu`` and the
report); for BLEU also each system's bootstrap mean +- 95% half-width, as sacreBLEU computes
them. Last line: the results as JSON (also written to ``-o``).
"""

import argparse
import json
import sys
from typing import List, Optional

from fairseq_hier.cli.common import (ALPHA, command_parser, positive_int, renamed, run_command,
                                     text_table)
from fairseq_hier.io import atomic_outputs
from fairseq_hier.scoring import significance as sig
from fairseq_hier.scoring.significance import METRICS

PROG = "fairseq-hier-significance"


def mark(p: Optional[float]) -> str:
    return "" if p is None else ("*" if p < ALPHA else "")


def rouge_table(result: dict) -> str:
    base = result["baseline"]
    rows = [["system"] + [f"{m.upper()} F" for m in METRICS]
            + [f"delta {m.upper()} [95% interval] p" for m in METRICS]]
    for name, scores in result["systems"].items():
        row = [name] + [f"{100 * scores[m]['f']:.2f}" for m in METRICS]
        for m in METRICS:
            s = scores[m]
            row.append("(baseline)" if name == base else
                       f"{100 * s['delta']:+.2f} [{100 * s['low']:+.2f}, {100 * s['high']:+.2f}] "
                       f"p={s['p_value']:.3f}{mark(s['p_value'])}")
        rows.append(row)
    return text_table(rows)


def bleu_table(result: dict) -> str:
    base = result["baseline"]
    rows = [["system", "doc BLEU", "delta [95% interval]", "p", "sacreBLEU mean +- 95%"]]
    for name, s in result["systems"].items():
        rows.append([
            name, f"{s['bleu']:.2f}",
            "(baseline)" if name == base
            else f"{s['delta']:+.2f} [{s['low']:+.2f}, {s['high']:+.2f}]",
            "-" if name == base else f"{s['p_value']:.3f}{mark(s['p_value'])}",
            f"{s['sacrebleu_mean']:.2f} +- {s['sacrebleu_ci95']:.2f}"])
    return text_table(rows)


def members_table(result: dict) -> str:
    """Each set's members (ROUGE-1.5.5's reported F) and their mean, then the plain mean of the
    set's per-document F with its 95% interval."""
    rows = [["system", "member"] + [f"{m.upper()} F" for m in METRICS]]
    for name, scores in result["systems"].items():
        if "members" not in scores[METRICS[0]]:
            continue
        for k, member in enumerate(scores[METRICS[0]]["members"]):
            rows.append([name, member["name"]]
                        + [f"{100 * scores[m]['members'][k]['reported_f']:.2f}" for m in METRICS])
        rows.append([name, "mean"] + [f"{100 * scores[m]['reported_f']:.2f}" for m in METRICS])
        rows.append([name, "per-document mean [95% interval]"]
                    + [f"{100 * scores[m]['f']:.2f} [{100 * scores[m]['f_low']:.2f}, "
                       f"{100 * scores[m]['f_high']:.2f}]" for m in METRICS])
    return text_table(rows)


def test(args) -> dict:
    """Run the test; print its table and note; return the results."""
    refs, systems, ref_name = sig.read_inputs(args.metric, args.inputs)
    baseline = next(iter(systems))
    if args.metric == "rouge":
        result = sig.rouge_significance(
            refs, systems, baseline, args.samples, args.seed, args.eos,
            stemming=not args.no_stemming, fallback=args.fallback, ref_name=ref_name,
            min_systems=1)
        text = rouge_table(result)
        if any(isinstance(h, sig.HypothesisSet) for h in systems.values()):
            text += ("\n\nsets: each member's F as ROUGE prints it, and their mean; then the plain "
                     "mean of the set's per-document F (the test's score) with its 95% percentile "
                     "bootstrap interval over test documents (members fixed)\n"
                     + members_table(result))
        scorer = ("official ROUGE-1.5.5" if result["official"]
                  else "rouge-score FALLBACK, NOT ROUGE-1.5.5")
        note = (f"ROUGE F x 100 ({scorer}): plain mean of per-document F; deltas on those "
                f"means")
    else:
        result = sig.bleu_significance(
            refs, systems, baseline, args.tgt_lang, args.samples, args.seed, args.tokenize,
            ref_name=ref_name)
        text = bleu_table(result)
        note = f"document BLEU, signature {result['signature']}"
    print(text)
    print(f"{result['documents']} documents, {result['samples']} paired resamples (seed "
          f"{result['seed']}); {note}; p: one-sided, share of resamples in which the system does "
          f"not beat {baseline}; * p < {ALPHA}")
    return result


def run(args) -> dict:
    if args.output:  # refused before the test when it is one of the inputs; written whole
        ref_files, specs = sig.split_inputs(args.metric, args.inputs)
        inputs = [*ref_files]
        for spec in specs:
            name, _, given = spec.partition("=")
            inputs += sig.system_paths(name, given) if given else []
        with atomic_outputs([args.output], inputs=inputs) as (f,):
            result = test(args)
            json.dump(result, f, indent=1)
            f.write("\n")
    else:
        result = test(args)
    print(sig.dumps(result))
    return result


def get_parser() -> argparse.ArgumentParser:
    from sacrebleu.metrics import BLEU  # lazy: only for the tokenizer choices

    p = command_parser(PROG, __doc__)
    p.epilog = EPILOG
    sub = p.add_subparsers(dest="metric", required=True, metavar="{rouge,bleu}")
    for metric, inputs_help, seed_default in (
            ("rouge", "the reference summaries, one per line (several files: several references "
                      "per summary, line i of each), then each system's summaries as NAME=PATH, "
                      "the first the baseline", "0"),
            ("bleu", "the reference documents, one per line (several files: several "
                     "references per document, line i of each, as sacrebleu REF1 REF2), then "
                     "each system's documents as NAME=PATH, the first the baseline",
             "12345 (sacreBLEU's; not 0)")):
        s = sub.add_parser(metric, help=f"paired bootstrap on {metric.upper()}")
        s.add_argument("inputs", nargs="+", metavar="REFS [...] NAME=PATH", help=inputs_help)
        s.add_argument("--samples", type=positive_int, default=1000,
                       help="bootstrap resamples (1000)")
        s.add_argument("--seed", type=int, default=None, help=f"resampling seed (default "
                                                              f"{seed_default})")
        s.add_argument("-o", "--output", default=None,
                       help="also write the full results (with the per-document scores), as "
                            "JSON, to this file")
        renamed(s, "--output", "--json")
        s.set_defaults(command_prog=s.prog)
        if metric == "rouge":
            s.add_argument("--eos", default=".", help="sentence end that splits summaries, as "
                                                      "rouge -e (default '.')")
            s.add_argument("--no-stemming", action="store_true", help="as rouge -nm")
            s.add_argument("--fallback", action="store_true",
                           help="score with the rouge-score package (NOT ROUGE-1.5.5)")
        else:
            s.add_argument("--tgt-lang", default="en",
                           help="target language: zh selects sacreBLEU's zh tokenizer")
            s.add_argument("--tokenize", default=None, choices=sorted(BLEU.TOKENIZERS),
                           help="sacreBLEU tokenizer (default: zh for --tgt-lang zh, else 13a)")
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
