"""The papers' ROUGE evaluations, one entry each in :data:`PROTOCOLS`: how the hypotheses and
references are normalised before scoring (one function each, file in, bytes out) and which
ROUGE-1.5.5 runs score them. The normalisations write what the papers' published scripts write,
byte for byte. Specification: docs/run-folder.md, "Protocols".
Imports ``preparation`` (WikiSum's reference form, PTB tokenisation), ``scoring`` (reference
lists).
"""

import json
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple

from ..preparation.ptb_tokenize import PTBTokenizer, tokenized_lines
from ..preparation.wikisum import Converter
from ..scoring.rouge import read_references

#: hiersumm's replacement of fairseq's unknown word (ROUGE-1.5.5 reads a sentence only up to
#: its first '<', so a kept "<unk>" would cut the rest of its sentence from the score)
UNK = "UNK"


def copied(path: str) -> bytes:
    """The file as it is."""
    with open(path, "rb") as f:
        return f.read()


def hiersumm_hypothesis(line: str) -> str:
    """One detokenised hypothesis in the form of the WikiSum references
    (:meth:`fairseq_hier.preparation.wikisum.Converter.reference`: lowercased, sentences split
    at ``<Q>`` and joined by `` <q> ``), with ``<unk>`` written ``UNK`` as hiersumm's
    ``Translator.translate`` writes it (nlpyang/hiersumm, src/abstractive/predictor_builder.py).
    An empty hypothesis stays an empty line."""
    return Converter.reference(line).replace("<unk>", UNK)


def hiersumm_hypotheses(path: str) -> bytes:
    """:func:`hiersumm_hypothesis` on every line (lines end at ``\\n`` only)."""
    with open(path, encoding="utf-8", newline="\n") as f:
        return "".join(hiersumm_hypothesis(line) + "\n" for line in f).encode("utf-8")


def parsingsum_hypotheses(path: str) -> bytes:
    """``<unk>`` -> ``UNK``, then every ``<`` and ``>`` -> a space (the ParsingSum recipes'
    ``sed -e 's/<unk>/UNK/g' -e 's/[<>]/ /g'``)."""
    return markup_spaced(copied(path).replace(b"<unk>", UNK.encode()))


def parsingsum_references(path: str) -> bytes:
    """Every ``<`` and ``>`` -> a space (``sed -e 's/[<>]/ /g'``): ROUGE-1.5.5 reads a sentence
    only up to its first ``<``, and drops non-alphanumerics itself."""
    return markup_spaced(copied(path))


def markup_spaced(data: bytes) -> bytes:
    return data.replace(b"<", b" ").replace(b">", b" ")


def ptb_lines(path: str) -> bytes:
    """Every line PTB-tokenised (:mod:`fairseq_hier.preparation.ptb_tokenize`, the step
    fairseq's BART recipe runs with CoreNLP), as ``fairseq-hier-ptb-tokenize`` writes it."""
    return "".join(tokenized_lines(path)).encode("utf-8")


def ptb_reference_lists(path: str) -> bytes:
    """Each reference of a JSON-lines file of reference lists PTB-tokenised, one JSON list a
    line (non-ASCII kept as it is)."""
    tokenize = PTBTokenizer()
    return "".join(json.dumps([tokenize(r) for r in refs], ensure_ascii=False) + "\n"
                   for refs in read_references([path])).encode("utf-8")


@dataclass(frozen=True)
class RougeRun:
    """One ROUGE-1.5.5 run (``fairseq-hier-rouge REFS HYPS -zs``) and its report
    ``SUBSET.REPORT.txt``: ``eos`` the sentence end that splits summaries (``-e``),
    ``also_rouge_score`` rouge-score's F1 block under the report."""

    report: str = "rouge"
    eos: str = "."
    also_rouge_score: bool = False


@dataclass(frozen=True)
class Protocol:
    """A paper's evaluation: ``hypotheses`` and ``references`` give ``SUBSET.hyp`` and
    ``SUBSET.ref`` from ``SUBSET.hyp.raw`` and the references; ``reference_lists`` gives
    ``SUBSET.refs.jsonl`` from the multi-references (None: one reference per example only);
    ``runs`` the ROUGE runs, on the multi-references when there are some."""

    name: str
    paper: str
    hypotheses: Callable[[str], bytes]
    references: Callable[[str], bytes]
    reference_lists: Optional[Callable[[str], bytes]]
    runs: Tuple[RougeRun, ...]


PROTOCOLS: Dict[str, Protocol] = {p.name: p for p in (
    Protocol("plain", "your own data: the hypotheses and references as they are",
             copied, copied, copied, (RougeRun(),)),
    Protocol("hiersumm", "WikiSum, Liu & Lapata 2019 (hiersumm's evaluation: lowercased, "
                         "sentences split at <q>, <unk> -> UNK)",
             hiersumm_hypotheses, copied, None, (RougeRun(eos="<q>", also_rouge_score=True),)),
    Protocol("parsingsum", "Multi-News and WCEP, ParsingSum (003; '<' and '>' spaced out, "
                           "summary-level and whole-summary ROUGE-L)",
             parsingsum_hypotheses, parsingsum_references, None,
             (RougeRun(also_rouge_score=True), RougeRun("rouge_whole", eos="<nosplit>"))),
    Protocol("ptb", "HAT (004), fairseq's BART recipe: PTB-tokenised hypotheses and references",
             ptb_lines, ptb_lines, ptb_reference_lists, (RougeRun(also_rouge_score=True),)),
)}
DEFAULT_PROTOCOL = "plain"
