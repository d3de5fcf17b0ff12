"""On-disk format of attention-alignment labels (001 Sec. 4.2.1), written by
``fairseq-hier-extract-attention`` and read by the ``attention_prediction`` task.

A label directory holds, for every extracted split, two fairseq memory-mapped indexed datasets
(``.bin`` + ``.idx``, the same container as ``fairseq-preprocess`` output), one item per example
in the split's example order (item i = line i + 1 of the raw files):

    {split}.phi.{bin,idx}   P_i x C paragraph embeddings Phi (Eq. 6, ranking encoding included),
                            flattened row-major; stored as float16 (the 16-bit patterns are kept
                            in fairseq's uint16 container, whose reader would otherwise cast every
                            item to int64)
    {split}.eta.{bin,idx}   P_i gold paragraph-attention distribution eta (Eq. 14-16), float64
    meta.json               embed_dim C, the PHT checkpoint and data-bin it came from, the
                            paragraph cut, and the example count of every split

P_i is the number of paragraphs the summarisation task kept for example i (so eta_i sums to 1
over exactly the paragraphs the decoder could attend to).
"""

import json
import os
from typing import Dict, Iterable

import numpy as np
import torch
from fairseq.data.indexed_dataset import MMapIndexedDataset, MMapIndexedDatasetBuilder

from ..errors import HierError
from ..io import StagedWriter, write_text

META = "meta.json"
FEATURES, LABELS = "phi", "eta"


def split_prefix(directory: str, split: str, kind: str) -> str:
    return os.path.join(directory, f"{split}.{kind}")


class FloatIndexedDataset(MMapIndexedDataset):
    """fairseq's MMapIndexedDataset returning float32 items (uint16 containers hold float16)."""

    def __getitem__(self, i):
        ptr, size = self._index[i]
        dtype = self._index.dtype
        array = np.frombuffer(self._bin_buffer, dtype=dtype, count=size, offset=ptr)
        if dtype == np.uint16:
            array = array.view(np.float16)
        return torch.from_numpy(array.astype(np.float32))


class AttentionLabelWriter(StagedWriter):
    """Writes one split: ``add(phi, eta)`` per example, in example order, then ``finalize()``.

    The four files are written under temporary names and moved into place together by
    ``finalize()`` (:class:`fairseq_hier.io.StagedWriter`): an interrupted run leaves none of
    them; as a context manager, an exception removes them."""

    def __init__(self, directory: str, split: str, embed_dim: int, inputs: Iterable[str] = ()):
        self.directory, self.split, self.embed_dim = directory, split, embed_dim
        self.prefixes = {kind: split_prefix(directory, split, kind) for kind in (FEATURES, LABELS)}
        super().__init__([prefix + ext for prefix in self.prefixes.values()
                          for ext in (".bin", ".idx")], inputs)
        self.count = 0
        self._builders = {}
        with self.removed_on_failure():
            self._builders[FEATURES] = MMapIndexedDatasetBuilder(
                self.staged[self.prefixes[FEATURES] + ".bin"], dtype=np.uint16)
            self._builders[LABELS] = MMapIndexedDatasetBuilder(
                self.staged[self.prefixes[LABELS] + ".bin"], dtype=np.float64)

    def add(self, phi: torch.Tensor, eta: torch.Tensor):
        """phi: ``P x C``; eta: ``P`` (sums to 1)."""
        if phi.dim() != 2 or phi.size(1) != self.embed_dim or eta.shape != phi.shape[:1]:
            raise HierError(f"example {self.count}: expected phi P x {self.embed_dim} and eta P, "
                            f"got {tuple(phi.shape)} and {tuple(eta.shape)}")
        bits = phi.detach().to("cpu", torch.float16).numpy().view(np.uint16).reshape(-1)
        self._builders[FEATURES].add_item(torch.from_numpy(bits.astype(np.int32)))
        self._builders[LABELS].add_item(eta.detach().to("cpu", torch.float64))
        self.count += 1

    def finish(self) -> None:
        for kind, builder in self._builders.items():
            builder.finalize(self.staged[self.prefixes[kind] + ".idx"])

    def open_files(self):
        return [builder._data_file for builder in self._builders.values()]

    def finalize(self) -> None:
        """Complete the split's files and move them into place."""
        self.close()


def write_meta(directory: str, meta: Dict):
    write_text(os.path.join(directory, META), json.dumps(meta, indent=2, sort_keys=True))


def read_meta(directory: str) -> Dict:
    path = os.path.join(directory, META)
    if not os.path.exists(path):
        raise HierError(f"{path} not found: is {directory} a label directory written by "
                                f"fairseq-hier-extract-attention?")
    with open(path) as f:
        return json.load(f)


def load_split(directory: str, split: str):
    """-> (phi dataset, eta dataset, embed_dim) of one split, with sizes checked."""
    meta = read_meta(directory)
    datasets = []
    for kind in (FEATURES, LABELS):
        prefix = split_prefix(directory, split, kind)
        if not MMapIndexedDataset.exists(prefix):
            raise HierError(f"split '{split}': {prefix}.{{bin,idx}} not found in {directory}")
        datasets.append(FloatIndexedDataset(prefix))
    phi, eta = datasets
    c = int(meta["embed_dim"])
    if len(phi) != len(eta):
        raise HierError(f"{directory}: {split}.phi has {len(phi)} examples, {split}.eta {len(eta)}")
    phi_sizes, num_paragraphs = np.asarray(phi.sizes), np.asarray(eta.sizes)
    bad = np.flatnonzero(phi_sizes != num_paragraphs * c)
    if len(bad):
        i = int(bad[0])
        raise HierError(f"{directory}: split '{split}', example {i}: Phi has {phi_sizes[i]} "
                        f"values, expected P x C = {num_paragraphs[i]} x {c} ({len(bad)} such "
                        f"examples)")
    return phi, eta, c
