"""Issue 21, round 6: shapes reduced from real scripts, each with its source, where a rule warned
about what was not a bug (round 5's held-out set, measured once and now a regression floor;
round 6's working half) or missed one by data flow it can now follow; each says what lint reports."""

from __future__ import annotations

from .test_round5_shapes import found

# --- TW108: a GPU index tested against None chooses a GPU; it does not ask for one -------------

# lukemelas/EfficientNet-PyTorch examples/imagenet/main.py (7e8b0d3): `--gpu` is an int (None
# means every GPU through DataParallel); the script has no CPU path.
IMAGENET_GPU = """\
import torch
parser.add_argument('--gpu', default=None, type=int, help='GPU id to use.')
if args.gpu is not None:
    torch.cuda.set_device(args.gpu)
    model = model.cuda(args.gpu)
else:
    model = torch.nn.DataParallel(model).cuda()
criterion = nn.CrossEntropyLoss().cuda(args.gpu)
for images, target in train_loader:
    if args.gpu is not None:
        images = images.cuda(args.gpu, non_blocking=True)
    target = target.cuda(args.gpu, non_blocking=True)
"""


def test_a_gpu_index_tested_against_none_is_not_an_availability_check():
    assert found(IMAGENET_GPU, "TW108") == []


def test_the_same_moves_under_an_availability_check_still_warn():
    offered = IMAGENET_GPU.replace("if args.gpu is not None:\n    torch", "if torch.cuda.is_available():\n    torch")
    assert found(offered, "TW108") == [("TW108", 8, "warning"), ("TW108", 12, "warning")]


# --- TW132: evidence that no graph is kept ------------------------------------------------------

# meijieru/crnn.pytorch train.py (3cc7904): val() freezes every parameter of the model it runs.
CRNN_VAL = """\
import torch
crnn = crnn.CRNN(opt.imgH, nc, nclass, opt.nh)
optimizer = torch.optim.Adam(crnn.parameters(), lr=opt.lr)
def val(net, dataset, criterion, max_iter=100):
    for p in crnn.parameters():
        p.requires_grad = False
    net.eval()
    for i in range(max_iter):
        preds = crnn(image)
        cost = criterion(preds, text, preds_size, length) / batch_size
def trainBatch(net, criterion, optimizer):
    preds = crnn(image)
    cost = criterion(preds, text, preds_size, length) / batch_size
    crnn.zero_grad()
    cost.backward()
    optimizer.step()
for epoch in range(opt.nepoch):
    for p in crnn.parameters():
        p.requires_grad = True
    crnn.train()
    cost = trainBatch(crnn, criterion, optimizer)
    val(crnn, test_dataset, criterion)
"""


def test_a_forward_after_freezing_every_parameter_builds_no_graph():
    assert found(CRNN_VAL, "TW132") == []


def test_without_the_freeze_the_validation_forward_warns():
    unfrozen = CRNN_VAL.replace("        p.requires_grad = False\n", "        print(p.shape)\n")
    assert found(unfrozen, "TW132") == [("TW132", 9, "warning")]


# uvipen/Super-mario-bros-PPO-pytorch test.py (ab4248d): a policy acting in its environment one
# observation at a time; each step's graph is dropped at the next.
MARIO_PLAY = """\
import torch
def test(opt):
    model = PPO(env.observation_space.shape[0], len(actions))
    model.load_state_dict(torch.load(path))
    model.eval()
    state = torch.from_numpy(env.reset())
    while True:
        logits, value = model(state)
        action = torch.argmax(F.softmax(logits, dim=1)).item()
        state, reward, done, info = env.step(action)
        state = torch.from_numpy(state)
if __name__ == "__main__":
    test(get_args())
"""


def test_a_policy_acting_on_its_environment_is_info():
    assert found(MARIO_PLAY, "TW132") == [("TW132", 8, "info")]


