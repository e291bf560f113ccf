"""Issue 21, round 7: rules for bug kinds that recurred among the misses of the measured halves,
each with a shape reduced from a real script (source named) and a near miss that stays silent."""

from __future__ import annotations

import pytest

from .test_round5_shapes import found

# --- TW147: an evaluation loader that drops its last partial batch -------------------------------

# Spijkervet/SimCLR linear_evaluation.py (tests/lint/heldout5, judged bug at line 165 there): the
# test loader is given the training loader's batch size and drop_last=True.
SIMCLR = """\
import torch
import torchvision
test_dataset = torchvision.datasets.CIFAR10(args.dataset_dir, train=False, download=True)
train_loader = torch.utils.data.DataLoader(
    train_dataset,
    batch_size=args.logistic_batch_size,
    shuffle=True,
    drop_last=True,
)
test_loader = torch.utils.data.DataLoader(
    test_dataset,
    batch_size=args.logistic_batch_size,
    shuffle=False,
    drop_last=True,
)
"""


def test_a_test_loader_with_the_training_batch_size_that_drops_its_last_batch_warns():
    assert found(SIMCLR, "TW147") == [("TW147", 14, "warning")]


def test_the_same_test_loader_keeping_its_last_batch_or_sampled_endlessly_is_silent():
    kept = SIMCLR.replace("    shuffle=False,\n    drop_last=True,", "    shuffle=False,\n    drop_last=False,")
    assert found(kept, "TW147") == []
    # lucidrains/x-transformers train_enwik8.py: a validation loss on batches drawn from cycle().
    sampled = "val_loader = cycle(DataLoader(val_dataset, batch_size=4, drop_last=True))\n"
    assert found("from torch.utils.data import DataLoader\n" + sampled, "TW147") == []


# CSAILVision/semantic-segmentation-pytorch eval.py (tests/lint/heldout21b): batch size from a
# config file of another repository file (its default is 1): lint cannot say that a batch is lost.
CSAIL = """\
import torch
loader_val = torch.utils.data.DataLoader(
    dataset_val,
    batch_size=cfg.VAL.batch_size,
    shuffle=False,
    drop_last=True)
"""


def test_a_batch_size_read_from_a_config_is_info_and_a_batch_of_one_is_silent():
    assert found(CSAIL, "TW147") == [("TW147", 6, "info")]
    assert found(CSAIL.replace("cfg.VAL.batch_size", "1"), "TW147") == []


# zhouhaoyi/Informer2020 exp/exp_informer.py (tests/lint/worked6, judged bug at line 80 there):
# the split decides drop_last in a branch; the test split gets the training batch size.
INFORMER = """\
from torch.utils.data import DataLoader
def _get_data(self, flag):
    args = self.args
    if flag == 'test':
        shuffle_flag = False; drop_last = True; batch_size = args.batch_size
    elif flag == 'pred':
        shuffle_flag = False; drop_last = False; batch_size = 1
    else:
        shuffle_flag = True; drop_last = True; batch_size = args.batch_size
    data_set = Data(root_path=args.root_path, flag=flag)
    data_loader = DataLoader(data_set, batch_size=batch_size, shuffle=shuffle_flag, drop_last=drop_last)
    return data_set, data_loader
"""


def test_drop_last_set_true_in_the_test_split_branch_warns_there():
    assert found(INFORMER, "TW147") == [("TW147", 5, "warning")]
    assert (
        found(
            INFORMER.replace(
                "drop_last = True; batch_size = args.batch_size\n    elif",
                "drop_last = False; batch_size = args.batch_size\n    elif",
            ),
            "TW147",
        )
        == []
    )


# --- TW148: the model's attribute read through its DataParallel wrapper ---------------------------

# Tianxiaomo/pytorch-YOLOv4 evaluate_on_coco.py (tests/lint/worked4, judged bug at lines 177 and
# 190): the model is wrapped when there are two GPUs and test() reads Darknet's width and height.
YOLO = """\
import torch
def test(model, annotations, cfg):
    images = annotations["images"]
    sized = img.resize((model.width, model.height))
    model.eval()
if __name__ == "__main__":
    model = Darknet(cfg.model_config)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    model.to(device=device)
    test(model=model, annotations=annotations, cfg=cfg)
"""


def test_a_model_attribute_read_through_dataparallel_in_the_function_it_is_handed_to_is_an_error():
    assert found(YOLO, "TW148") == [("TW148", 4, "error")]


