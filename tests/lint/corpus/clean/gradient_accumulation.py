"""Fine-tune a text classifier with gradient accumulation to reach a large effective batch."""

import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

ACCUMULATION_STEPS = 8
MICRO_BATCH = 4


class ToyTokens(Dataset):
    def __init__(self, size: int, seq_len: int = 64, vocab: int = 1000):
        generator = torch.Generator().manual_seed(7)
        self.tokens = torch.randint(0, vocab, (size, seq_len), generator=generator)
        self.labels = (self.tokens[:, 0] % 2).long()

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, index):
        return self.tokens[index], self.labels[index]


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab: int = 1000, dim: int = 128, classes: int = 2):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.head(self.embed(tokens))


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(model, loader, optimizer, criterion, epochs: int) -> None:
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        for step, (tokens, labels) in enumerate(loader):
            loss = criterion(model(tokens), labels)
            # Each micro-batch carries 1/k of the effective batch's gradient.
            (loss / ACCUMULATION_STEPS).backward()
            if (step + 1) % ACCUMULATION_STEPS == 0 or step + 1 == len(loader):
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        print(f"epoch {epoch} done")


if __name__ == "__main__":
    seed_everything(0)
    train_loader = DataLoader(ToyTokens(4096), batch_size=MICRO_BATCH, shuffle=True)
    model = BagOfEmbeddings()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    train(model, train_loader, optimizer, nn.CrossEntropyLoss(), epochs=3)
    torch.save(model.state_dict(), "bag_of_embeddings.pt")
