"""Convert ranked WikiSum (Liu & Lapata 2019, nlpyang/hiersumm) to fairseq-hier's raw format.

Input, exactly as published: ``<prefix>.{train,valid,test}.N.pt`` shards (falling back to
``<prefix>.<split>.pt``), each a ``torch.save``d list of dicts with ``src`` (ranked paragraphs,
each a list of sentencepiece ids), ``tgt`` (target ids) and ``tgt_str`` (gold text), ids from
their 32k sentencepiece model ``spm9998_3.model`` (shipped with the data).

Output in ``--out-dir``:
    {split}.src   title <P> paragraph 1 <P> paragraph 2 ...   (sentencepiece pieces)
    {split}.tgt   target pieces, without <S>/</S>, with <Q> between sentences
    {split}.ref   gold text for ROUGE: lowercased, <t>/</t> removed, sentences split by " <q> "
    dict.txt      fairseq dictionary of every piece of the model (for --srcdict)

Title placement follows the papers: the title (the pieces of paragraph 0 before ``<T>``) is the
first segment; the task concatenates it before the first paragraph (000 Sec. 4.3). Every
paragraph that repeats the ``title <T>`` prefix has it stripped (counted). Pieces equal to the
paragraph separator inside a paragraph, empty paragraphs, and examples left with no paragraph or
an empty target are dropped and counted; nothing is dropped silently.

    fairseq-hier-wikisum-to-raw --data-prefix ranked_abs3_fast_b40/WIKI --spm spm9998_3.model \
        --out-dir wikisum_raw
"""

import argparse
import glob
import logging
import os
import re
from collections import Counter

import torch
from tqdm import tqdm

logger = logging.getLogger("fairseq_hier.wikisum_to_raw")
SPLITS = ("train", "valid", "test")
FAIRSEQ_SPECIALS = {"<unk>", "<s>", "</s>", "<pad>"}


def shard_paths(prefix, split):
    """The loader's glob of hiersumm (data_loader.load_dataset), numerically sorted."""
    paths = glob.glob(f"{prefix}.{split}.[0-9]*.pt")
    paths.sort(key=lambda p: int(re.search(r"\.(\d+)\.pt$", p).group(1)))
    if not paths and os.path.exists(f"{prefix}.{split}.pt"):
        paths = [f"{prefix}.{split}.pt"]
    return paths


