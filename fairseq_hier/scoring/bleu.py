"""Document-level BLEU and chrF of chunk translations put back into whole documents (paper 004
Sec. 4.2 and Table 7: "We translate each chunk separately and afterwards concatenate the
translated chunks to compute the BLEU score for the entire document").

Each side's stated post-processing (:class:`Postprocessing`), sacreBLEU's tokenizer choice and
the scores: docs/evaluation.md, section fairseq_hier.scoring.bleu. Imports ``data``, ``io``,
``errors``; sacreBLEU inside functions.
"""

import logging
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..data.bpe_codes import remove_bpe
from ..data.chunk_map import documents_of
from ..errors import HierError
from ..io import read_lines
from ..readers.documents import read_sentence_blocks
from ..text.tokenizers import base_language, choose_tokenizer, detokenizer

logger = logging.getLogger(__name__)

STRAY = ("<s>", "</s>")
# a side whose sentences the detokeniser changes this often is taken for tokenised text
TOKENISED_SHARE = 0.5


@dataclass
class Postprocessing:
    """What was done to one side's text before scoring, for the output."""

    steps: List[str] = field(default_factory=list)

    def describe(self) -> str:
        return "; ".join(self.steps) if self.steps else "as given"


def default_tokenize(tgt_lang: str) -> str:
    """sacreBLEU's tokenizer for a target language (module docstring): ``zh`` for Chinese,
    ``char`` for Japanese, else ``13a``."""
    return {"zh": "zh", "ja": "char"}.get(base_language(tgt_lang), "13a")


def tokenize_note(tgt_lang: str, tokenize: str) -> Optional[str]:
    """One line on the default tokenizer of a Japanese or Korean target (None otherwise, or when
    another tokenizer was asked for)."""
    base = base_language(tgt_lang)
    if base not in ("ja", "ko") or tokenize != default_tokenize(tgt_lang):
        return None
    if base == "ja":
        return ("Japanese target: sacreBLEU's char tokenizer (character BLEU: Japanese has no "
                "spaces between words, so 13a would score whole clauses as single words); "
                "sacreBLEU's ja-mecab, the WMT choice, needs pip install 'sacrebleu[ja]' and "
                "--tokenize ja-mecab")
    return ("Korean target: sacreBLEU's 13a tokenizer (words as written between spaces); "
            "sacreBLEU's ko-mecab, the WMT choice, needs pip install 'sacrebleu[ko]' and "
            "--tokenize ko-mecab")


def postprocess_hypotheses(chunks: Sequence[str], tgt_lang: str, detokenize: bool = True,
                           source: str = "the hypotheses", tokenizer: str = "auto",
                           tokenizer_origin: str = "") -> Tuple[List[str], Postprocessing]:
    """Chunk hypotheses as :mod:`fairseq_hier.scoring.bleu` describes them: BPE removed,
    stray ``<s>``/``</s>`` dropped, detokenised unless ``detokenize`` is False (the inverse of
    the target side's ``tokenizer`` choice; ``tokenizer_origin``, e.g. the record it was read
    from, is stated with it). Returns the texts and the steps taken (the number of dropped
    tokens among them)."""
    detok = detokenizer(tgt_lang, tokenizer) if detokenize else None
    stray, out = 0, []
    for h in chunks:
        tokens = remove_bpe(h).split()
        kept = [t for t in tokens if t not in STRAY]
        stray += len(tokens) - len(kept)
        text = " ".join(kept)
        out.append(detok(text) if detok is not None and kept else text)
    steps = ["BPE '@@ ' removed", f"{stray} stray {'/'.join(STRAY)} token(s) dropped"]
    if detokenize:
        origin = f"; target tokenizer {tokenizer} of {tokenizer_origin}" if tokenizer_origin else ""
        steps.append(f"detokenised ({detokenizer_name(tgt_lang, tokenizer)}{origin})")
    else:
        steps.append("not detokenised (--no-detokenize): tokens scored as given")
    if stray:
        logger.info(f"{source}: dropped {stray} stray {'/'.join(STRAY)} token(s)")
    return out, Postprocessing(steps)


def detokenizer_name(tgt_lang: str, tokenizer: str = "auto") -> str:
    return choose_tokenizer(tgt_lang, tokenizer).describe_detokenizer()


def reference_postprocessing(path: str) -> Postprocessing:
    return Postprocessing([f"as given in {path} (never altered)",
                           "a document = its sentences joined by a space"])


def tokenised_share(sentences: Sequence[str], tgt_lang: str, tokenizer: str = "auto") -> float:
    """The share of non-empty ``sentences`` that detokenisation would change: near 0 for raw
    text, high for tokenised text (every sentence ending in `` .`` changes); 0 for the
    ``none`` tokenizer, whose detokeniser changes nothing."""
    detok: Callable[[str], str] = detokenizer(tgt_lang, tokenizer)
    texts = [s for s in sentences if s.strip()]
    if not texts:
        return 0.0
    return sum(detok(s) != " ".join(s.split()) for s in texts) / len(texts)