# yassouali/pytorch-segmentation trainer.py (33434fa): eval_metrics() scores the outputs the
# training forward already made; under no_grad in _valid_epoch, bare in _train_epoch.
SEG_METRICS = """\
import torch
from utils.metrics import eval_metrics
class Trainer:
    def _train_epoch(self, epoch):
        for data, target in self.train_loader:
            output = self.model(data)
            loss = self.loss(output, target)
            loss.backward()
            self.optimizer.step()
            seg_metrics = eval_metrics(output, target, self.num_classes)
    def _valid_epoch(self, epoch):
        self.model.eval()
        with torch.no_grad():
            for data, target in self.val_loader:
                output = self.model(data)
                seg_metrics = eval_metrics(output, target, self.num_classes)
"""


def test_scoring_outputs_a_forward_made_is_not_an_evaluation_call():
    assert found(SEG_METRICS, "TW132") == []


# twtygqyy/pytorch-vdsr eval.py (514b021): a script that never trains runs the loaded model
# on every test image with autograd on.
VDSR_EVAL = """\
import glob
import torch
model = torch.load(opt.model, map_location=lambda storage, loc: storage)["model"]
image_list = glob.glob(opt.dataset + "_mat/*.*")
for scale in [2, 3, 4]:
    for image_name in image_list:
        im_input = torch.from_numpy(load(image_name)).float()
        HR = model(im_input)
        im_h_y = HR.cpu().numpy()
"""


def test_a_script_that_never_trains_runs_its_model_over_a_set_with_autograd_on():
    assert found(VDSR_EVAL, "TW132") == [("TW132", 8, "warning")]


def test_one_forward_outside_a_loop_is_left_alone():
    single = "import torch\nmodel = torch.load(path)['model']\nHR = model(im_input)\n"
    assert found(single, "TW132") == []


# --- TW119: a weights-only copy beside a full training checkpoint ------------------------------

# ShichenLiu/CondenseNet main.py (833a91d): --convert-from writes the condensed model for
# deployment; the training checkpoints (save_checkpoint) hold the optimizer.
CONDENSE = """\
import torch
optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, nesterov=True)
if args.resume:
    checkpoint = load_checkpoint(args)
    model.load_state_dict(checkpoint['state_dict'])
    optimizer.load_state_dict(checkpoint['optimizer'])
if args.convert_from is not None:
    model.load_state_dict(torch.load(args.convert_from)['state_dict'])
    torch.save({'state_dict': model.state_dict()}, os.path.join(head, tail))
for epoch in range(args.start_epoch, args.epochs):
    train(train_loader, model, criterion, optimizer, epoch)
    save_checkpoint({
        'epoch': epoch,
        'state_dict': model.state_dict(),
        'optimizer': optimizer.state_dict(),
    }, args, is_best, filename)
"""


def test_a_weights_only_copy_beside_a_full_checkpoint_is_an_export():
    assert found(CONDENSE, "TW119") == []


def test_the_training_checkpoint_without_the_optimizer_still_warns():
    partial = CONDENSE.replace("        'optimizer': optimizer.state_dict(),\n", "")
    assert found(partial, "TW119") == [("TW119", 9, "info")]  # no epoch in it: a copy of the weights


# --- TW104: one loop for training and testing, run with train=False and autograd on -----------

# codertimo/BERT-pytorch bert_pytorch/trainer/pretrain.py (d10dc4f): test() runs iteration()
# with train=False; only the backward sits under `if train:`.
BERT_SHARED = """\
import torch
from torch.optim import Adam
class BERTTrainer:
    def __init__(self, bert, vocab_size, train_dataloader, test_dataloader):
        self.model = BERTLM(bert, vocab_size)
        self.optim = Adam(self.model.parameters(), lr=1e-4)
    def train(self, epoch):
        self.iteration(epoch, self.train_data)
    def test(self, epoch):
        self.iteration(epoch, self.test_data, train=False)
    def iteration(self, epoch, data_loader, train=True):
        for i, data in enumerate(data_loader):
            next_sent_output, mask_lm_output = self.model.forward(data["bert_input"], data["segment_label"])
            loss = self.criterion(next_sent_output, data["is_next"])
            if train:
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
"""


def test_a_shared_loop_run_with_train_false_builds_graphs():
    assert found(BERT_SHARED, "TW104") == [("TW104", 12, "warning")]


