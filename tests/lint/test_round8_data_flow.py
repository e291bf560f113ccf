"""Issue 21, round 8 (lint8b): recall by data flow for kinds that recurred across rounds: resume
bookkeeping (TW150, TW151), an evaluation reached through a helper of the file (TW132), a
DistributedSampler reached through a tuple and a returned loader (TW149). Each shape is reduced
from a real script (source named) and has a near miss that stays silent."""

from __future__ import annotations

from .test_round5_shapes import found

# --- TW150: a best score that starts again after the resume ---------------------------------------

# yanx27/Pointnet_Pointnet2_pytorch train_semseg.py (tests/lint/worked8, judged bug at line 163):
# https://github.com/yanx27/Pointnet_Pointnet2_pytorch/blob/eb64fe0b4c24055559cea26299cb485dcb43d8dd/train_semseg.py
# the resume reads the epoch back and continues from it; best_iou starts at 0 again and decides
# which model is written to best_model.pth.
POINTNET = """\
import torch
def main(args):
    try:
        checkpoint = torch.load(str(experiment_dir) + '/checkpoints/best_model.pth')
        start_epoch = checkpoint['epoch']
        classifier.load_state_dict(checkpoint['model_state_dict'])
    except:
        start_epoch = 0
    optimizer = torch.optim.Adam(classifier.parameters(), lr=args.learning_rate)
    best_iou = 0
    for epoch in range(start_epoch, args.epoch):
        for points, target in trainDataLoader:
            optimizer.zero_grad()
            loss = criterion(classifier(points), target)
            loss.backward()
            optimizer.step()
        mIoU = evaluate(classifier)
        if mIoU >= best_iou:
            best_iou = mIoU
            state = {
                'epoch': epoch,
                'model_state_dict': classifier.state_dict(),
            }
            torch.save(state, str(checkpoints_dir) + '/best_model.pth')
"""


def test_a_best_score_set_to_zero_after_a_resume_that_continues_the_epochs_warns():
    assert found(POINTNET, "TW150") == [("TW150", 10, "warning")]


def test_a_best_score_restored_from_the_checkpoint_or_a_fine_tune_is_silent():
    restore = "    if 'best_iou' in checkpoint:\n        best_iou = checkpoint['best_iou']\n"
    restored = POINTNET.replace("    best_iou = 0\n", "    best_iou = 0\n" + restore)
    assert found(restored, "TW150") == []
    # A fine-tune: the weights come back, the epochs start at 0 and nothing else is read.
    fine_tune = POINTNET.replace("start_epoch = checkpoint['epoch']", "start_epoch = 0")
    assert found(fine_tune, "TW150") == []


def test_a_best_that_only_reports_is_info():
    reported = POINTNET.replace("            torch.save(state, str(checkpoints_dir) + '/best_model.pth')\n", "")
    reported = reported.replace("            state = {\n                'epoch': epoch,\n"
                                "                'model_state_dict': classifier.state_dict(),\n            }\n", "")
    assert found(reported, "TW150") == [("TW150", 10, "info")]


# ctallec/world-models trainvae.py (tests/lint/heldout7, judged bug at line 146):
# https://github.com/ctallec/world-models/blob/d6abd9ce97409734a766eb67ccf0d1967ba9bf0c/trainvae.py
# the reload restores the weights, the optimizer and the scheduler, then `cur_best = None`.
WORLD_MODELS = """\
import torch
if not args.noreload and exists(reload_file):
    state = torch.load(reload_file)
    model.load_state_dict(state['state_dict'])
    optimizer.load_state_dict(state['optimizer'])
cur_best = None
for epoch in range(1, args.epochs + 1):
    train(epoch)
    test_loss = test()
    is_best = not cur_best or test_loss < cur_best
    if is_best:
        cur_best = test_loss
    save_checkpoint({'state_dict': model.state_dict(), 'precision': test_loss}, is_best, filename, best_filename)
"""


def test_a_reload_of_the_optimizer_with_the_weights_is_a_resume_and_its_best_restarts():
    assert found(WORLD_MODELS, "TW150") == [("TW150", 6, "warning")]


