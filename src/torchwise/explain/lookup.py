"""Known PyTorch error -> what it means, the likely cause, and the fix.

``explain`` takes an exception or any text holding the message (a whole traceback, or a long
log with warnings before the error) and returns an ``Explanation``, or None for a message it
does not know. The table is ``KNOWN``: one entry per error, each a regex and a builder that
reads the numbers out of the message. The entries live in small files by family, in
``families/`` (its docstring lists them). Where no entry matches,
``FALLBACK`` tries generic readings (round 6): a message that states its own remedy
(``remedy``), a version or install mismatch read from the installed packages' files
(``version_lookup``), and Python's type grammar at the user's line (``value_errors``,
``python_values``). How a paste is read (which line is the error) is
``paste``. No torch import.

>>> e = explain("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x784 and 128x10)")
>>> e.title
'A Linear layer expects 128 input features but got 784'
>>> explain("ValueError: something else entirely") is None
True
"""

from __future__ import annotations

import re

from torchwise.explain import python_values, release_readings, remedy, value_errors, version_lookup
from torchwise.explain.evidence_gate import withheld
from torchwise.explain.explanation import Explanation, KnownError
from torchwise.explain.families import (
    anomaly_errors,
    assert_errors,
    attention_mask_errors,
    audio_errors,
    audio_open_errors,
    auto_class_errors,
    autograd_errors,
    backend_build_errors,
    bool_operator_errors,
    broadcast_errors,
    build_errors,
    build_isolation_errors,
    call_errors,
    checkpoint_file_errors,
    checkpointing_errors,
    code_errors,
    collate_list_errors,
    companion_build_errors,
    compile_errors,
    conv_stack_errors,
    cuda_build_errors,
    deepspeed_errors,
    device_errors,
    distributed_errors,
    dynamo_errors,
    einsum_errors,
    eval_prediction_errors,
    export_errors,
    extension_import_errors,
    flash_attention_errors,
    fsdp_errors,
    gpu_arch_errors,
    gpu_state_errors,
    gradient_dtype_errors,
    grammar_call_errors,
    grammar_file_errors,
    grammar_import_cycle_errors,
    grammar_layer_errors,
    grammar_none_errors,
    grammar_path_errors,
    grammar_pickle_errors,
    grammar_registry_errors,
    grammar_report_errors,
    grammar_settings_errors,
    grammar_str_errors,
    grammar_tuple_errors,
    graph_loader_errors,
    host_memory_errors,
    hub_access_errors,
    hub_file_errors,
    hub_layout_errors,
    huggingface_errors,
    image_file_errors,
    image_size_errors,
    import_errors,
    index_errors,
    inductor_build_errors,
    install_errors,
    iterator_errors,
    kernel_crash_errors,
    kernel_errors,
    launcher_errors,
    layer_errors,
    library_errors,
    lightning_errors,
    lightning_monitor_errors,
    lightning_setup_errors,
    loader_errors,
    loader_thread_errors,
    logging_errors,
    loss_errors,
    machine_errors,
    metric_errors,
    model_type_errors,
    module_version_errors,
    mps_errors,
    mps_platform_errors,
    nccl_errors,
    none_argument_errors,
    numpy_errors,
    numpy_version_errors,
    onnxruntime_input_errors,
    option_errors,
    os_limit_errors,
    overlap_errors,
    package_errors,
    pandas_errors,
    parallel_errors,
    parameter_errors,
    peer_access_errors,
    peft_target_errors,
    pipeline_errors,
    precision_device_errors,
    process_group_errors,
    python_errors,
    quantization_errors,
    quantized_kernel_errors,
    remote_code_errors,
    rendezvous_errors,
    rnn_state_errors,
    rocm_errors,
    runtime_errors,
    scaler_errors,
    scheduler_order_errors,
    scheduler_state_errors,
    scope_errors,
    serialization_errors,
    setup_errors,
    shape_errors,
    sparse_errors,
    state_dict_errors,
    tensor_data_errors,
    tensor_errors,
    timm_registry_errors,
    tokenizer_errors,
    tokenizer_file_errors,
    torchscript_errors,
    transform_errors,
    user_code_errors,
    worker_errors,
    worker_wrapper_errors,
    zero3_prefetch_errors,
)
from torchwise.explain.paste import LAUNCHER_SUMMARY, Paste, unwrapped

