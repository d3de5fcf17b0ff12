"""Up-front checks of fairseq's own decoding options.

fairseq accepts any number for ``--beam``, ``--max-len-b`` and the like; a negative beam or
length then aborts inside the first batch (``terminate called``, or a shape error in the search).
:func:`check_generation_options` refuses them before anything is decoded, naming the option and
its allowed range (and our tasks' ``--coverage-beta``, read where the namespace has it), and,
given the models, a ``--min-len`` that fairseq's generator would refuse with an assertion on the
first batch. Used by
the tasks' ``build_generator``, by ``fairseq-hier-record data`` (which stores a recipe's decoding
options) and by the summarisation API.
"""

from typing import Optional, Sequence

from ..errors import HierError, check_range

# option: (lowest allowed, strictly above it, highest allowed)
RANGES = {
    "beam": (1, False, None),
    "nbest": (1, False, None),
    "max_len_a": (0, False, None),
    "max_len_b": (0, False, None),
    "min_len": (0, False, None),
    "no_repeat_ngram_size": (0, False, None),
    "temperature": (0, True, None),
    "diverse_beam_groups": (-1, False, None),
    "sampling_topk": (-1, False, None),
    "iter_decode_max_iter": (0, False, None),
    "coverage_beta": (0, False, None),  # the summarisation tasks' --coverage-penalty summary
}


def check_generation_options(gen, models: Optional[Sequence] = None) -> None:
    """Raise :class:`fairseq_hier.errors.HierError` for the first decoding option of ``gen`` (a
    ``GenerationConfig`` or an argparse namespace) out of its range, an ``--nbest`` above
    ``--beam``, or (``models`` given) a ``--min-len`` above the models' ``positions - 1`` target
    steps or, with ``--max-len-a 0``, above ``--max-len-b``."""
    for name, (low, low_open, high) in RANGES.items():
        value = getattr(gen, name, None)
        if value is not None:
            check_range("--" + name.replace("_", "-"), value, low, high, low_open)
    topp = getattr(gen, "sampling_topp", None)
    if topp is not None and topp != -1:
        check_range("--sampling-topp", topp, 0, 1, low_open=True)
    beam, nbest = getattr(gen, "beam", None), getattr(gen, "nbest", None)
    if beam is not None and nbest is not None and nbest > beam:
        check_range("--nbest", nbest, 1, beam)
    if models:
        _check_min_len(gen, min(m.max_decoder_positions() for m in models))


def _check_min_len(gen, positions: int) -> None:
    """fairseq's generator asserts ``min_len <= max_len`` on the first batch, ``max_len`` being
    ``min(max_len_a * source length + max_len_b, positions - 1)``."""
    min_len = getattr(gen, "min_len", None) or 0
    if min_len > positions - 1:
        raise HierError(f"--min-len {min_len} is more than the model's {positions - 1} target "
                        f"steps (its --max-target-positions {positions}); give a smaller "
                        f"--min-len (generation)")
    a, b = getattr(gen, "max_len_a", 0), getattr(gen, "max_len_b", 200)
    if not getattr(gen, "match_source_len", False) and a == 0 and min_len > b:
        raise HierError(f"--min-len {min_len} is more than --max-len-b {b}; give a smaller "
                        f"--min-len or a larger --max-len-b (generation)")
