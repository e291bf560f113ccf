# A first segmentation trainer that keeps its losses for a plot, as Skamlo/crack-image-segmentation's
# modules/train/train_epoch.py and Pointnet2's train_semseg.py do (tests/lint/worked9, worked8):
# the kept values are the live loss tensors, each with its step's graph.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_epoch(loader, model, optimizer, criterion):
    model.train()
    history = []
    loss_sum = 0
    for images, masks in loader:
        optimizer.zero_grad()
        loss = criterion(model(images), masks)
        loss.backward()
        optimizer.step()
        history.append(loss)  # expect: TW160
        loss_sum += loss  # expect: TW160
    return history, loss_sum / len(loader)


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 3, 8, 8), torch.rand(64, 1, 8, 8))
    train_loader = DataLoader(data, batch_size=8, shuffle=True)
    val_loader = DataLoader(data, batch_size=8, shuffle=True)  # expect: TW161
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(3):
        history, mean = train_epoch(train_loader, model, optimizer, criterion)
        model.eval()
        correct = 0
        with torch.no_grad():
            for i, (images, masks) in enumerate(val_loader):
                correct += ((model(images) > 0) == (masks > 0.5)).sum().item()
                if i + 1 == 2:  # a few batches of a shuffled set: another subset every epoch
                    break
        print(epoch, float(mean), correct)
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
