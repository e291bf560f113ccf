"""Known errors that Python raises in the user's own code when a torch object is not the kind of
object the code assumes: a tensor used as a dict key, a loss that is a Python number, a module
without ``forward``, an attribute a tensor does not have, and an operation autograd has no
derivative for.

The message names the object, and the object decides the cause: ``KeyError: tensor(5)`` is a
0-dim tensor looked up in a dict of ints; ``'float' object has no attribute 'backward'`` is a
loss that left the graph; ``'Tensor' object has no attribute 'append'`` is a list's name reused.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, sentence
from torchwise.explain.paste import user_frame


def _tensor_key(match: re.Match[str], text: str) -> Explanation:
    value, device = match.group(1), match.group(2)
    on = f" on {device}" if device else ""
    return answer(
        title=f"A tensor was used as a dict key: tensor({value}) is not the int {value}",
        meaning=(
            f"A dict (a vocabulary, a label map, a cache) was indexed with a 0-dim tensor{on}."
            " Tensors hash by identity, not by value, so tensor("
            f"{value}) never finds the key {value} even when it is there."
        ),
        cause=(
            "Indexing or iterating a tensor gives 0-dim tensors (since torch 0.4), not Python"
            " numbers: for i in labels_tensor, labels[j], x.argmax() all hand a tensor to the"
            " dict lookup. Code written for torch 0.3 did this with plain numbers."
        ),
        fix=(
            "Turn the tensor into a Python number before the lookup: vocab[idx.item()] (or"
            " int(idx)); for a whole tensor use idx.tolist() and look each int up."
        ),
    )


def _not_a_tensor_loss(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    if kind == "tuple" or kind == "list":
        cause = (
            f"The loss function returns a {kind} (several values, e.g. the loss and its parts)"
            " and the whole of it was called loss."
        )
        fix = (
            "Unpack it and call backward on the tensor: loss, *parts = criterion(out, y);"
            " loss.backward(). Check the order the function returns its values in."
        )
    elif kind == "NoneType":
        cause = "The function that computes the loss returns nothing (a missing return)."
        fix = "Return the loss tensor from it, then call loss.backward()."
    else:
        cause = (
            f"What is called the loss is a Python {kind}, not a tensor: it was unpacked from"
            " the wrong position of a returned tuple, turned into a number too early"
            " (.item(), float(), a sum of .item() values), or a branch returns a constant such"
            " as 0 when a batch has nothing to compare (no targets)."
        )
        fix = (
            "Keep the loss a tensor that depends on the model's output: unpack the returned"
            " values in the order the function returns them, call .item() only for logging,"
            " and for an empty batch skip the step (or return output.sum() * 0) instead of a"
            " Python 0."
        )
    return answer(
        title=f"backward() was called on a Python {kind}, not on a tensor",
        meaning=(
            "Only a tensor that came out of the model's computation has .backward(); a"
            f" {kind} carries no graph, so there is nothing to differentiate."
        ),
        cause=cause,
        fix=fix,
    )


def _forward_missing(match: re.Match[str], text: str) -> Explanation:
    module = match.group(1) or "A module"
    return answer(
        title=f"{module} has no forward method, so calling it raised NotImplementedError",
        meaning=(
            "Calling a module runs its forward(); nn.Module's own forward only raises"
            " NotImplementedError, so this module (or one inside it) never defined one."
        ),
        cause=(
            "forward is misspelt (forword, foward, Forward), indented so that it is not a"
            " method of the class (nested in __init__ or at module level), or the module is a"
            " container that has no forward of its own (nn.ModuleList, nn.ModuleDict), or a"
            " custom layer in an nn.Sequential lacks one."
        ),
        fix=(
            "Define def forward(self, x): at the class's indentation level in every custom"
            " module; iterate an nn.ModuleList in the parent's forward instead of calling it."
            " print(type(m).forward is nn.Module.forward) for each module finds the one."
        ),
    )


# What an attribute a tensor lacks says about the object the code expected instead.
ATTRIBUTE_CAUSES = {
    ("append", "extend", "insert"): (
        "a name that holds a list (of losses, outputs) was reused for a tensor, e.g."
        " loss = criterion(...) after losses were collected in loss",
        "give the list and the tensor different names: losses.append(loss.item())",
    ),
    ("width", "height", "convert", "resize", "getpixel", "mode", "crop"): (
        "code written for a PIL image got a tensor (a transform that already ran"
        " ToTensor(), or a batch from the DataLoader)",
        "pass the PIL image, or read the size from the tensor: h, w = img.shape[-2:]",
    ),
    ("astype", "ravel", "asnumpy"): (
        "a NumPy method was called on a tensor",
        "use the torch spelling (x.to(torch.float32), x.flatten()) or convert first with"
        " x.detach().cpu().numpy()",
    ),
    ("tensors", "mask", "decompose", "image_sizes"): (
        "the model expects a wrapped batch (a NestedTensor / ImageList holding tensors and"
        " masks, as DETR-style and detection models do) and was given a plain tensor",
        "build the input the way the model's own loader does (e.g. nested_tensor_from_tensor_list"
        " for DETR) instead of passing the tensor",
    ),
}


def _tensor_attribute(match: re.Match[str], text: str) -> Explanation:
    attribute = match.group(1)
    cause = fix = ""
    for names, (why, how) in ATTRIBUTE_CAUSES.items():
        if attribute in names:
            cause, fix = why, how
    if not cause:
        cause = (
            f"the variable holds a tensor where the code expects another object that has"
            f" .{attribute} (a list, an image, a model output object, a wrapped batch), or"
            f" .{attribute} is misspelt or belongs to another torch version"
        )
        fix = (
            "print(type(x)) just before the line to see what arrives, and check the spelling"
            f" against dir(x); if .{attribute} is from another library's object, build that"
            " object instead of passing the tensor"
        )
    return answer(
        title=f"A tensor has no attribute '{attribute}'",
        meaning=f"The code asked a torch.Tensor for .{attribute}, which tensors do not have.",
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _no_derivative(match: re.Match[str], text: str) -> Explanation:
    operation = match.group(1) or match.group(2)
    if operation == "target":
        return answer(
            title="A loss's target requires grad, and losses have no derivative for it",
            meaning=(
                "Losses such as MSELoss, L1Loss and the cross-entropies differentiate only with"
                " respect to their input; their target must not require grad."
            ),
            cause=(
                "The target was computed from the model (a teacher output, another branch of"
                " the network, a tensor built from parameters) and still carries the graph."
            ),
            fix="Detach it: loss = criterion(output, target.detach()).",
        )
    return answer(
        title=f"autograd has no derivative for '{operation}'",
        meaning=(
            f"The backward pass reached {operation}, an operation this torch version has no"
            " gradient formula for (or not with respect to that argument)."
        ),
        cause=(
            f"A tensor that requires grad flows into {operation}. Either the code was written"
            " for a newer torch that added the derivative (linalg functions gained theirs"
            " release by release), or the operation is not differentiable at all (indices,"
            " sparse conversion, an argument that should be a constant)."
        ),
        fix=(
            "Install the torch version the code was written for (check its requirements); if"
            f" no gradient should flow through {operation}, pass its input .detach()ed or run"
            " it under torch.no_grad()."
        ),
    )


def _forward_arguments(match: re.Match[str], text: str) -> Explanation:
    # Python counts self: "takes 2 positional arguments but 3 were given" is 1 input vs 2
    layer = match.group(1) or ""
    takes, given = int(match.group(2) or match.group(4)), int(match.group(3) or match.group(5))
    inputs, passed = takes - 1, given - 1
    unpacked = (
        f" {passed} inputs is a batch-sized count: a tensor or list of {passed} items was"
        " unpacked into separate arguments (model(*x), or DataParallel scattering a list)."
        if passed > 8
        else ""
    )
    which = f"{layer}.forward" if layer else "The module's forward"
    if re.search(r"jit[\\/]_trace\.py|torch\.jit\.trace\(", text):
        return _traced_with_unpacked_inputs(which, inputs, passed)
    return answer(
        title=f"{which} takes {inputs} input(s) but was called with {passed}",
        meaning=(
            f"Calling a module passes its arguments to forward(); this forward accepts {inputs}"
            f" besides self and got {passed} (Python counts self, hence {takes} and {given})."
        ),
        cause=(
            "The call does not match the forward it reaches: the model is called with extra"
            " inputs its forward does not declare, a wrapper or a library of another version"
            " (detectron2, diffusers, a LoRA/adapter patch) calls the layer with a different"
            f" signature than the installed one defines, or a module was swapped for another.{unpacked}"
        ),
        fix=(
            "Compare the call with the forward's signature (print(inspect.signature(m.forward)))"
            " and pass exactly those arguments, packing several inputs into one tuple or dict"
            " if the forward takes one; when a library calls it, install the versions the code"
            " was written for."
        ),
    )


def _traced_with_unpacked_inputs(which: str, inputs: int, passed: int) -> Explanation:
    return answer(
        title=f"{which} takes {inputs} input(s) but torch.jit.trace passed {passed}",
        meaning=(
            "torch.jit.trace calls forward(*example_inputs): a tuple (or list) given as the"
            f" example is unpacked into separate arguments, here {passed} of them."
        ),
        cause=(
            "The example input is one value that the model takes whole (a batch as a tuple,"
            " list or dict of tensors), and trace spread its items over forward's parameters."
        ),
        fix=(
            "Wrap the example in a 1-tuple so it arrives as one argument:"
            " torch.jit.trace(model, (batch,)); for a dict batch pass example_kwarg_inputs= or a"
            " wrapper module whose forward takes the tensors one by one."
        ),
    )


# Framework methods that user subclasses and callbacks override, whose signatures changed
# between transformers / Lightning releases (num_items_in_batch, dataloader_idx, optimizer_idx).
FRAMEWORK_HOOKS = (
    r"training_step|compute_loss|get_batch_samples|prediction_step|on_train_batch_start"
    r"|on_train_batch_end|on_validation_batch_end|lr_scheduler_step|transfer_batch_to_device"
    r"|optimizer_step"
)


def _hook_signature(match: re.Match[str], text: str) -> Explanation:
    method, missing = match.group("hook"), match.group("missing")
    # the new signature accepts what the framework now passes (more) or no longer requires what it stopped passing
    change = "accept the extra argument, e.g. num_items_in_batch=None, or **kwargs"
    if missing:  # Python names what the override requires and the framework's call did not pass
        title = f"{method}() is called without {missing}, which the override requires"
        said = f"calls {method} without {missing}; the version of it defined in this code requires it."
        change = f"drop the parameters the framework no longer passes, or give {missing} a default of None"
    else:
        takes, given = int(match.group("takes")), int(match.group("given"))
        title = f"{method}() is called with {'more' if given > takes else 'fewer'} arguments than the override accepts"
        said = f"calls {method} with {given - 1} argument(s); the version of it defined in this code takes {takes - 1}."
    return answer(
        title=title,
        meaning=f"A framework (transformers' Trainer, PyTorch Lightning) {said}",
        cause=(
            f"{method} is overridden by code written for another release of the framework, and"
            " the framework changed the method's signature since (Trainer.training_step and"
            " compute_loss gained num_items_in_batch in transformers 4.46; Lightning 2.0 dropped"
            " arguments such as dataloader_idx and optimizer_idx from its hooks)."
        ),
        fix=(
            "Install the framework version the project pins (its requirements file), or update"
            f" the override to the new signature ({change})."
        ),
    )


# torch.load / torch.save given a path that is not a checkpoint file.
CHECKPOINT_PATH = r"[^'\n]*(?:\.(?:pth?|pt|ckpt|bin|tar|pkl)|/)"


def _checkpoint_path(match: re.Match[str], text: str) -> Explanation:
    error, path = match.group(1), match.group(2)
    saving = bool(re.search(r"in save\b|torch\.save\(|_open_file_like\(f, 'wb'\)", text))
    if error == "IsADirectoryError":
        return answer(
            title=f"A folder was given where a checkpoint file is expected: {path}",
            meaning="torch.load opens one file; this path is a directory.",
            cause=(
                "The path names the folder that holds the checkpoints (pass the file in it), or"
                " a checkpoint in torch's zip format was unzipped into a folder (or downloaded"
                " as one) instead of kept as the single file it is."
            ),
            fix="Pass the checkpoint file itself; download it again and do not unzip it.",
        )
    if saving:
        return answer(
            title=f"torch.save cannot create {path}: its folder does not exist",
            meaning="torch.save opens the file for writing; it does not create missing folders.",
            cause="The folder of the checkpoint path was never created (or the path is relative"
            " to another working directory).",
            fix=(
                "Create it first: os.makedirs(os.path.dirname(path), exist_ok=True), then save."
            ),
        )
    return answer(
        title=f"The checkpoint to load does not exist: {path}",
        meaning="torch.load was given a path with no file at it.",
        cause=(
            "The path is a placeholder from the instructions (/path/to/...), relative to another"
            " working directory, names a checkpoint that was never downloaded or trained, or"
            " spells its name differently from the file on disk."
        ),
        fix=(
            "Check the path (os.path.exists(path), ls the folder): download or train the"
            " checkpoint first, pass an absolute path, and match the file's exact name."
        ),
    )


def _init_not_called(match: re.Match[str], text: str) -> Explanation:
    """round 8: nn.Module's own __init__ had not run when a module, parameter or buffer was assigned."""
    frame = user_frame(text, match.start())
    where = f" ({frame.place}: {frame.source})" if frame else ""
    return answer(
        title="A module was given a submodule or parameter before nn.Module.__init__ ran",
        meaning="nn.Module.__init__ creates the dicts that hold submodules, parameters and buffers; an"
        f" assignment{where} came before it.",
        cause="The class's __init__ lacks super().__init__(), or calls it after assigning self.<layer> = ..."
        " (or a parent class of a library assigns before its own super call).",
        fix="Call super().__init__() as the first line of every nn.Module subclass's __init__, before any"
        " self.x = nn.Linear(...), nn.Parameter or register_buffer.",
    )


