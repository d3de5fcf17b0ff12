"""fairseq-hier: hierarchical Transformers for long and multi-document inputs.

Load with ``--user-dir path/to/fairseq_hier`` or after ``pip install -e .`` with
``--user-dir $(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')``.
Registration (:func:`register`) applies the fixes of :mod:`fairseq_hier.compat` and registers, by
name:

- task ``hierarchical_summarization`` (fairseq_hier/tasks/hierarchical_summarization.py)
- models/architectures ``pht``, ``pht_1layer``, ``vht``, ``vht_1layer``
  (fairseq_hier/models/hierarchical_transformer.py)
- task ``attention_prediction`` (fairseq_hier/tasks/attention_prediction.py), model/architecture
  ``attention_predictor`` (fairseq_hier/models/attention_predictor.py) and criterion
  ``attention_mse`` (fairseq_hier/criterions/attention_mse.py): the attention-prediction model of
  attention alignment (001 Sec. 4.2.1)
- models/architectures ``hat`` (``hat_bart_large``, ``hat_bart_base``), ``long_bart``
  (``long_bart_large``, ``long_bart_base``), ``hat_transformer`` (``hat_transformer_wmt_en_de``,
  ``hat_transformer_iwslt_zh_en``) (fairseq_hier/models/hat.py) and task ``hat_summarization``
  (fairseq_hier/tasks/hat_summarization.py): HAT, paper 004
- model/architecture ``liu_ht`` (fairseq_hier/models/liu_ht.py): Liu & Lapata's Hierarchical
  Transformer (002), local and global layers, graph-informed attention with the task's
  ``--paragraph-graph`` (graphs written by ``fairseq-hier-graph``, fairseq_hier/data/graphs.py)
- task ``paragraph_ranking`` (fairseq_hier/tasks/paragraph_ranking.py), model/architecture
  ``paragraph_ranker`` (fairseq_hier/models/paragraph_ranker.py) and criterion
  ``paragraph_ranking`` (fairseq_hier/criterions/paragraph_ranking.py): Liu & Lapata's learned
  paragraph ranker (002 Sec. 3.1)
- models/architectures ``parsingsum_ft`` and ``parsingsum_ht`` (fairseq_hier/models/parsingsum.py):
  ParsingSum's linguistic-guided attention (003), reading the dependency parse that the task's
  ``--dependency-parse`` loads (written by ``fairseq-hier-parse`` and ``fairseq-hier-deps``,
  fairseq_hier/data/dependency.py)

When registration happens. Importing this package itself is light (standard library only), so
that the scoring commands (``rouge``, ``fairseq-hier-lead``, ``fairseq-hier-hypotheses``, and
``fairseq-hier-wikisum-to-raw``, which needs torch but not fairseq) start in well under a second
instead of paying ~4 s for fairseq and torch. Registration then happens exactly once, as soon
as fairseq is (or becomes) part of the process:

- ``--user-dir``: fairseq's ``utils.import_user_module`` imports this package after fairseq, so
  the import registers everything at once (then fairseq imports ``tasks/`` and ``models/``
  again, which is a no-op);
- a Python user who has imported fairseq first: ``import fairseq_hier`` registers;
- ``import fairseq_hier`` before fairseq: a light import hook (:class:`_RegisterWithFairseq`)
  registers right after fairseq's own package has been imported, or, when fairseq is imported
  by one of our modules (``from fairseq_hier.models... import ...``), right after that
  subpackage of ours has been imported (never in the middle of it, which would be circular);
- explicitly: ``fairseq_hier.register()`` (idempotent), e.g. to fail early if fairseq is missing.

Without fairseq. fairseq-fixed is not a declared dependency (its torchaudio pin would pull a
second torch): ``scripts/install.sh`` installs it with ``--no-deps``. Where it is missing,
``import fairseq_hier`` raises :class:`FairseqMissing`, whose one line names that install step;
uncaught, it prints that line alone (:func:`fairseq_hier.errors.install_excepthook`), so every
command of ours says so instead of failing later. Only fairseq's package is looked for, not
imported: the import stays light.
"""

