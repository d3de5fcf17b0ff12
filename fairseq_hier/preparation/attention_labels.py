"""The ``fairseq-hier-extract-attention`` step (001 Sec. 4.2.1, step 1 of 3): attention-alignment
labels from a trained PHT run teacher-forced on the gold summary, its paragraph attention summed
over the steps that predict the summary and normalised over paragraphs (Eq. 14-16), written with
the model's paragraph embeddings (:class:`AttentionLabelWriter`) for ``fairseq-train --task
attention_prediction``. The files: docs/data-formats.md, section "Attention-alignment labels"
(read by :mod:`fairseq_hier.data.attention_prediction_dataset`). The attention-cosine analysis
reuses :func:`teacher_forced_labels`.

May import: :mod:`fairseq_hier.data`, ``io``, ``safe_loading``, ``errors``; torch at its top
(only the commands that run a model import this module), fairseq inside the functions.
"""

import json
import logging
import os
import time
from typing import Dict, Iterable, Optional, Sequence

import numpy as np
import torch

from fairseq_hier.errors import HierError
from fairseq_hier.io import StagedWriter, write_text
from fairseq_hier.safe_loading import trusting

logger = logging.getLogger("fairseq_hier.extract_attention")


class AttentionLabelWriter(StagedWriter):
    """Writes one split: ``add(phi, eta)`` per example, in example order, then ``finalize()``.

    The four files are written under temporary names and moved into place together by
    ``finalize()`` (:class:`fairseq_hier.io.StagedWriter`): an interrupted run leaves none of
    them; as a context manager, an exception removes them."""

    def __init__(self, directory: str, split: str, embed_dim: int, inputs: Iterable[str] = ()):
        # fairseq, through the label files' reader, imported here: keeps startup light
        from fairseq.data.indexed_dataset import MMapIndexedDatasetBuilder

        from fairseq_hier.data.attention_prediction_dataset import FEATURES, LABELS, split_prefix

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
        phi_builder, eta_builder = self._builders.values()  # FEATURES, then LABELS
        phi_builder.add_item(torch.from_numpy(bits.astype(np.int32)))
        eta_builder.add_item(eta.detach().to("cpu", torch.float64))
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
    """Write ``meta.json`` of a label directory (docs/data-formats.md)."""
    # fairseq, through the label files' reader, imported here: keeps startup light
    from fairseq_hier.data.attention_prediction_dataset import META

    write_text(os.path.join(directory, META), json.dumps(meta, indent=2, sort_keys=True))


def teacher_forced_labels(model, net_input, target, pad):
    """-> (phi ``B x P x C``, eta ``B x P``, present ``B x P``) for one batch."""
    encoder_out = model.encoder(net_input["src_tokens"], net_input["src_lengths"])
    _, extra = model.decoder(net_input["prev_output_tokens"], encoder_out=encoder_out,
                             features_only=True)
    attn = extra["attn"][0]  # B x T x P, each step a distribution over paragraphs
    steps = target.ne(pad).unsqueeze(-1).to(attn)  # B x T x 1: summary tokens and EOS
    eta = (attn * steps).sum(1)  # B x P
    eta = eta / eta.sum(-1, keepdim=True)  # Eq. 15
    present = ~encoder_out["paragraph_padding_mask"][0]
    return model.encoder.paragraph_embeddings(encoder_out), eta, present


def extract_labels(data: str, path: str, destdir: str, splits: Sequence[str] = ("train", "valid"),
                   batch_size: int = 32, max_paragraphs: Optional[int] = None,
                   max_paragraph_tokens: Optional[int] = None, cpu: bool = False,
                   trust_checkpoint: bool = False) -> dict:
    """Write the labels eta and paragraph embeddings phi of every example of ``splits`` under
    ``destdir`` (docs/data-formats.md, "Attention-alignment labels"), from the trained PHT/VHT
    checkpoint ``path`` run teacher-forced on ``data``; ``max_paragraphs``,
    ``max_paragraph_tokens``: overrides of the checkpoint's paragraph cut. Returns examples
    written per split."""
    # fairseq is imported here, not at the top: keeps startup light
    import fairseq_hier  # noqa: F401  (registers the task and models)
    from fairseq import checkpoint_utils, utils

    overrides = {"data": data}
    for name, value in (("max_paragraphs", max_paragraphs),
                        ("max_paragraph_tokens", max_paragraph_tokens)):
        if value is not None:
            overrides[name] = value
    if not os.path.exists(path):
        raise HierError(f"--path {path}: no such checkpoint")

    with trusting(trust_checkpoint):
        models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
            [path], arg_overrides=overrides)
    model = models[0]
    if not getattr(model, "hierarchical_source", False):
        raise HierError(f"{path} holds a {type(model).__name__}; labels need a hierarchical "
                        f"model (pht, vht)")
    use_cuda = torch.cuda.is_available() and not cpu
    model = model.cuda() if use_cuda else model
    model.eval()
    embed_dim = model.encoder.rank_encoding.embed_dim
    pad = task.target_dictionary.pad()
    counts = {}
    for split in splits:
        task.load_dataset(split)
        dataset = task.datasets[split]
        start_time = time.time()
        # the split's files appear once all its examples are written (an error removes them)
        with AttentionLabelWriter(destdir, split, embed_dim, inputs=[path]) as writer:
            for start in range(0, len(dataset), batch_size):
                batch = dataset.collater([dataset[i] for i in
                                          range(start, min(start + batch_size, len(dataset)))])
                batch = utils.move_to_cuda(batch) if use_cuda else batch
                with torch.no_grad():
                    phi, eta, present = teacher_forced_labels(model, batch["net_input"],
                                                              batch["target"], pad)
                for row, n in enumerate(present.sum(-1).tolist()):  # one item per example
                    writer.add(phi[row, :n], eta[row, :n])
            writer.finalize()
        counts[split] = writer.count
        logger.info(f"[{split}] {writer.count} examples -> {destdir} "
                    f"({time.time() - start_time:.1f} s)")
    write_meta(destdir, {
        "embed_dim": embed_dim, "checkpoint": os.path.abspath(path),
        "data": os.path.abspath(data), "arch": getattr(cfg.model, "arch", None),
        "max_paragraphs": task.cfg.max_paragraphs,
        "max_paragraph_tokens": task.cfg.max_paragraph_tokens, "splits": counts,
    })
    return counts
