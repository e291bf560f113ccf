"""Issue 21, round 3: shapes reduced from real scripts, each with its source, that lint must
report, and the false-alarm shapes of round 2's held-out set, which must stay quiet."""

from __future__ import annotations

import pytest

from torchwise.errors import LintError
from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source
from torchwise.lint.fix import fix_source
from torchwise.lint.legacy import rename_async_keywords


def codes(source: str, *select: str) -> list[tuple[str, int]]:
    config = LintConfig(select=select) if select else None
    return [(f.code, f.line) for f in lint_source(source, config=config)]


# --- A torch 0.3 file Python 3.7+ cannot parse is read anyway ------------------------------

# bearpaw/pytorch-classification cifar.py: `.cuda(async=True)` stops Python at the syntax
# level, and behind it sit the usual torch 0.3 mistakes.
BEARPAW = """\
import torch
def train(trainloader, model, criterion, optimizer):
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.cuda(), targets.cuda(async=True)
        loss = criterion(model(inputs), targets)
        losses.update(loss.data[0], inputs.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_the_async_keyword_is_reported_and_the_rest_of_the_file_is_read():
    assert codes(BEARPAW, "TW135", "TW129") == [("TW135", 4), ("TW129", 6)]


def test_renaming_keeps_every_other_column_in_place():
    renamed, places = rename_async_keywords(BEARPAW)
    assert places == ((4, 54),)
    assert [len(line) for line in renamed.splitlines()] == [len(line) for line in BEARPAW.splitlines()]
    assert "async" not in renamed


def test_fix_rewrites_async_to_non_blocking():
    fixed, left = fix_source(BEARPAW, config=LintConfig(select=("TW135",)))
    assert "targets.cuda(non_blocking=True)" in fixed
    assert left == []


def test_another_syntax_error_is_still_reported_as_python_reports_it():
    broken = BEARPAW + "exec 'done'\n"  # Python 2 syntax lint does not read (it reads print statements)
    with pytest.raises(LintError, match=r"^<string>:4:\d+: cannot parse: invalid syntax"):
        lint_source(broken)


def test_async_elsewhere_is_not_renamed():
    # `async def` and `await` are Python 3 syntax: nothing to rename, nothing to report.
    assert rename_async_keywords("async def f():\n    await g(x, y=1)\n")[1] == ()


# --- TW119: only where the script resumes training from its checkpoints ----------------------

# HobbitLong/RepDistiller train_student.py: the student's checkpoints hold no optimizer, but
# the only load is the frozen teacher's weights; nothing resumes from them.
DISTILL = """\
import torch
def load_teacher(model_path, n_cls):
    model = model_dict[get_teacher_name(model_path)](num_classes=n_cls)
    model.load_state_dict(torch.load(model_path)['model'])
    return model
model_t = load_teacher(opt.path_t, n_cls)
model_s = model_dict[opt.model_s](num_classes=n_cls)
optimizer = torch.optim.SGD(model_s.parameters(), lr=0.05, momentum=0.9)
for epoch in range(1, opt.epochs + 1):
    train(epoch, train_loader, model_s, model_t, optimizer)
    state = {'epoch': epoch, 'model': model_s.state_dict(), 'accuracy': test_acc}
    torch.save(state, save_file)
"""


def test_a_checkpoint_of_a_script_that_only_loads_its_teacher_stays_quiet():
    assert codes(DISTILL, "TW119") == []


def test_the_same_checkpoint_is_reported_once_the_student_resumes_from_it():
    resumed = DISTILL.replace(
        "for epoch", "model_s.load_state_dict(torch.load(opt.resume)['model'])\nfor epoch"
    )
    assert codes(resumed, "TW119") == [("TW119", 13)]


# --- TW111: what the saved value is, not what it is called -----------------------------------

# 1Konny/Beta-VAE solver.py: `model_states` holds a state dict, not a module.
BETA_VAE = """\
import torch
class Solver(object):
    def save_checkpoint(self, filename):
        model_states = {'net': self.net.state_dict()}
        optim_states = {'optim': self.optim.state_dict()}
        states = {'iter': self.global_iter, 'model_states': model_states, 'optim_states': optim_states}
        with open(filename, mode='wb+') as f:
            torch.save(states, f)
