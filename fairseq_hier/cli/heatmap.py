"""Heatmap of HAT's sentence attention for one generated example (paper 004, Sec. 6, Figs. 2-3).

    fairseq-generate data-bin --path hat.pt --print-sentence-attention ... > gen.out
    fairseq-hier-heatmap gen.out --id 3 --out example3.png [--gpt2-encoder-json encoder.json]

Reads fairseq-generate's output (``S-``, ``T-``, ``H-<id><TAB>score<TAB>tokens``, ``D-``, ``P-``,
``A-<id><TAB>steps`` lines; other lines are ignored), takes the ``--hypothesis``-th ``H-``/``A-``
pair of example ``--id`` and draws it: one row per target step (the ``H-`` tokens and the final
``</s>``), one column per source sentence (1..N), colour = attention weight. The ``A-`` payload
is :mod:`fairseq_hier.generation.sentence_attention`'s format (``format_sentence_alignment``,
read back by :func:`parse_sentence_alignment`): steps separated by spaces, each step the
sentences' weights separated by commas.

With ``--gpt2-encoder-json`` (BART: the ``H-`` tokens are GPT-2 BPE ids) each row is labelled
with its decoded text piece, a leading space shown as ``▁``. Bad input gives a one-line error
and exit status 2.

Importing this module is light (standard library only); matplotlib is imported when drawing.
"""

import argparse
import json
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from fairseq_hier.io import read_lines

PROG = "fairseq-hier-heatmap"
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
            raise ValueError(f"step {t} ({step[:40]!r}) is not comma-separated weights "
                             f"(one per source sentence, as the sentence attention is "
                             f"printed)") from None
        if len(rows[-1]) != len(rows[0]):
            raise ValueError(f"step {t} has {len(rows[-1])} weights, step 1 has {len(rows[0])} "
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
        raise ValueError(f"{path} has no hypothesis for example {example_id} "
                         f"(no H-{example_id} line)")
    if hypothesis >= len(hyps):
        raise ValueError(f"example {example_id} has {len(hyps)} hypotheses in {path}; "
                         f"--hypothesis {hypothesis} does not exist (0..{len(hyps) - 1})")
    if hypothesis >= len(aligns):
        raise ValueError(f"{path} has no A-{example_id} line for hypothesis {hypothesis} of "
                         f"example {example_id}: run fairseq-generate with "
                         f"--print-sentence-attention")
    score_and_text = hyps[hypothesis][1].split("\t", 1)  # H-<id>\tscore\ttokens
    tokens = score_and_text[1].split() if len(score_and_text) == 2 else []
    line, payload = aligns[hypothesis]
    try:
        rows = parse_sentence_alignment(payload)
    except ValueError as e:
        raise ValueError(f"{path} line {line} (A-{example_id}): {e}") from None
    if len(rows) != len(tokens) + 1:
        raise ValueError(f"{path} line {line}: A-{example_id} has {len(rows)} steps, "
                         f"H-{example_id} has {len(tokens)} tokens: expected {len(tokens) + 1} "
                         f"(one per H- token plus the final </s>; H- lines written with "
                         f"--post-process, or missing the <s> tokens fairseq drops, do not fit)")
    return tokens, rows


def draw_heatmap(rows: List[List[float]], labels: List[str], out: str, title: str) -> None:
    """Save a ``T x N`` heatmap (rows = target steps, columns = sentences 1..N) as ``out``.

    The figure grows with T and N so that 8-pt labels stay readable (tested up to 60 steps and
    100 sentences); every sentence is ticked up to 40 sentences, beyond that 1 and every 5th."""
    try:
        from matplotlib.figure import Figure  # no pyplot: no global backend or state
    except ImportError:
        raise ValueError("matplotlib is not installed (scripts/install.sh installs it)") from None

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
    fig.savefig(out)


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
    draw_heatmap(rows, labels, out, f"example {example_id}, hypothesis {hypothesis}{shown}")
    return len(rows), len(rows[0])


def _read_json(path: str) -> Dict[str, int]:
    """GPT-2's ``encoder.json`` (piece -> id); ValueError (one line) if unreadable."""
    try:
        table = json.loads("\n".join(read_lines(path)))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(table, dict):
        raise ValueError(f"{path} is not GPT-2's encoder.json (a JSON object piece -> id)")
    return table


def cli_main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("generate_output", help="fairseq-generate's output (stdout) with A- lines")
    parser.add_argument("--id", type=int, required=True, help="example id (the N of H-N)")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument("--hypothesis", type=int, default=0,
                        help="which hypothesis of the example with --nbest > 1 (default 0: the "
                             "first H- line of that id)")
    parser.add_argument("--gpt2-encoder-json", default=None,
                        help="GPT-2's encoder.json: label the H- tokens (BART: GPT-2 BPE ids) "
                             "with their text pieces")
    parser.add_argument("--top-k", type=int, default=0,
                        help="per target token keep the k largest sentence weights, renormalised "
                             "to sum 1 (default 0: all). The paper (004 Figs. 2-3) kept the top "
                             "16 BOS tokens across the heads; our weights are already averaged "
                             "over the heads")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="draw only the first M target steps (default: all)")
    args = parser.parse_args(argv)
    for flag, value, low in (("--top-k", args.top_k, 0), ("--max-steps", args.max_steps, 1),
                             ("--hypothesis", args.hypothesis, 0), ("--id", args.id, 0)):
        if value is not None and value < low:
            parser.error(f"{flag} must be at least {low}, got {value}")
    try:
        steps, sentences = heatmap(args.generate_output, args.id, args.out, args.hypothesis,
                                   args.gpt2_encoder_json, args.top_k, args.max_steps)
    except ValueError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {args.out}: {e.strerror or e}")
    print(f"{args.out}: {steps} target steps x {sentences} sentences")


def _fail(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    cli_main()
