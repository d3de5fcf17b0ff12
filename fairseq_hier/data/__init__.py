"""Data: fairseq datasets and collaters (each batch key listed with its shape), the file formats
our commands write and our tasks read, and the readers of published layouts.

- datasets: ranked paragraphs -> summary (:mod:`~.hierarchical_dataset`, split by
  :mod:`~.paragraphs`), sentence-BOS sources with their sidecar files (:mod:`~.sentence_dataset`),
  the paragraph ranker's and the attention predictor's examples (:mod:`~.ranking_dataset`,
  :mod:`~.attention_prediction_dataset`, :mod:`~.sized_dataset`);
- file formats: dependency parses (:mod:`~.dependency`), paragraph graphs
  (:mod:`~.paragraph_graph`, built by :mod:`~.graphs`), attention-alignment labels
  (:mod:`~.attention_labels`), document chunks and their map (:mod:`~.doc_chunks`), parallel
  documents (:mod:`~.documents`), the preprocessing record of a data-bin
  (:mod:`~.preprocessing_record`), BART's tokenizer files (:mod:`~.bart_files`), shards of a
  preparation step and the data-bin folder an epoch reads (:mod:`~.shards`);
- readers of published layouts: HAT's summarisation sets (:mod:`~.readers`, with the sentence BOS
  encoder of :mod:`~.sentence_bos`), Multi-News and WCEP (:mod:`~.mds_readers`), WMT and IWSLT
  documents (:mod:`~.doc_readers`); summary markup (:mod:`~.markup`) and the ranker's ROUGE
  recall (:mod:`~.rouge_ngrams`).

May import: :mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`, numpy, torch and fairseq (the
datasets), the text tools a reader wraps inside the functions that need them. Never a package
above it (models, tasks, generation, the domain packages, :mod:`fairseq_hier.cli`).
"""
