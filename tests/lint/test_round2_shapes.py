"""Issue 21, round 2: shapes reduced from real scripts, each with its source, that lint must
report, and the false-alarm shapes the issue names, which must stay quiet."""

from __future__ import annotations

import pytest

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source


def codes(source: str, *select: str) -> list[tuple[str, int]]:
    config = LintConfig(select=select) if select else None
    return [(f.code, f.line) for f in lint_source(source, config=config)]


# --- CUDA-only by design: no finding about .cuda() ------------------------------------------

# MorvanZhou/PyTorch-Tutorial 502_GPU.py: no check anywhere, .cuda() everywhere.
NO_CHECK = """\
import torch
cnn = CNN()
cnn.cuda()
test_x = torch.unsqueeze(test_data.test_data, dim=1).type(torch.FloatTensor)[:2000].cuda() / 255.
if torch.cuda.device_count() > 1:
    cnn = torch.nn.DataParallel(cnn).cuda()
"""

# A script that refuses to run without a GPU (the `else: raise NotImplementedError("This code
# requires GPU")` of contrastive-learning repositories' linear-probe scripts).
REFUSES_CPU = """\
import torch
def set_model(model):
    if torch.cuda.is_available():
        model = model.cuda()
    else:
        raise NotImplementedError("This code requires GPU")
    return model
def train(loader, model):
    for images, labels in loader:
        images = images.cuda(non_blocking=True)
"""

ASSERTS_CUDA = """\
import torch
assert torch.cuda.is_available(), "needs a GPU"
if torch.cuda.is_available():
    torch.backends.cudnn.benchmark = True
    model.cuda()
x = y.cuda()
"""


@pytest.mark.parametrize("source", [NO_CHECK, REFUSES_CPU, ASSERTS_CUDA], ids=["no-check", "raise", "assert"])
def test_cuda_only_by_design_stays_quiet(source):
    assert codes(source, "TW108", "TW128") == []


def test_a_flag_check_that_raises_does_not_make_the_file_cuda_only():
    # `--cuda` without CUDA is refused; a run without --cuda is still meant to work.
    source = (
        "import torch\n"
        "if args.cuda and not torch.cuda.is_available():\n"
        "    raise ValueError('--cuda given, but no CUDA')\n"
        "if args.cuda:\n"
        "    model.cuda()\n"
        "x = y.cuda()\n"
    )
    assert codes(source, "TW108") == [("TW108", 6)]


# --- a loss already divided through amp.scale_loss -------------------------------------------

# NVIDIA/apex examples and NVIDIA/tacotron2 train.py: apex's `with amp.scale_loss(loss, opt) as
# scaled_loss: scaled_loss.backward()`, here with the loss divided for accumulation.
SCALE_LOSS = """\
from apex import amp
def train(loader, model, optimizer, criterion, accumulation_steps):
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        {divide}
        with amp.scale_loss({handed}, optimizer) as scaled_loss:
            scaled_loss.backward()
        if (step + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
"""


@pytest.mark.parametrize(
    "divide, handed",
    [("loss = loss / accumulation_steps", "loss"), ("pass", "loss / accumulation_steps")],
    ids=["divided-before", "divided-in-call"],
)
def test_loss_divided_through_amp_scale_loss_stays_quiet(divide, handed):
    assert codes(SCALE_LOSS.format(divide=divide, handed=handed), "TW116") == []


def test_undivided_loss_through_amp_scale_loss_is_still_reported():
    assert codes(SCALE_LOSS.format(divide="pass", handed="loss"), "TW116") == [("TW116", 7)]


# --- schedulers stepped with an explicit epoch, or per batch on purpose ----------------------

# facebookresearch/deit main.py: `lr_scheduler.step(epoch)` at the epoch's end; the pre-1.1
# idiom puts it first. Either way the LR is read at the epoch given.
EXPLICIT_EPOCH = """\
import torch
def main(model, loader, optimizer, criterion, args):
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
    for epoch in range(args.start_epoch, args.epochs):
        scheduler.step(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            warm.step(epoch + 1 / len(loader))
    warm = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60])
"""

# facebookresearch/detectron2's solver: MultiStepLR-style steps written in iterations
# (SOLVER.STEPS = (60000, 80000)) and stepped every iteration on purpose.
PER_ITERATION = """\
import torch
def main(model, loader, optimizer, criterion, cfg):
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[60000, 80000])
    decay = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg.max_iter // 3)
    for epoch in range(cfg.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            scheduler.step()
            decay.step()
"""