def test_a_shared_loop_that_switches_autograd_with_the_flag_is_quiet():
    switched = BERT_SHARED.replace(
        "        for i, data in enumerate(data_loader):\n",
        "        torch.set_grad_enabled(train)\n        for i, data in enumerate(data_loader):\n",
    )
    assert found(switched, "TW104") == []


# --- TW111: a module moved in place is a module, whatever its name ----------------------------

# codertimo/BERT-pytorch pretrain.py (d10dc4f): save() pickles self.bert through .cpu(), then
# moves it back with a bare `self.bert.to(self.device)` (a tensor's .to() would be thrown away).
BERT_SAVE = """\
import torch
class BERTTrainer:
    def __init__(self, bert):
        self.bert = bert
    def save(self, epoch, file_path="output/bert_trained.model"):
        output_path = file_path + ".ep%d" % epoch
        torch.save(self.bert.cpu(), output_path)
        self.bert.to(self.device)
"""


def test_a_name_moved_in_place_is_a_module_saved_whole():
    assert found(BERT_SAVE, "TW111") == [("TW111", 7, "warning")]


def test_a_tensor_moved_by_assignment_is_data():
    tensor = BERT_SAVE.replace("        self.bert.to(self.device)\n", "        self.bert = self.bert.to(self.device)\n")
    assert found(tensor, "TW111") == []


# --- TW125: an entry of the loaded file used as a module ---------------------------------------

# twtygqyy/pytorch-vdsr main_vdsr.py and eval.py (514b021): the checkpoint holds {"epoch", "model":
# model}; --resume asks its entry for .state_dict(), eval.py calls torch.load(...)["model"].
VDSR_RESUME = """\
import torch
if opt.resume:
    checkpoint = torch.load(opt.resume)
    opt.start_epoch = checkpoint["epoch"] + 1
    model.load_state_dict(checkpoint["model"].state_dict())
"""


def test_an_entry_asked_for_its_state_dict_is_a_pickled_module():
    assert found(VDSR_RESUME, "TW125") == [("TW125", 3, "warning")]


def test_an_entry_that_is_a_state_dict_is_fine():
    plain = VDSR_RESUME.replace('checkpoint["model"].state_dict()', 'checkpoint["model"]')
    assert found(plain, "TW125") == []


def test_an_entry_taken_from_the_load_and_called_is_a_module():
    assert found(VDSR_EVAL, "TW125") == [("TW125", 3, "warning")]


# --- TW104: an evaluation loop that runs the model through a helper of this file --------------

# zhouhaoyi/Informer2020 exp/exp_informer.py (round 6's working half): vali() hands each batch to
# _process_one_batch(), which calls self.model; nothing turns autograd off.
INFORMER = """\
import torch
from torch import optim
class Exp_Informer:
    def _select_optimizer(self):
        return optim.Adam(self.model.parameters(), lr=1e-4)
    def _process_one_batch(self, dataset_object, batch_x, batch_y):
        outputs = self.model(batch_x)
        return outputs, batch_y
    def vali(self, vali_data, vali_loader, criterion):
        self.model.eval()
        total_loss = []
        for i, (batch_x, batch_y) in enumerate(vali_loader):
            pred, true = self._process_one_batch(vali_data, batch_x, batch_y)
            total_loss.append(criterion(pred.detach().cpu(), true.detach().cpu()))
        self.model.train()
        return total_loss
    def train(self, setting):
        model_optim = self._select_optimizer()
        for epoch in range(10):
            for i, (batch_x, batch_y) in enumerate(train_loader):
                model_optim.zero_grad()
                pred, true = self._process_one_batch(train_data, batch_x, batch_y)
                loss = criterion(pred, true)
                loss.backward()
                model_optim.step()
            vali_loss = self.vali(vali_data, vali_loader, criterion)
"""


def test_an_evaluation_loop_that_runs_the_model_through_a_local_helper_warns():
    assert found(INFORMER, "TW104") == [("TW104", 12, "warning")]


