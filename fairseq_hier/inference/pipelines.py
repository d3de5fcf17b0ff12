"""Inference pipelines: raw documents -> the lines a recipe gave ``fairseq-preprocess``, and model
outputs -> text. One pipeline per kind of preparation, named by a data-bin's preprocessing record
(:mod:`fairseq_hier.inference.record`), each built from the recipe's own functions so that
inference sees exactly what training saw.

- ``paragraphs`` (``hierarchical_summarization``): title and paragraphs -> ``title <P> p1 <P> p2``
  (this module);
- ``sentence_bos`` (``hat_summarization``): :mod:`fairseq_hier.inference.sentence_pipeline`;
- ``doc_chunks`` (``document_translation``): :mod:`fairseq_hier.inference.doc_mt_pipeline`.

A pipeline's ``encode`` returns source lines in the task's raw format (one per example for
summarization, one per chunk for document translation); ``decode`` turns the hypotheses of those
lines (``tgt_dict.string`` of the tokens, as fairseq's ``H-`` lines) into the final text.
"""

import logging
from typing import List, Tuple

from ..data.paragraphs import split_source
from ..preparation.parse import DEFAULT_MODEL, load_parser, parse_lines
from ..preparation.spm import encode_lines
from ..ranking.runtime import Record, Scorer, load_ranker, write_ranked
from ..ranking.tfidf import write_ranked_tfidf
from ..readers.mds import clean
from ..readers.own_data import PARAGRAPH_MODES, split_paragraphs
from . import doc_mt_pipeline, sentence_pipeline  # noqa: F401  (they register by import)
# the base class, the registry and the errors, re-exported: the pipelines' API is this module
from .pipeline_base import (PIPELINES, InputError, Pipeline, RawExample,  # noqa: F401
                            RecordError, choice, post_process, register_pipeline)

logger = logging.getLogger(__name__)


