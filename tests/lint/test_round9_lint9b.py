"""Issue 21, round 9 (lint9b): checkpoint kinds that recur across rounds, seen by mechanism rather
than by one sample's words. Each shape is reduced from a real script (source named) and has a
near miss that stays silent (what the rule cannot see)."""

from __future__ import annotations

from .test_round5_shapes import found

# --- TW131: an epoch loop that continues from the resumed count, spelled as a sum -----------------

# hustvl/YOLOP tools/train.py (tests/lint/worked8, judged bug at lines 145-147, 321, 328):
# https://github.com/hustvl/YOLOP/blob/8d8f68df318c71f01d6f813c024df646c7d1978f/tools/train.py
# The loop starts at `begin_epoch + 1`, the epoch after the saved one; the LambdaLR built before the
# resume counts from 0 again.
YOLOP_SCHEDULE = """\
import torch
def main(cfg, model, train, lf):
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.LR)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lf)
    begin_epoch = cfg.TRAIN.BEGIN_EPOCH
    if cfg.AUTO_RESUME:
        checkpoint = torch.load(cfg.CHECKPOINT)
        begin_epoch = checkpoint['epoch']
        model.load_state_dict(checkpoint['state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer'])
    for epoch in range(begin_epoch + 1, cfg.TRAIN.END_EPOCH + 1):
        train(model, optimizer)
        lr_scheduler.step()
"""


def test_a_loop_from_the_resumed_epoch_plus_one_loses_a_fresh_scheduler():
    assert found(YOLOP_SCHEDULE, "TW131") == [("TW131", 4, "warning")]


def test_a_start_that_is_not_a_plain_offset_of_the_count_is_not_read():
    # `begin_epoch * 2` (or any start lint cannot read as "the resumed epoch, then on") is left alone,
    # and so is a scheduler told where to start.
    assert found(YOLOP_SCHEDULE.replace("begin_epoch + 1,", "begin_epoch * 2,"), "TW131") == []
    told = YOLOP_SCHEDULE.replace("lr_lambda=lf)", "lr_lambda=lf, last_epoch=begin_epoch)")
    assert found(told, "TW131") == []


# --- TW152: a learning rate decayed by the loop itself restarts on a resume ------------------------

# taoxugit/AttnGAN code/pretrain_DAMSM.py (tests/lint/heldout8, a floor; judged bug at lines 175-188,
# 271, 286, 287): https://github.com/taoxugit/AttnGAN/blob/0d000e652b407e976cb88fab299e8566f3de8a37/code/pretrain_DAMSM.py
# The resume hands back the epoch parsed from the file name; the LR the loop decays by 0.98 a pass
# starts again at the configured value.
ATTNGAN = """\
import torch
from torch import optim
def build_models(cfg):
    text_encoder = RNN_ENCODER(cfg.TEXT.EMBEDDING_DIM)
    start_epoch = 0
    if cfg.TRAIN.NET_E != '':
        text_encoder.load_state_dict(torch.load(cfg.TRAIN.NET_E))
        start_epoch = int(cfg.TRAIN.NET_E[-8:-4]) + 1
    return text_encoder, start_epoch
def main(cfg, dataloader):
    text_encoder, start_epoch = build_models(cfg)
    lr = cfg.TRAIN.ENCODER_LR
    for epoch in range(start_epoch, cfg.TRAIN.MAX_EPOCH):
        optimizer = optim.Adam(text_encoder.parameters(), lr=lr)
        train(dataloader, text_encoder, optimizer, epoch)
        if lr > cfg.TRAIN.ENCODER_LR / 10.:
            lr *= 0.98
"""


def test_a_decayed_learning_rate_set_afresh_before_a_resumed_loop_warns_at_its_start():
    assert found(ATTNGAN, "TW152") == [("TW152", 12, "warning")]
    spelled = ATTNGAN.replace("lr *= 0.98", "lr = lr * 0.98")
    assert found(spelled, "TW152") == [("TW152", 12, "warning")]


