"""``HierSummarizer``: a trained checkpoint directory -> summaries of new raw documents, in the
style of fairseq's hub interfaces (``BARTHubInterface``).

    from fairseq_hier.inference import HierSummarizer
    summarizer = HierSummarizer.from_pretrained("runs/pht")       # checkpoint_best.pt
    summarizer.summarize([["first document ...", "second document ..."]])

What it does in order (record, task and generator, per-example pipeline), safe loading and
devices: docs/inference.md, section fairseq_hier.inference.summarizer. Imports ``inference``,
``data``, ``preparation``, ``generation``, ``safe_loading``,
``errors``;
torch, fairseq and tqdm inside functions.
"""

import copy
import logging
import os
import tempfile
from typing import Iterable, List, Optional, Sequence, Union

from ..data.dependency_codes import DependencyParses
from ..data.preprocessing_record import (RECORD_FILE, STATE_KEY, Assets, RecordError,
                                         generation_for, restore)
from ..errors import HierError, check_range, shell_words
from ..generation.checks import check_generation_options
from ..preparation.dependencies import project_dependencies
from ..safe_loading import checkpoint_task_and_arch, describe_checkpoint, trusting
from .pipelines import PIPELINES, InputError, RawExample
from .record import check_record, read_checked_record

logger = logging.getLogger(__name__)

CHECKPOINT_NAMES = ("checkpoint_best.pt", "checkpoint_last.pt")
Example = Union[str, Sequence[str], dict, RawExample]


def find_checkpoint(checkpoint_dir: str, checkpoint_file: Optional[str] = None) -> str:
    """The checkpoint file of a directory (or the file itself)."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    if os.path.isfile(checkpoint_dir):
        if checkpoint_file is None:
            return checkpoint_dir
        raise RecordError(f"{checkpoint_dir} is a checkpoint file, and checkpoint_file "
                          f"{checkpoint_file!r} names a file of a checkpoint directory: give the "
                          f"directory with checkpoint_file, or the file alone")
    if not os.path.isdir(checkpoint_dir):
        raise RecordError(f"{checkpoint_dir}: no such checkpoint directory")
    names = [checkpoint_file] if checkpoint_file else list(CHECKPOINT_NAMES)
    for name in names:
        path = os.path.join(checkpoint_dir, name)
        if os.path.isfile(path):
            return path
    raise RecordError(f"{checkpoint_dir}: no {' or '.join(names)}")


def _kind(value) -> str:
    """``None``, ``a list``, ``an int``: what a message says was found."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _check_texts(texts, where: str, what: str) -> None:
    """Refuse a list whose items are not all strings, naming the first that is not."""
    for k, text in enumerate(texts, start=1):
        if not isinstance(text, str):
            raise InputError(f"{where}: {what} {k} is {_kind(text)}, expected a string")


def as_example(x: Example, where: str) -> RawExample:
    """A summarize() input -> RawExample: a string (one document), a list of strings (the
    documents of one example), a dict of the JSON-lines schema (docs/data-formats.md
    #your-own-data-the-json-lines-schema), or a RawExample.
    Anything else is an InputError naming the example, the item and what it is."""
    if isinstance(x, RawExample):
        return x
    if isinstance(x, str):
        return RawExample([x], None, where)
    if isinstance(x, dict):
        if "documents" not in x:
            raise InputError(f'{where}: a dict without "documents" (expected {{"documents": '
                             f'[str, ...], "title": str}})')
        docs, title = x["documents"], x.get("title")
        if not isinstance(docs, (list, tuple)):
            raise InputError(f'{where}: "documents" is {_kind(docs)}, expected a list of '
                             f'strings')
        _check_texts(docs, where, "document")
        if not isinstance(title, (str, type(None))):
            raise InputError(f'{where}: "title" is {_kind(title)}, expected a string or None')
        return RawExample(list(docs), title, where)
    if isinstance(x, (list, tuple)):
        _check_texts(x, where, "document")
        return RawExample(list(x), None, where)
    raise InputError(f"{where} is {_kind(x)}, expected a document (a string), a list of "
                     f"documents, or a dict with 'documents'")


