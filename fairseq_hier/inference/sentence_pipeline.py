"""Pipeline ``sentence_bos`` (task ``hat_summarization``, paper 004): a raw document -> the source
line ``fairseq-hier-sentence-bos`` writes for it (GPT-2 BPE ids with BART's dictionary, ``<s>``
before every sentence, cut at sentence boundaries to ``max_source_positions``), and a hypothesis
-> text as the recipes' decode step gives it (``fairseq-generate --bpe gpt2``'s ``D-`` line).

The record's options are the prepare step's (``examples/hat_common/prepare.sh`` records them):

    fairseq-hier-record DATA_BIN --task hat_summarization --pipeline sentence_bos \\
        --option format=source_target --option max_source_positions=1024 \\
        --asset encoder.json=bart/encoder.json --asset vocab.bpe=bart/vocab.bpe \\
        --generation "--beam 1 --lenpen 1.0 --min-len 40 --max-len-a 0 --max-len-b 120"

How a raw document (``RawExample.documents``: exactly one, except for ``jsonl``) gives
sentences, per ``format`` (the rules of :mod:`fairseq_hier.data.readers`, by their own
functions):

- ``cohan`` (arXiv, PubMed): every non-blank line is a sentence (the dataset's segmentation),
  whitespace collapsed; a line of more than :data:`~fairseq_hier.data.readers.MAX_SPAN_WORDS`
  words (a one-line article) is split by pysbd and counted
  (:func:`~fairseq_hier.data.readers.split_long_spans`);
- ``presumm`` (CNN/DM as PreSumm's json shards): as ``cohan``, one sentence a line, and the
  document is lowercased whatever ``lowercase`` says (PreSumm's tokens are lowercased; give the
  sentences PTB-tokenised, as its ``src`` sentences are);
- ``source_target`` (CNN/DM, XSum): the text, whitespace collapsed, split by pysbd;
- ``samsum``: ``Speaker: utterance`` lines, one turn each (:func:`~fairseq_hier.data.readers.
  parse_dialogue`: continuation lines, unknown speakers as in the reader);
- ``qmsum`` (AMI): ``speaker: content`` lines as ``samsum``, then the meeting reader's turn rules
  (fillers of the asset ``filler_words.txt`` dropped with ``filler_words=true``, emptied turns
  dropped);
- ``jsonl`` (your own data): every document of the example (several are allowed), each split as
  ``source_target`` splits its text, no sentence spanning two documents
  (:func:`~fairseq_hier.data.own_data.document_sentences`, as ``fairseq-hier-sentence-bos
  --format jsonl``).

In every format, ``<t> ... </t>`` tags are read as the readers read them: a tagged text or line
gives its tagged sentences (tags dropped; pysbd only splits a tagged span longer than
:data:`~fairseq_hier.data.readers.MAX_SPAN_WORDS` words), a tagged dialogue turn loses its tags.

Then :class:`~fairseq_hier.data.sentence_bos.SentenceBOSEncoder` (BPE, BOS markers and the cut)
makes the line. ``lowercase`` lowercases the document first: the arXiv/PubMed recipe records it
(their published text is lowercased, so it changes nothing on their data and brings raw text to
their case). Cuts and reader events are counted in ``self.counts`` (logged by the API). Speaker
segments (``--speakers``) are not produced: a model with segment embeddings refuses raw input
(the task's one-line error).
"""

import logging
import re
from typing import List

from ..data import readers
from ..data.bart_files import check_gpt2_files
from ..data.own_data import document_sentences
from ..data.readers import load_filler_words
from ..data.sentence_bos import FORMATS, SentenceBOSEncoder
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
        for key in ("lowercase", "filler_words"):
            if not isinstance(options[key], bool):
                raise _record_error(where, f"option {key} must be true or false")
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
        """The reader's :class:`~fairseq_hier.data.readers.Record` of a raw document (its
        sentences, or its text for pysbd) under the recorded format."""
        from collections import Counter

        stats, fmt = Counter(), self.options["format"]
        sentences, source = None, None
        if fmt in ("cohan", "presumm"):
            lines = (readers.collapse(line) for line in _LINE_END.split(text))
            sentences, tagged = readers.split_t_tagged(line for line in lines if line)
            # a line of more than MAX_SPAN_WORDS words is a one-line article: pysbd splits it
            sentences = readers.split_long_spans(sentences, readers.MAX_SPAN_WORDS, stats)
            stats["t_tagged_sources"] += int(tagged)
        elif fmt == "source_target":
            sentences, source = readers.article_fields(text, stats)
        else:
            speakers, sentences = readers.parse_dialogue(text, stats)
            if fmt == "qmsum":
                # the turns' utterances (parse_dialogue's sentence is "speaker: utterance")
                turns = [{"speaker": s, "content": t[len(s) + 1:].strip() if s else t}
                         for s, t in zip(speakers, sentences)]
                try:
                    speakers, sentences = readers._meeting_turns(
                        {"meeting_transcripts": turns}, where, self._fillers, stats)
                except ValueError as e:
                    raise InputError(str(e)) from None
        self.counts.update({f"{fmt} reader: {k}": v for k, v in stats.items() if v})
        if not (sentences or source):
            raise InputError(f"{where}: the document has no sentence")
        return readers.Record(id=where, where=where, sentences=sentences, text=source,
                              speakers=None, summary="", summary_sentences=[])

    def documents_record(self, documents: List[str], where: str):
        """Format ``jsonl``: the record of an example's documents, each split as
        ``fairseq-hier-sentence-bos --format jsonl`` splits it
        (:func:`~fairseq_hier.data.own_data.document_sentences`)."""
        from collections import Counter

        stats = Counter()
        sentences, text = document_sentences(documents, stats)
        self.counts.update({f"jsonl reader: {k}": v for k, v in stats.items() if v})
        if not (sentences or text):
            raise InputError(f"{where}: the documents have no sentence")
        return readers.Record(id=where, where=where, sentences=sentences, text=text,
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
