"""A custom training loop with a warm-up schedule and a teacher network."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import LambdaLR

WARMUP_STEPS = 500


def warmup(step):
    return min(1.0, (step + 1) / WARMUP_STEPS)


def distill(student, teacher, loader, epochs=10):
    torch.manual_seed(0)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    scheduler = LambdaLR(optimizer, lr_lambda=warmup)
    teacher.eval()
    for epoch in range(epochs):
        student.train()
        for x, _ in loader:
            optimizer.zero_grad()
            with torch.no_grad():
                target = teacher(x)
                loss = F.kl_div(F.log_softmax(student(x), -1), F.softmax(target, -1), reduction="batchmean")
                loss.backward()  # expect: TW120
            optimizer.step()
        scheduler.step()  # expect: TW113


def finetune_head(model, loader):
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(model.head.parameters(), lr=0.01)
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        optimizer.step()  # expect: TW102
