"""Issue 21, round 8: evidence-graded severity. A rule that concludes an absence (no no_grad, no
backward, no eval(), an iterator that runs out, a scaler left behind) warns only when what it did
not read could not supply the missing piece; where code lint cannot read could, the finding is
info and says so. Each shape is reduced from a real script (source beside it), with a near miss
that still warns."""

from __future__ import annotations

from torchwise.lint.engine import lint_source

from .test_round5_shapes import found


def messages(source: str, code: str) -> list[str]:
    return [f.message for f in lint_source(source) if f.code == code]


# --- TW132: the forward's result handed to an object of another file that holds the optimizer -----

# huggingface/pytorch-openai-transformer-lm train.py (tests/lint/heldout7, a TW132 judged wrong
# there): the backward and the step run in MultipleChoiceLossCompute of loss.py, built here with
# the optimizer and called on the forward's output.
LOSS_COMPUTE = """\
import torch
from loss import MultipleChoiceLossCompute
from model_pytorch import DoubleHeadModel
dh_model = DoubleHeadModel(cfg)
model_opt = torch.optim.Adam(dh_model.parameters(), lr=6.25e-5)
compute_loss_fct = MultipleChoiceLossCompute(criterion, lm_criterion, 0.5, model_opt)
lm_logits, clf_logits = dh_model(val_x)
compute_loss_fct(val_x, val_y, val_m, clf_logits, lm_logits)
"""


def test_a_result_handed_to_an_unread_object_holding_the_optimizer_is_info():
    assert found(LOSS_COMPUTE, "TW132") == [("TW132", 7, "info")]
    [message] = messages(LOSS_COMPUTE, "TW132")
    assert "unless compute_loss_fct(...), handed its result and the optimizer, trains on it" in message
    assert message.endswith("(code lint cannot read)")


def test_an_unread_object_without_the_optimizer_still_warns():
    scoring = LOSS_COMPUTE.replace("0.5, model_opt)", "0.5)")
    assert found(scoring, "TW132") == [("TW132", 7, "warning")]


# --- TW103: a function of another file handed the model before the loop -------------------------

# The shape of recurrent-visual-attention's validate() (tests/lint/heldout3, TW103 judged wrong):
# what lint cannot read decides; here a helper of another file is handed the model first.
PREPARED = """\
import torch.nn as nn
from utils import prepare_for_eval
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
def validate(model, val_loader):
    prepare_for_eval(model)
    for x, y in val_loader:
        out = model(x)
model = Net()
validate(model, val_loader)
"""


def test_a_model_handed_to_an_unread_function_before_the_loop_is_info():
    assert found(PREPARED, "TW103") == [("TW103", 9, "info")]
    [message] = messages(PREPARED, "TW103")
    assert "unless prepare_for_eval(...) switches it to eval()" in message


def test_a_builtin_handed_the_model_still_warns():
    printed = PREPARED.replace("    prepare_for_eval(model)\n", "    print(model)\n")
    assert found(printed, "TW103") == [("TW103", 9, "warning")]


def test_an_evaluation_function_nothing_here_calls_is_info():
    uncalled = PREPARED.replace("validate(model, val_loader)\n", "").replace("    prepare_for_eval(model)\n", "")
    assert found(uncalled, "TW103") == [("TW103", 8, "info")]
    assert "unless a caller outside this file calls eval() first" in messages(uncalled, "TW103")[0]


# --- TW130: a sampler or dataset of another file may never run out ---------------------------------

# naoto0804/pytorch-inpainting-with-partial-conv train.py (tests/lint/heldout7, TW130 judged wrong):
# one iter() over a loader whose InfiniteSampler never ends; here the sampler is imported.
INPAINTING = """\
import torch
from torch.utils.data import DataLoader
from util.sampler import InfiniteSampler
from places2 import Places2
dataset_train = Places2(args.root, img_tf, mask_tf, 'train')
train_loader = DataLoader(dataset_train, batch_size=16, sampler=InfiniteSampler(len(dataset_train)))
iterator_train = iter(train_loader)
for i in range(args.max_iter):
    image, mask, gt = next(iterator_train)
"""


def test_a_sampler_of_another_file_may_be_endless():
    assert found(INPAINTING, "TW130") == [("TW130", 9, "info")]
    assert "unless the sampler InfiniteSampler(...) never runs out" in messages(INPAINTING, "TW130")[0]


