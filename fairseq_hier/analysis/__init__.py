"""Analyses of trained systems: fairseq-generate logs, document BLEU and chrF, significance
tests, attention cosine, efficiency."""
