"""Data and models for round 3 of the planted runs (``dev3.py``, ``heldout3.py``).

Reduced from kinds of public training examples that rounds 1-2 did not use, nothing downloaded:
a time-series forecaster (a GRU and a 1D-CNN over windows of a generated hourly load series with
daily and weekly seasons, as in the PyTorch forecasting tutorials), multi-label classification
with BCE-with-logits (tag prediction; digit properties), a small per-pixel (segmentation-like)
classifier of squares and disks, a siamese pair model on digits (same digit or not), an
imbalanced tabular fraud classifier, a sale-price regression whose target spans 1e4..1e6, a
small ResNet-style CNN with BatchNorm, and a matrix-factorisation recommender on ratings.
Frozen with ``heldout3.py`` (sha256 in the commit that added them): new pieces go in ``dev3.py``.
"""

from __future__ import annotations

import math

import torch
from benchmarks.diagnose_planted import shapes2
from torch import nn
from torch.utils.data import Dataset, TensorDataset

gen = shapes2.gen  # a seeded generator
base_config = shapes2.base_config  # round 2's run settings: progress off, a log line every 4 steps, 6 epochs of 32


# --- time series: an hourly load with a daily and a weekly season ----------------------------

def load_series(steps: int = 1600, seed: int = 0, *, level: float = 3000.0, amplitude: float = 800.0) -> torch.Tensor:
    """An hourly electricity load in kW: level + daily and weekly seasons + a slow trend + noise."""
    t = torch.arange(steps, dtype=torch.float32)
    shape = torch.sin(2 * math.pi * t / 24) + 0.5 * torch.sin(2 * math.pi * t / 168) + 0.3 * t / steps
    return level + amplitude * (shape + 0.15 * torch.randn(steps, generator=gen(seed)))


def windows(series: torch.Tensor, window: int = 48) -> tuple[torch.Tensor, torch.Tensor]:
    """Sliding windows [N, window, 1] of the series and the next value [N, 1]."""
    x = series.unfold(0, window, 1)[:-1]
    return x.unsqueeze(-1).clone(), series[window:].unsqueeze(-1).clone()


def forecast_split(*, window: int = 48, scaled: bool = True, series: torch.Tensor | None = None
                   ) -> tuple[TensorDataset, TensorDataset]:
    """Windows of the first 1200 hours for training, the rest for validation (time order kept);
    ``scaled``: standardised with the training hours' mean and std."""
    s = load_series() if series is None else series
    if scaled:
        s = (s - s[:1200].mean()) / s[:1200].std()
    x, y = windows(s, window)
    cut = 1200 - window
    return TensorDataset(x[:cut], y[:cut]), TensorDataset(x[cut:], y[cut:])


class GRUForecaster(nn.Module):
    def __init__(self, hidden: int = 32) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.encoder = nn.GRU(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.encoder(x)
        return self.head(out[:, -1])


class ConvForecaster(nn.Module):
    """Dilated 1D convolutions over the window (channels first), pooled, a linear head."""

    def __init__(self, channels: int = 16, batchnorm: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        norm = (lambda: nn.BatchNorm1d(channels)) if batchnorm else nn.Identity
        self.features = nn.Sequential(nn.Conv1d(1, channels, 5, padding=2), norm(), nn.ReLU(),
                                      nn.Conv1d(channels, channels, 5, padding=4, dilation=2), norm(), nn.ReLU(),
                                      nn.AdaptiveAvgPool1d(4))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * channels, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x.transpose(1, 2)))


# --- multi-label: tags of a feature vector; properties of a digit ----------------------------

def tag_table(n: int, seed: int, *, tags: int = 8, dim: int = 24) -> TensorDataset:
    """24 features, 8 tags each present when its own mix of the features (plus noise) is high;
    the tags range from common (~47%) to rare (~6%)."""
    w = torch.randn(dim, tags, generator=gen(11)) / math.sqrt(dim) * 2
    thresholds = torch.linspace(0.2, 2.8, tags)
    g = gen(seed)
    x = torch.randn(n, dim, generator=g)
    y = (x @ w + 0.3 * torch.randn(n, tags, generator=g) > thresholds).float()
    return TensorDataset(x, y)


TAGS = [f"tag_{c}" for c in "abcdefgh"]


