"""Analyses of trained systems: document BLEU and chrF, significance tests, attention cosine,
efficiency."""
