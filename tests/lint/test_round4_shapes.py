"""Issue 21, round 4: a warning or an error must be a bug. Shapes reduced from real scripts, each
with its source, where a rule warned about what the file cannot show (a model's layers in
another file, a caller, a copy built for evaluation); each says what lint now reports."""

from __future__ import annotations

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source
from torchwise.lint.fix import fix_source


def found(source: str, *select: str) -> list[tuple[str, int, str]]:
    config = LintConfig(select=select) if select else None
    return [(f.code, f.line, f.level.value) for f in lint_source(source, config=config)]


# --- TW132: an evaluate() whose caller backpropagates its output is training ---------------

# nikhilbarhate99/PPO-PyTorch PPO.py: ActorCritic.evaluate() scores the stored actions; PPO.update()
# turns its log-probabilities into the loss it backpropagates.
PPO = """\
import torch
class ActorCritic(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Softmax(dim=-1))
        self.critic = torch.nn.Sequential(torch.nn.Linear(4, 1))

    def evaluate(self, state, action):
        action_probs = self.actor(state)
        state_values = self.critic(state)
        return action_probs, state_values

class PPO:
    def update(self):
        for _ in range(self.K_epochs):
            logprobs, state_values = self.policy.evaluate(old_states, old_actions)
            loss = -logprobs + self.MseLoss(state_values, rewards)
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()
"""


def test_an_evaluate_method_whose_caller_backpropagates_is_not_evaluation():
    assert found(PPO, "TW132") == []


def test_an_evaluate_function_nothing_here_calls_is_only_info():
    # The same method with no caller in the file: whether autograd is on is the caller's business.
    alone = PPO[: PPO.index("class PPO:")]
    assert found(alone, "TW132") == [("TW132", 9, "info"), ("TW132", 10, "info")]


def test_an_evaluate_function_called_for_its_numbers_still_warns():
    called = PPO[: PPO.index("class PPO:")] + "scores = ActorCritic().evaluate(test_states, test_actions)\n"
    assert found(called, "TW132") == [("TW132", 9, "warning"), ("TW132", 10, "warning")]


# --- TW103: eval() matters only for layers the file can see --------------------------------

# kevinzakka/recurrent-visual-attention trainer.py: the model comes from model.py, not beside
# the file lint reads; its layers (linear, LSTM cells) have no dropout or batch norm.
RVA = """\
import torch
from model import RecurrentAttention
class Trainer:
    def __init__(self):
        self.model = RecurrentAttention(64, 3, 8)
    def validate(self, epoch):
        for i, (x, y) in enumerate(self.valid_loader):
            log_probas = self.model(x)
Trainer().validate(0)
"""
# (Round 8: the last line calls validate() here; with no caller in the file, one outside it may
# call eval() first, and TW103 is info whatever the layers.)


def test_a_model_whose_layers_are_in_another_file_is_only_info():
    assert found(RVA, "TW103") == [("TW103", 7, "info")]


def test_a_model_with_batch_norm_here_still_warns():
    here = RVA.replace(
        "from model import RecurrentAttention\n",
        "class RecurrentAttention(torch.nn.Module):\n"
        "    def __init__(self, a, b, c):\n"
        "        super().__init__()\n"
        "        self.bn = torch.nn.BatchNorm1d(a)\n",
    )
    assert found(here, "TW103") == [("TW103", 10, "warning")]


def test_a_torchvision_network_has_batch_norm():
    zoo = RVA.replace("from model import RecurrentAttention", "from torchvision.models import resnet18").replace(
        "RecurrentAttention(64, 3, 8)", "resnet18()"
    )
    assert found(zoo, "TW103") == [("TW103", 7, "warning")]


# --- TW105: a helper that switches a fresh copy to eval ------------------------------------

# Tianxiaomo/pytorch-YOLOv4 train.py: each epoch builds eval_model, copies the weights into it
# and hands it to evaluate(), which calls model.eval() on its parameter; `model` keeps training.
YOLO_EVAL = """\
import torch
from models import Yolov4
def train(model, train_loader, val_loader):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(10):
        for images, boxes in train_loader:
            loss = model(images).sum()
            loss.backward()
            optimizer.step()
        eval_model = Yolov4(inference=True)
        eval_model.load_state_dict(model.state_dict())
        evaluate(eval_model, val_loader)

@torch.no_grad()
def evaluate(model, data_loader):
    model.eval()
    return [model(x) for x in data_loader]
"""


