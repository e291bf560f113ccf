"""Regression on a tabular dataset with an MLP, a seeded split and early stopping."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

SEED = 0
EPOCHS = 200
PATIENCE = 15


def set_seed(seed: int) -> None:
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_data(n: int = 2000) -> TensorDataset:
    features = torch.randn(n, 8)
    weights = torch.linspace(-1.0, 1.0, 8)
    targets = features @ weights + 0.1 * torch.randn(n)
    return TensorDataset(features, targets.unsqueeze(1))


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 1))


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, loss_fn: nn.Module) -> float:
    model.eval()
    total, count = 0.0, 0
    for features, targets in loader:
        total += loss_fn(model(features), targets).item() * len(features)
        count += len(features)
    return total / count


def main() -> None:
    set_seed(SEED)
    dataset = make_data()
    train_set, val_set = random_split(
        dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(SEED)
    )
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=256)

    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    loss_fn = nn.MSELoss()

    best, waited = float("inf"), 0
    for epoch in range(EPOCHS):
        model.train()
        for features, targets in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(features), targets)
            loss.backward()
            optimizer.step()
        val_loss = evaluate(model, val_loader, loss_fn)
        if val_loss < best:
            best, waited = val_loss, 0
            torch.save(model.state_dict(), "best_regressor.pt")
        else:
            waited += 1
            if waited >= PATIENCE:
                print(f"early stop at epoch {epoch}, best val MSE {best:.4f}")
                break


if __name__ == "__main__":
    main()
