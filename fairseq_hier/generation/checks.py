"""Up-front checks of fairseq's own decoding options.

fairseq accepts any number for ``--beam``, ``--max-len-b`` and the like; a negative beam or
length then aborts inside the first batch (``terminate called``, or a shape error in the search).
:func:`check_generation_options` refuses them before anything is decoded, naming the option and
its allowed range (and our tasks' ``--coverage-beta``, read where the namespace has it). Used by
the tasks' ``build_generator``, by ``fairseq-hier-record data`` (which stores a recipe's decoding
options) and by the summarisation API.
"""

from ..errors import check_range

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


def check_generation_options(gen) -> None:
    """Raise :class:`fairseq_hier.errors.HierError` for the first decoding option of ``gen`` (a
    ``GenerationConfig`` or an argparse namespace) out of its range, or an ``--nbest`` above
    ``--beam``."""
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
