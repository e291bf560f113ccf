"""Mixed-precision ImageNet-style training written against the pre-2.4 AMP API."""

import torch
import torch.nn as nn
import torchvision
from torch.cuda.amp import GradScaler, autocast  # expect: TW117
from torch.optim.lr_scheduler import StepLR


def train(model, loader, optimizer, scheduler, scaler, criterion, device):
    model.train()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        with autocast():
            loss = criterion(model(images), labels)
        scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # expect: TW106
        scheduler.step()  # expect: TW112, TW113
        scaler.step(optimizer)
        scaler.update()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.3f}")


def main(train_loader, epochs=90):
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torchvision.models.resnet50().to(device)
    weights = torch.load("resnet50_pretrained.pth")  # expect: TW110
    model.load_state_dict(weights)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    scaler = GradScaler()
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        train(model, train_loader, optimizer, scheduler, scaler, criterion, device)
        torch.save(model.state_dict(), f"resnet50_epoch{epoch}.pt")


if __name__ == "__main__":
    main(train_loader=None)
