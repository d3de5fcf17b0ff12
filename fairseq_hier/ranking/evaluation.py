"""How much of the target the first L paragraphs of a ranking cover, Table 1 of Liu & Lapata
(2019, paper 002): ROUGE-L recall of the concatenated L best paragraphs against the gold target,
for the original order, the tf-idf similarity order of Liu et al. (2018) (the order that
``fairseq-hier-rank apply --method tfidf`` writes) and ranked files, with bootstrap intervals
(``fairseq-hier-rank eval`` documents the orderings and checks).
"""

import logging
from collections import Counter
from typing import List, Sequence, Tuple

from fairseq_hier.data.paragraphs import split_source
from fairseq_hier.errors import HierError
from fairseq_hier.io import batches
from fairseq_hier.preparation.rank_labels import iter_parallel
from fairseq_hier.readers.lines import line_texts, progress_total
from fairseq_hier.text.rouge_ngrams import rouge_l_recall_prefixes, tokenize
from fairseq_hier.text.tfidf import query_cosines, similarity_order
from fairseq_hier.workers import ordered_map

logger = logging.getLogger("fairseq_hier.rank_eval")
BUILTIN = ("original", "similarity")
RESERVED = BUILTIN + ("ci95", "examples")


def prefix_recalls(paragraphs: List[List[str]], target: List[str], ls: Sequence[int]):
    """ROUGE-L recall of the concatenation of the first L paragraphs, for every L in ``ls``."""
    import numpy as np

    lengths = np.cumsum([0] + [len(p) for p in paragraphs[: max(ls)]])
    stops = [int(lengths[min(L, len(paragraphs))]) for L in ls]
    tokens = [t for p in paragraphs[: max(ls)] for t in p]
    return rouge_l_recall_prefixes(tokens, target, stops)


def check_ranked(title, paragraphs, ranked_title, ranked, max_l: int) -> str:
    """'' if ``ranked`` is a valid ranking of the source example, else why not."""
    if ranked_title != title:
        return "its title differs from the source's"
    have, want = Counter(map(tuple, ranked)), Counter(map(tuple, paragraphs))
    if have - want:
        return (f"it holds a paragraph the source line does not "
                f"({' '.join(next(iter(have - want)))[:60]!r})")
    if len(ranked) < min(len(paragraphs), max_l):
        return (f"it holds {len(ranked)} of the source's {len(paragraphs)} paragraphs, fewer than "
                f"the longest measured prefix ({max_l})")
    return ""


def _evaluate_examples(jobs) -> List[Tuple]:
    return [evaluate_example(job) for job in jobs]


def evaluate_example(job) -> Tuple:
    """-> (recalls: one array of len(ls) per ordering, or None; index of the ranked file at
    fault and why; whether the target is empty)."""
    source, target, ranked_lines, separator, lowercase, ls, similarity = job
    title, paragraphs, _ = split_source(source, separator, lowercase)
    target_tokens = tokenize(target, lowercase)
    if not paragraphs:
        return None, (-1, "no paragraph in the source line"), False
    orderings = [paragraphs]
    if similarity:
        order = similarity_order(query_cosines(paragraphs, title))  # fairseq-hier-rank apply's
        orderings.append([paragraphs[i] for i in order])
    for k, line in enumerate(ranked_lines):
        ranked_title, ranked, _ = split_source(line, separator, lowercase)
        why = check_ranked(title, paragraphs, ranked_title, ranked, max(ls))
        if why:
            return None, (k, why), False
        orderings.append(ranked)
    return [prefix_recalls(o, target_tokens, ls) for o in orderings], None, not target_tokens


def bootstrap_intervals(values, resamples: int, seed: int):
    """95% percentile-bootstrap intervals of the column means of ``values`` (n x D), resampling
    rows (examples) -> (low, high), each D."""
    import numpy as np

    n = values.shape[0]
    rng = np.random.default_rng(seed)
    means = []
    for start in range(0, resamples, 100):
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=min(100, resamples - start))
        means.append(counts @ values / n)  # r x D
    means = np.concatenate(means)
    return np.percentile(means, 2.5, axis=0), np.percentile(means, 97.5, axis=0)


