"""``fairseq-hier-graph``: the paragraph graphs of a split for the graph-informed attention of Liu &
Lapata 2019 (002, Eq. 24): tf-idf similarities or the Approximate Discourse Graph.

    fairseq-hier-graph --source raw/test.src --kind adg --output-prefix data-bin/test.graph.adg \\
        --workers 8

Reads the raw source lines of the task ``hierarchical_summarization`` (``title <P> paragraph 1
<P> paragraph 2 ...``, whitespace-tokenised words or sentencepiece pieces), splits each into
paragraphs by the dataset's rules (:func:`fairseq_hier.data.paragraphs.text_paragraphs`: title
merged into paragraph 0, empty paragraphs dropped, no ``max_paragraphs`` cut) and writes one
``P x P`` graph per line to ``PREFIX.{sizes,offsets,values}.npy``
(:mod:`fairseq_hier.data.paragraph_graph`). The kinds (:mod:`fairseq_hier.data.graphs`):
``tfidf`` (cosines of the paragraphs' tf-idf vectors, idf fit on the example's paragraphs) and
``adg`` (shared named entities from spaCy's NER, plus discourse markers opening adjacent
paragraphs). The task reads ``DATA/SPLIT.graph.KIND`` and checks it against the split.

The source is read twice, streaming: first to check every line (UTF-8, at least one paragraph)
and count them, then to build the graphs, so a bad line fails the run before any work and a
split larger than memory is fine. Prints examples/s and paragraphs/s. Errors: one line, exit 1;
an interrupted run leaves no output files.

Rates with one worker on examples of 20 paragraphs of 60 tokens (one core of a shared 2-core
CPU): ``tfidf`` about 260 examples/s (5,000 paragraphs/s, scikit-learn's per-example overhead),
``adg`` about 5 examples/s (110 paragraphs/s: spaCy's NER is the cost). ``--workers N`` runs
N processes (each loads spaCy once); a WikiSum-sized split (1.6M examples) needs them for ``adg``.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.preparation.graphs import write_graphs

PROG = "fairseq-hier-graph"


def run(args) -> None:
    write_graphs(args.source, args.kind, args.output_prefix, args.paragraph_separator,
                 workers=args.workers, batch_size=args.batch_size,
                 progress_bar=not args.no_progress_bar, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--source", required=True,
                   help="raw source lines of one split: title <P> paragraph 1 <P> paragraph 2 ...")
    p.add_argument("--kind", required=True, choices=("tfidf", "adg"),
                   help="tfidf: tf-idf cosine similarities; adg: approximate discourse graph")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.{sizes,offsets,values}.npy; the task reads "
                        "DATA/SPLIT.graph.KIND")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>, as the task's)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (default 1)")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="examples per batch handed to a worker; for adg, the paragraphs of a "
                        "batch go through spaCy's nlp.pipe together (default 64)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