def test_an_optimizer_state_read_alone_from_a_pretrained_base_is_a_fine_tune():
    # karpathy/nanochat scripts/chat_sft.py (tests/lint/real): the optimizer's momentum comes from
    # the base model's checkpoint; the SFT run's best validation loss rightly starts afresh.
    base = WORLD_MODELS.replace("    model.load_state_dict(state['state_dict'])\n", "").replace(
        "optimizer.load_state_dict(state['optimizer'])", "optimizer.load_state_dict(load_optimizer_state('base'))"
    )
    assert found(base, "TW150") == []


# --- TW151: the saved epoch is trained again ------------------------------------------------------

# jeffreyyihuang/two-stream-action-recognition spatial_cnn.py (tests/lint/worked7, judged bug at 125):
# https://github.com/jeffreyyihuang/two-stream-action-recognition/blob/8458458b4abe97e36c4987148a7dfcb24273cafe/spatial_cnn.py
TWO_STREAM = """\
import torch
class Spatial_CNN():
    def resume_and_evaluate(self):
        if self.resume:
            checkpoint = torch.load(self.resume)
            self.start_epoch = checkpoint['epoch']
            self.model.load_state_dict(checkpoint['state_dict'])
            self.optimizer.load_state_dict(checkpoint['optimizer'])

    def train_1epoch(self):
        for data, label in self.train_loader:
            loss = self.criterion(self.model(data), label)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def run(self):
        self.resume_and_evaluate()
        for self.epoch in range(self.start_epoch, self.nb_epochs):
            self.train_1epoch()
            save_checkpoint({
                'epoch': self.epoch,
                'state_dict': self.model.state_dict(),
                'optimizer': self.optimizer.state_dict(),
            }, is_best, 'record/spatial/checkpoint.pth.tar', 'record/spatial/model_best.pth.tar')
"""


def test_an_epoch_saved_after_its_training_and_counted_from_again_warns():
    assert found(TWO_STREAM, "TW151") == [("TW151", 22, "warning")]


def test_the_next_epoch_saved_or_a_save_before_training_is_silent():
    # pytorch/examples imagenet/main.py saves 'epoch': epoch + 1.
    assert found(TWO_STREAM.replace("'epoch': self.epoch,", "'epoch': self.epoch + 1,"), "TW151") == []
    # A checkpoint written at the top of the epoch, before it is trained, names the epoch to run.
    body = "            self.train_1epoch()\n"
    moved = TWO_STREAM.replace(body, "").replace("            }, is_best, 'record/spatial/checkpoint.pth.tar', "
                                                  "'record/spatial/model_best.pth.tar')\n",
                                                  "            }, is_best, 'record/spatial/checkpoint.pth.tar', "
                                                  "'record/spatial/model_best.pth.tar')\n" + body)
    assert found(moved, "TW151") == []


# kuangliu/pytorch-cifar main.py (tests/lint/real): the save sits in test(epoch), called after train(epoch).
# https://github.com/kuangliu/pytorch-cifar/blob/49b7aa97b0c12fe0d4054e670403a16b6b834ddd/main.py
CIFAR = """\
import torch
if args.resume:
    checkpoint = torch.load('./checkpoint/ckpt.pth')
    net.load_state_dict(checkpoint['net'])
    start_epoch = checkpoint['epoch']
optimizer = torch.optim.SGD(net.parameters(), lr=args.lr)
def train(epoch):
    for inputs, targets in trainloader:
        optimizer.zero_grad()
        criterion(net(inputs), targets).backward()
        optimizer.step()
def test(epoch):
    state = {'net': net.state_dict(), 'epoch': epoch}
    torch.save(state, './checkpoint/ckpt.pth')
for epoch in range(start_epoch, start_epoch + 200):
    train(epoch)
    test(epoch)
"""