def test_reading_it_through_module_or_after_unwrapping_is_silent():
    assert (
        found(YOLO.replace("(model.width, model.height)", "(model.module.width, model.module.height)"), "TW148") == []
    )
    unwrapped = YOLO.replace(
        '    images = annotations["images"]\n', '    model = model.module if hasattr(model, "module") else model\n'
    )
    assert found(unwrapped, "TW148") == []


# zhanghang1989/PyTorch-Encoding experiments/segmentation/train.py (tests/lint/heldout4, judged bug
# at lines 217 and 258): wrapped only under `if args.cuda:`, `.module` read unguarded elsewhere.
ENCODING = """\
import torch
from encoding.parallel import DataParallelModel
class Trainer():
    def __init__(self, args):
        self.args = args
        self.model = get_segmentation_model(args.model)
        if args.cuda:
            self.model = DataParallelModel(self.model).cuda()
        if args.resume is not None:
            checkpoint = torch.load(args.resume)
            if args.cuda:
                self.model.module.load_state_dict(checkpoint['state_dict'])
            else:
                self.model.load_state_dict(checkpoint['state_dict'])
    def training(self, epoch):
        save_checkpoint({'state_dict': self.model.module.state_dict()}, self.args)
"""


def test_module_read_where_the_wrapper_was_made_on_one_branch_only_is_an_error():
    assert found(ENCODING, "TW148") == [("TW148", 16, "error")]


def test_module_read_under_the_same_condition_is_silent():
    guarded = ENCODING.replace(
        "        save_checkpoint({'state_dict': self.model.module.state_dict()}, self.args)",
        "        if self.args.cuda:\n"
        "            save_checkpoint({'state_dict': self.model.module.state_dict()}, self.args)",
    )
    assert found(guarded, "TW148") == []


# --- TW149: a DistributedSampler never told the epoch ---------------------------------------------

# NVIDIA/tacotron2 train.py (tests/lint/real; NVIDIA/tacotron2 issue 241): the sampler is built
# for the distributed run and the epoch loop never calls set_epoch.
TACOTRON = """\
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
def prepare_dataloaders(hparams):
    trainset = TextMelLoader(hparams.training_files, hparams)
    if hparams.distributed_run:
        train_sampler = DistributedSampler(trainset)
        shuffle = False
    else:
        train_sampler = None
        shuffle = True
    train_loader = DataLoader(trainset, num_workers=1, shuffle=shuffle, sampler=train_sampler,
                              batch_size=hparams.batch_size, drop_last=True)
    return train_loader
def train(hparams):
    train_loader = prepare_dataloaders(hparams)
    for epoch in range(hparams.epochs):
        for i, batch in enumerate(train_loader):
            step(batch)
"""


def test_a_sampler_whose_loader_is_walked_every_epoch_without_set_epoch_warns():
    assert found(TACOTRON, "TW149") == [("TW149", 6, "warning")]


@pytest.mark.parametrize(
    "change",
    [
        ("            step(batch)\n", "            step(batch)\n        sampler.set_epoch(epoch)\n"),
        ("DistributedSampler(trainset)", "DistributedSampler(trainset, shuffle=False)"),
        ("DistributedSampler(trainset)", "DistributedSampler(trainset)\n        trainer.register(train_sampler)"),
        (
            "    for epoch in range(hparams.epochs):\n        for i, batch in enumerate(train_loader):",
            "    for i, batch in enumerate(train_loader):\n        if i > 10:",
        ),
    ],
)
def test_set_epoch_no_shuffle_a_sampler_handed_to_another_file_or_one_pass_is_silent(change):
    assert found(TACOTRON.replace(*change), "TW149") == []


# huggingface/accelerate benchmarks/fp8/torchao/fp8_utils.py (an earlier corpus' repository, at
# HEAD): FP8 kernels want every batch of 16 rows, so the evaluation loader drops its short batch.
FP8 = """\
from torch.utils.data import DataLoader
def get_dataloaders(tokenized_datasets, collate_fn, batch_size=16):
    # Specific for FP8: pad to a multiple of 16
    train_dataloader = DataLoader(tokenized_datasets["train"], shuffle=True, batch_size=batch_size, drop_last=True)
    eval_dataloader = DataLoader(tokenized_datasets["validation"], shuffle=False, batch_size=16, drop_last=True)
    return train_dataloader, eval_dataloader
"""


def test_a_file_that_needs_fixed_batch_shapes_gets_info():
    assert found(FP8, "TW147") == [("TW147", 5, "info")]
    assert found(FP8.replace("FP8", "speed"), "TW147") == [("TW147", 5, "warning")]