def check_examples(examples, where: str) -> None:
    """Refuse a single example given where a list of examples is expected (a string would be
    read one character per example)."""
    if isinstance(examples, (str, bytes, dict, RawExample)) or not hasattr(examples, "__iter__"):
        raise InputError(f"{where}: examples is {_kind(examples)}, expected a list of examples "
                         f"(one example of one document: [\"text ...\"])")


def check_documents(example: RawExample) -> None:
    """Refuse an example with no document or an empty one (named by its position)."""
    if not example.documents:
        raise InputError(f"{example.where}: no document")
    _check_texts(example.documents, example.where, "document")
    for k, doc in enumerate(example.documents, start=1):
        if not doc.strip():
            raise InputError(f"{example.where}: document {k} is empty")


def _load_record(path: str, state: dict, folder: str):
    """(record, assets, data folder, where the record is: for messages) of a checkpoint: from
    its task state, else from a ``hier_preprocess.json`` beside it."""
    kept = (state.get("task_state") or {}).get(STATE_KEY)
    if kept is not None:
        check_record(kept.get("record"), f"checkpoint {path}")  # before any file is written
        try:
            record, assets = restore(kept, folder)
        except RecordError as e:
            raise RecordError(f"checkpoint {path}: {e}") from None
        return record, assets, folder, f"the preprocessing record in checkpoint {path}"
    beside = os.path.dirname(os.path.abspath(path))
    record = read_checked_record(beside)
    if record is None:
        raise RecordError(
            f"{path} has no preprocessing record: its data-bin had no hier_preprocess.json when it "
            f"was trained. Write one with fairseq-hier-record data into the data-bin and retrain, or "
            f"into {beside} (with the data-bin's dict.*.txt copied there)")
    return record, Assets.of(record, beside), beside, os.path.join(beside, RECORD_FILE)


def decoded_tasks() -> List[str]:
    """The tasks whose checkpoints the summarizer decodes (those of the pipelines)."""
    return sorted({task for pipeline in PIPELINES.values() for task in pipeline.TASKS})


def check_summarizable(state: dict, path: str) -> None:
    """Refuse a checkpoint of a task the summarizer does not decode (a paragraph ranker, an
    attention predictor, a pretrained BART), naming what it holds."""
    task, _ = checkpoint_task_and_arch(state)
    if task not in decoded_tasks():
        raise HierError(f"checkpoint {path} holds {describe_checkpoint(state)}; the summarizer "
                        f"decodes checkpoints of {', '.join(decoded_tasks())}")


def as_flags(options: dict) -> List[str]:
    """Keyword arguments -> fairseq command-line options: ``beam=3`` -> ``--beam 3``,
    ``fp16=True`` -> ``--fp16``; False and None give nothing."""
    flags = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is not False and value is not None:
            flags += [flag, str(value)]
    return flags


def generation_fields() -> List[str]:
    """The decoding options of fairseq's ``GenerationConfig`` (what summarize() takes)."""
    from fairseq.dataclass.configs import GenerationConfig

    return [name for name in GenerationConfig.__dataclass_fields__ if not name.startswith("_")]


def checked(gen, where: str):
    """:func:`check_generation_options`, its error prefixed with the call it came from."""
    try:
        check_generation_options(gen)
    except HierError as e:
        raise HierError(f"{where}: {e}") from None
    return gen


def check_arguments(checkpoint_dir, checkpoint_file, generation, batch_size, where: str) -> None:
    """Refuse arguments of from_pretrained of the wrong type or out of range, naming them."""
    for name, value in (("checkpoint_dir", checkpoint_dir), ("checkpoint_file", checkpoint_file)):
        if not isinstance(value, (str, os.PathLike)) and not (value is None
                                                               and name == "checkpoint_file"):
            raise HierError(f"{where}: {name} is {_kind(value)}, expected a path")
    if generation is not None and not isinstance(generation, str) and not (
            isinstance(generation, (list, tuple))
            and all(isinstance(a, (str, int, float)) for a in generation)):
        raise HierError(f"{where}: generation is {_kind(generation)}, expected fairseq-generate "
                        f"options as a string (\"--beam 3\") or a list of strings")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                   or batch_size < 1):
        raise HierError(f"{where}: batch_size must be an integer >= 1, got {batch_size!r}")


