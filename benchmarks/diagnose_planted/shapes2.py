"""Data and models for round 2 of the planted runs (``dev2.py``, ``heldout2.py``).

Reduced from public training examples, nothing downloaded: the MNIST-style CNN and MLP
tutorials (on scikit-learn's bundled 8x8 digits), a char-level and a word-level RNN language
model (the char-rnn / word_language_model examples) on a few generated sentences, a bag-of-words
and a small Transformer-encoder text classifier, a tabular MLP (income in dollars beside
z-scores), a digits autoencoder, a multi-output regression with targets of mixed scale, and a
fine-tune of a frozen convolutional backbone. Frozen with ``heldout2.py`` (sha256 in the commit
that added them): new pieces for the working half go in ``dev2.py``.
"""

from __future__ import annotations

import random
import time

import torch
from torch import nn
from torch.utils.data import Dataset, TensorDataset


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --- images: scikit-learn's digits (1797 8x8 images, 0..16), split once -------------------------

def digits(part: str, *, flat: bool = False, scale: float = 1 / 16, n: int | None = None) -> TensorDataset:
    """``part`` 'train' (first 1200) or 'val' (the rest); pixels times ``scale`` (1/16: 0..1)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) * scale
    y = torch.tensor(d.target, dtype=torch.long)
    x, y = (x[:1200], y[:1200]) if part == "train" else (x[1200:], y[1200:])
    if n is not None:
        x, y = x[:n], y[:n]
    return TensorDataset(x if flat else x.view(-1, 1, 8, 8), y)


def shuffled_labels(data: TensorDataset, seed: int) -> TensorDataset:
    """The same inputs with their labels permuted: a join on the wrong key, nothing to learn."""
    x, y = data.tensors
    return TensorDataset(x, y[torch.randperm(len(y), generator=gen(seed))])


def autoencoder_data(part: str, **kw) -> TensorDataset:
    x = digits(part, flat=True, **kw).tensors[0]
    return TensorDataset(x, x.clone())


class DigitsCNN(nn.Module):
    """The MNIST example's two convolutions, pooling and two linear layers, at 8x8."""

    def __init__(self, channels: int = 16, classes: int = 10, conv_bias: float | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * channels * 16, 64), nn.ReLU(), nn.Linear(64, classes))
        if conv_bias is not None:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.constant_(m.bias, conv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def deep_mlp(*sizes: int, act: type[nn.Module] = nn.ReLU, seed: int = 0, bias: float | None = None) -> nn.Sequential:
    """Linear/activation stack; ``bias``: every hidden bias set to that constant (a bad init)."""
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        lin = nn.Linear(a, b)
        if bias is not None and i < len(sizes) - 2:
            nn.init.constant_(lin.bias, bias)
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers)


def autoencoder(bottleneck: int) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, bottleneck), nn.ReLU(),
                         nn.Linear(bottleneck, 32), nn.ReLU(), nn.Linear(32, 64))


# --- text: generated sentences ---------------------------------------------------------------

SUBJECTS = ["the cat", "a dog", "my friend", "the teacher", "our team", "the old man", "a child", "the bird"]
VERBS = ["likes", "sees", "finds", "wants", "keeps", "makes", "brings", "reads"]
OBJECTS = ["the ball", "a book", "the garden", "some bread", "the river", "a letter", "the song", "a hat"]
GOOD = ["good", "great", "lovely", "fine"]
BAD = ["bad", "awful", "poor", "sad"]
WORDS = ["<pad>"] + sorted({w for p in SUBJECTS + VERBS + OBJECTS + GOOD + BAD for w in p.split()}
                           | {"and", "it", "is", "."})
CHARS = sorted(set(" ".join(WORDS[1:])))
LM_WORDS = WORDS[1:]  # a language model predicts words, never the padding


