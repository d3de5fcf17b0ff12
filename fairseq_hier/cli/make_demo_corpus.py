"""Generate the demo's synthetic multi-document summarisation corpus (deterministic per seed).

Each example is about one made-up place, the *entity*; its name (1-2 tokens from a closed set of
300 names) is the title. The summary states 3-5 facts about it (attribute -> value, each value from
a small closed vocabulary) in a fixed order with a few templates, e.g.::

    kalon is a harbour in velmoria . it was founded in 1785 by aldric . it is known for its silk .

The source is ``title <P> paragraph <P> paragraph ...`` (6-12 paragraphs of 10-40 tokens):

- *relevant* paragraphs each state one or two of the facts (never in the summary's phrasing),
  always with the entity's name, padded with filler sentences; together they cover the summary's
  facts and no single one holds them all; sometimes an extra one restates a fact;
- *distractors*: paragraphs stating the same kinds of facts about *other* places (only the name
  tells them apart), paragraphs that mention the entity but state no fact, and pure filler;
- paragraphs come in ranked order with noise: a relevant paragraph scores N(1, noise), a
  distractor N(0, noise), sorted by score; relevant ones tend to be near the top, but not always.

So a model has to read several paragraphs, keep the facts of the title's entity and put them into
the summary template; Lead (the first K tokens) gets few of the summary's bigrams.

Writes ``{train,valid,test}.src`` and ``.tgt`` (one example per line, lowercase, whitespace
tokens; ``<P>`` is only the paragraph separator). Each split has its own RNG stream (seeded from
``--seed`` and the split's name), so a split does not change when another split's size does; the
vocabularies are fixed (independent of the seed).

    fairseq-hier-demo-corpus --out-dir demo/raw --seed 1 --train 4000 --valid 200 --test 200
"""

import argparse
import os
import random
from typing import Dict, List, Sequence, Tuple

SEP = "<P>"
ATTRIBUTES = ["kind", "region", "year", "founder", "product", "river", "month"]  # summary order

# ---------------------------------------------------------------------------------------------
# closed vocabularies (fixed, independent of --seed)
KIND_VERB = {}  # kind -> the summary's verb for "year/founder" ("founded", "built", "planted")
for _verb, _kinds in (("founded", "village town harbour market hamlet port city colony"),
                      ("built", "castle abbey bridge mill fortress lighthouse monastery tower "
                                "chapel palace observatory library"),
                      ("planted", "garden vineyard orchard estate")):
    for _k in _kinds.split():
        KIND_VERB[_k] = _verb
KINDS = list(KIND_VERB)
PRODUCTS = ("wine silk cheese pottery glass honey timber wool salt copper linen bread cider lace "
            "marble tea rope paper leather olives saffron amber pepper barley tin soap candles "
            "carpets iron herbs").split()
MONTHS = "january february march april may june july august september october november december".split()
YEARS = [str(y) for y in range(1700, 1950, 5)]

_ONSETS = "b d g k l m n p r s t v z th sh".split()
_VOWELS = "a e i o u".split()
_CODAS = "n r s l m".split()


def _make_words(rng: random.Random, n: int, used: set, syllables: Sequence[int], ending: Sequence[str]):
    words = []
    while len(words) < n:
        w = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.choice(syllables)))
        w += rng.choice(ending)
        if w not in used:
            used.add(w)
            words.append(w)
    return words


def _lexicon():
    rng = random.Random("fairseq-hier-demo-lexicon")
    used = set(KINDS) | set(PRODUCTS) | set(MONTHS)
    single = _make_words(rng, 220, used, (2,), _CODAS)
    first = _make_words(rng, 40, used, (2,), ("",))
    second = _make_words(rng, 12, used, (1,), ("ck", "rn", "lt"))
    pairs = [f"{a} {b}" for a in first for b in second]
    rng.shuffle(pairs)
    names = single + pairs[:80]
    regions = _make_words(rng, 30, used, (2,), ("ria", "nia", "via"))
    founders = _make_words(rng, 40, used, (1, 2), ("ric", "wen", "mund", "ulf", "gard"))
    rivers = _make_words(rng, 25, used, (2,), ("ssa", "nna", "rra"))
    return names, regions, founders, rivers


