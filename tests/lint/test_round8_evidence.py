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
