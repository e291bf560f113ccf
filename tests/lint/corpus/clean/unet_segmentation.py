"""Binary segmentation with a small U-Net, Dice + BCE loss, bf16 autocast."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, channels=(32, 64, 128)):
        super().__init__()
        self.down1, self.down2, self.bottom = block(3, channels[0]), block(channels[0], channels[1]), block(channels[1], channels[2])
        self.up2 = nn.ConvTranspose2d(channels[2], channels[1], 2, stride=2)
        self.dec2 = block(channels[2], channels[1])
        self.up1 = nn.ConvTranspose2d(channels[1], channels[0], 2, stride=2)
        self.dec1 = block(channels[1], channels[0])
        self.out = nn.Conv2d(channels[0], 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        b = self.bottom(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return self.out(u1)


class Shapes(Dataset):
    def __init__(self, size: int, seed: int):
        self.generator = torch.Generator().manual_seed(seed)
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        image = torch.rand(3, 64, 64, generator=self.generator)
        mask = (image.mean(0, keepdim=True) > 0.5).float()
        return image, mask


def dice_loss(logits, target, eps=1.0):
    probs = torch.sigmoid(logits)
    inter = (probs * target).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def main():
    torch.manual_seed(11)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(Shapes(800, seed=1), batch_size=16, shuffle=True)
    val_loader = DataLoader(Shapes(200, seed=2), batch_size=32)
    model = UNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(10):
        model.train()
        for images, masks in train_loader:
            images, masks = images.to(device), masks.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                logits = model(images)
            loss = F.binary_cross_entropy_with_logits(logits.float(), masks) + dice_loss(logits.float(), masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            scores = [1 - dice_loss(model(x.to(device)), y.to(device)) for x, y in val_loader]
        print(f"epoch {epoch}: val dice {torch.stack(scores).mean().item():.3f}")


if __name__ == "__main__":
    main()
