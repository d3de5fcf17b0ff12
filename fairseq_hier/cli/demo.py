"""``fairseq-hier demo``: the demos' synthetic corpora and fact scores: corpus, doc-corpus,
facts.

    fairseq-hier demo corpus --output-dir demo/raw --seed 1 --train 6000 --valid 200 --test 200
    fairseq-hier demo doc-corpus --output-dir demo/wmt20 [--train-docs 400] [--seed 0]
    fairseq-hier demo facts score test.facts.jsonl HYPS [NAME=HYPS ...]

Specification: docs/commands.md, section demo (the corpora: :mod:`fairseq_hier.demo.corpus`,
:mod:`fairseq_hier.demo.translation_corpus`). Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import json
import sys
from pathlib import Path

from fairseq_hier.cli.common import (count, family_commands, positive_int, ranged, renamed,
                                     renamed_positional, run_subcommand, subcommand)
from fairseq_hier.demo import translation_corpus
from fairseq_hier.demo.corpus import ATTRIBUTES, MAX_VALUES, NAMES, PHRASES, write_corpus
from fairseq_hier.demo.facts import score_files, write_baseline
from fairseq_hier.demo.seeds import compare_seeds, format_comparison, parse_groups, parse_systems
from fairseq_hier.io import atomic_outputs

PROG = "fairseq-hier-demo"


def corpus(args) -> None:
    """The summarisation demo's corpus: OUTPUT_DIR/{train,valid,test}.{src,tgt,facts.jsonl}, or
    {train,valid,test}.{jsonl,facts.jsonl} with --format jsonl."""
    # the library reads the generator's options by attribute name, the folder as out_dir
    stats_of, vocab = write_corpus(argparse.Namespace(**vars(args), out_dir=args.output_dir))
    for split, stats in stats_of:
        print(f"[{split}] {stats['examples']} examples, {stats['paragraphs']:.1f} paragraphs, "
              f"{stats['src_tokens']:.1f} source / {stats['tgt_tokens']:.1f} target tokens on "
              f"average")
    files = "src,tgt,facts.jsonl" if args.format == "raw" else "jsonl,facts.jsonl"
    print(f"wrote {args.output_dir}/{{train,valid,test}}.{{{files}}}; vocabulary {vocab} words")


def doc_corpus(args) -> None:
    """The document-translation demo's corpus, in the published WMT20 layouts."""
    translation_corpus.write_corpus(args.output_dir, args.train_docs, args.valid_docs,
                                    args.test_docs, args.seed, args.max_sentences)
    print(f"wrote {args.output_dir}: {args.train_docs} training, {args.valid_docs} validation and "
          f"{args.test_docs} test documents")


def facts_score(args) -> None:
    scores = score_files(args.facts, args.hyps, args.resamples, args.seed)
    print(f"{'system':<16}{'facts % [95% CI]':>22}{'wrong %':>9}{'confused %':>12}")
    for name, s in scores:
        print(f"{name:<16}{100 * s['accuracy']:>7.1f} [{100 * s['low']:5.1f}, "
              f"{100 * s['high']:5.1f}]{100 * s['wrong_rate']:>9.1f}"
              f"{100 * s['confused_rate']:>12.1f}")


def facts_baseline(args) -> None:
    write_baseline(args.kind, args.facts, args.output, train_facts=args.train_facts,
                   source=args.source)


def facts_seeds(args) -> None:
    systems = parse_systems(args.systems)
    groups = parse_groups(args.compare, systems)
    result = compare_seeds(args.seed_dir, systems, groups, args.resamples, args.seed)
    print(format_comparison(result))
    if args.output:
        with atomic_outputs([args.output]) as (f,):
            json.dump(result, f, indent=1)


def _check_corpus(parser: argparse.ArgumentParser, args) -> None:
    """The rules between options (each option's own range is checked when parsed)."""
    if args.min_facts > args.max_facts:
        parser.error(f"--min-facts {args.min_facts} must be <= --max-facts {args.max_facts}")
    if args.other_entities >= args.names:
        parser.error(f"--other-entities {args.other_entities} must be < --names {args.names}")
    if args.min_paragraph_tokens > args.max_paragraph_tokens:
        parser.error(f"--min-paragraph-tokens {args.min_paragraph_tokens} must be <= "
                     f"--max-paragraph-tokens {args.max_paragraph_tokens}")


def _check_baseline(parser: argparse.ArgumentParser, args) -> None:
    if args.kind == "frequent" and not args.train_facts:
        parser.error("baseline frequent needs --train-facts")
    if args.kind == "first" and not args.source:
        parser.error("baseline first needs --source")


