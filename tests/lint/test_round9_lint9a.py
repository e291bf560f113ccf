"""Issue 21, round 9 (lint9a): a backpropagated loss kept with its graph across steps (TW160), the
kind judged in round 8's and round 9's worked halves. Each case is reduced from a real script
(source named), checked on the verbatim script too, and has near misses that stay silent."""

from __future__ import annotations

from pathlib import Path

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source

from .test_round5_shapes import found

HERE = Path(__file__).parent


def _on_script(path: Path, code: str) -> list[tuple[str, int, str]]:
    findings = lint_source(path.read_text(encoding="utf-8"), str(path), config=LintConfig(select=(code,)))
    return [(f.code, f.line, f.level.value) for f in findings]


# Skamlo/crack-image-segmentation modules/train/train_epoch.py (tests/lint/worked9, judged bug at
# lines 22-23, 30): https://github.com/Skamlo/crack-image-segmentation/blob/c659dde35aebab09cc937baf83b4e18e7049362e/modules/train/train_epoch.py
# the live loss of every batch goes into history_loss, which the function returns.
HISTORY = """\
def train_epoch(loader, model, optimizer, criterion, device):
    history_loss = []
    loop = tqdm(loader, desc="Training", leave=False)
    for images, labels in loop:
        optimizer.zero_grad()
        _, class_logits = model(images)
        loss = criterion(class_logits, labels)
        history_loss.append(loss)
        loss.backward()
        optimizer.step()
    return history_loss
"""


def test_tw160_a_history_list_of_live_losses():
    assert found(HISTORY, "TW160") == [("TW160", 8, "warning")]
    script = HERE / "worked9" / "Skamlo_crack-image-segmentation__modules__train__train_epoch.py"
    assert _on_script(script, "TW160") == [("TW160", 23, "warning")]


def test_tw160_silent_on_numbers_detached_values_and_per_step_lists():
    assert found(HISTORY.replace("append(loss)", "append(loss.item())"), "TW160") == []
    assert found(HISTORY.replace("history_loss.append(loss)", "history_loss.append(float(loss))"), "TW160") == []
    # A list made anew every step lives for that step only.
    per_step = HISTORY.replace(
        "        optimizer.zero_grad()\n", "        optimizer.zero_grad()\n        history_loss = []\n", 1
    )
    assert found(per_step, "TW160") == []
    # What it cannot see: the loss kept through another name.
    aliased = HISTORY.replace("history_loss.append(loss)", "kept = loss\n        history_loss.append(kept)")
    assert found(aliased, "TW160") == []


# yanx27/Pointnet_Pointnet2_pytorch train_semseg.py (tests/lint/worked8, judged bug at lines 180,
# 197, 205, 206): https://github.com/yanx27/Pointnet_Pointnet2_pytorch/blob/eb64fe0b4c24055559cea26299cb485dcb43d8dd/train_semseg.py
RUNNING_SUM = """\
for epoch in range(start_epoch, args.epoch):
    loss_sum = 0
    for i, (points, target) in tqdm(enumerate(trainDataLoader), total=len(trainDataLoader)):
        optimizer.zero_grad()
        seg_pred, trans_feat = classifier(points)
        loss = criterion(seg_pred, target, trans_feat, weights)
        loss.backward()
        optimizer.step()
        loss_sum = loss_sum + loss * points.size(0)
    print(loss_sum / num_batches)
"""


def test_tw160_a_running_sum_of_loss_tensors():
    assert found(RUNNING_SUM, "TW160") == [("TW160", 9, "warning")]
    assert found(RUNNING_SUM.replace("loss_sum + loss *", "loss_sum + loss.item() *"), "TW160") == []
    script = HERE / "worked8" / "yanx27_Pointnet_Pointnet2_pytorch__train_semseg.py"
    assert _on_script(script, "TW160") == [("TW160", 205, "warning")]


def test_tw160_silent_on_a_few_repetitions_of_one_step_and_on_a_sum_backpropagated_once():
    # seungwonpark/melgan utils/train.py (tests/lint/worked6, judged not a bug): loss_d_sum over
    # rep_discriminator critic updates of one step, read with .item() the same step.
    critic = RUNNING_SUM.replace("tqdm(enumerate(trainDataLoader), total=len(trainDataLoader))", "range(n_critic)")
    assert found(critic, "TW160") == []
    melgan = HERE / "worked6" / "seungwonpark_melgan__utils__train.py"
    assert _on_script(melgan, "TW160") == []
    # The sum is the loss of one backward (accumulated over micro-batches): its graph is wanted.
    once = RUNNING_SUM.replace("        loss.backward()\n", "").replace(
        "    print(", "    loss_sum.backward()\n    print("
    )
    assert found(once, "TW160") == []
    # Under no_grad there is no backward and no graph: an evaluation's sum is not reported.
    assert found(RUNNING_SUM.replace("loss.backward()", "pass"), "TW160") == []


