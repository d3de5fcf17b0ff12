"""Examples of the attention-prediction model (001 Sec. 4.2.1): paragraph embeddings Phi -> eta.

Reads the label format of :mod:`fairseq_hier.data.attention_labels` (one item per example:
``P_i x C`` paragraph embeddings, flattened, and the ``P_i`` gold paragraph-attention weights).

Legend: B batch, P paragraphs (the longest example of the batch), C paragraph-embedding dim.
Mask convention (fairseq): True = padding, i.e. an absent paragraph.

Batch keys (collater):
    id                                B     example indices
    nsentences                        int   B
    ntokens                           int   present paragraphs in the batch
    net_input.paragraph_embeddings    B x P x C  float, 0 at absent paragraphs
    net_input.paragraph_padding_mask  B x P      bool, True = absent paragraph
    target                            B x P      float eta, 0 at absent paragraphs
"""

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from .sized_dataset import SizedDataset
from ..errors import HierError


class AttentionPredictionDataset(SizedDataset):
    """(Phi, eta) pairs of one split.

    Args:
        phi: indexed dataset, item i = float32 1-D tensor of ``P_i * C`` values (row-major Phi),
            as returned by :func:`~fairseq_hier.data.attention_labels.load_split` (which checks
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

