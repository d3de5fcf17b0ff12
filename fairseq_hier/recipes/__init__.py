"""The papers' training and decoding settings, per architecture, scaled to a user's data set and
GPU count (``fairseq-hier settings``, called by the recipe ``examples/own_data/``).

May import: ``errors`` and the standard library; torch inside the one function that counts GPUs.
"""
