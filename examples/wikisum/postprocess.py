"""Detokenised hypotheses (fairseq-generate --post-process sentencepiece) -> ROUGE input, with
the normalisation the converter applies to the references (lowercase, <t>/</t> removed, the
sentence marker <Q> written as " <q> "), so `rouge -e "<q>"` splits sentences for ROUGE-L."""

import sys

from fairseq_hier.cli.wikisum_to_raw import Converter

if __name__ == "__main__":
    for line in sys.stdin:
        print(Converter.reference(line))
