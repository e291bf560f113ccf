"""What explain knows: one module per family of errors, each a ``KNOWN`` list of table entries (a
regex that recognises the message and a builder that writes the answer); ``lookup.KNOWN`` joins
them in order. The families: ``code_errors`` (model code, devices, dtypes),
``state_dict_errors`` (loading a state dict), ``parallel_errors`` (DataParallel, tensors on two
GPUs), ``python_errors`` (torch objects in the user's Python: a tensor as a dict key, a loss
that is a number, a missing forward, an attribute a tensor lacks, a missing derivative),
``device_errors`` (GPU numbers, device names, generators), ``loss_errors`` (input vs target,
losses unsafe under autocast), ``shape_errors`` (layer input shapes), ``broadcast_errors``
(elementwise sizes), ``layer_errors`` (normalisation layer sizes), ``tensor_errors`` (views,
index dtypes, in-place results, non-scalar backward, GradScaler), ``autograd_errors``,
``worker_errors`` (DataLoader workers), ``transform_errors`` (torchvision transforms),
``distributed_errors`` (process groups, DDP, the watchdog) with ``nccl_errors`` (NCCL's set-up: a system call,
a GPU per rank, shared memory), ``huggingface_errors`` (transformers'
Trainer and tokenizers), ``compile_errors`` (compile, export, ONNX), ``runtime_errors`` (GPU
memory, kernels, libraries), ``cuda_build_errors`` (a torch without CUDA asked for it: a CPU wheel, a Mac),
``setup_errors`` (CUDA builds, drivers, the machine, checkpoint
files), ``machine_errors`` (full disks, downloads, NVML, TorchScript files, torch's internal
asserts), ``kernel_errors`` (no kernel for a backend), ``install_errors`` (importing torch,
torchvision and compiled extensions) and ``library_errors`` (shared libraries and DLLs); round
5's ``metric_errors`` (a confusion matrix counted with bincount, TensorBoard values),
``scaler_errors`` (GradScaler calls out of order), ``rnn_state_errors``,
``loader_thread_errors`` (the pin-memory thread), ``sparse_errors``, ``fsdp_errors``,
``torchscript_errors``, ``gradient_dtype_errors``, ``numpy_errors``, ``hub_file_errors`` (files
of a model repository), ``process_group_errors``, ``quantization_errors``, ``logging_errors`` (a
string logged to TensorBoard), ``tokenizer_errors`` (a tokenizer class that is None),
``import_errors`` (a name another release of a package has), ``loader_errors`` (DataLoader
workers that cannot find a class), ``deepspeed_errors`` (ZeRO stage 3), ``export_errors``,
``audio_errors`` (torchaudio backends), ``lightning_errors`` (load_from_checkpoint) and
``module_version_errors`` (modules pickled by an older torch); after round 5's measurement
``einsum_errors``, ``checkpointing_errors`` (torch.utils.checkpoint) and ``dynamo_errors``
(data-dependent code under torch.compile); last, the errors Python raises in the user's own
code, read from the traceback's frame in their file: ``call_errors`` (a call that does not match
its definition) and ``user_code_errors`` (a missing key, an unpacking of the wrong count, a
None), ``index_errors`` and ``assert_errors`` (a failed assert, a NumPy array's .size called);
after round 7's measurement ``launcher_errors`` (a launcher's ``--local-rank`` that the script's
argparse refuses); round 8 (explain8a, families whose message names its cause): distributed
backends and rendezvous (``backend_build_errors``, ``rendezvous_errors``), GPUs and platforms
(``rocm_errors``, ``gpu_state_errors``, ``mps_platform_errors``, ``precision_device_errors``,
``flash_attention_errors``), builds and installs (``extension_import_errors``,
``inductor_build_errors``, ``build_isolation_errors``, ``numpy_version_errors``,
``companion_build_errors``), data (``iterator_errors``, ``audio_open_errors``,
``image_file_errors``, ``image_size_errors``, ``collate_list_errors``, ``tensor_data_errors``,
``conv_stack_errors``, ``host_memory_errors``, ``os_limit_errors``, ``worker_wrapper_errors``),
training code (``anomaly_errors``, ``parameter_errors``, ``scheduler_state_errors``,
``scope_errors``, ``none_argument_errors``, ``bool_operator_errors``, ``overlap_errors``,
``attention_mask_errors``, ``serialization_errors``, ``quantized_kernel_errors``,
``onnxruntime_input_errors``, ``zero3_prefetch_errors``) and the libraries around torch
(``lightning_setup_errors``, ``pipeline_errors``, ``hub_layout_errors``, ``hub_access_errors``,
``tokenizer_file_errors``, ``auto_class_errors``, ``eval_prediction_errors``); round 9 (explain9b,
Python's own grammar and the traceback's frames, whichever library raised): ``grammar_registry_errors``
(class registries), ``grammar_call_errors`` (missing positional arguments: a class for an object, a
starred value too short, a hook of another release), ``grammar_none_errors`` (a None handed in by the
caller, zip given no iterable), ``grammar_pickle_errors`` (``__setstate__``), ``grammar_report_errors``
(an error report that fails, the project's own check), ``grammar_layer_errors``,
``grammar_import_cycle_errors`` (a partially initialized module), ``grammar_path_errors`` (a path that
is None: an option never given), ``grammar_settings_errors`` (an option never defined) and
``grammar_file_errors`` (a data file not found), ``grammar_str_errors`` (a str where a tensor was expected),
``grammar_tuple_errors`` (a layer's tuple where a tensor was expected).
"""
