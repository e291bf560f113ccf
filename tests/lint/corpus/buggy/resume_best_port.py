"""A classifier whose --resume reads the best checkpoint back and continues from its epoch."""

import torch
from torch import nn

torch.manual_seed(0)


def main(args, loader):
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume + "/model_best.pt", map_location="cpu")  # expect: TW159
        start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        state = {"epoch": epoch + 1, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        torch.save(state, args.out + "/checkpoint.pt")
