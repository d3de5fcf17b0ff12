"""The report's figures as PNG bytes: training curves and attention heatmaps.

    png = curve_png({"pht": [(100, 3.2), (200, 0.56)]}, "train loss", "update", "loss")

matplotlib's object API (``matplotlib.figure.Figure``, no pyplot: no global backend or state;
PNGs go through the Agg canvas), imported inside the functions. HAT's sentence-attention
heatmaps are :mod:`fairseq_hier.report.sentence_heatmap`'s figure (the one
``fairseq-hier-analyse heatmap`` draws); paragraph attention (attention.json) by
:func:`paragraph_heatmap_png`, which adds the gold paragraph distribution under the weights.
"""

import io
from typing import Dict, List, Optional, Sequence, Tuple
from ..errors import HierError
from ..io import iter_lines
from .sentence_heatmap import gpt2_labels, heatmap_figure, read_example

MAX_STEPS = 60  # target steps drawn per heatmap: a longer summary is cut (said in its title)


def _figure(width: float, height: float, **kw):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise HierError("matplotlib is not installed (scripts/install.sh installs it)") from None
    return Figure(figsize=(width, height), dpi=100, layout="constrained", **kw)


def _png(fig) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def curve_png(series: Dict[str, Sequence[Tuple[float, float]]], title: str, xlabel: str,
              ylabel: str, markers: bool = False) -> bytes:
    """One line per run (``name -> [(x, y), ...]``), all on one axis."""
    fig = _figure(5.3, 3.3)  # two side by side on the page
    ax = fig.add_subplot()
    for name, points in series.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o" if markers else None, markersize=3, linewidth=1.2, label=name)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _escape(label: str) -> str:
    return label.replace("$", r"\$")  # '$' would start matplotlib's mathtext


def paragraph_heatmap_png(rows: List[str], cols: List[str], weights: List[List[float]],
                          gold: Optional[List[float]], title: str) -> bytes:
    """``T x P`` paragraph attention (rows = target tokens, columns = paragraphs), and under it
    the gold paragraph distribution (attention.json's ``gold``) when given."""
    steps, paragraphs = len(rows), len(cols)
    label_width = 0.07 * max(len(r) for r in rows)
    width = 2.5 + label_width + 0.3 * paragraphs  # inches: 8-pt labels stay readable
    height = 1.8 + 0.2 * steps + (0.5 if gold else 0)
    fig = _figure(width, height)
    axes = fig.subplots(2 if gold else 1, 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": [max(steps, 1), 1.5] if gold else [1]})
    ax = axes[0][0]
    image = ax.imshow(weights, aspect="auto", cmap="Blues", vmin=0.0, interpolation="nearest")
    ax.set_yticks(range(steps), [_escape(r) for r in rows], fontsize=8)
    ax.set_ylabel("target token", fontsize=9)
    ax.set_title(title, fontsize=9)
    if gold:
        g = axes[1][0]
        g.imshow([gold], aspect="auto", cmap="Oranges", vmin=0.0, interpolation="nearest")
        g.set_yticks([0], ["gold"], fontsize=8)
    bottom = axes[-1][0]
    bottom.set_xticks(range(paragraphs), [_escape(c) for c in cols], fontsize=8,
                      rotation=90 if paragraphs > 12 else 0)
    bottom.set_xlabel("source paragraph", fontsize=9)
    bar = fig.colorbar(image, ax=[a[0] for a in axes], fraction=min(0.15, 0.6 / width))
    bar.ax.tick_params(labelsize=8)
    return _png(fig)


def sentence_heatmap_png(generate_output: str, example_id: int, title: str,
                         encoder_json: Optional[Dict[str, int]] = None,
                         max_steps: int = MAX_STEPS) -> Tuple[bytes, int, int]:
    """HAT's sentence attention of one example of a ``fairseq-generate
    --print-sentence-attention`` output, drawn by fairseq-hier-analyse heatmap's own functions;
    returns ``(png, steps drawn, steps in all)``."""
    tokens, weights = read_example(generate_output, example_id)
    labels = (tokens if encoder_json is None else gpt2_labels(tokens, encoder_json)) + ["</s>"]
    fig = heatmap_figure(weights[:max_steps], labels[:max_steps], title)
    return _png(fig), min(len(weights), max_steps), len(weights)


def attention_ids(generate_output: str) -> List[int]:
    """The example ids that have an ``A-`` line in a fairseq-generate output, sorted."""
    ids = set()
    for _, line in iter_lines(generate_output):
        if line.startswith("A-"):
            head = line[2:].split("\t", 1)[0]
            if head.isdigit():
                ids.add(int(head))
    return sorted(ids)