class _ParseError(HierError):
    pass


def _raise_parse_error(message):
    raise _ParseError(message)


def parse_generation_options(task: str, argv: List[str], origin: dict, where: str):
    """fairseq-interactive's parser (with ``task``'s options) on ``argv``: the namespace. An
    unknown option or a bad value is a one-line HierError naming it (``origin`` maps a flag to
    the keyword argument it came from) instead of argparse's SystemExit."""
    from fairseq import options

    parser = options.get_generation_parser(interactive=True, default_task=task)
    parser.error = _raise_parse_error  # argparse would print usage and exit
    try:
        args, extra = options.parse_args_and_arch(parser, argv, parse_known=True)
    except _ParseError as e:
        raise HierError(f"{where}: {e}") from None
    unknown = [origin.get(a, a) for a in extra if a.startswith("-")]
    if unknown:
        raise HierError(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(unknown)} (fairseq-generate with task {task} has no "
                        f"{'such options' if len(unknown) > 1 else 'such option'})")
    if extra:
        raise HierError(f"{where}: unexpected argument{'s' if len(extra) > 1 else ''} "
                        f"{' '.join(extra)}")
    return args


def parse_checked(task: str, argv: List[str], origin: dict, where: str):
    """:func:`parse_generation_options`, then the ranges of the decoding options
    (:func:`checked`) and of ``--batch-size`` / ``--max-tokens`` (at least 1: fairseq would read
    0 as no limit)."""
    args = checked(parse_generation_options(task, argv, origin, where), where)
    for name in ("batch_size", "max_tokens"):
        try:
            check_range("--" + name.replace("_", "-"), getattr(args, name, None), 1)
        except HierError as e:
            raise HierError(f"{where}: {e}") from None
    return args


