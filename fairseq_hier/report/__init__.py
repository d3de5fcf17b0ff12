"""The run report: one self-contained HTML page (and a Markdown copy) per set of trained systems.

    fairseq-hier-report demo_work/checkpoints/transformer demo_work/checkpoints/pht \\
        --output-dir demo_work/report

Modules, in reading order:
  inputs.py   a RUN_DIR (see below): its run.json, hypotheses, references, score reports,
              efficiency.json, attention.json
  logs.py     fairseq-train's log (``--log-format simple`` or ``json``) -> training curves
  scores.py   ROUGE / document-BLEU table with intervals and paired-bootstrap significance marks
  figures.py  matplotlib (Agg, no pyplot) curves and heatmaps -> PNG bytes
  sentence_heatmap.py  HAT's sentence attention from fairseq-generate's A- lines, and its figure
  sections.py the report as a list of neutral blocks (headings, notes, tables, images)
  render.py   blocks -> HTML (images inlined as data: URIs) and Markdown (images as files)

A RUN_DIR is one trained system, the folder every recipe writes (fairseq-train's
``--save-dir``): ``run.json`` ({"name", "arch", "task", "metric"}), ``train.log``,
``SUBSET.hyp`` or ``generate-SUBSET.txt``, the references used (``SUBSET.ref``, and
``SUBSET.refs.jsonl`` when an example has several), ``SUBSET.docs`` (document MT), the recipe's
``SUBSET.rouge.txt`` / ``SUBSET.bleu.txt``, optionally ``efficiency.json`` and ``attention.json``
(the list and schemas: :mod:`fairseq_hier.report.inputs`).

May import: :mod:`fairseq_hier.scoring`, :mod:`fairseq_hier.analysis`, :mod:`fairseq_hier.data`,
:mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`. Importing this package is light: matplotlib,
numpy and sacreBLEU are imported when a figure is drawn or scores are computed. Never
:mod:`fairseq_hier.cli`.
"""
