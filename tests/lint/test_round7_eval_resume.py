"""Issue 21, round 7 (lint7a): evaluations with autograd on and partial resumes, followed by what
the code does rather than what it is called. Each shape is reduced from a real script (source
named); each warning has a near miss that must stay silent."""

from __future__ import annotations

from .test_round5_shapes import found

# --- TW132: a loop run after model.eval() that nothing trains on ---------------------------------

# weihua916/powerful-gnns main.py (tests/lint/heldout6): pass_data_iteratively() switches the model
# to eval() and forwards every graph in chunks of 64 with autograd on; test() scores the outputs.
GNN = """\
import torch
def pass_data_iteratively(model, graphs, minibatch_size=64):
    model.eval()
    output = []
    for i in range(0, len(graphs), minibatch_size):
        output.append(model(graphs[i:i + minibatch_size]).detach())
    return torch.cat(output, 0)
def test(model, train_graphs, test_graphs):
    output = pass_data_iteratively(model, test_graphs)
    return output.max(1)[1]
model = GraphCNN(5, 2, 64).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(1, 351):
    train(model, optimizer)
    acc = test(model, train_graphs, test_graphs)
"""


def test_a_forward_loop_after_eval_that_nothing_trains_on_warns():
    assert found(GNN, "TW104", "TW132") == [("TW132", 6, "warning")]


def test_the_same_loop_under_the_callers_no_grad_stays_quiet():
    guarded = GNN.replace(
        "    output = pass_data_iteratively(model, test_graphs)\n",
        "    with torch.no_grad():\n        output = pass_data_iteratively(model, test_graphs)\n",
    )
    assert found(guarded, "TW104", "TW132") == []


def test_the_same_loop_under_a_decorated_caller_stays_quiet():
    decorated = GNN.replace("def test(", "@torch.no_grad()\ndef test(")
    assert found(decorated, "TW104", "TW132") == []


def test_the_same_loop_without_eval_says_nothing():
    assert found(GNN.replace("    model.eval()\n", ""), "TW104", "TW132") == []


def test_a_loop_whose_outputs_are_then_trained_on_stays_quiet():
    trained = GNN.replace(
        "    return torch.cat(output, 0)\n",
        "    loss = torch.cat(output, 0).sum()\n    loss.backward()\n    return loss\n",
    )
    assert found(trained, "TW104", "TW132") == []


def test_a_function_nothing_here_calls_is_info():
    alone = GNN.split("def test(")[0]
    assert found(alone, "TW132") == [("TW132", 6, "info")]


# tkipf/pygcn pygcn/train.py (tests/lint/real): train() backpropagates, then switches to eval()
# and runs the full-graph forward again to score the validation nodes, with autograd on.
PYGCN = """\
import torch
import torch.nn.functional as F
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()
    if not args.fastmode:
        model.eval()
        output = model(features, adj)
    loss_val = F.nll_loss(output[idx_val], labels[idx_val])
    print(loss_train.item(), loss_val.item())
for epoch in range(args.epochs):
    train(epoch)
"""


def test_a_forward_after_eval_scored_on_validation_data_warns():
    assert found(PYGCN, "TW104", "TW132") == [("TW132", 13, "warning")]


def test_the_same_forward_scored_on_nothing_named_for_evaluation_stays_quiet():
    plain = PYGCN.replace("output[idx_val], labels[idx_val]", "output[idx], labels[idx]")
    assert found(plain, "TW132") == []


def test_the_same_forward_trained_on_afterwards_stays_quiet():
    trained = PYGCN.replace("    print(loss_train.item(), loss_val.item())\n", "    loss_val.backward()\n")
    assert found(trained, "TW132") == []


# --- TW104: a no_grad set by every caller of the function ----------------------------------------