def test_a_decay_recomputed_or_restored_or_a_loop_from_zero_is_silent():
    # The LR read back from the restored optimizer (faster-rcnn.pytorch's `lr = optimizer.param_groups[0]['lr']`
    # under `if args.resume:`), computed from the epoch, or a loop that never continues a count.
    restored = ATTNGAN.replace(
        "    lr = cfg.TRAIN.ENCODER_LR\n",
        "    lr = cfg.TRAIN.ENCODER_LR\n    if cfg.resume:\n        lr = cfg.resume_lr\n",
    )
    assert found(restored, "TW152") == []
    computed = ATTNGAN.replace("lr = cfg.TRAIN.ENCODER_LR\n", "lr = cfg.TRAIN.ENCODER_LR * 0.98 ** start_epoch\n")
    assert found(computed, "TW152") == []
    assert found(ATTNGAN.replace("range(start_epoch,", "range(0,"), "TW152") == []
    # What it cannot see: the same decay inside a helper of another file given the LR.
    helper = ATTNGAN.replace("lr *= 0.98", "lr = decay(lr)")
    assert found(helper, "TW152") == []


# --- TW131: a resume known by the checkpoint format the script itself writes -----------------------

# rosinality/vq-vae-2-pytorch train_pixelsnail.py (tests/lint/heldout7, a floor; judged bug at lines
# 103-105, 135, 136, 139, 153-156):
# https://github.com/rosinality/vq-vae-2-pytorch/blob/ef5f67c46f93624163776caec9e0d95063910eca/train_pixelsnail.py
# `--ckpt` has no help and no resume word; what it reads back (the weights and the run's args) is the
# dict the training loop saves every epoch, so it continues this script's run and loses Adam's state.
PIXELSNAIL = """\
import torch
from torch import optim
def train(args, epoch, loader, model, optimizer):
    for img in loader:
        model.zero_grad()
        loss = model(img).mean()
        loss.backward()
        optimizer.step()
def main(args, loader):
    ckpt = {}
    if args.ckpt is not None:
        ckpt = torch.load(args.ckpt)
        args = ckpt['args']
    model = PixelSNAIL(args.channel)
    if 'model' in ckpt:
        model.load_state_dict(ckpt['model'])
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    for i in range(args.epoch):
        train(args, i, loader, model, optimizer)
        torch.save({'model': model.state_dict(), 'args': args}, f'checkpoint/pixelsnail_{i + 1}.pt')
"""


def test_a_load_of_the_scripts_own_checkpoint_format_is_a_resume():
    assert found(PIXELSNAIL, "TW131") == [("TW131", 16, "warning")]


def test_weights_alone_or_keys_of_another_format_are_not_a_resume():
    # One key read (the weights alone: a warm start from any file of that shape), or a key the
    # script never saves (another program's checkpoint), says nothing of continuing this run.
    assert found(PIXELSNAIL.replace("        args = ckpt['args']\n", ""), "TW131") == []
    assert found(PIXELSNAIL.replace("ckpt['args']", "ckpt['hparams']"), "TW131") == []


# --- TW125: a snapshot whose entries come back as an object's attributes --------------------------

# facebookresearch/drqv2 train.py (tests/lint/heldout8, a floor; judged bug at lines 195-205):
# https://github.com/facebookresearch/drqv2/blob/c0c650b76c6e5d22a7eb5f2edffd1440fe94f8ef/train.py
# save_snapshot pickles the agent and the timer out of self.__dict__; load_snapshot writes what it
# loads back into self.__dict__: objects, which torch.load's weights_only=True default refuses.
DRQV2 = """\
import torch
class Workspace:
    def save_snapshot(self):
        payload = {k: self.__dict__[k] for k in ['agent', 'timer', '_global_step']}
        with (self.work_dir / 'snapshot.pt').open('wb') as f:
            torch.save(payload, f)

    def load_snapshot(self):
        with (self.work_dir / 'snapshot.pt').open('rb') as f:
            payload = torch.load(f)
        for k, v in payload.items():
            self.__dict__[k] = v
"""


def test_loaded_entries_written_back_as_attributes_are_pickled_objects():
    assert found(DRQV2, "TW125") == [("TW125", 10, "warning")]
    assert found(DRQV2.replace("self.__dict__[k] = v", "setattr(self, k, v)"), "TW125") == [("TW125", 10, "warning")]
    spread = DRQV2.replace(
        "        for k, v in payload.items():\n            self.__dict__[k] = v\n",
        "        self.__dict__.update(payload)\n",
    )
    assert found(spread, "TW125") == [("TW125", 10, "warning")]


