"""The demo's synthetic multi-document summarisation corpus (deterministic per seed),
with the ground truth of every summary's facts.

Writes ``{train,valid,test}.src`` / ``.tgt`` and ``{split}.facts.jsonl`` (run by
``fairseq-hier-demo corpus``). How examples, distractors and the ranking noise are made, the
baselines' expected scores and the facts file: docs/data-formats.md#the-demo-corpus. Imports
``fairseq_hier.io``.
"""

import json
import os
import random
from typing import Dict, List, Sequence, Tuple

from fairseq_hier.io import atomic_outputs

SEP = "<P>"
HEADING_MARK = ":"  # "name :" opens every paragraph about a place
ATTRIBUTES = ["kind", "region", "founder", "product", "river"]  # summary order

# ---------------------------------------------------------------------------------------------
# closed vocabularies (fixed, independent of --seed; --values keeps the first N of each)
KIND_VERB = {}  # kind -> the summary's verb for the founder ("founded", "built", "planted")
for _verb, _kinds in (("founded", "village harbour town market port hamlet city colony"),
                      ("built", "castle abbey bridge mill fortress lighthouse tower chapel"),
                      ("planted", "garden vineyard orchard estate")):
    for _k in _kinds.split():
        KIND_VERB[_k] = _verb
# ordered so that the first N kinds mix the three verbs
KINDS = ("village castle garden harbour abbey vineyard town bridge orchard market mill estate "
         "port fortress hamlet lighthouse city tower colony chapel").split()
PRODUCTS = ("wine silk cheese pottery glass honey timber wool salt copper linen bread cider lace "
            "marble tea rope paper leather olives").split()

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
    rng = random.Random("fairseq-hier-demo-lexicon-v2")
    used = set(KINDS) | set(PRODUCTS)
    names = _make_words(rng, 120, used, (2,), _CODAS)
    regions = _make_words(rng, 20, used, (2,), ("ria", "nia", "via"))
    founders = _make_words(rng, 20, used, (1, 2), ("ric", "wen", "mund", "ulf", "gard"))
    rivers = _make_words(rng, 20, used, (2,), ("ssa", "nna", "rra"))
    return names, regions, founders, rivers


NAMES, REGIONS, FOUNDERS, RIVERS = _lexicon()
VALUES: Dict[str, List[str]] = {"kind": KINDS, "region": REGIONS, "founder": FOUNDERS,
                                "product": PRODUCTS, "river": RIVERS}
MAX_VALUES = min(len(v) for v in VALUES.values())

# ---------------------------------------------------------------------------------------------
# source phrasings of each fact (always with the name; never the summary's phrasing);
# --phrasings keeps the first N of each
PHRASES = {
    "kind": ["{name} has long been a quiet {kind}",
             "the {kind} of {name} draws many visitors",
             "travellers remember {name} as the {kind} with red roofs",
             "locals describe {name} as a busy {kind}"],
    "region": ["{name} lies within {region}",
               "maps of {region} show {name} near the border",
               "{region} counts {name} among its oldest places",
               "the road through {region} passes close to {name}"],
    "founder": ["{founder} established {name} long ago",
                "the first house of {name} was raised under {founder}",
                "according to legend {founder} chose the site of {name}",
                "{name} owes its existence to {founder}"],
    "product": ["traders praise the {product} made at {name}",
                "{name} sends {product} to every fair nearby",
                "people travel to {name} to buy fine {product}",
                "the {product} of {name} is sold far away"],
    "river": ["the {river} flows slowly past {name}",
              "boats on the {river} stop at {name}",
              "{name} grew where the {river} bends",
              "fishermen of {name} cast their nets into the {river}"],
}
# paragraphs that mention a place but state none of its facts
MENTIONS = ["{name} appears in many old stories", "a long walk leads to {name}",
            "some say {name} is worth the journey", "letters from {name} arrive rarely"]

# filler sentences: SUBJECT VERB OBJECT [TAIL]
_SUBJECTS = ("the carters|many travellers|the local guides|a few farmers|the children|most visitors|"
             "the merchants|the shepherds|old women|the musicians|the soldiers|two brothers").split("|")