def test_the_same_loop_under_no_grad_is_quiet():
    guarded = INFORMER.replace(
        "        for i, (batch_x, batch_y) in enumerate(vali_loader):\n",
        "        with torch.no_grad():\n         for i, (batch_x, batch_y) in enumerate(vali_loader):\n",
    )
    assert found(guarded, "TW104") == []


# --- TW131 / TW133: a checkpoint loader of another file restores what it is handed -----------

# jaywalnut310/vits train.py (round 6's working half): utils.load_checkpoint(path, net_g, optim_g)
# brings the weights and the optimizer back (and with it initial_lr), never the GradScaler.
VITS = """\
import torch
from torch.cuda.amp import autocast, GradScaler
import utils
def run(rank, n_gpus, hps):
    net_g = SynthesizerTrn(hps.model).cuda(rank)
    optim_g = torch.optim.AdamW(net_g.parameters(), hps.train.learning_rate)
    try:
        path = utils.latest_checkpoint_path(hps.model_dir, "G_*.pth")
        _, _, _, epoch_str = utils.load_checkpoint(path, net_g, optim_g)
        global_step = (epoch_str - 1) * len(train_loader)
    except:
        epoch_str = 1
        global_step = 0
    scheduler_g = torch.optim.lr_scheduler.ExponentialLR(optim_g, gamma=hps.train.lr_decay, last_epoch=epoch_str-2)
    scaler = GradScaler(enabled=hps.train.fp16_run)
    for epoch in range(epoch_str, hps.train.epochs + 1):
        train_and_evaluate(rank, epoch, hps, net_g, optim_g, scheduler_g, scaler)
        scheduler_g.step()
"""


def test_a_checkpoint_loader_handed_the_optimizer_leaves_the_scaler_behind():
    assert found(VITS, "TW131", "TW133") == [("TW131", 9, "warning")]


def test_a_loader_handed_the_scaler_too_restores_it():
    handed = VITS.replace("net_g, optim_g)\n        global_step", "net_g, optim_g, scaler)\n        global_step")
    handed = handed.replace("    scaler = GradScaler(enabled=hps.train.fp16_run)\n", "")
    handed = handed.replace(
        "    net_g = SynthesizerTrn", "    scaler = GradScaler(enabled=hps.train.fp16_run)\n    net_g = SynthesizerTrn"
    )
    assert found(handed, "TW131", "TW133") == []


# jaywalnut310/glow-tts train.py (round 6's working half): apex's amp.initialize keeps a dynamic
# loss scale that only amp.state_dict() carries; the resume never loads it.
GLOW_TTS = """\
import torch
from apex import amp
import utils
generator = models.FlowGenerator(**hps.model).cuda(rank)
optimizer_g = commons.Adam(generator.parameters(), lr=hps.train.learning_rate)
if hps.train.fp16_run:
    generator, optimizer_g._optim = amp.initialize(generator, optimizer_g._optim, opt_level="O1")
try:
    path = utils.latest_checkpoint_path(hps.model_dir, "G_*.pth")
    _, _, _, epoch_str = utils.load_checkpoint(path, generator, optimizer_g)
except:
    epoch_str = 1
"""


def test_apex_loss_scale_left_behind_by_a_resume():
    assert found(GLOW_TTS, "TW131") == [("TW131", 10, "warning")]


def test_apex_loss_scale_loaded_back_is_restored():
    restored = GLOW_TTS.replace("except:", "    amp.load_state_dict(torch.load(amp_path))\nexcept:")
    assert found(restored, "TW131") == []


# haitongli/knowledge-distillation-pytorch train.py (round 6's working half): --restore_file brings
# back the weights and the optimizer, then the epoch loop starts at 0 and the StepLR with it.
DISTILL = """\
import torch
from torch.optim.lr_scheduler import StepLR
import utils
def train_and_evaluate(model, train_dataloader, optimizer, loss_fn, params, restore_file=None):
    if restore_file is not None:
        restore_path = os.path.join(args.model_dir, args.restore_file + '.pth.tar')
        utils.load_checkpoint(restore_path, model, optimizer)
    best_val_acc = 0.0
    scheduler = StepLR(optimizer, step_size=150, gamma=0.1)
    for epoch in range(params.num_epochs):
        scheduler.step()
        train(model, optimizer, loss_fn, train_dataloader, params)
"""


