"""The attention predictor's examples (001 Sec. 4.2.1): a split's attention-alignment label files
read (:func:`load_split`, :func:`read_meta`; docs/data-formats.md, section "Attention-alignment
labels"; written by :mod:`fairseq_hier.preparation.attention_labels`), and
:class:`AttentionPredictionDataset`: paragraph embeddings Phi -> gold paragraph attention eta.

Legend: B batch, P paragraphs (the longest example of the batch), C paragraph-embedding dim.
Mask convention (fairseq): True = padding, i.e. an absent paragraph. Batch keys (collater):
    id                                B     example indices
    nsentences                        int   B
    ntokens                           int   present paragraphs in the batch
    net_input.paragraph_embeddings    B x P x C  float, 0 at absent paragraphs
    net_input.paragraph_padding_mask  B x P      bool, True = absent paragraph
    target                            B x P      float eta, 0 at absent paragraphs

May import: ``errors``; numpy, torch, fairseq.
"""

import json
import os
from typing import Dict

import numpy as np
import torch
from fairseq.data.indexed_dataset import MMapIndexedDataset
from torch.nn.utils.rnn import pad_sequence

from ..errors import HierError
from .sized_dataset import SizedDataset

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


def read_meta(directory: str) -> Dict:
    """The ``meta.json`` of a label directory (embed_dim, the checkpoint and data, the splits)."""
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


class AttentionPredictionDataset(SizedDataset):
    """(Phi, eta) pairs of one split.

    Args:
        phi: indexed dataset, item i = float32 1-D tensor of ``P_i * C`` values (row-major Phi),
            as returned by :func:`load_split` (which checks
            the sizes)
        eta: indexed dataset, item i = float32 tensor of ``P_i`` values summing to 1
        embed_dim: C
        split: split name used in error messages
        path: file prefix used in error messages (e.g. the label directory)
        shuffle: shuffle before sorting by size in :meth:`ordered_indices`
    """

    def __init__(self, phi, eta, embed_dim: int, split: str = "", path: str = "",
                 shuffle: bool = True):
        # the P x C shape of every item is checked where the files are opened (load_split)
        self.phi, self.eta, self.embed_dim = phi, eta, int(embed_dim)
        self.split, self.path, self.shuffle = split, path, shuffle
        self._sizes = np.asarray(eta.sizes, dtype=np.int64)  # P_i
        empty = np.flatnonzero(self._sizes == 0)
        if len(empty):
            raise HierError(f"{path}: split '{split}' has {len(empty)} examples without "
                            f"paragraphs (first: example {int(empty[0])}); eta cannot sum to 1 "
                            f"over none")

    def __getitem__(self, index):
        # P*C -> P x C
        phi = self.phi[index].view(-1, self.embed_dim)
        return {"id": index, "phi": phi, "eta": self.eta[index]}

    def __len__(self):
        return len(self._sizes)

    def collater(self, samples):
        if len(samples) == 0:
            return {}
        lengths = torch.tensor([s["eta"].numel() for s in samples])  # B
        # list of P_i x C -> B x P x C, zeros at absent paragraphs
        phi = pad_sequence([s["phi"] for s in samples], batch_first=True)
        target = pad_sequence([s["eta"] for s in samples], batch_first=True)  # B x P
        padding_mask = torch.arange(phi.size(1))[None, :] >= lengths[:, None]  # B x P
        return {
            "id": torch.LongTensor([s["id"] for s in samples]),
            "nsentences": len(samples),
            "ntokens": int(lengths.sum()),
            "net_input": {
                "paragraph_embeddings": phi,
                "paragraph_padding_mask": padding_mask,
            },
            "target": target,
        }