_VERBS = ("often talk about|rarely mention|still remember|sometimes visit|write songs about|"
          "argue about|walk past|complain about|admire|avoid").split("|")
_OBJECTS = ("the view from the hills|the small shops near the square|the cold winters|"
            "the long summer evenings|the narrow streets|the stone walls|the old well|"
            "the crowded inns|the green meadows|the morning fog|the bells at noon|"
            "the stories of the elders").split("|")
_TAILS = "|||at dawn|after the harvest|on rainy days|every week|with great care".split("|")


def filler_sentence(rng: random.Random) -> List[str]:
    words = [rng.choice(_SUBJECTS), rng.choice(_VERBS), rng.choice(_OBJECTS), rng.choice(_TAILS)]
    return " ".join(w for w in words if w).split() + ["."]


def summary(name: str, facts: Dict[str, str]) -> str:
    """The reference summary of ``name`` with ``facts`` (attribute -> value; ``kind`` required);
    every sentence names the place."""
    kind = facts["kind"]
    article = "an" if kind[0] in "aeiou" else "a"
    sentences = [f"{name} is {article} {kind}" + (f" in {facts['region']}" if "region" in facts else "")]
    if "founder" in facts:
        sentences.append(f"{name} was {KIND_VERB[kind]} by {facts['founder']}")
    if "product" in facts:
        sentences.append(f"{name} is known for its {facts['product']}")
    if "river" in facts:
        sentences.append(f"{name} lies on the river {facts['river']}")
    return " . ".join(sentences) + " ."


def _paragraph(rng: random.Random, content: List[List[str]], options) -> str:
    """Content sentences in random positions among filler sentences, ~ a random target length."""
    target = rng.randint(options.min_paragraph_tokens, options.max_paragraph_tokens)
    sentences = list(content)
    length = sum(len(s) for s in sentences)
    while length < target or not sentences:
        s = filler_sentence(rng)
        if sentences and length + len(s) > options.max_paragraph_tokens and length >= options.min_paragraph_tokens:
            break
        sentences.insert(rng.randint(0, len(sentences)), s)
        length += len(s)
    return " ".join(w for s in sentences for w in s)


def _fact_sentence(rng: random.Random, name: str, attribute: str, value: str, options) -> List[str]:
    phrase = rng.choice(PHRASES[attribute][: options.phrasings])
    return phrase.format(name=name, **{attribute: value}).split() + ["."]


def _groups(rng: random.Random, attributes: List[str], options) -> List[List[str]]:
    """Split ``attributes`` into paragraphs of 1..max-facts-per-paragraph, never all in one."""
    order = list(attributes)
    rng.shuffle(order)
    groups, i = [], 0
    while i < len(order):
        k = rng.randint(1, options.max_facts_per_paragraph)
        if len(order) > 1 and i == 0 and k >= len(order):
            k = len(order) - 1
        groups.append(order[i: i + k])
        i += k
    return groups


def make_example(rng: random.Random, options) -> Tuple[str, str, dict]:
    """One (source, target, ground truth) triple; see the module docstring."""
    name, *others = rng.sample(NAMES[: options.names], 1 + options.other_entities)
    n_facts = rng.randint(options.min_facts, options.max_facts)
    attributes = [a for a in ATTRIBUTES if a == "kind" or a in rng.sample(ATTRIBUTES[1:], n_facts - 1)]
    facts = {a: rng.choice(VALUES[a][: options.values]) for a in attributes}

    # (score, paragraph, [(entity, attribute, value), ...]) of every paragraph
    paragraphs = []

    def add(relevant: bool, entity: str, group: List[str], values: Dict[str, str]):
        content = [_fact_sentence(rng, entity, a, values[a], options) for a in group]
        if not content and entity:
            content = [rng.choice(MENTIONS).format(name=entity).split() + ["."]]
        score = rng.gauss(1.0 if relevant else 0.0, options.rank_noise)
        text = _paragraph(rng, content, options)
        if entity:  # a document about one place opens with its heading, as a web page's title
            text = f"{entity} {HEADING_MARK} {text}"
        paragraphs.append((score, text, [(entity, a, values[a]) for a in group]))

    groups = _groups(rng, attributes, options)
    if rng.random() < options.repeat_prob:
        groups.append([rng.choice(attributes)])
    for g in groups:
        add(True, name, g, facts)
    for other in others:  # same attributes, every value different from the entity's
        values = {a: rng.choice([v for v in VALUES[a][: options.values] if v != facts[a]]) for a in attributes}
        for g in _groups(rng, attributes, options):
            add(False, other, g, values)
    for _ in range(options.mentions):
        add(False, name, [], {})
    for _ in range(options.fillers):
        add(False, "", [], {})
    paragraphs.sort(key=lambda x: -x[0])  # ranked order, with noise

    truth = {"entity": name, "facts": {a: {"value": v, "paragraphs": []} for a, v in facts.items()},
             "distractors": []}
    for position, (_, _, stated) in enumerate(paragraphs, start=1):
        for entity, a, v in stated:
            if entity == name:
                truth["facts"][a]["paragraphs"].append(position)
            else:
                truth["distractors"].append({"entity": entity, "attribute": a, "value": v,
                                             "paragraph": position})
    source = f" {SEP} ".join([name] + [p for _, p, _ in paragraphs])
    return source, summary(name, facts), truth


