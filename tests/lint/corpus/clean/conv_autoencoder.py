"""A convolutional autoencoder on Fashion-MNIST with full checkpoints for resuming."""

import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

CHECKPOINT = "autoencoder_last.pt"


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(16, 1, 3, stride=2, padding=1, output_padding=1), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def save_checkpoint(model, optimizer, epoch):
    torch.save(
        {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
        CHECKPOINT,
    )


def load_checkpoint(model, optimizer, device) -> int:
    if not os.path.exists(CHECKPOINT):
        return 0
    checkpoint = torch.load(CHECKPOINT, map_location=device, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"] + 1


def main(epochs: int = 20) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = datasets.FashionMNIST("data", train=True, download=True, transform=transforms.ToTensor())
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=2)
    model = AutoEncoder().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    start = load_checkpoint(model, optimizer, device)
    for epoch in range(start, epochs):
        model.train()
        total = torch.zeros((), device=device)
        for images, _ in train_loader:
            images = images.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), images)
            loss.backward()
            optimizer.step()
            total += loss.detach() * images.size(0)
        print(f"epoch {epoch}: reconstruction MSE {total.item() / len(train_set):.5f}")
        save_checkpoint(model, optimizer, epoch)


if __name__ == "__main__":
    main()
