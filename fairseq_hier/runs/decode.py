"""The decode step of a run folder: fairseq-generate on one split of a data-bin with one
checkpoint -> ``generate-SUBSET.txt``, the hypotheses in example order (``SUBSET.hyp.raw``),
what was decoded (``SUBSET.decode.json``) and, when the folder has none, ``run.json``.

Every input is checked before fairseq-generate starts (:func:`check_request`); the options it
runs with: :func:`generate_arguments`. Specification: docs/run-folder.md.
Imports ``analysis``, ``inference``, ``recipes``, ``report``, ``io``, ``errors``; fairseq inside
functions.
"""

import json
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from ..analysis.doc_bleu import chunk_hypotheses
from ..analysis.generate_log import read_hypotheses
from ..errors import HierError
from ..inference.record import (RECORD_FILE, check_generation, checkpoint_task_arch,
                                read_checked_record, recorded_generation)
from ..io import atomic_outputs, check_output_folder, read_lines
from ..recipes.settings import check_arch_and_task
from ..report.inputs import generate_file, read_json, write_run_json

logger = logging.getLogger("fairseq_hier.runs.decode")

#: where fairseq finds this plugin (fairseq-generate --user-dir)
USER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BATCH_SIZE = 32
#: the tasks scored by document BLEU; every other one by ROUGE
BLEU_TASKS = ("document_translation",)


def decode_file(subset: str) -> str:
    """What the decode step records of a split: ``SUBSET.decode.json``."""
    return f"{subset}.decode.json"


def raw_hypotheses_file(subset: str) -> str:
    """The hypotheses in example order, as fairseq-generate printed them: ``SUBSET.hyp.raw``."""
    return f"{subset}.hyp.raw"


def chunk_map_file(data: str, subset: str) -> str:
    """The chunk map of a document-translation split (``DATA_BIN/SUBSET.chunks``)."""
    return os.path.join(data, f"{subset}.chunks")


def metric_of(task: str) -> str:
    """What a run of ``task`` is scored by: ``bleu`` (document translation) or ``rouge``."""
    return "bleu" if task in BLEU_TASKS else "rouge"


@dataclass
class DecodeRequest:
    """The options of ``fairseq-hier-decode`` (docs/run-folder.md)."""

    run_dir: str
    data: str
    references: str
    multi_references: Optional[str] = None
    checkpoint: Optional[str] = None  # default RUN_DIR/checkpoint_best.pt
    subset: str = "test"
    task: Optional[str] = None
    task_args: List[str] = field(default_factory=list)
    generation: Optional[List[str]] = None  # default: the data-bin record's
    batch_size: Optional[int] = None
    max_tokens: Optional[int] = None
    lines: Optional[str] = None  # H or D; default D with --bpe, else H
    force: bool = False
    name: Optional[str] = None
    arch: Optional[str] = None
    extra: List[str] = field(default_factory=list)  # fairseq-generate arguments after --

    @property
    def checkpoint_path(self) -> str:
        return self.checkpoint or os.path.join(self.run_dir, "checkpoint_best.pt")


def split_prefixes(data: str, subset: str) -> List[str]:
    """The binarized files of a split in a data-bin (``SUBSET.*.idx`` without ``.idx``)."""
    return sorted(os.path.join(data, name[:-len(".idx")]) for name in os.listdir(data)
                  if name.startswith(f"{subset}.") and name.endswith(".idx"))


def split_size(prefix: str) -> int:
    """The number of examples of a binarized file (its index, read by fairseq)."""
    from fairseq.data import data_utils  # lazily: keeps startup light

    dataset = data_utils.load_indexed_dataset(prefix, None)
    if dataset is None:
        raise HierError(f"{prefix}.idx: fairseq cannot read this binarized file")
    return len(dataset)


