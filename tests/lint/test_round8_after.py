"""Issue 21, after round 8's held-out measurement (its figures stay as measured: 23 of 42 found,
40 of 41 warnings and errors right): the one wrong warning, reduced from its script with its
source; lint now reads the shape it missed, and still warns where it is not there."""

from __future__ import annotations

from .test_round5_shapes import found

# princeton-vl/RAFT train.py (tests/lint/heldout8): --restore_ckpt ("restore checkpoint") loads the
# previous stage's weights with strict=False to start the next stage of its curriculum with a fresh
# AdamW, OneCycleLR and scaler; judged not a bug before lint ran.
RAFT = """\
import torch
def train(args):
    model = nn.DataParallel(RAFT(args), device_ids=args.gpus)
    if args.restore_ckpt is not None:
        model.load_state_dict(torch.load(args.restore_ckpt), strict={strict})
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for i_batch, data_blob in enumerate(train_loader):
        optimizer.zero_grad()
        loss = sequence_loss(model(*data_blob))
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), PATH)
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--restore_ckpt', help="restore checkpoint")
    args = parser.parse_args()
    train(args)
"""


def test_weights_loaded_with_strict_false_are_a_warm_start_not_a_resume():
    assert found(RAFT.format(strict="False"), "TW131") == []


def test_the_same_restore_with_every_key_required_is_still_a_resume():
    assert found(RAFT.format(strict="True"), "TW131") == [("TW131", 5, "warning")]
