"""A detector training script in the shape of ssd.pytorch's train.py/eval.py (torch 0.3 era)."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader


def train(net, dataset, max_iter, criterion):
    torch.manual_seed(0)
    data_loader = DataLoader(dataset, batch_size=32, shuffle=True)
    optimizer = optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    batch_iterator = iter(data_loader)
    for iteration in range(max_iter):
        images, targets = next(batch_iterator)  # expect: TW130
        optimizer.zero_grad()
        loss = criterion(net(images), targets)
        loss.backward()
        optimizer.step()
        print("loss %.4f" % loss.data[0])  # expect: TW129
    torch.save(net.state_dict(), "ssd.pth")


def test_net(net, test_x):
    net.eval()
    detections = net(test_x)  # expect: TW132
    return detections.argmax(1)


if __name__ == "__main__":
    model = nn.Linear(4, 2)
    train(model, None, 10, nn.CrossEntropyLoss())
