"""Fast CIFAR-10 training with OneCycleLR, stepped after every batch as the schedule requires."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU())


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.prep = conv_bn(3, 64)
        self.layer1 = nn.Sequential(conv_bn(64, 128), nn.MaxPool2d(2))
        self.res1 = nn.Sequential(conv_bn(128, 128), conv_bn(128, 128))
        self.layer2 = nn.Sequential(conv_bn(128, 256), nn.MaxPool2d(2))
        self.layer3 = nn.Sequential(conv_bn(256, 512), nn.MaxPool2d(2))
        self.res3 = nn.Sequential(conv_bn(512, 512), conv_bn(512, 512))
        self.classifier = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.layer1(self.prep(x))
        x = x + self.res1(x)
        x = self.layer3(self.layer2(x))
        x = x + self.res3(x)
        x = F.adaptive_max_pool2d(x, 1).flatten(1)
        return self.classifier(x)


def main(epochs: int = 24, batch_size: int = 512) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor()])
    train_set = datasets.CIFAR10("data", train=True, download=True, transform=train_tf)
    test_set = datasets.CIFAR10("data", train=False, download=True, transform=transforms.ToTensor())
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=4, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=1024, num_workers=4)

    model = SmallResNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.4, momentum=0.9, nesterov=True, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=0.4, epochs=epochs, steps_per_epoch=len(train_loader)
    )
    for epoch in range(epochs):
        model.train()
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.2)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()

        model.eval()
        correct = torch.zeros((), device=device)
        with torch.no_grad():
            for images, labels in test_loader:
                images, labels = images.to(device), labels.to(device)
                correct += (model(images).argmax(1) == labels).sum()
        print(f"epoch {epoch}: test accuracy {correct.item() / len(test_set):.4f}")


if __name__ == "__main__":
    main()