class TagStrings(Dataset):
    """Features and tags stored as text ('tag_a|tag_c', as a CSV column holds them), turned into
    a multi-hot target on read with the vocabulary ``TAGS``."""

    def __init__(self, data: TensorDataset, *, respell: dict[int, str] | None = None) -> None:
        self.x, multi_hot = data.tensors
        self.tags = ["|".join(TAGS[j] for j in torch.nonzero(row).flatten().tolist()) for row in multi_hot]
        for i, text in (respell or {}).items():  # rows edited by hand, in the text as it was typed
            self.tags[i] = text
        self.index = {tag: j for j, tag in enumerate(TAGS)}

    def __len__(self) -> int:
        return len(self.tags)

    def __getitem__(self, i: int):
        y = torch.zeros(len(TAGS))
        for tag in filter(None, self.tags[i].split("|")):
            y[self.index[tag]] = 1.0
        return self.x[i], y


def mlp(*sizes: int, seed: int = 0) -> nn.Sequential:
    """Linear layers of these sizes with a ReLU between each two."""
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def digits(part: str, *, n: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's 8x8 digits as [N, 1, 8, 8] in 0..1 and their labels; 'train' is the first 1200."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32).view(-1, 1, 8, 8) / 16
    y = torch.tensor(d.target, dtype=torch.long)
    x, y = (x[:1200], y[:1200]) if part == "train" else (x[1200:], y[1200:])
    return (x[:n], y[:n]) if n is not None else (x, y)


def digit_properties(part: str, **kw) -> TensorDataset:
    """Multi-label digits: [even, five or more, prime, has a closed loop] for each image."""
    x, y = digits(part, **kw)
    props = torch.stack([y % 2 == 0, y >= 5, (y == 2) | (y == 3) | (y == 5) | (y == 7),
                         (y == 0) | (y == 6) | (y == 8) | (y == 9)], 1).float()
    return TensorDataset(x, props)


class SmallCNN(nn.Module):
    def __init__(self, outputs: int = 10) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1),
                                      nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 16, 64), nn.ReLU(), nn.Linear(64, outputs))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


# --- per-pixel classes: squares (1) and disks (2) on a noisy background (0) -------------------

def shape_masks(n: int, seed: int, *, size: int = 16) -> TensorDataset:
    """Images [N, 1, size, size] with one square and one disk, and their masks [N, size, size]."""
    g = gen(seed)
    rows, cols = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    images = 0.1 * torch.randn(n, 1, size, size, generator=g)
    masks = torch.zeros(n, size, size, dtype=torch.long)
    for i in range(n):
        r, c, side = (int(v) for v in torch.randint(0, size - 5, (3,), generator=g))
        side = 3 + side % 3
        masks[i, r: r + side, c: c + side] = 1
        cr, cc = (int(v) for v in torch.randint(3, size - 3, (2,), generator=g))
        masks[i][(rows - cr) ** 2 + (cols - cc) ** 2 <= 6] = 2
    images[:, 0] += torch.where(masks == 1, 1.0, torch.where(masks == 2, 0.6, 0.0))
    return TensorDataset(images, masks)


