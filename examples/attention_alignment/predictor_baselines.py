"""Reference points for the attention predictor's test MSE / cosine: two predictors that ignore
the paragraphs' content, scored on the same gold labels.

    python examples/attention_alignment/predictor_baselines.py LABEL_DIR [--split test]

- uniform: eta_hat_p = 1 / P_i;
- rank prior: the training labels' mean attention per paragraph rank, renormalised over P_i.
MSE is per paragraph (as the ``attention_mse`` criterion logs it), cosine per example.
"""

import argparse

import torch
import torch.nn.functional as F

from fairseq_hier.data.attention_prediction_dataset import load_split


def evaluate(labels, predict):
    squared, paragraphs, cosine = 0.0, 0, 0.0
    for i in range(len(labels)):
        eta = labels[i]
        eta_hat = predict(eta.numel())
        squared += float(((eta_hat - eta) ** 2).sum())
        paragraphs += eta.numel()
        cosine += float(F.cosine_similarity(eta_hat, eta, dim=0))
    return squared / paragraphs, cosine / len(labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", help="label directory of fairseq-hier-extract-attention")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    _, train, _ = load_split(args.labels, "train")
    _, test, _ = load_split(args.labels, args.split)
    width = max(int(s) for s in train.sizes)
    total, count = torch.zeros(width), torch.zeros(width)
    for i in range(len(train)):  # mean label per rank
        eta = train[i]
        total[: eta.numel()] += eta
        count[: eta.numel()] += 1
    prior = total / count.clamp(min=1)
    prior = torch.cat([prior, prior.new_full((1024,), float(prior[-1]))])  # longer test examples

    def rank_prior(n):
        return prior[:n] / prior[:n].sum()

    for name, predict in (("uniform", lambda n: torch.full((n,), 1.0 / n)),
                          ("rank prior", rank_prior)):
        mse, cos = evaluate(test, predict)
        print(f"{name:<12} mse {mse:.6f} | cos {cos:.6f}")


if __name__ == "__main__":
    main()
