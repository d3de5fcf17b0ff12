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

import argparse
import random
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

# (English, German) pairs; nouns carry German gender
NOUNS = [("river", "Fluss", "er"), ("bridge", "Brücke", "sie"), ("boat", "Boot", "es"),
         ("market", "Markt", "er"), ("town", "Stadt", "sie"), ("bread", "Brot", "es"),
         ("harbour", "Hafen", "er"), ("street", "Straße", "sie"), ("child", "Kind", "es")]
VERBS = [("sings", "singt"), ("sleeps", "schläft"), ("waits", "wartet"), ("shines", "glänzt"),
         ("grows", "wächst"), ("stays", "bleibt")]
ADVERBS = [("loudly", "laut"), ("slowly", "langsam"), ("today", "heute"), ("again", "wieder"),
           ("quietly", "leise"), ("often", "oft"), ("here", "hier"), ("early", "früh")]
ADJECTIVES = [("old", "alt"), ("green", "grün"), ("small", "klein"), ("quiet", "ruhig"),
              ("fresh", "frisch"), ("big", "groß")]
ARTICLE = {"er": "Der", "sie": "Die", "es": "Das"}
PRONOUN = {"er": "Er", "sie": "Sie", "es": "Es"}
Doc = Tuple[List[str], List[str]]  # English sentences, German sentences


def toy_document(rng: random.Random, sentences: int, long_sentence: bool = False) -> Doc:
    """One document; with ``long_sentence`` its second sentence runs to 60 adverbs (over-long)."""
    en_noun, de_noun, gender = rng.choice(NOUNS)
    adj_en, adj_de = rng.choice(ADJECTIVES)
    src = [f"The {en_noun} is {adj_en}."]
    tgt = [f"{ARTICLE[gender]} {de_noun} ist {adj_de}."]
    for i in range(1, sentences):
        verb_en, verb_de = rng.choice(VERBS)
        adverbs = [rng.choice(ADVERBS) for _ in range(60 if long_sentence and i == 1
                                                      else rng.randint(1, 3))]
        src.append(f"It {verb_en} " + " ".join(a for a, _ in adverbs) + ".")
        tgt.append(f"{PRONOUN[gender]} {verb_de} " + " ".join(b for _, b in adverbs) + ".")
    return src, tgt


def write_nc_tsv(path: Path, docs: Sequence[Doc]) -> None:
    """News Commentary v15 layout: ``de<TAB>en`` lines, an empty line between documents."""
    path.write_text("\n\n".join("\n".join(f"{d}\t{e}" for e, d in zip(src, tgt))
                                for src, tgt in docs) + "\n", encoding="utf-8")


def write_sgm(folder: Path, year: int, docs: Sequence[Doc]) -> None:
    """WMT newstest fake SGML: ``newstestYYYY-ende-src.en.sgm`` and ``-ref.de.sgm``."""
    for side, name, lang in ((0, "src", "en"), (1, "ref", "de")):
        head = (f'<srcset setid="newstest{year}" srclang="any">' if side == 0 else
                f'<refset setid="newstest{year}" srclang="any" trglang="de">')
        lines = [head]
        for k, doc in enumerate(docs):
            lines += [f'<doc sysid="ref" docid="story{year}.{k}" genre="news" origlang="en">', "<p>"]
            lines += [f'<seg id="{i + 1}">{s}</seg>' for i, s in enumerate(doc[side])]
            lines += ["</p>", "</doc>"]
        lines.append("</srcset>" if side == 0 else "</refset>")
        (folder / f"newstest{year}-ende-{name}.{lang}.sgm").write_text("\n".join(lines) + "\n",
                                                                       encoding="utf-8")


def write_corpus(out: Path, train_docs: int, valid_docs: int, test_docs: int, seed: int,
                 max_sentences: int = 9) -> None:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    write_nc_tsv(out / "news-commentary-v15.de-en.tsv",
                 [toy_document(rng, rng.randint(2, max_sentences)) for _ in range(train_docs)])
    write_sgm(out, 2018, [toy_document(rng, rng.randint(2, max_sentences)) for _ in range(valid_docs)])
    write_sgm(out, 2020, [toy_document(rng, rng.randint(2, max_sentences)) for _ in range(test_docs)])


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="fairseq-hier-doc-demo-corpus",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir", type=Path, help="where to write the published-layout files")
    p.add_argument("--train-docs", type=int, default=400, help="training documents")
    p.add_argument("--valid-docs", type=int, default=20, help="newstest2018 documents")
    p.add_argument("--test-docs", type=int, default=40, help="newstest2020 documents")
    p.add_argument("--max-sentences", type=int, default=9, help="most sentences of a document")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    args = p.parse_args(argv)
    write_corpus(args.out_dir, args.train_docs, args.valid_docs, args.test_docs, args.seed,
                 args.max_sentences)
    print(f"wrote {args.out_dir}: {args.train_docs} training, {args.valid_docs} validation and "
          f"{args.test_docs} test documents")
    return 0


if __name__ == "__main__":
    sys.exit(cli_main())
