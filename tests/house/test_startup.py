"""Start-up of our commands: the scoring commands import neither torch nor fairseq (the
converter needs torch for the .pt shards, never fairseq); registration still happens whenever
fairseq is part of the process (``--user-dir``, fairseq imported before or after us, our
subpackages imported first); no command prints fairseq's tensorboardX notice.

Every check runs in a fresh interpreter (a subprocess): sys.modules of the test process already
holds whatever other tests imported."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import BIN, ROOT, USER_DIR

TENSORBOARDX_NOTICE = "Please install tensorboardX"
# Every name we register, and a mark of compat.apply_all(), as seen from fairseq's registries.
REGISTRY_REPORT = textwrap.dedent("""
    import json, sys
    from fairseq.criterions import CRITERION_REGISTRY
    from fairseq.data import data_utils
    from fairseq.models import ARCH_MODEL_REGISTRY, MODEL_REGISTRY
    from fairseq.tasks import TASK_REGISTRY
    from fairseq import checkpoint_utils
    import fairseq_hier
    print(json.dumps({
        "tasks": sorted(n for n in ("hierarchical_summarization", "attention_prediction")
                        if TASK_REGISTRY.get(n) and TASK_REGISTRY[n].__module__.startswith("fairseq_hier")),
        "models": sorted(n for n in ("pht", "vht", "attention_predictor")
                         if n in MODEL_REGISTRY and MODEL_REGISTRY[n].__module__.startswith("fairseq_hier")),
        "archs": sorted(n for n in ("pht", "pht_1layer", "vht", "vht_1layer", "attention_predictor")
                        if n in ARCH_MODEL_REGISTRY),
        "criterions": sorted(n for n in ("attention_mse",) if n in CRITERION_REGISTRY),
        "compat": [bool(getattr(checkpoint_utils.torch, "_fairseq_hier_checkpoint_torch", False)),
                   bool(getattr(data_utils.batch_by_size, "_fairseq_hier", False))],
        "registered": fairseq_hier.is_registered(),
    }))
""")
EVERYTHING = {"tasks": ["attention_prediction", "hierarchical_summarization"],
              "models": ["attention_predictor", "pht", "vht"],
              "archs": ["attention_predictor", "pht", "pht_1layer", "vht", "vht_1layer"],
              "criterions": ["attention_mse"], "compat": [True, True], "registered": True}


def python(code, *args, env=None, cwd=None):
    """Run ``code`` in a fresh interpreter of this virtualenv; return (exit code, output)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", **(env or {}))
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, cwd=cwd or ROOT,
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc.returncode, proc.stdout


def last_json(output):
    return json.loads(output.strip().splitlines()[-1])


def test_scoring_commands_import_neither_torch_nor_fairseq(tmp_path):
    refs, hyps, src = tmp_path / "refs", tmp_path / "hyps", tmp_path / "src"
    refs.write_text("the cat sat . it was happy .\na b c .\n")
    hyps.write_text("the cat sat . it was sad .\na b c .\n")
    src.write_text("title <P> the cat sat on the mat\nt <P> a b c d\n")
    log = tmp_path / "generate.log"
    log.write_text("S-1\tt a\nH-1\t-0.5\ta b c .\nH-0\t-0.3\tthe cat sat .\n"
                   "Generate test with beam=5: BLEU4 = 0.00\n")
    code = textwrap.dedent(f"""
        import json, runpy, sys
        runs = {{
            "fairseq_hier.cli.rouge": [{str(refs)!r}, {str(hyps)!r}],
            "fairseq_hier.cli.baseline": ["lead", "--source", {str(src)!r}, "--reference",
                                          {str(refs)!r}, "-o", {str(tmp_path / "lead.hyp")!r}],
            "fairseq_hier.cli.to_raw": ["--help"],
        }}
        for module, argv in runs.items():
            sys.argv = [module] + argv
            try:
                runpy.run_module(module, run_name="__main__")
            except SystemExit as e:
                assert e.code in (0, None), (module, e.code)
        from fairseq_hier.cli.aliases import run_alias  # an old name: fairseq-hier-hypotheses
        assert run_alias("hypotheses", [{str(log)!r}, "--expected", "2", "-o",
                                        {str(tmp_path / "hyp.txt")!r}]) == 0
        import fairseq_hier.io, fairseq_hier.cli.to_raw, fairseq_hier  # noqa
        print(json.dumps(sorted(m for m in ("torch", "fairseq", "fairseq_cli") if m in sys.modules)))
    """)
    rc, out = python(code)
    assert rc == 0, out
    assert "ROUGE-1 Average_F" in out
    assert (tmp_path / "lead.hyp").read_text() == "title the cat sat on the mat\nt a b c\n"
    assert (tmp_path / "hyp.txt").read_text() == "the cat sat .\na b c .\n"
    assert last_json(out) == []


