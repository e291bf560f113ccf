"""Issue 21, round 8 (explain8a, breadth): working8's texts (the half round 8's rules were worked
against; numbers in working8/texts.yaml) that the round-8a families answer, each with its entry and
the phrases that carry the thread's cause and fix (verdicts in working8/verdicts-explain8a.yaml)."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, working_texts

WORKING8 = working_texts("working8")

# (text, table entry, phrases the answer holds)
CASES: list[tuple[str, str, list[str]]] = [
    (WORKING8[12], "mps-os-unsupported", ["device='cpu'", "arm64"]),
    (WORKING8[20], "zero3-inflight-params", ["another deepspeed release", "stage3_prefetch_bucket_size"]),
    (WORKING8[22], "anomaly-nan-gradient", ["log(x) * x ** p", "torch.pow(x.clamp_min(eps), p)"]),
    (WORKING8[41], "scheduler-resume-without-initial-lr", ["last_epoch", "optimizer.load_state_dict"]),
    (WORKING8[43], "scheduler-groups-without-lr", ["wrapper", "wrapper.opt"]),
    (WORKING8[47], "pipeline-components-missing", ["image_processor", "another diffusers release"]),
    (WORKING8[76], "build-isolation-no-torch", ["flash_attn", "--no-build-isolation"]),
    (WORKING8[77], "build-isolation-no-torch", ["flash-attn", "--no-build-isolation"]),
    (WORKING8[48], "pretrained-file-missing", ["diffusion_pytorch_model.bin", "subfolder='unet'"]),
    # github.com/OptimalScale/LMFlow/issues/104 (its title): a LoRA checkpoint folder
    (
        "OSError: output_models/finetune_with_lora/checkpoint-5000 does not appear to have a file named config.json.",
        "pretrained-file-missing",
        ["adapter_config.json", "PeftModel.from_pretrained(base, adapter_dir)"],
    ),
    (WORKING8[83], "accelerate-bf16-unsupported", ["T4, V100", "fp16"]),
    (WORKING8[87], "rendezvous-address-in-use", ["already in use", "--init_method tcp://localhost:<port>"]),
    (WORKING8[90], "vit-image-size", ["transforms make 224", "upgrade timm", "img_size=224"]),
    (WORKING8[53], "tokenizer-file-missing", ["tokenizer_file", "use_fast=False"]),
    (WORKING8[69], "worker-error-unseen", ["Original Traceback", "num_workers=0"]),
    (WORKING8[91], "vit-image-size", ["384*384", "preprocessing"]),
    (WORKING8[99], "unbound-local", ["hypothesis", "isinstance checks", "else"]),
    (WORKING8[16], "none-passed-to-library", ["unet is None", "train.py:2375", "model actually trained"]),
]


@pytest.mark.parametrize(("text", "error_id", "phrases"), CASES)
def test_a_working8_text_is_answered_with_its_cause(text, error_id, phrases):
    answer = answer_text(text, error_id)
    assert all(phrase in answer for phrase in phrases), [p for p in phrases if p not in answer]