"""


def test_a_dict_named_like_a_model_is_not_a_module():
    assert codes(BETA_VAE, "TW111") == []


def test_a_module_under_the_same_name_is_still_reported():
    source = BETA_VAE.replace("model_states = {'net': self.net.state_dict()}", "model_states = self.net")
    assert codes(source, "TW111") == [("TW111", 8)]


# --- TW130: only where the iterator can run out ----------------------------------------------

# jwyang/faster-rcnn.pytorch test_net.py: next() exactly as many times as the one-image loader
# has batches.
ONE_PASS = """\
import torch
num_images = len(imdb.image_index)
dataloader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False, num_workers=0)
data_iter = iter(dataloader)
for i in range(num_images):
    data = next(data_iter)
"""


def test_one_pass_over_a_one_image_loader_stays_quiet():
    assert codes(ONE_PASS, "TW130") == []


def test_steps_counted_by_the_loader_itself_stay_quiet():
    source = ONE_PASS.replace("batch_size=1", "batch_size=8").replace("range(num_images)", "range(len(dataloader))")
    assert codes(source, "TW130") == []


def test_images_counted_over_a_batched_loader_still_run_out():
    assert codes(ONE_PASS.replace("batch_size=1", "batch_size=8"), "TW130") == [("TW130", 6)]


# --- TW129: .data[0] on a loss written inline ------------------------------------------------

# aaron-xichen/pytorch-playground cifar/train.py: the test loss summed from an inline call.
INLINE_LOSS = """\
import torch.nn.functional as F
for data, target in test_loader:
    output = model(data)
    test_loss += F.cross_entropy(output, target).data[0]
    per_sample = F.cross_entropy(output, target, reduction='none').data[0]
"""


def test_data0_on_an_inline_functional_loss_is_reported():
    assert codes(INLINE_LOSS, "TW129") == [("TW129", 4)]


# --- TW131: a model's own load() under a resume branch --------------------------------------

# qfgaohao/pytorch-ssd train_ssd.py: --resume loads only the weights, through net.load().
SSD_RESUME = """\
import torch
net = create_net(num_classes)
if args.resume:
    net.load(args.resume)
elif args.base_net:
    net.init_from_base_net(args.base_net)
optimizer = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum)
"""


def test_a_resume_through_the_models_own_load_is_reported():
    assert codes(SSD_RESUME, "TW131") == [("TW131", 4)]


def test_the_same_load_under_a_pretrained_flag_is_fine_tuning():
    assert codes(SSD_RESUME.replace("args.resume", "args.pretrained_ssd"), "TW131") == []


# --- TW132: Variable(volatile=True) says the author wanted autograd off ----------------------

# clcarwin/sphereface_pytorch lfw_eval.py: a module-level loop over LFW pairs, under names
# that say nothing about evaluation.
LFW = """\
import torch
from torch.autograd import Variable
net.load_state_dict(torch.load(args.model))
net.eval()
for i in range(6000):
    img = np.vstack(imglist)
    img = Variable(torch.from_numpy(img).float(), volatile=True).cuda()
    output = net(img)
    f = output.data
"""


def test_a_forward_on_a_volatile_variable_is_reported():
    found = lint_source(LFW, config=LintConfig(select=("TW132",)))
    assert [(f.code, f.line) for f in found] == [("TW132", 8)]
    assert "Variable(volatile=True)" in found[0].message


def test_a_plain_variable_in_a_neutral_loop_stays_quiet():
    # without volatile=True and without net.eval() nothing says the loop evaluates
    plain = LFW.replace(", volatile=True", "").replace("net.eval()\n", "")
    assert codes(plain, "TW132") == []


def test_a_plain_variable_in_a_loop_after_eval_that_nothing_trains_on_is_reported():
    # round 7: net.eval() before the loop, and nothing after it trains, says it evaluates
    assert codes(LFW.replace(", volatile=True", ""), "TW132") == [("TW132", 8)]


def test_a_volatile_input_under_no_grad_stays_quiet():
    source = LFW.replace("    output = net(img)\n", "    with torch.no_grad():\n        output = net(img)\n")
    assert codes(source, "TW132") == []


# --- TW125: a loaded module handed to a function that runs it --------------------------------

# spro/char-rnn.pytorch generate.py: the whole pickled decoder goes to generate().
CHAR_RNN = """\
import torch
def generate(decoder, prime_str='A', predict_len=100):
    hidden = decoder.init_hidden(1)
    output, hidden = decoder(inp, hidden)
    return output