# --- TW132: a shared train/evaluate loop handed an evaluation mode string ------------------------

# MadryLab/robustness robustness/train.py (tests/lint/heldout8, judged bug at lines 134, 156-157):
# https://github.com/MadryLab/robustness/blob/master/robustness/train.py (commit in the file's header)
# train_model() runs the natural validation _model_loop(args, 'val', ...) under a no_grad held in a
# name; eval_model() runs the same call with autograd on. The adversarial evaluation (adv=True)
# needs input gradients and is run with autograd on in both places.
SHARED_LOOP = """\
import torch as ch
def eval_model(args, model, loader):
    prec1, nat_loss = _model_loop(args, 'val', loader, model, None, 0, False)
    adv_prec1, adv_loss = _model_loop(args, 'val', loader, model, None, 0, True)
    return prec1, adv_prec1

def train_model(args, model, train_loader, val_loader, opt, disable_no_grad=False):
    for epoch in range(args.epochs):
        _model_loop(args, 'train', train_loader, model, opt, epoch, args.adv_train)
        ctx = ch.enable_grad() if disable_no_grad else ch.no_grad()
        with ctx:
            prec1, nat_loss = _model_loop(args, 'val', val_loader, model, None, epoch, False)
        adv_val = _model_loop(args, 'val', val_loader, model, None, epoch, True)

def _model_loop(args, loop_type, loader, model, opt, epoch, adv):
    is_train = (loop_type == 'train')
    model = model.train() if is_train else model.eval()
    for inp, target in loader:
        loss = ch.nn.functional.cross_entropy(model(inp), target)
        if is_train:
            opt.zero_grad()
            loss.backward()
            opt.step()
    return 0.0, loss.item()
"""


def test_tw132_a_mode_string_evaluation_the_file_runs_under_a_named_no_grad_elsewhere():
    assert found(SHARED_LOOP, "TW132") == [("TW132", 3, "warning")]
    script = HERE / "heldout8" / "MadryLab_robustness__robustness__train.py"
    assert _on_script(script, "TW132") == [("TW132", 156, "warning")]


def test_tw132_mode_strings_need_the_same_call_guarded_and_a_compared_parameter():
    # With no guarded call of the same kind elsewhere, nothing says the file wants autograd off.
    unguarded = SHARED_LOOP.replace("        with ctx:\n            prec1", "        if True:\n            prec1")
    assert found(unguarded, "TW132") == []
    # A string the function never compares is not a mode.
    assert found(SHARED_LOOP.replace("is_train = (loop_type == 'train')", "is_train = opt is not None"), "TW132") == []
    # What it cannot see: a no_grad entered by a caller of eval_model in another file.


# --- TW129: a running sum of 0-dim losses indexed [0] ----------------------------------------------

# taoxugit/AttnGAN code/pretrain_DAMSM.py (tests/lint/heldout8, judged bug at lines 85-110, 154-164):
# https://github.com/taoxugit/AttnGAN (commit in the file's header). torch 0.3's losses had one
# element; the sums of their .data are 0-dim tensors now and [0] raises IndexError.
RUNNING_DATA = """\
def train(dataloader, cnn_model, rnn_model, optimizer):
    s_total_loss0 = 0
    for step, data in enumerate(dataloader, 0):
        s_loss0, s_loss1 = sent_loss(cnn_model(data), rnn_model(data))
        s_total_loss0 += s_loss0.data
        (s_loss0 + s_loss1).backward()
        optimizer.step()
        if step % 200 == 0:
            s_cur_loss0 = s_total_loss0[0] / 200
            s_total_loss0 = 0
"""


def test_tw129_a_running_sum_of_loss_data_indexed_at_zero():
    assert found(RUNNING_DATA, "TW129") == [("TW129", 9, "error")]
    script = HERE / "heldout8" / "taoxugit_AttnGAN__code__pretrain_DAMSM.py"
    assert [line for _, line, _ in _on_script(script, "TW129")] == [106, 107, 109, 110, 163, 164]


def test_tw129_silent_on_sums_of_other_values_and_on_arrays():
    # An accuracy count added to the sum: its shape is the caller's to know.
    assert found(RUNNING_DATA.replace("+= s_loss0.data", "+= correct.data"), "TW129") == []
    # A sum that starts as an array has an index 0.
    assert (
        found(RUNNING_DATA.replace("s_total_loss0 = 0\n    for", "s_total_loss0 = np.zeros(2)\n    for"), "TW129") == []
    )
    # .item() numbers: the [0] of a float raises TypeError, but nothing here says it is a tensor sum.
    assert found(RUNNING_DATA.replace("+= s_loss0.data", "+= s_loss0.item()"), "TW129") == []
    assert found(RUNNING_DATA.replace("+= s_loss0.data", "+= len(data) * s_loss0.item()"), "TW129") == []


