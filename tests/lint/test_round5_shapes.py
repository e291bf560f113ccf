"""Issue 21, round 5: shapes reduced from the working half's scripts (tests/lint/worked5), each
with its source, where a rule warned about what was not a bug or missed one; each says what lint
now reports."""

from __future__ import annotations

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source
from torchwise.lint.fix import fix_source


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
    assert found(resume, "TW119", "TW131") == [("TW131", 5, "warning"), ("TW119", 11, "warning")]


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


# --- TW108: a GPU count against zero is a CPU path --------------------------------------------

# hendrycks/outlier-exposure CIFAR/baseline.py: "--ngpu: 0 = CPU" guards net.cuda(), not the batches.
OUTLIER = """\
import torch
parser.add_argument('--ngpu', type=int, default=1, help='0 = CPU.')
if args.ngpu > 0:
    net.cuda()
for data, target in train_loader:
    data, target = data.cuda(), target.cuda()
"""


def test_a_gpu_count_checked_against_zero_offers_a_cpu_path():
    assert found(OUTLIER, "TW108") == [("TW108", 6, "warning")]


def test_a_count_checked_against_one_is_about_several_gpus():
    several = OUTLIER.replace("args.ngpu > 0", "args.ngpu > 1")
    assert found(several, "TW108") == []


# --- TW136: Python 2's it.next() --------------------------------------------------------------

# kekmodel/FixMatch-pytorch train.py: the bare except retries with the same AttributeError.
FIXMATCH_NEXT = """\
labeled_iter = iter(labeled_trainloader)
for batch_idx in range(1024):
    try:
        inputs_x, targets_x = labeled_iter.next()
    except:
        labeled_iter = iter(labeled_trainloader)
        inputs_x, targets_x = labeled_iter.next()
"""


def test_next_method_on_an_iterator_is_an_error_with_a_fix():
    assert found(FIXMATCH_NEXT, "TW136") == [("TW136", 4, "error"), ("TW136", 7, "error")]
    fixed, _ = fix_source(FIXMATCH_NEXT, config=LintConfig(select=("TW136",)))
    assert "inputs_x, targets_x = next(labeled_iter)\n" in fixed and ".next()" not in fixed


def test_next_method_of_an_object_lint_cannot_trace_is_left_alone():
    other = FIXMATCH_NEXT.replace("iter(labeled_trainloader)", "ReplayBuffer(labeled_trainloader)")
    assert found(other, "TW136") == []


# --- TW137: names the libraries removed, a call the optimizer refuses -------------------------

# zijundeng/pytorch-semantic-segmentation train/voc-psp_net/train.py; IBM/pytorch-seq2seq
# examples/sample.py; LiyuanLucasLiu/RAdam language-model/train_1bw.py.
REMOVED = """\
import torch
import torchtext
import torchvision.transforms as standard_transforms
visualize = standard_transforms.Compose([standard_transforms.Scale(384), standard_transforms.ToTensor()])
train = torchtext.data.TabularDataset(path=opt.train_path, format='tsv', fields=fields)
optimizer = torch.optim.Adam(lm_model.parameters())
optimizer.load_state_dict(checkpoint_file['opt'], False)
lm_model.load_state_dict(checkpoint_file['lm_model'], False)
"""


def test_removed_names_and_a_strict_argument_to_an_optimizer_are_errors():
    assert found(REMOVED, "TW137") == [("TW137", 4, "error"), ("TW137", 5, "error"), ("TW137", 7, "error")]


def test_the_names_that_replaced_them_are_fine():
    current = REMOVED.replace("Scale(", "Resize(").replace("torchtext.data.TabularDataset", "torchtext.datasets.IMDB")
    assert found(current.replace("checkpoint_file['opt'], False", "checkpoint_file['opt']"), "TW137") == []


# --- TW138: ~ on a bool flag --------------------------------------------------------------------

# kentaroy47/vision-transformers-cifar10 train_cifar10.py
VIT_CIFAR = """\
parser.add_argument('--nowandb', action='store_true', help='disable wandb')
args = parser.parse_args()
usewandb = ~args.nowandb
keep = ~mask
"""


def test_bitwise_not_of_a_store_true_flag_warns_and_of_a_tensor_mask_does_not():
    assert found(VIT_CIFAR, "TW138") == [("TW138", 3, "warning")]


# --- kinds: what an optimizer trains is a model, whatever its name -------------------------

# PetarV-/DGI execute.py: `log = LogReg(...)` (a class of another file) trained by Adam, then
# scored on the test embeddings with autograd on.
DGI = """\
import torch
from models import LogReg
for _ in range(50):
    log = LogReg(hid_units, nb_classes)
    opt = torch.optim.Adam(log.parameters(), lr=0.01)
    for _ in range(100):
        opt.zero_grad()
        loss = xent(log(train_embs), train_lbls)
        loss.backward()
        opt.step()
    logits = log(test_embs)
"""


def test_a_module_named_like_nothing_is_a_model_when_an_optimizer_trains_it():
    assert found(DGI, "TW132") == [("TW132", 11, "warning")]


# --- TW104: an evaluation loop over an iterator a loader handed back, a model method ----------

