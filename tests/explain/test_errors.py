"""Each known error: real message in, the numbers from it and the concrete fix out."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.explain.corpus_cases import load_corpus
from tests.explain.test_choices_round7 import PINNED as WORKING7
from tests.explain.test_families_round7 import CASES as ROUND7_CASES
from tests.explain.test_families_round8a import CASES as ROUND8A_CASES
from tests.explain.test_families_round8a_libraries import CASES as ROUND8A_LIBRARY_CASES
from tests.explain.test_families_round8a_working8 import CASES as ROUND8A_WORKING8_CASES
from tests.explain.test_grammar_round9 import CASES as ROUND9B_CASES
from tests.explain.test_grammar_round9_paths import CASES as ROUND9B_PATH_CASES
from tests.explain.test_working10_judged_b import CASES as ROUND10B_CASES

from torchwise.explain.families import setup_errors
from torchwise.explain.lookup import KNOWN, explain

WEIGHTS_ONLY = (
    "_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so"
    " you have two options, do those steps only if you trust the source of the checkpoint.\n"
    "\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in"
    " `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to"
    " `False` will likely succeed, but it can result in arbitrary code execution.\n"
    "\tWeightsUnpickler error: Unsupported global: GLOBAL numpy.core.multiarray._reconstruct was"
    " not an allowed global by default. Please use"
    " `torch.serialization.add_safe_globals([_reconstruct])` to allowlist this global."
)
BOOTSTRAPPING = """RuntimeError:
        An attempt has been made to start a new process before the
        current process has finished its bootstrapping phase.

        This probably means that you are not using fork to start your
        child processes and you have forgotten to use the proper idiom
        in the main module:

            if __name__ == '__main__':
                freeze_support()
