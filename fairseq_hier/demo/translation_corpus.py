"""A made-up English-German corpus of documents in the published WMT20 layouts, for the
document-translation demo and tests (deterministic per seed; ``fairseq-hier-demo doc-corpus``
lists the files).

The language: a closed lexicon translated word by word, plus one document-level phenomenon: every
document is about one noun (its first sentence names it), and later sentences say "it", which
German renders by that noun's gender (er / sie / es), so a sentence seen alone is ambiguous and
its chunk (which holds the noun's sentence unless the document was cut before) settles it.

May import: ``io`` and the standard library.
"""

import random
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from fairseq_hier.io import atomic_outputs, write_text

NC_TSV = "news-commentary-v15.de-en.tsv"

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


def nc_tsv_text(docs: Sequence[Doc]) -> str:
    """News Commentary v15 layout: ``de<TAB>en`` lines, an empty line between documents."""
    return "\n\n".join("\n".join(f"{d}\t{e}" for e, d in zip(src, tgt))
                       for src, tgt in docs) + "\n"


def sgm_texts(year: int, docs: Sequence[Doc]) -> Dict[str, str]:
    """WMT newstest fake SGML: ``newstestYYYY-ende-src.en.sgm`` and ``-ref.de.sgm``, by name."""
    texts = {}
    for side, name, lang in ((0, "src", "en"), (1, "ref", "de")):
        head = (f'<srcset setid="newstest{year}" srclang="any">' if side == 0 else
                f'<refset setid="newstest{year}" srclang="any" trglang="de">')
        lines = [head]
        for k, doc in enumerate(docs):
            lines += [f'<doc sysid="ref" docid="story{year}.{k}" genre="news" origlang="en">', "<p>"]
            lines += [f'<seg id="{i + 1}">{s}</seg>' for i, s in enumerate(doc[side])]
            lines += ["</p>", "</doc>"]
        lines.append("</srcset>" if side == 0 else "</refset>")
        texts[f"newstest{year}-ende-{name}.{lang}.sgm"] = "\n".join(lines) + "\n"
    return texts


def write_files(folder: Path, texts: Dict[str, str]) -> None:
    """``folder/NAME`` for each text, written together or not at all."""
    with atomic_outputs([Path(folder) / name for name in texts]) as files:
        for f, text in zip(files, texts.values()):
            f.write(text)


def write_nc_tsv(path: Path, docs: Sequence[Doc]) -> None:
    write_text(path, nc_tsv_text(docs))


def write_sgm(folder: Path, year: int, docs: Sequence[Doc]) -> None:
    write_files(folder, sgm_texts(year, docs))


def write_corpus(out: Path, train_docs: int, valid_docs: int, test_docs: int, seed: int,
                 max_sentences: int = 9) -> None:
    """The five files of the corpus, written together or not at all."""
    rng = random.Random(seed)
    texts = {NC_TSV: nc_tsv_text([toy_document(rng, rng.randint(2, max_sentences))
                                  for _ in range(train_docs)])}
    for year, n in ((2018, valid_docs), (2020, test_docs)):
        texts.update(sgm_texts(year, [toy_document(rng, rng.randint(2, max_sentences))
                                      for _ in range(n)]))
    write_files(out, texts)