def test_the_save_in_a_function_the_loop_calls_with_its_epoch_is_followed():
    assert found(CIFAR, "TW151") == [("TW151", 13, "warning")]
    next_epoch = CIFAR.replace("start_epoch = checkpoint['epoch']", "start_epoch = checkpoint['epoch'] + 1")
    assert found(next_epoch, "TW151") == []


# --- TW132: the model run through a helper of the file after eval() -------------------------------

# chrischute/real-nvp train.py (tests/lint/heldout7, judged bug at line 132):
# https://github.com/chrischute/real-nvp/blob/df51ad570baf681e77df4d2265c0f1eb1b5b646c/train.py
REAL_NVP = """\
import torch
def sample(net, batch_size, device):
    z = torch.randn((batch_size, 3, 32, 32), dtype=torch.float32, device=device)
    x, _ = net(z, reverse=True)
    return torch.sigmoid(x)

def test(epoch, net, testloader, device, loss_fn, num_samples):
    net.eval()
    with torch.no_grad():
        for x, _ in testloader:
            z, sldj = net(x, reverse=False)
    images = sample(net, num_samples, device)
    save_image(images, 'samples/epoch_{}.png'.format(epoch))
"""


def test_a_helper_running_the_model_called_after_eval_outside_no_grad_warns():
    assert found(REAL_NVP, "TW132") == [("TW132", 12, "warning")]


def test_the_same_helper_under_no_grad_or_trained_on_is_silent():
    guarded = REAL_NVP.replace("    images = sample(net, num_samples, device)\n",
                               "    with torch.no_grad():\n        images = sample(net, num_samples, device)\n")
    assert found(guarded, "TW132") == []
    trained = REAL_NVP.replace("    save_image(images, 'samples/epoch_{}.png'.format(epoch))\n",
                               "    loss_fn(images).backward()\n")
    assert found(trained, "TW132") == []


# Zeleni9/pytorch-wgan models/wgan_gradient_penalty.py (tests/lint/worked8, judged bug at line 293):
# https://github.com/Zeleni9/pytorch-wgan/blob/7f5b52d638746c8b2abdd65dc26319f1de3be8cf/models/wgan_gradient_penalty.py
# `self.G` is the generator an optimizer here trains, not a class.
WGAN = """\
import torch
class WGAN_GP(object):
    def __init__(self):
        self.G = Generator()
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), lr=1e-4)

    def evaluate(self, test_loader):
        self.G.eval()
        samples = self.G(torch.randn(64, 100, 1, 1))
        save_image(samples, 'dgan_model_image.png')
"""


def test_a_capitalised_model_an_optimizer_trains_is_read_as_a_model():
    assert found(WGAN, "TW132") == [("TW132", 9, "info")]
    assert found(WGAN.replace("self.G.parameters()", "params"), "TW132") == []


# --- TW149: a DistributedSampler in a tuple, its loader returned to the caller --------------------

# NVIDIA/flowtron train.py (tests/lint/worked8, judged bug at line 78):
# https://github.com/NVIDIA/flowtron/blob/d149bc466b8325026aeb68aa2fef24337e7463b2/train.py
FLOWTRON = """\
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
def prepare_dataloaders(trainset, n_gpus, batch_size):
    train_sampler, shuffle = None, True
    if n_gpus > 1:
        train_sampler, shuffle = DistributedSampler(trainset), False
    train_loader = DataLoader(trainset, shuffle=shuffle, sampler=train_sampler, batch_size=batch_size)
    return train_loader, trainset

def train(n_gpus, epochs):
    train_loader, valset = prepare_dataloaders(trainset, n_gpus, 4)
    for epoch in range(epochs):
        for batch in train_loader:
            step(batch)
"""


def test_a_sampler_given_in_a_tuple_whose_loader_a_caller_walks_every_epoch_warns():
    assert found(FLOWTRON, "TW149") == [("TW149", 6, "warning")]


def test_the_same_loader_with_set_epoch_is_silent():
    fixed = FLOWTRON.replace("        for batch in train_loader:", "        train_loader.sampler.set_epoch(epoch)\n"
                                                                    "        for batch in train_loader:")
    assert found(fixed, "TW149") == []