if __name__ == '__main__':
    decoder = torch.load(args.filename)
    print(generate(decoder, **vars(args)))
"""


def test_a_loaded_module_run_by_a_local_function_is_reported():
    assert codes(CHAR_RNN, "TW125") == [("TW125", 7)]


def test_a_loaded_state_handed_to_a_function_that_only_reads_it_stays_quiet():
    source = CHAR_RNN.replace("    output, hidden = decoder(inp, hidden)\n", "    output = decoder['step']\n")
    source = source.replace("    hidden = decoder.init_hidden(1)\n", "")
    assert codes(source, "TW125") == []


# --- Wrong warnings of the earlier sets and the working half, fixed by what the values are ---

# layumi/Person_reID_baseline_pytorch train.py: the optimizer class goes through an alias and its
# parameters through names; the SWA teacher stays in eval under no_grad on purpose.
REID = """\
import torch
from torch import optim
optim_name = optim.SGD
base_params = filter(lambda p: id(p) not in ignored_params, model.parameters())
optimizer_ft = optim_name([{'params': base_params, 'lr': 0.1 * opt.lr}], momentum=0.9)
def train_model(model, criterion, optimizer, num_epochs):
    for epoch in range(num_epochs):
        model.train()
        for inputs, labels in dataloaders['train']:
            loss = criterion(model(inputs), labels)
            swa_model.eval()
            with torch.no_grad():
                outputs2 = swa_model(inputs)
            loss.backward()
            optimizer.step()
"""


def test_a_teacher_copy_next_to_an_aliased_optimizer_stays_in_eval():
    assert codes(REID, "TW105") == []


def test_the_teacher_copy_trained_with_the_model_is_still_reported():
    trained = REID.replace("model.parameters())", "swa_model.parameters())")
    assert codes(trained, "TW105") == [("TW105", 11)]


# layumi/Person_reID_baseline_pytorch test.py: set_device on the default --gpu_ids 0, outside
# any availability check: the script cannot start without CUDA.
REID_TEST = """\
import torch
if len(gpu_ids) > 0:
    torch.cuda.set_device(gpu_ids[0])
use_gpu = torch.cuda.is_available()
if use_gpu:
    model = model.cuda()
ff = torch.FloatTensor(n, 512).zero_().cuda()
"""


def test_a_script_that_sets_its_cuda_device_unguarded_is_cuda_only():
    assert codes(REID_TEST, "TW108") == []


def test_a_set_device_behind_an_availability_check_does_not_make_it_cuda_only():
    guarded = REID_TEST.replace("if len(gpu_ids) > 0:", "if torch.cuda.is_available():")
    assert codes(guarded, "TW108") == [("TW108", 7)]


# lucidrains/DALLE-pytorch train_dalle.py: the DeepSpeed branch saves a note where the weights
# would be, and the main save names its optimizer `opt_state`; `save_obj` is built twice.
DALLE = """\
import torch
opt = torch.optim.Adam(dalle.parameters(), lr=3e-4)
if args.resume:
    dalle.load_state_dict(torch.load(args.dalle_path)['weights'])
def save_model(path):
    save_obj = {'hparams': dalle_params}
    if using_deepspeed:
        save_obj = {**save_obj, 'weights': 'look into consolidating DeepSpeed checkpoints.'}
        torch.save(save_obj, aux_path)
        return
    save_obj = {**save_obj, 'weights': dalle.state_dict(), 'opt_state': opt.state_dict()}
    torch.save(save_obj, path)