def test_a_helper_evaluating_a_copy_built_each_epoch_leaves_the_model_training():
    assert found(YOLO_EVAL, "TW105") == []


def test_a_helper_evaluating_the_trained_model_still_warns():
    same = YOLO_EVAL.replace("evaluate(eval_model, val_loader)", "evaluate(model, val_loader)")
    assert found(same, "TW105") == [("TW105", 13, "warning")]


# --- TW116: a summed loss normalised through the learning rate ------------------------------

# Tianxiaomo/pytorch-YOLOv4 train.py: darknet's way, lr = learning_rate / batch over a loss
# summed over every image of the subdivided batch.
YOLO_ACCUMULATE = """\
import torch
def train(model, loader, config):
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate / config.batch)
    for i, (images, boxes) in enumerate(loader):
        loss = model(images).sum()
        loss.backward()
        if i % config.subdivisions == 0:
            optimizer.step()
            model.zero_grad()
"""


def test_an_accumulation_normalised_by_the_learning_rate_is_quiet():
    assert found(YOLO_ACCUMULATE, "TW116") == []


def test_an_accumulation_with_a_plain_learning_rate_still_warns():
    plain = YOLO_ACCUMULATE.replace("lr=config.learning_rate / config.batch", "lr=config.learning_rate")
    assert found(plain, "TW116") == [("TW116", 6, "warning")]


# --- TW131: the else of a resume branch starts afresh ---------------------------------------

# hysts/pytorch_image_classification train.py: `if config.train.resume:` restores model,
# optimizer and scheduler through fvcore's Checkpointer; `elif config.train.checkpoint != '':`
# loads only the weights, to fine-tune.
HYSTS = """\
import torch
from fvcore.common.checkpoint import Checkpointer
model = create_model(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, 0.1, total_steps=1000)
checkpointer = Checkpointer(model, optimizer=optimizer, scheduler=scheduler)
if config.train.resume:
    checkpoint_config = checkpointer.resume_or_load('', resume=True)
elif config.train.checkpoint != '':
    checkpoint = torch.load(config.train.checkpoint, map_location='cpu')
    model.load_state_dict(checkpoint['model'])
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    scheduler.step()
"""


def test_a_weights_load_in_the_else_of_a_resume_branch_is_fine_tuning():
    assert found(HYSTS, "TW131") == []


def test_the_same_load_under_the_resume_branch_still_warns():
    resume = "    checkpoint_config = checkpointer.resume_or_load('', resume=True)\n"
    under = HYSTS.replace(resume + "elif config.train.checkpoint != '':\n", "")
    assert found(under, "TW131") == [("TW131", 9, "warning")]


# --- TW135: async= given to something other than a tensor's move ----------------------------

# ShangtongZhang/DeepRL examples.py: ReplayWrapper(UniformReplay, replay_kwargs, async=True) is
# the same syntax error, but DeepRL renamed its keyword async_replay, not non_blocking.
DEEPRL = """\
import torch
config.replay_fn = lambda: ReplayWrapper(UniformReplay, replay_kwargs, async=True)
batch = batch.cuda(async=True)
"""


def test_async_on_another_call_is_an_error_without_the_torch_fix():
    findings = lint_source(DEEPRL, config=LintConfig(select=("TW135",)))
    assert [(f.code, f.line, f.level.value) for f in findings] == [("TW135", 2, "error"), ("TW135", 3, "error")]
    message = "async= is a syntax error since Python 3.7 (async is a reserved word): the file does not run"
    assert findings[0].message == message
    hint = "rename the keyword to the one this function takes now: async is reserved since Python 3.7"
    assert findings[0].fix == hint
    fixed, _ = fix_source(DEEPRL, config=LintConfig(select=("TW135",)))
    assert "async=True)\nbatch = batch.cuda(non_blocking=True)" in fixed


