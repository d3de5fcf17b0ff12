"""Paragraph graphs on disk: one ``P x P`` matrix per example, for the graph-informed attention of
Liu & Lapata 2019 (002, Eq. 24), where a head's attention weights over the paragraphs are
replaced by a row of ``G`` (normalised by the row's sum).

:class:`ParagraphGraphs` reads ``PREFIX.{sizes,offsets,values}.npy`` memory-mapped and crops each
matrix to the kept paragraphs; the writer makes them. The layout and why float16:
docs/data-formats.md#paragraph-graphs.
Imports numpy (torch inside functions).
"""

import os
from array import array
from typing import Optional

import numpy as np

from ..errors import HierError
from ..io import StagedWriter
from ..text.graphs import GraphBuilder
from .paragraphs import text_paragraphs

SUFFIXES = ("sizes", "offsets", "values")
COMMAND = "fairseq-hier-graph"


def graph_files(prefix: str) -> dict:
    """``{"sizes": PREFIX.sizes.npy, "offsets": ..., "values": ...}``."""
    return {s: f"{prefix}.{s}.npy" for s in SUFFIXES}


def _npy_header(dtype, length: int) -> bytes:
    """The ``.npy`` (format 1.0) header of a 1-D array. numpy pads the header so that the length
    field may grow in place (``GROWTH_AXIS_MAX_DIGITS``): the header for 0 elements and the
    header for the final count have the same size, so the writer rewrites it at the end."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {
        "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
        "shape": (length,)})
    return buf.getvalue()


class ParagraphGraphWriter(StagedWriter):
    """Streams the matrices of a split to ``PREFIX.{sizes,offsets,values}.npy``.

    ``add(matrix)`` appends one example's ``P x P`` matrix to the values file at once (only the
    sizes, 4 bytes per example, stay in memory); ``close()`` writes the sizes and offsets and
    moves the three files into place (:class:`fairseq_hier.io.StagedWriter`), so an interrupted
    run leaves no file that would pass for finished graphs. As a context manager, an exception
    removes them.
    """

    def __init__(self, prefix: str, inputs=()):
        self.prefix = prefix
        self.files = graph_files(prefix)
        super().__init__(list(self.files.values()), inputs)
        self._sizes = array("i")
        self._count = 0  # values written
        self._header = _npy_header(np.float16, 0)
        with self.removed_on_failure():
            self._values = open(self.staged[self.files["values"]], "wb")
            self._values.write(self._header)

    def add(self, matrix: np.ndarray) -> None:
        """Append the next example's graph, a square ``P x P`` matrix (P >= 1)."""
        matrix = np.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
            raise HierError(f"graph {len(self._sizes) + 1}: a paragraph graph must be a "
                            f"non-empty square P x P matrix, got shape {matrix.shape}")
        self._values.write(np.ascontiguousarray(matrix, dtype="<f2").tobytes())
        self._sizes.append(matrix.shape[0])
        self._count += matrix.size

    def __len__(self) -> int:
        return len(self._sizes)

    def finish(self) -> None:
        header = _npy_header(np.float16, self._count)
        if len(header) != len(self._header):  # cannot happen with numpy's growth padding
            raise RuntimeError(f"npy header grew from {len(self._header)} to {len(header)} bytes")
        self._values.seek(0)
        self._values.write(header)
        self._values.close()
        sizes = np.frombuffer(self._sizes, dtype=np.int32) if len(self._sizes) else \
            np.zeros(0, dtype=np.int32)
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes.astype(np.int64) ** 2, out=offsets[1:])
        for name, arr in (("sizes", sizes.astype("<i4")), ("offsets", offsets.astype("<i8"))):
            with open(self.staged[self.files[name]], "wb") as f:
                np.save(f, arr)

    def open_files(self):
        return [self._values] if hasattr(self, "_values") else []


def write_paragraph_graphs(prefix: str, matrices) -> int:
    """Write an iterable of ``P x P`` matrices; returns the number of examples."""
    with ParagraphGraphWriter(prefix) as writer:
        for m in matrices:
            writer.add(m)
    return len(writer)


