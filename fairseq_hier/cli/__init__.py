"""The commands: one module per console script (``fairseq-hier-NAME``), each of which parses its
arguments, calls the library and prints, through :func:`fairseq_hier.cli.common.run_command`
(one-line errors, atomic outputs); :mod:`~.main` is the front command ``fairseq-hier COMMAND``.

May import: every package of ``fairseq_hier``. Nothing outside this package imports it.
"""
