"""Synthetic text of the preparation benchmarks, deterministic per seed: made-up word types
drawn from a Zipf distribution (:func:`word_sampler`), and news-like English sentences from
about twenty templates over an English lexicon with a Zipf tail of made-up words
(:class:`NewsWriter`; :func:`tokenised`: Cohan et al.'s lowercased ``article_text`` form).
What the text is like and why: docs/benchmarks.md, section prepare_speed.py. The standard
library only.
"""

import itertools
import random
from typing import List, Sequence

TYPES = 60000  # made-up word types of word_sampler


def word_sampler(rng, seed):
    """A function k -> k words drawn by ``rng``, Zipf-distributed over TYPES made-up word types
    (the types themselves fixed by ``seed``)."""
    wrng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    types = ["".join(wrng.choice(letters) for _ in range(wrng.randint(2, 12))) for _ in range(TYPES)]
    cumulative = list(itertools.accumulate(1.0 / rank for rank in range(1, TYPES + 1)))
    return lambda k: rng.choices(types, cum_weights=cumulative, k=k)


FIRST = ("James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Susan "
         "Richard Jessica Joseph Sarah Thomas Karen Charles Nancy Daniel Lisa Matthew Betty "
         "Anthony Margaret Mark Sandra Paul Ashley Steven Emily Andrew Donna Kenneth Michelle "
         "Joshua Carol Kevin Amanda Brian Melissa George Deborah Olga Ahmed Wei Priya").split()
LAST = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez "
        "Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson "
        "White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott "
        "Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell").split()
PLACES = ("London Paris Berlin Washington Chicago Texas California Florida Ohio Boston Madrid "
          "Rome Tokyo Beijing Moscow Sydney Toronto Dublin Brussels Geneva Mumbai Cairo Lagos "
          "Nairobi Seoul Mexico Brazil Canada Germany France Italy Spain Japan China India Russia "
          "Australia Ireland Scotland Wales Manchester Liverpool Denver Atlanta Seattle").split()
ORG_HEADS = ("Commission Council Agency Institute Department Ministry Foundation Association "
             "Bank Authority Committee Service Court University Company Group").split()
