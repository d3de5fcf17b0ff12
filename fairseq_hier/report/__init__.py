"""The run report: one self-contained HTML page (and a Markdown copy) per set of trained systems.

Modules: ``inputs`` (a RUN_DIR), ``logs`` (training curves), ``scores`` (the table and its
marks), ``figures`` and ``sentence_heatmap`` (images), ``sections`` and ``render`` (HTML and
Markdown). The RUN_DIR and the reading order: docs/evaluation.md, section fairseq_hier.report.

May import: :mod:`fairseq_hier.scoring`, :mod:`fairseq_hier.analysis`, :mod:`fairseq_hier.data`,
:mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`. Importing this package is light: matplotlib,
numpy and sacreBLEU are imported when a figure is drawn or scores are computed. Never
:mod:`fairseq_hier.cli`.
"""
