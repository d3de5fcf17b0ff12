"""The word tokenizers of the document-translation steps, and their inverses for scoring (paper
004 Sec. 4.2; fairseq's WMT recipes): sacremoses (punctuation normalisation, then tokenisation
with aggressive hyphen splitting ``@-@``, no entity escaping) for the languages it has rules for,
jieba for Chinese, Moses' language-independent rules for every other language (``auto``: with
one warning for a language neither of sacremoses nor of the Latin script), ``none`` for text
already tokenised. :func:`choose_tokenizer` decides; :func:`tokenizer` and
:func:`detokenizer` apply. Used by ``fairseq-hier-doc tokenize``, the ``doc_chunks`` pipeline,
and document BLEU.

May import: ``errors`` and the standard library; sacremoses and jieba inside the functions that
need them.
"""

import functools
import logging
import re
from dataclasses import dataclass
from typing import Callable, FrozenSet, Optional

from ..errors import HierError

#: the choices of ``fairseq-hier-doc tokenize --tokenizer`` (and of the record's options)
TOKENIZERS = ("auto", "moses", "jieba", "none")
# the language code given to sacremoses for its language-independent rules ("undetermined")
UNDETERMINED = "und"
#: languages written in the Latin script (ISO 639-1, and a few ISO 639-3 codes without one):
#: Moses' language-independent rules suit them; those with sacremoses rules of their own get
#: those instead
LATIN_SCRIPT_LANGS = frozenset(
    "af an ay az bm br bs ca ceb co cs cy da de ee en eo es et eu ff fi fil fj fo fr fy ga gd gl "
    "gn gv ha haw hmn hr ht hu id ig io is it jv kg ki kl kr ku kw la lb lg li ln lt lu lv mg mh "
    "mi ms mt na nb nd ng nl nn no nr nv ny oc om pl pt qu rm rn ro rw sc se sg sk sl sm sn so sq "
    "ss st su sv sw tk tl tn to tr ts tw ty uz ve vi vo wa wo xh yo za zu".split())
# languages with rules in sacremoses' tokenizer but no non-breaking prefix list (the others
# are read from sacremoses: :func:`moses_languages`)
_MOSES_RULES_WITHOUT_PREFIXES = ("ja", "ko")


def base_language(lang: str) -> str:
    """The language part of a code, lowercased: ``pt_BR``, ``pt-br`` -> ``pt``; ``zh-Hans`` ->
    ``zh``."""
    return lang.replace("_", "-").split("-")[0].lower()


@functools.lru_cache(maxsize=None)
def moses_languages() -> FrozenSet[str]:
    """The languages sacremoses has rules for: a non-breaking prefix list, or (``ja``, ``ko``)
    rules in its tokenizer."""
    from sacremoses.corpus import NonbreakingPrefixes  # lazy: only tokenisation needs it

    return frozenset(NonbreakingPrefixes().available_langs.values()) | frozenset(
        _MOSES_RULES_WITHOUT_PREFIXES)


@dataclass(frozen=True)
class TokenizerChoice:
    """How one language is tokenised (and detokenised for scoring).

    ``kind``: ``moses``, ``jieba`` or ``none``; ``rules``: for Moses, the sacremoses language
    whose rules apply, None for its language-independent rules; ``fallback``: ``auto`` found
    neither rules nor the Latin script for ``lang`` (:meth:`warning` says so)."""

    lang: str
    kind: str
    rules: Optional[str] = None
    fallback: bool = False

    def describe(self) -> str:
        """The tokenizer in words, for logs."""
        if self.kind == "jieba":
            return "jieba word segmentation"
        if self.kind == "none":
            return "none: split at whitespace only, the text kept as is"
        rules = (f"{self.rules} rules" if self.rules is not None
                 else "language-independent rules")
        return f"sacremoses Moses punctuation normalisation and tokenisation ({rules})"

    def describe_detokenizer(self) -> str:
        """Its inverse in words, for the scoring output."""
        if self.kind == "jieba":
            return "spaces between CJK characters removed"
        if self.kind == "none":
            return "none: tokenizer none, tokens joined by single spaces"
        if self.rules is None:
            return (f"sacremoses MosesDetokenizer, language-independent rules (none for "
                    f"{self.lang!r})")
        return f"sacremoses MosesDetokenizer, lang {self.rules}"

    def warning(self) -> str:
        """The one log line of the fallback."""
        return (f"no tokenizer rules for language {self.lang!r} (sacremoses has none and it is "
                f"not among the Latin-script languages): Moses' language-independent rules are "
                f"used; choose otherwise with --tokenizer none (text already tokenised, or a "
                f"script that Moses splits apart: Thai, Hangul), --tokenizer jieba "
                f"(Chinese characters) or --tokenizer moses (this choice, without this warning)")