def test_tw129_a_weighted_sum_of_loss_data_is_a_tensor_too():
    # salesforce/awd-lstm-lm finetune.py evaluate() (tests/lint/worked21, judged in its findings.json):
    # total_loss += len(data) * criterion(output_flat, targets).data, then total_loss[0].
    weighted = RUNNING_DATA.replace("+= s_loss0.data", "+= len(data) * s_loss0.data")
    assert found(weighted, "TW129") == [("TW129", 9, "error")]
    script = HERE / "worked21" / "awd_lstm_lm__finetune.py"
    assert [line for _, line, _ in _on_script(script, "TW129") if line in (120, 165)] == [120, 165]


# --- TW161: a shuffled evaluation loader --------------------------------------------------------

# ozan-oktay/Attention-Gated-Networks train_classifaction.py (tests/lint/heldout8, judged bug at
# lines 131-132, 200-201) and Eric-mingjie/rethinking-network-pruning cifar/l1-norm-pruning/main.py
# (heldout8, judged bug at lines 80 and 97: "harmless to the accuracy but needless").


def test_tw161_warns_where_the_pass_stops_after_a_count():
    ozan = HERE / "heldout8" / "ozan-oktay_Attention-Gated-Networks__train_classifaction.py"
    assert _on_script(ozan, "TW161") == [("TW161", 131, "warning"), ("TW161", 132, "warning")]


def test_tw161_silent_on_full_passes_sampled_batches_training_loaders_and_a_dry_run_break():
    # A full pass: shuffling changes no score (rethinking-network-pruning's test loaders are left alone).
    pruning = HERE / "heldout8" / "Eric-mingjie_rethinking-network-pruning__cifar__l1-norm-pruning__main.py"
    assert _on_script(pruning, "TW161") == []
    built = "val_loader = DataLoader(val_set, batch_size=8, shuffle=True)\n"
    counted = "for i, (x, y) in enumerate(val_loader):\n    m(x)\n    if i == max_it:\n        break\n"
    assert found(built + counted, "TW161") == [("TW161", 1, "warning")]
    assert found(built + counted.replace("i == max_it", "args.dry_run"), "TW161") == []  # no count
    assert found(built.replace("True", "False") + counted, "TW161") == []
    assert found(built + "imgs = next(iter(val_loader))\n" + counted, "TW161") == []  # pix2pix's samples
    assert found(built.replace("val_", "train_") + counted.replace("val_", "train_"), "TW161") == []
    # What it cannot see: the early stop made inside a function the loader is handed to.
    helper = (
        built
        + "def run(loader):\n"
        + "".join("    " + line + "\n" for line in counted.replace("val_loader", "loader").splitlines())
    )
    assert found(helper + "run(val_loader)\n", "TW161") == []


# --- TW162: a model never moved to the device its batches go to -----------------------------------

# mliu2023/SmartHeartPipeline train_autoencoder.py (tests/lint/worked9, judged bug at lines 21-26, 65):
# Autoencoder() comes from models/ResNetAutoencoder.py, which lint does not read: info, naming it.
DEVICE = """\
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = (model(x.to(device)) - y.to(device)).pow(2).mean()
"""


def test_tw162_a_model_left_on_the_cpu_while_its_batches_move():
    assert found(DEVICE, "TW162") == [("TW162", 3, "warning")]
    script = HERE / "worked9" / "mliu2023_SmartHeartPipeline__train_autoencoder.py"
    assert _on_script(script, "TW162") == [("TW162", 65, "info")]


def test_tw162_silent_when_the_model_moves_or_the_device_is_never_a_gpu():
    assert found(DEVICE.replace("nn.Linear(4, 2)", "nn.Linear(4, 2).to(device)"), "TW162") == []
    assert found(DEVICE + "model.cuda()\n", "TW162") == []
    assert found(DEVICE + "to_device(device, model)\n", "TW162") == []  # pytorch-RL's helper
    assert found(DEVICE.replace('"cuda" if torch.cuda.is_available() else "cpu"', '"cpu"'), "TW162") == []
    assert found(DEVICE.replace("torch.nn.Linear(4, 2)", "Net(device=device)"), "TW162") == []
    # What it cannot see: a model moved through another name, reported wrongly.
    assert found(DEVICE + "net = model\nnet.cuda()\n", "TW162") == [("TW162", 3, "warning")]
