"""An ImageNet-style trainer from the torch 0.3 days, run unchanged on torch 2: Python 3.7+ stops
at `async=True`, and behind it sit a `.data[0]` on the loss and a volatile-only evaluation."""

import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable


def train(loader, model, criterion, optimizer):
    model.train()
    for input, target in loader:
        target = target.cuda(async=True)  # expect: TW135
        output = model(Variable(input))
        loss = criterion(output, Variable(target))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if len(loss.shape) == 0:
            print("loss", loss.detach())


def measure(images, model):
    model.eval()
    batch = Variable(images.cuda(), volatile=True)
    return model(batch).max(1)[1]  # expect: TW132


def report(criterion, output, target):
    return criterion(output, target).data[0]  # expect: TW129


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 4)).cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    train([], model, criterion, optimizer)