# A validate() over the validation loader that the training loop calls under torch.no_grad()
# (the shape of ignite's and pytorch/examples' scripts that wrap the call instead of the loop).
VALIDATE = """\
import torch
def validate(model, val_loader):
    model.eval()
    correct = 0
    for x, y in val_loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train(model, optimizer)
    with torch.no_grad():
        acc = validate(model, val_loader)
"""


def test_an_evaluation_loop_whose_every_caller_turns_autograd_off_stays_quiet():
    assert found(VALIDATE, "TW104", "TW132") == []


def test_a_second_call_with_autograd_on_warns():
    twice = VALIDATE + "acc = validate(model, val_loader)\n"
    # TW104 names the loop; TW132 the call this file also makes under no_grad (line 12)
    assert found(twice, "TW104", "TW132") == [("TW104", 5, "warning"), ("TW132", 13, "warning")]


def test_a_caller_of_the_caller_counts():
    nested = (
        VALIDATE.replace(
            "    with torch.no_grad():\n        acc = validate(model, val_loader)\n",
            "    acc = run_validation(model)\n",
        )
        + "def run_validation(model):\n    return validate(model, val_loader)\n"
    )
    assert found(nested, "TW104") == [("TW104", 5, "warning")]
    decorated = nested.replace("def run_validation", "@torch.inference_mode()\ndef run_validation")
    assert found(decorated, "TW104") == []


# --- TW132: the same call made under no_grad a line later ----------------------------------------

# kakaobrain/fast-autoaugment FastAutoAugment/train.py (tests/lint/heldout6): --only-eval switches
# the model to eval() and scores the training set with run_epoch(..., None) outside the no_grad
# block that covers the same call on the validation and test sets.
ONLY_EVAL = """\
import torch
def run_epoch(model, loader, loss_fn, optimizer):
    for data, label in loader:
        preds = model(data)
        loss = loss_fn(preds, label)
        if optimizer:
            loss.backward()
            optimizer.step()
    return loss
def train_and_eval(model, trainloader, validloader, criterion, optimizer, only_eval):
    if only_eval:
        model.eval()
        rs = dict()
        rs['train'] = run_epoch(model, trainloader, criterion, None)
        with torch.no_grad():
            rs['valid'] = run_epoch(model, validloader, criterion, None)
        return rs
    for epoch in range(10):
        model.train()
        run_epoch(model, trainloader, criterion, optimizer)
"""


def test_an_evaluation_in_eval_mode_outside_the_no_grad_its_twin_runs_under_warns():
    assert found(ONLY_EVAL, "TW104", "TW132") == [("TW132", 14, "warning")]


def test_the_same_call_in_train_mode_stays_quiet():
    assert found(ONLY_EVAL.replace("        model.eval()\n", "        model.train()\n"), "TW132") == []


def test_a_twin_whose_forward_runs_under_its_own_no_grad_stays_quiet():
    guarded = "        with torch.no_grad():\n            preds = model(data)\n"
    assert found(ONLY_EVAL.replace("        preds = model(data)\n", guarded), "TW132") == []


# --- TW131: the else of a test that there is nothing to resume from ------------------------------

# ruinmessi/RFBNet train_RFB.py (tests/lint/heldout6): `if args.resume_net == None:` loads the base
# network; its else restores the whole net, and a fresh SGD starts with empty momentum.
RFB = """\
import torch
import torch.optim as optim
parser.add_argument('--resume_net', default=None, help='resume net for retraining')
net = build_net('train', img_dim, num_classes)
if args.resume_net == None:
    net.base.load_state_dict(torch.load(args.basenet))
else:
    state_dict = torch.load(args.resume_net)
    net.load_state_dict(state_dict)
optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
for iteration in range(start_iter, max_iter):
    loss = criterion(net(images), targets)
    loss.backward()
    optimizer.step()
"""


def test_a_resume_in_the_else_of_a_none_test_warns():
    assert found(RFB, "TW131") == [("TW131", 9, "warning")]


