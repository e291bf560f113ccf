"""A tiny character-level transformer trained with a hand-written loop, warm-up and cosine decay."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BLOCK_SIZE = 64
BATCH_SIZE = 32
MAX_STEPS = 5000
WARMUP_STEPS = 200
EVAL_INTERVAL = 250


class TinyGPT(nn.Module):
    def __init__(self, vocab_size: int, dim: int = 128, layers: int = 4, heads: int = 4):
        super().__init__()
        self.token = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(BLOCK_SIZE, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, idx):
        batch, length = idx.shape
        positions = torch.arange(length, device=idx.device)
        x = self.token(idx) + self.position(positions)
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=idx.device)
        x = self.blocks(x, mask=mask, is_causal=True)
        return self.head(x).reshape(batch, length, -1)


def get_batch(data: torch.Tensor, generator: torch.Generator):
    starts = torch.randint(len(data) - BLOCK_SIZE - 1, (BATCH_SIZE,), generator=generator)
    x = torch.stack([data[s : s + BLOCK_SIZE] for s in starts])
    y = torch.stack([data[s + 1 : s + 1 + BLOCK_SIZE] for s in starts])
    return x, y


def lr_lambda(step: int) -> float:
    if step < WARMUP_STEPS:
        return (step + 1) / WARMUP_STEPS
    progress = (step - WARMUP_STEPS) / max(1, MAX_STEPS - WARMUP_STEPS)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


@torch.no_grad()
def estimate_loss(model, data, generator, iters: int = 20) -> float:
    model.eval()
    losses = torch.zeros(iters)
    for i in range(iters):
        x, y = get_batch(data, generator)
        logits = model(x)
        losses[i] = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    model.train()
    return losses.mean().item()


def main(text: str) -> None:
    torch.manual_seed(1337)
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    generator = torch.Generator().manual_seed(1337)

    model = TinyGPT(len(chars))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lr_lambda)

    model.train()
    for step in range(MAX_STEPS):
        x, y = get_batch(train_data, generator)
        logits = model(x)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % EVAL_INTERVAL == 0:
            val_loss = estimate_loss(model, val_data, generator)
            print(f"step {step}: train {loss.item():.3f} val {val_loss:.3f}")


if __name__ == "__main__":
    with open("input.txt", encoding="utf-8") as handle:
        main(handle.read())