KNOWN: list[KnownError] = [
    *code_errors.KNOWN,
    # round 5 (explain5b): metric_errors reads tensor_errors' view message where it views
    # bincount's counts, so it comes before tensor_errors
    *metric_errors.KNOWN,
    *scaler_errors.KNOWN,
    *rnn_state_errors.KNOWN,
    *loader_thread_errors.KNOWN,
    *sparse_errors.KNOWN,
    *fsdp_errors.KNOWN,
    *torchscript_errors.KNOWN,
    *gradient_dtype_errors.KNOWN,
    *numpy_errors.KNOWN,
    *hub_file_errors.KNOWN,
    *process_group_errors.KNOWN,
    *quantization_errors.KNOWN,
    *state_dict_errors.KNOWN,
    *python_errors.KNOWN,
    *device_errors.KNOWN,
    *parallel_errors.KNOWN,
    *loss_errors.KNOWN,
    *shape_errors.KNOWN,
    *broadcast_errors.KNOWN,
    *layer_errors.KNOWN,
    *tensor_errors.KNOWN,
    *autograd_errors.KNOWN,
    *worker_errors.KNOWN,
    *transform_errors.KNOWN,
    *distributed_errors.KNOWN,
    *nccl_errors.KNOWN,
    *huggingface_errors.KNOWN,
    *compile_errors.KNOWN,
    *runtime_errors.KNOWN,
    *cuda_build_errors.KNOWN,
    *setup_errors.KNOWN,
    *machine_errors.KNOWN,
    *kernel_errors.KNOWN,
    *checkpoint_file_errors.KNOWN,
    *package_errors.KNOWN,
    *install_errors.KNOWN,
    *library_errors.KNOWN,
    # round 5 (explain5a): TensorBoard values, tokenizer classes, imports, loader workers, ZeRO,
    # export, audio I/O, Lightning restores, modules pickled by older torch
    *logging_errors.KNOWN,
    *tokenizer_errors.KNOWN,
    *import_errors.KNOWN,
    *loader_errors.KNOWN,
    *deepspeed_errors.KNOWN,
    *export_errors.KNOWN,
    *audio_errors.KNOWN,
    *lightning_errors.KNOWN,
    *module_version_errors.KNOWN,
    # after round 5's measurement: families its held-out half lacked
    *einsum_errors.KNOWN,
    *checkpointing_errors.KNOWN,
    *dynamo_errors.KNOWN,
    *call_errors.KNOWN,
    *user_code_errors.KNOWN,
    *index_errors.KNOWN,
    *assert_errors.KNOWN,
    # round 6 (explain6b): errors whose cause is a library's contract or a GPU's architecture
    *scheduler_order_errors.KNOWN,
    *peft_target_errors.KNOWN,
    *lightning_monitor_errors.KNOWN,
    *gpu_arch_errors.KNOWN,
    *timm_registry_errors.KNOWN,
    *model_type_errors.KNOWN,
    *peer_access_errors.KNOWN,
    *remote_code_errors.KNOWN,
    *graph_loader_errors.KNOWN,
    # round 7: building compiled extensions (the CUDA toolkit, nvcc's host compiler, MSVC)
    *build_errors.KNOWN,
    *mps_errors.KNOWN,
    *pandas_errors.KNOWN,
    # a crashed kernel, answered where the paste says whose kernel it was
    *kernel_crash_errors.KNOWN,
    *option_errors.KNOWN,
    # after round 7's measurement: a launcher's --local-rank that the script's argparse refuses
    *launcher_errors.KNOWN,
    # round 8 (explain8a): families whose message names its cause, from the held-out halves' unknowns
    *audio_open_errors.KNOWN,
    *backend_build_errors.KNOWN,
    *extension_import_errors.KNOWN,
    *inductor_build_errors.KNOWN,
    *iterator_errors.KNOWN,
    *os_limit_errors.KNOWN,
    *pipeline_errors.KNOWN,
    *rendezvous_errors.KNOWN,
    *rocm_errors.KNOWN,
    *gpu_state_errors.KNOWN,
    *host_memory_errors.KNOWN,
    *image_file_errors.KNOWN,
    *numpy_version_errors.KNOWN,
    *tensor_data_errors.KNOWN,
    *anomaly_errors.KNOWN,
    *collate_list_errors.KNOWN,
    *lightning_setup_errors.KNOWN,
    *onnxruntime_input_errors.KNOWN,
    *parameter_errors.KNOWN,
    *serialization_errors.KNOWN,
    *build_isolation_errors.KNOWN,
    *image_size_errors.KNOWN,
    *mps_platform_errors.KNOWN,
    *precision_device_errors.KNOWN,
    *scheduler_state_errors.KNOWN,
    *scope_errors.KNOWN,
    *zero3_prefetch_errors.KNOWN,
    *hub_layout_errors.KNOWN,
    *tokenizer_file_errors.KNOWN,
    *worker_wrapper_errors.KNOWN,
    *hub_access_errors.KNOWN,
    *auto_class_errors.KNOWN,
    *flash_attention_errors.KNOWN,
    *none_argument_errors.KNOWN,
    *companion_build_errors.KNOWN,
    *quantized_kernel_errors.KNOWN,
    *bool_operator_errors.KNOWN,
    *overlap_errors.KNOWN,
    *attention_mask_errors.KNOWN,
    *eval_prediction_errors.KNOWN,
    *conv_stack_errors.KNOWN,
    # round 9 (explain9b): Python's own grammar and the traceback's frames, whichever library raised
    *grammar_registry_errors.KNOWN,
    *grammar_call_errors.KNOWN,
    *grammar_none_errors.KNOWN,
    *grammar_pickle_errors.KNOWN,
    *grammar_report_errors.KNOWN,
    *grammar_layer_errors.KNOWN,
    *grammar_import_cycle_errors.KNOWN,
    *grammar_path_errors.KNOWN,
    *grammar_settings_errors.KNOWN,
    *grammar_file_errors.KNOWN,
    *grammar_str_errors.KNOWN,
    *grammar_tuple_errors.KNOWN,
]