def test_torchs_own_sampler_ends_and_still_warns():
    finite = INPAINTING.replace("InfiniteSampler(len(dataset_train))", "torch.utils.data.RandomSampler(dataset_train)")
    assert found(finite, "TW130") == [("TW130", 9, "warning")]


def test_a_dataset_of_another_file_may_be_an_endless_iterable():
    bare = INPAINTING.replace(", sampler=InfiniteSampler(len(dataset_train))", "")
    assert found(bare, "TW130") == [("TW130", 9, "info")]
    assert "unless the dataset Places2(...) is an endless IterableDataset" in messages(bare, "TW130")[0]


def test_shuffle_true_says_map_style_and_still_warns():
    # DataLoader refuses shuffle=True for an IterableDataset: this dataset has an end.
    shuffled = INPAINTING.replace("sampler=InfiniteSampler(len(dataset_train))", "shuffle=True")
    assert found(shuffled, "TW130") == [("TW130", 9, "warning")]


# --- TW108: a CPU flag guards the moves as a CUDA flag does ---------------------------------------

# yanx27/Pointnet_Pointnet2_pytorch train_classification.py (tests/lint/worked8, four TW108 judged
# wrong): every .cuda() sits under `if not args.use_cpu:`.
POINTNET = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument('--use_cpu', action='store_true', default=False, help='use cpu mode')
args = parser.parse_args()
classifier = get_model()
if not args.use_cpu:
    classifier = classifier.cuda()
for points, target in loader:
    if not args.use_cpu:
        points, target = points.cuda(), target.cuda()
"""


def test_moves_under_a_cpu_flag_are_guarded():
    assert found(POINTNET, "TW108") == []


def test_a_move_outside_the_cpu_flag_still_warns():
    bare = POINTNET + "weights = torch.ones(3).cuda()\n"
    assert found(bare, "TW108") == [("TW108", 11, "warning")]


# --- TW131: a GradScaler the file's own defaults leave off ------------------------------------------

# karpathy/llama2.c train.py (tests/lint/worked8, TW131 judged wrong: the collector judged the
# unsaved scaler no bug before lint ran): enabled=(dtype == "float16") with dtype = "bfloat16".
LLAMA = """\
import torch
init_from = "scratch"
dtype = "bfloat16"
model = Transformer(gptconf)
if init_from == "resume":
    checkpoint = torch.load(ckpt_path, map_location=device)
    model.load_state_dict(checkpoint["model"])
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
if init_from == "resume" and "optimizer" in checkpoint:
    optimizer.load_state_dict(checkpoint["optimizer"])