# LiyuanLucasLiu/RAdam language-model/train_1bw.py: evaluate() walks data_loader.get_tqdm() and
# scores with lm_model.log_prob(word_t), autograd on.
RADAM_LM = """\
import torch
def evaluate(data_loader, lm_model, criterion):
    lm_model.eval()
    iterator = data_loader.get_tqdm()
    total_loss = 0
    for word_t, label_t in iterator:
        output = lm_model.log_prob(word_t)
        total_loss += criterion(output, label_t.view(-1)).item()
    return total_loss
test_ppl = evaluate(test_loader, lm_model, criterion)
"""


def test_an_evaluation_over_a_loaders_iterator_with_a_model_method_warns():
    assert found(RADAM_LM, "TW104") == [("TW104", 6, "warning")]


def test_a_bookkeeping_method_of_the_model_is_not_a_forward():
    bookkeeping = RADAM_LM.replace("output = lm_model.log_prob(word_t)", "output = lm_model.init_hidden()")
    assert found(bookkeeping, "TW104") == []


# --- TW131: the state a helper loads comes from a resume branch -------------------------------

# Luolc/AdaBound demos/cifar10/main.py: build_model(args, device, ckpt=ckpt) loads ckpt['net'];
# ckpt comes from load_checkpoint() under `if args.resume:`; the optimizer starts afresh.
ADABOUND = """\
import torch
def build_model(args, device, ckpt=None):
    net = ResNet34().to(device)
    if ckpt:
        net.load_state_dict(ckpt['net'])
    return net
def main():
    if args.resume:
        ckpt = load_checkpoint(ckpt_name)
        start_epoch = ckpt['epoch']
    else:
        ckpt = None
    net = build_model(args, device, ckpt=ckpt)
    optimizer = torch.optim.SGD(net.parameters(), args.lr, momentum=0.9)
"""


def test_weights_loaded_by_a_helper_from_a_resume_branchs_state_warn():
    assert found(ADABOUND, "TW131") == [("TW131", 5, "warning")]


def test_the_same_helper_given_pretrained_weights_is_fine_tuning():
    pretrained = ADABOUND.replace("if args.resume:", "if args.finetune_from:")
    assert found(pretrained, "TW131") == []


# --- TW108: a --no-cuda option is a CPU path (TW108's settled rule) ---------------------------

# zhanghang1989/PyTorch-Encoding experiments/segmentation/test.py (tests/lint/heldout4): args.cuda
# guards only the loader's pin_memory; the model moves with an unconditional .cuda().
ENCODING_TEST = """\
import torch
parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
loader_kwargs = {'num_workers': 4, 'pin_memory': True} if args.cuda else {}
model = get_segmentation_model(args.model)
model = model.cuda()
"""


def test_a_no_cuda_option_makes_an_unguarded_cuda_a_warning():
    assert found(ENCODING_TEST, "TW108") == [("TW108", 7, "warning")]


def test_without_the_option_or_any_availability_test_the_script_is_cuda_only():
    cuda_only = "import torch\nmodel = get_segmentation_model(args.model)\nmodel = model.cuda()\n"
    assert found(cuda_only, "TW108") == []


# --- TW141: the worker's own gradients cleared too ------------------------------------------

A3C = """\
import torch
def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        shared_param._grad = param.grad
def train(model, shared_model, optimizer):
    for _ in range(100):
        optimizer.zero_grad()
        rollout(model).backward()
        ensure_shared_grads(model, shared_model)
        optimizer.step()
"""


def test_shared_gradients_cleared_only_by_the_shared_optimizer_warn():
    assert found(A3C, "TW141") == [("TW141", 7, "warning")]


def test_a_worker_that_zeroes_its_own_gradients_is_fine():
    zeroed = A3C.replace("optimizer.zero_grad()\n", "optimizer.zero_grad()\n        model.zero_grad()\n")
    assert found(zeroed, "TW141") == []
    old_behaviour = A3C.replace("optimizer.zero_grad()", "optimizer.zero_grad(set_to_none=False)")
    assert found(old_behaviour, "TW141") == []


# --- TW139: where the parsed options go, lint follows ------------------------------------------

GET_ARGS = """\
import argparse
def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--resume', default='', help='path to latest checkpoint')
    return parser.parse_args()
"""


def test_a_parser_returned_to_another_file_is_left_alone():
    assert found(GET_ARGS, "TW139") == []
    assert found(GET_ARGS + "args = get_args()\ntrainer = Trainer(args)\n", "TW139") == []


def test_options_parsed_here_and_read_by_nothing_here_warn():
    assert found(GET_ARGS + "args = get_args()\nrun(lr=args.lr)\n", "TW139") == [("TW139", 5, "warning")]
    read = GET_ARGS + "args = get_args()\nif args.resume:\n    model.load_state_dict(torch.load(args.resume))\n"
    assert found(read, "TW139") == []


def test_an_optimizer_wrapper_with_its_own_load_state_dict_is_not_torchs():
    # pytorch/fairseq fairseq/optim/fp16_optimizer.py: self.fp32_optimizer.load_state_dict(state, overrides)
    wrapper = "class FP16Optimizer:\n    def load_state_dict(self, state_dict, optimizer_overrides=None):\n"
    wrapper += "        self.fp32_optimizer.load_state_dict(state_dict, optimizer_overrides)\n"
    assert found(wrapper, "TW137") == []
    table = "import torch\noptim_map = {'Adam': torch.optim.Adam, 'RAdam': RAdam}\n"
    table += "optimizer = optim_map[args.update](model.parameters())\noptimizer.load_state_dict(ckpt['opt'], False)\n"
    assert found(table, "TW137") == [("TW137", 4, "error")]
