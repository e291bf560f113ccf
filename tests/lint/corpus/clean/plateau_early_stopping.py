"""Train with ReduceLROnPlateau on the validation loss and stop early when it stops improving."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class EarlyStopping:
    def __init__(self, patience: int = 10, min_delta: float = 1e-4):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.bad_epochs = 0

    def step(self, value: float) -> bool:
        if value < self.best - self.min_delta:
            self.best, self.bad_epochs = value, 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def train_epoch(model, loader, optimizer, loss_fn):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()


def validate(model, loader, loss_fn) -> float:
    model.eval()
    losses = []
    with torch.no_grad():
        for x, y in loader:
            losses.append(loss_fn(model(x), y))
    return torch.stack(losses).mean().item()


def main():
    torch.manual_seed(3)
    x = torch.randn(5000, 20)
    y = (x[:, :5].sum(1, keepdim=True) > 0).float()
    train_loader = DataLoader(TensorDataset(x[:4000], y[:4000]), batch_size=100, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[4000:], y[4000:]), batch_size=500)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=3)
    stopper = EarlyStopping(patience=8)
    loss_fn = nn.BCEWithLogitsLoss()
    for epoch in range(100):
        train_epoch(model, train_loader, optimizer, loss_fn)
        val_loss = validate(model, val_loader, loss_fn)
        scheduler.step(val_loss)
        if stopper.step(val_loss):
            print(f"stopping at epoch {epoch}")
            break
    torch.save(model.state_dict(), "plateau_model.pt")


if __name__ == "__main__":
    main()
