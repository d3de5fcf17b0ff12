"""One generated example's sentence-attention heatmap drawn to an image file (paper 004, Sec. 6,
Figs. 2-3): fairseq-generate's ``H-``/``A-`` lines of the example read, its rows labelled (GPT-2
pieces decoded with BART's ``encoder.json``), cut and renormalised, and the figure of
:mod:`fairseq_hier.report.sentence_heatmap` saved whole or not at all (``fairseq-hier-analyse
heatmap`` documents the input and options). Importing this module is light (standard library only);
matplotlib is imported when drawing.
"""

import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.io import read_lines, staged_outputs
from fairseq_hier.report.sentence_heatmap import (gpt2_labels, heatmap_figure, read_example,
                                                  top_k_renormalise)


def draw_heatmap(rows: List[List[float]], labels: List[str], out: str, title: str,
                 inputs: Sequence[str] = ()) -> None:
    """Save a ``T x N`` heatmap (:func:`~fairseq_hier.report.sentence_heatmap.heatmap_figure`)
    as ``out``, in the format its extension names (whole or not at all; never over one of
    ``inputs``)."""
    fig = heatmap_figure(rows, labels, title)
    image_format = os.path.splitext(out)[1][1:].lower() or "png"
    formats = fig.canvas.get_supported_filetypes()
    if image_format not in formats:
        raise HierError(f"--out {out}: no image format {image_format!r} (known: "
                        f"{', '.join(sorted(formats))})")
    with staged_outputs([out], inputs) as (staged,):
        fig.savefig(staged, format=image_format)


def heatmap(path: str, example_id: int, out: str, hypothesis: int = 0,
            encoder_json: Optional[str] = None, top_k: int = 0,
            max_steps: Optional[int] = None) -> Tuple[int, int]:
    """Read, label, select and draw one example; returns the drawn matrix size ``(T, N)``."""
    tokens, rows = read_example(path, example_id, hypothesis)
    labels = tokens if encoder_json is None else gpt2_labels(tokens, _read_json(encoder_json))
    labels = labels + ["</s>"]
    if max_steps is not None:
        rows, labels = rows[:max_steps], labels[:max_steps]
    rows = top_k_renormalise(rows, top_k)
    shown = f", top-{top_k} renormalised" if 0 < top_k < len(rows[0]) else ""
    draw_heatmap(rows, labels, out, f"example {example_id}, hypothesis {hypothesis}{shown}",
                 inputs=[path, encoder_json])
    return len(rows), len(rows[0])


def _read_json(path: str) -> Dict[str, int]:
    """GPT-2's ``encoder.json`` (piece -> id); ValueError (one line) if unreadable."""
    try:
        table = json.loads("\n".join(read_lines(path)))
    except json.JSONDecodeError as e:
        raise HierError(f"{path} is not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(table, dict):
        raise HierError(f"{path} is not GPT-2's encoder.json (a JSON object piece -> id)")
    return table
