"""Convert ranked WikiSum (Liu & Lapata 2019, nlpyang/hiersumm) to fairseq-hier's raw format.

Input, exactly as published: ``<prefix>.{train,valid,test}.N.pt`` shards (falling back to
``<prefix>.<split>.pt``), each a ``torch.save``d list of dicts with ``src`` (ranked paragraphs,
each a list of sentencepiece ids), ``tgt`` (target ids) and ``tgt_str`` (gold text), ids from
their 32k sentencepiece model ``spm9998_3.model`` (shipped with the data). Id lists may also be
1-D integer tensors.

Output in ``--out-dir``:
    {split}.src   title <P> paragraph 1 <P> paragraph 2 ...   (sentencepiece pieces)
    {split}.tgt   target pieces, without <S>/</S>, with <Q> between sentences
    {split}.ref   gold text for ROUGE: lowercased, sentences split by " <q> " (see
                  :func:`Converter.reference`: both ``<t> s1 </t> <t> s2 </t>`` and ``s1 <Q> s2``)
    dict.txt      fairseq dictionary of every piece of the model (for --srcdict)

Title placement (``--title-placement``): ``first`` (default) follows the papers' text: the
title (the pieces of paragraph 0 before ``<T>``) is the first segment, which the task
concatenates before the first paragraph (000 Sec. 4.3), and every paragraph that repeats the
``title <T>`` prefix has it stripped (counted). ``every`` keeps each paragraph as the shards
have it, ``title <T>`` in front of every paragraph, with an empty title segment: the layout the
authors' code trains on (yema2018/wiki_sum feeds ``d['src']`` as it is). Pieces equal to the
paragraph separator inside a paragraph, empty paragraphs, and examples left with no paragraph,
an empty target or an empty gold text are dropped, each logged with its shard and index and
counted; nothing is dropped silently.

Clone paragraphs (Liu & Lapata 2019, Sec. 4: a paragraph whose bigram recall against the target
summary is above 0.8 is a copy of the Wikipedia article, and is removed): ``--raw DIR`` reads raw
WikiSum in our raw format (``DIR/SPLIT.src`` as ``title <P> paragraph ...`` in the crawl's order,
``DIR/SPLIT.tgt``; e.g. rebuilt with tensor2tensor) and writes the same files into ``--out-dir``
without its clone paragraphs, the paper's step before ranking: there ``--clone-recall`` defaults to
0.8. The published shards come out of that pipeline (they are 002's ranked dataset), so their
paragraphs are kept as published unless ``--clone-recall R`` is given; either way the number
removed is logged (``clone paragraphs removed (bigram recall against the target > R): N``, so
``--clone-recall 0.8`` on the shards counts any clone left in them). Bigrams are counted on the
lowercased tokens as the files hold them (the shards' sentencepiece pieces, a paragraph's
``title <T>`` prefix left out; raw files: whitespace tokens): see
:func:`fairseq_hier.preparation.wikisum.clone_paragraphs`.

Malformed input is an error, never a partial success: an unreadable shard, a shard that is not a
non-empty list, and every record that is not a dict with ``src`` (a list of paragraphs, each a
list of ids), ``tgt`` (ids) and ``tgt_str`` (text), or holds ids outside the model, gets one
error line naming the shard file and the example index (the first 100 of a split are listed,
then their count); the split's files are then not written and the command exits with status 1
and a one-line message. A split's files appear only once the whole split has converted, so a
failed run is not mistaken for a finished one by ``prepare.sh``.

    fairseq-hier-wikisum-to-raw --data-prefix ranked_abs3_fast_b40/WIKI --spm spm9998_3.model \
        --out-dir wikisum_raw
    fairseq-hier-wikisum-to-raw --raw work/rank/crawl --out-dir work/rank/raw   # clones removed
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, run_command
from fairseq_hier.errors import HierError
from fairseq_hier.preparation.wikisum import (CLONE_RECALL, SPLITS, TITLE_PLACEMENTS, convert,
                                              remove_clones_raw)

PROG = "fairseq-hier-wikisum-to-raw"


def run(args) -> None:
    if (args.raw is None) == (args.data_prefix is None):
        raise HierError("give either --data-prefix (the published shards) or --raw (raw WikiSum "
                        "in our raw format)")
    if args.raw is not None:
        recall = CLONE_RECALL if args.clone_recall is None else args.clone_recall
        remove_clones_raw(args.raw, args.out_dir, args.splits, args.paragraph_separator, recall,
                          shard=args.shard)
        return
    if args.spm is None:
        raise HierError("--data-prefix needs --spm (hiersumm's spm9998_3.model)")
    convert(args.data_prefix, args.spm, args.out_dir, args.splits, args.paragraph_separator,
            args.title_placement, args.clone_recall, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = command_parser(PROG, __doc__)
    parser.add_argument("--data-prefix",
                        help="shard prefix, e.g. ranked_abs3_fast_b40/WIKI (reads "
                             "PREFIX.SPLIT.N.pt, else PREFIX.SPLIT.pt)")
    parser.add_argument("--raw", metavar="DIR",
                        help="instead of shards: raw WikiSum in our raw format (DIR/SPLIT.src, "
                             "DIR/SPLIT.tgt), written to --out-dir without clone paragraphs")
    parser.add_argument("--spm", help="hiersumm's spm9998_3.model (with --data-prefix)")
    parser.add_argument("--out-dir", required=True, help="folder for SPLIT.{src,tgt,ref}, dict.txt")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS),
                        help="splits to convert (default: train valid test)")
    parser.add_argument("--paragraph-separator", default="<P>",
                        help="piece written between the title and paragraphs (default <P>)")
    parser.add_argument("--title-placement", choices=TITLE_PLACEMENTS, default="first",
                        help="first: the title once, as the first segment (the papers' text; the "
                             "task puts it before paragraph 1); every: keep 'title <T>' in front "
                             "of every paragraph as the shards have it (the authors' code)")
    parser.add_argument("--clone-recall", type=float, default=None, metavar="R",
                        help="drop paragraphs whose bigram recall against the target is above R "
                             f"(002: {CLONE_RECALL}); default {CLONE_RECALL} with --raw, none "
                             "for the published shards (002's dataset, built after that removal)")
    add_shard_argument(parser)
    return run_command(PROG, run, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