NAMES, REGIONS, FOUNDERS, RIVERS = _lexicon()
VALUES: Dict[str, List[str]] = {"kind": KINDS, "region": REGIONS, "year": YEARS,
                                "founder": FOUNDERS, "product": PRODUCTS, "river": RIVERS,
                                "month": MONTHS}

# ---------------------------------------------------------------------------------------------
# source phrasings of each fact (always with the name; never the summary's phrasing)
PHRASES = {
    "kind": ["locals describe {name} as a quiet {kind} near the hills",
             "the {kind} of {name} draws many visitors",
             "{name} has been a busy {kind} for generations",
             "travellers remember {name} as the {kind} with red roofs",
             "anyone who reaches {name} sees at once what kind of {kind} stands there"],
    "region": ["{name} lies within {region} , beyond the pass",
               "the road through {region} passes close to {name}",
               "{region} counts {name} among its oldest places",
               "maps of {region} show {name} near the border",
               "{name} belongs to the province of {region}"],
    "year": ["since {year} , {name} has grown slowly",
             "the first stones of {name} were laid around {year}",
             "{name} has existed since {year} according to the archives",
             "the archives date the beginnings of {name} to {year}",
             "the story of {name} began during the year {year}"],
    "founder": ["{founder} established {name} long ago",
                "{name} owes its existence to {founder} , a restless traveller",
                "according to legend {founder} chose the site of {name}",
                "the first house of {name} was raised under {founder}",
                "many songs tell how {founder} came to {name}"],
    "product": ["traders praise the {product} made at {name}",
                "{name} sends {product} to every fair nearby",
                "the {product} of {name} is sold far away",
                "each autumn {name} celebrates the new {product}",
                "people travel to {name} to buy fine {product}"],
    "river": ["the {river} flows slowly past {name}",
              "from {name} one can follow the {river} down to the sea",
              "boats on the {river} stop at {name}",
              "{name} grew where the {river} bends",
              "fishermen of {name} cast their nets into the {river}"],
    "month": ["every {month} {name} celebrates with music and dancing",
              "crowds fill {name} each {month} for the great feast",
              "the feast of {name} takes place every {month}",
              "{month} is the busiest time of year at {name}",
              "musicians come to {name} every {month}"],
}
# paragraphs that mention a place but state none of its facts
MENTIONS = ["{name} appears in many old stories", "a long walk leads to {name}",
            "some say {name} is worth the journey", "few people outside the valley have heard of {name}",
            "the painter spent one summer near {name}", "letters from {name} arrive rarely"]

# filler sentences: SUBJECT VERB OBJECT [TAIL]
_SUBJECTS = ("the carters|many travellers|the local guides|a few farmers|the children|most visitors|"
             "the merchants|the shepherds|old women|the musicians|the soldiers|two brothers|"
             "the fishermen|the priests|the teachers|young couples|the painters|the pilgrims").split("|")
_VERBS = ("often talk about|rarely mention|still remember|sometimes visit|write songs about|"
          "argue about|like to describe|walk past|take pictures of|complain about|dream about|"
          "repair|admire|avoid|follow").split("|")
_OBJECTS = ("the view from the hills|the small shops near the square|the cold winters|"
            "the long summer evenings|the narrow streets|the stone walls|the quiet docks|"
            "the old well|the crowded inns|the green meadows|the winding paths|the morning fog|"
            "the bells at noon|the price of salted fish|the stories of the elders|the wooden carts|"
            "the tall trees|the empty fields").split("|")
_TAILS = ("|||at dawn|after the harvest|on rainy days|every week|during the night|"
          "when the wind turns|with great care|without much interest|more than anything else").split("|")


def filler_sentence(rng: random.Random) -> List[str]:
    words = [rng.choice(_SUBJECTS), rng.choice(_VERBS), rng.choice(_OBJECTS), rng.choice(_TAILS)]
    return " ".join(w for w in words if w).split() + ["."]


