"""The PTB-style tokenisation step before ROUGE that fairseq's BART summarisation recipe runs
(Stanford CoreNLP's ``PTBTokenizer -preserveLines``), with Python libraries instead of Java:
pysbd sentences, NLTK's Penn Treebank word tokenizer, the sentences joined again on their line
(``fairseq-hier-ptb-tokenize`` says why these libraries and what the output looks like). A line
holding the sentence separator ``<q>`` (a reference's sentences,
:func:`fairseq_hier.readers.markup.join_sentences`) keeps it: each sentence is tokenised alone.
"""

from typing import Iterator, List

from fairseq_hier.io import atomic_outputs, read_lines
from fairseq_hier.readers.markup import SENTENCE_SEPARATOR, join_sentences, separated_sentences
from fairseq_hier.readers.records import pysbd_segmenter


class PTBTokenizer:
    """pysbd sentences -> NLTK Treebank tokens, one output line per input line."""

    def __init__(self, lower: bool = False):
        # imported here, not at the top: keeps startup light
        from nltk.tokenize import TreebankWordTokenizer

        self._sentences = pysbd_segmenter()
        self._words = TreebankWordTokenizer()
        self.lower = lower

    def __call__(self, line: str) -> str:
        if SENTENCE_SEPARATOR in line:  # the Treebank tokenizer would split "<q>" up
            return join_sentences(self(s) for s in separated_sentences(line))
        tokens: List[str] = []
        for sentence in self._sentences.segment(line) if line.strip() else []:
            tokens += self._words.tokenize(sentence.strip())
        text = " ".join(tokens)
        return text.lower() if self.lower else text


def tokenized_lines(input_path: str, lower: bool = False) -> Iterator[str]:
    """The tokenised form of every line of ``input_path``, each ending in ``\\n`` (same line
    count), one at a time."""
    lines = read_lines(input_path)
    tokenize = PTBTokenizer(lower)
    for line in lines:
        yield tokenize(line) + "\n"


def tokenize_file(input_path: str, output: str, lower: bool = False) -> None:
    """Write the tokenised form of every line of ``input_path`` to ``output`` (same line count;
    whole or not at all, never over the input)."""
    with atomic_outputs([output], inputs=[input_path]) as (f,):
        for line in tokenized_lines(input_path, lower):
            f.write(line)
