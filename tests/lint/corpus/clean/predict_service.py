"""Batch inference: load trained weights once, predict for a folder of feature files."""

from pathlib import Path

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, in_features: int = 32, classes: int = 5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        return self.net(x)


class Predictor:
    def __init__(self, weights: Path, device: str = "cpu"):
        self.device = torch.device(device)
        self.model = Classifier()
        self.model.load_state_dict(torch.load(weights, map_location=self.device, weights_only=True))
        self.model.to(self.device)
        self.model.eval()

    @torch.inference_mode()
    def predict(self, features: torch.Tensor) -> torch.Tensor:
        return self.model(features.to(self.device)).softmax(dim=-1).cpu()


def main(folder: str = "features", weights: str = "classifier.pt") -> None:
    predictor = Predictor(Path(weights))
    for path in sorted(Path(folder).glob("*.pt")):
        features = torch.load(path, map_location="cpu", weights_only=True)
        probabilities = predictor.predict(features)
        print(path.name, probabilities.argmax(dim=-1).tolist())


if __name__ == "__main__":
    main()
