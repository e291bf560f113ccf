"""Simulate a large batch on a small GPU by accumulating gradients."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

ACCUMULATION_STEPS = 16


def main():
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(20_000, 64), torch.randint(0, 10, (20_000,)))
    train_set, val_set = random_split(dataset, [18_000, 2_000])  # expect: TW121
    train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(3):
        for i, (x, y) in enumerate(train_loader):
            loss = criterion(model(x), y)
            loss.backward()  # expect: TW116
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TW146
            if (i + 1) % ACCUMULATION_STEPS == 0:
                optimizer.step()
                optimizer.zero_grad(set_to_none=False)  # expect: TW123
    torch.save(model.state_dict(), "accumulated.pt")


if __name__ == "__main__":
    main()
