"""A time-series trainer that builds a validation loader but early-stops on the test loader."""

import torch


class Trainer:
    def __init__(self, model, make_loader, epochs=10):
        self.model = model
        self.epochs = epochs
        self.train_loader = make_loader("train")
        self.val_loader = make_loader("val")
        self.test_loader = make_loader("test")
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        self.criterion = torch.nn.MSELoss()

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        losses = [self.criterion(self.model(x), y).item() for x, y in loader]
        return sum(losses) / len(losses)

    def fit(self, stopper):
        for _epoch in range(self.epochs):
            self.model.train()
            for x, y in self.train_loader:
                self.optimizer.zero_grad()
                self.criterion(self.model(x), y).backward()
                self.optimizer.step()
            val_loss = self.validate(self.test_loader)  # expect: TW153
            stopper(val_loss, self.model)
            if stopper.early_stop:
                break
