"""Attention primitives shared by the papers' models, with explicit typed arguments (never a
whole config): word attention inside every paragraph (:mod:`~.paragraph_attention`), multi-head
pooling (:mod:`~.multihead_pooling`), the ranking encoding (:mod:`~.rank_encoding`), the decoder
layers of PHT and VHT (:mod:`~.hierarchical_decoder_layer`), the one masking rule
(:mod:`~.masking`), OpenNMT's LayerNorm (:mod:`~.opennmt_layer_norm`) and recomputation in the
backward pass (:mod:`~.recompute`).

May import: torch, fairseq and :mod:`fairseq_hier.errors`. Nothing else of ours.
"""
