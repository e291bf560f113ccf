"""Sentiment classification with an LSTM over padded sequences, clipping gradients as RNNs need."""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset, random_split


class Reviews(Dataset):
    def __init__(self, encoded: list[list[int]], labels: list[int]):
        self.encoded = encoded
        self.labels = labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.tensor(self.encoded[i]), torch.tensor(self.labels[i], dtype=torch.float)


def collate(batch):
    sequences, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in sequences])
    return pad_sequence(sequences, batch_first=True), lengths, torch.stack(labels)


class SentimentLSTM(nn.Module):
    def __init__(self, vocab_size: int, embed_dim: int = 100, hidden: int = 256):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=2, batch_first=True, dropout=0.3)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(
            self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        _, (hidden, _) = self.lstm(packed)
        return self.fc(hidden[-1]).squeeze(1)


def binary_accuracy(logits, labels):
    return ((logits > 0).float() == labels).float().mean()


def run_epoch(model, loader, criterion, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total_loss = torch.zeros(())
    total_acc = torch.zeros(())
    with torch.set_grad_enabled(training):
        for tokens, lengths, labels in loader:
            logits = model(tokens, lengths)
            loss = criterion(logits, labels)
            if training:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
                optimizer.step()
            total_loss += loss.detach()
            total_acc += binary_accuracy(logits.detach(), labels)
    return (total_loss / len(loader)).item(), (total_acc / len(loader)).item()


def main(encoded, labels, vocab_size):
    torch.manual_seed(2024)
    dataset = Reviews(encoded, labels)
    train_set, valid_set = random_split(dataset, [0.9, 0.1], generator=torch.Generator().manual_seed(2024))
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, collate_fn=collate)
    valid_loader = DataLoader(valid_set, batch_size=256, collate_fn=collate)
    model = SentimentLSTM(vocab_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(5):
        train_loss, train_acc = run_epoch(model, train_loader, criterion, optimizer)
        valid_loss, valid_acc = run_epoch(model, valid_loader, criterion)
        print(f"{epoch}: train {train_loss:.3f}/{train_acc:.3f} valid {valid_loss:.3f}/{valid_acc:.3f}")
    torch.save(model.state_dict(), "sentiment_lstm.pt")