def summary(name: str, facts: Dict[str, str]) -> str:
    """The reference summary of ``name`` with ``facts`` (attribute -> value; ``kind`` required)."""
    kind = facts["kind"]
    article = "an" if kind[0] in "aeiou" else "a"
    first = f"{name} is {article} {kind}" + (f" in {facts['region']}" if "region" in facts else "")
    sentences = [first]
    verb = KIND_VERB[kind]
    if "year" in facts or "founder" in facts:
        s = f"it was {verb}"
        if "year" in facts:
            s += f" in {facts['year']}"
        if "founder" in facts:
            s += f" by {facts['founder']}"
        sentences.append(s)
    if "product" in facts:
        sentences.append(f"it is known for its {facts['product']}")
    if "river" in facts:
        sentences.append(f"it lies on the river {facts['river']}")
    if "month" in facts:
        sentences.append(f"its festival is held in {facts['month']}")
    return " . ".join(sentences) + " ."


def _paragraph(rng: random.Random, content: List[List[str]], args) -> str:
    """Content sentences in random positions among filler sentences, ~ a random target length."""
    target = rng.randint(args.min_paragraph_tokens, args.max_paragraph_tokens)
    sentences = list(content)
    length = sum(len(s) for s in sentences)
    while length < target or not sentences:
        s = filler_sentence(rng)
        if sentences and length + len(s) > args.max_paragraph_tokens and length >= args.min_paragraph_tokens:
            break
        sentences.insert(rng.randint(0, len(sentences)), s)
        length += len(s)
    return " ".join(w for s in sentences for w in s)


def _fact_sentence(rng: random.Random, name: str, attribute: str, value: str) -> List[str]:
    return rng.choice(PHRASES[attribute]).format(name=name, **{attribute: value}).split() + ["."]


def _entity(rng: random.Random, name: str) -> Dict[str, str]:
    return {"name": name, **{a: rng.choice(VALUES[a]) for a in ATTRIBUTES}}


def make_example(rng: random.Random, args) -> Tuple[str, str]:
    """One (source, target) pair."""
    name, *others = rng.sample(NAMES, 1 + args.max_paragraphs)
    entity = _entity(rng, name)
    n_facts = rng.randint(args.min_facts, args.max_facts)
    chosen = ["kind"] + rng.sample(ATTRIBUTES[1:], n_facts - 1)
    facts = {a: entity[a] for a in ATTRIBUTES if a in chosen}

    # relevant paragraphs: 1..max_facts_per_paragraph facts each, covering all facts
    order = list(facts)
    rng.shuffle(order)
    groups, i = [], 0
    while i < len(order):
        k = rng.randint(1, args.max_facts_per_paragraph)
        if len(order) > 1 and i == 0 and k >= len(order):  # never all facts in one paragraph
            k = len(order) - 1
        groups.append(order[i: i + k])
        i += k
    if rng.random() < args.repeat_prob:
        groups.append([rng.choice(order)])
    relevant = [_paragraph(rng, [_fact_sentence(rng, name, a, facts[a]) for a in g], args) for g in groups]

    n_total = max(rng.randint(args.min_paragraphs, args.max_paragraphs), len(relevant) + 1)
    distractors = []
    for j in range(n_total - len(relevant)):
        u = rng.random()
        if u < args.other_entity_prob:  # facts about another place
            other = _entity(rng, others[j])
            pool = list(facts) if rng.random() < args.confusable_prob else ATTRIBUTES
            attrs = rng.sample(pool, min(len(pool), rng.randint(1, args.max_facts_per_paragraph)))
            content = [_fact_sentence(rng, other["name"], a, other[a]) for a in attrs]
        elif u < args.other_entity_prob + args.mention_prob:  # mentions the entity, no fact
            content = [rng.choice(MENTIONS).format(name=name).split() + ["."]]
        else:
            content = []
        distractors.append(_paragraph(rng, content, args))

    scored = [(rng.gauss(1.0, args.rank_noise), p) for p in relevant]
    scored += [(rng.gauss(0.0, args.rank_noise), p) for p in distractors]
    scored.sort(key=lambda x: -x[0])  # ranked order, with noise
    source = f" {SEP} ".join([name] + [p for _, p in scored])
    return source, summary(name, facts)


