"""The demo corpus's raw lines (``title <P> paragraph <P> ...``) rewritten for the other demos.

    python examples/demo/layouts.py multi-news SRC OUT      # Multi-News's published layout
    python examples/demo/layouts.py shuffle SRC OUT --seed N  # paragraphs in a seeded order
    python examples/demo/layouts.py clusters SRC OUT --count N  # JSON lines for summarize

multi-news: the title as a one-sentence first document, documents joined by ``|||||`` (run_
parsingsum.sh); shuffle: each example's paragraphs shuffled, the title first, one random stream
per example, the "original order" of a crawl (run_ranker.sh); clusters: the first N examples as
JSON lines of your own data (docs/data-formats.md#your-own-data-the-json-lines-schema) for
``fairseq-hier-summarize`` (run_demo.sh).
"""

import argparse
import json
import random

from fairseq_hier.io import read_lines, write_text


def multi_news(line: str) -> str:
    title, *docs = [p.strip() for p in line.split("<P>")]
    docs = [f"{title.capitalize()} is a place ."] + [d for d in docs if d]
    return " |||||".join(f" {d}" if i else d for i, d in enumerate(docs)) + " |||||"


def shuffle(line: str, seed: int, index: int) -> str:
    title, *paragraphs = line.split(" <P> ")
    random.Random(seed * 1_000_003 + index).shuffle(paragraphs)  # one stream per example
    return " <P> ".join([title] + paragraphs)


def cluster(line: str) -> str:
    title, *paragraphs = [p.strip() for p in line.split("<P>")]
    return json.dumps({"title": title, "documents": paragraphs})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("layout", choices=["multi-news", "shuffle", "clusters"])
    parser.add_argument("source", help="the demo corpus's SPLIT.src")
    parser.add_argument("output")
    parser.add_argument("--seed", type=int, default=1, help="shuffle: the corpus's seed")
    parser.add_argument("--count", type=int, default=5, help="clusters: the first N examples")
    args = parser.parse_args(argv)
    lines = read_lines(args.source)
    if args.layout == "multi-news":
        out = [multi_news(line) for line in lines]
    elif args.layout == "shuffle":
        out = [shuffle(line, args.seed, i) for i, line in enumerate(lines)]
    else:
        out = [cluster(line) for line in lines[: args.count]]
    write_text(args.output, "".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