import importlib.abc
import importlib.util
import sys

from .errors import HierError, install_excepthook

__version__ = "0.1.0"
FAIRSEQ_MISSING = ("fairseq_hier needs fairseq-fixed 0.12.3.1, installed with --no-deps: run "
                   "scripts/install.sh (see README.md)")


class FairseqMissing(HierError, ModuleNotFoundError):
    """fairseq is not installed. A :class:`HierError` (commands print its one line) and a
    ``ModuleNotFoundError`` for ``fairseq`` (``except ImportError`` keeps working)."""

    def __init__(self):
        super().__init__(FAIRSEQ_MISSING)
        self.name = "fairseq"


def _fairseq_missing() -> FairseqMissing:
    """The error to raise, with the hook that prints it as one line if nothing catches it."""
    install_excepthook()
    return FairseqMissing()


# Our subpackages/modules that (may) import fairseq; the others (cli, io) stay light.
HEAVY = ("compat", "criterions", "data", "generation", "models", "modules", "tasks")
_HEAVY_NAMES = {f"{__name__}.{name}" for name in HEAVY}
_state = {"registered": False, "depth": 0}


def register() -> None:
    """Apply :func:`fairseq_hier.compat.apply_all` and register every task, model, architecture
    and criterion of this package with fairseq. Idempotent; imports fairseq (and torch)."""
    if _state["registered"]:
        return
    _state["registered"] = True
    _remove_hook()
    try:
        # torch and fairseq come in here, at registration, never with `import fairseq_hier`
        from . import compat

        compat.apply_all()
        install_excepthook()
        from . import criterions, models, tasks  # noqa: F401  (registration side effects)
    except ModuleNotFoundError as e:
        _state["registered"] = False
        if e.name == "fairseq" and not isinstance(e, FairseqMissing):
            raise _fairseq_missing() from None
        raise
    except BaseException:
        _state["registered"] = False
        raise


def is_registered() -> bool:
    """True once :func:`register` has run in this process."""
    return _state["registered"]


def _heavy_import_in_progress(done: str) -> bool:
    """True while one of our fairseq-importing modules other than ``done`` (executed, but still
    flagged by importlib until its loader returns) is half imported: registering then would
    import it again from inside itself."""
    return any(getattr(getattr(module, "__spec__", None), "_initializing", False)
               for name, module in list(sys.modules.items())
               if name != done and name.startswith(f"{__name__}.")
               and not name.startswith((f"{__name__}.cli", f"{__name__}.io")))


class _RegisteringLoader(importlib.abc.Loader):
    """Delegates to the real loader; registers once the outermost wrapped import is done."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):  # get_code, get_data, is_package, resource readers ...
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        _state["depth"] += 1
        try:
            self._loader.exec_module(module)
        finally:
            _state["depth"] -= 1
        if (_state["depth"] == 0 and not _state["registered"] and "fairseq" in sys.modules
                and not _heavy_import_in_progress(module.__name__)):
            register()


class _RegisterWithFairseq(importlib.abc.MetaPathFinder):
    """Import hook, installed only while fairseq is not imported: wraps the loaders of ``fairseq``
    and of our subpackages in :data:`HEAVY` so that :func:`register` runs after them."""

    def find_spec(self, fullname, path, target=None):
        if _state["registered"] or (fullname != "fairseq" and fullname not in _HEAVY_NAMES):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        if fullname == "fairseq":  # no finder has it: not installed
            raise _fairseq_missing()
        return None


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterWithFairseq)]


if "fairseq" not in sys.modules and importlib.util.find_spec("fairseq") is None:
    raise _fairseq_missing()
if "fairseq" in sys.modules:
    register()
elif not any(isinstance(f, _RegisterWithFairseq) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWithFairseq())