def write_split(prefix: str, n: int, rng: random.Random, args) -> Dict[str, float]:
    stats = {"examples": n, "paragraphs": 0, "src_tokens": 0, "tgt_tokens": 0}
    vocab = set()
    with open(prefix + ".src", "w", encoding="utf-8", newline="\n") as fs, \
            open(prefix + ".tgt", "w", encoding="utf-8", newline="\n") as ft:
        for _ in range(n):
            src, tgt = make_example(rng, args)
            fs.write(src + "\n")
            ft.write(tgt + "\n")
            stats["paragraphs"] += src.count(SEP)
            stats["src_tokens"] += len(src.split()) - src.count(SEP)
            stats["tgt_tokens"] += len(tgt.split())
            vocab.update(src.split())
            vocab.update(tgt.split())
    for k in ("paragraphs", "src_tokens", "tgt_tokens"):
        stats[k] /= max(n, 1)
    stats["vocab"] = vocab - {SEP}
    return stats


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train", type=int, default=4000, help="number of training examples")
    parser.add_argument("--valid", type=int, default=200)
    parser.add_argument("--test", type=int, default=200)
    parser.add_argument("--min-paragraphs", type=int, default=6, help="paragraphs per example")
    parser.add_argument("--max-paragraphs", type=int, default=12,
                        help="exceeded only where the facts need more relevant paragraphs (an "
                             "example always has at least one distractor)")
    parser.add_argument("--min-facts", type=int, default=3, help="facts per summary")
    parser.add_argument("--max-facts", type=int, default=5)
    parser.add_argument("--max-facts-per-paragraph", type=int, default=2)
    parser.add_argument("--min-paragraph-tokens", type=int, default=10)
    parser.add_argument("--max-paragraph-tokens", type=int, default=40)
    parser.add_argument("--other-entity-prob", type=float, default=0.5,
                        help="share of distractors stating facts about another place")
    parser.add_argument("--confusable-prob", type=float, default=0.7,
                        help="probability that such a distractor states attributes that the "
                             "summary has (else any attributes)")
    parser.add_argument("--mention-prob", type=float, default=0.2,
                        help="share of distractors mentioning the entity without a fact (rest: filler)")
    parser.add_argument("--repeat-prob", type=float, default=0.3,
                        help="probability of an extra relevant paragraph restating a fact")
    parser.add_argument("--rank-noise", type=float, default=0.8,
                        help="std of the ranking noise (relevant paragraphs score 1, distractors 0)")
    return parser


def check_args(parser: argparse.ArgumentParser, args) -> None:
    if not 1 <= args.min_facts <= args.max_facts <= len(ATTRIBUTES):
        parser.error(f"need 1 <= --min-facts <= --max-facts <= {len(ATTRIBUTES)}")
    if not 2 <= args.min_paragraphs <= args.max_paragraphs:
        parser.error("need 2 <= --min-paragraphs <= --max-paragraphs")
    if args.max_paragraphs + 1 > len(NAMES):
        parser.error(f"--max-paragraphs must be < {len(NAMES)} (the closed set of names)")
    if args.max_facts_per_paragraph < 1:
        parser.error("need --max-facts-per-paragraph >= 1")
    if not 1 <= args.min_paragraph_tokens <= args.max_paragraph_tokens:
        parser.error("need 1 <= --min-paragraph-tokens <= --max-paragraph-tokens")
    if min(args.train, args.valid, args.test) < 0:
        parser.error("split sizes must be >= 0")
    if args.other_entity_prob < 0 or args.mention_prob < 0 or args.other_entity_prob + args.mention_prob > 1:
        parser.error("need --other-entity-prob, --mention-prob >= 0 with a sum <= 1")


def cli_main(argv=None):
    parser = get_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    os.makedirs(args.out_dir, exist_ok=True)
    vocab = set()
    for split in ("train", "valid", "test"):
        rng = random.Random(f"fairseq-hier-demo-{args.seed}-{split}")  # one stream per split
        stats = write_split(os.path.join(args.out_dir, split), getattr(args, split), rng, args)
        vocab |= stats["vocab"]
        print(f"[{split}] {stats['examples']} examples, {stats['paragraphs']:.1f} paragraphs, "
              f"{stats['src_tokens']:.1f} source / {stats['tgt_tokens']:.1f} target tokens on average")
    print(f"wrote {args.out_dir}/{{train,valid,test}}.{{src,tgt}}; vocabulary {len(vocab)} words")


if __name__ == "__main__":
    cli_main()