ORG_SUFFIXES = ("Inc.", "Corp.", "Ltd.", "Co.")
TITLES = ("Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "Gov.", "Sen.", "Gen.")
NOUNS = ("government company report plan city country police court official people year week "
         "month day law market price number group program system school student family child "
         "party election vote official decision study research team player season game club "
         "hospital patient doctor health care water energy oil gas power budget tax rate cost "
         "deal agreement talks meeting president minister leader member spokesman statement "
         "investigation case trial charge evidence witness victim attack fire storm flood "
         "bridge road building area region border town village station airport flight "
         "network service customer product sale share investor profit loss growth economy "
         "industry worker job union strike protest crowd community village church history "
         "century museum film book song album artist festival audience record data website "
         "phone computer software company board chairman director manager fund project "
         "proposal policy reform measure change risk problem issue question answer result "
         "effect impact response support opposition campaign crisis war peace army soldier "
         "force weapon treaty summit council committee").split()
VERBS = ("announced reported confirmed denied rejected approved launched opened closed "
         "increased reduced raised cut signed won lost joined left received sent built "
         "bought sold found showed suggested expected planned delayed blocked supported "
         "criticized praised ordered arrested charged released accepted reached ended "
         "started completed discussed reviewed examined described revealed welcomed").split()
SAY = ("said", "told reporters", "argued", "warned", "added", "claimed", "noted", "insisted",
       "explained", "acknowledged")
ADJECTIVES = ("new former local national international public private federal major small "
              "large long short early late recent next last first final senior chief main "
              "financial political economic social military medical legal official annual "
              "strong weak high low significant serious critical key important special "
              "previous current possible available similar different several other").split()
ADVERBS = ("also still already now later quickly recently nearly almost probably "
           "reportedly finally initially currently widely largely").split()
PREPOSITIONS = ("in", "at", "on", "for", "with", "after", "before", "during", "against",
                "under", "over", "from", "near", "across")
MONTHS = ("January February March April May June July August September October November "
          "December").split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
WHEN = ("on Tuesday", "last year", "earlier this month", "in recent weeks", "this morning",
        "over the past decade", "at the end of the year", "for the first time since 2008",
        "late on Friday", "within days")
DETERMINERS = ("the", "the", "the", "a", "its", "their", "this", "another")
TAIL = 0.2  # share of the content words drawn from the Zipf tail of made-up types


class NewsWriter:
    """Generates news-like English sentences, deterministic per ``seed``."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.tail = word_sampler(self.rng, seed=f"news{seed}")
        self.templates = (self._report, self._report, self._action, self._action, self._quote,
                          self._dated, self._contrast, self._money, self._percent,
                          self._relative, self._titled, self._question, self._list,
                          self._passive, self._because, self._comparison, self._organisation,
                          self._appositive, self._place, self._contrast, self._because,
                          self._short)

    # --- words and phrases
    def pick(self, words: Sequence[str]) -> str:
        return self.rng.choice(words)

    def noun(self) -> str:
        return self.tail(1)[0] if self.rng.random() < TAIL else self.pick(NOUNS)

    def adjective(self) -> str:
        return self.tail(1)[0] + "ic" if self.rng.random() < TAIL / 4 else self.pick(ADJECTIVES)

    def person(self) -> str:
        last = self.tail(1)[0].capitalize() if self.rng.random() < TAIL else self.pick(LAST)
        return f"{self.pick(FIRST)} {last}"

    def place(self) -> str:
        return self.tail(1)[0].capitalize() if self.rng.random() < TAIL else self.pick(PLACES)

    def organisation(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return f"{self.tail(1)[0].capitalize()} {self.pick(ORG_SUFFIXES)}"
        if r < 0.6:
            return f"the {self.place()} {self.pick(ORG_HEADS)}"
        return f"the {self.pick(ORG_HEADS)} of {self.place()}"

    def np(self, depth: int = 0) -> str:
        words = [self.pick(DETERMINERS)]
        if self.rng.random() < 0.6:
            words.append(self.adjective())
        words.append(self.noun())
        if depth < 1 and self.rng.random() < 0.4:
            words += ["of", self.np(depth + 1)]
        return " ".join(words)

    def pp(self) -> str:
        return f"{self.pick(PREPOSITIONS)} {self.np(1) if self.rng.random() < 0.6 else self.place()}"

    def subject(self) -> str:
        r = self.rng.random()
        if r < 0.35:
            return self.person()
        if r < 0.55:
            return self.organisation()
        return self.np()

    def clause(self) -> str:
        extra = f" {self.pp()}" if self.rng.random() < 0.7 else ""
        extra += f" {self.pp()}" if self.rng.random() < 0.35 else ""
        extra += f" {self.pick(WHEN)}" if self.rng.random() < 0.4 else ""
        adverb = f"{self.pick(ADVERBS)} " if self.rng.random() < 0.25 else ""
        return f"{self.subject()} {adverb}{self.pick(VERBS)} {self.np()}{extra}"

    def number(self) -> str:
        return str(self.rng.choice((self.rng.randint(2, 99), self.rng.randint(100, 9999))))

    # --- sentence templates
    def _report(self):
        more = f", adding that {self.clause()}" if self.rng.random() < 0.4 else ""
        return f"{self.subject()} {self.pick(SAY)} that {self.clause()}{more}."

    def _action(self):
        return f"{self.clause()} {self.pp()}."

    def _quote(self):
        return (f"\"{self.clause()},\" said {self.person()}, a {self.adjective()} "
                f"{self.noun()} at {self.organisation()}.")

    def _dated(self):
        return (f"In {self.pick(MONTHS)} {self.rng.randint(1990, 2024)}, {self.clause()}, "
                f"according to {self.organisation()}.")

    def _contrast(self):
        return f"{self.clause()}, but {self.clause()}."

    def _money(self):
        return (f"{self.subject()} {self.pick(VERBS)} {self.np()} for "
                f"${self.rng.randint(1, 99)}.{self.rng.randint(1, 9)} million on "
                f"{self.pick(DAYS)}.")

    def _percent(self):
        return (f"The {self.noun()} of {self.np(1)} rose by {self.rng.randint(1, 40)}."
                f"{self.rng.randint(0, 9)} percent to {self.number()} in "
                f"{self.rng.randint(1990, 2024)}.")

    def _relative(self):
        return f"{self.np()}, which {self.pick(VERBS)} {self.np()}, {self.pick(VERBS)} {self.np()}."

    def _titled(self):
        return (f"{self.pick(TITLES)} {self.person()} of the U.S. {self.pick(ORG_HEADS)} "
                f"{self.pick(SAY)} the {self.noun()} was {self.adjective()}.")

    def _question(self):
        return f"Why did {self.np()} {self.pick(VERBS)[:-2]} {self.np()} {self.pp()}?"

    def _list(self):
        return (f"{self.subject()} {self.pick(VERBS)} {self.np()}, {self.np()} and "
                f"{self.np()}.")

    def _passive(self):
        return f"{self.np()} was {self.pick(VERBS)} by {self.subject()} {self.pp()}."

    def _because(self):
        return f"{self.clause()} because {self.clause()}."

    def _comparison(self):
        return (f"{self.np()} is {self.rng.choice(('more', 'less'))} {self.adjective()} than "
                f"{self.np()}, {self.person()} {self.pick(SAY)}.")

    def _organisation(self):
        return (f"{self.organisation()} {self.pick(VERBS)} {self.np()} {self.pp()} on "
                f"{self.pick(DAYS)}, {self.pick(MONTHS)} {self.rng.randint(1, 28)}.")

    def _appositive(self):
        return (f"{self.person()}, {self.rng.randint(19, 88)}, {self.pick(VERBS)} {self.np()} "
                f"{self.pp()}.")

    def _place(self):
        return f"In {self.place()}, {self.clause()} {self.pp()}."

    def _short(self):
        return f"{self.subject()} {self.pick(SAY)}."

    def sentence(self) -> str:
        text = self.pick(self.templates)()
        k = 1 if text[0] == '"' else 0  # a quote's first letter
        return text[:k] + text[k].upper() + text[k + 1:]

    def sentences(self, words: int) -> List[str]:
        """Sentences until about ``words`` whitespace words."""
        out, n = [], 0
        while n < words:
            s = self.sentence()
            out.append(s)
            n += len(s.split())
        return out


def tokenised(sentence: str, rng: random.Random) -> str:
    """Cohan et al.'s ``article_text`` form: lowercased, punctuation apart, with the occasional
    ``@xmath`` / ``@xcite`` placeholder of their LaTeX conversion."""
    for mark in ",.?$\"":
        sentence = sentence.replace(mark, f" {mark} ")
    words = sentence.lower().split()
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), f"@xmath{rng.randint(0, 99)}")
    if rng.random() < 0.15:
        words.insert(len(words) - 1, "@xcite")
    return " ".join(words)