def test_the_else_of_a_test_that_there_is_something_to_resume_is_no_resume():
    swapped = RFB.replace("if args.resume_net == None:", "if args.resume_net is not None:")
    assert found(swapped, "TW131") == []


def test_the_body_of_the_none_test_is_no_resume():
    resume_arm = "else:\n    state_dict = torch.load(args.resume_net)\n    net.load_state_dict(state_dict)\n"
    base_only = RFB.replace(resume_arm, "")
    assert found(base_only, "TW131") == []


# --- TW131: a load whose branch sets where the epoch loop starts ---------------------------------

# pmixer/SASRec.pytorch python/main.py (tests/lint/heldout6): --state_dict_path restores the weights
# and parses the epoch to continue from out of the file name; Adam starts afresh.
SASREC = """\
import torch
model = SASRec(usernum, itemnum, args).to(args.device)
epoch_start_idx = 1
if args.state_dict_path is not None:
    try:
        model.load_state_dict(torch.load(args.state_dict_path, map_location=torch.device(args.device)))
        tail = args.state_dict_path[args.state_dict_path.find('epoch=') + 6:]
        epoch_start_idx = int(tail[:tail.find('.')]) + 1
    except:
        print('failed loading state_dicts')
adam_optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
for epoch in range(epoch_start_idx, args.num_epochs + 1):
    loss = bce_criterion(model(u, seq, pos, neg), labels)
    loss.backward()
    adam_optimizer.step()
"""


def test_a_load_that_sets_the_first_epoch_is_a_resume():
    assert found(SASREC, "TW131") == [("TW131", 6, "warning")]


def test_the_same_load_without_a_start_epoch_is_a_fine_tune():
    fresh = SASREC.replace("        epoch_start_idx = int(tail[:tail.find('.')]) + 1\n", "")
    assert found(fresh, "TW131") == []


# --- TW131: an epoch scheduler built afresh while the loop continues from the resumed epoch ------

# davidtvs/PyTorch-ENet main.py (tests/lint/worked7): --resume restores model, optimizer and
# start_epoch through utils.load_checkpoint, but the StepLR is built fresh and counts from 0.
ENET = """\
import torch
from torch.optim import lr_scheduler
optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
lr_updater = lr_scheduler.StepLR(optimizer, args.lr_decay_epochs, args.lr_decay)
if args.resume:
    model, optimizer, start_epoch, best_miou = utils.load_checkpoint(model, optimizer, args.save_dir, args.name)
else:
    start_epoch = 0
for epoch in range(start_epoch, args.epochs):
    epoch_loss = train.run_epoch(args.print_step)
    lr_updater.step()
"""


def test_a_fresh_epoch_scheduler_under_a_continued_loop_warns_at_its_constructor():
    assert found(ENET, "TW131") == [("TW131", 4, "warning")]


def test_a_scheduler_told_where_to_start_stays_quiet():
    offset = ENET.replace("args.lr_decay)", "args.lr_decay, last_epoch=start_epoch - 1)")
    assert found(offset, "TW131") == []
    stepped = ENET.replace("lr_updater.step()", "lr_updater.step(epoch)")
    assert found(stepped, "TW131") == []
    forwarded = ENET.replace(
        "for epoch in range(start_epoch",
        "for _ in range(start_epoch):\n    lr_updater.step()\nfor epoch in range(start_epoch",
    )
    assert found(forwarded, "TW131") == []


# eriklindernoren/PyTorch-GAN cyclegan.py (tests/lint/real): the LambdaLR's rule is given the epoch
# the run starts from, so its schedule is right; the Adam optimizers are not restored.
CYCLEGAN = """\
import torch
if opt.epoch != 0:
    G_AB.load_state_dict(torch.load("saved_models/G_AB_%d.pth" % opt.epoch))
optimizer_G = torch.optim.Adam(G_AB.parameters(), lr=opt.lr)
lr_scheduler_G = torch.optim.lr_scheduler.LambdaLR(optimizer_G, lr_lambda=LambdaLR(opt.n_epochs, opt.epoch, 100).step)
for epoch in range(opt.epoch, opt.n_epochs):
    for batch in dataloader:
        loss_G = criterion(G_AB(batch), batch)
        loss_G.backward()
        optimizer_G.step()
    lr_scheduler_G.step()
"""


