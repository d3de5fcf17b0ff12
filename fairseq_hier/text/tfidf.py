"""The one tf-idf of fairseq-hier: the paragraph graphs and LexRank (:func:`cosine_matrix`), the
``tfidf`` ranking and 002 Table 1's similarity order (:func:`query_cosines`,
:func:`similarity_order`), the attention-cosine gold (:func:`tfidf_vectors`).

- Terms (:func:`terms`): a document's whitespace tokens (sentencepiece pieces as they are),
  lowercased, keeping those with at least one letter or digit (punctuation would link every pair).
- Idf over the documents given (one example's paragraphs), smoothed: ``ln((1 + D) / (1 + df)) + 1``
  (scikit-learn's default); weights = raw counts x idf, each vector L2-normalised.
- Query: its terms weighted by the paragraphs' idf (terms no paragraph has do not count); if none
  is left (no title), the centroid of the paragraph vectors. A document without any term is a
  zero vector (cosine 0). Orders: descending cosine, ties (equal to 12 decimals) in input order.

May import: :mod:`fairseq_hier.errors`, numpy and scikit-learn. Legend: D documents, P paragraphs,
V terms of the collection.
"""

import functools
from typing import List, Sequence

import numpy as np

# cosines equal to 12 decimals are ties: equal cosines summed in another order differ by ~1e-16
TIE_DECIMALS = 12


def terms(tokens: Sequence[str]) -> List[str]:
    """The terms of a token list (module docstring), in order, repeats kept."""
    return [term for term in map(_term, tokens) if term]


@functools.lru_cache(maxsize=1 << 16)
def _term(token: str) -> str:
    """The term of a token: lowercased, or '' if it has no letter or digit."""
    return token.lower() if any(c.isalnum() for c in token) else ""


def _identity(term_list: List[str]) -> List[str]:
    return term_list


def _fit(documents: Sequence[Sequence[str]]):
    """(vectorizer, D x V sparse vectors) of the documents' terms, or (None, None) when no
    document has a term (scikit-learn refuses an empty vocabulary)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    term_lists = [terms(d) for d in documents]
    if not any(term_lists):
        return None, None
    vectorizer = TfidfVectorizer(analyzer=_identity)
    return vectorizer, vectorizer.fit_transform(term_lists)  # D x V, rows of norm 1 or 0


def tfidf_vectors(documents: Sequence[Sequence[str]]) -> np.ndarray:
    """``D x V`` float64 tf-idf vectors of ``documents`` (token lists), idf fit on them; columns:
    the sorted terms; a document without any term is a zero row."""
    _, x = _fit(documents)
    return np.zeros((len(documents), 0)) if x is None else x.toarray()


def cosine_matrix(paragraphs: Sequence[Sequence[str]]) -> np.ndarray:
    """``P x P`` float32 cosines of the paragraphs' tf-idf vectors, in [0, 1]; the diagonal is 1,
    or 0 for a paragraph without any term (similar to nothing, itself included)."""
    p = len(paragraphs)
    _, x = _fit(paragraphs)
    if x is None:
        return np.zeros((p, p), dtype=np.float32)
    g = (x @ x.T).toarray().astype(np.float32)  # P x P
    np.fill_diagonal(g, (np.diff(x.indptr) > 0).astype(np.float32))  # rows with a term
    return np.clip(g, 0.0, 1.0)


def query_cosines(paragraphs: Sequence[Sequence[str]], query: Sequence[str]) -> np.ndarray:
    """``P`` float64 cosines of each paragraph's tf-idf vector with the query's (the centroid of
    the paragraphs when the query has no term of theirs: module docstring)."""
    vectorizer, x = _fit(paragraphs)
    if x is None:
        return np.zeros(len(paragraphs))
    q = vectorizer.transform([terms(query)])  # 1 x V, norm 1 or 0
    if q.nnz:
        return (x @ q.T).toarray().ravel()  # P
    centroid = np.asarray(x.sum(axis=0)).ravel()  # V, not zero: some paragraph has a term
    return x @ (centroid / np.linalg.norm(centroid))  # P


def similarity_order(cosines: Sequence[float]) -> List[int]:
    """Paragraph indices by descending cosine (:func:`query_cosines`), ties in input order: the
    order ``fairseq-hier-rank apply --method tfidf`` writes and ``fairseq-hier-rank eval``
    scores."""
    rounded = np.round(np.asarray(cosines, dtype=np.float64), TIE_DECIMALS)
    return np.argsort(-rounded, kind="stable").tolist()
