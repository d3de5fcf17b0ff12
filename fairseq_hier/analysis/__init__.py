"""Analyses of trained systems: fairseq-generate logs, attention cosine, efficiency. Scores and
their significance tests live in :mod:`fairseq_hier.scoring`."""
