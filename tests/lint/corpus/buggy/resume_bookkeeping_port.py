"""A classifier that resumes its weights, optimizer and epoch, but saves the epoch it has just
trained, keeps its best accuracy from scratch and counts its LR milestones from 0 again."""

import argparse

import torch
import torch.nn as nn


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    for images, labels in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        correct += (model(images).argmax(1) == labels).sum().item()
        total += labels.numel()
    return correct / total


def main(model, train_loader, val_loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"]
    best_acc = 0.0  # expect: TW150
    milestone = 0  # expect: TW152
    for epoch in range(start_epoch, args.epochs):
        if epoch in (30, 60):
            milestone += 1
            for group in optimizer.param_groups:
                group["lr"] = 0.1 * 0.1**milestone
        train_one_epoch(model, train_loader, optimizer, criterion)
        acc = validate(model, val_loader)
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "epoch": epoch,  # expect: TW151
        }
        torch.save(state, "last.pt")
        if acc > best_acc:
            best_acc = acc
            torch.save(state, "best.pt")