"""


def test_a_note_in_place_of_the_weights_and_a_later_full_save_stay_quiet():
    assert codes(DALLE, "TW119") == []


def test_a_save_with_the_weights_and_no_optimizer_is_still_reported():
    source = DALLE.replace(", 'opt_state': opt.state_dict()}", "}")
    assert codes(source, "TW119") == [("TW119", 12)]


# qfgaohao/pytorch-ssd train_ssd.py: `last_epoch = -1`, never changed, handed to the scheduler.
SSD_SCHEDULE = """\
import torch
last_epoch = -1
optimizer = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum)
scheduler = MultiStepLR(optimizer, milestones=milestones, gamma=0.1, last_epoch=last_epoch)
"""


def test_last_epoch_from_a_name_only_ever_minus_one_is_a_fresh_start():
    assert codes(SSD_SCHEDULE, "TW133") == []


def test_last_epoch_from_a_restored_epoch_is_still_reported():
    source = SSD_SCHEDULE + "last_epoch = checkpoint['epoch']\n"
    assert codes(source, "TW133") == [("TW133", 4)]


# yaodongyu/TRADES pgd_attack_cifar10.py: a plain SGD over the input, rebuilt every attack step.
PGD = """\
import torch.optim as optim
def _pgd_whitebox(model, X, y, num_steps):
    for _ in range(num_steps):
        opt = optim.SGD([X_pgd], lr=1e-3)
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(X_pgd), y)
        loss.backward()
        X_pgd = X_pgd.data + step_size * X_pgd.grad.data.sign()
"""


def test_a_stateless_sgd_rebuilt_each_step_loses_nothing():
    assert codes(PGD, "TW134") == []


def test_an_optimizer_with_momentum_rebuilt_each_step_is_still_reported():
    assert codes(PGD.replace("lr=1e-3)", "lr=1e-3, momentum=0.9)"), "TW134") == [("TW134", 4)]


# VainF/DeepLabV3Plus-Pytorch main.py: StepLR's step_size comes from --step_size, 10000 by default.
DEEPLAB = """\
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--step_size", type=int, default=10000)
opts = parser.parse_args()
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=opts.step_size, gamma=0.1)
for images, labels in train_loader:
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
    scheduler.step()
"""


def test_a_step_size_in_iterations_read_from_the_command_line_stays_quiet():
    assert codes(DEEPLAB, "TW113") == []


def test_a_step_size_in_epochs_read_from_the_command_line_is_still_reported():
    assert codes(DEEPLAB.replace("default=10000", "default=30"), "TW113") == [("TW113", 11)]


# --- TW110: a file saved in one function and loaded in another comes from another run --------

# 1Konny/Beta-VAE solver.py: save_checkpoint() and load_checkpoint() write and read the same
# path; the load resumes a run that may have used the GPU.
BETA_VAE_LOAD = """\
import torch
class Solver(object):
    def save_checkpoint(self, filename):
        file_path = os.path.join(self.ckpt_dir, filename)
        with open(file_path, mode='wb+') as f:
            torch.save({'net': self.net.state_dict()}, f)
    def load_checkpoint(self, filename):
        file_path = os.path.join(self.ckpt_dir, filename)
        checkpoint = torch.load(file_path)
        self.net.load_state_dict(checkpoint['net'])
    def cuda(self, use_cuda):
        return self.net.cuda() if use_cuda else self.net
"""


def test_a_load_in_another_function_than_its_save_is_reported():
    assert codes(BETA_VAE_LOAD, "TW110") == [("TW110", 9)]


def test_a_reload_in_the_function_that_saved_stays_quiet():
    source = """\
import torch
def train(model):
    model.cuda()
    torch.save(model.state_dict(), 'best.pt')
    model.load_state_dict(torch.load('best.pt'))
"""
    assert codes(source, "TW110") == []


def test_a_cpu_only_script_reloading_its_own_file_stays_quiet():
    # MorvanZhou/PyTorch-Tutorial 304_save_reload.py: save() and restore_params() on the CPU.
    source = BETA_VAE_LOAD.split("    def cuda(")[0]
    assert codes(source, "TW110") == []


# salesforce/awd-lstm-lm main.py: model_save(fn) and the cached corpus' `fn` are two files.
AWD_CACHE = """\
import torch
def model_save(fn):
    with open(fn, 'wb') as f:
        torch.save([model, criterion, optimizer], f)