def sentences(n: int, seed: int) -> list[tuple[str, int]]:
    """'the cat likes a book and it is lovely .' with label 1 (a good word) or 0 (a bad one)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.random() < 0.5
        word = rng.choice(GOOD if label else BAD)
        out.append((f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} and it is {word} .", int(label)))
    return out


def sentence_classes(n: int, seed: int, *, length: int = 12, shuffle: bool = False) -> TensorDataset:
    """Word ids [n, length] (padded with 0) and the sentiment label; ``shuffle``: labels permuted."""
    rows = sentences(n, seed)
    ids = torch.zeros(n, length, dtype=torch.long)
    for i, (text, _) in enumerate(rows):
        words = [WORDS.index(w) for w in text.split() if w in WORDS][:length]
        ids[i, : len(words)] = torch.tensor(words)
    labels = torch.tensor([label for _, label in rows])
    if shuffle:
        labels = labels[torch.randperm(n, generator=gen(seed + 99))]
    return TensorDataset(ids, labels)


def next_token_windows(n_sentences: int, seed: int, *, chars: bool, window: int) -> TensorDataset:
    """Language-model windows over generated text: ``window`` ids in, the next id as the target."""
    text = " ".join(t for t, _ in sentences(n_sentences, seed))
    seq = [CHARS.index(c) for c in text] if chars else [LM_WORDS.index(w) for w in text.split()]
    data = torch.tensor(seq)
    starts = torch.arange(0, len(seq) - window - 1, 2 if chars else 1)
    x = torch.stack([data[s: s + window] for s in starts.tolist()])
    return TensorDataset(x, data[starts + window])


class BagOfWords(nn.Module):
    def __init__(self, vocab: int = len(WORDS), dim: int = 32, classes: int = 2) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean", padding_idx=0)
        self.head = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))


class TinyTransformer(nn.Module):
    """Embedding + learned positions + a 2-layer Transformer encoder, mean-pooled, a linear head."""

    def __init__(self, vocab: int = len(WORDS), dim: int = 32, classes: int = 2, max_len: int = 12) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, 4, 64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(ids) + self.pos[: ids.shape[1]]).mean(1))


class RNNLM(nn.Module):
    """Next-token model: embedding, one recurrent layer (``cell`` 'gru', 'lstm', 'rnn_relu'), a head."""

    def __init__(self, vocab: int, hidden: int = 64, cell: str = "gru", recurrent_gain: float | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, 16)
        if cell == "rnn_relu":
            self.rnn: nn.Module = nn.RNN(16, hidden, batch_first=True, nonlinearity="relu")
        else:
            self.rnn = (nn.GRU if cell == "gru" else nn.LSTM)(16, hidden, batch_first=True)
        if recurrent_gain is not None:  # a recurrent matrix initialised too large (no clipping after it)
            nn.init.orthogonal_(self.rnn.weight_hh_l0, gain=recurrent_gain)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.embed(ids))
        return self.head(out[:, -1])


# --- tabular ---------------------------------------------------------------------------------

def income_table(n: int, seed: int, *, dollars: bool) -> TensorDataset:
    """Six z-scored features and an income; the label says whether income + a mix of the others
    is high. ``dollars``: the income column kept in dollars (mean 5e4) instead of z-scored."""
    g = gen(seed)
    x = torch.randn(n, 7, generator=g)
    w = torch.tensor([1.0, -0.8, 0.6, 0.0, 0.5, -0.4, 1.2])
    y = ((x @ w + 0.3 * torch.randn(n, generator=g)) > 0).long()
    if dollars:
        x[:, 6] = x[:, 6] * 2e4 + 5e4
    return TensorDataset(x, y)


def house_table(n: int, seed: int, *, raw: bool) -> TensorDataset:
    """Living area, year built, rooms and distance to town -> a standardised price. ``raw``: the
    features as a CSV holds them (square feet ~1500, years ~1990, rooms ~3, km ~10), never scaled."""
    g = gen(seed)
    z = torch.randn(n, 4, generator=g)
    price = 0.8 * z[:, 0] + 0.3 * z[:, 1] + 0.2 * z[:, 2] - 0.4 * z[:, 3] + 0.3 * torch.randn(n, generator=g)
    x = z * torch.tensor([500.0, 15.0, 1.0, 5.0]) + torch.tensor([1500.0, 1990.0, 3.0, 10.0]) if raw else z
    return TensorDataset(x, price.unsqueeze(1))


def mixed_scale_targets(n: int, seed: int) -> TensorDataset:
    """Three regression targets of one input: a ratio (~0.1), a count (~10), a z-score, standardised."""
    g = gen(seed)
    x = torch.randn(n, 6, generator=g)
    y = torch.stack([torch.tanh(x[:, 0] + x[:, 1]), x[:, 2] * x[:, 3] + x[:, 4], x[:, 5] - 0.5 * x[:, 0]], 1)
    return TensorDataset(x, y + 0.1 * torch.randn(n, 3, generator=g))


# --- pieces of a run that misbehave ----------------------------------------------------------

class SlowReads(Dataset):
    """Each sample costs ``seconds`` to read (an image decoded from disk in __getitem__)."""

    def __init__(self, data: TensorDataset, seconds: float) -> None:
        self.data, self.seconds = data, seconds

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        time.sleep(self.seconds)
        return self.data[index]


def bce_by_hand(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """A user's binary cross-entropy written from the formula: log(0) once a sigmoid saturates."""
    p = torch.sigmoid(logits[:, 1] - logits[:, 0])
    y = target.float()
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


def gaussian_nll_by_hand(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """A user's Gaussian NLL whose variance is relu(out[:, 1]): log(0) when the ReLU closes."""
    mean, var = out[:, :1], torch.relu(out[:, 1:2])
    return (0.5 * torch.log(var) + (target - mean) ** 2 / (2 * var)).mean()


def base_config(**sections) -> dict:
    config = {"log": {"progress": "off", "every_n_steps": 4, "grad_stats_every": 8},
              "checkpoint": {"enabled": False}, "train": {"epochs": 6, "batch_size": 32}}
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value}
    return config