# --- TW152: a milestone index that starts again at 0 ---------------------------------------------

# gzerveas/mvts_transformer src/main.py (tests/lint/worked8, judged bug at line 174):
# https://github.com/gzerveas/mvts_transformer/blob/3f2e378bc77d02e82a44671f20cf15bc7761671a/src/main.py
# the loader hands back the model, the optimizer and the epoch; the index into config['lr_step']
# starts at 0 and moves only on an exact match, so a run resumed past the first milestone never decays.
MVTS = """\
def main(config, args, model, optimizer):
    start_epoch = 0
    lr_step = 0
    lr = config['lr']
    if args.load_model:
        model, optimizer, start_epoch = utils.load_model(model, config['load_model'], optimizer)
    for epoch in tqdm(range(start_epoch + 1, config["epochs"] + 1)):
        train_epoch(model, optimizer)
        if epoch == config['lr_step'][lr_step]:
            lr = lr * config['lr_factor'][lr_step]
            if lr_step < len(config['lr_step']) - 1:
                lr_step += 1
"""


def test_a_milestone_index_at_zero_with_a_loop_continuing_from_the_loaded_epoch_warns():
    assert found(MVTS, "TW152") == [("TW152", 3, "warning")]


def test_the_same_index_without_a_resume_or_caught_up_is_silent():
    loaded = "model, optimizer, start_epoch = utils.load_model(model, config['load_model'], optimizer)"
    fresh = MVTS.replace(loaded, "utils.load_weights(model, config['load_model'])")
    assert found(fresh, "TW152") == []
    passed = "    lr_step = sum(s <= start_epoch for s in config['lr_step'])\n"
    caught_up = MVTS.replace("    for epoch in", passed + "    for epoch in")
    assert found(caught_up, "TW152") == []


# --- TW153: the test split selects the model -------------------------------------------------------

# thuml/Anomaly-Transformer solver.py (tests/lint/worked8, judged bug at line 199):
# https://github.com/thuml/Anomaly-Transformer/blob/b0ee470c8012bff857fb600462aec6209c4a18d9/solver.py
ANOMALY = """\
class Solver(object):
    def __init__(self, config):
        self.vali_loader = get_loader_segment(self.data_path, mode='val')
        self.test_loader = get_loader_segment(self.data_path, mode='test')

    def vali(self, vali_loader):
        return score(self.model, vali_loader)

    def train(self):
        for epoch in range(self.num_epochs):
            for i, (input_data, labels) in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                loss1.backward()
                self.optimizer.step()
            vali_loss1, vali_loss2 = self.vali(self.test_loader)
            early_stopping(vali_loss1, vali_loss2, self.model, path)
"""


def test_the_test_loader_handed_to_the_validation_that_early_stops_warns():
    assert found(ANOMALY, "TW153") == [("TW153", 15, "warning")]


def test_the_validation_loader_or_a_test_score_that_only_reports_is_silent():
    assert found(ANOMALY.replace("self.vali(self.test_loader)", "self.vali(self.vali_loader)"), "TW153") == []
    reported = ANOMALY.replace("early_stopping(vali_loss1, vali_loss2, self.model, path)", "print(vali_loss1)")
    assert found(reported, "TW153") == []
    # No validation split in the file: scoring the test split each epoch cannot be told from a choice.
    assert found(ANOMALY.replace("        self.vali_loader = get_loader_segment(self.data_path, mode='val')\n", ""),
                 "TW153") == []


# rosinality/vq-vae-2-pytorch train_vqvae.py (tests/lint/heldout7, judged bug at line 102):
# https://github.com/rosinality/vq-vae-2-pytorch/blob/ef5f67c46f93624163776caec9e0d95063910eca/train_vqvae.py
# the sampler comes from a helper of another file told to distribute: info, what it builds is unseen.
VQVAE = """\
from torch.utils.data import DataLoader
import distributed as dist
def train(epoch, loader, model, optimizer):
    for i, (img, label) in enumerate(loader):
        step(model, img)
def main(args):
    sampler = dist.data_sampler(dataset, shuffle=True, distributed=args.distributed)
    loader = DataLoader(dataset, batch_size=128 // args.n_gpu, sampler=sampler, num_workers=2)
    for i in range(args.epoch):
        train(i, loader, model, optimizer)
"""


