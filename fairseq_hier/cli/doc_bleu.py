"""``fairseq-hier doc-bleu``: chunk translations -> whole documents -> document-level sacreBLEU
and chrF (paper 004 Sec. 4.2 and Table 7: each chunk translated separately, the translated chunks
concatenated to score the entire document).

    fairseq-hier doc-bleu plain=work/runs/plain/generate-test.txt \\
        hat=work/runs/hat/generate-test.txt --chunks work/data-bin/test.chunks \\
        --reference work/raw/test.de --tgt-lang de --output-dir work/decode

Specification: docs/commands.md, section doc-bleu. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import logging
import sys
from typing import List, Optional

from fairseq_hier.analysis.doc_bleu import score_systems
from fairseq_hier.cli.common import command_parser, count, renamed, run_command
from fairseq_hier.scoring.bleu import default_tokenize
from fairseq_hier.scoring.significance import BLEU_SEED
from fairseq_hier.text.tokenizers import TOKENIZERS

logger = logging.getLogger("fairseq_hier.doc_bleu")
PROG = "fairseq-hier-doc-bleu"


def run(args) -> dict:
    result, text = score_systems(args.systems, args.chunks, args.reference, args.tgt_lang,
                                 args.tokenize,
                                 args.docids, args.lines, not args.no_detokenize,
                                 args.bootstrap, args.seed, warn=logger.warning,
                                 tgt_tokenizer=args.tgt_tokenizer, force=args.force,
                                 text=args.text, run_dir=args.run_dir, subset=args.subset,
                                 output_dir=args.output_dir)
    sys.stdout.write(text)
    return result.summary


def _check(p, args) -> None:
    """The rules between options; the defaults that depend on others."""
    if args.text:
        given = [flag for flag, value in (("--chunks", args.chunks), ("--lines", args.lines),
                                          ("--no-detokenize", args.no_detokenize),
                                          ("--tgt-tokenizer", args.tgt_tokenizer)) if value]
        if given:
            p.error(f"{given[0]} applies to fairseq-generate logs, not to --text outputs "
                    f"(scored as given)")
    elif args.chunks is None:
        p.error("give --chunks (the chunk map of fairseq-generate logs) or --text (plain-text "
                "outputs)")
    args.lines = args.lines or "H"
    if args.subset is not None and not args.run_dir:
        p.error("--subset names the files of --run-dir: give --run-dir too")
    if args.run_dir and len(args.systems) != 1:
        p.error(f"--run-dir holds one system's files: give one NAME=LOG, not "
                f"{len(args.systems)}")
    if args.tokenize is None:
        args.tokenize = default_tokenize(args.tgt_lang)


def get_parser():
    from sacrebleu.metrics import BLEU  # lazy: only for the tokenizer choices

    p = command_parser(PROG, __doc__)
    p.add_argument("systems", nargs="+", metavar="NAME=LOG",
                   help="fairseq-generate output of each system (the first is the baseline); a "
                        "bare LOG is named after its run folder when it is generate-SUBSET.txt, "
                        "else after its file name without the extension; with --text, a "
                        "plain-text file of translated sentences")
    p.add_argument("--chunks", default=None,
                   help="the split's chunk map (DATA_BIN/test.chunks); required unless --text")
    p.add_argument("--text", action="store_true",
                   help="the systems are plain-text files, one translated sentence a line in "
                        "REF's sentence order, scored as given; the documents are REF's")
    p.add_argument("--reference", required=True,
                   help="raw target file of the split (one sentence a line, documents separated "
                        "by an empty line), scored as given")
    renamed(p, "--reference", "--ref")
    p.add_argument("--docids", default=None, help="its docids (default: REF without its "
                                                  "language suffix + .docids)")
    p.add_argument("--tgt-lang", required=True, help="target language (detokenisation)")
    p.add_argument("--lines", choices=("H", "D"), default=None,
                   help="read fairseq-generate's H- lines (default) or its D- lines")
    p.add_argument("--no-detokenize", action="store_true",
                   help="score the hypotheses as they are (BPE removed, no detokenisation): "
                        "tokenised outputs against tokenised references")
    p.add_argument("--tokenize", default=None, choices=sorted(BLEU.TOKENIZERS),
                   help="sacreBLEU tokenizer (default: zh for a zh target, else 13a; 'none' "
                        "for text tokenised beforehand)")
    p.add_argument("--bootstrap", type=count, default=1000,
                   help="bootstrap resamples over documents for the intervals and the paired "
                        "test (0: none)")
    p.add_argument("--seed", type=int, default=BLEU_SEED,
                   help=f"resampling seed (default {BLEU_SEED}, sacreBLEU's; not 0)")
    p.add_argument("--tgt-tokenizer", choices=TOKENIZERS, default=None,
                   help="the target side's tokenizer of fairseq-hier-doc tokenize, whose "
                        "inverse detokenises the hypotheses (default: the tgt_tokenizer of the "
                        "preprocessing record beside --chunks, else auto)")
    p.add_argument("--force", action="store_true",
                   help="score anyway a REF whose suffix names another language than "
                        "--tgt-lang, or two sides that do not look alike (one tokenised, the "
                        "other not); each is then a warning")
    p.add_argument("--output-dir", default=None, help="write NAME.docs and NAME.chunks.tsv here")
    p.add_argument("--run-dir", default=None, metavar="RUN",
                   help="one system's run directory: write RUN/SUBSET.docs, RUN/SUBSET.ref and "
                        "RUN/SUBSET.bleu.txt (the printed output)")
    p.add_argument("--subset", default=None,
                   help="SUBSET of --run-dir's files (default: the chunk map's name without "
                        ".chunks, e.g. test)")
    p.checks.append(_check)
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
