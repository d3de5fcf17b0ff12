"""The run-folder step: a trained checkpoint decoded into its run folder, then scored by the
evaluation of the paper a recipe follows.

- ``decode``: fairseq-generate on a data-bin's split -> ``generate-SUBSET.txt``, the hypotheses
  in example order (``SUBSET.hyp.raw``), what was decoded (``SUBSET.decode.json``), ``run.json``;
- ``protocols``: the papers' evaluations, one entry each (their normalisations, one function
  each, and their ROUGE runs);
- ``score``: a protocol (or document BLEU) on a decoded run folder -> ``SUBSET.hyp``,
  ``SUBSET.ref``, the score reports.

Specification: docs/run-folder.md. May import ``analysis``, ``inference``, ``preparation``,
``readers``, ``recipes``, ``report``, ``scoring``, ``io``, ``errors``; fairseq inside functions.
"""
