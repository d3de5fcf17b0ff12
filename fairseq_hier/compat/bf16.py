"""``--bf16`` as bfloat16 on the current device (CUDA or CPU), not TPU mode: fairseq's argument
parsing keeps ``--tpu`` off unless asked for, the Trainer logs the dtype it trains in, and
fairseq-generate, -validate and -interactive load their models in bfloat16. Why:
docs/fairseq-fixes.md, section "--bf16". Imports torch and fairseq.
"""

import contextlib
import importlib
import logging
import sys

import torch

logger = logging.getLogger("fairseq_hier.compat")  # the log lines name the package

_INFERENCE_CLIS = ("fairseq_cli.generate", "fairseq_cli.validate", "fairseq_cli.interactive")
_ORIGINAL_MAINS = {}


def _tpu_requested(input_args) -> bool:
    """Whether ``--tpu`` itself is on the command line (fairseq's parser takes no abbreviations)."""
    argv = sys.argv[1:] if input_args is None else input_args
    return any(str(arg) == "--tpu" for arg in argv)


def _wants_bf16(cfg) -> bool:
    """``--bf16`` (or ``--memory-efficient-bf16``) without ``--fp16`` / ``--tpu``, from a
    FairseqConfig or an argparse Namespace."""
    common = getattr(cfg, "common", cfg)
    return (bool(getattr(common, "bf16", False) or getattr(common, "memory_efficient_bf16", False))
            and not getattr(common, "fp16", False) and not getattr(common, "tpu", False))


@contextlib.contextmanager
def _models_loaded_in_bf16():
    """While active, the models fairseq's ``checkpoint_utils.load_model_ensemble(_and_task)``
    return are cast to bfloat16 (``load_model_ensemble`` calls the other one)."""
    from fairseq import checkpoint_utils

    original = checkpoint_utils.load_model_ensemble_and_task

    def load_model_ensemble_and_task(*args, **kwargs):
        models, cfg, task = original(*args, **kwargs)
        models = [model.to(dtype=torch.bfloat16) for model in models]
        dtypes = sorted({str(p.dtype) for model in models for p in model.parameters()})
        logger.info(f"--bf16: {len(models)} model(s) loaded in {', '.join(dtypes)} "
                    f"(fairseq 0.12 would keep them in float32 outside TPU mode)")
        return models, cfg, task

    checkpoint_utils.load_model_ensemble_and_task = load_model_ensemble_and_task
    try:
        yield
    finally:
        checkpoint_utils.load_model_ensemble_and_task = original


class _Bf16InferenceMain:
    """``main`` of fairseq-generate / -validate / -interactive: with ``--bf16``, the models it
    loads are in bfloat16. A picklable object (fairseq's ``call_main`` may hand ``main`` to
    ``torch.multiprocessing.spawn``): it keeps the module name and finds the original there."""

    def __init__(self, module_name: str):
        self.module_name = module_name
        self._fairseq_hier = True

    def __call__(self, cfg, *args, **kwargs):
        main = _ORIGINAL_MAINS.get(self.module_name)
        if main is None:  # unpickled in a process where the patch was not applied
            main = importlib.import_module(self.module_name).main
        if not _wants_bf16(cfg):
            return main(cfg, *args, **kwargs)
        with _models_loaded_in_bf16():
            return main(cfg, *args, **kwargs)


def patch_bf16_without_tpu() -> None:
    """``--bf16`` means bfloat16 on the current device (CUDA or CPU), not TPU mode; ``--tpu``
    keeps its meaning. Scope: ``fairseq.options.parse_args_and_arch`` (fairseq's command-line
    parsing), the ``main`` of fairseq-generate, -validate and -interactive, and one log line of
    the Trainer (the dtype it trains in). Idempotent."""
    from fairseq import options

    if not getattr(options.parse_args_and_arch, "_fairseq_hier", False):
        original = options.parse_args_and_arch

        def parse_args_and_arch(parser, input_args=None, parse_known=False,
                                suppress_defaults=False, modify_parser=None):
            out = original(parser, input_args=input_args, parse_known=parse_known,
                           suppress_defaults=suppress_defaults, modify_parser=modify_parser)
            args = out[0] if parse_known else out
            # fairseq 0.12 sets args.tpu whenever --bf16 is given ("implies --tpu")
            if getattr(args, "bf16", False) and getattr(args, "tpu", False) \
                    and not _tpu_requested(input_args):
                args.tpu = False
            return out

        parse_args_and_arch._fairseq_hier = True
        parse_args_and_arch.__doc__ = original.__doc__
        options.parse_args_and_arch = parse_args_and_arch

    from fairseq.trainer import Trainer

    if not getattr(Trainer.__init__, "_fairseq_hier", False):
        trainer_init = Trainer.__init__

        def __init__(self, cfg, *args, **kwargs):
            trainer_init(self, cfg, *args, **kwargs)
            if cfg.common.bf16 and not self.tpu:  # say what the Trainer made of --bf16
                # self._model: the `model` property would build the DDP wrapper here
                dtypes = sorted({str(p.dtype) for p in self._model.parameters()})
                logger.info(f"--bf16: training in {', '.join(dtypes)} on {self.device} "
                            f"(not TPU mode; --tpu selects it)")

        __init__._fairseq_hier = True
        Trainer.__init__ = __init__

    for name in _INFERENCE_CLIS:
        module = importlib.import_module(name)
        if not getattr(module.main, "_fairseq_hier", False):
            _ORIGINAL_MAINS[name] = module.main
            module.main = _Bf16InferenceMain(name)
