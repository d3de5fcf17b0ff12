"""Side-by-side measurements (not tests), one script per question, printed as tables and ratios,
the last line one JSON object; what each measures and how: docs/benchmarks.md. The parts they
share live in ``benchmarks/harness.py``. Run one as a script from anywhere
(``python benchmarks/training_cost.py``): its first lines put the repository root first on
``sys.path``, so that ``benchmarks`` is this package (pysbd installs a top-level ``benchmarks``
package of its own). Benchmarks may import ``fairseq_hier`` (not its ``cli``) and each other.
"""
