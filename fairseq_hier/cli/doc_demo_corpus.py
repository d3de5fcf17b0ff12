"""``fairseq-hier-doc-demo-corpus``: a made-up English-German corpus of documents in the published
WMT20 layouts, for the document-translation demo and tests (deterministic per seed).

    fairseq-hier-doc-demo-corpus OUT_DIR [--train-docs 400] [--test-docs 40] [--seed 0]

Writes ``OUT_DIR/news-commentary-v15.de-en.tsv`` (``de<TAB>en`` lines, an empty line between
documents: News Commentary v15's document-split layout) and the newstest SGML pairs
``newstest2018-ende-{src.en,ref.de}.sgm`` (validation) and ``newstest2020-ende-...`` (test), as
``examples/wmt20_doc/recipe.sh`` reads them.

The language: a closed lexicon translated word by word, plus one document-level phenomenon: every
document is about one noun (its first sentence names it), and later sentences say "it", which
German renders by that noun's gender (er / sie / es), so a sentence seen alone is ambiguous and
its chunk (which holds the noun's sentence unless the document was cut before) settles it.
"""

import sys
from pathlib import Path
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, ranged, run_command
from fairseq_hier.demo.translation_corpus import write_corpus

PROG = "fairseq-hier-doc-demo-corpus"


def run(args) -> None:
    write_corpus(args.out_dir, args.train_docs, args.valid_docs, args.test_docs, args.seed,
                 args.max_sentences)
    print(f"wrote {args.out_dir}: {args.train_docs} training, {args.valid_docs} validation and "
          f"{args.test_docs} test documents")


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("out_dir", type=Path, help="where to write the published-layout files")
    p.add_argument("--train-docs", type=count, default=400, help="training documents")
    p.add_argument("--valid-docs", type=count, default=20, help="newstest2018 documents")
    p.add_argument("--test-docs", type=count, default=40, help="newstest2020 documents")
    p.add_argument("--max-sentences", type=ranged(int, 2), default=9,
                   help="most sentences of a document (at least 2)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
