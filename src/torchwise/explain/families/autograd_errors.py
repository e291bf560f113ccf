"""Known errors from autograd and from handling tensors as Python values.

Where a message suggests its own fix (``retain_graph=True``, "unfreeze the parameters") and
that fix is usually wrong, the answer says so and names the right one.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known, sentence, told_apart
from torchwise.explain.optimizer_params import empty_parameters_reading
from torchwise.explain.paste_readings import checkpointed_backward


def _backward_twice(match: re.Match[str], text: str) -> Explanation:
    checkpointed = checkpointed_backward(text)  # the traceback or the paste's words say checkpointing
    if checkpointed is not None:
        return checkpointed
    return answer(
        title="backward() ran through a graph that an earlier backward() already freed",
        meaning=(
            "backward() frees the graph it walks. A second backward through any part of that"
            " graph finds its saved tensors gone."
        ),
        cause=(
            "A tensor from the previous step is still attached to the old graph and enters the"
            " new one: an RNN/LSTM hidden state carried to the next batch without .detach() (the"
            " classic), a value computed once before the loop and reused in every step, a running"
            " total of losses (total = total + loss) that is backpropagated, or a GAN generator"
            " output fed to the discriminator step without .detach()."
        ),
        fix=(
            "Cut the carried state from the old graph at the start of each step:\n"
            "    hidden = hidden.detach()  # LSTM: hidden = tuple(h.detach() for h in hidden)\n"
            "compute everything that needs gradients inside the loop, keep running totals as"
            " numbers (loss.item()), and use fake.detach() for the discriminator step. The"
            " message's own suggestion, retain_graph=True, is the wrong fix here: it keeps every"
            " past graph alive, so memory grows each step and gradients flow back through all"
            " earlier batches. It is only right when two losses really share one forward pass,"
            " and even then (loss_a + loss_b).backward() is simpler."
        ),
    )


def _leaf_inplace(match: re.Match[str], text: str) -> Explanation:
    view = bool(match.group(1))
    what = "a slice (a view of a leaf)" if view else "a leaf tensor"
    return answer(
        title=f"In-place change of {what} that requires grad",
        meaning=(
            "Parameters and tensors created with requires_grad=True are leaves of the graph;"
            " autograd refuses an in-place change to them (or to a view of a leaf) while it"
            " records, because their gradient would no longer match their value."
        ),
        cause=(
            "A hand-written update or initialisation outside torch.no_grad(): w -= lr * w.grad,"
            " p.add_(...), layer.weight[:, 0] = ..., E[:, 0::2] = ... on a tensor requiring grad,"
            " or x += y on an input created with requires_grad=True."
        ),
        fix=(
            "Updates and initialisation of parameters belong under torch.no_grad() (that is how"
            " an optimizer does it):\n"
            "    with torch.no_grad():\n"
            "        w -= lr * w.grad\n"
            "or use an optimizer / nn.init. To compute a new value instead, write it out of place"
            " (x = x + y) or work on a copy (x = x.clone()). A fixed table (a positional encoding"
            " that is not learned) should be built under torch.no_grad() or registered as a"
            " buffer."
        ),
    )


LORA = re.compile(r"\blora\b|peft|enable_input_require_grads|None of the inputs have requires_grad", re.I)


def _no_grad(match: re.Match[str], text: str) -> Explanation:
    if LORA.search(text):
        warned = (
            " The warning before it, 'None of the inputs have requires_grad=True. Gradients will"
            " be None', comes from torch.utils.checkpoint and says exactly this."
            if "None of the inputs have requires_grad=True" in text
            else ""
        )
        return answer(
            title="The loss has no grad_fn: LoRA with gradient checkpointing cut the graph",
            meaning="The loss has no grad_fn, so autograd has nothing to differentiate." + warned,
            cause=(
                "With LoRA (PEFT) the base model is frozen, so the embeddings' output does not"
                " require grad. Reentrant gradient checkpointing (use_reentrant=True, the old"
                " default) then returns outputs without a graph, and the adapters inside the"
                " checkpointed layers never get a gradient."
            ),
            fix=(
                "Make the inputs of the checkpointed blocks require grad, or use the"
                " non-reentrant checkpoint (use_reentrant=False):\n"
                "    model.enable_input_require_grads()  # before training, after get_peft_model\n"
                "    model.gradient_checkpointing_enable(\n"
                '        gradient_checkpointing_kwargs={"use_reentrant": False})\n'
                "Unfreezing the base model's parameters is not the fix: it trains the whole model"
                " and throws away what LoRA saves."
            ),
        )
    return answer(
        title="backward() on a tensor that is not connected to any parameter",
        meaning="The loss has no grad_fn, so autograd has nothing to differentiate.",
        cause=(
            "The loss was computed inside torch.no_grad() or torch.inference_mode() (a shared"
            " evaluate helper, a decorator); or it was cut from the graph by .detach(), .item(),"
            " .numpy() or torch.tensor(value); or every parameter has requires_grad=False."
        ),
        fix=(
            "Compute the training loss outside no_grad blocks and keep it a tensor (do not"
            " rebuild it with torch.tensor); check loss.requires_grad and"
            " any(p.requires_grad for p in model.parameters()); unfreeze with"
            " p.requires_grad_(True). With LoRA and gradient checkpointing call"
            " model.enable_input_require_grads() instead of unfreezing."
        ),
    )


def _inplace(match: re.Match[str], text: str) -> Explanation:
    tensor_type, shape, _output, op, version, expected = match.groups()
    made_by = f", the output of {op.removesuffix('Backward0')}" if op else ""
    if tensor_type is None:  # torch before 1.0 names neither the tensor nor the versions
        title = "A tensor autograd still needs was changed in place"
        meaning = (
            "Backward needs a tensor as it was in the forward pass, but an in-place operation"
            " changed it afterwards (this torch version does not say which tensor)."
        )
    else:
        title = (
            f"A tensor autograd still needs was changed in place ({tensor_type} [{shape}]{made_by})"
        )
        meaning = (
            f"Backward needs the [{shape}] tensor{made_by} as it was in the forward pass"
            f" (version {expected}), but an in-place operation changed it (now version {version})."
        )
    return answer(
        title=title,
        meaning=meaning,
        cause=(
            "An in-place operation after the tensor was used: x += y, x.relu_(), x[:, 0] = ...,"
            " nn.ReLU(inplace=True), or optimizer.step() between a forward pass and a second"
            " backward through it (a GAN updating one network before the other's backward)."
        ),
        fix=(
            "Write the operation out of place (x = x + y, torch.relu(x), nn.ReLU(inplace=False),"
            " x = x.clone() before slicing assignment), or call backward before optimizer.step()."
            " To find the line, run once with torch.autograd.set_detect_anomaly(True)."
        ),
    )


def _numpy(match: re.Match[str], text: str) -> Explanation:
    device = match.group(1) or match.group(2)
    np_call = " (np.sum/np.array over a list of tensors calls .numpy() on each)" if re.search(
        r"np\.(?:sum|array|mean|stack)\(", text) else ""
    if device:
        title = f"A {device} tensor cannot become a NumPy array"
        meaning = f"NumPy arrays live in CPU memory; this tensor is on {device}{np_call}."
    else:
        title = "A tensor that is part of the autograd graph cannot become a NumPy array"
        meaning = f"NumPy cannot carry gradients, so torch refuses to hand over a tensor that requires grad{np_call}."
    return answer(
        title=title,
        meaning=meaning,
        cause=(
            "A model output, loss or parameter is passed to NumPy, matplotlib or a metric"
            " library while still on the GPU or attached to the graph."
        ),
        fix=(
            "Convert explicitly: tensor.detach().cpu().numpy() works in every case (.detach()"
            " drops the graph, .cpu().numpy() copies to host memory). For one number use"
            " loss.item(); compute metrics under torch.no_grad(); to sum a list of tensors keep it"
            " in torch: torch.stack(values).sum(0)."
        ),
    )


def _bool_ambiguous(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A tensor with several values was used as one True/False",
        meaning=(
            "Python asked the tensor for a single truth value (if, while, and/or/not, assert,"
            " max()) but it holds several elements, so torch cannot tell whether you mean any"
            " or all of them."
        ),
        cause=(
            "An elementwise comparison used as a condition (if (a == 0): ..., best = a > b or c"
            " > b), the x and y or z idiom on tensors; or a tensor passed where a number or"
            " flag is expected, such as a model constructor called with the input (UNet(img)"
            " builds a model with the image as its first argument) or a loss class called with"
            " tensors (nn.CrossEntropyLoss(output, target))."
        ),
        fix=(
            "Say what you mean: (a == 0).all() or .any(), .item() for a one-element tensor, an"
            " explicit if/else or torch.where instead of and/or on tensors. Build the model or"
            " loss first and call it on the data: model = UNet(n_classes); out = model(x);"
            " criterion = nn.CrossEntropyLoss(); loss = criterion(out, y)."
        ),
    )


NO_PARAMETERS = "The optimizer was given no parameters"
EMPTY = "model.parameters() (or the list passed to the optimizer) yielded nothing."


def _empty_parameters(match: re.Match[str], text: str) -> Explanation | None:
    """Each usual cause leaves its mark in the code a paste shows; without one, which it is
    (or a module that keeps its weights outside nn.Parameter) is not in the paste."""
    misspelt = fact(text, r"def (_init_|__init_|_init__|__int__|__init)\s*\(")
    filtered = re.search(r"(?:(\w+)\s*=\s*)?filter\(\s*lambda \w+\s*:\s*\w+\.requires_grad", text)
    if misspelt:
        cause = (
            f"The constructor is spelled {misspelt} instead of __init__, so it never runs: no"
            " layer is ever created and model.parameters() is empty."
        )
    elif filtered and filtered.group(1):
        cause = (
            f"{filtered.group(1)} is a filter() over model.parameters(): a generator, which the"
            " first reader used up (a print, a count, another optimizer), so the optimizer gets"
            " nothing; or every parameter was frozen (requires_grad=False) before the filter."
        )
    elif filtered:
        cause = (
            "Every parameter was frozen (requires_grad=False, a pretrained backbone and a head"
            " switched off too) before filter(lambda p: p.requires_grad, ...) picked the"
            " trainable ones: none are left."
        )
    elif re.search(r"^class \w+\([\w.]*Module\):\s*\n\s+pass\b", text, re.MULTILINE):
        cause = "The module has no layers: its class defines no parameters at all."
    elif re.search(r"self\.\w+\s*=\s*\[\s*nn\.|self\.\w+\s*=\s*\{\s*['\"]\w+['\"]\s*:\s*nn\.", text):
        cause = (
            "The layers are kept in a plain Python list or dict (self.x = [nn.Linear(...), ...]),"
            " which nn.Module does not look into: parameters() never sees them."
        )
    elif (read := empty_parameters_reading(text, match.start())) is not None:  # round 10: the optimizer's line
        return answer(title=NO_PARAMETERS, meaning=EMPTY, cause=sentence(read[0]), fix=read[1])
    else:
        return None
    return answer(
        title=NO_PARAMETERS,
        meaning=EMPTY,
        cause=cause,
        fix=(
            "Name the constructor __init__ and call super().__init__() in it; hold sub-layers in"
            " attributes or nn.ModuleList; pass a list, not a generator:"
            " params = list(filter(lambda p: p.requires_grad, model.parameters())); set"
            " requires_grad=True on the layers you mean to train. Check with"
            " sum(p.numel() for p in model.parameters())."
        ),
    )


def _gradient_count(match: re.Match[str], text: str) -> Explanation:
    function, expected, got = match.groups()
    return answer(
        title=f"{function}.backward returned {got} gradients; forward took {expected} inputs",
        meaning=(
            f"A custom autograd Function's backward must return one gradient per argument of"
            f" forward, None for those that need none (expected {expected}, got {got})."
        ),
        cause=(
            f"backward returns too few values (often code written for an old torch, or a forward"
            f" that gained an argument), or {function} is written in the legacy style"
            " (instance forward/backward) that current torch no longer supports."
        ),
        fix=(
            f"Return {expected} values from backward, padding with None for non-tensor or"
            " non-differentiable arguments (return grad_input, None); write the Function with"
            " @staticmethod forward(ctx, ...) and backward(ctx, grad_output) and call it as"
            f" {function.removesuffix('Backward')}.apply(...)."
        ),
    )


def _rnn_backward_eval(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="backward through a cuDNN RNN that ran in eval mode",
        meaning="cuDNN's RNN kernels keep what backward needs only in training mode.",
        cause=(
            "The model was switched to model.eval() (or never back to train()) before a"
            " forward pass that is then backpropagated."
        ),
        fix=(
            "Call model.train() before the forward passes you backpropagate (model.eval() only"
            " around evaluation, under torch.no_grad()); if the RNN must stay in eval mode"
            " (frozen dropout) while training, set torch.backends.cudnn.enabled = False for it."
        ),
    )


def _legacy_function(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="An autograd Function written in the pre-1.3 style",
        meaning=(
            "The model uses a torch.autograd.Function whose forward is an instance method; torch"
            " now requires a static forward(ctx, ...) and backward(ctx, ...), called through"
            " Function.apply."
        ),
        cause=(
            "The project's code (a Detect, ROI or custom layer Function) was written for torch"
            " before 1.3: an instance is built with its settings, then called with the data."
            " Adding @staticmethod alone is not enough: the call then reaches forward without"
            " its inputs (forward() missing ... arguments)."
        ),
        fix=(
            "Rewrite it as @staticmethod def forward(ctx, ...) / def backward(ctx, ...) and call"
            " it as MyFunction.apply(data..., settings...) with every argument at the call (or"
            " make it an nn.Module if it needs no custom backward); or use the torch version the"
            " project pins."
        ),
    )


def _integer_requires_grad(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="An integer tensor was asked to require gradients",
        meaning=(
            "Autograd only differentiates floating-point (and complex) tensors; requires_grad=True"
            " on an integer or bool tensor (indices, labels, int8 weights) is refused."
        ),
        cause=(
            "requires_grad is set on an integer tensor: torch.tensor([1, 2], requires_grad=True)"
            " or torch.arange(...) built from ints, nn.Parameter around int64 data, or a model"
            " whose weights are already quantized to int8 being made trainable (loading a"
            " pre-quantized checkpoint for fine-tuning)."
        ),
        fix=(
            "Make the tensor floating point first (torch.tensor([1., 2.]), x.float(),"
            " dtype=torch.float32) or leave integer tensors without gradients; to fine-tune a"
            " quantized model, load the float checkpoint and let the training code quantize it"
            " (or train adapters such as LoRA on top)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "legacy-autograd-function",
        r"Legacy autograd function with non-static forward method is deprecated",
        _legacy_function,
    ),
    known(
        "backward-twice",
        r"Trying to backward through the graph a second time",
        _backward_twice,
    ),
    known(
        "leaf-inplace",
        r"(?:a )?(view of a )?leaf Variable that requires grad is being used in an in-place operation",
        _leaf_inplace,
    ),
    known(
        "no-grad",
        r"element 0 of tensors does not require grad and does not have a grad_fn",
        _no_grad,
    ),
    known(
        "inplace-modified",
        r"one of the variables needed for gradient computation has been modified by an inplace"
        r" operation: \[(\S+) \[([\d, ]*)\]\](?:, which is output (\d+) of (\w+),)? is at version"
        r" (\d+); expected version (\d+) instead"
        r"|one of the variables needed for gradient computation has been modified by an inplace"
        r" operation(?!:)",
        _inplace,
    ),
    known(
        "numpy-conversion",
        r"Can't call numpy\(\) on (?:Tensor|Variable) that requires grad"
        r"|(?:can't|cannot) convert (?:(\S+) device type|(CUDA)) tensor to numpy",
        _numpy,
    ),
    known(
        "bool-ambiguous",
        r"[Bb]oolean value of Tensor with more than one value is ambiguous"
        r"|bool value of (?:Tensor|Variable) (?:objects )?with more than one value is ambiguous",
        _bool_ambiguous,
    ),
    told_apart("empty-parameter-list", r"optimizer got an empty parameter list", _empty_parameters),
    known(
        "wrong-gradient-count",
        r"function (\w+) returned an incorrect number of gradients \(expected (\d+), got (\d+)\)",
        _gradient_count,
    ),
    known(
        "rnn-backward-in-eval",
        r"(?:cudnn RNN )?backward(?:_input)? can only be called in training mode",
        _rnn_backward_eval,
    ),
    known(
        "integer-requires-grad",
        r"Only Tensors of floating point (?:and complex )?dtype can require gradients",
        _integer_requires_grad,
    ),
]
