"""Extract attention-alignment labels from a trained PHT (001 Sec. 4.2.1, step 1 of 3).

    fairseq-hier-extract-attention data-bin --path checkpoints/pht/checkpoint_best.pt \\
        --destdir labels --splits train valid

For every example of each split, the trained model is run teacher-forced on the gold summary
(dropout off). The paragraph attention of every target step (heads averaged, decoder layers
summed: 001 footnote 3) is summed over the |y| + 1 steps that predict the summary tokens and
EOS and normalised over paragraphs (Eq. 14-16): the label eta. The predictor's input is the
model's paragraph embeddings Phi (Eq. 6; for VHT see ``HierarchicalEncoder.paragraph_embeddings``).
Both are written in the format of :mod:`fairseq_hier.data.attention_labels`, in example order,
for ``fairseq-train --task attention_prediction``.

The paragraph cut (``--max-paragraphs``, ``--max-paragraph-tokens``) is the one the model was
trained with unless overridden here; eta covers exactly the paragraphs the model saw.
"""

import logging
import os
import sys
import time

import torch

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.errors import HierError

PROG = "fairseq-hier-extract-attention"

logger = logging.getLogger("fairseq_hier.extract_attention")


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


def extract(args) -> dict:
    import fairseq_hier  # noqa: F401  (registers the task and models)
    from fairseq import checkpoint_utils, utils

    from fairseq_hier.data.attention_labels import AttentionLabelWriter, write_meta

    overrides = {"data": args.data}
    for name in ("max_paragraphs", "max_paragraph_tokens"):
        if getattr(args, name) is not None:
            overrides[name] = getattr(args, name)
    if not os.path.exists(args.path):
        raise HierError(f"--path {args.path}: no such checkpoint")
    from fairseq_hier.safe_loading import trusting

    with trusting(args.trust_checkpoint):
        models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
            [args.path], arg_overrides=overrides)
    model = models[0]
    if not getattr(model, "hierarchical_source", False):
        raise HierError(f"{args.path} holds a {type(model).__name__}; labels need a hierarchical "
                        f"model (pht, vht)")
    use_cuda = torch.cuda.is_available() and not args.cpu
    model = model.cuda() if use_cuda else model
    model.eval()
    embed_dim = model.encoder.rank_encoding.embed_dim
    pad = task.target_dictionary.pad()
    counts = {}
    for split in args.splits:
        task.load_dataset(split)
        dataset = task.datasets[split]
        start_time = time.time()
        # the split's files appear once all its examples are written (an error removes them)
        with AttentionLabelWriter(args.destdir, split, embed_dim, inputs=[args.path]) as writer:
            for start in range(0, len(dataset), args.batch_size):
                batch = dataset.collater([dataset[i] for i in
                                          range(start, min(start + args.batch_size, len(dataset)))])
                batch = utils.move_to_cuda(batch) if use_cuda else batch
                with torch.no_grad():
                    phi, eta, present = teacher_forced_labels(model, batch["net_input"],
                                                              batch["target"], pad)
                for row, n in enumerate(present.sum(-1).tolist()):  # one item per example
                    writer.add(phi[row, :n], eta[row, :n])
            writer.finalize()
        counts[split] = writer.count
        logger.info(f"[{split}] {writer.count} examples -> {args.destdir} "
                    f"({time.time() - start_time:.1f} s)")
    write_meta(args.destdir, {
        "embed_dim": embed_dim, "checkpoint": os.path.abspath(args.path),
        "data": os.path.abspath(args.data), "arch": getattr(cfg.model, "arch", None),
        "max_paragraphs": task.cfg.max_paragraphs,
        "max_paragraph_tokens": task.cfg.max_paragraph_tokens, "splits": counts,
    })
    return counts


def get_parser():
    parser = command_parser(PROG, __doc__)
    parser.add_argument("data", help="data-bin of the hierarchical_summarization task")
    parser.add_argument("--path", required=True, help="trained PHT/VHT checkpoint")
    parser.add_argument("--destdir", required=True, help="label directory to write")
    parser.add_argument("--splits", nargs="+", default=["train", "valid"],
                        help="splits to extract (default: train valid)")
    parser.add_argument("--batch-size", type=positive_int, default=32,
                        help="examples per forward pass")
    parser.add_argument("--max-paragraphs", type=positive_int, default=None,
                        help="override the checkpoint's paragraph count")
    parser.add_argument("--max-paragraph-tokens", type=positive_int, default=None,
                        help="override the checkpoint's paragraph length")
    parser.add_argument("--cpu", action="store_true", help="do not use a GPU")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="load a checkpoint that holds objects beyond weights and options "
                             "(torch.load(weights_only=False): it may run code; only for files "
                             "you trust)")
    return parser


def _drop_tensorboardx_notice(record: logging.LogRecord) -> bool:
    """Logging filter: ``import fairseq`` imports fairseq/tasks/text_to_speech.py, which logs
    "Please install tensorboardX" when that package is missing; this command writes no
    TensorBoard logs, so the notice is noise here (scripts/install.sh installs tensorboardX,
    which silences it for fairseq's own commands too)."""
    return not record.getMessage().startswith("Please install tensorboardX")


def cli_main(argv=None) -> int:
    # scoped to the one fairseq logger that prints it, before fairseq is imported (in extract)
    logging.getLogger("fairseq.tasks.text_to_speech").addFilter(_drop_tensorboardx_notice)
    args = get_parser().parse_args(argv)
    return run_command(PROG, extract, args)


if __name__ == "__main__":
    sys.exit(cli_main())
