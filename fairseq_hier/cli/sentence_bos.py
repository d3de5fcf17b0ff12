"""``fairseq-hier sentence-bos``: a published summarization split -> BOS-marked GPT-2 BPE lines
for ``fairseq-preprocess`` with BART's ``dict.txt`` (paper 004 Sec. 3.1 and 4.1).

    fairseq-hier sentence-bos --format cohan --input arxiv/train.txt \\
        --output-prefix work/bpe/train --gpt2-encoder-json bart/encoder.json \\
        --gpt2-vocab-bpe bart/vocab.bpe

Specification: docs/commands.md, section sentence-bos. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import sys
import tempfile
from collections import Counter
from typing import List, Optional

from fairseq_hier.cli.common import (add_shard_argument, command_parser, positive_int, ranged,
                                     run_command)
from fairseq_hier.preparation.sentence_bos import FORMATS, SPEAKER_IDS, encode_split, gpt2_files
from fairseq_hier.readers.records import MAX_SPAN_WORDS


PROG = "fairseq-hier-sentence-bos"


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("--format", required=True, choices=sorted(FORMATS),
                   help="layout of --input: a published one (see fairseq_hier/readers/layouts.py) "
                        "or jsonl, your own data (fairseq_hier/readers/own_data.py)")
    p.add_argument("--input", required=True,
                   help="the split's file (source_target: the prefix of .source/.target; "
                        "presumm: the prefix of the shards PREFIX.N.json, or one shard; jsonl: "
                        "the split's .jsonl file)")
    p.add_argument("--output-prefix", required=True, help="write PREFIX.source, .target, ...")
    p.add_argument("--gpt2-encoder-json", help="GPT-2 BPE encoder.json (BART's)")
    p.add_argument("--gpt2-vocab-bpe", help="GPT-2 BPE vocab.bpe (BART's)")
    p.add_argument("--bart-dir", metavar="DIR",
                   help="instead of the two files above: a BART directory, fairseq's (its "
                        "encoder.json, vocab.bpe) or Hugging Face's (fairseq's files derived "
                        "from its vocab.json, merges.txt: the ids are its tokenizer's; "
                        "fairseq-hier-bart files writes the matching dict.txt)")
    p.add_argument("--max-source-positions", type=ranged(int, 3), default=1024,
                   help="source tokens incl. every BOS and the EOS (004: 3072 arXiv/PubMed, "
                        "1024 CNN/DM and XSum)")
    p.add_argument("--max-target-positions", type=ranged(int, 2), default=1024,
                   help="target tokens incl. EOS (004: 512 arXiv/PubMed, 256 CNN/DM and XSum)")
    p.add_argument("--speakers", action="store_true",
                   help="dialogues: write PREFIX.segments (speaker index per turn) for "
                        "--segment-embeddings")
    p.add_argument("--speaker-ids", choices=SPEAKER_IDS, default=None,
                   help="with --speakers: 'roles' gives AMI's four roles (QMSum's Product "
                        "meetings: Project Manager, Marketing, User Interface, Industrial "
                        "Designer) the fixed ids 0-3, any other speaker is an error (004 Sec. "
                        "4.1: a segment embedding per role); 'appearance' numbers each "
                        "dialogue's speakers in order of appearance (corpora without roles). "
                        "Default: roles for --format qmsum, appearance otherwise")
    p.add_argument("--filler-words", default=None,
                   help="qmsum: file of meaningless words to drop (one per line, # comments)")
    p.add_argument("--max-span-words", type=ranged(int, 0), default=MAX_SPAN_WORDS,
                   help="a source sentence given by <t> tags with more whitespace words than "
                        "this is a whole text wrapped as one span (REALSumm's src.txt): pysbd "
                        f"splits it, counted in the log (0: never; default {MAX_SPAN_WORDS})")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)
    return p


def run(args) -> Counter:
    with tempfile.TemporaryDirectory(prefix="bart_files.") as scratch:
        files = gpt2_files(args.gpt2_encoder_json, args.gpt2_vocab_bpe, args.bart_dir, scratch)
        return encode_split(args.format, args.input, args.output_prefix, *files,
                            args.max_source_positions, args.max_target_positions,
                            speakers=args.speakers, filler_words=args.filler_words,
                            workers=args.workers, progress_bar=not args.no_progress_bar,
                            speaker_ids=args.speaker_ids, shard=args.shard,
                            max_span_words=args.max_span_words)


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
