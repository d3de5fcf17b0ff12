"""Analyses of trained systems: significance tests, attention cosine, efficiency (issue 14)."""