if args.cuda:
    model.cuda()
fn = 'corpus.{}.data'.format(digest)
if os.path.exists(fn):
    corpus = torch.load(fn)
else:
    corpus = data.Corpus(args.data)
    torch.save(corpus, fn)
"""


def test_a_bare_path_variable_names_a_file_only_in_its_function():
    assert codes(AWD_CACHE, "TW110") == []


# --- TW104: an evaluation loop that pulls its batches with next() ----------------------------

# jwyang/faster-rcnn.pytorch test_net.py: the model runs in eval mode over every test image,
# one next(data_iter) per step, with autograd on.
NEXT_EVAL = """\
import torch
dataloader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False)
data_iter = iter(dataloader)
fasterRCNN.eval()
for i in range(num_images):
    data = next(data_iter)
    im_data.data.resize_(data[0].size()).copy_(data[0])
    rois, cls_prob, bbox_pred = fasterRCNN(im_data, im_info, gt_boxes, num_boxes)
"""


def test_an_evaluation_loop_fed_by_next_is_reported():
    assert codes(NEXT_EVAL, "TW104") == [("TW104", 5)]


def test_a_training_loop_fed_by_next_is_not_an_evaluation():
    training = NEXT_EVAL + "    loss = rois.sum()\n    loss.backward()\n    optimizer.step()\n"
    assert codes(training.replace("fasterRCNN.eval()", "fasterRCNN.train()"), "TW104") == []


# --- TW125: a module-level load read by a function defined above it --------------------------

# salesforce/awd-lstm-lm pointer.py: evaluate() is defined first, the whole model loaded below,
# then evaluate() called.
AWD_POINTER = """\
import torch
def evaluate(data_source, batch_size=10):
    model.eval()
    return model(data_source)
with open(args.save, 'rb') as f:
    model = torch.load(f)
val_loss = evaluate(val_data, test_batch_size)
"""


def test_a_function_defined_above_and_called_after_the_load_reads_it():
    assert codes(AWD_POINTER, "TW125") == [("TW125", 6)]


def test_a_function_never_called_after_the_load_does_not_count():
    assert codes(AWD_POINTER.replace("val_loss = evaluate(val_data, test_batch_size)\n", ""), "TW125") == []


# --- TW131: an option whose help says it continues training ----------------------------------

# NVIDIA/apex examples/dcgan/main_amp.py (and pytorch/examples' dcgan): --netG is "path to netG
# (to continue training)", yet only the weights come back.
DCGAN = """\
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--netG', default='', help="path to netG (to continue training)")
opt = parser.parse_args()
netG = Generator(ngpu)
if opt.netG != '':
    netG.load_state_dict(torch.load(opt.netG))
optimizerG = torch.optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
"""


def test_an_option_that_continues_training_is_a_resume():
    assert codes(DCGAN, "TW131") == [("TW131", 8)]


def test_an_option_for_pretrained_weights_is_fine_tuning():
    assert codes(DCGAN.replace("(to continue training)", "(pretrained weights)"), "TW131") == []


# --- TW124: a model of layers that ignore the mode needs no eval() ---------------------------

# MorvanZhou/PyTorch-Tutorial 304_save_reload.py: Linear, ReLU, Linear.
RESTORE = """\
import torch
def restore_params():
    net3 = torch.nn.Sequential(torch.nn.Linear(1, 10), torch.nn.ReLU(), torch.nn.Linear(10, 1))
    net3.load_state_dict(torch.load('net_params.pkl'))
    prediction = net3(x)
"""


def test_a_sequential_without_dropout_or_batch_norm_needs_no_eval():
    assert codes(RESTORE, "TW124") == []


def test_a_sequential_with_dropout_still_needs_eval():
    source = RESTORE.replace("torch.nn.ReLU()", "torch.nn.Dropout(0.5)")
    assert codes(source, "TW124") == [("TW124", 4)]
