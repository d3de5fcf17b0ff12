"""Detokenised hypotheses (fairseq-generate --post-process sentencepiece, one per line, in
example order) -> ROUGE input, normalised as the converter normalises the references
(``Converter.reference``: lowercase, sentences split at the target's sentence piece ``<Q>`` and
joined by " <q> ", so that `rouge -e "<q>"` splits them for summary-level ROUGE-L).

``<unk>`` (fairseq's unknown word, printed for pieces outside the dictionary and for the
sentencepiece model's own ``<unk>`` piece) is written ``UNK``, as hiersumm does
(nlpyang/hiersumm, src/abstractive/predictor_builder.py, ``Translator.translate``:
``pred_str = ...replace('<unk>', 'UNK')``): ROUGE-1.5.5 reads a sentence only up to its first
``<``, so a kept ``<unk>`` would silently cut the rest of its sentence from the score.
An empty hypothesis stays an empty line (scored 0 by ``rouge -zs``, never dropped).

    python examples/wikisum/postprocess.py < test.hyp.raw > test.hyp
"""

import sys

from fairseq_hier.preparation.wikisum import Converter

UNK = "UNK"  # hiersumm's replacement of "<unk>"


def hypothesis(line: str) -> str:
    """One detokenised hypothesis -> the ROUGE input line."""
    return Converter.reference(line).replace("<unk>", UNK)


if __name__ == "__main__":
    for line in sys.stdin:
        print(hypothesis(line))
