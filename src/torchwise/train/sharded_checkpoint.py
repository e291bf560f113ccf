"""FSDP2 checkpoints: the usual folder (checkpoints/last, best) plus the optimizer's shards in DCP files.

What a sharded checkpoint folder holds::

    model.safetensors          the consolidated weights (rank 0 gathers them): load_model and export read it
    state.safetensors          loop counters, scheduler, early stopping, RNG (as for one process)
    .metadata, __<rank>_0.distcp   torch.distributed.checkpoint files: the optimizer state, by shard
    meta.json                  written last, by rank 0, after every rank's shard is on disk

Every rank writes its shard into rank 0's staging folder (so on several nodes the run folder must
be on a shared file system); rank 0 publishes the folder with the checkpoints package's atomic swap
only after `dcp.save` returned on all ranks. A resume reads the optimizer through DCP, which
reshards it for a different number of processes (one process without torchrun included); the
checkpoint of a plain process (no DCP files) gives every rank its whole optimizer state to shard.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torchwise.checkpoints.checkpoint import Checkpoint
    from torchwise.train.context import LoopContext


def save_sharded(path: Path, ctx: LoopContext, *, training_state: dict[str, Any], meta: dict[str, Any]) -> None:
    """Collective: every rank calls it at the same step."""
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_optimizer_state_dict

    from torchwise.checkpoints.checkpoint import save_checkpoint
    from torchwise.train.distributed import collective

    assert ctx.dist is not None
    with collective(ctx.dist, "gathering the checkpoint"):
        full = get_model_state_dict(ctx.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        optimizer = get_optimizer_state_dict(ctx.model, ctx.optimizer)

    def write_shards(folder: Path | None) -> None:
        shared = [str(folder) if folder is not None else None]
        with collective(ctx.dist, "writing the checkpoint shards"):
            dist.broadcast_object_list(shared, src=0)  # rank 0's staging folder
            dcp.save({"optimizer": optimizer}, checkpoint_id=shared[0])
            dist.barrier()  # every shard and the .metadata are on disk before meta.json

    if ctx.dist.is_main:
        save_checkpoint(path, model_state=full, training_state=training_state,
                        meta={**meta, "sharded": {"world_size": ctx.dist.world, "optimizer": "dcp"}},
                        extra=write_shards)
    else:
        write_shards(None)


def restore_sharded(ctx: LoopContext, checkpoint: Checkpoint) -> None:
    """Weights from the consolidated file, the optimizer from its DCP shards (resharded as needed);
    a checkpoint of plain processes (no DCP files) gives its whole optimizer state to every rank."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_optimizer_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
    )

    whole = StateDictOptions(full_state_dict=True)
    set_model_state_dict(ctx.model, dict(checkpoint.model_state), options=whole)
    if "sharded" not in checkpoint.meta:
        by_name = optimizer_by_name(ctx, checkpoint.training_state["optimizer"])
        set_optimizer_state_dict(ctx.model, ctx.optimizer, by_name, options=whole)
        return
    optimizer = get_optimizer_state_dict(ctx.model, ctx.optimizer)
    dcp.load({"optimizer": optimizer}, checkpoint_id=str(checkpoint.path))
    set_optimizer_state_dict(ctx.model, ctx.optimizer, optimizer)


def optimizer_by_name(ctx: LoopContext, saved: dict[str, Any]) -> dict[str, Any]:
    """``Optimizer.state_dict()`` numbers parameters in the order of its groups; the state-dict API
    for sharded models names them. The optimizer is built the same way, so number i is the i-th
    parameter of the current optimizer's groups."""
    names = {id(param): name for name, param in ctx.model.named_parameters()}
    ordered = [names[id(param)] for group in ctx.optimizer.param_groups for param in group["params"]]
    return {"state": {ordered[int(index)]: value for index, value in saved["state"].items()},
            "param_groups": [{**group, "params": [ordered[int(i)] for i in group["params"]]}
                             for group in saved["param_groups"]]}