def test_a_resume_whose_epoch_loop_starts_again_at_zero_loses_the_schedule():
    assert found(DISTILL, "TW131") == [("TW131", 7, "warning")]


def test_an_epoch_loop_that_starts_from_the_restored_epoch_is_quiet():
    resumed = DISTILL.replace("range(params.num_epochs)", "range(start_epoch, params.num_epochs)")
    assert found(resumed, "TW131") == []


# --- TW129: a loss module called and indexed --------------------------------------------------

# laiguokun/LSTNet main.py (round 6's working half): evaluateL2 = nn.MSELoss(size_average=False),
# handed to evaluate(), whose summed loss is 0-dim.
LSTNET = """\
import torch.nn as nn
def evaluate(data, X, Y, model, evaluateL2, batch_size):
    for X, Y in data.get_batches(X, Y, batch_size, False):
        output = model(X)
        total_loss += evaluateL2(output * scale, Y * scale).data[0]
evaluateL2 = nn.MSELoss(size_average=False)
if args.cuda:
    evaluateL2 = evaluateL2.cuda()
"""


def test_a_loss_module_called_and_indexed_at_zero_raises():
    assert found(LSTNET, "TW129") == [("TW129", 5, "error")]


def test_an_unreduced_loss_module_keeps_its_dimensions():
    unreduced = LSTNET.replace("nn.MSELoss(size_average=False)", "nn.MSELoss(reduction='none')")
    assert found(unreduced, "TW129") == []


# --- TW132: a sample drawn every few training steps with autograd on ----------------------------

# jaywalnut310/glow-tts train.py (round 6's working half): every log_interval batches rank 0 draws
# a sample through DDP's .module, with autograd on; commons.Adam wraps torch's Adam.
GLOW_SAMPLE = """\
import torch
generator = models.FlowGenerator(**hps.model).cuda(rank)
optimizer_g = commons.Adam(generator.parameters(), lr=hps.train.learning_rate)
for batch_idx, (x, y) in enumerate(train_loader):
    optimizer_g.zero_grad()
    loss_g = generator(x, y).sum()
    loss_g.backward()
    optimizer_g.step()
    if batch_idx % hps.train.log_interval == 0:
        (y_gen, *_), *_ = generator.module(x[:1], gen=True)
        log_audio(y_gen)
"""


def test_a_periodic_sample_in_the_training_loop_is_info():
    assert found(GLOW_SAMPLE, "TW132") == [("TW132", 10, "info")]


def test_a_periodic_sample_under_no_grad_is_quiet():
    guarded = GLOW_SAMPLE.replace(
        "        (y_gen, *_), *_ = generator.module(x[:1], gen=True)\n",
        "        with torch.no_grad():\n            (y_gen, *_), *_ = generator.module(x[:1], gen=True)\n",
    )
    assert found(guarded, "TW132") == []


# --- TW112: the epoch's training handed to a function of another file -------------------------

# microsoft/human-pose-estimation.pytorch pose_estimation/train.py (round 6's working half): the
# MultiStepLR steps at the top of each epoch, before core.function.train() steps the optimizer.
POSE = """\
import torch
from core.function import train
optimizer = torch.optim.Adam(model.parameters(), lr=config.TRAIN.LR)
lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, config.TRAIN.LR_STEP, config.TRAIN.LR_FACTOR)
for epoch in range(config.TRAIN.BEGIN_EPOCH, config.TRAIN.END_EPOCH):
    lr_scheduler.step()
    train(config, train_loader, model, criterion, optimizer, epoch, final_output_dir)
"""


def test_a_scheduler_stepped_before_the_epochs_training_function_warns():
    assert found(POSE, "TW112") == [("TW112", 6, "warning")]


def test_a_scheduler_stepped_after_it_is_quiet():
    training = "    train(config, train_loader, model, criterion, optimizer, epoch, final_output_dir)\n"
    after = POSE.replace(f"    lr_scheduler.step()\n{training}", f"{training}    lr_scheduler.step()\n")
    assert found(after, "TW112") == []


