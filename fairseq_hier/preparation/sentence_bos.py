"""Published summarization splits (arXiv/PubMed, CNN/DM, SAMSum, QMSum, ...) and your own data
(the JSON-lines schema) turned into BOS-marked GPT-2 BPE lines for ``fairseq-preprocess`` with
BART's dictionary (paper 004 Sec. 3.1 and 4.1): the readers of :mod:`fairseq_hier.data.readers`
and :mod:`fairseq_hier.data.own_data`, the encoder of
:mod:`fairseq_hier.data.sentence_bos`, and BART's BPE files taken from a folder
(``fairseq-hier-sentence-bos`` documents the options and files).
"""

import logging
import os
from collections import Counter
from typing import Optional

from fairseq_hier.data import readers
from fairseq_hier.data.bart_files import gpt2_bpe_files
from fairseq_hier.data.markup import describe_markup
from fairseq_hier.data.own_data import has_several_summaries
from fairseq_hier.data.sentence_bos import (FORMATS, SUFFIXES, SentenceBOSEncoder,
                                            default_speaker_ids, encode_records, format_totals,
                                            write_split)
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.sentence_bos")


def gpt2_files(gpt2_encoder_json: Optional[str], gpt2_vocab_bpe: Optional[str],
               bart_dir: Optional[str], scratch: str):
    """``(encoder.json, vocab.bpe)``: the two files, or ``bart_dir``'s (derived into ``scratch``
    from a Hugging Face directory)."""
    files = (gpt2_encoder_json, gpt2_vocab_bpe)
    if bart_dir is not None:
        if any(files):
            raise HierError("--bart-dir replaces --gpt2-encoder-json/--gpt2-vocab-bpe: give "
                            "one or the other")
        return gpt2_bpe_files(bart_dir, scratch)
    if not all(files):
        raise HierError("BART's BPE files are needed: --bart-dir DIR, or both "
                        "--gpt2-encoder-json and --gpt2-vocab-bpe")
    return files


def encode_split(layout: str, input_path: str, output_prefix: str, encoder_json: str,
                 vocab_bpe: str, max_source_positions: int, max_target_positions: int,
                 speakers: bool = False, filler_words: Optional[str] = None, workers: int = 1,
                 progress_bar: bool = True, speaker_ids: Optional[str] = None,
                 shard: Optional[Shard] = None,
                 max_span_words: int = readers.MAX_SPAN_WORDS) -> Counter:
    """Read the split ``input_path`` in the published ``layout`` (``--format``) and write its
    BOS-marked GPT-2 BPE files ``output_prefix.*`` (``fairseq-hier-sentence-bos`` documents
    them); logs the counts and returns the totals. ``speaker_ids``: the numbering of the
    speakers (None: the layout's default, AMI's roles for ``qmsum``). ``shard``: only that block
    of the records the reader yields (:mod:`fairseq_hier.data.shards`). ``max_span_words``: the
    readers' limit on a ``<t>``-tagged source sentence (:func:`~fairseq_hier.data.readers.
    split_long_spans`; layouts with ``<t>`` spans only)."""
    stats, skipped = Counter(), []
    kwargs = dict(stats=stats, skipped=skipped)
    if layout in readers.SPAN_READERS:
        kwargs["max_span_words"] = max_span_words
    if layout == "qmsum" and filler_words:
        kwargs["filler_words"] = readers.load_filler_words(filler_words)
    elif filler_words:
        raise HierError("--filler-words applies to --format qmsum only")
    if speaker_ids is not None and not speakers:
        raise HierError("--speaker-ids numbers the speakers that --speakers writes: give both")
    speaker_ids = speaker_ids or default_speaker_ids(layout)
    encoder = SentenceBOSEncoder(encoder_json, vocab_bpe, max_source_positions,
                                 max_target_positions, speakers=speakers,
                                 speaker_ids=speaker_ids)
    if speakers:
        logger.info(f"speaker segments of {input_path}: numbered by {speaker_ids}")
    # several references per example: PREFIX.refs.jsonl beside PREFIX.ref (jsonl only)
    refs = layout == "jsonl" and has_several_summaries(input_path)
    selection = select(shard, [input_path], lambda: sum(1 for _ in FORMATS[layout](
        input_path, **dict(kwargs, stats=Counter(), skipped=[]))), unit="records")
    records = selection.take(FORMATS[layout](input_path, **kwargs))
    examples = encode_records(encoder, records, workers=workers,
                              progress=progress_bar)
    markup = Counter()
    # the files read (source_target: INPUT.source and INPUT.target) are never overwritten
    inputs = [input_path, f"{input_path}.source", f"{input_path}.target", encoder_json,
              vocab_bpe, filler_words]
    totals = write_split(examples, output_prefix, speakers, markup=markup,
                         inputs=inputs, refs=refs)
    stale = f"{output_prefix}.refs.jsonl"
    if layout == "jsonl" and not refs and os.path.isfile(stale):
        os.remove(stale)  # an earlier run's: not these examples'
        logger.info(f"removed {stale}: no example of {input_path} has several summaries")
    mark_outputs([f"{output_prefix}.{s}" for s in SUFFIXES], selection)
    logger.info(f"read {input_path}: {readers.format_stats(stats)}")
    if stats["long_spans_split"] or stats["long_spans_kept_whole"]:
        logger.warning(f"{input_path}: {stats['long_spans_split']} <t> spans longer than "
                       f"{max_span_words} words split by pysbd into "
                       f"{stats['long_span_sentences']} sentences, "
                       f"{stats['long_spans_kept_whole']} kept whole (no boundary found)")
    for line in skipped[:20]:
        logger.info(f"skipped {line}")
    if len(skipped) > 20:
        logger.info(f"... and {len(skipped) - 20} more skipped records")
    if totals["examples"] == 0:
        raise HierError(f"{input_path}: no example left to write")
    logger.info(f"{selection.label}wrote {output_prefix}.*: "
                f"{format_totals(totals, max_source_positions, max_target_positions)}")
    if markup:
        logger.warning(f"{output_prefix}.ref: {totals['references_with_markup']} of "
                       f"{totals['examples']} references hold markup that ROUGE-1.5.5 reads "
                       f"only up to its '<' (kept: it is the dataset's text): "
                       f"{describe_markup(markup)}")
    return totals