KNOWN: list[KnownError] = [
    known(
        "tensor-as-key",
        r"KeyError: tensor\((-?\d+)(?:, device='([\w:]+)')?\)",
        _tensor_key,
    ),
    known(
        "loss-not-a-tensor",
        r"'(float|int|tuple|list|NoneType)' object has no attribute 'backward'",
        _not_a_tensor_loss,
    ),
    known(
        "forward-not-implemented",
        r"Module \[(\w+)\] is missing the required \"forward\" function"
        r"|_forward_unimplemented[\s\S]{0,300}?NotImplementedError"
        r"|modules[/\\]module\.py[^\n]*\bforward\b[\s\S]{0,400}?raise NotImplementedError\s+"
        r"NotImplementedError",
        _forward_missing,
    ),
    known(
        "tensor-attribute",
        # a real torch.Tensor attribute: the message came from another library's Tensor (TensorFlow)
        r"'Tensor' object has no attribute '(?!(?:numpy|item|cuda|cpu|to|detach|shape|size|dim"
        r"|grad|data|device|dtype|backward|view|reshape|float|long)')(\w+)'",
        _tensor_attribute,
    ),
    known(
        "no-derivative",
        r"the derivative for '(\w+)' is not implemented|derivative for (\w+) is not implemented",
        _no_derivative,
    ),
    known(
        "forward-arguments",
        r"(?:(\w+)\.)?forward\(\) takes (\d+) positional arguments? but (\d+) (?:were|was) given"
        r"|forward\(\) takes exactly (\d+) arguments? \((\d+) given\)",
        _forward_arguments,
    ),
    known(
        "framework-hook-signature",
        rf"(?:\w+\.)?(?P<hook>{FRAMEWORK_HOOKS})\(\) (?:takes (?P<takes>\d+) positional arguments? but"
        rf" (?P<given>\d+) were given|missing \d+ required positional arguments?: (?P<missing>'(?!self')\w+'"
        r"(?:(?:,? and |, )'\w+')*))",
        _hook_signature,
    ),
    known(
        "checkpoint-path",
        rf"(FileNotFoundError|IsADirectoryError): \[Errno \d+\] (?:No such file or directory"
        rf"|Is a directory): '({CHECKPOINT_PATH})'",
        _checkpoint_path,
    ),
    known(
        "module-init-not-called",
        r"cannot assign (?:module|parameter|buffer) before Module\.__init__\(\) call"
        r"|'\w+' object has no attribute '_(?:modules|parameters|buffers)'",
        _init_not_called,
    ),
]