def check_paths(request: DecodeRequest) -> None:
    """What needs no fairseq: the run folder, the split, the checkpoint, the references and
    fairseq-generate on PATH; one-line errors."""
    check_output_folder("RUN_DIR", request.run_dir)
    if not os.path.isdir(request.data):
        raise HierError(f"--data {request.data}: no such data-bin folder")
    if not split_prefixes(request.data, request.subset):
        raise HierError(f"--data {request.data}: has no split {request.subset!r} (no "
                        f"{request.subset}.*.idx; fairseq-preprocess writes it)")
    if not os.path.isfile(request.checkpoint_path):
        where = ("" if request.checkpoint
                 else " (the default: train the run first, or give --checkpoint)")
        raise HierError(f"checkpoint {request.checkpoint_path} not found{where}")
    for option, path in (("--references", request.references),
                         ("--multi-references", request.multi_references)):
        if path is not None and not os.path.isfile(path):
            raise HierError(f"{option} {path}: no such file")
    if shutil.which("fairseq-generate") is None:
        raise HierError("fairseq-generate is not on PATH (install fairseq, or activate its "
                        "environment)")


def decode_task(request: DecodeRequest, record: Optional[dict],
                checkpoint_task: Optional[str]) -> str:
    """``--task``, else the data-bin record's task, else the checkpoint's."""
    task = request.task or (record or {}).get("task") or checkpoint_task
    if not task:
        raise HierError(f"no task: give --task (neither {request.data} has a {RECORD_FILE} nor "
                        f"checkpoint {request.checkpoint_path} names one)")
    return task


def decode_generation(request: DecodeRequest, arch: str) -> List[str]:
    """``--generation``, else the data-bin record's decoding options for ``arch``."""
    if request.generation is not None:
        return list(request.generation)
    if not os.path.isfile(os.path.join(request.data, RECORD_FILE)):
        raise HierError(f"no decoding options: give --generation \"ARGS\" (the data-bin "
                        f"{request.data} has no {RECORD_FILE} to read them from)")
    return recorded_generation(request.data, arch)


def generate_arguments(request: DecodeRequest, task: str, generation: Sequence[str]) -> List[str]:
    """fairseq-generate's arguments (without the final ones after ``--``)."""
    batch = (["--max-tokens", str(request.max_tokens)] if request.max_tokens is not None
             else ["--batch-size", str(request.batch_size or DEFAULT_BATCH_SIZE)])
    return [request.data, "--user-dir", USER_DIR, "--task", task, *request.task_args,
            "--path", request.checkpoint_path, "--gen-subset", request.subset, *generation,
            *batch, "--required-batch-size-multiple", "1"]


def hypothesis_lines(request: DecodeRequest, argv: Sequence[str]) -> str:
    """``--lines``, else ``D`` (detokenised) when fairseq-generate decodes BPE (``--bpe``),
    else ``H``."""
    if request.lines:
        return request.lines
    return "D" if any(a == "--bpe" or a.startswith("--bpe=") for a in argv) else "H"


def check_examples(request: DecodeRequest, task: str) -> int:
    """The number of examples of the split, which the references must have as lines (a
    document-translation split: its chunks, the references being whole documents)."""
    if task in BLEU_TASKS:
        chunks = chunk_map_file(request.data, request.subset)
        if not os.path.isfile(chunks):
            raise HierError(f"--data {request.data}: has no chunk map {chunks} (task {task} "
                            f"scores documents put together from its chunks)")
        return split_size(split_prefixes(request.data, request.subset)[0])
    examples = split_size(split_prefixes(request.data, request.subset)[0])
    for option, path in (("--references", request.references),
                         ("--multi-references", request.multi_references)):
        if path is not None:
            n = len(read_lines(path))
            if n != examples:
                raise HierError(f"{option} {path}: has {n} lines, split {request.subset!r} of "
                                f"{request.data} has {examples} examples (one reference line "
                                f"per example, in order)")
    return examples