class HierSummarizer:
    """See the module docstring."""

    def __init__(self, cfg, task, models, generator, pipeline, record, workdir=None, argv=(),
                 trust_checkpoint: bool = False):
        self.cfg, self.task, self.models = cfg, task, models
        self.generator, self.pipeline, self.record = generator, pipeline, record
        self._workdir = workdir  # the TemporaryDirectory of the restored record (kept alive)
        self._argv = list(argv)  # the options the generator was built from (per-call overrides)
        # the pipeline may load a checkpoint later (the ranker of rank=ranker, on first use)
        self.trust_checkpoint = trust_checkpoint
        import torch

        self.device = next(models[0].parameters()).device
        self.torch = torch

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_pretrained(cls, checkpoint_dir: str, checkpoint_file: Optional[str] = None,
                        generation: Union[str, Sequence[str], None] = None, cpu: bool = False,
                        batch_size: Optional[int] = None, trust_checkpoint: bool = False,
                        pipeline_options: Optional[dict] = None, **kwargs) -> "HierSummarizer":
        """Load a checkpoint (see the module docstring). ``generation``: fairseq-generate
        options over the record's (a string or a list); keyword arguments are more of them
        (``beam=3`` is ``--beam 3``, ``no_repeat_ngram_size=0``, ``fp16=True``): an unknown one,
        or a value out of range, raises :class:`~fairseq_hier.errors.HierError` naming it.
        ``batch_size``: examples per batch (an integer >= 1; default 8), checked before anything
        is loaded. ``trust_checkpoint=True`` loads a checkpoint that holds globals outside the
        safe loader's allow list (it may run code: only for files you trust).
        ``pipeline_options``: options of the record's pipeline over the recorded ones (e.g.
        ``{"split_lines": True}``), checked as the record's are."""
        check_arguments(checkpoint_dir, checkpoint_file, generation, batch_size,
                        "HierSummarizer.from_pretrained")  # before anything is loaded
        with trusting(trust_checkpoint):
            return cls._from_pretrained(checkpoint_dir, checkpoint_file, generation, cpu,
                                        batch_size, trust_checkpoint, kwargs,
                                        pipeline_options or {})

    @classmethod
    def _from_pretrained(cls, checkpoint_dir, checkpoint_file, generation, cpu, batch_size,
                         trust_checkpoint, kwargs, pipeline_options) -> "HierSummarizer":
        import fairseq_hier

        fairseq_hier.register()
        from fairseq import checkpoint_utils

        where = "HierSummarizer.from_pretrained"
        extra = shell_words(f"{where}: generation", generation) \
            if isinstance(generation, str) else [str(a) for a in generation or []]
        origin = {"--" + k.replace("_", "-"): k for k in kwargs}  # flag -> keyword, for errors
        extra += as_flags(kwargs)
        if batch_size is not None:
            extra += ["--batch-size", str(batch_size)]
        if cpu:
            extra.append("--cpu")

        path = find_checkpoint(checkpoint_dir, checkpoint_file)
        state = checkpoint_utils.load_checkpoint_to_cpu(path)
        check_summarizable(state, path)
        workdir = tempfile.TemporaryDirectory(prefix="hier_summarizer_")
        try:
            return cls._build(path, state, workdir, extra, origin, trust_checkpoint,
                              pipeline_options)
        except BaseException:  # nothing of a failed load stays on disk
            workdir.cleanup()
            raise

    @classmethod
    def _build(cls, path, state, workdir, extra, origin, trust_checkpoint,
               pipeline_options) -> "HierSummarizer":
        """The summarizer of the checkpoint ``path`` (its ``state`` read), its record restored
        into ``workdir``, with the caller's options ``extra`` (``origin``: flag -> keyword)."""
        import fairseq_hier
        from fairseq import checkpoint_utils
        from fairseq.dataclass.utils import convert_namespace_to_omegaconf

        where = "HierSummarizer.from_pretrained"
        record, assets, data, source = _load_record(path, state, workdir.name)
        saved_task = state["cfg"]["task"]._name if state.get("cfg") else None
        if saved_task != record["task"]:
            raise RecordError(f"{path}: trained with task {saved_task}, but its preprocessing "
                              f"record is for {record['task']}")

        # the record's options, then the caller's: parsed by fairseq-interactive's own parser
        head = [data, "--user-dir", os.path.dirname(fairseq_hier.__file__), "--task",
                record["task"], "--path", path]
        arch = checkpoint_task_and_arch(state)[1]
        recorded = generation_for(record, arch)
        # the record's own options first, so that a bad one is blamed on the record
        field = (f"'generation_for' entry {arch!r}" if arch in record.get("generation_for", {})
                 else "'generation'")
        parse_checked(record["task"], head + recorded, {}, f"{source}: {field}")
        argv = head + recorded + extra
        args = parse_checked(record["task"], argv, origin, where)
        defaults = parse_generation_options(record["task"], head, {}, where)
        cfg = convert_namespace_to_omegaconf(args)
        # task options given there (e.g. --block-previous-tokens) override the checkpoint's
        task_fields = set(state["cfg"]["task"].keys())
        overrides = {k: v for k, v in vars(args).items()
                     if k in task_fields and getattr(defaults, k, None) != v}
        overrides["data"] = data
        # what load_checkpoint_to_cpu does with arg_overrides (the state is loaded already)
        from fairseq.dataclass.utils import overwrite_args_by_name

        overwrite_args_by_name(state["cfg"], overrides)
        if state.get("args") is not None:  # a checkpoint of the Namespace era: cfg is rebuilt
            for name, value in overrides.items():
                setattr(state["args"], name, value)
        models, _, task = checkpoint_utils.load_model_ensemble_and_task(
            [path], arg_overrides=overrides, state=state)
        import torch

        use_cuda = torch.cuda.is_available() and not cfg.common.cpu
        for model in models:
            if cfg.common.fp16:
                model.half()
            if getattr(cfg.common, "bf16", False):
                model.to(torch.bfloat16)
            if use_cuda:
                model.cuda()
            model.prepare_for_inference_(cfg)
        generator = task.build_generator(models, cfg.generation)
        pipeline_class = PIPELINES[record["pipeline"]]
        if pipeline_options:  # the caller's over the record's, checked as the record's are
            unknown = sorted(set(pipeline_options) - set(pipeline_class.OPTIONS))
            if unknown:
                raise HierError(f"{where}: pipeline {record['pipeline']} of {path} has no "
                                f"option {', '.join(unknown)}")
            record = dict(record, options={**record["options"], **pipeline_options})
            pipeline_class.check_options(pipeline_class.resolve_options(record["options"]),
                                         f"{where}: {path}")
        pipeline = pipeline_class(record["options"], assets)
        if cfg.dataset.batch_size is None and cfg.dataset.max_tokens is None:
            cfg.dataset.batch_size = 8
        logger.info(f"{path}: task {record['task']}, pipeline {record['pipeline']}, generation "
                    f"{' '.join(recorded + extra) or '(fairseq defaults)'}")
        return cls(cfg, task, models, generator, pipeline, record, workdir, argv,
                   trust_checkpoint)

    def _decoding(self, options: dict, where: str):
        """(generator, generation config) of one call: the loaded ones, or with ``options``
        (GenerationConfig fields) over them, parsed and checked as from_pretrained's."""
        if not options:
            return self.generator, self.cfg.generation
        fields = generation_fields()
        unknown = [k for k in options if k not in fields]
        if unknown:
            raise HierError(f"{where}: {', '.join(unknown)}: not a decoding option (fairseq's "
                            f"GenerationConfig: {', '.join(fields[:8])}, ...); task and model "
                            f"options go to HierSummarizer.from_pretrained")
        origin = {"--" + k.replace("_", "-"): k for k in options}
        args = parse_generation_options(self.record["task"], self._argv + as_flags(options),
                                        origin, where)
        gen = copy.deepcopy(self.cfg.generation)
        for key in options:
            setattr(gen, key, getattr(args, key))
        checked(gen, where)
        return self.task.build_generator(self.models, gen), gen

    # ------------------------------------------------------------------ decoding
    def generate(self, lines: Sequence[str], progress: bool = False,
                 **generation) -> List[List[dict]]:
        """Raw-format lines (what the recipe gave fairseq-preprocess) -> fairseq's hypotheses of
        each line (best first; ``tokens``, ``score``, ``positional_scores``, ``text`` = the
        hypothesis string as fairseq-interactive's ``H-`` line). Keyword arguments: decoding
        options for this call (``beam=3``; see the module docstring)."""
        if isinstance(lines, (str, bytes)) or not hasattr(lines, "__iter__"):
            raise InputError(f"generate(): lines is {_kind(lines)}, expected a list of strings")
        lines = list(lines)
        _check_texts(lines, "generate()", "line")
        decoding = self._decoding(generation, "generate()")
        with trusting(self.trust_checkpoint):
            return self._generate(lines, progress, decoding)

    def _generate(self, lines, progress, decoding) -> List[List[dict]]:
        task = self.task
        if hasattr(task, "input_lines"):  # BOS tasks number input lines: per call here
            task.input_lines.seen = 0
        tokens, lengths = task.get_interactive_tokens_and_lengths(list(lines), lambda x: x)
        if getattr(task, "use_parses", False):  # ParsingSum: the parse of these very lines
            with tempfile.TemporaryDirectory(prefix="hier_parse_") as folder:
                parses = self._dependency_parses(lines, folder)
                dataset = task.build_dataset_for_inference(tokens, lengths,
                                                           dependency_parses=parses)
                return self._decode(dataset, len(lines), progress, decoding)
        dataset = task.build_dataset_for_inference(tokens, lengths)
        return self._decode(dataset, len(lines), progress, decoding)

    def _dependency_parses(self, lines: Sequence[str], folder: str):
        """The dependency parse of ``lines`` (their CoNLL-U, kept by the pipeline's spaCy step)
        projected on their pieces by fairseq-hier-parse project, as the recipe's prepare step
        does."""
        conllu = getattr(self.pipeline, "conllu", [])
        if len(conllu) != len(lines):
            raise InputError("this model reads the dependency parse of its source (ParsingSum): "
                             "summarise raw documents (summarize()), whose spaCy step parses "
                             "them; raw-format lines carry no parse")
        with open(os.path.join(folder, "input.conllu"), "w", encoding="utf-8") as f:
            f.write("".join(conllu))
        with open(os.path.join(folder, "input.src"), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
        subword = self.pipeline.options.get("subword", "none")
        project_dependencies(
            conllu=os.path.join(folder, "input.conllu"), source=os.path.join(folder, "input.src"),
            subword=subword, separator=self.task.cfg.paragraph_separator,
            output_prefix=os.path.join(folder, "input.parse"))
        return DependencyParses(os.path.join(folder, "input.parse"))

    def _decode(self, dataset, n: int, progress: bool, decoding) -> List[List[dict]]:
        from fairseq import utils

        task, cfg = self.task, self.cfg
        generator, generation = decoding
        max_positions = utils.resolve_max_positions(
            task.max_positions(), *[m.max_positions() for m in self.models])
        itr = task.get_batch_iterator(
            dataset=dataset, max_tokens=cfg.dataset.max_tokens,
            max_sentences=cfg.dataset.batch_size, max_positions=max_positions,
            ignore_invalid_inputs=False).next_epoch_itr(shuffle=False)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n, unit="input", desc="summarize")
        strip = _symbols_to_strip(generator)
        results: List[Optional[List[dict]]] = [None] * n
        for batch in itr:
            sample = utils.move_to_cuda(batch, self.device) if self.device.type == "cuda" else batch
            with self.torch.inference_mode():
                hypos = task.inference_step(generator, self.models, sample)
            for i, example_hypos in zip(batch["id"].tolist(), hypos):
                out = []
                for h in example_hypos[: generation.nbest]:
                    toks = h["tokens"].int().cpu()
                    out.append({"tokens": toks, "score": float(h["score"]),
                                "positional_scores": h["positional_scores"].float().cpu(),
                                "text": task.target_dictionary.string(
                                    toks, None, extra_symbols_to_ignore=strip)})
                results[i] = out
            if bar is not None:
                bar.update(len(hypos))
        if bar is not None:
            bar.close()
        missing = [i + 1 for i, r in enumerate(results) if r is None]
        if missing:  # fairseq's batching never drops an input with ignore_invalid_inputs=False
            raise RuntimeError(f"inputs {missing[:5]} got no hypothesis")
        return results

    def encode(self, examples: Iterable[Example]) -> List[List[str]]:
        """Each example -> its raw-format lines (the pipeline's ``encode``)."""
        check_examples(examples, "encode()")
        out = []
        for k, x in enumerate(examples, start=1):
            example = as_example(x, f"example {k}")
            check_documents(example)
            with trusting(self.trust_checkpoint):  # the pipeline's ranker loads on first use
                out.append(self.pipeline.encode(example))
        for what, n in sorted(self.pipeline.counts.items()):
            logger.info(f"preprocessing: {n} {what}")
        self.pipeline.counts.clear()
        return out

    def summarize(self, examples: Iterable[Example], progress: bool = False,
                  **generation) -> List[str]:
        """Raw examples -> one summary (translation, for document translation) each. Keyword
        arguments: decoding options for this call (``beam=3``, ``lenpen=1.2``; the fields of
        fairseq's ``GenerationConfig``), checked before anything is encoded."""
        check_examples(examples, "summarize()")
        decoding = self._decoding(generation, "summarize()")
        if hasattr(self.pipeline, "conllu"):
            self.pipeline.conllu.clear()
        encoded = self.encode(examples)
        lines = [line for example_lines in encoded for line in example_lines]
        with trusting(self.trust_checkpoint):
            hypos = iter(self._generate(lines, progress, decoding))
        return [self.pipeline.decode([next(hypos)[0]["text"] for _ in example_lines])
                for example_lines in encoded]


def _symbols_to_strip(generator) -> set:
    from fairseq_cli.generate import get_symbols_to_strip_from_output

    return get_symbols_to_strip_from_output(generator)
