"""A semi-supervised CIFAR trainer written for Python 2 and torchvision 0.2, run unchanged today:
`it.next()` on the loader's iterator, `xrange`, `transforms.Scale`, a flag inverted with `~`, and a
`--resume` kept from a resume block since deleted."""

import argparse

import torch
import torch.nn as nn
import torchvision.transforms as transforms


def train(labeled_loader, unlabeled_loader, model, optimizer, steps):
    model.train()
    labeled_iter = iter(labeled_loader)
    unlabeled_iter = iter(unlabeled_loader)
    for step in xrange(steps):  # expect: TW144
        try:
            inputs_x, targets_x = labeled_iter.next()  # expect: TW136
        except StopIteration:
            labeled_iter = iter(labeled_loader)
            inputs_x, targets_x = next(labeled_iter)
        inputs_u, _ = next(unlabeled_iter, (None, None))
        loss = nn.functional.cross_entropy(model(inputs_x), targets_x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-augment", action="store_true")
    parser.add_argument("--resume", default="", help="checkpoint to resume from")  # expect: TW139
    args = parser.parse_args()
    augment = ~args.no_augment  # expect: TW138
    resize = transforms.Scale(32)  # expect: TW137
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    train([], [], model, optimizer, steps=1024)
