"""Data: fairseq datasets and collaters (each batch key listed with its shape) and the file formats
our commands write and our tasks read (published layouts are read by :mod:`fairseq_hier.readers`).

Datasets (``hierarchical_dataset``, ``sentence_dataset``, ``ranking_dataset``,
``attention_prediction_dataset`` with its label files, ``sized_dataset``), file formats
(``dependency_codes``, ``paragraph_graph``, ``chunk_map``, ``bpe_codes``,
``preprocessing_record``, ``bart_files``, ``shards``); the full list: docs/design.md,
section fairseq_hier.data.

May import: :mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`, numpy, torch and fairseq (the
datasets), the text tools a reader wraps inside the functions that need them. Never a package
above it (models, tasks, generation, the domain packages, :mod:`fairseq_hier.cli`).
"""
