"""``--finetune-from-model DIR`` / ``--restore-file DIR``: ``Trainer.load_checkpoint`` of a
directory reads it through the model's ``checkpoint_from_directory`` hook (a Hugging Face BART
directory for the HAT and long_bart models), a directory for any other model is a one-line error.
Why and how: docs/fairseq-fixes.md, section "Pretrained directories". Imports ``errors``;
fairseq.
"""

import contextlib
import os
import types

from ..errors import HierError


class _ModuleProxy(types.ModuleType):
    """A module as seen by one other module: identical, except the attributes given."""

    def __init__(self, module, **overrides):
        super().__init__(module.__name__)
        self._module = module
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self._module, name)


class _PathsWithDirectory:
    """fairseq's ``PathManager`` for which one directory is a file."""

    def __init__(self, paths, directory: str):
        self._paths, self._directory = paths, directory

    def __getattr__(self, name):
        return getattr(self._paths, name)

    def isfile(self, path) -> bool:
        return path == self._directory or self._paths.isfile(path)


@contextlib.contextmanager
def _directory_as_checkpoint(directory: str, read):
    """While active, ``fairseq.trainer`` loads ``directory`` as a checkpoint file holding
    ``read()`` (called only where the Trainer reads the file)."""
    from unittest import mock

    from fairseq import trainer as trainer_module

    checkpoint_utils = trainer_module.checkpoint_utils
    original = checkpoint_utils.load_checkpoint_to_cpu

    def load_checkpoint_to_cpu(path, *args, **kwargs):
        return read() if path == directory else original(path, *args, **kwargs)

    utils = _ModuleProxy(checkpoint_utils, load_checkpoint_to_cpu=load_checkpoint_to_cpu)
    paths = _PathsWithDirectory(trainer_module.PathManager, directory)
    with mock.patch.object(trainer_module, "checkpoint_utils", utils), \
            mock.patch.object(trainer_module, "PathManager", paths):
        yield


def patch_directory_checkpoints() -> None:
    """``Trainer.load_checkpoint`` of a directory reads it through the model's
    ``checkpoint_from_directory`` hook (docs/fairseq-fixes.md). Idempotent."""
    from fairseq.trainer import Trainer

    original = Trainer.load_checkpoint
    if getattr(original, "_fairseq_hier", False):
        return

    def load_checkpoint(self, filename, *args, **kwargs):
        if not os.path.isdir(filename):
            return original(self, filename, *args, **kwargs)
        model = self.get_model()
        read = getattr(model, "checkpoint_from_directory", None)
        if read is None:
            raise HierError(f"{filename} is a directory, and {type(model).__name__} reads "
                            f"checkpoint files only (Hugging Face BART directories initialise "
                            f"the hat and long_bart models)")
        with _directory_as_checkpoint(filename, lambda: read(filename)):
            return original(self, filename, *args, **kwargs)

    load_checkpoint._fairseq_hier = True
    load_checkpoint.__doc__ = original.__doc__
    Trainer.load_checkpoint = load_checkpoint
