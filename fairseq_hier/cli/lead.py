"""Lead baseline (Liu & Lapata 2019; Ma & Zong 2020): the first K tokens of the title followed by
the ranked paragraphs, K = the length of the reference summary of that example.

    fairseq-hier-lead --source test.src --reference test.tgt --output lead.hyp

Sources are raw lines of the task's format (``title <P> paragraph 1 <P> ...``); separators are
removed. Line counts are checked.
"""

import argparse
import sys


def lead(source: str, reference: str, separator: str = "<P>") -> str:
    tokens = [t for t in source.split() if t != separator]
    return " ".join(tokens[: len(reference.split())])


def cli_main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="raw source lines (title <P> paragraphs)")
    parser.add_argument("--reference", required=True, help="reference summaries (gives K)")
    parser.add_argument("--output", required=True)
    parser.add_argument("--paragraph-separator", default="<P>")
    args = parser.parse_args(argv)
    with open(args.source, encoding="utf-8") as f:
        sources = f.read().splitlines()
    with open(args.reference, encoding="utf-8") as f:
        references = f.read().splitlines()
    if len(sources) != len(references):
        sys.exit(f"fairseq-hier-lead: {args.source} has {len(sources)} lines but "
                 f"{args.reference} has {len(references)}")
    with open(args.output, "w", encoding="utf-8") as f:
        for s, r in zip(sources, references):
            f.write(lead(s, r, args.paragraph_separator) + "\n")
    print(f"wrote {len(sources)} Lead summaries to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    cli_main()