def _add_corpus(sub) -> None:
    p = subcommand(sub, "corpus", corpus, "the summarisation demo's multi-document corpus, with "
                   "the ground truth of every summary's facts",
                   "Writes OUTPUT_DIR/{train,valid,test}.{src,tgt,facts.jsonl} (or, --format "
                   "jsonl, {train,valid,test}.{jsonl,facts.jsonl}) together or not at all, and "
                   "prints each split's sizes.")
    p.add_argument("--output-dir", required=True, help="folder for the corpus")
    p.add_argument("--format", choices=("raw", "jsonl"), default="raw",
                   help="raw: our raw format (SPLIT.src/.tgt); jsonl: JSON lines of your own "
                        "data's schema (docs/data-formats.md), the paragraphs as documents")
    renamed(p, "--output-dir", "--out-dir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train", type=count, default=6000, help="number of training examples")
    p.add_argument("--valid", type=count, default=200)
    p.add_argument("--test", type=count, default=200)
    p.add_argument("--names", type=ranged(int, 2, len(NAMES)), default=8,
                   help=f"distinct place names (at most {len(NAMES)}); the title and the "
                        "other places of an example are drawn from the first N")
    p.add_argument("--values", type=ranged(int, 2, MAX_VALUES), default=8,
                   help=f"distinct values per attribute (at most {MAX_VALUES}); fewer values "
                        "are learnt faster, more make guessing harder")
    p.add_argument("--phrasings", type=ranged(int, 1, min(len(p) for p in PHRASES.values())),
                   default=1, help="source phrasings per attribute (at most 4)")
    p.add_argument("--min-facts", type=ranged(int, 1, len(ATTRIBUTES)), default=len(ATTRIBUTES),
                   help="facts per summary (kind always, then a random subset of the others)")
    p.add_argument("--max-facts", type=ranged(int, 1, len(ATTRIBUTES)), default=len(ATTRIBUTES))
    p.add_argument("--max-facts-per-paragraph", type=positive_int, default=2)
    p.add_argument("--other-entities", type=count, default=2,
                   help="other places per example whose facts (the same attributes, other "
                        "values) are stated in distractor paragraphs")
    p.add_argument("--mentions", type=count, default=1,
                   help="paragraphs per example that mention the entity without a fact")
    p.add_argument("--fillers", type=count, default=0, help="filler-only paragraphs per example")
    p.add_argument("--min-paragraph-tokens", type=positive_int, default=6)
    p.add_argument("--max-paragraph-tokens", type=positive_int, default=12)
    p.add_argument("--repeat-prob", type=ranged(float, 0, 1), default=0.3,
                   help="probability of an extra relevant paragraph restating a fact")
    p.add_argument("--rank-noise", type=ranged(float, 0), default=2.0,
                   help="std of the ranking noise (relevant paragraphs score 1, others 0)")
    p.checks.append(_check_corpus)


def _add_doc_corpus(sub) -> None:
    p = subcommand(sub, "doc-corpus", doc_corpus, "a made-up English-German corpus of documents "
                   "in the published WMT20 layouts (the document-translation demo)",
                   "Writes OUTPUT_DIR/news-commentary-v15.de-en.tsv and the newstest SGML pairs "
                   "newstest2018-ende-{src.en,ref.de}.sgm (validation) and newstest2020-ende-... "
                   "(test), as examples/wmt20_doc/recipe.sh reads them.")
    p.add_argument("--output-dir", type=Path, required=True,
                   help="where to write the published-layout files")
    renamed_positional(p, "OUT_DIR", "--output-dir")
    p.add_argument("--train-docs", type=count, default=400, help="training documents")
    p.add_argument("--valid-docs", type=count, default=20, help="newstest2018 documents")
    p.add_argument("--test-docs", type=count, default=40, help="newstest2020 documents")
    p.add_argument("--max-sentences", type=ranged(int, 2), default=9,
                   help="most sentences of a document (at least 2)")
    p.add_argument("--seed", type=int, default=0, help="random seed")


def _add_facts(sub) -> None:
    facts = subcommand(sub, "facts", None, "fact accuracy of demo summaries against the corpus's "
                       "ground truth, the fact baselines, several seeds compared")
    inner = facts.add_subparsers(dest="facts_command", required=True, metavar="{score,baseline,"
                                                                               "seeds}")
    score = subcommand(inner, "score", facts_score, "fact accuracy of hypothesis files")
    score.add_argument("facts", help="{split}.facts.jsonl of fairseq-hier demo corpus")
    score.add_argument("hyps", nargs="+", metavar="[NAME=]HYPS", help="one summary per line")
    score.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples")
    score.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    base = subcommand(inner, "baseline", facts_baseline, "write a baseline's summaries")
    base.add_argument("kind", choices=["frequent", "first"])
    base.add_argument("--facts", required=True, help="ground truth of the split to summarise")
    base.add_argument("--train-facts", help="train.facts.jsonl (frequent)")
    base.add_argument("--source", help="the split's .src (first)")
    base.add_argument("-o", "--output", required=True, help="the summaries, one per line")
    base.checks.append(_check_baseline)
    seeds = subcommand(inner, "seeds", facts_seeds,
                       "compare systems over several seeds of the demo")
    seeds.add_argument("--seed-dir", action="append", required=True,
                       help="one demo run (its WORK folder); repeat for every seed")
    seeds.add_argument("systems", nargs="+", metavar="NAME=RUN_DIR",
                       help="a system's run folder (test.hyp, attention.json), relative to each "
                            "seed folder")
    seeds.add_argument("--compare", action="append",
                       help="systems to order pairwise, comma-separated (repeatable; default: "
                            "all systems)")
    seeds.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples")
    seeds.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    seeds.add_argument("-o", "--output", help="also write the comparison as JSON here")
    renamed(seeds, "--output", "--json")


get_parser, cli_main = family_commands(PROG, __doc__, (_add_corpus, _add_doc_corpus, _add_facts))
run = run_subcommand


if __name__ == "__main__":
    sys.exit(cli_main())
