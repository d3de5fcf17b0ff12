"""The checks and facts of ``run.sh``'s stages, before any work.

    python stage.py STAGE [ARCH]

Checks the recipe's variables (README.md, "Variables") for STAGE and prints the shell assignments
the stage reads: the architecture's facts of the table (``fairseq-hier-settings ARCH --stage
facts``: TASK SUBWORD PARSE PRETRAINED SRC TGT PAPER), KIND (the preparation: spm, spacy_spm or
gpt2), BIN (its data-bin), RUN and DIR (the run folder). A bad variable is one line ``run.sh:
...`` on stderr and exit status 2; an unknown ARCH is fairseq-hier-settings' own error line.
"""

import os
import sys

from fairseq_hier.cli.settings import get_parser
from fairseq_hier.recipes.settings import facts, shell_assignments

SPLITS = ("train", "valid", "test")
CHOICES = {"PARAGRAPHS": ("documents", "blocks", "lines"), "RANK": ("none", "tfidf", "ranker"),
           "SPM_TYPE": ("unigram", "bpe")}


def fail(message: str):
    print(f"run.sh: {message}", file=sys.stderr)
    sys.exit(2)


def check_variables(env) -> None:
    """The variables every stage reads."""
    work = env["WORK"]
    if os.path.exists(work) and not os.path.isdir(work):
        fail(f"WORK={work} is a file (the output folder is expected)")
    for var, choices in CHOICES.items():
        if env[var] not in choices:
            fail(f"{var} must be {', '.join(choices[:-1])} or {choices[-1]}, got '{env[var]}'")
    for var in ("VOCAB", "WORKERS") + (("GPUS",) if env.get("GPUS") else ()):
        value = env[var]
        if not (value.isascii() and value.isdigit() and not value.startswith("0")):
            fail(f"{var} must be a positive integer, got '{value}'")


def arch_facts(stage: str, arch: str, env) -> list:
    """The architecture's facts and what ``stage`` needs of the variables for it, checked."""
    get_parser().parse_args([arch, "--stage", "facts"])  # an unknown ARCH stops here
    known = dict(facts(arch))
    kind = ("gpt2" if known["SUBWORD"] == "gpt2" else
            "spacy_spm" if known["PARSE"] == "1" else "spm")
    rank, work = env["RANK"], env["WORK"]
    if stage == "prepare":
        if rank != "none" and kind == "spacy_spm":
            fail(f"RANK={rank}: {arch} reads spaCy's parse of the input order; rank the documents "
                 f"in the JSON lines instead")
        if rank != "none" and kind == "gpt2":
            fail(f"RANK={rank}: {arch} reads sentences, not ranked paragraphs")
        if rank == "ranker":
            for var, what in (("RANKER", "the ranker checkpoint"),
                              ("RANKER_DICT", "dict.src.txt of the ranker data-bin")):
                if not os.path.isfile(env.get(var, "")):
                    fail(f"RANK=ranker: set {var} to {what} (a file; got '{env.get(var, '')}')")
        if kind == "gpt2" and not os.path.isdir(env.get("BART", "")):
            fail(f"set BART to the BART folder for {arch} (fairseq model.pt + dict.txt, "
                 f"encoder.json, vocab.bpe, or Hugging Face; got '{env.get('BART', '')}')")
        need_data = kind == "gpt2" or not all(  # gpt2's prepare reads the JSON lines themselves
            os.path.isfile(os.path.join(work, "raw", f"{split}.tgt")) for split in SPLITS)
        if need_data and not os.path.isdir(env.get("DATA", "")):
            fail(f"set DATA to the folder of train.jsonl, valid.jsonl, test.jsonl (got "
                 f"'{env.get('DATA', '')}')")
    if stage == "train" and known["PRETRAINED"] and not os.path.isdir(env.get("BART", "")):
        fail(f"set BART to the {known['PRETRAINED']} folder for {arch} (got "
             f"'{env.get('BART', '')}')")
    run = env.get("RUN") or arch
    return [*known.items(), ("ARCH", arch), ("KIND", kind),
            ("BIN", os.path.join(work, kind, "data-bin")), ("RUN", run),
            ("DIR", os.path.join(work, "runs", run))]


def main(argv) -> None:
    env = dict(os.environ)
    check_variables(env)
    if len(argv) > 1:
        sys.stdout.write(shell_assignments(arch_facts(argv[0], argv[1], env)))


if __name__ == "__main__":
    main(sys.argv[1:])
