"""fairseq-hier: hierarchical Transformers for long and multi-document inputs.

Load with ``--user-dir path/to/fairseq_hier`` or, after ``pip install -e .``, with the path
``python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))'`` prints.
:func:`register` applies :mod:`fairseq_hier.compat`'s fixes and registers our tasks, models,
architectures and criterions with fairseq, once, as soon as fairseq is in the process (the
import hook :class:`_RegisterWithFairseq`). Importing this package is light: the standard
library only, so the scoring commands start without torch or fairseq; without fairseq it raises
:class:`FairseqMissing`. What it registers and when: docs/models.md, section fairseq_hier.
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