"""
DATA_PARALLEL_KEYS = (
    "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
    '\tMissing key(s) in state_dict: "conv1.weight", "fc.weight", "fc.bias". \n'
    '\tUnexpected key(s) in state_dict: "module.conv1.weight", "module.fc.weight",'
    ' "module.fc.bias". '
)
SIZE_MISMATCH = (
    "RuntimeError: Error(s) in loading state_dict for Net:\n"
    "\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from"
    " checkpoint, the shape in current model is torch.Size([5, 512]).\n"
    "\tsize mismatch for fc.bias: copying a param with shape torch.Size([10]) from checkpoint,"
    " the shape in current model is torch.Size([5])."
)

CASES = [
    (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)",
        "linear-shapes",
        ["expects 784 input features but got 3136", "x.view(x.size(0), -1)",
         "nn.Linear(3136, 10)", "Never hard-code the batch size"],
    ),
    (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x392 and 784x10)",
        "linear-shapes",
        ["exactly 32 samples of 784 features", "x.view(64, -1)) folded a batch of 32"],
    ),
    (
        DATA_PARALLEL_KEYS,
        "state-dict-mismatch",
        ["ResNet", "The checkpoint was saved from a DataParallel", 'k.removeprefix("module.")',
         "3 key(s) the checkpoint lacks",
         "strict=False"],
    ),
    (
        SIZE_MISMATCH,
        "state-dict-mismatch",
        ["fc.weight is [10, 512] in the checkpoint but [5, 512] in the model",
         "fc.bias is [10] in the checkpoint but [5]", '{"fc.weight", "fc.bias"}',
         "never a size mismatch"],
    ),
    (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two"
        " devices, cuda:0 and cpu!",
        "two-devices",
        ["cuda:0 and cpu", "model.to(device)", "x, y = x.to(device), y.to(device)"],
    ),
    (
        "RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu,"
        " different from other tensors on cuda:0 (when checking argument in method"
        " wrapper_CUDA_addmm)",
        "two-devices",
        ["cpu and cuda:0", "mat1 is on cpu", "device=x.device"],
    ),
    (
        "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor)"
        " should be the same or input should be a MKLDNN tensor and weight is a dense tensor",
        "input-weight-type",
        ["Tensors on two devices: cpu and cuda", "the input is torch.FloatTensor",
         "model.to(device)"],
    ),
    (
        "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type"
        " (torch.cuda.FloatTensor) should be the same",
        "input-weight-type",
        ["expected Float, found Half", "torch.autocast"],
    ),
    (
        "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously"
        " reported at some other API call",
        "cuda-out-of-memory",
        ["The GPU ran out of memory: an allocation failed", "set_to_none=True"],  # round 9: no number, no GPU 0
    ),
    (
        "RuntimeError: expected scalar type Long but found Float",
        "dtype-mismatch",
        ["expected Long, found Float", "CrossEntropyLoss", "y = y.long()"],
    ),
    (
        "RuntimeError: Found dtype Long but expected Float",
        "dtype-mismatch",
        ["expected Float, found Long", "MSELoss", ".float()"],
    ),
    (
        "RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\""
        " not implemented for 'Float'",
        "dtype-mismatch",
        ["expected Long, found Float", "y = y.long()"],
    ),
    (
        "RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float",
        "dtype-mismatch",
        ["expected Float, found Double", "torch.from_numpy(a).float()"],
    ),
    (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
        "no-grad",
        ["torch.no_grad()", ".detach()", "loss.requires_grad", "requires_grad=False"],
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a"
        " total capacity of 15.77 GiB of which 3.12 MiB is free. Including non-PyTorch memory,"
        " this process has 15.76 GiB memory in use. Of the allocated memory 15.20 GiB is"
        " allocated by PyTorch, and 180.50 MiB is reserved by PyTorch but unallocated.",
        "cuda-out-of-memory",
        ["GPU 1 ran out of memory: needed 20.00 MiB more, 3.12 MiB free of 15.77 GiB",
         "set_to_none=True", "empty_cache() does not free live tensors", "accumulation",
         "180.50 MiB is reserved but unallocated", "expandable_segments:True"],
    ),
    (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.90 GiB total"
        " capacity; 13.47 GiB already allocated; 1.27 GiB free; 13.77 GiB reserved in total by"
        " PyTorch)",
        "cuda-out-of-memory",
        ["needed 2.00 GiB more, 1.27 GiB free of 15.90 GiB", "mixed precision"],
    ),
    (
        # round 7: the bare message is not answered (torch's build and a compiled extension's are
        # as likely); a GPU that the wheels leave out, named in the paste, says it is torch's build
        "NVIDIA GeForce RTX 5090\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call",
        "no-kernel-image",
        ["torch.cuda.get_arch_list()", "sm_120", "whl/cu128", "torchwise doctor"],
    ),
    (
        "AssertionError: Torch not compiled with CUDA enabled",
        "torch-not-compiled-with-cuda",
        ["CPU-only build", "--index-url https://download.pytorch.org/whl/cu128",
         "torch.cuda.is_available()"],
    ),
    (
        "RuntimeError: DataLoader worker (pid 12345) is killed by signal: Bus error. It is"
        " possible that dataloader's workers are out of shared memory. Please try to raise your"
        " shared memory limit.",
        "dataloader-worker-killed",
        ["pid 12345", "signal Bus error", "/dev/shm", "--shm-size=8g", "--ipc=host"],
    ),
    (
        "RuntimeError: DataLoader worker (pid 999) is killed by signal: Killed.",
        "dataloader-worker-killed",
        ["pid 999", "out-of-memory killer", "fewer workers"],
    ),
    (
        "RuntimeError: Attempting to deserialize object on a CUDA device but"
        " torch.cuda.is_available() is False. If you are running on a CPU-only machine, please"
        " use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.",
        "cuda-checkpoint-on-cpu",
        ["torch.load(path, map_location='cpu')"],
    ),
    (
        WEIGHTS_ONLY,
        "weights-only-load",
        ["numpy.core.multiarray._reconstruct",
         "torch.serialization.add_safe_globals([numpy.core.multiarray._reconstruct])",
         "weights_only=False", "model.state_dict()"],
    ),
    (
        BOOTSTRAPPING,
        "spawn-bootstrapping",
        ['if __name__ == "__main__":', "def main():"],
    ),
    (
        "RuntimeError: one of the variables needed for gradient computation has been modified by"
        " an inplace operation: [torch.FloatTensor [64, 10]], which is output 0 of ReluBackward0,"
        " is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the"
        " operation that failed to compute its gradient, with"
        " torch.autograd.set_detect_anomaly(True).",
        "inplace-modified",
        ["torch.FloatTensor [64, 10]", "output of Relu", "now version 1", "(version 0)",
         "nn.ReLU(inplace=False)", "set_detect_anomaly(True)"],
    ),
    (
        "RuntimeError: one of the variables needed for gradient computation has been modified by"
        " an inplace operation: [torch.cuda.FloatTensor [256]] is at version 3; expected version"
        " 2 instead.",
        "inplace-modified",
        ["torch.cuda.FloatTensor [256]", "now version 3"],
    ),
    (
        "ValueError: Expected input batch_size (128) to match target batch_size (64).",
        "batch-size-mismatch",
        ["The output has 2 rows per target (128 = 2 x 64)", "x.view(x.size(0), -1)",
         "last batch of the epoch has 64 samples"],
    ),
    (
        "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[16, 1, 224,"
        " 224] to have 3 channels, but got 1 channels instead",
        "conv-channels",
        ["expects 3 input channels but got 1", "[16, 1, 224, 224]", "in_channels=1"],
    ),
    (
        "RuntimeError: CUDA error: device-side assert triggered",
        "device-side-assert",
        ["num_classes", "CUDA_LAUNCH_BLOCKING=1"],
    ),
    (
        # round 7: the crashed kernel is read only where the paste names the operation (an
        # embedding here) or the extension; the bare message stays unknown
        '  File "/env/site-packages/torch/nn/functional.py", line 2237, in embedding\n'
        "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "cuda-kernel-failure",
        ["an illegal memory access was encountered", "CUDA_LAUNCH_BLOCKING=1", "num_embeddings"],
    ),
    (
        "RuntimeError: cuda runtime error (30) : unknown error at /opt/conda/conda-bld/"
        "pytorch_1501972792122/work/pytorch-0.1.12/torch/lib/THC/THCGeneral.c:66",
        "cuda-unknown-error",
        ["sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm", "suspend"],
    ),
    (
        "RuntimeError: backward_input can only be called in training mode",
        "rnn-backward-in-eval",
        ["model.train()", "torch.backends.cudnn.enabled = False"],
    ),
    (  # round 8 (explain8b): github.com/Genentech/gReLU/issues/188, super().__init__() missing
        "AttributeError: cannot assign module before Module.__init__() call",
        "module-init-not-called",
        ["super().__init__() as the first line"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("message", "error_id", "expected"), CASES)
def test_known_error_is_explained_with_its_numbers(message, error_id, expected):
    explanation = explain(message)
    assert explanation is not None, message
    assert explanation.id == error_id
    answer = "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])
    for text in expected:
        assert text in answer, (text, answer)


def test_every_table_entry_has_a_case():
    corpus = {case.id for case in load_corpus()}
    cases = {error_id for _, error_id, _ in [*CASES, *ROUND7_CASES, *ROUND8A_CASES, *ROUND8A_LIBRARY_CASES]}
    cases |= {error_id for _, error_id, _ in [*ROUND8A_WORKING8_CASES, *ROUND9B_CASES, *ROUND9B_PATH_CASES]}
    cases |= {error_id for error_id, _ in WORKING7.values()}
    cases |= {error_id for _, error_id, _ in ROUND10B_CASES}
    assert {entry.id for entry in KNOWN} <= cases | corpus | {
        "driver-too-old",
        "torchvision-operator-missing",
    }


def test_a_wrong_in_features_is_not_called_a_folded_batch():
    explanation = explain(
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)"
    )
    assert explanation is not None and "folded" not in explanation.cause


@pytest.mark.parametrize(
    "message",
    [
        "ValueError: too many values to unpack (expected 2)",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied",  # numbers cut off
        "KeyError: 'state_dict'",
        "RuntimeError: [enforce fail at alloc_cpu.cpp:114] DefaultCPUAllocator: not enough memory",
        "RuntimeError: Expected all tensors to be on the same device",
        "TypeError: forward() missing 1 required positional argument: 'x'",
        "IndexError: list index out of range",
        "RuntimeError: grad_input must be contiguous",
        # round 7: a message with several common causes and nothing in the paste to tell them apart
        "RuntimeError: unique_by_key: failed to synchronize: cudaErrorIllegalAddress: an illegal"
        " memory access was encountered",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "RuntimeError: The size of tensor a (7) must match the size of tensor b (5) at non-singleton dimension 1",
        "ValueError: optimizer got an empty parameter list",
        "RuntimeError: The size of tensor a must match the size of tensor b",  # numbers cut off
        "ValueError: optimizer got an empty list of names",
        # (round 6 answers the scheduler-order warning; its deprecation sibling stays unknown)
        "UserWarning: The epoch parameter in `scheduler.step()` was not necessary and is being deprecated",
        "",
    ],
)
def test_unknown_messages_are_not_explained(message):
    assert explain(message) is None


def test_driver_code_is_decoded_and_the_build_that_fits_is_named(monkeypatch):
    versions = {"torch": "2.5.1+cu124"}
    monkeypatch.setattr(setup_errors, "installed_version", versions.get)
    explanation = explain(
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please"
        " update your GPU driver by downloading and installing a new version from the URL:"
        " http://www.nvidia.com/Download/index.aspx"
    )
    assert explanation is not None and explanation.id == "driver-too-old"
    assert explanation.title.startswith("The NVIDIA driver runs CUDA up to 11.4")
    assert "version 11040" in explanation.meaning
    assert explanation.fix.endswith(
        "\n    pip install --force-reinstall torch==2.5.1"
        " --index-url https://download.pytorch.org/whl/cu118"
    )


def test_torchvision_operator_fix_pins_the_release_of_the_installed_torch(monkeypatch):
    versions = {"torch": "2.5.1+cu124", "torchvision": "0.19.0+cu124"}
    monkeypatch.setattr(setup_errors, "installed_version", versions.get)
    explanation = explain("RuntimeError: operator torchvision::nms does not exist")
    assert explanation is not None and explanation.id == "torchvision-operator-missing"
    assert "torch 2.5.1+cu124, torchvision 0.19.0+cu124" in explanation.meaning
    assert explanation.fix.endswith(
        '\n    pip install --force-reinstall --no-deps "torchvision==0.20.*"'
        " --index-url https://download.pytorch.org/whl/cu124"
    )


def test_a_whole_traceback_is_explained_from_its_last_lines():
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 42, in <module>\n'
        "    out = model(x)\n"
        '  File "model.py", line 12, in forward\n'
        "    return self.fc(x)\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x400 and 256x10)\n"
    )
    explanation = explain(traceback)
    assert explanation is not None
    assert explanation.matched == "mat1 and mat2 shapes cannot be multiplied (32x400 and 256x10)"


def test_an_exception_and_its_cause_are_read():
    try:
        try:
            raise RuntimeError("CUDA error: device-side assert triggered")
        except RuntimeError as inner:
            raise ValueError("training step failed") from inner
    except ValueError as outer:
        explanation = explain(outer)
    assert explanation is not None and explanation.id == "device-side-assert"
    assert explain(ValueError("nothing we know")) is None


def test_render_and_json_carry_every_part():
    explanation = explain("AssertionError: Torch not compiled with CUDA enabled")
    assert explanation is not None
    lines = explanation.render().splitlines()
    assert lines[0] == explanation.title
    assert lines[1].startswith("  what it means: ")
    assert set(explanation.to_json()) == {"id", "title", "meaning", "cause", "fix", "matched", "line"}


def test_explaining_text_does_not_import_torch():
    code = (
        "import sys, torchwise; "
        "e = torchwise.explain('RuntimeError: CUDA error: device-side assert triggered'); "
        "print(e.id, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["device-side-assert", "False"]
