"""A first MNIST script, as a newcomer might write it from memory."""  # expect: TW115

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_set = datasets.MNIST("data", train=True, download=True, transform=transform)
test_set = datasets.MNIST("data", train=False, transform=transform)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, num_workers=4)  # expect: TW109, TW122
test_loader = torch.utils.data.DataLoader(test_set, batch_size=1000)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.dropout = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(64, -1)  # expect: TW114
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()

for epoch in range(10):
    model.train()
    running_loss = 0.0
    for images, labels in train_loader:
        outputs = model(images.cuda())
        loss = criterion(outputs, labels.cuda())
        loss.backward()  # expect: TW101
        optimizer.step()
        running_loss += loss.item()  # expect: TW107
    print(f"epoch {epoch}: loss {running_loss / len(train_loader):.3f}")

    correct = 0
    with torch.no_grad():
        for images, labels in test_loader:  # expect: TW103
            correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum().item()
    print(f"accuracy {correct / len(test_set):.3f}")

torch.save(model, "mnist.pt")  # expect: TW111