def choose_tokenizer(lang: str, choice: str = "auto") -> TokenizerChoice:
    """The tokenizer of ``lang`` for ``choice`` (:data:`TOKENIZERS`). ``auto``: jieba for
    Chinese (``zh``), Moses with the language's rules where sacremoses has them, Moses with its
    language-independent rules for the other Latin-script languages and, stated by
    :meth:`TokenizerChoice.warning`, for every other language. ``moses``: Moses with the
    language's rules where sacremoses has them, else its language-independent rules."""
    if choice not in TOKENIZERS:
        raise HierError(f"unknown tokenizer {choice!r} for language {lang!r} (expected one of "
                        f"{', '.join(TOKENIZERS)})")
    base = base_language(lang)
    if choice in ("jieba", "none"):
        return TokenizerChoice(lang, choice)
    if choice == "auto" and base == "zh":
        return TokenizerChoice(lang, "jieba")
    rules = base if base in moses_languages() else None
    fallback = choice == "auto" and rules is None and base not in LATIN_SCRIPT_LANGS
    return TokenizerChoice(lang, "moses", rules, fallback)


def tokenizer(lang: str, choice: str = "auto") -> Callable[[str], str]:
    """A function raw sentence -> space-separated tokens for ``lang`` (:func:`choose_tokenizer`;
    the caller logs the fallback's warning)."""
    chosen = choose_tokenizer(lang, choice)
    if chosen.kind == "none":
        return lambda s: " ".join(s.split())
    if chosen.kind == "jieba":
        import warnings

        with warnings.catch_warnings():  # jieba 0.42.1 imports the deprecated pkg_resources
            warnings.simplefilter("ignore", UserWarning)
            import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return lambda s: " ".join(w for w in jieba.cut(s.strip()) if w.strip())
    from sacremoses import MosesPunctNormalizer, MosesTokenizer  # lazy: a tokenisation step

    lang_rules = chosen.rules or UNDETERMINED
    normalizer, moses = MosesPunctNormalizer(lang=lang_rules), MosesTokenizer(lang=lang_rules)
    if chosen.rules is None:  # sacremoses falls back to English prefixes: no language's list
        moses.NONBREAKING_PREFIXES, moses.NUMERIC_ONLY_PREFIXES = [], []
    return lambda s: moses.tokenize(normalizer.normalize(s.strip()), escape=False,
                                    aggressive_dash_splits=True, return_str=True)


def detokenizer(lang: str, choice: str = "auto") -> Callable[[str], str]:
    """Tokenised text (BPE removed) -> plain text, the inverse of :func:`tokenizer` for the
    same ``choice``: Moses' detokeniser; jieba: the spaces between CJK characters removed;
    ``none``: the tokens joined by single spaces."""
    chosen = choose_tokenizer(lang, choice)
    if chosen.kind == "none":
        return lambda s: " ".join(s.split())
    if chosen.kind == "jieba":
        cjk = re.compile(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])")
        return lambda s: cjk.sub("", s.strip())
    from sacremoses import MosesDetokenizer  # lazy: a scoring step

    moses = MosesDetokenizer(lang=chosen.rules or UNDETERMINED)
    return lambda s: moses.detokenize(s.split())
