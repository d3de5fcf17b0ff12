"""Pipeline ``sentence_bos`` (task ``hat_summarization``, paper 004): a raw document -> the source
line ``fairseq-hier-sentence-bos`` writes for it (GPT-2 BPE ids with BART's dictionary, ``<s>``
before every sentence, cut at sentence boundaries to ``max_source_positions``), and a hypothesis
-> text as the recipes' decode step gives it (``fairseq-generate --bpe gpt2``'s ``D-`` line).

The record's options and how each ``format`` gives sentences: docs/inference.md, section
fairseq_hier.inference.sentence_pipeline.
Imports ``data``, ``preparation``, ``inference``; fairseq inside functions.
"""

import logging
import re
from typing import List

from ..data.bart_files import check_gpt2_files
from ..readers.own_data import document_sentences
from ..readers.qmsum import load_filler_words, meeting_turns
from ..readers.records import (MAX_SPAN_WORDS, Record, article_fields, collapse,
                               pysbd_sentences, split_long_spans, split_t_tagged)
from ..preparation.sentence_bos import FORMATS, SentenceBOSEncoder
from ..readers.samsum import parse_dialogue
from .pipeline_base import InputError, Pipeline, RawExample, RecordError, register_pipeline

logger = logging.getLogger(__name__)
_LINE_END = re.compile(r"\r?\n")


def _record_error(where: str, message: str):
    return RecordError(f"{where}: {message}")


