"""Load a trained model and label a folder of images."""

import sys

import torch
import torchvision
from PIL import Image
from torchvision import transforms

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def predict(paths):
    model = torchvision.models.mobilenet_v3_small(num_classes=5)
    checkpoint = torch.load("classifier.ckpt", weights_only=False)  # expect: TW110
    model.load_state_dict(checkpoint["model"])  # expect: TW124
    model = model.cuda()  # expect: TW108
    preprocess = transforms.Compose([transforms.Resize(224), transforms.ToTensor()])
    batch = torch.stack([preprocess(Image.open(p).convert("RGB")) for p in paths]).to(device)
    with torch.no_grad():
        return model(batch).argmax(dim=1).tolist()


if __name__ == "__main__":
    print(predict(sys.argv[1:]))
