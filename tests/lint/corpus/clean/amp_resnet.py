"""Mixed-precision training of a ResNet on CIFAR-10 with torch.amp, clipping and cosine decay."""

import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader


def get_loaders(batch_size: int):
    normalize = T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), normalize])
    test_tf = T.Compose([T.ToTensor(), normalize])
    train_set = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=train_tf)
    test_set = torchvision.datasets.CIFAR10("data", train=False, download=True, transform=test_tf)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=4,
                              pin_memory=True, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=512, num_workers=4, pin_memory=True)
    return train_loader, test_loader


def train_one_epoch(model, loader, optimizer, scaler, criterion, device, log_every=100):
    model.train()
    running = torch.zeros((), device=device)
    for step, (images, labels) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = criterion(model(images), labels)
        scaler.scale(loss).backward()
        # Gradients are scaled by the loss scale until unscaled: clip the real values.
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
        scaler.step(optimizer)
        scaler.update()
        running += loss.detach()
        if (step + 1) % log_every == 0:
            print(f"step {step + 1}: loss {running.item() / log_every:.3f}")
            running.zero_()


@torch.inference_mode()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            logits = model(images)
        correct += (logits.argmax(1) == labels).sum()
        total += labels.numel()
    return (correct / total).item()


def main():
    torch.manual_seed(42)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader = get_loaders(batch_size=128)
    model = torchvision.models.resnet18(num_classes=10).to(device)
    model = model.to(memory_format=torch.channels_last)
    epochs = 30
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    scaler = torch.amp.GradScaler(device.type)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, scaler, criterion, device)
        scheduler.step()
        print(f"epoch {epoch}: test accuracy {accuracy(model, test_loader, device):.3f}")
    torch.save(model.state_dict(), "resnet18_cifar10.pt")


if __name__ == "__main__":
    main()
