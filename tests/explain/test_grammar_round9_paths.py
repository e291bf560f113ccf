"""Issue 21, round 9 (explain9b), continued: Python's grammar about imports, paths and settings read from
the traceback's frames (a circular import, a path that is None, an option never defined, a data file not
found), each on a text reduced from a real thread beside a near miss that stays silent."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text

from torchwise.explain.lookup import explain

# https://github.com/neuro-galaxy/torch_brain/issues/26: models <-> utils import each other
CYCLE = """Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/home/va/torch_brain/torch_brain/models/__init__.py", line 1, in <module>
    from .poyo_plus import POYOPlus, POYOPlusTokenizer
  File "/home/va/torch_brain/torch_brain/models/poyo_plus.py", line 20, in <module>
    from torch_brain.utils import (
  File "/home/va/torch_brain/torch_brain/utils/__init__.py", line 6, in <module>
    from .datamodules import DataModule
  File "/home/va/torch_brain/torch_brain/utils/datamodules.py", line 16, in <module>
    from torch_brain.models import POYOPlusTokenizer
ImportError: cannot import name 'POYOPlusTokenizer' from partially initialized module 'torch_brain.models' (most \
likely due to a circular import) (/home/va/torch_brain/torch_brain/models/__init__.py)
"""
# https://github.com/obss/sahi/issues/402: sahi/utils/torch.py run directly (the frame is the file the thread names)
SHADOW = """Traceback (most recent call last):
  File "/home/k/sahi/sahi/utils/torch.py", line 5, in <module>
    from torch import stack
ImportError: cannot import name 'stack' from partially initialized module 'torch' (most likely due to a circular \
import) (/home/k/sahi/sahi/utils/torch.py)
"""


def test_a_circular_import_told_apart_by_its_paths():
    text = answer_text(CYCLE, "partially-initialized-module")
    assert text.startswith("A circular import in the project: torch_brain.models is imported again")
    assert "models/__init__.py:1 -> models/poyo_plus.py:20 -> utils/__init__.py:6 -> utils/datamodules.py:16" in text
    text = answer_text(SHADOW, "partially-initialized-module")
    assert text.startswith("/home/k/sahi/sahi/utils/torch.py is named like the package torch, so it imports itself")
    # https://github.com/marcelotduarte/cx_Freeze/issues/1380 (torch's own file in a frozen app) and
    # https://github.com/ZhendongWang6/Uformer/issues/61 (no path, no frames): nothing tells the cause
    frozen = (
        "ImportError: cannot import name '_VF' from partially initialized module 'torch' (most likely due to a"
        " circular import) (\\.freezedproject\\lib\\torch\\__init__.pyc)"
    )
    assert explain(frozen) is None
    bare = "AttributeError: partially initialized module 'torch' has no attribute 'cuda' (most likely due to a circular"
    bare += " import)"
    found = explain(bare)
    assert found is None or found.id != "partially-initialized-module"  # torch-attribute-missing's reading stands


# https://github.com/tianweiy/CenterPoint-KITTI/issues/13 (the maintainer: specify the config with --cfg_file)
CFG_FILE = """Traceback (most recent call last):
  File "/content/CenterPoint-KITTI-main/OpenPCDet/tools/train.py", line 59, in main
    args, cfg = parse_config()
  File "/content/CenterPoint-KITTI-main/OpenPCDet/tools/train.py", line 48, in parse_config
    cfg_from_yaml_file(args.cfg_file, cfg)
  File "/content/CenterPoint-KITTI-main/OpenPCDet/pcdet/config.py", line 72, in cfg_from_yaml_file
    with open(cfg_file, 'r') as f:
TypeError: expected str, bytes or os.PathLike object, not NoneType
"""


def test_a_path_that_is_an_option_never_given():
    text = answer_text(CFG_FILE, "path-is-none")
    assert text.startswith("args.cfg_file is None where a path is expected (train.py:48 in parse_config)")
    assert "pass --cfg_file <path> on the command line" in text
    # https://github.com/sergeyprokudin/smplpix/issues/17: the setting is on the line that calls os.path.join
    smplpix = """  File "D:\\\\smplpix-main\\\\build\\\\lib\\\\smplpix\\\\train.py", line 64, in main
    train_dir = os.path.join(args.data_dir, 'train')
  File "C:\\\\Users\\\\u\\\\.conda\\\\envs\\\\py\\\\lib\\\\ntpath.py", line 78, in join
    path = os.fspath(path)
TypeError: expected str, bytes or os.PathLike object, not NoneType
"""
    assert answer_text(smplpix, "path-is-none").startswith("args.data_dir is None where a path is expected")
    # https://github.com/xavysp/DexiNed/issues/44: two settings on the line, which one was None is not read
    two = "os.path.join(args.dataset_dir, args.train_dataset)"
    dexined = smplpix.replace("os.path.join(args.data_dir, 'train')", two)
    assert explain(dexined) is None





# https://github.com/tanshuai0219/EDTalk/issues/45 (the maintainer: semantic_radius is unused, delete the line)
NO_OPTION = """Traceback (most recent call last):
  File "/root/avatar_project/EDTalk/train/train_E_G.py", line 92, in main
    dataset = VoxDataset(args, is_inference= False, transform = transform)
  File "/root/avatar_project/EDTalk/train/datasets/dataset_MEAD_HDTF.py", line 47, in __init__
    self.semantic_radius = opt.semantic_radius
AttributeError: 'Namespace' object has no attribute 'semantic_radius'
"""


def test_a_setting_the_options_never_defined():
    text = answer_text(NO_OPTION, "setting-not-defined")
    assert text.startswith("opt.semantic_radius is read, but the options define no --semantic_radius")
    assert "parser.add_argument('--semantic_radius'" in text and "remove the read" in text
    # https://github.com/kaanakan/slamp/pull/6: .train() called on a Namespace is an object that is not the
    # model, not a missing option
    called = NO_OPTION.replace("self.semantic_radius = opt.semantic_radius", "v.train()").replace(
        "'semantic_radius'", "'train'"
    )
    assert explain(called) is None





# https://github.com/layumi/Person_reID_baseline_pytorch/issues/214: the README's your_data_path passed as is
PLACEHOLDER_PATH = """Traceback (most recent call last):
  File "train.py", line 120, in <module>
    data_transforms['train'])
  File "/home/zhuda/anaconda3/lib/python3.7/site-packages/torchvision/datasets/folder.py", line 121, in _find_classes
    classes = [d.name for d in os.scandir(dir) if d.is_dir()]