@pytest.mark.parametrize("source", [EXPLICIT_EPOCH, PER_ITERATION], ids=["explicit-epoch", "per-iteration"])
def test_schedules_stepped_on_purpose_stay_quiet(source):
    assert codes(source, "TW112", "TW113") == []


def test_an_epoch_schedule_stepped_every_batch_is_still_reported():
    source = PER_ITERATION.replace("milestones=[60000, 80000]", "milestones=[30, 60]")
    assert codes(source, "TW113") == [("TW113", 10)]


# --- names inside type annotations -----------------------------------------------------------

# facebookresearch/deit engine.py: train_one_epoch(model: torch.nn.Module, ...,
# optimizer: torch.optim.Optimizer, device: torch.device, ...).
ANNOTATED = """\
from __future__ import annotations
import torch
def fit(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
        scaler: torch.cuda.amp.GradScaler | None, mask: torch.cuda.FloatTensor) -> torch.cuda.FloatTensor:
    state: torch.cuda.amp.GradScaler = scaler
    return mask
"""


def test_names_inside_type_annotations_stay_quiet():
    assert codes(ANNOTATED) == []


def test_the_same_names_used_as_values_are_still_reported():
    source = "import torch\nscaler = torch.cuda.amp.GradScaler()\nmask = torch.cuda.FloatTensor(3)\n"
    assert [c for c, _ in codes(source, "TW117", "TW128")] == ["TW117", "TW128"]


# --- TW132: `import model` then `model = model.RNNModel(...)` --------------------------------

# salesforce/awd-lstm-lm main.py: the module `model` is rebound to the built RNN, and
# evaluate() runs it over the validation set without no_grad.
AWD_LSTM = """\
import torch
import model
model = model.RNNModel(args.model, ntokens, args.emsize)
def evaluate(data_source, batch_size=10):
    model.eval()
    total_loss = 0
    for i in range(0, data_source.size(0) - 1, args.bptt):
        data, targets = get_batch(data_source, i, args, evaluation=True)
        output, hidden = model(data, hidden)
        total_loss += len(data) * criterion(output, targets).data
    return total_loss
"""


def test_a_model_rebound_over_its_module_is_followed():
    assert codes(AWD_LSTM, "TW132") == [("TW132", 9)]


def test_a_module_that_is_never_rebound_stays_a_module():
    source = AWD_LSTM.replace("model = model.RNNModel(args.model, ntokens, args.emsize)\n", "")
    assert codes(source, "TW132") == []


# --- TW125: a module-level whole-module load used inside a function --------------------------

# kimiyoung/transformer-xl pytorch/eval.py: `model = torch.load(f)` at the top, then
# `model.eval()` inside evaluate().
TXL_EVAL = """\
import torch
with open(path, 'rb') as f:
    model = torch.load(f)
model = model.to(device)
def evaluate(eval_iter):
    model.eval()
def other(model):
    model.eval()
"""


def test_a_module_level_load_is_followed_into_functions_that_read_it():
    assert codes(TXL_EVAL, "TW125") == [("TW125", 3)]


def test_a_parameter_of_the_same_name_is_not_the_loaded_object():
    source = TXL_EVAL.replace("def evaluate(eval_iter):\n    model.eval()\n", "")
    assert codes(source, "TW125") == []


# --- TW131: a resume that loses the schedule's place -----------------------------------------

# kimiyoung/transformer-xl pytorch/train.py: --restart brings back the model and optimizer, but
# the scheduler is stepped with train_step, which starts at 0 on every run.
TXL_RESTART = """\
import torch
train_step = 0
if args.restart:
    with open(model_path, 'rb') as f:
        model = torch.load(f)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.max_step)
if args.restart:
    optimizer.load_state_dict(torch.load(optimizer_path))
def train():
    global train_step
    for batch, (data, target) in enumerate(train_iter):
        loss = model(data, target)
        loss.backward()
        optimizer.step()
        train_step += 1
        scheduler.step(train_step)
"""


def test_a_resume_whose_schedule_restarts_is_reported():
    found = lint_source(TXL_RESTART, config=LintConfig(select=("TW131",)))
    assert [(f.code, f.line) for f in found] == [("TW131", 5)]
    assert "not the scheduler" in found[0].message


def test_a_restored_counter_or_scheduler_keeps_the_resume_quiet():
    counter = TXL_RESTART.replace("train_step = 0\n", "train_step = checkpoint['step'] if args.restart else 0\n")
    restored = TXL_RESTART + "if args.restart:\n    scheduler.load_state_dict(torch.load(sched_path))\n"
    assert codes(counter, "TW131") == []
    assert codes(restored, "TW131") == []
