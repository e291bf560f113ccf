"""A small DCGAN: two networks, two optimizers, alternating updates."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

LATENT = 100


def generator_net() -> nn.Module:
    return nn.Sequential(
        nn.ConvTranspose2d(LATENT, 128, 7, 1, 0, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
        nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
        nn.ConvTranspose2d(64, 1, 4, 2, 1, bias=False), nn.Tanh(),
    )


def discriminator_net() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 64, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(64, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(128, 1, 7, 1, 0, bias=False), nn.Flatten(0),
    )


def main(epochs: int = 5) -> None:
    torch.manual_seed(999)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    train_set = datasets.MNIST("data", train=True, download=True, transform=transform)
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=2, drop_last=True)
    netG, netD = generator_net().to(device), discriminator_net().to(device)
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    fixed_noise = torch.randn(64, LATENT, 1, 1, device=device)

    for epoch in range(epochs):
        for i, (real, _) in enumerate(train_loader):
            real = real.to(device)
            batch_size = real.size(0)
            ones = torch.ones(batch_size, device=device)
            zeros = torch.zeros(batch_size, device=device)

            # Discriminator: real images up, generated ones down; the generator is not updated.
            optimizerD.zero_grad()
            noise = torch.randn(batch_size, LATENT, 1, 1, device=device)
            fake = netG(noise)
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
            errD.backward()
            optimizerD.step()

            optimizerG.zero_grad()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()

            if i % 200 == 0:
                print(f"[{epoch}][{i}] loss D {errD.item():.3f} loss G {errG.item():.3f}")
        netG.eval()
        with torch.no_grad():
            samples = netG(fixed_noise)
        netG.train()
        torch.save(samples, f"samples_epoch_{epoch}.pt")
    torch.save({"generator": netG.state_dict(), "discriminator": netD.state_dict(),
                "optimizerG": optimizerG.state_dict(), "optimizerD": optimizerD.state_dict()},
               "dcgan.pt")


if __name__ == "__main__":
    main()