FileNotFoundError: [Errno 2] No such file or directory: 'your_data_path/train_all'
"""


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        (PLACEHOLDER_PATH, "The path still holds a placeholder (your_data_path/train_all)"),
        # https://github.com/johri-lab/Automatic-leaf-infection-identifier/issues/56: a relative path
        (
            "FileNotFoundError: [Errno 2] No such file or directory: 'datasetlog/Datasetunlabelledlog.csv'",
            "datasetlog/Datasetunlabelledlog.csv is a relative path",
        ),
        # https://github.com/Linfeng-Tang/SuperFusion/issues/1: another machine's absolute path in the code
        (
            '  File "G:\\\\SuperFusion\\\\utils\\\\utils.py", line 55, in <module>\n'
            '    img = Image.open("/data1/timer/JAS/datasets/VIS_IR/ir/0.png")\n'
            "FileNotFoundError: [Errno 2] No such file or directory: '/data1/timer/JAS/datasets/VIS_IR/ir/0.png'",
            "points to another machine's folder",
        ),
    ],
)
def test_a_file_not_found_read_from_the_path_s_shape(text, phrase):
    assert phrase in answer_text(text, "file-not-found")


def test_a_name_without_a_path_or_a_program_is_not_a_data_file():
    # https://github.com/bubbliiiing/retinanet-pytorch/issues/3: '288', an annotation line split at a space
    assert explain("FileNotFoundError: [Errno 2] No such file or directory: '288'") is None
    program = (
        '  File "/usr/lib/python3.10/subprocess.py", line 1847, in _execute_child\n'
        "    raise child_exception_type(errno_num, err_msg, err_filename)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'"
    )
    assert explain(program) is None





def test_a_file_written_into_a_folder_that_does_not_exist():
    # the same message from a write: the folder was never created (not data never downloaded)
    text = (
        '  File "/home/u/proj/train.py", line 210, in main\n'
        "    with open(os.path.join(args.out_dir, 'log.txt'), 'w') as f:\n"
        "FileNotFoundError: [Errno 2] No such file or directory: '/home/u/proj/outputs/run1/log.txt'"
    )
    answer = answer_text(text, "file-not-found")
    assert "its folder /home/u/proj/outputs/run1 does not exist" in answer and "os.makedirs" in answer





# https://github.com/allanj/pytorch_neural_crf/issues/22 (transformers 4.0.0; fixed with return_dict=False)
STR_SIZE = """is it the version of transformers? The version of transformers I used is  4.0.0
Error output is : AttributeError: 'str' object has no attribute 'size'
"""


def test_a_string_where_a_tensor_was_expected():
    text = answer_text(STR_SIZE, "string-for-tensor")
    assert text.startswith("A model's output dict was unpacked as a tuple: .size on a key's name")
    assert "return_dict=False" in text
    # without the library named, the dict reading in general terms
    bare = answer_text("AttributeError: 'str' object has no attribute 'backward'", "string-for-tensor")
    assert bare.startswith("A string where a tensor was expected") and "gives its keys" in bare
    # not a tensor method: Python 3's str against bytes, left alone
    assert explain("AttributeError: 'str' object has no attribute 'decode'") is None





# https://github.com/sksq96/pytorch-summary/issues/56: torchsummary's hook reads .size() of an LSTM's tuple
SUMMARY_LSTM = """  File "C:\\\\Users\\\\simon\\\\deep_rl\\\\network\\\\network_bodies.py", line 149, in forward
    y, (h_n,c_n) = self.lstm1(x)
  File "C:\\\\Anaconda\\\\lib\\\\site-packages\\\\torch\\\\nn\\\\modules\\\\module.py", line 491, in __call__
    hook_result = hook(self, input, result)
  File "C:\\\\Anaconda\\\\lib\\\\site-packages\\\\torchsummary\\\\torchsummary.py", line 23, in hook
    [-1] + list(o.size())[1:] for o in output
