"""Pretrained BART folders (``fairseq-hier bart``): a BART with random weights to try the HAT
recipes on a CPU (:mod:`~.bart`, ``bart random``), and a BART written in the other layout,
fairseq's release folder (``model.pt``, ``dict.txt``, ``encoder.json``, ``vocab.bpe``) <->
Hugging Face's (``config.json``, ``model.safetensors``, ``vocab.json``, ``merges.txt``)
(``bart convert``); the byte-level BPE vocabularies of both layouts (:mod:`~.gpt2_bpe`).

May import: :mod:`fairseq_hier.data` (BART's tokenizer files), :mod:`fairseq_hier.models`
(the key table of :mod:`~fairseq_hier.models.hf_bart`), :mod:`fairseq_hier.recipes` (the tiny
widths), :mod:`fairseq_hier.safe_loading`, :mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`,
``regex``; torch, safetensors and fairseq inside the functions that need them. Never
:mod:`fairseq_hier.cli`.
"""
