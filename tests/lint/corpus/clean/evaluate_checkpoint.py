"""Evaluate a saved classifier on a test folder and write per-class accuracy."""

import argparse
import json

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms


def load_model(path: str, num_classes: int, device: torch.device) -> torch.nn.Module:
    model = torchvision.models.resnet34(num_classes=num_classes)
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state)
    model.eval()
    return model.to(device)


@torch.inference_mode()
def evaluate(model, loader, device, num_classes: int) -> dict[str, float]:
    correct = torch.zeros(num_classes)
    seen = torch.zeros(num_classes)
    for images, labels in loader:
        predictions = model(images.to(device)).argmax(dim=1).cpu()
        for label, prediction in zip(labels, predictions):
            seen[label] += 1
            correct[label] += int(label == prediction)
    return {str(i): (correct[i] / seen[i]).item() for i in range(num_classes) if seen[i] > 0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("test_dir")
    parser.add_argument("--out", default="per_class_accuracy.json")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    transform = transforms.Compose(
        [transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()]
    )
    test_set = torchvision.datasets.ImageFolder(args.test_dir, transform=transform)
    test_loader = DataLoader(test_set, batch_size=128, num_workers=4)
    model = load_model(args.checkpoint, len(test_set.classes), device)
    model.eval()
    results = evaluate(model, test_loader, device, len(test_set.classes))
    with open(args.out, "w") as handle:
        json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
