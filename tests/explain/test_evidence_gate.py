"""Issue 21, round 9 (explain9a): the evidence gate. A reading that assumes a construct (a view that
hard-codes the batch, an unflattened input, a model built with other sizes, a missing runtime DLL)
must fit what the paste shows: the message's numbers, its codes and names, and the traceback's
frames. Each mechanism is pinned on a text reduced from the thread named above it, with a near miss
beside it that keeps the usual reading; the working half's own texts are pinned by number in
test_working9_judged.py."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text

from torchwise.explain.evidence_gate import flattened_width, permuted, reshaped_batch, withheld
from torchwise.explain.lookup import explain


def frame(path: str, line: int, function: str, source: str) -> str:
    return f'  File "{path}", line {line}, in {function}\n    {source}\n'


TORCH = "/opt/conda/lib/python3.10/site-packages/torch"
LIBRARY = "/opt/conda/lib/python3.10/site-packages"


def test_the_numeric_checks():
    assert reshaped_batch(1216, 1280) and reshaped_batch(64, 40) and not reshaped_batch(511, 23)
    assert reshaped_batch(32, 17) and reshaped_batch(5, 3)  # a configured batch above the last one; too small
    assert not reshaped_batch(882, 768)  # they share 6: no batch
    assert flattened_width(784, 128) and flattened_width(2, 6) and not flattened_width(7, 256)
    assert permuted([3, 3, 3, 80, 80], [80, 3, 3, 3, 80]) and not permuted([10, 512], [20, 512])
    assert permuted([768, 768], [768, 768, 1]) and not permuted([1], [1, 1])  # a 1x1 conv stored as a Linear


# https://github.com/hiyouga/LlamaFactory/issues/3765 (511 against 23: labels not aligned with the inputs)
COUNTS = "ValueError: Expected input batch_size (511) to match target batch_size (23)."


def test_counts_no_reshape_of_the_batch_relates_are_different_numbers_of_items():
    text = answer_text(COUNTS, "batch-size-mismatch")
    assert "The output has 511 items but the target 23, and no reshape of the batch relates them" in text
    assert "labels that are not aligned with the inputs" in text and "hard-coded" not in text


def test_counts_that_share_a_batch_keep_the_hard_coded_reading():
    text = answer_text(
        "ValueError: Expected input batch_size (64) to match target batch_size (40)", "batch-size-mismatch"
    )
    assert "The output has 64 rows but the target has 40" in text and "hard-coded size" in text


# https://github.com/THUDM/GraphMAE/issues/51 (an encoder 7 wide into a Linear built for 256)
WIDTH = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2708x7 and 256x256)"


def test_a_width_no_flatten_explains_comes_from_a_part_of_another_width():
    text = answer_text(WIDTH, "linear-shapes")
    assert "A Linear layer built for 256 input features got 7" in text
    assert "the layer or encoder before it outputs 7 features" in text and "flatten each sample" not in text.lower()


def test_a_width_flattening_explains_keeps_the_unflattened_reading():
    text = answer_text("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x784 and 128x10)", "linear-shapes")
    assert "A Linear layer expects 128 input features but got 784" in text and "torch.flatten(x, 1)" in text


# https://github.com/Comfy-Org/ComfyUI/issues/5836 (round 6 #7): a 4096-wide conditioning into a
# cross-attention built for 768; reduced here to the library frames such a paste carries
LIBRARY_LINEAR = (
    "Traceback (most recent call last):\n"
    + frame("/home/u/run.py", 12, "<module>", "image = pipe(prompt, prompt_embeds=embeds).images[0]")
    + frame(
        f"{LIBRARY}/diffusers/models/attention_processor.py", 1210, "__call__", "key = attn.to_k(encoder_hidden_states)"
    )
    + frame(f"{TORCH}/nn/modules/module.py", 1501, "_call_impl", "return forward_call(*args, **kwargs)")
    + frame(f"{TORCH}/nn/modules/linear.py", 114, "forward", "return F.linear(input, self.weight, self.bias)")
    + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)"
)


def test_a_library_s_linear_is_sized_by_its_config_not_by_the_user():
    text = answer_text(LIBRARY_LINEAR, "linear-shapes")
    assert "The layer is diffusers's (attention_processor.py:1210 in __call__" in text
    assert "models of one family and size throughout" in text and "nn.Linear(4096, 320)" not in text


def test_a_library_s_own_matrix_product_is_withheld():
    # the same message raised by a library's explicit product: no Linear of the user's, no reading
    paste = (
        "Traceback (most recent call last):\n"
        + frame("/home/u/run.py", 5, "<module>", "out = model(x)")
        + frame(f"{LIBRARY}/somepkg/attention.py", 40, "forward", "scores = q @ k.transpose(-2, -1)")
        + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x64 and 32x8)"
    )
    assert explain(paste) is None


# https://github.com/appvision-ai/fast-bert/issues/173 shows the bare assert; the kernel line below is the
# shape torch prints for a check that is no index or label (BCELoss's range check keeps its own reading)
def test_a_device_side_assert_whose_kernel_names_another_check_is_withheld():
    other = (
        "/pytorch/aten/src/ATen/native/cuda/Normalization.cuh:100: block: [0,0,0], thread: [3,0,0]"
        " Assertion `var >= 0` failed.\nRuntimeError: CUDA error: device-side assert triggered"
    )
    assert explain(other) is None
    labels = (
        "Loss.cu:250: block: [0,0,0], thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
        "RuntimeError: CUDA error: device-side assert triggered"
    )
    assert "reached CrossEntropyLoss/NLLLoss" in answer_text(labels, "device-side-assert")
    assert "almost always an index out of range" in answer_text(
        "RuntimeError: CUDA error: device-side assert triggered", "device-side-assert"
    )


def test_the_gate_names_what_it_saw():
    import re

    paste = "Assertion `var >= 0` failed.\nRuntimeError: CUDA error: device-side assert triggered"
    match = re.search("device-side assert triggered", paste)
    assert (
        withheld("device-side-assert", match, paste) == "the kernel's assertion is `var >= 0`, no index or label check"
    )
    assert withheld("two-devices", match, paste) is None


# https://github.com/wenbowen123/catgrasp/issues/18 (spconv's kernel-first layout against channels-first)
def test_a_size_mismatch_of_the_same_sizes_in_another_order_is_a_layout():
    paste = (
        "RuntimeError: Error(s) in loading state_dict for UNet:\n\tsize mismatch for conv.2.weight: copying a param"
        " with shape torch.Size([2, 2, 2, 80, 96]) from checkpoint, the shape in current model is"
        " torch.Size([96, 2, 2, 2, 80])."
    )
    text = answer_text(paste, "state-dict-mismatch")
    assert "same sizes as the model's, in another order" in text and ".permute(" in text
    other = paste.replace("[96, 2, 2, 2, 80]", "[96, 2, 2, 2, 64]")
    assert "built with other sizes than at save time" in answer_text(other, "state-dict-mismatch")


# https://github.com/jchengai/planTF/issues/25 (natten's relative position bias, one buffer per block)
def test_extra_keys_that_are_one_tensor_of_every_block_are_a_code_version():
    paste = (
        "RuntimeError: Error(s) in loading state_dict for PlanningModel:\n\tUnexpected key(s) in state_dict:"
        ' "encoder.blocks.0.attn.rpb", "encoder.blocks.1.attn.rpb", "encoder.blocks.2.attn.rpb". '
    )
    text = answer_text(paste, "state-dict-mismatch")
    assert "the same tensor, attn.rpb, in each layer" in text and 'k.endswith("attn.rpb")' in text
    head = paste.replace("attn.rpb", "head.weight")  # a layer's weight in each block: options, as before
    assert "built with fewer parts" in answer_text(head, "state-dict-mismatch")


# https://github.com/wustl-cig/DOLCE/issues/8 (a markdown paste bolds the label)
def test_key_listings_in_markdown_are_read():
    paste = (
        "**RuntimeError: Error(s) in loading state_dict for ConditionalModel:**\n"
        '        **Missing key(s) in state_dict:** "input_blocks.3.0.op.weight", "input_blocks.3.0.op.bias"'
    )
    text = answer_text(paste, "state-dict-mismatch")
    assert "the model has 2 key(s) the checkpoint lacks (input_blocks.3.0.op.weight" in text
    assert "parts the checkpoint never had" in text


# https://github.com/foocker/lsp/issues/17 (a clip whose features came out empty)
def test_a_stacked_sample_of_size_zero_is_empty_not_short():
    paste = (
        "RuntimeError: stack expects each tensor to be equal size, but got [0, 512] at entry 0 and [268, 512]"
        " at entry 1"
    )
    assert "Entry 0 is empty (a size of 0)" in answer_text(paste, "stack-unequal")
    short = paste.replace("[0, 512]", "[62]").replace("[268, 512]", "[63]")
    assert "Variable-length sequences" in answer_text(short, "stack-unequal")


# https://github.com/bghira/SimpleTuner/issues/59 (latents of two aspect-ratio buckets in one batch)
def test_samples_stacked_by_the_user_s_own_collate_are_what_it_gathered():
    message = (
        "RuntimeError: stack expects each tensor to be equal size, but got [4, 128, 170] at entry 0 and"
        " [4, 96, 128] at entry 2"
    )
    own = (
        "Traceback (most recent call last):\n"
        + frame("/root/t/train.py", 559, "collate_fn", "pixel_values = torch.stack(latents)")
        + message
    )
    text = answer_text(own, "stack-unequal")
    assert "Your own code stacks them (train.py:559 in collate_fn" in text and "aspect-ratio bucket" in text
    default = "Traceback (most recent call last):\n" + frame(
        f"{TORCH}/utils/data/_utils/collate.py", 162, "collate_tensor_fn", "return torch.stack(batch, 0, out=out)"
    )
    assert "the transforms do not bring them to one size" in answer_text(default + message, "stack-unequal")


# https://github.com/fepegar/SlicerPyTorch/issues/4 (a host application's DLLs loaded first)
DLL = (
    'OSError: [WinError {code}] {words} Error loading "C:\\venv\\lib\\site-packages\\torch\\lib\\{name}"'
    " or one of its dependencies."
)


def test_win_error_127_is_another_version_of_a_dll_not_a_missing_one():
    text = answer_text(DLL.format(code=127, words="找不到指定的程序。", name="torch_cuda_cpp.dll"), "windows-dll")
    assert "torch_cuda_cpp.dll loaded, but a DLL it links to is another version ([WinError 127])" in text
    assert "libomp140" not in text


# https://github.com/githubcto/FramePack-ZLUDA/issues/5 (ZLUDA's stand-in CUDA DLLs)
def test_a_cuda_library_of_torch_is_cuda_s_side_not_the_visual_cpp_runtime():
    missing = "The specified module could not be found."
    text = answer_text(
        "D:\\FramePack-ZLUDA\\run.py\n" + DLL.format(code=126, words=missing, name="cudnn64_9.dll"), "windows-dll"
    )
    assert "cudnn64_9.dll, a CUDA library of this torch" in text and "ZLUDA (named in the paste)" in text
    # https://github.com/chn-lee-yumi/MaterialSearch/issues/105: fbgemm.dll keeps the libomp140 reading
    fbgemm = answer_text(DLL.format(code=126, words=missing, name="fbgemm.dll"), "windows-dll")
    assert "libomp140.x86_64.dll" in fbgemm


# https://github.com/huggingface/trl/issues/714 (torch_dtype is from_pretrained's, not SFTTrainer's)
def test_a_model_loading_keyword_given_to_a_trainer_went_to_the_wrong_call():
    text = answer_text(
        "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'torch_dtype'", "unexpected-keyword"
    )
    assert "'torch_dtype' is an option for loading a model" in text and "pass the model to SFTTrainer" in text
    loader = answer_text(
        "TypeError: LlamaForCausalLM.from_pretrained() got an unexpected keyword argument 'attn_implementation'",
        "unexpected-keyword",
    )
    assert "installed version" in loader and "option for loading" not in loader
    pipeline = answer_text(
        "TypeError: pipeline() got an unexpected keyword argument 'torch_dtype'", "unexpected-keyword"
    )
    assert "option for loading" not in pipeline  # pipeline loads models: another release's argument


# https://github.com/pytorch/pytorch/issues/139031 shows stack sizes of a batch; a DataLoader's collate stacks
# the samples of one batch, so rows that differ are a count per sample (audio frames), never lists to join
def test_samples_the_dataloader_collates_with_different_row_counts_are_padded_not_concatenated():
    message = (
        "RuntimeError: stack expects each tensor to be equal size, but got [120, 80] at entry 0 and [98, 80] at entry 1"
    )
    collate = frame(f"{TORCH}/utils/data/_utils/collate.py", 162, "collate_tensor_fn", "return torch.stack(batch, 0)")
    text = answer_text("Traceback (most recent call last):\n" + collate + message, "stack-unequal")
    assert "each sample holds a variable number of rows" in text and "pad_sequence" in text
    assert "Concatenate" not in text
    assert "Concatenate along the first dimension" in answer_text(message, "stack-unequal")  # no frames: as before


OOM = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity;"
    " 21.10 GiB already allocated; 1.50 GiB free; 21.20 GiB reserved in total by PyTorch)"
)


# https://github.com/zai-org/CodeGeeX/issues/160 (round 7 #55: a model too large for its GPUs) and the classic
# torch.load of a GPU checkpoint: no batch has run while weights load, so halving it cannot help
def test_out_of_memory_while_weights_load_is_the_checkpoint_or_the_model_not_the_batch():
    load = frame("/home/u/eval.py", 10, "<module>", "state = torch.load(args.ckpt)")
    text = answer_text("Traceback (most recent call last):\n" + load + OOM, "cuda-out-of-memory")
    assert "It ran out while loading weights (eval.py:10 (state = torch.load(args.ckpt)))" in text
    assert "map_location='cpu'" in text and "halve the batch size" not in text
    pretrained = frame("/home/u/run.py", 3, "<module>", "model = AutoModelForCausalLM.from_pretrained(name).cuda()")
    text = answer_text("Traceback (most recent call last):\n" + pretrained + OOM, "cuda-out-of-memory")
    assert "It ran out while loading the model" in text and "device_map='auto'" in text
    step = frame("/home/u/train.py", 40, "<module>", "loss.backward()")
    assert "halve the batch size" in answer_text(
        "Traceback (most recent call last):\n" + step + OOM, "cuda-out-of-memory"
    )


# The GraphMAE and ComfyUI threads above for a layer the user did not size; here a timm model's first conv
# (reduced): "set in_channels=5" is not the user's to do, the data's channels or the model's option are
def test_a_library_s_conv_given_other_channels_is_the_data_or_the_model_s_option():
    message = (
        "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 5, 224, 224] to have 3"
        " channels, but got 5 channels instead"
    )
    conv = frame(
        f"{TORCH}/nn/modules/conv.py", 463, "forward", "return self._conv_forward(input, self.weight, self.bias)"
    )
    owner = frame(f"{LIBRARY}/timm/models/resnet.py", 600, "forward_features", "x = self.conv1(x)")
    text = answer_text("Traceback (most recent call last):\n" + owner + conv + message, "conv-channels")
    assert "The conv is timm's (resnet.py:600 in forward_features" in text and "in_chans" in text
    assert "Set in_channels=5" not in text
    assert "Set in_channels=5 on this conv" in answer_text(message, "conv-channels")  # no frames: as before


# https://github.com/lucidrains/imagen-pytorch/issues/195 mixes channel counts in a batch ([3, 480, 480] against
# [1, 480, 480]); an RGBA PNG beside RGB images is the same construct with 4 channels, not lists of 3 and 4 rows
def test_an_rgba_image_beside_rgb_ones_is_an_alpha_channel_not_lists_of_rows():
    paste = (
        "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and"
        " [4, 224, 224] at entry 5"
    )
    text = answer_text(paste, "stack-unequal")
    assert "alpha channel (RGBA" in text and 'convert("RGB")' in text and "Concatenate" not in text


@pytest.mark.parametrize(("label", "side"), [("Missing", "missing"), ("Unexpected", "extra")])
def test_keys_that_are_one_buffer_of_every_layer_on_one_side_are_a_code_version(label, side):
    # torch 0.4.1 added BatchNorm's num_batches_tracked: a checkpoint from either side of it
    paste = (
        f"RuntimeError: Error(s) in loading state_dict for ResNet:\n\t{label} key(s) in state_dict:"
        ' "bn1.num_batches_tracked", "layer1.0.bn1.num_batches_tracked", "layer1.0.bn2.num_batches_tracked". '
    )
    text = answer_text(paste, "state-dict-mismatch")
    assert f"every one of the 3 {side} keys is the same tensor, num_batches_tracked, in each layer" in text.lower()
    stats = paste.replace("num_batches_tracked", "running_mean")  # running statistics follow an option
    assert "the same tensor" not in answer_text(stats, "state-dict-mismatch")


def test_a_windows_dll_answer_quotes_the_code_the_paste_printed():
    paste = (
        "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading"
        ' "C:\\venv\\lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.'
    )
    text = answer_text(paste, "windows-dll")
    assert "([WinError 1114])" in text and "WinError 126" not in text


# https://github.com/jakeoung/Unet_pytorch/issues/4 (round 6 #48, a list): in a Dataset's __getitem__ the index
# is the sampler's, drawn from range(len(dataset)), so a tensor or array one short is __len__, not a loop
def test_an_index_past_the_end_in_getitem_is_the_dataset_s_len_not_a_loop():
    message = "IndexError: index 5000 is out of bounds for dimension 0 with size 5000"
    getitem = frame("/home/u/data.py", 30, "__getitem__", "label = self.labels[idx]")
    text = answer_text("Traceback (most recent call last):\n" + getitem + message, "index-past-end")
    assert "The Dataset's __len__ is longer than self.labels (data.py:30 in __getitem__)" in text
    assert "off-by-one" not in text
    loop = frame("/home/u/data.py", 30, "smooth", "total += self.labels[i]")
    assert "An off-by-one" in answer_text("Traceback (most recent call last):\n" + loop + message, "index-past-end")


# https://github.com/activeloopai/deeplake/issues/13 (hub imports torch, which was never installed)
def test_torch_missing_where_an_installed_package_imports_it_names_that_package():
    message = "ModuleNotFoundError: No module named 'torch'"
    importer = frame(f"{LIBRARY}/hub/bucket.py", 7, "<module>", "import torch")
    text = answer_text("Traceback (most recent call last):\n" + importer + message, "torch-not-installed")
    assert "The installed package hub imports torch (bucket.py:7)" in text and "python -m pip install torch" in text
    own = frame("/home/u/train.py", 1, "<module>", "import torch")
    text = answer_text("Traceback (most recent call last):\n" + own + message, "torch-not-installed")
    assert text.splitlines()[2].startswith("torch was installed for another interpreter")


# https://github.com/herbert-chen/tianchi_lvcai/issues/9 (a 2 GiB GPU); https://github.com/liruilong940607/Pose2Seg/issues/32
# (a 4 GiB GPU where a smaller batch fitted) keeps the batch reading
def test_out_of_memory_on_a_2_gib_gpu_says_the_gpu_is_small():
    def oom(total: str) -> str:
        return (
            f"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; {total} total capacity;"
            " 1.25 GiB already allocated; 3.55 MiB free; 1.27 GiB reserved in total by PyTorch)"
        )

    text = answer_text(oom("2.00 GiB"), "cuda-out-of-memory")
    assert "This GPU has 2.00 GiB in all" in text and "a smaller model or input size" in text
    assert "This GPU has" not in answer_text(oom("4.00 GiB"), "cuda-out-of-memory")


# https://github.com/BindsNET/bindsnet/issues/201 (a Long batch into nn.Linear: "Expected object of scalar type
# Long but got scalar type Float for argument #2 'mat2'" raised in F.linear): the usual Long/Float reading
# assumes a loss given float targets; raised by a layer it is integer input meeting float weights
def test_long_expected_at_a_layer_is_integer_input_not_a_loss_target():
    message = "RuntimeError: expected scalar type Long but found Float"
    caller = frame("/home/u/m.py", 20, "forward", "x = self.fc1(x)")
    linear = frame(f"{TORCH}/nn/modules/linear.py", 114, "forward", "return F.linear(input, self.weight, self.bias)")
    text = answer_text("Traceback (most recent call last):\n" + caller + linear + message, "dtype-mismatch")
    assert "reached a layer whose weights are float, at m.py:20 in forward (x = self.fc1(x))" in text
    assert "x = x.float()" in text and "target" not in text
    loss = frame(f"{TORCH}/nn/functional.py", 3029, "cross_entropy", "return torch._C._nn.cross_entropy_loss(input)")
    assert "got a Float target" in answer_text(
        "Traceback (most recent call last):\n" + loss + message, "dtype-mismatch"
    )
