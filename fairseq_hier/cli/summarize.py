"""``fairseq-hier summarize``: summarise raw documents with a trained checkpoint directory, redoing
the preprocessing its data-bin recorded (:mod:`fairseq_hier.inference.summarizer`).

    fairseq-hier summarize runs/pht clusters/ --output-dir summaries/

Specification: docs/commands.md, section summarize. Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import os
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, positive_int, run_command, split_option
from fairseq_hier.inference.inputs import is_jsonl, read_inputs
from fairseq_hier.inference.summarizer import HierSummarizer, check_documents
from fairseq_hier.io import OutputSet

PROG = "fairseq-hier-summarize"


def output_paths(args, files: List[str]) -> List[str]:
    """The files written: ``-o``'s, or one per input file under ``--output-dir``."""
    if args.output_dir:
        return [os.path.join(args.output_dir, os.path.basename(path)
                             + (".summaries" if is_jsonl(path) else ".summary"))
                for path in files]
    return [args.output] if args.output else []


def run(args) -> None:
    inputs = read_inputs(args.inputs, not args.no_progress_bar)
    for _, examples in inputs:  # every input checked before a model is loaded
        for example in examples:
            check_documents(example)
    files = [path for path, _ in inputs]
    # outputs checked (an input, a folder, twice the same name) before the model is loaded
    with OutputSet(output_paths(args, files), inputs=files) as outputs:
        summarizer = HierSummarizer.from_pretrained(
            args.checkpoint, args.checkpoint_file, generation=args.generation, cpu=args.cpu,
            batch_size=args.batch_size, trust_checkpoint=args.trust_checkpoint,
            pipeline_options={"split_lines": True} if args.split_sentences else None)
        examples = [x for _, xs in inputs for x in xs]
        summaries = iter(summarizer.summarize(examples, progress=not args.no_progress_bar))
        per_file = [[next(summaries) + "\n" for _ in xs] for _, xs in inputs]
        if not outputs.paths:  # stdout
            for texts in per_file:
                sys.stdout.writelines(texts)
            return
        chunks = per_file if args.output_dir else [[t for texts in per_file for t in texts]]
        for staged, texts in zip(outputs.staged, chunks):
            with open(staged, "w", encoding="utf-8", newline="\n") as f:
                f.writelines(texts)
    if args.output_dir:
        print(f"{PROG}: {len(examples)} summaries of {len(per_file)} files in {args.output_dir}",
              file=sys.stderr)


def get_parser():
    p = command_parser(PROG, __doc__)
    p.add_argument("checkpoint", metavar="CHECKPOINT_DIR",
                   help="a checkpoint directory (checkpoint_best.pt, else checkpoint_last.pt) or "
                        "a checkpoint file")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="cluster files, directories of "
                                                               "them, or .jsonl files")
    p.add_argument("-o", "--output", help="write the summaries here, one per line (default: "
                                          "stdout)")
    p.add_argument("--output-dir", help="one NAME.summary file per cluster file instead")
    p.add_argument("--checkpoint-file", help="checkpoint file name inside CHECKPOINT_DIR")
    p.add_argument("--generation", default="", help="fairseq-generate options over the "
                                                    "recipe's, e.g. \"--beam 3 --lenpen 1.2\"")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="examples per batch (default 8)")
    p.add_argument("--cpu", action="store_true", help="do not use the GPU")
    p.add_argument("--trust-checkpoint", action="store_true",
                   help="load a checkpoint that holds objects beyond weights and options "
                        "(torch.load(weights_only=False): it may run code; only for files you "
                        "trust)")
    p.add_argument("--split-sentences", action="store_true",
                   help="a model trained on one sentence a line (HAT on arXiv / PubMed): split "
                        "every line of the input into sentences with pysbd first, as new text "
                        "comes in paragraphs (without it a line is one sentence)")
    p.add_argument("--no-progress-bar", action="store_true", help="no progress bars")
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    if args.output and args.output_dir:
        parser.error("-o and --output-dir exclude each other")
    split_option(parser, "--generation", args.generation)
    return run_command(PROG, run, args)


if __name__ == "__main__":
    sys.exit(cli_main())