class ParagraphGraphs:
    """The graphs of one split, memory-mapped (module docstring for the files).

    ``sizes[i]`` is the number of paragraphs (nodes) of example ``i``; ``matrix(i)`` its graph.
    Raises HierError (naming the prefix and the command that writes the files) if a file
    is missing, ValueError if the three files do not fit together.
    """

    def __init__(self, prefix: str):
        self.prefix = prefix
        files = graph_files(prefix)
        missing = [p for p in files.values() if not os.path.exists(p)]
        if missing:
            kind = prefix.rsplit(".graph.", 1)[1] if ".graph." in prefix else "KIND"
            raise HierError(
                f"no paragraph graphs at {prefix} ({', '.join(missing)} missing): write them with "
                f"{COMMAND} --source RAW/SPLIT.src --kind {kind} --output-prefix {prefix}")
        self.sizes = np.load(files["sizes"], mmap_mode="r")
        self.offsets = np.load(files["offsets"], mmap_mode="r")
        self.values = np.load(files["values"], mmap_mode="r")
        expected = np.concatenate([[0], np.cumsum(np.asarray(self.sizes, dtype=np.int64) ** 2)])
        if (len(self.offsets) != len(self.sizes) + 1 or not np.array_equal(self.offsets, expected)
                or len(self.values) != expected[-1]):
            raise HierError(
                f"inconsistent paragraph graph files at {prefix}: {len(self.sizes)} sizes, "
                f"{len(self.offsets)} offsets (expected {len(self.sizes) + 1}, the cumulative "
                f"P^2), {len(self.values)} values (expected {expected[-1]}); write them again "
                f"with {COMMAND}")

    def __len__(self) -> int:
        return len(self.sizes)

    def __getstate__(self):
        # pickled by the prefix alone: a data loader worker started by spawn re-opens the files
        # instead of receiving a copy of every matrix (np.memmap pickles its whole data)
        return {"prefix": self.prefix}

    def __setstate__(self, state):
        self.__init__(state["prefix"])

    def matrix(self, i: int, max_paragraphs: Optional[int] = None) -> np.ndarray:
        """Example ``i``'s graph as a float32 ``P x P`` array; with ``max_paragraphs``, its
        top-left ``min(P, max_paragraphs)`` square (the paragraphs the dataset keeps)."""
        p = int(self.sizes[i])
        g = self.values[self.offsets[i]:self.offsets[i + 1]].reshape(p, p)
        if max_paragraphs is not None:
            g = g[:max_paragraphs, :max_paragraphs]
        return np.array(g, dtype=np.float32)

    def check(self, expected_sizes: np.ndarray, data_path: str) -> None:
        """Raise ValueError (one message) unless the graphs have one node per paragraph of every
        example of ``data_path``: ``expected_sizes[i]`` paragraphs in example ``i`` (the dataset's
        count before its ``max_paragraphs`` cut)."""
        expected_sizes = np.asarray(expected_sizes, dtype=np.int64)
        rewrite = (f"write the graphs again from the split's raw source with {COMMAND} "
                   f"--output-prefix {self.prefix}")
        if len(expected_sizes) != len(self.sizes):
            raise HierError(
                f"paragraph graphs do not match the data: {self.prefix}.sizes.npy has "
                f"{len(self.sizes)} examples, {data_path} has {len(expected_sizes)}; {rewrite}")
        wrong = np.flatnonzero(np.asarray(self.sizes, dtype=np.int64) != expected_sizes)
        if len(wrong):
            i = int(wrong[0])
            raise HierError(
                f"paragraph graphs do not match the data: the example on line {i + 1} has "
                f"{int(self.sizes[i])} graph nodes in {self.prefix}.sizes.npy but "
                f"{int(expected_sizes[i])} paragraphs in {data_path} ({len(wrong)} of "
                f"{len(expected_sizes)} examples differ); {rewrite}")


class InferenceGraphs:
    """The graphs of sources given at inference (fairseq-interactive, ``HierSummarizer``), built
    in memory from the token lines by the builder of ``fairseq-hier-graph`` (same nodes: the
    paragraphs of :func:`~fairseq_hier.data.paragraphs.text_paragraphs`); the interface of
    :class:`ParagraphGraphs` (``sizes``, ``matrix``, ``check``), plus :meth:`for_rows`, which
    finds an example's graph again from its paragraph rows (fairseq-interactive's batches carry
    only ``src_tokens``)."""

    def __init__(self, matrices):
        self.matrices = [np.asarray(m, dtype=np.float32) for m in matrices]
        self.sizes = np.asarray([len(m) for m in self.matrices], dtype=np.int64)
        self.prefix = "input"
        # kept paragraph rows -> (example, kept paragraphs); two examples with the same kept rows
        # but different cut paragraphs would share a key (their graphs differ only through idf)
        self._by_rows = {}

    @classmethod
    def of_tokens(cls, kind: str, src_tokens, src_dict, separator: str) -> "InferenceGraphs":
        examples = [text_paragraphs(src_dict.string(t[t.ne(src_dict.eos())]), separator)
                    for t in src_tokens]
        return cls(GraphBuilder(kind)(examples))

    def __len__(self) -> int:
        return len(self.sizes)

    def matrix(self, i: int, max_paragraphs: Optional[int] = None) -> np.ndarray:
        g = self.matrices[i]
        return g[:max_paragraphs, :max_paragraphs] if max_paragraphs is not None else g

    def check(self, expected_sizes: np.ndarray, data_path: str) -> None:
        wrong = np.flatnonzero(self.sizes != np.asarray(expected_sizes, dtype=np.int64))
        if len(wrong):  # the builder and the dataset split paragraphs by one rule: a bug if not
            raise HierError(f"{data_path}: line {int(wrong[0]) + 1}: {int(self.sizes[wrong[0]])} "
                            f"graph nodes for {int(expected_sizes[wrong[0]])} paragraphs")

    def remember(self, dataset) -> None:
        """Index the kept paragraph rows of every example of ``dataset`` (the inference
        dataset these graphs are attached to)."""
        pad = dataset.src_dict.pad()
        for i in range(len(dataset)):
            self._by_rows[_rows_key(dataset.paragraphs(i), pad)] = (i, int(dataset.num_paragraphs[i]))

    def for_rows(self, src_tokens, pad: int):
        """``B x P x L`` sources -> their ``B x P x P`` graphs (cropped, zero-padded)."""
        import torch

        out = torch.zeros(src_tokens.size(0), src_tokens.size(1), src_tokens.size(1))
        for b, rows in enumerate(src_tokens.cpu()):
            index, kept = self._by_rows[_rows_key(rows, pad)]
            out[b, :kept, :kept] = torch.from_numpy(self.matrix(index, kept))
        return out.to(src_tokens.device)


def _rows_key(rows, pad: int) -> tuple:
    """A hashable key of ``P x L`` paragraph rows, independent of the batch's padding."""
    return tuple(tuple(r[r.ne(pad)].tolist()) for r in rows if r.ne(pad).any())
