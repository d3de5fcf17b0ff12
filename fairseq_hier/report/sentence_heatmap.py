"""HAT's sentence attention of one generated example, read from fairseq-generate's output and
drawn as a heatmap (paper 004, Sec. 6, Figs. 2-3): the figure of ``fairseq-hier-analyse
heatmap`` and of the report.

fairseq-generate ``--print-sentence-attention`` writes, after each ``H-<id>`` line, an
``A-<id><TAB>steps`` line: steps separated by spaces, each step the sentences' weights separated
by commas (:mod:`fairseq_hier.generation.sentence_attention`'s ``format_sentence_alignment``).
Rows of the heatmap are target steps (the ``H-`` tokens and the final ``</s>``), columns the
source sentences 1..N, colour the weight. With GPT-2's ``encoder.json`` (BART: the ``H-`` tokens
are GPT-2 BPE ids) each row is labelled with its decoded text piece, a leading space shown as
``▁``.

Standard library only at import; matplotlib is imported when a figure is drawn.
"""

from typing import Dict, List, Sequence, Tuple

from ..errors import HierError
from ..io import read_lines

SPACE = "\u2581"  # '▁', as SentencePiece shows a word start


def bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's byte -> printable character table (``encoder.json`` keys are written with it):
    printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100 onwards."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {b: chr(b) for b in keep}, 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def gpt2_labels(tokens: Sequence[str], encoder_json: Dict[str, int]) -> List[str]:
    """GPT-2 BPE ids (as strings) -> their text pieces; other tokens (``<unk>``, ids missing
    from ``encoder_json``) are kept as they are. A byte piece that is not a whole UTF-8
    character shows as U+FFFD."""
    pieces = {str(i): piece for piece, i in encoder_json.items()}
    byte_of = {c: b for b, c in bytes_to_unicode().items()}
    labels = []
    for token in tokens:
        piece = pieces.get(token)
        if piece is None:
            labels.append(token)
            continue
        raw = b"".join(bytes([byte_of[c]]) if c in byte_of else c.encode() for c in piece)
        text = raw.decode("utf-8", errors="replace")
        labels.append(text.replace(" ", SPACE).replace("\n", "\\n"))
    return labels


def top_k_renormalise(rows: Sequence[Sequence[float]], k: int) -> List[List[float]]:
    """Per row (target step), keep the ``k`` largest weights (ties: the earlier sentence),
    zero the others and rescale the kept ones to sum 1; ``k`` 0 keeps every weight."""
    out = []
    for row in rows:
        if k <= 0 or k >= len(row):
            out.append(list(row))
            continue
        kept = set(sorted(range(len(row)), key=lambda j: -row[j])[:k])
        total = sum(row[j] for j in kept)
        out.append([row[j] / total if j in kept and total > 0 else 0.0 for j in range(len(row))])
    return out


def parse_sentence_alignment(payload: str) -> List[List[float]]:
    """The payload of an ``A-<id>`` line (after the tab) -> ``T x N`` floats, one row per step.

    Raises ValueError (one line) if a weight is not a number or the steps have different widths.
    """
    rows: List[List[float]] = []
    for t, step in enumerate(payload.split(), start=1):
        try:
            rows.append([float(w) for w in step.split(",")])
        except ValueError:
            raise HierError(f"step {t} ({step[:40]!r}) is not comma-separated weights "
                            f"(one per source sentence, as the sentence attention is "
                            f"printed)") from None
        if len(rows[-1]) != len(rows[0]):
            raise HierError(f"step {t} has {len(rows[-1])} weights, step 1 has {len(rows[0])} "
                            f"(one weight per source sentence expected at every step)")
    return rows


def read_example(path: str, example_id: int,
                 hypothesis: int = 0) -> Tuple[List[str], List[List[float]]]:
    """The ``H-`` tokens and the ``A-`` weights (``T x N``, T = tokens + 1) of one hypothesis of
    one example of a fairseq-generate output; ValueError (one line) when they cannot be read."""
    hyps, aligns = [], []  # (line number, payload)
    for n, line in enumerate(read_lines(path), start=1):
        for prefix, found in ((f"H-{example_id}\t", hyps), (f"A-{example_id}\t", aligns)):
            if line.startswith(prefix):
                found.append((n, line[len(prefix):]))
    if not hyps:
        raise HierError(f"{path} has no hypothesis for example {example_id} "
                        f"(no H-{example_id} line)")
    if hypothesis >= len(hyps):
        raise HierError(f"example {example_id} has {len(hyps)} hypotheses in {path}; "
                        f"--hypothesis {hypothesis} does not exist (0..{len(hyps) - 1})")
    if hypothesis >= len(aligns):
        raise HierError(f"{path} has no A-{example_id} line for hypothesis {hypothesis} of "
                        f"example {example_id}: run fairseq-generate with "
                        f"--print-sentence-attention")
    score_and_text = hyps[hypothesis][1].split("\t", 1)  # H-<id>\tscore\ttokens
    tokens = score_and_text[1].split() if len(score_and_text) == 2 else []
    line, payload = aligns[hypothesis]
    try:
        rows = parse_sentence_alignment(payload)
    except ValueError as e:
        raise HierError(f"{path} line {line} (A-{example_id}): {e}") from None
    if len(rows) != len(tokens) + 1:
        raise HierError(f"{path} line {line}: A-{example_id} has {len(rows)} steps, "
                        f"H-{example_id} has {len(tokens)} tokens: expected {len(tokens) + 1} "
                        f"(one per H- token plus the final </s>; H- lines written with "
                        f"--post-process, or missing the <s> tokens fairseq drops, do not fit)")
    return tokens, rows


def heatmap_figure(rows: List[List[float]], labels: List[str], title: str):
    """A ``T x N`` heatmap (rows = target steps, columns = sentences 1..N) as a matplotlib
    ``Figure`` (object API, no pyplot: no global backend or state).

    The figure grows with T and N so that 8-pt labels stay readable (tested up to 60 steps and
    100 sentences); every sentence is ticked up to 40 sentences, beyond that 1 and every 5th."""
    try:
        from matplotlib.figure import Figure  # no pyplot: no global backend or state
    except ImportError:
        raise HierError("matplotlib is not installed (scripts/install.sh installs it)") from None

    steps, sentences = len(rows), len(rows[0])
    column = 0.22 if sentences <= 40 else 0.12  # inches per sentence
    label_width = 0.07 * max(len(label) for label in labels)
    width = 2.5 + label_width + column * sentences  # inches
    fig = Figure(figsize=(width, 1.6 + 0.2 * steps), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(rows, aspect="auto", cmap="Blues", vmin=0.0, interpolation="nearest")
    ticks = range(1, sentences + 1) if sentences <= 40 else [1, *range(5, sentences + 1, 5)]
    ax.set_xticks([t - 1 for t in ticks], [str(t) for t in ticks], fontsize=8)
    # '$' would start matplotlib's mathtext
    ax.set_yticks(range(steps), [label.replace("$", r"\$") for label in labels], fontsize=8)
    ax.set_xlabel("source sentence (BOS)", fontsize=9)
    ax.set_ylabel("target token", fontsize=9)
    ax.set_title(title, fontsize=9)
    bar = fig.colorbar(image, ax=ax, fraction=min(0.15, 0.6 / width))  # ~0.5 in wide at most
    bar.ax.tick_params(labelsize=8)
    return fig
