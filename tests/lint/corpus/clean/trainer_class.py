"""A small hand-written Trainer class, the way many research repositories organise their loop."""

from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class TrainConfig:
    epochs: int = 10
    lr: float = 1e-3
    batch_size: int = 64
    grad_clip: float = 1.0
    seed: int = 0


class Trainer:
    def __init__(self, model: nn.Module, train_set, val_set, config: TrainConfig):
        self.config = config
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.lr)
        total_steps = config.epochs * (len(train_set) // config.batch_size + 1)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=total_steps)
        self.train_loader = DataLoader(train_set, batch_size=config.batch_size, shuffle=True)
        self.val_loader = DataLoader(val_set, batch_size=256)
        self.criterion = nn.CrossEntropyLoss()

    def train_epoch(self) -> None:
        self.model.train()
        for inputs, targets in self.train_loader:
            inputs, targets = inputs.to(self.device), targets.to(self.device)
            self.optimizer.zero_grad(set_to_none=True)
            loss = self.criterion(self.model(inputs), targets)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
            self.optimizer.step()
            self.scheduler.step()

    @torch.no_grad()
    def validate(self) -> float:
        self.model.eval()
        correct = torch.zeros((), device=self.device)
        for inputs, targets in self.val_loader:
            inputs, targets = inputs.to(self.device), targets.to(self.device)
            correct += (self.model(inputs).argmax(-1) == targets).sum()
        return correct.item() / len(self.val_loader.dataset)

    def fit(self) -> None:
        for epoch in range(self.config.epochs):
            self.train_epoch()
            print(f"epoch {epoch}: val accuracy {self.validate():.3f}")
        torch.save(
            {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
             "scheduler": self.scheduler.state_dict()},
            "trainer_checkpoint.pt",
        )


if __name__ == "__main__":
    config = TrainConfig()
    torch.manual_seed(config.seed)
    inputs, labels = torch.randn(3000, 10), torch.randint(0, 3, (3000,))
    train_set = TensorDataset(inputs[:2500], labels[:2500])
    val_set = TensorDataset(inputs[2500:], labels[2500:])
    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 3))
    Trainer(model, train_set, val_set, config).fit()