@register_pipeline
class SentenceBOSPipeline(Pipeline):
    """A raw document -> ``fairseq-hier-sentence-bos``'s source line; GPT-2 BPE ids -> text."""

    name = "sentence_bos"
    TASKS = ("hat_summarization",)
    OPTIONS = {
        "format": ("source_target", "fairseq-hier-sentence-bos --format: how a document gives "
                                    "sentences (cohan / presumm: one a line; source_target: "
                                    "pysbd, or its <t> tags; samsum / qmsum: 'Speaker: "
                                    "utterance' turns; jsonl: every document of the example, "
                                    "each as source_target)"),
        "max_source_positions": (1024, "fairseq-hier-sentence-bos --max-source-positions: source "
                                       "tokens incl. every BOS and the EOS; cut at sentence "
                                       "boundaries"),
        "lowercase": (False, "lowercase the document first (arXiv/PubMed: their text was "
                             "published lowercased)"),
        "filler_words": (False, "qmsum: drop the words of the asset filler_words.txt "
                                "(fairseq-hier-sentence-bos --filler-words)"),
        "split_lines": (False, "cohan / presumm: split every line into sentences with pysbd "
                               "(new text written in paragraphs; fairseq-hier summarize "
                               "--split-sentences), instead of reading a line as one sentence"),
    }
    ASSETS = ("encoder.json", "vocab.bpe")

    @classmethod
    def check_options(cls, options: dict, where: str) -> None:
        if options["format"] not in FORMATS:
            raise _record_error(where, f"option format={options['format']!r} is not one of "
                                       f"{', '.join(sorted(FORMATS))}")
        n = options["max_source_positions"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 3:
            raise _record_error(where, f"option max_source_positions must be an integer >= 3, "
                                       f"got {n!r}")
        for key in ("lowercase", "filler_words", "split_lines"):
            if not isinstance(options[key], bool):
                raise _record_error(where, f"option {key} must be true or false")
        if options["split_lines"] and options["format"] not in ("cohan", "presumm"):
            raise _record_error(where, f"option split_lines applies to a model trained on one "
                                       f"sentence a line (format cohan or presumm), not format "
                                       f"{options['format']}")
        if options["filler_words"] and options["format"] != "qmsum":
            raise _record_error(where, "option filler_words applies to format qmsum only")

    @classmethod
    def required_assets(cls, options: dict):
        return cls.ASSETS + (("filler_words.txt",) if options["filler_words"] else ())

    def __init__(self, options: dict, assets):
        super().__init__(options, assets)
        self._encoder = self._decoder = None
        self._bpe_checked = False  # the GPT-2 BPE assets are checked once, when first needed
        self._fillers = frozenset()
        if self.options["filler_words"]:
            self._fillers = load_filler_words(self.assets.path("filler_words.txt"))

    @property
    def encoder(self):
        """fairseq-hier-sentence-bos's encoder with the recorded source limit (the target is
        not encoded: the summary is empty)."""
        if self._encoder is None:
            self.check_bpe_files()
            self._encoder = SentenceBOSEncoder(
                self.assets.path("encoder.json"), self.assets.path("vocab.bpe"),
                self.options["max_source_positions"], max_target_positions=2)
        return self._encoder

    def check_bpe_files(self) -> None:
        """The assets ``encoder.json`` / ``vocab.bpe`` are GPT-2 BPE files (one line naming the
        file otherwise, before fairseq's loader reads them)."""
        if not self._bpe_checked:
            check_gpt2_files(self.assets.path("encoder.json"), self.assets.path("vocab.bpe"))
            self._bpe_checked = True

    # ------------------------------------------------------------------ steps
    def record(self, text: str, where: str):
        """The reader's :class:`~fairseq_hier.readers.records.Record` of a raw document (its
        sentences, or its text for pysbd) under the recorded format."""
        from collections import Counter

        stats, fmt = Counter(), self.options["format"]
        sentences, source = None, None
        if fmt in ("cohan", "presumm"):
            lines = (collapse(line) for line in _LINE_END.split(text))
            sentences, tagged = split_t_tagged(line for line in lines if line)
            if self.options["split_lines"]:  # paragraphs of new text: pysbd's sentences
                sentences = [s for line in sentences for s in pysbd_sentences(line)]
            # a line of more than MAX_SPAN_WORDS words is a one-line article: pysbd splits it
            sentences = split_long_spans(sentences, MAX_SPAN_WORDS, stats)
            stats["t_tagged_sources"] += int(tagged)
        elif fmt == "source_target":
            sentences, source = article_fields(text, stats)
        else:
            speakers, sentences = parse_dialogue(text, stats)
            if fmt == "qmsum":
                # the turns' utterances (parse_dialogue's sentence is "speaker: utterance")
                turns = [{"speaker": s, "content": t[len(s) + 1:].strip() if s else t}
                         for s, t in zip(speakers, sentences)]
                try:
                    speakers, sentences = meeting_turns(
                        {"meeting_transcripts": turns}, where, self._fillers, stats)
                except ValueError as e:
                    raise InputError(str(e)) from None
        self.counts.update({f"{fmt} reader: {k}": v for k, v in stats.items() if v})
        if not (sentences or source):
            raise InputError(f"{where}: the document has no sentence")
        return Record(id=where, where=where, sentences=sentences, text=source,
                      speakers=None, summary="", summary_sentences=[])

    def documents_record(self, documents: List[str], where: str):
        """Format ``jsonl``: the record of an example's documents, each split as
        ``fairseq-hier-sentence-bos --format jsonl`` splits it
        (:func:`~fairseq_hier.readers.own_data.document_sentences`)."""
        from collections import Counter

        stats = Counter()
        sentences, text = document_sentences(documents, stats)
        self.counts.update({f"jsonl reader: {k}": v for k, v in stats.items() if v})
        if not (sentences or text):
            raise InputError(f"{where}: the documents have no sentence")
        return Record(id=where, where=where, sentences=sentences, text=text,
                      speakers=None, summary="", summary_sentences=[])

    # ------------------------------------------------------------------ API
    def encode(self, example: RawExample) -> List[str]:
        jsonl = self.options["format"] == "jsonl"
        if len(example.documents) != 1 and not jsonl:
            raise InputError(f"{example.where}: {len(example.documents)} documents; "
                             f"hat_summarization summarises one document")
        if example.title:
            self.counts["titles ignored (the sentence_bos source has no title)"] += 1
        documents = example.documents
        if self.options["lowercase"] or self.options["format"] == "presumm":
            documents = [d.lower() for d in documents]
        if jsonl:  # every document, as fairseq-hier-sentence-bos --format jsonl reads them
            record = self.documents_record(documents, example.where)
        else:
            record = self.record(documents[0], example.where)
        try:
            encoded = self.encoder(record)
        except ValueError as e:  # e.g. pysbd found no sentence
            raise InputError(str(e)) from None
        stats = encoded.stats
        if stats["source_truncated"]:
            limit = self.options["max_source_positions"]
            logger.info(f"{example.where}: source cut to {limit} tokens at a sentence boundary: "
                        f"{encoded.sentences} sentence(s) kept, {stats['sentences_dropped']} "
                        f"dropped, {stats['cut_inside_first_sentence']} first sentence cut "
                        f"inside")
            self.counts["sources cut to max_source_positions"] += 1
            self.counts["sentences dropped by the cut"] += stats["sentences_dropped"]
            self.counts["first sentences cut inside"] += stats["cut_inside_first_sentence"]
        return [encoded.source]

    def decode(self, outputs: List[str]) -> str:
        """The hypothesis's GPT-2 BPE ids -> text, by fairseq's ``--bpe gpt2`` decoder (what
        fairseq-generate prints as the ``D-`` line that the recipes score)."""
        (text,) = outputs
        if self._decoder is None:
            from fairseq.data.encoders.gpt2_bpe import GPT2BPE, GPT2BPEConfig

            self.check_bpe_files()
            self._decoder = GPT2BPE(GPT2BPEConfig(
                gpt2_encoder_json=self.assets.path("encoder.json"),
                gpt2_vocab_bpe=self.assets.path("vocab.bpe")))
        return self._decoder.decode(text)
