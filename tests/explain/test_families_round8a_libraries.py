"""Issue 21, round 8 (explain8a, breadth): families of the libraries around torch whose message
names its cause (the Hugging Face Hub, transformers' Auto classes, flash-attn, torch.distributed's
and cuDNN's older wordings), each pinned with
texts quoted in public issue threads (address beside each) and a near message that must not get it."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.lookup import explain

# (text, table entry, phrases the answer holds)
CASES: list[tuple[str, str, list[str]]] = [
    # github.com/Megvii-BaseDetection/BorderDet/issues/22: torch 1.x's assert, all_reduce without a group
    (
        '  File "/media/sda6/yhh/FCOS/BorderDet/cvpods/modeling/meta_arch/borderdet.py", line 237, in losses\n'
        "    dist.all_reduce(num_foreground)\n"
        '    "Default process group is not initialized"\n'
        "AssertionError: Default process group is not initialized",
        "process-group-not-initialized",
        ["torchrun --nproc-per-node N", "dist.is_initialized()"],
    ),
    # github.com/zcablii/LSKNet/issues/67 (a smaller batch) and github.com/TQTQliu/MVSGaussian/issues/18
    (
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
        "cudnn-no-algorithm",
        ["memory", "Lower the batch size", "nvidia-smi"],
    ),
    # github.com/ZiqiaoPeng/SyncTalk/issues/162
    (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached"
        " files and it looks like facebook/hubert-large-ls960-ft is not the path to a directory containing a file"
        " named config.json.",
        "hub-unreachable",
        ["HF_ENDPOINT", "--local-dir"],
    ),
    # github.com/LAION-AI/CLAP/issues/134 (a Hub id) and github.com/jy0205/Pyramid-Flow/issues/42 (a folder)
    (
        "OSError: Can't load tokenizer for 'bert-base-uncased'. If you were trying to load it from"
        " 'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
        "hub-tokenizer-not-loaded",
        ["no network", "HF_ENDPOINT"],
    ),
    (
        "OSError: Can't load tokenizer for '/home/zzz/ai/software/Pyramid-Flow/pyramid_flow_model/tokenizer'. If you"
        " were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory"
        " with the same name.",
        "hub-tokenizer-not-loaded",
        ["holds no tokenizer files", "tokenizer_config.json"],
    ),
    # github.com/01-ai/Yi/issues/389 and github.com/chatchat-space/Langchain-Chatchat/issues/707
    (
        "ValueError: Unrecognized configuration class"
        " <class 'transformers.models.llava.configuration_llava.LlavaConfig'>"
        " for this kind of AutoModel: AutoModelForCausalLM.",
        "auto-class-unrecognized-config",
        ["LlavaConfig", "AutoModelForImageTextToText"],
    ),
    (
        "ValueError: Unrecognized configuration class <class 'transformers_modules.model.configuration_chatglm."
        "ChatGLMConfig'> for this kind of AutoModel: AutoModelForCausalLM.",
        "auto-class-unrecognized-config",
        ["auto_map", "trust_remote_code=True"],
    ),
    # github.com/Dao-AILab/flash-attention/issues/762 (a Quadro RTX 5000 and T4s) and /issues/1540 (an RTX 5090)
    (
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\nHi @tridao, all of my GPUs are Tesla T4,"
        " but I still encountered this issue.",
        "flash-attention-gpu-unsupported",
        ["older than Ampere", "attn_implementation='sdpa'"],
    ),
    (
        "RTX 5090 support - built from scratch but still getting - RuntimeError: FlashAttention only supports Ampere"
        " GPUs or newer.",
        "flash-attention-gpu-unsupported",
        ["newer than the installed flash-attn build"],
    ),
]

# github.com/ultralytics/yolov5/issues/5511 (torch upgraded from 1.9 to 1.10 over torchvision 0.11.1)
CASES.append(
    (
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are"
        " incompatible, or if you had errors while compiling torchvision from source.",
        "torchvision-ops-incompatible",
        ["upgraded", "uninstall torch torchvision"],
    )
)
# round 5's held-out half (a regression floor): github.com/pytorch/pytorch/issues/157222 (a QAT model
# with depthwise convs converted on the GPU) and /issues/134953 (a CSR tensor sent through ray)
HELDOUT5 = working_texts("heldout5")
CASES.append((HELDOUT5[1033], "quantized-cudnn-conv-groups", ["groups=1", "model.cpu(); convert(model)"]))
CASES.append((HELDOUT5[1021], "sparse-rebuild-layout", ["torch.sparse_csr", "to_sparse_coo()"]))

# github.com/nlpyang/PreSumm/issues/54: mask_src = 1 - (src == 0) under torch 1.2
CASES.append(
    (
        '  File "/remote/user/dev/PreSumm/src/models/data_loader.py", line 33, in __init__\n'
        "    mask_src = 1 - (src == 0)\n"
        "RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to"
        " invert a mask, use the `~` or `bitwise_not()` operator instead.",
        "bool-mask-subtraction",
        ["mask_src = 1 - (src == 0)", "torch < 1.2", "~mask"],
    )
)

# github.com/xu-ji/IIC/issues/116 (the commenter: expand(k, k).clone()) and khorrams/IGOS_pp#2 (idx[idx])
CASES.append(
    (
        "RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single"
        " memory location. Please clone() the tensor before performing the operation.",
        "inplace-memory-overlap",
        ["expand()", ".clone()"],
    )
)
CASES.append(
    (
        "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory"
        " location. Please clone() the tensor before performing the operation.\n  File"
        ' "/home/lab/project/igos/heatmap-feature-mining/methods_helper.py", line 167, in line_search\n'
        "    indices[indices] = losses > base_losses[indices] + alphas[indices] * t[indices]",
        "inplace-memory-overlap",
        ["idx[idx.clone()]"],
    )
)
# github.com/mahmoodlab/TITAN/issues/11 (a float32 mask, a bf16 query) and Comfy-Org/ComfyUI#8118 (bf16 vs fp16)
CASES.append(
    (
        "RuntimeError: Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: float"
        " and  query.dtype: struct c10::BFloat16 instead.",
        "attention-mask-dtype",
        ["mask.to(q.dtype)", "half precision"],
    )
)
CASES.append(
    (
        "RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype:"
        " struct c10::BFloat16 and  query.dtype: struct c10::Half instead.",
        "attention-mask-dtype",
        ["c10::BFloat16", "another precision"],
    )
)

# round 5's held-out half: github.com/huggingface/transformers/issues/24034 (pred.prediction)
CASES.append((HELDOUT5[36], "eval-prediction-field", ["p.prediction for p.predictions", "label_ids"]))

# Near messages that mean something else: (text, the entry it must not get)
NEAR: list[tuple[str, str]] = [
    # a tensor without .prediction is not the Trainer's EvalPrediction
    ("AttributeError: 'Tensor' object has no attribute 'prediction'", "eval-prediction-field"),
    # a negation of a bool tensor is a sibling message with its own wording
    ("RuntimeError: Negation, the `-` operator, on a bool tensor is not supported.", "bool-mask-subtraction"),
    # a sparse layout a kernel lacks is sparse_errors' family, not a transfer
    (
        "NotImplementedError: Could not run 'aten::addmm' with arguments from the 'SparseCsrCPU' backend.",
        "sparse-rebuild-layout",
    ),
    # a Hub repository that lacks a file is reached, not unreachable
    ("OSError: bert-base-uncased does not appear to have a file named config.json.", "hub-unreachable"),
    # an Auto class given a path that is not a model is not an unknown architecture
    (
        "ValueError: Unrecognized model in ./out. Should have a `model_type` key in its config.json",
        "auto-class-unrecognized-config",
    ),
    # xformers' own check names another kernel, not flash-attn's
    (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward`",
        "flash-attention-gpu-unsupported",
    ),
]


@pytest.mark.parametrize(("text", "error_id", "phrases"), CASES)
def test_a_library_family_answers_its_texts(text, error_id, phrases):
    answer = answer_text(text, error_id)
    assert all(phrase in answer for phrase in phrases), [p for p in phrases if p not in answer]


@pytest.mark.parametrize(("text", "error_id"), NEAR)
def test_a_near_library_message_does_not_get_the_family(text, error_id):
    got = explain(text)
    assert got is None or got.id != error_id