def test_entries_read_as_tensors_or_an_explicit_weights_only_false_are_silent():
    # A state dict read entry by entry is what weights_only loads; weights_only=False is the user's
    # choice (TW110 weighs it). What it cannot see: attributes restored one by one under their names
    # (`self.agent = payload['agent']`), which look like any dict read.
    tensors = DRQV2.replace("            self.__dict__[k] = v\n", "            self.agent.load_state_dict(v)\n")
    assert found(tensors, "TW125") == []
    assert found(DRQV2.replace("torch.load(f)", "torch.load(f, weights_only=False)"), "TW125") == []
    assert (
        found(
            DRQV2.replace(
                "        for k, v in payload.items():\n            self.__dict__[k] = v\n",
                "        self.agent = payload['agent']\n",
            ),
            "TW125",
        )
        == []
    )


# --- TW131: a loader method that sets the count itself, and an optimizer built by a factory ---------

# carpedm20/ENAS-pytorch trainer.py (tests/lint/heldout7, a floor; judged bug at lines 171-178, 581-618):
# https://github.com/carpedm20/ENAS-pytorch/blob/0468b8c4ddcf540c9ed6f80c27289792ff9118c9/trainer.py
# load_model() is no resume by its name and sits under no `if` of its own: it sets self.start_epoch,
# which train() counts from, and loads the weights. The optimizer comes from a class that
# _get_optimizer() looks up by name: its result, bound to `self.shared_optim`, is what trains `self.shared`.
ENAS = """\
import torch
class Trainer:
    def __init__(self, args):
        self.args = args
        self.start_epoch = 0
        self.shared = models.RNN(args)
        if self.args.load_path:
            self.load_model()
        shared_optimizer = _get_optimizer(self.args.shared_optim)
        self.shared_optim = shared_optimizer(self.shared.parameters(), lr=self.args.lr)

    def train(self):
        for self.epoch in range(self.start_epoch, self.args.max_epoch):
            for batch in self.loader:
                loss = self.shared(batch).mean()
                self.shared_optim.zero_grad()
                loss.backward()
                self.shared_optim.step()

    def load_model(self):
        epochs = self.get_saved_models_info()
        self.start_epoch = max(epochs)
        self.shared.load_state_dict(torch.load(self.shared_path))
"""


def test_a_loader_method_that_sets_the_count_the_training_continues_from_is_a_resume():
    assert found(ENAS, "TW131") == [("TW131", 23, "warning")]


def test_a_loader_that_sets_no_count_or_a_factory_under_another_name_is_silent():
    # Training that starts at 0 whatever was loaded: a warm start. A factory whose result has no
    # optimizer's name, training an object named like nothing: lint does not know it for a model.
    assert found(ENAS.replace("range(self.start_epoch,", "range(0,"), "TW131") == []
    assert found(ENAS.replace("self.shared_optim", "self.updater"), "TW131") == []


# --- TW159: a resume that reads the best checkpoint back, not the last -----------------------------

# eladhoffer/convNet.pytorch main.py (tests/lint/heldout7, a floor; judged bug at lines 214-217, 222):
# https://github.com/eladhoffer/convNet.pytorch/blob/ebec93deeff5d57085ffb784482649b1a9e1db38/main.py
# --resume of a results folder loads model_best.pth.tar and its epoch: the epochs trained after the
# best one are thrown away and trained again (and results.csv logs them twice). Training runs in a
# Trainer of another file; the epoch loop counting on from args.start_epoch says the run continues.
CONVNET = """\
import torch
from os import path
def main_worker(args, model, trainer, train_data):
    if args.resume:
        checkpoint_file = args.resume
        if path.isdir(checkpoint_file):
            checkpoint_file = path.join(checkpoint_file, 'model_best.pth.tar')
        checkpoint = torch.load(checkpoint_file, map_location="cpu")
        args.start_epoch = checkpoint['epoch']
        model.load_state_dict(checkpoint['state_dict'])
    for epoch in range(args.start_epoch, args.epochs):
        trainer.train(train_data)
"""