def test_a_load_run_when_the_start_epoch_says_so_is_a_resume_and_an_offset_schedule_is_right():
    assert found(CYCLEGAN, "TW131") == [("TW131", 3, "warning")]


def test_the_same_load_under_a_flag_the_loop_does_not_count_from_is_a_fine_tune():
    flagged = CYCLEGAN.replace("if opt.epoch != 0:", "if opt.pretrained:")
    assert found(flagged, "TW131") == []


# chnsh/DCRNN_PyTorch dcrnn_supervisor.py (tests/lint/worked7): __init__ runs load_model() when
# `epoch` > 0 and _train counts from self._epoch_num, with a fresh Adam and MultiStepLR.
DCRNN = """\
import torch
class DCRNNSupervisor:
    def __init__(self, **kwargs):
        self._epoch_num = kwargs.get('epoch', 0)
        if self._epoch_num > 0:
            self.load_model()
    def load_model(self):
        checkpoint = torch.load('models/epo%d.tar' % self._epoch_num, map_location='cpu')
        self.dcrnn_model.load_state_dict(checkpoint['model_state_dict'])
    def _train(self, base_lr, steps, epochs):
        optimizer = torch.optim.Adam(self.dcrnn_model.parameters(), lr=base_lr)
        lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=steps, gamma=0.1)
        for epoch_num in range(self._epoch_num, epochs):
            for x, y in self._data['train_loader']:
                loss = self._compute_loss(y, self.dcrnn_model(x))
                loss.backward()
                optimizer.step()
            lr_scheduler.step()
"""


def test_a_load_guarded_by_the_counter_the_training_loop_starts_from_is_a_resume():
    assert found(DCRNN, "TW131") == [("TW131", 9, "warning"), ("TW131", 12, "warning")]


def test_a_loop_that_starts_at_zero_ties_nothing_to_the_load():
    assert found(DCRNN.replace("range(self._epoch_num, epochs)", "range(epochs)"), "TW131") == []


# --- TW131: a load of the very files the training saves -------------------------------------------

# sweetice/Deep-reinforcement-learning-with-pytorch Char05 DDPG/DDPG.py (tests/lint/worked3):
# --load reads back actor.pth and critic.pth, which agent.save() writes while it trains; the two
# Adam optimizers are never saved.
DDPG = """\
import torch
import torch.optim as optim
class DDPG(object):
    def __init__(self, state_dim, action_dim):
        self.actor = Actor(state_dim, action_dim).to(device)
        self.actor_optimizer = optim.Adam(self.actor.parameters(), lr=1e-4)
    def update(self):
        actor_loss = -self.critic(state, self.actor(state)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
    def save(self):
        torch.save(self.actor.state_dict(), directory + 'actor.pth')
    def load(self):
        self.actor.load_state_dict(torch.load(directory + 'actor.pth'))
def main():
    agent = DDPG(state_dim, action_dim)
    if args.load: agent.load()
    for i in range(args.max_episode):
        agent.update()
        if i % args.log_interval == 0:
            agent.save()
"""


def test_a_load_of_what_the_training_saves_followed_by_training_is_a_resume():
    assert found(DDPG, "TW131") == [("TW131", 15, "warning")]


def test_the_same_load_followed_by_no_training_stays_quiet():
    tested = DDPG.replace("        agent.update()\n", "        agent.act(state)\n")
    assert found(tested, "TW131") == []


def test_a_load_of_a_file_the_script_never_writes_stays_quiet():
    other = DDPG.replace("torch.load(directory + 'actor.pth')", "torch.load(args.pretrained_actor)")
    assert found(other, "TW131") == []
