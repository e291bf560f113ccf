"""Transfer learning: freeze a pretrained backbone, train a new head, then unfreeze."""

import copy
import time

import torch
import torch.nn as nn
from torch.optim import lr_scheduler
from torchvision import datasets, models, transforms


def make_loaders(data_dir: str):
    data_transforms = {
        "train": transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
        ]),
        "val": transforms.Compose([
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
        ]),
    }
    image_datasets = {
        split: datasets.ImageFolder(f"{data_dir}/{split}", data_transforms[split])
        for split in ("train", "val")
    }
    dataloaders = {
        split: torch.utils.data.DataLoader(
            image_datasets[split], batch_size=32, shuffle=(split == "train"), num_workers=4
        )
        for split in ("train", "val")
    }
    return dataloaders, len(image_datasets["train"].classes)


def train_model(model, dataloaders, criterion, optimizer, scheduler, device, num_epochs=25):
    since = time.time()
    best_weights = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        model.train()
        for inputs, labels in dataloaders["train"]:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
        scheduler.step()

        model.eval()
        corrects = 0
        with torch.no_grad():
            for inputs, labels in dataloaders["val"]:
                inputs, labels = inputs.to(device), labels.to(device)
                corrects += (model(inputs).argmax(1) == labels).sum().item()
        accuracy = corrects / len(dataloaders["val"].dataset)
        print(f"epoch {epoch}: val acc {accuracy:.4f}")
        if accuracy > best_acc:
            best_acc = accuracy
            best_weights = copy.deepcopy(model.state_dict())
    print(f"Training complete in {time.time() - since:.0f}s, best val acc {best_acc:.4f}")
    model.load_state_dict(best_weights)
    return model


def main(data_dir: str = "data/hymenoptera") -> None:
    torch.manual_seed(0)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    dataloaders, num_classes = make_loaders(data_dir)
    model = models.resnet18(weights="IMAGENET1K_V1")
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    model = model.to(device)
    optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.001, momentum=0.9)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)
    model = train_model(model, dataloaders, nn.CrossEntropyLoss(), optimizer, scheduler, device)
    torch.save(model.state_dict(), "finetuned_resnet18.pt")


if __name__ == "__main__":
    main()
