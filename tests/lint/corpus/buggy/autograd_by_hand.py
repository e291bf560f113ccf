"""A newcomer's first steps: gradient descent by hand, a char-RNN, and a reload for inference."""  # expect: TW115

import torch
import torch.nn as nn

dtype = torch.cuda.FloatTensor  # expect: TW128

x = torch.randn(100, 3).type(dtype)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]]).type(dtype)
w = torch.randn(3, 1, requires_grad=True)
for step in range(200):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w -= 0.05 * w.grad  # expect: TW127
    w.grad = None


class CharRNN(nn.Module):
    def __init__(self, vocab=65, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state


def train_rnn(batches, epochs=2):
    model = CharRNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    state = torch.zeros(1, 32, 128)
    for epoch in range(epochs):
        for tokens, targets in batches:
            optimizer.zero_grad()
            logits, state = model(tokens, state)  # expect: TW126
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
            loss.backward()
            optimizer.step()
    torch.save(model, "char_rnn.pt")  # expect: TW111
    return model


def sample(prompt):
    model = torch.load("char_rnn.pt")  # expect: TW125
    model.eval()
    with torch.no_grad():
        return model(prompt, None)


if __name__ == "__main__":
    train_rnn(batches=[])
    print(sample(torch.zeros(1, 1, dtype=torch.long)))