def check_sides_alike(reference_sentences: Sequence[str], hypotheses: Sequence[str],
                      tgt_lang: str, detokenize: bool, ref_path: str,
                      tokenizer: str = "auto") -> List[str]:
    """Warnings (one line each) when the two sides do not look alike: tokenised references with
    detokenised hypotheses, or raw references with hypotheses scored as tokenised text."""
    ref_share = tokenised_share(reference_sentences, tgt_lang, tokenizer)
    warnings = []
    if detokenize and ref_share >= TOKENISED_SHARE:
        warnings.append(f"{ref_path} looks tokenised ({100 * ref_share:.0f}% of its sentences "
                        f"change under detokenisation) but the hypotheses were detokenised: "
                        f"score tokenised text on both sides with --no-detokenize (and "
                        f"--tokenize none for text tokenised beforehand)")
    elif not detokenize and ref_share < TOKENISED_SHARE:
        hyp_share = tokenised_share(hypotheses, tgt_lang, tokenizer)
        if hyp_share >= TOKENISED_SHARE:
            warnings.append(f"the hypotheses look tokenised ({100 * hyp_share:.0f}% of them "
                            f"change under detokenisation) but {ref_path} does not "
                            f"({100 * ref_share:.0f}%): drop --no-detokenize to detokenise the "
                            f"hypotheses")
    return warnings


class OncePerRun(logging.Filter):
    """A filter that lets each distinct message through once (for the life of the process: one
    run of a command)."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


def sacrebleu_messages_once() -> None:
    """Each message of sacreBLEU's logger once per run (module docstring); idempotent."""
    sacrelogger = logging.getLogger("sacrebleu")
    if not any(isinstance(f, OncePerRun) for f in sacrelogger.filters):
        sacrelogger.addFilter(OncePerRun())


def bleu_metric(tokenize: str, references: Optional[Sequence[Sequence[str]]] = None):
    """sacreBLEU's BLEU with the tokenizer ``tokenize`` (and the reference streams
    ``references``, tokenised once, as sacreBLEU's command passes them), its messages once per
    run."""
    from sacrebleu.metrics import BLEU  # lazy: only the BLEU paths load sacreBLEU

    sacrebleu_messages_once()
    return BLEU(tokenize=tokenize, references=references)


def metrics(tokenize: str):
    """sacreBLEU's BLEU (``tokenize``) and chrF (its defaults: chrF2, character 6-grams)."""
    from sacrebleu.metrics import CHRF  # lazy: only the BLEU paths load sacreBLEU

    return bleu_metric(tokenize), CHRF()


def corpus_scores(doc_hyps: Sequence[str], doc_refs: Sequence[str], chunk_hyps: Sequence[str],
                  chunk_refs: Sequence[str], tokenize: str) -> Tuple[Dict[str, float],
                                                                     Dict[str, str]]:
    """``({"doc_bleu", "chrf", "chunk_bleu"}, {"bleu": signature, "chrf": signature})`` of one
    system (documents and chunks in the same order as their references)."""
    bleu, chrf = metrics(tokenize)
    scores = {"doc_bleu": bleu.corpus_score(list(doc_hyps), [list(doc_refs)]).score,
              "chrf": chrf.corpus_score(list(doc_hyps), [list(doc_refs)]).score,
              "chunk_bleu": metrics(tokenize)[0].corpus_score(list(chunk_hyps),
                                                              [list(chunk_refs)]).score}
    return scores, {"bleu": str(bleu.get_signature()), "chrf": str(chrf.get_signature())}


def load_references(ref: str, docids_path: str, rows) -> Tuple[List[str], List[str],
                                                               List[str]]:
    """The reference of every document and of every chunk, checked against the chunk map
    (:func:`fairseq_hier.data.chunk_map.read_chunk_map`); also every reference sentence."""
    blocks, docids = read_sentence_blocks(ref), read_lines(docids_path)
    if len(blocks) != len(docids):
        raise HierError(f"{ref} has {len(blocks)} documents but {docids_path} names {len(docids)}")
    docs = documents_of(rows)
    if [d for d, _, _ in docs] != docids:
        first = next((i for i, (a, (b, _, _)) in enumerate(zip(docids, docs)) if a != b),
                     min(len(docs), len(docids)))
        raise HierError(f"the chunk map's documents differ from {docids_path} at document "
                        f"{first + 1} ({len(docs)} vs {len(docids)} documents): is it the map of "
                        f"this split?")
    for (docid, _, n), block in zip(docs, blocks):
        if n != len(block):
            raise HierError(f"document {docid!r}: {len(block)} reference sentences in {ref}, "
                            f"{n} in the chunk map")
    doc_refs = [" ".join(b) for b in blocks]
    by_doc = dict(zip(docids, blocks))
    chunk_refs = [" ".join(by_doc[r.docid][r.first:r.last + 1]) for r in rows]
    return doc_refs, chunk_refs, [s for b in blocks for s in b]