@pytest.mark.parametrize("command", ["fairseq-hier", "fairseq-hier-rouge", "fairseq-hier-baseline",
                                     "fairseq-hier-to-raw", "fairseq-hier-lead"])  # an old name
def test_console_script_help_is_light(command):
    # the console script's own wrapper, with sys.modules inspected when it exits
    code = textwrap.dedent(f"""
        import atexit, json, runpy, sys
        atexit.register(lambda: print(json.dumps(sorted(m for m in ("torch", "fairseq")
                                                        if m in sys.modules))))
        sys.argv = [{str(BIN / command)!r}, "--help"]
        runpy.run_path(sys.argv[0], run_name="__main__")
    """)
    rc, out = python(code)
    assert rc == 0 and "usage:" in out
    assert last_json(out) == []


def test_user_dir_registers_everything_and_applies_compat():
    # what fairseq-train/-generate do with --user-dir
    code = textwrap.dedent(f"""
        import argparse
        from fairseq import utils
        utils.import_user_module(argparse.Namespace(user_dir={USER_DIR!r}))
    """) + REGISTRY_REPORT
    rc, out = python(code)
    assert rc == 0, out
    assert last_json(out) == EVERYTHING
    assert TENSORBOARDX_NOTICE not in out  # tensorboardX is installed (scripts/install.sh)


def test_light_import_then_fairseq_registers_and_no_tensorboardx_notice(tmp_path):
    # A Python user: `import fairseq_hier` first (light), fairseq later, here through
    # fairseq-hier-extract-attention's main (which imports fairseq). tensorboardX is made
    # missing by a shim that fails to import, so fairseq logs its notice: the command filters
    # it, and its error stays one line.
    (tmp_path / "tensorboardX.py").write_text("raise ImportError('not installed (test shim)')\n")
    missing = tmp_path / "missing.pt"
    code = textwrap.dedent(f"""
        import sys
        import fairseq_hier
        assert "fairseq" not in sys.modules and "torch" not in sys.modules
        assert not fairseq_hier.is_registered()
        from fairseq_hier.cli import extract_attention
        code = extract_attention.cli_main([{str(tmp_path)!r}, "--path", {str(missing)!r},
                                           "--output-dir", {str(tmp_path / "labels")!r}])
        sys.stderr.flush()
        print("exit:", code, flush=True)
        # the shim made fairseq's import of tensorboardX fail: the notice was logged
        assert sys.modules["fairseq.tasks.text_to_speech"].SummaryWriter is None
        fairseq_hier.register()  # idempotent
    """) + REGISTRY_REPORT
    rc, out = python(code, env={"PYTHONPATH": str(tmp_path)})
    assert rc == 0, out
    assert last_json(out) == EVERYTHING
    assert f"fairseq-hier-extract-attention: error: --path {missing}: no such checkpoint\nexit: 1\n" in out
    assert TENSORBOARDX_NOTICE not in out and "Traceback" not in out


def test_our_subpackage_imported_first_registers_everything():
    code = textwrap.dedent("""
        from fairseq_hier.models.hierarchical_transformer import PHTModel  # imports fairseq
    """) + REGISTRY_REPORT
    rc, out = python(code)
    assert rc == 0, out
    assert last_json(out) == EVERYTHING
