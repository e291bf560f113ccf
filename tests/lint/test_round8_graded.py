"""Issue 21, round 8: evidence-graded severity, continued (the rules that conclude a missing
zero_grad, backward, optimizer step, restore, save, division or module). Each graded shape with a
near miss that still warns or errs; the mechanism is described in test_round8_evidence.py."""

from __future__ import annotations

from .test_round5_shapes import found
from .test_round8_evidence import messages

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
