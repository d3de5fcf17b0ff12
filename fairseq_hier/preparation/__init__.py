"""Preparation of training data from published layouts and raw text, one module per step:

- summarisation: WikiSum shards (:mod:`~.wikisum`), Multi-News and WCEP (:mod:`~.mds`), the
  BOS-marked GPT-2 BPE lines of HAT's layouts (:mod:`~.sentence_bos`), the spaCy dependency
  parse (:mod:`~.parse`) and its projection onto subword pieces (:mod:`~.dependencies`),
  sentencepiece training and encoding with the paragraph separators kept (:mod:`~.spm`), the
  paragraph graphs (:mod:`~.graphs`), the paragraph ranker's labels and the line readers the
  ranking steps share (:mod:`~.rank_labels`), the attention-alignment labels extracted from a
  trained model (:mod:`~.attention_labels`), and the PTB tokenisation before ROUGE
  (:mod:`~.ptb_tokenize`);
- document translation: the documents of a split read from the WMT/IWSLT layouts
  (:mod:`~.documents`), tokenised (:mod:`~.doc_tokenize`), and BPE'd and chunked
  (:mod:`~.doc_chunk`).

May import: :mod:`fairseq_hier.data` (file formats, readers, graphs), :mod:`fairseq_hier.io`,
:mod:`fairseq_hier.errors`, and the tools each step wraps (spaCy, sentencepiece, fastBPE, Moses,
pysbd/NLTK, torch, fairseq), the heavy ones inside the functions that need them, so that a
command's ``--help`` stays light; :mod:`~.attention_labels` alone imports torch at its top (only
the commands that run a model import it). Never :mod:`fairseq_hier.cli`.
"""
