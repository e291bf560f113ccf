# A first GPU port of a CPU script, as mliu2023/SmartHeartPipeline's train_autoencoder.py
# (tests/lint/worked9) is: the batches go to the device, the model does not.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(64, 10), torch.randint(0, 2, (64,)))
    train_loader = DataLoader(data, batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))  # expect: TW162
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(2):
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