def test_a_sampler_helper_of_another_file_told_to_distribute_is_info():
    assert found(VQVAE, "TW149") == [("TW149", 7, "info")]
    assert found(VQVAE.replace("distributed=args.distributed", "distributed=False"), "TW149") == []


# --- TW154: state every rank holds, changed on rank 0 only ----------------------------------------

# hustvl/YOLOP tools/train.py (tests/lint/worked8, judged bug at line 150):
# https://github.com/hustvl/YOLOP/blob/8d8f68df318c71f01d6f813c024df646c7d1978f/tools/train.py
YOLOP = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(rank, cfg, model, optimizer):
    if rank in [-1, 0]:
        if cfg.AUTO_RESUME:
            checkpoint = torch.load(checkpoint_file)
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
        if cfg.TRAIN.SEG_ONLY:
            for k, v in model.named_parameters():
                v.requires_grad = k not in frozen
    if rank != -1:
        model = DDP(model, device_ids=[rank])
"""


def test_an_optimizer_restored_and_layers_frozen_on_rank_zero_only_warn_at_the_rank_test():
    assert found(YOLOP, "TW154") == [("TW154", 4, "warning")]


def test_logging_or_weights_on_rank_zero_a_broadcast_or_no_ddp_are_silent():
    # Weights loaded on rank 0 before the wrap reach the others: DDP broadcasts them at construction.
    weights_only = YOLOP.replace("            optimizer.load_state_dict(checkpoint['optimizer'])\n", "")
    weights_only = weights_only.replace("v.requires_grad = k not in frozen", "print(k)")
    assert found(weights_only, "TW154") == []
    assert found(YOLOP + "torch.distributed.broadcast_object_list([optimizer.state_dict()])\n", "TW154") == []
    single = YOLOP.replace("from torch.nn.parallel import DistributedDataParallel as DDP\n", "")
    assert found(single.replace("DDP(", "wrap("), "TW154") == []


# --- TW155 (info): an evaluation sharded across ranks, never gathered ------------------------------

# Tramac/awesome-semantic-segmentation-pytorch scripts/train.py (tests/lint/heldout6, judged bug at 146):
# https://github.com/Tramac/awesome-semantic-segmentation-pytorch/blob/
#     d37d2a17221d2681ad454958cf06a1065e9b1f7f/scripts/train.py
SEGMENTATION = """\
class Trainer(object):
    def __init__(self, args):
        val_sampler = make_data_sampler(val_dataset, False, args.distributed)
        val_batch_sampler = make_batch_data_sampler(val_sampler, args.batch_size)
        self.val_loader = data.DataLoader(dataset=val_dataset, batch_sampler=val_batch_sampler)

    def validation(self):
        for i, (image, target, filename) in enumerate(self.val_loader):
            with torch.no_grad():
                outputs = model(image)
            self.metric.update(outputs[0], target)
            pixAcc, mIoU = self.metric.get()
        new_pred = (pixAcc + mIoU) / 2
        synchronize()
"""


def test_a_validation_sampler_built_for_distributed_runs_and_never_gathered_is_info():
    assert found(SEGMENTATION, "TW155") == [("TW155", 3, "info")]


def test_a_validation_that_sums_the_ranks_counts_or_is_not_distributed_is_silent():
    # zhanghang1989/PyTorch-Encoding experiments/recognition/train_dist.py (tests/lint/heldout4):
    # torch_dist_sum(args.gpu, top1.sum, top1.count, ...) after the loop.
    summed = SEGMENTATION.replace("synchronize()", "sums = torch_dist_sum(args.gpu, self.metric.sum)")
    assert found(summed, "TW155") == []
    assert found(SEGMENTATION.replace("args.distributed", "False"), "TW155") == []
