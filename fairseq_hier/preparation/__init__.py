"""Preparation of training data, one module per step, its algorithm and its runner together:

- summarisation: WikiSum shards (:mod:`~.wikisum`), Multi-News and WCEP (:mod:`~.mds`), your own
  JSON lines (:mod:`~.own_data`), HAT's BOS-marked lines (:mod:`~.sentence_bos`), the spaCy parse
  (:mod:`~.parse`) and its projection onto subword pieces (:mod:`~.dependencies`), sentencepiece
  (:mod:`~.spm`), paragraph graphs (:mod:`~.graphs`), ranking labels (:mod:`~.rank_labels`),
  attention-alignment labels (:mod:`~.attention_labels`), PTB tokenisation (:mod:`~.ptb_tokenize`);
- document translation: extraction (:mod:`~.doc_extract`), tokenisation (:mod:`~.doc_tokenize`),
  BPE and chunking (:mod:`~.doc_chunk`).

May import: ``readers``, ``text``, ``data``, ``io``, ``workers``, ``errors``, ``safe_loading``,
and the tools each step wraps (spaCy, sentencepiece, fastBPE, Moses, pysbd, torch, fairseq), the
heavy ones inside the functions that need them. Never ``cli``.
"""