# Generic readings tried only where no entry of KNOWN matched: they never displace a family's
# answer, so a family written for a message stays its answer.
FALLBACK: list[KnownError] = [
    *remedy.KNOWN, *version_lookup.KNOWN, *release_readings.KNOWN, *value_errors.KNOWN, *python_values.KNOWN
]

# A line that only warns: "UserWarning: ...", glog "W0110 12:27:06 ...", "[W ...]", "WARNING:".
WARNING_LINE = re.compile(r"Warning\b|^\s*(?:\[rank\d+\]:)?\[?W\d{4} |^\s*\[W |WARNING", re.MULTILINE)


def error_text(error: BaseException | str) -> str:
    """The text to match: a string as is; an exception as ``Type: message`` for it and every
    exception chained to it (``raise ... from`` and "during handling of")."""
    if isinstance(error, str):
        return error
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def _in_warning(text: str, position: int) -> bool:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    line = text[start : end if end >= 0 else len(text)]
    # "NotImplementedError: ... WARNING: this will be slower" is an error that mentions a warning
    return bool(WARNING_LINE.search(line)) and not re.search(r"\w(?:Error|Exception)\b", line)


def explain(error: BaseException | str) -> Explanation | None:
    """Explain a known PyTorch error; None when the message is not one we know.

    The text is read as a person reads a paste (``paste``): each line is an error line, a
    traceback frame (with its source line), a message's own suggestion, or other text. In a
    long text several known messages can occur, and the one that stopped the program wins: a
    message on an error or text line beats the same words in a frame's source line or in a
    suggestion (the message may come first and the traceback after), an error line beats a
    warning line (a recompilation warning before the crash), a specific message beats a
    catch-all one (a device-side assert echoing an earlier index error), and otherwise the later
    line wins (the last exception of a traceback is the one raised). A message that a terminal
    or a web page hard-wrapped mid-word is read again with its lines joined.

    >>> e = explain(RuntimeError("Torch not compiled with CUDA enabled"))
    >>> e.id
    'torch-not-compiled-with-cuda'
    >>> print(e.render())  # doctest: +ELLIPSIS
    This torch is a CPU-only build
    ...
    """
    text = error_text(error)
    found = _best(text)
    if found is None or found[1].generic:
        joined = unwrapped(text)
        again = _best(joined) if joined else None
        if again is not None and (found is None or again[0] > found[0]):
            found, text = again, joined or text
    if found is None:
        found = _best(text, FALLBACK)
    return found[1].explain(text, found[2]) if found else None


Rank = tuple[bool, bool, bool, int]


def _stopped_later(paste: Paste, position: int) -> bool:
    """A line after ``position`` is an exception that is not a warning: the program stopped there,
    so what a warning above it says (a deprecation's "Please use X instead") is not the error.
    A launcher's summary that a worker failed does not count: it reports the error above it."""
    after = paste.line_number(max(position - 1, 0)) + 1
    return any(
        kind == "error" and not _in_warning(paste.text, paste.starts[number])
        and not LAUNCHER_SUMMARY.search(paste.line_at(paste.starts[number]))
        for number, kind in enumerate(paste.kinds[after:], start=after)
    )


def _advice_of_another(paste: Paste, position: int) -> bool:
    """The suggestion line at ``position`` follows an exception line: it is that message's advice
    ("Hint: if it then runs out of memory, ..."), and a known message quoted in it is not the error."""
    return "error" in paste.kinds[: paste.line_number(position)]


def _best(text: str, table: list[KnownError] | None = None) -> tuple[Rank, KnownError, re.Match[str]] | None:
    paste = Paste(text)
    best: tuple[Rank, KnownError, re.Match[str]] | None = None
    for entry in KNOWN if table is None else table:
        match = entry.last_match(text)
        if match is None:
            continue
        kind, warned = paste.kind_at(match.start()), _in_warning(text, match.start())
        if (warned or kind != "error") and _stopped_later(paste, match.end()):
            continue  # round 8: a warning read where another exception stopped the run answers the wrong line
        if kind == "suggestion" and table is None and _advice_of_another(paste, match.start()):
            continue
        if withheld(entry.id, match, text):
            continue  # round 9: the traceback shows the construct this reading assumes is not there
        rank = (kind in ("error", "other"), not warned, not entry.generic, match.start())
        if best is None or rank > best[0]:  # ties: the earlier table entry (more specific) wins
            best = (rank, entry, match)
    return best
