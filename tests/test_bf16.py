"""``--bf16`` means bfloat16 on the current device, not TPU mode (issue 8, part 3).

fairseq 0.12 sets ``args.tpu`` whenever ``--bf16`` is given: ``fairseq-train --bf16`` then dies
in ``utils.get_tpu_device`` (``import torch_xla``) on CUDA and CPU alike, and
``fairseq-generate --bf16`` silently decodes in float32 (output identical to float32).
``fairseq_hier.compat.patch_bf16_without_tpu`` fixes both; checked here on CPU through the real
CLIs, for our ``pht`` and fairseq's ``transformer``. (fairseq-validate --bf16 with the attention
predictor: tests/test_attention_predictor.py.)
"""

import os
import re
import subprocess

import pytest
from conftest import BIN, USER_DIR, run_cli, train_args

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


def run_clis_at_once(*commands, timeout=300):
    """Run console scripts of this virtualenv side by side (fairseq's imports dominate: 2 cores
    do two at once); return their stdout+stderr texts, failing on any non-zero exit."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([str(BIN / name), *map(str, args)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for name, *args in commands]
    try:
        outs = [p.communicate(timeout=timeout)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for (name, *_), p, out in zip(commands, procs, outs):
        assert p.returncode == 0, f"{name} failed ({p.returncode}):\n{out[-4000:]}"
    return outs


def hypotheses(log):
    """{id: (score, text)} from fairseq-generate's H- lines."""
    return {int(i): (float(score), text) for i, score, text in
            re.findall(r"^H-(\d+)\t(\S+)\t(.*)$", log, flags=re.M)}


GEN = ["--task", "hierarchical_summarization", "--gen-subset", "valid", "--beam", "2",
       "--max-len-b", "8", "--batch-size", "8", "--num-workers", "0", "--max-paragraphs", "4",
       "--max-paragraph-tokens", "6", "--max-source-positions", "30"]


@pytest.mark.parametrize("arch", ["pht", "transformer"])
def test_train_and_generate_in_bf16(data_bin, tmp_path, arch):
    save = tmp_path / arch
    log = run_cli("fairseq-train", *train_args(data_bin, arch, save, 2, extra=("--bf16",))).stdout
    # before the fix: ModuleNotFoundError: torch_xla (TPU mode) for every model
    assert "--bf16: training in torch.bfloat16 on cpu (not TPU mode" in log, log[-3000:]
    updates = re.findall(r"train_inner \|.* loss=([\d.]+),.* num_updates=(\d+),", log)
    assert [int(u) for _, u in updates] == [1, 2], log[-3000:]
    assert all(0 < float(loss) < 10 for loss, _ in updates)
    ckpt = save / "checkpoint_last.pt"

    generate = ["fairseq-generate", data_bin, "--user-dir", USER_DIR, "--path", ckpt, *GEN]
    fp32, bf16 = run_clis_at_once(generate, [*generate, "--bf16"])
    assert "model(s) loaded in" not in fp32
    # before the fix: no such line, and every score below equal to float32's
    assert "--bf16: 1 model(s) loaded in torch.bfloat16" in bf16, bf16[-3000:]
    hyp32, hyp16 = hypotheses(fp32), hypotheses(bf16)
    assert sorted(hyp32) == sorted(hyp16) == list(range(8))  # every valid example decoded
    # the same model, rounded to bfloat16 (8-bit mantissa): the scores of the same hypotheses
    # move a little; rounding may flip a close beam choice, so compare where the texts agree
    same = [i for i in hyp32 if hyp16[i][1] == hyp32[i][1]]
    assert len(same) >= 5, (hyp32, hyp16)
    diffs = [abs(hyp16[i][0] - hyp32[i][0]) for i in same]
    assert sum(d > 0 for d in diffs) >= len(same) - 1, diffs
    assert max(diffs) < 0.05, diffs


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