SPLITS = ("train", "valid", "test")
SUFFIXES = {"raw": ("src", "tgt", "facts.jsonl"), "jsonl": ("jsonl", "facts.jsonl")}


def write_split(files, n: int, rng: random.Random, options, split: str = "train"
                ) -> Dict[str, float]:
    """Write ``n`` examples to the open files of ``options.format`` (``raw``: ``(src, tgt,
    facts.jsonl)``; ``jsonl``: ``(jsonl, facts.jsonl)``, the JSON lines of your own data with the
    paragraphs as documents); return the statistics."""
    stats = {"examples": n, "paragraphs": 0, "src_tokens": 0, "tgt_tokens": 0}
    vocab = set()
    for i in range(n):
        src, tgt, truth = make_example(rng, options)
        if getattr(options, "format", "raw") == "jsonl":
            title, *paragraphs = src.split(f" {SEP} ")
            files[0].write(json.dumps({"id": f"{split}-{i}", "title": title,
                                       "documents": paragraphs, "summary": tgt}) + "\n")
        else:
            files[0].write(src + "\n")
            files[1].write(tgt + "\n")
        files[-1].write(json.dumps(truth, sort_keys=True) + "\n")
        stats["paragraphs"] += src.count(SEP)
        stats["src_tokens"] += len(src.split()) - src.count(SEP)
        stats["tgt_tokens"] += len(tgt.split())
        vocab.update(src.split())
        vocab.update(tgt.split())
    for k in ("paragraphs", "src_tokens", "tgt_tokens"):
        stats[k] /= max(n, 1)
    stats["vocab"] = vocab - {SEP}
    return stats


def write_corpus(options) -> Tuple[List[Tuple[str, Dict[str, float]]], int]:
    """Write the files ``OUT/{train,valid,test}.{src,tgt,facts.jsonl}`` (``options.format`` raw)
    or ``OUT/{train,valid,test}.{jsonl,facts.jsonl}`` (jsonl) together (or none), ``options``
    holding ``out_dir``, ``seed``, the split sizes ``train``, ``valid``, ``test`` and the
    generator's options (``fairseq-hier-demo corpus``'s, by attribute name); returns each split's
    statistics and the vocabulary size. Both formats hold the same examples for the same seed."""
    suffixes = SUFFIXES[getattr(options, "format", "raw")]
    prefixes = [os.path.join(options.out_dir, split) for split in SPLITS]
    paths = [f"{prefix}.{suffix}" for prefix in prefixes for suffix in suffixes]
    vocab = set()
    stats_of = []
    with atomic_outputs(paths) as handles:  # the files are written together or not at all
        for k, split in enumerate(SPLITS):
            rng = random.Random(f"fairseq-hier-demo-{options.seed}-{split}")  # one stream per split
            files = handles[len(suffixes) * k: len(suffixes) * (k + 1)]
            stats = write_split(files, getattr(options, split), rng, options, split)
            vocab |= stats["vocab"]
            stats_of.append((split, stats))
    return stats_of, len(vocab)