# --- TW132: the same evaluation call, under no_grad in one place and not in another ---------

# xingyizhou/CenterNet src/main.py: the epoch loop runs trainer.val() under torch.no_grad();
# the --test path runs the same call with autograd on.
CENTERNET = """\
import torch
def main(opt):
    trainer = Trainer(opt, model, optimizer)
    if opt.test:
        _, preds = trainer.val(0, val_loader)
        return
    for epoch in range(opt.num_epochs):
        trainer.train(epoch, train_loader)
        with torch.no_grad():
            log_dict_val, preds = trainer.val(epoch, val_loader)
"""


def test_an_evaluation_call_the_file_guards_elsewhere_warns_where_it_is_not():
    assert found(CENTERNET, "TW132") == [("TW132", 5, "warning")]
    assert lint_source(CENTERNET, config=LintConfig(select=("TW132",)))[0].message == (
        "trainer.val(...) runs with autograd on; line 10 runs it under torch.no_grad()"
    )


def test_a_mode_switch_or_a_training_loop_named_val_is_not_that_call():
    # pytorch-original-transformer's train_val_loop(is_train=True) trains; stylegan2's g_ema.eval().
    shapes = """\
import torch
def train_val_loop(is_train, loader):
    for x in loader:
        loss = model(x).sum()
        if is_train:
            loss.backward()
train_val_loop(True, train_loader)
g_ema.eval()
with torch.no_grad():
    train_val_loop(False, val_loader)
    g_ema.eval()
"""
    assert found(shapes, "TW132") == []


# --- TW104 and TW124: a caller or layers in another file -----------------------------------


def test_an_evaluation_loop_in_a_function_nothing_here_calls_is_only_info():
    # A trainer module's validate(), run by a main script in another file (CenterNet's trains/).
    module = """\
import torch
class Trainer:
    def validate(self, val_loader):
        self.model.eval()
        for x, y in val_loader:
            self.model(x)
"""
    assert found(module, "TW104") == [("TW104", 5, "info")]
    called = module + "Trainer().validate(loader)\n"
    assert found(called, "TW104") == [("TW104", 5, "warning")]


def test_loaded_weights_run_in_train_mode_warn_only_for_layers_the_file_shows():
    script = """\
import torch
from model import Net
net = Net()
net.load_state_dict(torch.load("net.pth"))
out = net(x)
"""
    assert found(script, "TW124") == [("TW124", 4, "info")]
    zoo = script.replace("from model import Net", "from torchvision.models import resnet18 as Net")
    assert found(zoo, "TW124") == [("TW124", 4, "warning")]


# --- TW131: an optimizer handed to a helper of another file --------------------------------

# The shape of xingyizhou/CenterNet src/main.py, whose models/model.py load_model(model, path,
# optimizer, resume, ...) restores the optimizer where lint cannot read it.
HANDED_ON = """\
import torch
from models.model import load_model
model = create_model(opt.arch)
optimizer = torch.optim.Adam(model.parameters(), opt.lr)
if opt.resume:
    model, optimizer, start_epoch = load_model(model, opt.load_model, optimizer)
    model.load_state_dict(torch.load(opt.extra_weights))
for x in loader:
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
"""


def test_an_optimizer_handed_to_another_files_helper_in_the_resume_is_not_known_lost():
    assert found(HANDED_ON, "TW131") == []


def test_an_optimizer_only_printed_in_the_resume_is_still_lost():
    printed = HANDED_ON.replace(
        "model, optimizer, start_epoch = load_model(model, opt.load_model, optimizer)", "print(optimizer)"
    )
    assert found(printed, "TW131") == [("TW131", 7, "warning")]


# --- TW113: a per-batch StepLR whose step size the file cannot read -------------------------

# VainF/DeepLabV3Plus-Pytorch main.py (tests/lint/worked3) steps StepLR(step_size=opts.step_size)
# every batch; its argparse default (10000) says iterations. Read from a config instead, the
# unit is out of sight.
DEEPLAB = """\
import torch
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg.step_size, gamma=0.1)
for epoch in range(10):
    for images, labels in train_loader:
        optimizer.zero_grad()
        model(images).sum().backward()
        optimizer.step()
        scheduler.step()
"""


