"""Write the digits a run held out for validation as a CSV of raw pixels (0..16, as scikit-learn
ships them), with scikit-learn's column names and the label column ``target``.

    python examples/digits_csv.py digits_val.csv [--seed 0] [--val-fraction 0.2]

The split is the run's: a permutation of the sample numbers seeded with ``train.seed``, whose
first ``round(n * val_fraction)`` samples are the validation set (torchwise/data/split.py).
"""

import argparse
import csv

import torch
from sklearn.datasets import load_digits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--val-fraction", type=float, default=0.2)
    args = parser.parse_args()
    bunch = load_digits()
    total = len(bunch.target)
    order = torch.randperm(total, generator=torch.Generator().manual_seed(args.seed)).tolist()
    with open(args.out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*bunch.feature_names, "target"])
        for index in order[:max(1, round(total * args.val_fraction))]:
            writer.writerow([int(v) for v in bunch.data[index]] + [int(bunch.target[index])])


if __name__ == "__main__":
    main()
