"""Live tensor memory on any device, op by op: the measured side of `tune memory` on a CPU.

CPU allocators keep no peak statistics, so `LiveMemory` watches every aten op through a
`TorchDispatchMode`: each output's storage is counted once (views share it) from the op that
made it until Python frees it (a weak reference on the storage, which torch keeps alive exactly
as long as the memory). Tensors made before the mode (parameters, optimizer state, the batch)
are registered up front. ``timeline`` holds the live bytes after every op, so two batch sizes
can be compared op by op.

>>> import torch
>>> x = torch.ones(256)                       # 1 KiB, made before the mode
>>> with LiveMemory(existing=[x]) as memory:
...     y = x * 2                             # +1 KiB
...     z = y.view(16, 16)                    # a view: nothing new
...     del y, z                              # freed
...     w = x + 1                             # +1 KiB again
>>> memory.peak_bytes, memory.current_bytes
(2048, 2048)
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveMemory(TorchDispatchMode):
    """Bytes of live tensor storages: now, at the peak, and after every op (``timeline``)."""

    def __init__(self, existing: Iterable[torch.Tensor] = (), *, record_timeline: bool = False) -> None:
        super().__init__()
        self.current_bytes = 0
        self.peak_bytes = 0
        self.record_timeline = record_timeline
        self.timeline: list[int] = []
        self.ops: list[str] = []
        self._live: dict[int, int] = {}
        for tensor in existing:
            self.track(tensor)
        self.peak_bytes = self.current_bytes

    def track(self, tensor: torch.Tensor) -> None:
        """Count ``tensor``'s storage until it is freed (once, however many views share it)."""
        if not isinstance(tensor, torch.Tensor) or tensor.is_meta:
            return
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
            return
        key = id(storage)
        if key in self._live:
            return
        size = storage.nbytes()
        self._live[key] = size
        self.current_bytes += size
        weakref.finalize(storage, self._release, key)

    def _release(self, key: int) -> None:
        self.current_bytes -= self._live.pop(key, 0)

    def mark(self, label: str) -> None:
        """A point in the timeline (e.g. "backward"), to find which phase the peak falls in."""
        self.timeline.append(self.current_bytes)
        self.ops.append(label)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self.track(leaf)
        self.peak_bytes = max(self.peak_bytes, self.current_bytes)
        if self.record_timeline:
            self.timeline.append(self.current_bytes)
            self.ops.append(str(func))
        return out


def storage_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes of the distinct storages behind ``tensors`` (tied and viewed tensors count once)."""
    seen: dict[int, int] = {}
    for tensor in tensors:
        if isinstance(tensor, torch.Tensor) and not tensor.is_meta:
            storage = tensor.untyped_storage()
            seen[storage.data_ptr() or id(storage)] = storage.nbytes()
    return sum(seen.values())
