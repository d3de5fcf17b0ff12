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

Malformed input is an error, never a partial success: an unreadable shard, a shard that is not a
non-empty list, and every record that is not a dict with ``src`` (a list of paragraphs, each a
list of ids), ``tgt`` (ids) and ``tgt_str`` (text), or holds ids outside the model, gets one
error line naming the shard file and the example index (the first 100 of a split are listed,
then their count); the split's files are then not written and the command exits with status 1
and a one-line message. A split's files appear only once the whole split has converted, so a
failed run is not mistaken for a finished one by ``prepare.sh``.

    fairseq-hier-wikisum-to-raw --data-prefix ranked_abs3_fast_b40/WIKI --spm spm9998_3.model \
        --out-dir wikisum_raw
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, run_command
from fairseq_hier.preparation.wikisum import SPLITS, TITLE_PLACEMENTS, convert

PROG = "fairseq-hier-wikisum-to-raw"


def run(args) -> None:
    convert(args.data_prefix, args.spm, args.out_dir, args.splits, args.paragraph_separator,
            args.title_placement)


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = command_parser(PROG, __doc__)
    parser.add_argument("--data-prefix", required=True,
                        help="shard prefix, e.g. ranked_abs3_fast_b40/WIKI (reads "
                             "PREFIX.SPLIT.N.pt, else PREFIX.SPLIT.pt)")
    parser.add_argument("--spm", required=True, help="hiersumm's spm9998_3.model")
    parser.add_argument("--out-dir", required=True, help="folder for SPLIT.{src,tgt,ref}, dict.txt")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS),
                        help="splits to convert (default: train valid test)")
    parser.add_argument("--paragraph-separator", default="<P>",
                        help="piece written between the title and paragraphs (default <P>)")
    parser.add_argument("--title-placement", choices=TITLE_PLACEMENTS, default="first",
                        help="first: the title once, as the first segment (the papers' text; the "
                             "task puts it before paragraph 1); every: keep 'title <T>' in front "
                             "of every paragraph as the shards have it (the authors' code)")
    return run_command(PROG, run, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