# --- TW137: Python 3.10's removed collections aliases -----------------------------------------

# lufficc/SSD ssd/engine/trainer.py (round 6's working half): write_metric tests
# isinstance(value, collections.Mapping), gone from collections in Python 3.10.
SSD_METRIC = """\
import collections
def write_metric(eval_result, prefix, summary_writer, global_step):
    for key in eval_result:
        value = eval_result[key]
        if isinstance(value, collections.Mapping):
            write_metric(value, key, summary_writer, global_step)
"""


def test_collections_mapping_is_gone_since_python_3_10():
    assert found(SSD_METRIC, "TW137") == [("TW137", 5, "error")]


def test_collections_abc_mapping_is_fine():
    fixed = SSD_METRIC.replace("import collections\n", "import collections.abc\n").replace(
        "collections.Mapping", "collections.abc.Mapping"
    )
    assert found(fixed, "TW137") == []


def test_a_checkpoint_loader_handed_an_object_lint_cannot_read_may_restore_anything():
    handed = VITS.replace("net_g, optim_g)\n        global_step", "net_g, optim_g, trainer)\n        global_step")
    assert found(handed, "TW131") == []


def test_a_script_that_asks_for_input_gradients_needs_its_graph():
    saliency = VDSR_EVAL.replace(
        "        HR = model(im_input)\n",
        "        HR = model(im_input)\n        grad = torch.autograd.grad(HR.sum(), im_input)\n",
    )
    assert found(saliency, "TW132") == []


# --- TW108: CUDA needed by a multi-node branch only ---------------------------------------------

# Spijkervet/SimCLR main.py (2738efa; round 5's held-out set, now a floor): set_device and the NCCL
# group only for several nodes, args.device chosen by CUDA's availability, and the training step's
# x_i.cuda() unguarded.
SIMCLR = """\
import torch
import torch.distributed as dist
def train(args, train_loader, model, criterion, optimizer):
    for step, ((x_i, x_j), _) in enumerate(train_loader):
        optimizer.zero_grad()
        x_i = x_i.cuda(non_blocking=True)
        loss = criterion(*model(x_i, x_j))
        loss.backward()
        optimizer.step()
def main(gpu, args):
    if args.nodes > 1:
        dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
        torch.cuda.set_device(gpu)
    model = model.to(args.device)
if __name__ == "__main__":
    args.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    main(0, args)
"""


def test_cuda_needed_by_a_multi_node_branch_leaves_the_cpu_path_open():
    assert found(SIMCLR, "TW108") == [("TW108", 6, "warning")]


def test_an_unconditional_set_device_is_cuda_only():
    group = '        dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)\n'
    branch = f"    if args.nodes > 1:\n{group}        torch.cuda.set_device(gpu)\n"
    everywhere = SIMCLR.replace(branch, "    torch.cuda.set_device(gpu)\n")
    assert found(everywhere, "TW108") == []


def test_a_helper_that_switches_autograd_with_its_flag_is_no_evaluation_with_graphs():
    switched = INFORMER.replace(
        "        outputs = self.model(batch_x)\n",
        "        with torch.set_grad_enabled(self.training):\n            outputs = self.model(batch_x)\n",
    )
    assert found(switched, "TW104") == []


def test_a_sweep_over_literal_settings_is_not_a_data_set():
    sweep = (
        "import torch\n"
        "model = torch.load(opt.model)['model']\n"
        "for batch_size in [1, 8, 32]:\n"
        "    out = model(torch.randn(batch_size, 3, 224, 224))\n"
    )
    assert found(sweep, "TW132") == []


# huggingface/pytorch-image-models timm/models/densenet.py: a DenseBlock(nn.ModuleDict) walks its
# layers inside the model (a file that never trains, read while round 6 looked for false alarms).
DENSE_BLOCK = """\
import torch.nn as nn
class DenseBlock(nn.ModuleDict):
    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            new_features = layer(features)
            features.append(new_features)
        return torch.cat(features, 1)
"""


def test_a_module_walking_its_own_layers_is_not_an_inference_loop():
    assert found(DENSE_BLOCK, "TW132") == []
