"""Issue 21, round 8 (explain8a, breadth): families whose message names its cause, from the
earlier held-out halves' "not known" rows (measured, so regression floors; numbers in each
``texts.yaml``), the working halves and texts quoted in public issue threads (address beside each).
Each family is pinned with real texts (exact entry, phrases of the cause and fix) and with near
messages that mean something else and must not get it."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.lookup import explain

HELDOUT7 = working_texts("heldout7")
WORKING7 = working_texts("working7")

# (text, table entry, phrases the answer holds)
CASES: list[tuple[str, str, list[str]]] = [
    # github.com/amdegroot/ssd.pytorch/issues/214: next() on one loader iterator, never re-created
    (HELDOUT7[3], "next-iterator-exhausted", ["next(batch_iterator)", "iter(loader)"]),
    # github.com/nv-tlabs/SCube/issues/10: next(iter(...)) on a pipeline with no samples
    (
        'Original Traceback (most recent call last):\n  File "/path/to/SCube-release/scube/data/base_wds.py", line'
        " 376, in __iter__\n    sample = next(iter(wds.DataPipeline(\nStopIteration",
        "next-iterator-exhausted",
        ["no batch at all", "len(dataset)"],
    ),
    # github.com/ppogg/Retinaface_Ghost/issues/5: drop_last=True on a dataset smaller than a batch
    (
        'Traceback (most recent call last): File "train.py", line 178, in <module> train() File "train.py", line'
        ' 134, in train images, targets = next(batch_iterator) File "/home/wyw/.conda/envs/py36_torch/lib/'
        'python3.6/site-packages/torch/utils/data/dataloader.py", line 435, in __next__ data = self._next_data()'
        ' File "/home/wyw/.conda/envs/py36_torch/lib/python3.6/site-packages/torch/utils/data/dataloader.py",'
        " line 1058, in _next_data raise StopIteration StopIteration\n\n"
        "batch_iterator = iter(data.DataLoader(dataset, batch_size, shuffle=True, num_workers=num_workers,\n"
        "                                                  collate_fn=detection_collate, drop_last=True)) ",
        "next-iterator-exhausted",
        ["drop_last=True", "drop_last=False"],
    ),
    # github.com/quynhneo/detm-arxiv/issues/3: a DataParallel replica has no parameters()
    (
        'File "/home/[]/DETM-arxiv/detm.py", line 212, in init_hidden\n    weight = next(self.parameters())\n'
        "StopIteration\nStopIteration: Caught StopIteration in replica 0 on device 0.",
        "next-iterator-exhausted",
        ["DataParallel", "torch 1.5", "x.device"],
    ),
    # github.com/STVIR/pysot/issues/60: torch 0.4's THD wording, run from an IDE
    (HELDOUT7[12], "rendezvous-rank-missing", ["env://", "torchrun --nproc-per-node N"]),
    # github.com/salesforce/densecap/issues/40: file:// without rank
    (HELDOUT7[13], "rendezvous-rank-missing", ["file://", "rank=<this process's index", "torch 0.4"]),
    # github.com/clovaai/donut/issues/41
    (HELDOUT7[24], "distributed-backend-not-built", ["on Windows", "strategy='ddp'", "gloo"]),
    # github.com/meta-llama/codellama/issues/125 (WSL)
    (
        "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
        "nccl-no-gpus",
        ["sees no GPU", "torch.cuda.device_count()"],
    ),
    # github.com/pytorch/examples/issues/1030
    ("RuntimeError: Tensors must be CUDA and dense", "nccl-cpu-tensor", ["CPU tensor", "gloo"]),
    # github.com/cocktailpeanut/fluxgym/issues/302 (Windows, torch 2.5.1)
    (
        '  File "C:\\Users\\pc\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\torch\\distributed'
        '\\elastic\\rendezvous\\static_tcp_rendezvous.py", line 67, in next_rendezvous\n'
        "    self._store = TCPStore(  # type: ignore[call-arg]\n"
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        "libuv-not-built",
        ["USE_LIBUV=0", "Windows"],
    ),
    # github.com/ROCm/legacy-rocm-build/issues/3840: Navi 33 (RDNA3), paste cut to "ocBLAS"
    (HELDOUT7[22], "rocm-no-code-for-gpu", ["Tensile kernel library", "HSA_OVERRIDE_GFX_VERSION=11.0.0"]),
    # github.com/ROCm/legacy-rocm-build/issues/2061 (an RX 6600)
    (
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
        "rocm-no-code-for-gpu",
        ["no code object", "HSA_OVERRIDE_GFX_VERSION=10.3.0"],
    ),
    # github.com/facebookresearch/detectron2/issues/157
    (HELDOUT7[76], "extension-not-built", ["detectron2's compiled ops (_C)", "pip install -e ."]),
    # github.com/pytorch/pytorch/issues/154127
    (HELDOUT7[21], "inductor-cpp-compile", ["MSVC's cl.exe", "backend='aot_eager'"]),
    # github.com/speechbrain/speechbrain/issues/1547: libsox's line above a cut traceback
    (HELDOUT7[37], "audio-file-unreadable", ["01-1_01.wav does not exist", "manifest"]),
    # github.com/pytorch/audio/issues/3753: libsox without Opus
    (HELDOUT7[38], "audio-file-unreadable", ["SoX builds often lack Opus", "backend='soundfile'"]),
    # github.com/pytorch/audio/issues/884
    (WORKING7[39], "audio-file-unreadable", ["old SoX refuses an MP3", "convert"]),
    # github.com/Sense-X/Co-DETR/issues/23: mmdet raises RLIMIT_NOFILE at import
    (HELDOUT7[29], "setrlimit-above-hard", ["builder.py:26", "RLIMIT_NOFILE", "min(wanted, hard)"]),
    # github.com/facebookresearch/ConvNeXt/issues/140: 16 images per sample into a 2-D conv stem
    (HELDOUT7[84], "conv-input-stacked", ["16 inputs per sample", "x.view(-1, 3, 448, 448)"]),
    # github.com/MrForExample/ComfyUI-3D-Pack/issues/264
    (HELDOUT7[28], "pipeline-components-missing", ["vision_encoder", "made for another pipeline class"]),
    # github.com/pawansharmaaaa/Lip_Wise/issues/20: torch built for NumPy 1.x under NumPy 2.0.0
    (
        "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash. To support both 1.x"
        " and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.\n\nTraceback (most recent call last):"
        '  File "D:\\AI\\Lip_Wise-1.2\\launch.py", line 7, in <module>\n    import infer\n'
        "RuntimeError: Numpy is not available",
        "numpy2-abi",
        ["NumPy 2.0.0", "numpy<2"],
    ),
    # github.com/ai2cm/ace/issues/378: torch.tensor of a NumPy scalar under NumPy 2
    (
        '  File "/pscratch/sd/e/elynnwu/ace/fme/fme/ace/inference/inference.py", line 73, in get_initial_condition\n'
        "    initial_condition[name] = torch.tensor(ds[name].values).to(fme.get_device())\n"
        "RuntimeError: Could not infer dtype of numpy.float32",
        "numpy2-abi",
        ["numpy<2"],
    ),
    # github.com/csxmli2016/ASFFNet512/issues/8
    (
        '  File "main_test.py", line 80, in <listcomp>\n'
        "    tmp = [np.float(i) for i in line.split(' ') if i != '\\n']\n"
        "AttributeError: module 'numpy' has no attribute 'float'.",
        "numpy-alias-removed",
        ["NumPy 1.24", "Write float (or np.float64)", "numpy<1.24"],
    ),
    # github.com/ZhenglinZhou/Data-Augmentation-Zoo-for-Object-Detection/issues/3
    (
        '  File "D:\\360极速浏览器下载\\Data_Augmentation_Zoo_for_Object_Detection-master\\Data_Augmentation_Zoo_for_'
        'Object_Detection-master\\prepare_data.py", line 167, in load_image\n'
        "    img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)\n"
        "cv2.error: OpenCV(4.5.3) C:\\Users\\runneradmin\\AppData\\Local\\Temp\\pip-req-build-q3d_8t8e\\opencv\\modules"
        "\\imgproc\\src\\color.cpp:182: error: (-215:Assertion failed) !_src.empty() in function 'cv::cvtColor'",
        "opencv-empty-image",
        ["cv2.imread", "if img is None"],
    ),
    # github.com/hunglc007/tensorflow-yolov4-tflite/issues/202 (the title's spacing)
    ("cv2 Error: (-215: Assertion failed) !src.empty() in function 'cvtColor'", "opencv-empty-image", ["path"]),
    # github.com/lllyasviel/Fooocus/issues/237
    (
        "RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough"
        " memory: you tried to allocate 26214400 bytes.",
        "host-out-of-memory",
        ["25.00 MiB", "RAM"],
    ),
    # github.com/mxfold/mxfold2/issues/20
    (
        "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you"
        " tried to allocate 132426121216 bytes. Error code 12 (Cannot allocate memory)",
        "host-out-of-memory",
        ["123.33 GiB"],
    ),
    # github.com/prateekjoshi565/Fine-Tuning-BERT/issues/9: labels kept as class names
    ("ValueError: too many dimensions 'str'", "tensor-from-non-numbers", ["class names", "index[l]"]),
    # github.com/mrnabati/CenterFusion/issues/76
    (
        "RuntimeError: CUDA error: the launch timed out and was terminated\nCUDA kernel errors might be asynchronously"
        " reported at some other API call,so the stacktrace below might be incorrect.",
        "cuda-launch-timeout",
        ["watchdog", "TdrDelay"],
    ),
    # github.com/time-series-foundation-models/lag-llama/issues/25 (lightning and pytorch-lightning both installed)
    (
        "TypeError: `model` must be a `LightningModule` or `torch._dynamo.OptimizedModule`,"
        " got `LagLlamaLightningModule`",
        "lightning-two-packages",
        ["pytorch_lightning", "lightning.pytorch"],
    ),
    # github.com/pytorch/pytorch/issues/42654: CocoDetection's annotation lists
    (
        '"python3.7/site-packages/torch/utils/data/_utils/collate.py", line 82, in default_collate\n'
        "    raise RuntimeError('each element in list of batch should be of equal size')\n"
        "RuntimeError: each element in list of batch should be of equal size",
        "collate-list-lengths",
        ["variable-length list", "tuple(zip(*batch))"],
    ),
    # github.com/sevagh/demucs.onnx/issues/4 and github.com/onnx/sklearn-onnx/issues/303
    (
        "InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: float_input for"
        " the following indices\n index: 0 Got: 38 Expected: 1\n Please fix either the inputs or the model.",
        "onnxruntime-input-dimensions",
        ["batch size 1", "dynamic_axes={'float_input': {0: 'batch'}}"],
    ),
    # github.com/richzhang/PerceptualSimilarity/issues/121
    (
        "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output",
        "anomaly-nan-gradient",
        ["sqrt at 0", "torch.sqrt(x + eps)"],
    ),
    # github.com/facebookresearch/svoice/issues/78
    (
        "RuntimeError: Function 'DivBackward0' returned nan values in its 1th output.",
        "anomaly-nan-gradient",
        ["division by zero"],
    ),
    # github.com/pytorch/pytorch/issues/140469 (a leaf multiplied by 0.01; vinsis/ternary-quantization#4: .to(device))
    (
        "ValueError: can't optimize a non-leaf Tensor",
        "optimize-non-leaf",
        [".to(device)", "requires_grad_()"],
    ),
    # github.com/Lightning-AI/pytorch-lightning/issues/3738: h0/c0 made with torch.zeros on the CPU
    (
        "RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden"
        " tensor at cpu",
        "rnn-tensors-two-devices",
        ["hidden state", "device=x.device"],
    ),
    # github.com/loicland/superpoint_graph/issues/102
    (
        '  File "learning/main.py", line 300, in main\n    json.dump(stats, outfile)\n'
        "TypeError: Object of type Tensor is not JSON serializable",
        "json-not-serializable",
        ["value.item()", "tolist()"],
    ),
    # github.com/prlz77/ResNeXt.pytorch/issues/7 (torch 0.4's wording)
    ("TypeError: tensor(0, device='cuda:0') is not JSON serializable", "json-not-serializable", ["value.item()"]),
    # github.com/ariG23498/gemma3-object-detection/issues/48: an LM head tied to the embeddings
    (
        "RuntimeError: \n            Some tensors share memory, this will lead to duplicate memory on disk and"
        " potential"
        " differences when loading them again: [{'language_model.lm_head.weight',"
        " 'language_model.model.embed_tokens.weight'}].",
        "safetensors-shared-tensors",
        ["tied weights", "save_model"],
    ),
    # github.com/safetensors/safetensors/issues/304: Llama-2 weights saved from DeepSpeed, all one buffer (the
    # thread's list of names shortened here to its first six, closed as the message closes it)
    (
        "Some tensors share memory, this will lead to duplicate memory on disk and potential differences when \n"
        "loading them again: [{'model.layers.1.self_attn.q_proj.weight', 'model.layers.11.mlp.up_proj.weight', \n"
        "'model.layers.26.mlp.down_proj.weight', 'model.layers.12.mlp.down_proj.weight', \n"
        "'model.layers.27.self_attn.q_proj.weight', 'model.embed_tokens.weight'}]",
        "safetensors-shared-tensors",
        ["views of one buffer", "ZeRO-3", "zero_to_fp32.py"],
    ),
    # github.com/slei109/PATNet/issues/14: the dataset folder is not where the code looks
    (
        '  File "/usr/local/lib/python3.9/dist-packages/PIL/Image.py", line 3030, in open\n'
        "    raise UnidentifiedImageError(\n"
        "PIL.UnidentifiedImageError: cannot identify image file '../VOCdevkit/VOC2012/JPEGImages/2010_004045.jpg'",
        "pil-not-an-image",
        ["2010_004045.jpg", "not an image"],
    ),
    # github.com/pytorch/vision/issues/138
    ("OSError: image file is truncated (54 bytes not processed)", "pil-truncated-image", ["LOAD_TRUNCATED_IMAGES"]),
    # github.com/RaleLee/Co-GAT/issues/2 and github.com/jwyang/faster-rcnn.pytorch/issues/662 (old wording)
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime version"
        " (8, 3, 3). PyTorch already comes bundled with cuDNN.",
        "cudnn-version-mismatch",
        ["(8, 5, 0)", "LD_LIBRARY_PATH"],
    ),
    (
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600",
        "cudnn-version-mismatch",
        ["7600"],
    ),
    # github.com/pytorch/pytorch/issues/100691 and github.com/detectron2/issues/2580 (older wording)
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "cuda-device-busy", ["nvidia-smi"]),
    (
        "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
        "cuda-device-busy",
        ["compute mode"],
    ),
    # github.com/ray-project/ray_lightning/issues/32 and github.com/AntixK/PyTorch-VAE/issues/81
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0, 1]\n"
        " But your machine only has: [0]",
        "lightning-gpus-unavailable",
        ["[0, 1]", "devices=[0]"],
    ),
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [1]\n"
        " But your machine only has: []",
        "lightning-gpus-unavailable",
        ["devices=1"],
    ),
    # github.com/microsoft/onnxruntime/issues/7340: a float64 array fed to a float32 graph
    (
        "InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Unexpected input data type. Actual:"
        " (tensor(double)) , expected: (tensor(float))",
        "onnxruntime-input-type",
        ["x.astype(np.float32)"],
    ),
    # github.com/ykdai/BasicPBC/issues/3 (its title; samples of different shapes, the thread says)
    (
        "RuntimeError: Caught RuntimeError in DataLoader worker process 0. && RuntimeError: Trying to resize storage"
        " that is not resizable",
        "collate-storage-not-resizable",
        ["size varies between samples", "collate_fn"],
    ),
    # github.com/jd730/OICR-pytorch/issues/26 and github.com/zhaozhengChen/ReCAM/issues/4
    (
        '  File "/home/spp/OICR-pytorch/lib/model/oicr/oicr.py", line 70, in forward\n'
        "    nb = int(num_boxes.item())\nValueError: only one element tensors can be converted to Python scalars.",
        "several-values-to-scalar",
        ["num_boxes.item()", "value[0].item()"],
    ),
    (
        "avg_meter.add({'loss_ce': loss_ce.item()})\n"
        "ValueError: only one element tensors can be converted to Python scalars",
        "several-values-to-scalar",
        ["not reduced", "mean()"],
    ),
    # github.com/ZZZBBBZZZ/MulSen-AD/issues/7
    (
        '  File "/home/data/cwl/MulSen-AD/feature_extractors/mulsen_features.py", line 1364, in run_coreset\n'
        "    self.patch_xyz_lib = torch.cat(self.patch_xyz_lib, 0)\n"
        "RuntimeError: torch.cat(): expected a non-empty list of Tensors",
        "cat-empty-list",
        ["patch_xyz_lib", "never ran", "if parts"],
    ),
]

# Near messages that mean something else: (text, the entry it must not get)
NEAR: list[tuple[str, str]] = [
    # next() on a csv reader of an empty file: not a loader's iterator
    ('  File "prep.py", line 9, in load\n    header = next(reader)\nStopIteration', "next-iterator-exhausted"),
    # "may raise StopIteration" is a comment in torch's fetch.py, not the exception
    (HELDOUT7[37], "next-iterator-exhausted"),
    # env:// naming its variable, and tcp://, are distributed-env-missing's
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK"
        " expected, but not set",
        "rendezvous-rank-missing",
    ),
    (
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
        "rendezvous-rank-missing",
    ),
    # a GPU that NCCL cannot use is not a build without NCCL
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "distributed-backend-not-built"),
    # rocBLAS without any visible GPU is not a missing architecture
    ("rocBLAS error: Could not initialize Tensile host: No devices found", "rocm-no-code-for-gpu"),
    # torch's own core, a project module, a circular import: not a package's unbuilt ops
    ("ImportError: cannot import name '_C' from 'torch' (/home/u/torch/__init__.py)", "extension-not-built"),
    ("ModuleNotFoundError: No module named 'model_resnet_mean'", "extension-not-built"),
    (
        "ImportError: cannot import name '_C' from partially initialized module 'detectron2' (most likely due to a"
        " circular import) (/home/u/detectron2/detectron2/__init__.py)",
        "extension-not-built",
    ),
    # a torchaudio without any backend is audio-no-backend's
    ("RuntimeError: Couldn't find appropriate backend to handle uri x.wav and format None.", "audio-file-unreadable"),
    # too many open files is the limit reached, not a limit raised
    ("OSError: [Errno 24] Too many open files", "setrlimit-above-hard"),
    # a tensor's own dtype reading is not strings in the data
    ("RuntimeError: Could not infer dtype of numpy.float32", "tensor-from-non-numbers"),
    # an attribute NumPy never had is not a removed alias
    ("AttributeError: module 'numpy' has no attribute 'flaot'", "numpy-alias-removed"),
    # the GPU's memory, not the machine's
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", "host-out-of-memory"),
    # torchaudio/NumPy views resized in place outside a loader are not a collate
    ("RuntimeError: Trying to resize storage that is not resizable", "collate-storage-not-resizable"),
    # a nan loss without anomaly mode names no backward function
    ("RuntimeError: Loss is nan, stopping training", "anomaly-nan-gradient"),
    # an ImportError's own cut message outside a build is not build isolation
    ("ModuleNotFoundError: No module named 'torch'", "build-isolation-no-torch"),
    # peft's own message for an adapter folder without its config is another family
    ("ValueError: Can't find 'adapter_config.json' at 'output/checkpoint-500'", "pretrained-file-missing"),
    # a KeyError 'lr' in the user's own config code is not a scheduler's
    ('  File "train.py", line 12, in main\n    lr = cfg["lr"]\nKeyError: \'lr\'', "scheduler-groups-without-lr"),
    # an address in use by the user's own server
    ("OSError: [Errno 98] Address already in use", "rendezvous-address-in-use"),
    # with the worker's own traceback in the paste, the error in it is read, not the wrapper
    (
        "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n"
        "Original Traceback (most recent call last):\n"
        '  File "train.py", line 40, in __getitem__\n    img = self.imgs[idx]\nIndexError: list index out of range',
        "worker-error-unseen",
    ),
    # tokenizers' I/O error away from from_file (a dataset path) is not a tokenizer file
    ("Exception: No such file or directory (os error 2)", "tokenizer-file-missing"),
    # without the line that converted, a list of tensors and a tensor of several values look alike
    ("ValueError: only one element tensors can be converted to Python scalars", "several-values-to-scalar"),
    # a None raised at the user's own line is none-attribute's, not a None passed into a library
    (
        '  File "train.py", line 12, in main\n    loss = out.loss.mean()\n'
        "AttributeError: 'NoneType' object has no attribute 'mean'",
        "none-passed-to-library",
    ),
    # a layer refused two ranks in turn (working7 #79): the layer's kind, not a stack per sample
    (WORKING7[79], "conv-input-stacked"),
    # a NameError is not an unbound local
    ("NameError: name 'hypothesis' is not defined", "unbound-local"),
]


@pytest.mark.parametrize(("text", "error_id", "phrases"), CASES)
def test_a_round8a_family_answers_its_texts(text, error_id, phrases):
    answer = answer_text(text, error_id)
    assert all(phrase in answer for phrase in phrases), [p for p in phrases if p not in answer]


def test_torch_missing_outside_a_build_stays_torch_not_installed():
    got = explain("ModuleNotFoundError: No module named 'torch'")
    assert got is not None and got.id == "torch-not-installed"


@pytest.mark.parametrize(("text", "error_id"), NEAR)
def test_a_near_message_does_not_get_the_family(text, error_id):
    got = explain(text)
    assert got is None or got.id != error_id
