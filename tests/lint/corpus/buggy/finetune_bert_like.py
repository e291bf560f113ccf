"""Fine-tune a pretrained encoder with a frozen embedding layer and a new head."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Classifier(nn.Module):
    def __init__(self, encoder: nn.Module, hidden: int, classes: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        return self.head(self.encoder(tokens)[:, 0])


def evaluate(model, val_loader, criterion):
    total = 0.0
    for tokens, labels in val_loader:  # expect: TW104
        total += criterion(model(tokens), labels)
    return total / len(val_loader)


def main(encoder, train_set, val_set, epochs=3, resume=None):
    torch.manual_seed(42)
    model = Classifier(encoder, hidden=768, classes=2)
    if resume:
        model.load_state_dict(torch.load(resume, map_location="cpu")["model"])  # expect: TW131
    for p in model.encoder.embeddings.parameters():
        p.require_grad = False  # expect: TW118
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(epochs):
        for tokens, labels in train_loader:
            optimizer.zero_grad()
            criterion(model(tokens), labels).backward()
            optimizer.step()
        model.eval()  # expect: TW105
        val_loss = evaluate(model, val_loader, criterion)
        print(f"epoch {epoch}: val loss {val_loss:.4f}")
        torch.save({"model": model.state_dict(), "epoch": epoch}, "finetuned.pt")  # expect: TW119


if __name__ == "__main__":
    main(encoder=None, train_set=None, val_set=None)