def test_a_resume_of_the_best_checkpoint_warns_where_the_best_file_is_named():
    assert found(CONVNET, "TW159") == [("TW159", 7, "warning")]


def test_the_last_checkpoint_a_choice_or_a_warm_start_from_the_best_are_silent():
    assert found(CONVNET.replace("'model_best.pth.tar'", "'checkpoint.pth.tar'"), "TW159") == []
    chosen = CONVNET.replace("'model_best.pth.tar'", "'model_best.pth.tar' if args.best else 'checkpoint.pth.tar'")
    assert found(chosen, "TW159") == []
    # The best weights with no epoch read back: a warm start from them (LearningToCompare), not a resume.
    assert found(CONVNET.replace("        args.start_epoch = checkpoint['epoch']\n", ""), "TW159") == []


# --- TW131 (info): --reload, with the optimizer made by a helper of another file --------------------

# Spijkervet/SimCLR main.py (tests/lint/heldout5, a floor; judged bug at lines 107-111, 135):
# https://github.com/Spijkervet/SimCLR/blob/2738efae85b3ca1b70b7919c5d7a7837d9d75235/main.py
# `if args.reload:` restores the weights; the optimizer and scheduler come from load_optimizer(args,
# model) of another file and nothing here restores them. Only that helper could: info, naming it.
SIMCLR = """\
import torch
def train(args, loader, model, optimizer):
    for x in loader:
        optimizer.zero_grad()
        model(x).mean().backward()
        optimizer.step()
def main(args, loader):
    model = SimCLR(args.projection_dim)
    if args.reload:
        model.load_state_dict(torch.load(args.model_fp, map_location="cpu"))
    optimizer, scheduler = load_optimizer(args, model)
    for epoch in range(args.start_epoch, args.epochs):
        train(args, loader, model, optimizer)
"""


def test_a_reload_with_an_optimizer_made_by_another_files_helper_is_info_naming_it():
    assert found(SIMCLR, "TW131") == [("TW131", 10, "info")]


def test_an_optimizer_built_here_and_restored_or_no_resume_word_is_silent():
    restored = SIMCLR.replace(
        "    for epoch",
        "    if args.reload:\n        optimizer.load_state_dict(torch.load(args.opt_fp))\n    for epoch",
    )
    assert found(restored, "TW131") == []
    # What it cannot see: an option with no word of resuming (`if args.weights:`) is a warm start to it.
    assert found(SIMCLR.replace("args.reload", "args.weights"), "TW131") == []


# --- TW131 (info): apex amp's loss scale left out of a checkpointer object's resume -----------------

# facebookresearch/maskrcnn-benchmark tools/train_net.py (tests/lint/heldout5, a floor; judged bug at
# lines 50, 65-68):
# https://github.com/facebookresearch/maskrcnn-benchmark/blob/57eec25b75144d9fb1a6857f32553e1574177daf/tools/train_net.py
# amp.initialize keeps a dynamic loss scale; the checkpointer is handed model, optimizer and scheduler,
# never amp. Its class (unread) could still save the scale: info, naming it.
MASKRCNN = """\
import torch
from apex import amp
def train(cfg, model, output_dir):
    optimizer = make_optimizer(cfg, model)
    scheduler = make_lr_scheduler(cfg, optimizer)
    model, optimizer = amp.initialize(model, optimizer, opt_level='O1')
    checkpointer = DetectronCheckpointer(cfg, model, optimizer, scheduler, output_dir)
    extra_checkpoint_data = checkpointer.load(cfg.MODEL.WEIGHT)
    do_train(model, optimizer, scheduler, checkpointer)
"""


def test_a_checkpointer_built_without_apex_amp_loses_its_loss_scale_as_info():
    assert found(MASKRCNN, "TW131") == [("TW131", 8, "info")]


def test_amp_handed_to_the_checkpointer_restored_or_no_apex_is_silent():
    handed = MASKRCNN.replace("scheduler, output_dir)", "scheduler, output_dir, amp=amp)")
    assert found(handed, "TW131") == []
    restored = MASKRCNN + "    amp.load_state_dict(extra_checkpoint_data['amp'])\n"
    assert found(restored, "TW131") == []
    assert found(MASKRCNN.replace("from apex import amp", "from torch.cuda import amp"), "TW131") == []