def test_a_per_batch_step_size_from_a_config_is_only_info():
    assert found(DEEPLAB, "TW113") == [("TW113", 8, "info")]


def test_a_per_batch_step_size_written_in_epochs_still_warns():
    assert found(DEEPLAB.replace("cfg.step_size", "30"), "TW113") == [("TW113", 8, "warning")]
    iterations = DEEPLAB.replace("cfg.step_size", "opts.step_size").replace(
        "import torch\n",
        "import argparse, torch\np = argparse.ArgumentParser()\np.add_argument('--step_size', default=10000)\n",
    )
    assert found(iterations, "TW113") == []


# --- TW121: a split the file's own seed makes repeatable -----------------------------------

# pytorch/examples distributed/minGPT-ddp/mingpt/main.py (tests/lint/real) splits without a
# generator and seeds nothing: every run (and every rank) draws its own split.
MINGPT = """\
import torch
from torch.utils.data import random_split
train_set, test_set = random_split(dataset, [train_len, len(dataset) - train_len])
"""


def test_an_unseeded_split_warns_and_a_seeded_file_makes_it_info():
    assert found(MINGPT, "TW121") == [("TW121", 3, "warning")]
    seeded = MINGPT.replace("import torch\n", "import torch\ntorch.manual_seed(0)\n")
    assert found(seeded, "TW121") == [("TW121", 4, "info")]
    only_numpy = MINGPT.replace("import torch\n", "import torch, random\nrandom.seed(0)\n")
    assert found(only_numpy, "TW121") == [("TW121", 4, "warning")]


# --- TW128 follows TW108's rule: a bug only where the file offers a CPU path ---------------

# eriklindernoren/PyTorch-GAN implementations/gan/gan.py (tests/lint/real) guards its Tensor type
# with `cuda = True if torch.cuda.is_available() else False`; without that check the file is
# CUDA-only as written.
GAN = """\
import torch
cuda = True if torch.cuda.is_available() else False
z = torch.cuda.FloatTensor(64, 100).normal_()
"""


def test_a_cuda_tensor_type_warns_only_where_the_file_offers_a_cpu_path():
    assert found(GAN, "TW128") == [("TW128", 3, "warning")]
    cuda_only = GAN.replace("cuda = True if torch.cuda.is_available() else False\n", "")
    assert found(cuda_only, "TW128") == [("TW128", 2, "info")]


# --- TW105: a model handed to a function lint cannot read -----------------------------------


def test_an_eval_in_a_loop_that_hands_the_model_to_another_files_function_is_only_info():
    # YOLO_EVAL's loop with the model also given to an imported per-epoch helper, which may call
    # model.train() where lint cannot read it.
    handed = YOLO_EVAL.replace("from models import Yolov4\n", "from models import Yolov4\nfrom engine import warm_up\n")
    handed = handed.replace(
        "        evaluate(eval_model, val_loader)\n", "        evaluate(model, val_loader)\n        warm_up(model)\n"
    )
    assert found(handed, "TW105") == [("TW105", 14, "info")]


# --- TW114: a literal first dimension is a batch size only if the file says so --------------

# No corpus script trips TW114; the quiet shape is the one torch.nn.LSTM's documentation gives,
# h_n.view(num_layers, num_directions, batch, hidden_size), written with literals.
LSTM = """\
import torch.nn as nn
class Encoder(nn.Module):
    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(h.view(2, 2, -1, 256)[-1].sum(0))
"""


def test_a_literal_first_dimension_the_file_does_not_call_a_batch_size_is_only_info():
    assert found(LSTM, "TW114") == [("TW114", 5, "info")]
    stated = LSTM + "loader = DataLoader(dataset, batch_size=2)\n"
    assert found(stated, "TW114") == [("TW114", 5, "warning")]
    option = LSTM + "parser.add_argument('--batch-size', type=int, default=2)\n"
    assert found(option, "TW114") == [("TW114", 5, "warning")]