def check_request(request: DecodeRequest) -> Tuple[str, str, List[str], int]:
    """Every check before work (docs/run-folder.md, decode, step 1); returns (task, arch, the
    fairseq-generate argv, the number of examples)."""
    check_paths(request)
    record = read_checked_record(request.data)
    checkpoint_task, arch = checkpoint_task_arch(request.checkpoint_path)
    task = decode_task(request, record, checkpoint_task)
    generation = decode_generation(request, arch)
    arguments = generate_arguments(request, task, generation)
    given = arguments[arguments.index("--task") + 2:]  # check_generation adds DATA --task TASK
    check_generation(request.data, task, given, label="fairseq-generate's arguments")
    if request.extra:
        check_generation(request.data, task, [*given, *request.extra],
                         label="the fairseq-generate arguments after --")
    examples = check_examples(request, task)
    return task, arch, ["fairseq-generate", *arguments, *request.extra], examples


def run_generate(command: Sequence[str], log: str) -> None:
    """Run fairseq-generate (found on PATH) with its stdout written whole to ``log`` or not at
    all; its stderr passes through."""
    with atomic_outputs([log]) as (out,):
        proc = subprocess.run([shutil.which(command[0]), *command[1:]], stdout=out,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise HierError(f"fairseq-generate failed (exit status {proc.returncode}; its "
                            f"messages are above): {log} not written")


def write_run(request: DecodeRequest, task: str, checkpoint_arch: str) -> Optional[str]:
    """``RUN_DIR/run.json`` when the folder has none: name ``--name`` or the folder's, arch
    ``--arch``, else the trained run's (the checkpoint folder's run.json), else the
    checkpoint's; returns its path, or None when there was one."""
    if os.path.isfile(os.path.join(request.run_dir, "run.json")):
        return None
    arch = request.arch
    trained = os.path.join(os.path.dirname(os.path.abspath(request.checkpoint_path)), "run.json")
    if arch is None and os.path.isfile(trained):
        arch = read_json(trained).get("arch")
    arch = arch if isinstance(arch, str) and arch else checkpoint_arch
    name = request.name or os.path.basename(os.path.normpath(os.path.abspath(request.run_dir)))
    return write_run_json(request.run_dir, name, arch, task, metric_of(task), check_arch_and_task)


def decode(request: DecodeRequest) -> dict:
    """The decode step (docs/run-folder.md): checks, fairseq-generate (its log reused unless
    ``force``), SUBSET.hyp.raw, SUBSET.decode.json, run.json. Returns what decode.json holds."""
    task, arch, command, examples = check_request(request)
    log = os.path.join(request.run_dir, generate_file(request.subset))
    if os.path.isfile(log) and not request.force:
        logger.info(f"{log} exists: its hypotheses are read again (--force decodes again)")
    else:
        logger.info(f"decoding {request.data} split {request.subset} with a {arch} checkpoint: "
                    f"{' '.join(command)}")
        run_generate(command, log)
    lines = hypothesis_lines(request, command)
    if task in BLEU_TASKS:
        hyps = chunk_hypotheses(log, chunk_map_file(request.data, request.subset), lines)
    else:
        hyps = read_hypotheses(log, examples, lines)
    facts = {"data": request.data, "checkpoint": request.checkpoint_path,
             "subset": request.subset, "task": task, "arch": arch,
             "references": request.references, "multi_references": request.multi_references,
             "lines": lines, "examples": len(hyps), "command": command, "cwd": os.getcwd()}
    paths = [os.path.join(request.run_dir, name) for name in
             (raw_hypotheses_file(request.subset), decode_file(request.subset))]
    with atomic_outputs(paths, inputs=[log]) as (f_hyps, f_facts):
        f_hyps.writelines(h + "\n" for h in hyps)
        f_facts.write(json.dumps(facts, indent=1, ensure_ascii=False) + "\n")
    write_run(request, task, arch)
    return facts