def parse_ranked(specs: List[str]) -> List[Tuple[str, str]]:
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise HierError(f"--ranked {spec!r}: expected NAME=FILE")
        if name in RESERVED or name in (n for n, _ in out):
            raise HierError(f"--ranked {spec!r}: the name {name!r} is taken (reserved: "
                            f"{', '.join(RESERVED)})")
        out.append((name, path))
    return out


def format_table(names, ls, means, low, high, n: int, with_ci: bool) -> str:
    cell = 22 if with_ci else 8
    width = max(12, max(len(x) for x in names) + 2)
    lines = [f"ROUGE-L recall (x100) of the first L paragraphs, concatenated, against the target; "
             f"{n} examples" + ("; [95% bootstrap interval]" if with_ci else ""),
             "method".ljust(width) + "".join(f"L = {L}".rjust(cell) for L in ls)]
    for i, name in enumerate(names):
        cells = [f"{means[i, j]:.2f}" + (f" [{low[i, j]:.2f}, {high[i, j]:.2f}]" if with_ci else "")
                 for j in range(len(ls))]
        lines.append(name.ljust(width) + "".join(c.rjust(cell) for c in cells))
    return "\n".join(lines)


def evaluate_rankings(source: str, target: str, ranked_specs: Sequence[str] = (),
                      ls: Sequence[int] = (5, 10, 20, 40), lowercase: bool = False,
                      separator: str = "<P>", similarity: bool = True, bootstrap: int = 1000,
                      seed: int = 1, workers: int = 1,
                      progress_bar: bool = True) -> Tuple[str, dict]:
    """ROUGE-L recall of the first L paragraphs of every ordering (``original``, ``similarity``
    unless off, each ``NAME=FILE`` of ``ranked_specs``), as ``fairseq-hier-rank eval``
    describes: (the table, the result dict printed as its JSON line)."""
    import numpy as np
    from tqdm import tqdm

    ranked = parse_ranked(list(ranked_specs))
    ls = sorted(set(ls))
    names = ["original"] + (["similarity"] if similarity else []) + \
        [name for name, _ in ranked]
    streams = [line_texts(path) for _, path in ranked]

    def jobs():
        for number, (source_line, target_line) in enumerate(iter_parallel(source, target), 1):
            lines = []
            for (name, path), stream in zip(ranked, streams):
                line = next(stream, None)
                if line is None:
                    raise HierError(f"{path} ({name}) has {number - 1} lines, {source} has "
                                    f"more")
                lines.append(line)
            yield (source_line, target_line, lines, separator, lowercase, ls, similarity)
        for (name, path), stream in zip(ranked, streams):
            if next(stream, None) is not None:
                raise HierError(f"{path} ({name}) has more lines than {source}")

    results = (result for chunk in ordered_map(_evaluate_examples, batches(jobs(), 16), workers,
                                               "rank-eval") for result in chunk)
    rows, empty_targets = [], 0
    for number, (recalls, fault, empty) in enumerate(
            tqdm(results, total=progress_total(target), unit="ex", mininterval=1.0,
                 desc="rank-eval", disable=not progress_bar), start=1):
        if fault is not None:
            k, why = fault
            where = f"{source}:{number}" if k < 0 else \
                f"{ranked[k][1]}:{number} ({ranked[k][0]})"
            raise HierError(f"{where}: {why}")
        rows.append(np.stack(recalls))  # M x K
        empty_targets += empty
    if not rows:
        raise HierError(f"{source} holds no example")
    if empty_targets:
        logger.warning(f"{empty_targets} empty targets: recall 0 for every ordering")
    values = 100 * np.stack(rows)  # n x M x K
    n = len(values)
    means = values.mean(axis=0)  # M x K
    flat = values.reshape(n, -1)
    with_ci = bootstrap > 0
    if with_ci:
        low, high = (x.reshape(means.shape)
                     for x in bootstrap_intervals(flat, bootstrap, seed))
    else:
        low = high = means
    table = format_table(names, ls, means, low, high, n, with_ci)
    result = {name: {str(L): round(float(means[i, j]), 2) for j, L in enumerate(ls)}
              for i, name in enumerate(names)}
    if with_ci:
        result["ci95"] = {name: {str(L): [round(float(low[i, j]), 2), round(float(high[i, j]), 2)]
                                 for j, L in enumerate(ls)} for i, name in enumerate(names)}
    result["examples"] = n
    return table, result
