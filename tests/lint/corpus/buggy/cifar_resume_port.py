"""A CIFAR trainer in the 2018 style: the LR is set by building a new optimizer each epoch, a
resume hands the scheduler its epoch without bringing the optimizer back, and the best accuracy
it restores is reset right after."""

import argparse

import torch
import torch.nn as nn
import torch.optim as optim


def lr_at(base_lr, epoch):
    return base_lr * (0.2 ** (epoch // 60))


def train(net, loader, criterion, epoch, base_lr):
    net.train()
    optimizer = optim.SGD(net.parameters(), lr=lr_at(base_lr, epoch), momentum=0.9)  # expect: TW134
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(net(inputs), targets)
        loss.backward()
        optimizer.step()


def finetune(net, loader, criterion, args):
    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 150], last_epoch=args.start_epoch - 1)  # expect: TW133
    for epoch in range(args.start_epoch, args.epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            criterion(net(inputs), targets).backward()
            optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--start-epoch", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    best_acc = 0.0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(checkpoint["net"])  # expect: TW131
        best_acc = checkpoint["acc"]
        args.start_epoch = checkpoint["epoch"] + 1
    best_acc = 0.0  # expect: TW140
    for epoch in range(args.epochs):
        train(net, [], nn.CrossEntropyLoss(), epoch, args.lr)
    finetune(net, [], nn.CrossEntropyLoss(), args)