AttributeError: 'tuple' object has no attribute 'size'
"""


def test_a_layer_s_tuple_where_a_tool_expects_a_tensor():
    text = answer_text(SUMMARY_LSTM, "tuple-for-tensor")
    assert text.startswith("torchsummary expects one tensor per layer, and an LSTM layer returns a tuple")
    assert "torchinfo" in text
    # https://github.com/hyseob/PyMDNet/issues/25: a tuple with no layer that returns one in the paste
    mdnet = (
        '  File "run_tracker.py", line 164, in run_mdnet\n    feat_dim = pos_feats.size(-1)\n'
        "AttributeError: 'tuple' object has no attribute 'size'"
    )
    assert explain(mdnet) is None


# One reduced real text per reading, with a phrase of its answer: test_errors checks that every entry
# of the table has such a case.


# One reduced real text per reading of this file (test_errors checks every table entry has a case).
CASES: list[tuple[str, str, list[str]]] = [
    (CYCLE, "partially-initialized-module", ["Break the cycle"]),
    (CFG_FILE, "path-is-none", ["pass --cfg_file <path>"]),
    (NO_OPTION, "setting-not-defined", ["getattr(opt, 'semantic_radius', default)"]),
    (PLACEHOLDER_PATH, "file-not-found", ["Replace the placeholder with the real path"]),
    (STR_SIZE, "string-for-tensor", ["from_pretrained(..., return_dict=False)"]),
    (SUMMARY_LSTM, "tuple-for-tensor", ["wrap the layer in a small module"]),
]


@pytest.mark.parametrize(("text", "error_id", "phrases"), CASES, ids=[case[1] for case in CASES])
def test_each_reading_on_its_real_text(text, error_id, phrases):
    answer = answer_text(text, error_id)
    assert all(phrase in answer for phrase in phrases), [phrase for phrase in phrases if phrase not in answer]