class Converter:
    """Stateful converter: piece ids of the special symbols and the counts it logs."""

    def __init__(self, spm_path, separator="<P>"):
        import sentencepiece as spm

        self.sp = spm.SentencePieceProcessor(model_file=spm_path)
        self.separator = separator
        ids = {p: self.sp.piece_to_id(p) for p in ("<T>", "<S>", "</S>", "<P>", "<Q>")}
        missing = [p for p, i in ids.items() if self.sp.id_to_piece(i) != p]
        if missing:
            raise ValueError(f"{spm_path}: sentencepiece model lacks the special pieces {missing}; "
                             f"is it hiersumm's spm9998_3.model?")
        self.eot, self.bos, self.eos = ids["<T>"], ids["<S>"], ids["</S>"]
        self.sep_id = self.sp.piece_to_id(separator)
        self.counts = Counter()

    def pieces(self, ids):
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def source(self, src):
        """list of paragraphs (id lists) -> (title pieces, list of paragraph piece lists)."""
        title = []
        if src and self.eot in src[0]:
            title = list(src[0][: src[0].index(self.eot)])
        else:
            self.counts["examples without a title (<T>)"] += 1
        prefix = title + [self.eot]
        paragraphs = []
        for para in src:
            para = list(para)
            if title and para[: len(prefix)] == prefix:
                para = para[len(prefix):]
                self.counts["title prefixes stripped from paragraphs"] += 1
            inside = sum(1 for i in para if i == self.sep_id)
            if inside:
                self.counts[f"{self.separator} pieces removed inside paragraphs"] += inside
                para = [i for i in para if i != self.sep_id]
            if not para:
                self.counts["empty paragraphs dropped"] += 1
                continue
            paragraphs.append(self.pieces(para))
        return self.pieces(title), paragraphs

    def target(self, tgt):
        tgt = list(tgt)
        if tgt and tgt[0] == self.bos:
            tgt = tgt[1:]
        if tgt and tgt[-1] == self.eos:
            tgt = tgt[:-1]
        return self.pieces(tgt)

    @staticmethod
    def reference(tgt_str):
        """hiersumm's test-time normalisation, sentences kept apart for ROUGE-L."""
        text = tgt_str.lower().replace("<t>", " ").replace("</t>", " ")
        sentences = [" ".join(s.split()) for s in re.split(r"<q>", text)]
        return " <q> ".join(s for s in sentences if s)

    def convert_split(self, prefix, split, out_dir):
        paths = shard_paths(prefix, split)
        if not paths:
            raise FileNotFoundError(f"no shards {prefix}.{split}.N.pt (nor {prefix}.{split}.pt)")
        written = 0
        names = [os.path.join(out_dir, f"{split}.{ext}") for ext in ("src", "tgt", "ref")]
        with open(names[0], "w") as fs, open(names[1], "w") as ft, open(names[2], "w") as fr:
            for path in tqdm(paths, desc=f"{split} shards", unit="shard"):
                for k, ex in enumerate(load_shard(path)):
                    where = f"{path} example {k}"
                    title, paragraphs = self.source(ex["src"])
                    target = self.target(ex["tgt"])
                    if not paragraphs:
                        self.counts["examples skipped: no paragraph"] += 1
                        logger.warning(f"{where}: no non-empty paragraph, skipped")
                        continue
                    if not target:
                        self.counts["examples skipped: empty target"] += 1
                        logger.warning(f"{where}: empty target, skipped")
                        continue
                    segments = [" ".join(title)] + [" ".join(p) for p in paragraphs]
                    fs.write(f" {self.separator} ".join(segments).strip() + "\n")
                    ft.write(" ".join(target) + "\n")
                    fr.write(self.reference(ex.get("tgt_str", "")) + "\n")
                    written += 1
        logger.info(f"[{split}] {written} examples written from {len(paths)} shard(s)")
        return written

    def write_dict(self, path):
        """Every piece of the model (minus fairseq's own specials) as a fairseq dictionary."""
        n = self.sp.get_piece_size()
        with open(path, "w") as f:
            for i in range(n):
                piece = self.sp.id_to_piece(i)
                if piece not in FAIRSEQ_SPECIALS:
                    f.write(f"{piece} {n - i}\n")


def load_shard(path):
    """A hiersumm shard: a list of dicts with src/tgt/tgt_str (plain Python containers)."""
    try:
        data = torch.load(path, weights_only=True)
    except Exception as e:  # noqa: BLE001 - re-raised with the file named
        raise ValueError(f"{path}: not a hiersumm shard readable with torch.load: {e}") from e
    if not isinstance(data, list) or (data and not {"src", "tgt"} <= set(data[0])):
        raise ValueError(f"{path}: expected a list of dicts with 'src', 'tgt', 'tgt_str'")
    return data


def cli_main(argv=None):
    logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                        level=logging.INFO)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-prefix", required=True, help="e.g. ranked_abs3_fast_b40/WIKI")
    parser.add_argument("--spm", required=True, help="hiersumm's spm9998_3.model")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--splits", nargs="+", default=list(SPLITS))
    parser.add_argument("--paragraph-separator", default="<P>")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    conv = Converter(args.spm, args.paragraph_separator)
    for split in args.splits:
        conv.convert_split(args.data_prefix, split, args.out_dir)
    conv.write_dict(os.path.join(args.out_dir, "dict.txt"))
    for what, n in sorted(conv.counts.items()):
        logger.info(f"{what}: {n}")


if __name__ == "__main__":
    cli_main()