class PixelNet(nn.Module):
    """A fully convolutional per-pixel classifier (a U-Net reduced to its first stage)."""

    def __init__(self, channels: int = 16, classes: int = 3, batchnorm: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        norm = (lambda: nn.BatchNorm2d(channels)) if batchnorm else nn.Identity
        self.body = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), norm(), nn.ReLU(),
                                  nn.Conv2d(channels, channels, 3, padding=2, dilation=2), norm(), nn.ReLU(),
                                  nn.Conv2d(channels, classes, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


# --- pairs: a siamese digits model; a recommender on (user, item) ------------------------------

class Pairs(Dataset):
    """``((a[i], b[i]), y[i])``: two inputs for ``forward(a, b)`` and a target."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor, y: torch.Tensor) -> None:
        self.a, self.b, self.y = a, b, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return (self.a[i], self.b[i]), self.y[i]


def digit_pairs(part: str, n: int, seed: int) -> Pairs:
    """Pairs of flattened digits, half of the same digit (label 1) and half of different ones."""
    x, y = digits(part)
    x = x.flatten(1)
    g = gen(seed)
    first = torch.randint(0, len(y), (n,), generator=g)
    same = torch.rand(n, generator=g) < 0.5
    second = torch.empty(n, dtype=torch.long)
    for i in range(n):
        pool = torch.nonzero((y == y[first[i]]) == bool(same[i])).flatten()
        second[i] = pool[torch.randint(0, len(pool), (1,), generator=g)]
    return Pairs(x[first], x[second], (y[first] == y[second]).long())


class Siamese(nn.Module):
    """One encoder for both digits; the head reads |e(a) - e(b)| and says same or different."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.encoder = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, dim))
        self.head = nn.Linear(dim, 2)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.head((self.encoder(a) - self.encoder(b)).abs())


USERS, ITEMS = 200, 150


def ratings(*, users: int = USERS, items: int = ITEMS, rank: int = 6, seed: int = 0
            ) -> tuple[Pairs, Pairs, float]:
    """Ratings 1..5 of rank-``rank`` tastes plus user and item biases, 16000 seen for training and
    4000 others for validation; returns both and the training ratings' mean."""
    g = gen(seed)
    u, v = torch.randn(users, rank, generator=g), torch.randn(items, rank, generator=g)
    bu, bi = 0.3 * torch.randn(users, generator=g), 0.3 * torch.randn(items, generator=g)
    cells = torch.randperm(users * items, generator=g)[:20_000]
    uid, iid = cells // items, cells % items
    r = 3 + 0.5 * (u[uid] * v[iid]).sum(1) / math.sqrt(rank) * 2 + bu[uid] + bi[iid]
    r = (r + 0.3 * torch.randn(len(r), generator=g)).clamp(1, 5).unsqueeze(1)
    train, val = slice(0, 16_000), slice(16_000, None)
    return Pairs(uid[train], iid[train], r[train]), Pairs(uid[val], iid[val], r[val]), float(r[train].mean())


class MatrixFactorization(nn.Module):
    """rating = mean + user bias + item bias + <user vector, item vector>."""

    def __init__(self, users: int = USERS, items: int = ITEMS, dim: int = 16, mean: float = 3.0) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.user, self.item = nn.Embedding(users, dim), nn.Embedding(items, dim)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)
        self.user_bias, self.item_bias = nn.Embedding(users, 1), nn.Embedding(items, 1)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)
        self.mean = mean

    def forward(self, user: torch.Tensor, item: torch.Tensor) -> torch.Tensor:
        dot = (self.user(user) * self.item(item)).sum(-1, keepdim=True)
        return self.mean + self.user_bias(user) + self.item_bias(item) + dot


# --- tabular: fraud (rare positives), sale prices (a target over two decades) ------------------

def fraud_table(n: int, seed: int) -> TensorDataset:
    """12 z-scored transaction features; about 4% of the rows are fraud, told by a mix of five."""
    w = torch.tensor([1.5, -1.2, 1.0, 0.8, -0.9] + [0.0] * 7)
    g = gen(seed)
    x = torch.randn(n, 12, generator=g)
    y = (x @ w + 0.5 * torch.randn(n, generator=g) > 4.0).long()
    return TensorDataset(x, y)


def sale_prices(n: int, seed: int, *, dollars: bool = False) -> TensorDataset:
    """Eight z-scored house features and a sale price: log-normal, about 2e4..1e6 dollars.
    The target is the standardised log price (what the tutorials train on), or ``dollars``."""
    w = torch.tensor([0.5, 0.3, -0.2, 0.25, 0.1, 0.0, 0.15, -0.1])
    g = gen(seed)
    x = torch.randn(n, 8, generator=g)
    log_price = 11.8 + x @ w + 0.15 * torch.randn(n, generator=g)
    y = log_price.exp() if dollars else (log_price - 11.8) / 0.72
    return TensorDataset(x, y.unsqueeze(1))


# --- a small ResNet-style CNN with BatchNorm --------------------------------------------------

class Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels)
        self.conv2, self.bn2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(out)))


class TinyResNet(nn.Module):
    """Stem conv + BatchNorm, two residual blocks, global average pooling, a linear classifier."""

    def __init__(self, channels: int = 16, classes: int = 10) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(Block(channels), Block(channels))
        self.fc = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


# --- pieces of a run that misbehave ----------------------------------------------------------

class ShardStream(Dataset):
    """A dataset read shard after shard: after ``switch_after`` samples served, the next shard's
    copy of the same rows is read, which the exporter wrote with inputs and target times ``factor``."""

    def __init__(self, data: Dataset, *, switch_after: int, factor: float, target_too: bool = True) -> None:
        self.data, self.switch_after, self.factor, self.target_too = data, switch_after, factor, target_too
        self.served = 0

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int):
        x, y = self.data[i]
        self.served += 1
        if self.served <= self.switch_after:
            return x, y
        x = tuple(v * self.factor for v in x) if isinstance(x, tuple) else x * self.factor
        return x, (y * self.factor if self.target_too else y)