for step in range(max_iters):
    loss = model(X, Y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""


def test_a_scaler_off_with_the_files_defaults_is_info():
    assert found(LLAMA, "TW131") == [("TW131", 7, "info")]
    assert "enabled=dtype == 'float16'" in messages(LLAMA, "TW131")[0]


def test_a_scaler_on_with_the_files_defaults_still_warns():
    assert found(LLAMA.replace('dtype = "bfloat16"', 'dtype = "float16"'), "TW131") == [("TW131", 7, "warning")]
    assert found(LLAMA.replace('(dtype == "float16")', "args.fp16"), "TW131") == [("TW131", 7, "warning")]


# --- a crash that hid a whole folder ------------------------------------------------------------------


def test_a_nested_with_open_reads_without_crashing():
    # dreamquark-ai/tabnet pytorch_tabnet/abstract_model.py (tests/lint/worked8): lint raised
    # AttributeError on the whole folder at the inner `with z.open('network.pt') as f:`.
    zipped = (
        "import torch, zipfile\n"
        "def load_model(self, filepath):\n"
        "    with zipfile.ZipFile(filepath) as z:\n"
        "        with z.open('network.pt') as f:\n"
        "            saved_state_dict = torch.load(f, map_location=self.device)\n"
    )
    assert found(zipped) == []  # map_location given, a state dict read: nothing to report


# --- TW101 / TW102: a loss computed by an object of another file that holds the optimizer -----------

# The shape of harvardnlp/annotated-transformer's run_epoch(): SimpleLossCompute(generator,
# criterion, opt) runs loss.backward(), opt.step() and opt.optimizer.zero_grad() itself; here it
# is imported, so lint cannot read it (constructed; no judged script of the corpora has it).
ANNOTATED = """\
import torch
from loss import SimpleLossCompute
model = make_model(V, V)
model_opt = torch.optim.Adam(model.parameters(), lr=0)
loss_compute = SimpleLossCompute(model.generator, criterion, model_opt)
for epoch in range(10):
    for batch in train_iter:
        out = model.forward(batch.src, batch.trg)
        loss = loss_compute(out, batch.trg_y, batch.ntokens)
        loss.backward()
        model_opt.step()
"""


def test_zero_grad_may_run_in_an_unread_object_holding_the_optimizer():
    assert found(ANNOTATED, "TW101") == [("TW101", 10, "info")]
    assert "unless loss_compute(...) zeroes the gradients" in messages(ANNOTATED, "TW101")[0]


def test_an_unread_object_without_model_or_optimizer_still_errs():
    plain = ANNOTATED.replace("(model.generator, criterion, model_opt)", "(criterion)")
    assert found(plain, "TW101") == [("TW101", 10, "error")]


def test_a_backward_may_run_in_an_unread_object_holding_the_optimizer():
    hidden = ANNOTATED.replace("        loss.backward()\n", "")
    assert found(hidden, "TW102") == [("TW102", 10, "info")]
    bare = hidden.replace("SimpleLossCompute(model.generator, criterion, model_opt)", "SimpleLossCompute(criterion)")
    assert found(bare, "TW102") == [("TW102", 10, "error")]


# --- TW131 / TW119: state that an object of another file may restore or save -----------------------

# Constructed in the shape of a trainer class of another file built with the model and the
# optimizer (YOLOX's, pytorchic-bert's): its load() under the resume branch may restore both.
TRAINER = """\
import torch
from trainer import Trainer
model = Net()
optimizer = torch.optim.Adam(model.parameters())
trainer = Trainer(model, optimizer)
if args.resume:
    model.load_state_dict(torch.load(args.resume)["model"])
    trainer.load(args.resume)
for epoch in range(10):
    for x, y in loader:
        loss = model(x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.save({"epoch": epoch, "model": model.state_dict()}, "last.pt")
    trainer.save_checkpoint("trainer.pt")
"""


def test_a_resume_whose_unread_trainer_holds_the_optimizer_is_info():
    assert found(TRAINER, "TW131") == [("TW131", 7, "info")]
    assert "unless trainer.load(...), of an object built with the optimizer, restores them" in messages(
        TRAINER, "TW131"
    )[0]


def test_a_trainer_without_the_optimizer_leaves_the_resume_a_warning():
    alone = TRAINER.replace("Trainer(model, optimizer)", "Trainer(model)")
    assert found(alone, "TW131") == [("TW131", 7, "warning")]


def test_an_unread_saver_holding_the_optimizer_makes_the_checkpoint_info():
    assert found(TRAINER, "TW119") == [("TW119", 15, "info")]
    alone = TRAINER.replace("Trainer(model, optimizer)", "Trainer(model)")
    assert found(alone, "TW119") == [("TW119", 15, "warning")]


# --- TW112: an optimizer step that an object of another file may make first ----------------------------

# The same annotated-transformer shape, once per epoch before the epoch's batches: the loss compute
# built with the optimizer may step it, so the scheduler stepped after it may follow the optimizer.
SCHEDULED = """\
import torch
from loss import SimpleLossCompute
def train_epoch(model, opt):
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        opt.step()
model = make_model(V, V)
model_opt = torch.optim.Adam(model.parameters(), lr=0)
scheduler = torch.optim.lr_scheduler.StepLR(model_opt, 30)
loss_compute = SimpleLossCompute(model.generator, criterion, model_opt)
for epoch in range(10):
    loss_compute(model(src), trg)
    scheduler.step()
    train_epoch(model, model_opt)
"""


def test_a_scheduler_stepped_after_an_unread_object_that_holds_the_optimizer_is_info():
    assert found(SCHEDULED, "TW112") == [("TW112", 14, "info")]
    assert "unless loss_compute(...) steps the optimizer first" in messages(SCHEDULED, "TW112")[0]


def test_a_scheduler_stepped_first_with_nothing_unread_before_it_still_warns():
    plain = SCHEDULED.replace("(model.generator, criterion, model_opt)", "(criterion)")
    assert found(plain, "TW112") == [("TW112", 14, "warning")]


# --- TW104: callers followed up the chain to the file's edge ----------------------------------------

# Round 4's rule (a loop in a function nothing here calls is info: knowledge-distillation-pytorch's
# evaluate.py, tests/lint/worked6) followed one caller further. Constructed: validate() is called
# only by evaluate(), which nothing here calls and which trains nothing.
CHAIN = """\
import torch
def validate(model, val_loader):
    for x, y in val_loader:
        out = model(x)
def evaluate(model, val_loader):
    validate(model, val_loader)
"""


def test_a_chain_of_callers_that_ends_outside_the_file_is_info():
    assert found(CHAIN, "TW104") == [("TW104", 3, "info")]


def test_a_chain_that_ends_at_module_level_still_warns():
    assert found(CHAIN + "evaluate(model, val_loader)\n", "TW104") == [("TW104", 3, "warning")]


def test_a_chain_through_a_training_function_still_warns():
    # Its caller cannot put a function that trains under no_grad.
    training = CHAIN + "    loss = model(x).sum()\n    loss.backward()\n"
    assert found(training, "TW104") == [("TW104", 3, "warning")]


# --- TW116: a loss made by code of another file that is handed the accumulation count ---------------

# Constructed (no judged script has it): the loss helper is imported and given the count the step's
# `if (i + 1) % k == 0:` uses, so it may divide by it.
ACCUMULATED = """\
import torch
from losses import compute_loss
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x, y) in enumerate(loader):
    loss = compute_loss(model(x), y, args.accumulation_steps)
    loss.backward()
    if (i + 1) % args.accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
"""


def test_a_loss_helper_handed_the_accumulation_count_may_divide_by_it():
    assert found(ACCUMULATED, "TW116") == [("TW116", 6, "info")]


def test_a_loss_helper_without_the_count_still_warns():
    plain = ACCUMULATED.replace(", args.accumulation_steps)", ")")
    assert found(plain, "TW116") == [("TW116", 6, "warning")]


# --- TW111: a "model" only by its name, made by code of another file ---------------------------------

# Constructed, after heldout21b's Beta-VAE (a dict named model_states, judged wrong in round 2): the
# saved value is called a model, but what made it is a function lint cannot read.
SAVED = """\
import torch
from utils import export_model
model = export_model(net)
torch.save(model, "model.pt")
"""


def test_a_model_by_name_made_by_unread_code_is_info():
    assert found(SAVED, "TW111") == [("TW111", 4, "info")]
    assert "unless export_model(...), which made model, returns a state dict" in messages(SAVED, "TW111")[0]


def test_a_model_the_file_switches_to_eval_is_a_module_and_still_warns():
    switched = SAVED.replace('torch.save(model, "model.pt")', 'model.eval()\ntorch.save(model, "model.pt")')
    assert found(switched, "TW111") == [("TW111", 5, "warning")]


# Constructed in the shape of config-driven trainers (pycls' construct_optimizer, mmcv's
# build_optimizer): an optimizer factory of another file handed the checkpoint may load its state.
FACTORY = """\
import torch
from solver import build_optimizer
model = Net()
checkpoint = torch.load(args.resume) if args.resume else None
if args.resume:
    model.load_state_dict(checkpoint["model"])
optimizer = build_optimizer(cfg, model, checkpoint)
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
"""


def test_an_optimizer_factory_handed_the_checkpoint_may_restore_it():
    assert found(FACTORY, "TW131") == [("TW131", 6, "info")]


def test_an_optimizer_factory_without_the_checkpoint_leaves_a_warning():
    assert found(FACTORY.replace("(cfg, model, checkpoint)", "(cfg, model)"), "TW131") == [("TW131", 6, "warning")]


def test_a_known_library_handed_the_optimizer_is_no_unread_code():
    # apex's amp.scale_loss(loss, optimizer) is known: it zeroes nothing, so the missing
    # zero_grad stays an error (the shape of NVIDIA/apex's examples, tests/lint/worked21).
    apex = (
        "import torch\n"
        "from apex import amp\n"
        "model, optimizer = amp.initialize(model, torch.optim.SGD(model.parameters(), lr=0.1))\n"
        "for x, y in loader:\n"
        "    with amp.scale_loss(model(x).sum(), optimizer) as scaled_loss:\n"
        "        scaled_loss.backward()\n"
        "    optimizer.step()\n"
    )
    assert found(apex, "TW101") == [("TW101", 6, "error")]
