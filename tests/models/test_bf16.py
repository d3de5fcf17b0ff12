"""``--bf16`` means bfloat16 on the current device, not TPU mode.

fairseq 0.12 sets ``args.tpu`` whenever ``--bf16`` is given: ``fairseq-train --bf16`` then dies
in ``utils.get_tpu_device`` (``import torch_xla``) on CUDA and CPU alike, and
``fairseq-generate --bf16`` silently decodes in float32 (output identical to float32).
``fairseq_hier.compat.patch_bf16_without_tpu`` fixes both; checked here on the parsed options,
and through the real CLIs for every architecture in tests/training/test_precision.py (training logs
"--bf16: training in torch.bfloat16", generation "loaded in torch.bfloat16", scores near
float32's; fairseq-validate --bf16 with the attention predictor there too).
"""

import pytest

import fairseq_hier  # noqa: F401  (applies the fixes)
from fairseq import options


@pytest.mark.parametrize("argv,bf16,tpu", [
    ([], False, False),
    (["--bf16"], True, False),  # fairseq 0.12: tpu True
    (["--memory-efficient-bf16"], True, False),  # implies --bf16; fairseq 0.12: tpu True
    (["--bf16", "--tpu"], True, True),  # an explicit --tpu keeps its meaning
    (["--tpu"], False, True),
])
def test_bf16_does_not_imply_tpu(argv, bf16, tpu):
    args = options.parse_args_and_arch(options.get_generation_parser(), ["data-bin", *argv])
    assert (args.bf16, args.tpu) == (bf16, tpu)
    # parse_known returns (args, extra): the same rule applies
    args, extra = options.parse_args_and_arch(options.get_training_parser(),
                                              ["data-bin", "--arch", "transformer", *argv, "--x"],
                                              parse_known=True)
    assert (args.bf16, args.tpu, extra) == (bf16, tpu, ["--x"])


def test_inference_mains_are_wrapped_and_picklable():
    """fairseq's call_main may hand ``main`` to torch.multiprocessing.spawn, which pickles it."""
    import pickle

    import fairseq_cli.generate
    import fairseq_cli.interactive
    import fairseq_cli.validate

    for module in (fairseq_cli.generate, fairseq_cli.validate, fairseq_cli.interactive):
        main = pickle.loads(pickle.dumps(module.main))
        assert type(main).__name__ == "_Bf16InferenceMain"
        assert main.module_name == module.__name__
