"""The commands: one module per command ``fairseq-hier NAME`` (``NAME.py``, a family's subcommands
in its module), each of which parses its arguments, calls the library and prints, through
:func:`fairseq_hier.cli.common.run_command` (one-line errors, atomic outputs); :mod:`~.main` is
the front command ``fairseq-hier COMMAND``, :mod:`~.aliases` the old command names.

May import: every package of ``fairseq_hier``. Nothing outside this package imports it.
"""
