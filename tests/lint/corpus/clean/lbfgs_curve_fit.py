"""Fit a small physical model to measurements with L-BFGS and a closure."""

import torch


class Damped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.amplitude = torch.nn.Parameter(torch.tensor(1.0))
        self.decay = torch.nn.Parameter(torch.tensor(0.1))
        self.frequency = torch.nn.Parameter(torch.tensor(1.0))

    def forward(self, t):
        return self.amplitude * torch.exp(-self.decay * t) * torch.cos(self.frequency * t)


def fit(t, measured, steps: int = 50):
    model = Damped()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=20, line_search_fn="strong_wolfe")
    for step in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = torch.mean((model(t) - measured) ** 2)
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        if step % 10 == 0:
            print(f"step {step}: mse {loss.item():.6f}")
    return model


if __name__ == "__main__":
    torch.manual_seed(0)
    t = torch.linspace(0, 10, 200)
    measured = 2.0 * torch.exp(-0.3 * t) * torch.cos(2.0 * t) + 0.02 * torch.randn(200)
    fitted = fit(t, measured)
    print({name: round(p.item(), 3) for name, p in fitted.named_parameters()})
