"""The one table of architectures (``architectures``: traits, the papers' training and decoding
settings, tiny test dimensions) and those settings scaled to a user's data set and GPU count
(``settings``: ``fairseq-hier settings``, the recipes of ``examples/``).

May import: ``errors`` and the standard library; torch inside the one function that counts GPUs,
fairseq inside those that parse options or look up names.
"""