@register_pipeline
class ParagraphPipeline(Pipeline):
    """``hierarchical_summarization``'s raw line from documents: ``title <P> paragraph <P> ...``.

    Steps, each the recipe's own function: paragraphs (each non-blank line of a document, as 002
    splits documents, each block between blank lines, or each document whole, as
    ``fairseq-hier-to-raw`` (``--format multi_news``, ``wcep``, ``jsonl``): the converter's own
    function), a literal separator in the text escaped as the Multi-News conversion does
    (counted); tokens (whitespace, or spaCy as ``fairseq-hier-parse spacy``); lowercasing;
    sentencepiece as ``fairseq-hier-spm encode``; and ranking by a trained paragraph ranker as
    ``fairseq-hier-rank apply`` (keeping ``keep`` paragraphs). The task's ``--max-paragraphs``
    cut applies afterwards, as in training."""

    name = "paragraphs"
    TASKS = ("hierarchical_summarization",)
    OPTIONS = {
        "title": (True, "the raw lines open with the example's title (false: with an empty "
                        "title slot, as fairseq-hier-to-raw writes)"),
        "title_placement": ("first", "first: the title opens the line once (000's PHT/VHT); "
                                     "every: the title slot stays empty and every paragraph "
                                     "opens with 'title <T>', as hiersumm's ranked WikiSum shards "
                                     "(002's liu_ht: its local layers read each paragraph alone; "
                                     "fairseq-hier-to-raw --format wikisum --title-placement)"),
        "title_marker": ("<T>", "the piece between the title and a paragraph's text with "
                                "title_placement=every"),
        "paragraphs": ("lines", "what becomes a paragraph, as fairseq-hier-to-raw --format jsonl "
                                "--paragraphs splits it: lines: every non-blank line of a "
                                "document (002); blocks: every block between blank lines; "
                                "documents: every document (Multi-News, WCEP)"),
        "max_documents": (0, "keep the first N documents of an example, before empty ones are "
                             "dropped (fairseq-hier-to-raw --format jsonl --max-documents; 0: all)"),
        "tokenizer": ("whitespace", "whitespace: split on whitespace; spacy: spaCy's tokens as "
                                    "fairseq-hier-parse spacy writes them"),
        "lowercase": (False, "lowercase the text before subwords"),
        "subword": ("none", "none, or sentencepiece (asset spm.model, as fairseq-hier-spm "
                            "encode)"),
        "rank": ("none", "none: paragraphs in input order; tfidf: by tf-idf similarity to the "
                         "title (else to the paragraphs' centroid), as fairseq-hier-rank apply --method "
                         "tfidf; ranker: by a fairseq-hier paragraph ranker (assets ranker.pt, "
                         "ranker.dict.txt), as fairseq-hier-rank apply"),
        "keep": (0, "paragraphs kept after ranking (fairseq-hier-rank apply --keep; 0: all)"),
        "separator": ("<P>", "the paragraph separator of the raw lines"),
        "post_process": ("none", "fairseq's --post-process of the hypotheses (none, "
                                 "sentencepiece, ...)"),
    }

    @classmethod
    def check_options(cls, options: dict, where: str) -> None:
        choice(options, "paragraphs", PARAGRAPH_MODES, where)
        choice(options, "title_placement", ("first", "every"), where)
        if options["title_placement"] == "every" and not options["title"]:
            raise RecordError(f"{where}: title_placement=every repeats the title in every "
                              f"paragraph; it needs title=true")
        n = options["max_documents"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise RecordError(f"{where}: option max_documents must be an integer >= 0, got "
                              f"{n!r}")
        choice(options, "tokenizer", ("whitespace", "spacy"), where)
        choice(options, "subword", ("none", "sentencepiece"), where)
        choice(options, "rank", ("none", "tfidf", "ranker"), where)
        choice(options, "post_process", ("none", "sentencepiece", "subword_nmt", "@@ ",
                                          "letter", "wordpiece"), where)
        if options["tokenizer"] == "spacy" and options["title_placement"] == "every":
            raise RecordError(f"{where}: title_placement=every puts the title marker into the "
                              f"text that spaCy would parse; use it with tokenizer=whitespace")
        if options["tokenizer"] == "spacy" and options["rank"] != "none":
            raise RecordError(f"{where}: rank={options['rank']} reorders the paragraphs after "
                              f"the spaCy step, whose parse (ParsingSum) follows the input order")
        for key in ("title", "lowercase"):
            if not isinstance(options[key], bool):
                raise RecordError(f"{where}: option {key} must be true or false")

    @classmethod
    def required_assets(cls, options: dict) -> Tuple[str, ...]:
        return ((("spm.model",) if options["subword"] == "sentencepiece" else ())
                + (("ranker.pt", "ranker.dict.txt") if options["rank"] == "ranker" else ()))

    def __init__(self, options: dict, assets):
        super().__init__(options, assets)
        self._sp = self._nlp = self._scorer = None
        # with tokenizer=spacy: the CoNLL-U of every line encoded so far, in order (the parse that
        # ParsingSum's models read, projected on the pieces by fairseq-hier-parse project's rules)
        self.conllu: List[str] = []

    # ------------------------------------------------------------------ steps
    def paragraphs(self, example: RawExample) -> List[str]:
        """The paragraph texts, one line each, separators escaped: the converter's own split
        (:func:`~fairseq_hier.readers.own_data.split_paragraphs`)."""
        return split_paragraphs(example.documents, self.options["paragraphs"], self.counts,
                                self.options["max_documents"])

    def tokenize(self, line: str) -> str:
        """A whole raw line (``title <P> p1 ...``) tokenised as the recipe did."""
        if self.options["tokenizer"] == "whitespace":
            return " ".join(line.split())
        import io

        if self._nlp is None:
            self._nlp = load_parser(DEFAULT_MODEL)
        tok, conllu = io.StringIO(), io.StringIO()
        parse_lines([line], self._nlp, conllu, tok, separator=self.options["separator"])
        self.conllu.append(conllu.getvalue())
        return tok.getvalue().rstrip("\n")

    def subword(self, line: str, where: str) -> str:
        if self.options["subword"] == "none":
            return line
        if self._sp is None:
            import sentencepiece as spm  # imported here: keeps startup light

            self._sp = spm.SentencePieceProcessor(model_file=self.assets.path("spm.model"))
        try:
            return encode_lines(self._sp, [line], self.options["separator"], where=where)[0]
        except ValueError as e:
            raise InputError(str(e)) from None

    def rank(self, line: str, where: str) -> str:
        """``fairseq-hier-rank apply`` on one line: paragraphs by descending ranker score."""
        if self.options["rank"] == "none":
            return line
        import io

        separator, keep = self.options["separator"], self.options["keep"]
        record = Record(1, *split_source(line, separator))
        out = io.StringIO()
        if self.options["rank"] == "tfidf":
            cut = write_ranked_tfidf(record, separator, keep, out, None)
        else:
            scorer = self._ranker()
            (record, logits), = scorer.add(record) + scorer.flush()
            cut = write_ranked(record, logits, separator, keep, out, None)
        self.counts["paragraphs cut by the ranker's keep"] += cut
        return out.getvalue().rstrip("\n")

    def _ranker(self):
        if self._scorer is None:
            import os
            import shutil
            import tempfile

            # the ranker's task reads FOLDER/dict.src.txt once, while loading
            with tempfile.TemporaryDirectory(prefix="hier_ranker_") as folder:
                shutil.copyfile(self.assets.path("ranker.dict.txt"),
                                os.path.join(folder, "dict.src.txt"))
                model, task = load_ranker(self.assets.path("ranker.pt"), folder, cpu=True)
            self._scorer = Scorer(model, task, batch_size=64,
                                  max_tokens=task.cfg.max_paragraph_tokens)
        return self._scorer

    # ------------------------------------------------------------------ API
    def encode(self, example: RawExample) -> List[str]:
        sep = self.options["separator"]
        paragraphs = self.paragraphs(example)
        if not paragraphs:
            raise InputError(f"{example.where}: no paragraph (every document is empty)")
        title = ""
        if self.options["title"]:
            title = clean(example.title or "", self.counts)
        elif example.title:
            self.counts["titles ignored (the model was trained without titles)"] += 1
        if self.options["title_placement"] == "every":
            # hiersumm's layout: " <P> title <T> p1 <P> title <T> p2 ..."
            head = f"{title} {self.options['title_marker']} " if title else ""
            line = f" {sep} " + f" {sep} ".join(head + p for p in paragraphs)
        else:
            line = f"{title} {sep} " + f" {sep} ".join(paragraphs)
        line = self.tokenize(line)
        if self.options["lowercase"]:
            line = line.lower().replace(sep.lower(), sep)
            marker = self.options["title_marker"]
            line = line.replace(marker.lower(), marker)
        line = self.subword(line, example.where)
        return [self.rank(line, example.where)]

    def decode(self, outputs: List[str]) -> str:
        (text,) = outputs
        return post_process(text, self.options["post_process"])

