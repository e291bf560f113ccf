"""Issue 21, round 5: the shapes of the rules the round added or extended (TW104, TW108, TW131,
TW136-TW141), each reduced from a real script with its source; see test_round5_shapes.py for the
warnings the round turned into info or silence."""

from __future__ import annotations

from torchwise.lint.config import LintConfig
from torchwise.lint.fix import fix_source

from .test_round5_shapes import found

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
