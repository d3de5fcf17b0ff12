"""Readers of the published data layouts: each turns a layout, exactly as its publisher ships
it, into records, with file and line in every error (one line, :class:`.lines.ReaderError`).

- :mod:`.lines`: numbered text lines (gzip or not), line counts, JSON lines and JSON checks;
- the HAT summarization layouts: :mod:`.cohan` (arXiv, PubMed), :mod:`.cnndm` (CNN/DM and
  XSum source/target, PreSumm's shards), :mod:`.samsum`, :mod:`.qmsum` (AMI, ICSI, fillers),
  what they share (:mod:`.records`) and their registry (:mod:`.layouts`);
- :mod:`.mds` (Multi-News, WCEP), :mod:`.own_data` (your own JSON lines), :mod:`.markup`
  (``<t>``, ``<q>`` and other markup in summaries);
- :mod:`.documents` (parallel documents, our raw layout) and :mod:`.doc_mt` (WMT and IWSLT).

The layouts are specified in docs/data-formats.md. May import :mod:`fairseq_hier.errors`,
:mod:`fairseq_hier.io` and the standard library (pysbd inside a function): no torch, numpy or
fairseq, so that the commands that convert data start in well under a second.
"""
