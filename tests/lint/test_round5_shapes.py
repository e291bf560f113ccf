"""Issue 21, round 5: shapes reduced from the working half's scripts (tests/lint/worked5), each
with its source, where a rule warned about what was not a bug or missed one; each says what lint
now reports."""

from __future__ import annotations

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source


def found(source: str, *select: str) -> list[tuple[str, int, str]]:
    config = LintConfig(select=select) if select else None
    return [(f.code, f.line, f.level.value) for f in lint_source(source, config=config)]


# --- TW112: per batch one step of thousands is lost; per epoch a whole epoch ---------------

# jeonsworld/ViT-pytorch train.py: a warm-up schedule stepped every optimizer step, just before it.
VIT = """\
import torch
optimizer = torch.optim.SGD(model.parameters(), lr=3e-2, momentum=0.9)
scheduler = WarmupCosineSchedule(optimizer, warmup_steps=500, t_total=10000)
for step, (x, y) in enumerate(train_loader):
    loss = model(x, y)
    loss.backward()
    scheduler.step()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_scheduler_stepped_before_the_optimizer_every_batch_is_info():
    assert found(VIT, "TW112") == [("TW112", 7, "info")]


# ethanfetaya/NRI train.py: train(epoch) steps the scheduler first, then loops over the batches.
NRI = """\
import torch
optimizer = torch.optim.Adam(params, lr=0.0005)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=200, gamma=0.5)
def train(epoch):
    model.train()
    scheduler.step()
    for data, relations in train_loader:
        optimizer.zero_grad()
        loss = model(data).sum()
        loss.backward()
        optimizer.step()
for epoch in range(500):
    train(epoch)
"""


def test_a_per_epoch_function_that_steps_the_scheduler_before_its_batches_warns():
    assert found(NRI, "TW112") == [("TW112", 6, "warning")]


def test_the_same_function_called_once_is_not_an_epoch():
    once = NRI.replace("for epoch in range(500):\n    train(epoch)\n", "train(0)\n")
    assert found(once, "TW112") == []


# --- TW108: a device set in another file -----------------------------------------------------

# microsoft/LoRA examples/NLG/src/gpt2_ft.py: gpu.py's parse_gpu(args) sets args.device (CUDA for
# every NCCL rank); the file itself moves batches with .to(args.device) and calls .cuda().
LORA_DEVICE = """\
import torch
from gpu import add_gpu_params, parse_gpu
parser = argparse.ArgumentParser()
add_gpu_params(parser)
args = parser.parse_args()
parse_gpu(args)
lm_net = GPT2LMModel(config).cuda()
for data in train_loader:
    _input = data['input'].to(args.device)
"""


def test_a_device_set_in_another_file_makes_cuda_info():
    assert found(LORA_DEVICE, "TW108") == [("TW108", 7, "info")]


def test_a_device_option_declared_here_makes_it_a_warning():
    declared = LORA_DEVICE.replace("add_gpu_params(parser)\n", "parser.add_argument('--device', default='cuda')\n")
    assert found(declared, "TW108") == [("TW108", 7, "warning")]


# --- TW119 / TW131: a checkpoint to start from is not a resume --------------------------------

# microsoft/LoRA gpt2_ft.py: --init_checkpoint ("pretrained checkpoint path") loads GPT-2's
# weights before fine-tuning; the script saves LoRA weights for decoding and never resumes.
LORA_INIT = """\
import torch
parser.add_argument('--init_checkpoint', default=None, help='pretrained checkpoint path')
lm_net = GPT2LMModel(config)
if args.init_checkpoint is not None:
    lm_net.load_weight(torch.load(args.init_checkpoint))
optimizer = torch.optim.AdamW(lm_net.parameters(), lr=2e-4)
for data in train_loader:
    optimizer.zero_grad()
    lm_net(data).mean().backward()
    optimizer.step()
torch.save({'model_state_dict': lm_net.state_dict()}, 'model.pt')
"""


def test_pretrained_weights_loaded_before_fine_tuning_are_not_a_resume():
    assert found(LORA_INIT, "TW119", "TW131") == []


def test_a_checkpoint_option_that_speaks_of_resuming_still_is_one():
    resume = LORA_INIT.replace("pretrained checkpoint path", "checkpoint to resume from")
    resume = resume.replace("lm_net.load_weight(", "lm_net.load_state_dict(")
    # Round 6: a dict of the weights alone, with no epoch or step, is info (TW131 names the resume).
    assert found(resume, "TW119", "TW131") == [("TW131", 5, "warning"), ("TW119", 11, "info")]


# --- TW132: a loss handed to a function of this file that backpropagates it -------------------

# microsoft/LoRA gpt2_ft.py: train_validate() (a name with "validate" in it) trains; its loss goes
# to optimizer_step(), which calls backward().
LORA_TRAIN = """\
import torch
def optimizer_step(_loss, _optimizer):
    _loss.backward()
    _optimizer.step()
def train_validate(model, optimizer, train_loader):
    model.train()
    for data in train_loader:
        _lm_logits, _lm_loss = model(data['input'], lm_labels=data['target'])
        _lm_loss = _lm_loss.mean()
        optimizer_step(_lm_loss, optimizer)
"""


CALLED = "train_validate(model, optimizer, val_loader)\n"


def test_a_forward_whose_loss_a_local_function_backpropagates_is_training():
    assert found(LORA_TRAIN, "TW132") == []
    assert found(LORA_TRAIN + CALLED, "TW104", "TW132") == []


def test_the_same_loop_whose_loss_is_only_logged_is_an_evaluation_without_no_grad():
    logged = LORA_TRAIN.replace("optimizer_step(_lm_loss, optimizer)", "print(_lm_loss.item())")
    assert found(logged + CALLED, "TW104", "TW132") == [("TW104", 7, "warning")]


# --- TW105: an alias that is the trained model on one branch only ----------------------------

# kekmodel/FixMatch-pytorch train.py: test_model is the EMA copy or, without --use-ema, the model
# trained; test() switches its argument to eval and nothing switches it back.
FIXMATCH = """\
import torch
def test(args, test_loader, model):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in test_loader]
model.train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.03)
for epoch in range(10):
    for x, y in train_loader:
        model(x).sum().backward()
        optimizer.step()
    if args.use_ema:
        test_model = ema_model.ema
    else:
        test_model = model
    test(args, test_loader, test_model)
"""


def test_an_alias_that_is_the_trained_model_on_one_branch_only_is_info():
    assert found(FIXMATCH, "TW105") == [("TW105", 16, "info")]


def test_an_alias_that_is_always_a_copy_is_quiet_and_the_model_itself_warns():
    copy = FIXMATCH.replace("test_model = model", "test_model = swa_model")
    assert found(copy, "TW105") == []
    itself = FIXMATCH.replace("test(args, test_loader, test_model)", "test(args, test_loader, model)")
    assert found(itself, "TW105") == [("TW105", 16, "warning")]

