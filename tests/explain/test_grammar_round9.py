"""Issue 21, round 9 (explain9b): readings of Python's own message grammar and the traceback's frames,
whichever library raised. Each reading is pinned on a text reduced from a real thread (its address
beside it) and beside a near miss that the grammar matches but the evidence does not bear out, which
stays silent (or keeps another entry's answer). Texts of earlier rounds' measured halves are named by
their number there."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.lookup import explain

HELDOUT5, HELDOUT7, HELDOUT8 = working_texts("heldout5"), working_texts("heldout7"), working_texts("heldout8")
WORKING9 = working_texts("working9")


def test_a_name_no_module_registered():
    # https://github.com/facebookresearch/detectron2/issues/780 (fvcore's wording)
    text = answer_text(
        'KeyError: "No object named \'BayesianSemanticSegmentor\' found in \'META_ARCH\' registry!"',
        "registry-name-missing",
    )
    assert text.startswith("BayesianSemanticSegmentor is not in the META_ARCH registry")
    assert "the module that defines it was never imported" in text and "pip install -v -e ." in text
    # https://github.com/zyw-stu/CPA-Enhancer/issues/11 (mmengine's wording, with its own advice)
    mmengine = (
        "KeyError: 'MyYOLOV3 is not in the mmdet::model registry. Please check whether the value of `MyYOLOV3` is"
        " correct or it was registered as expected. More details can be found at https://mmengine.readthedocs.io/"
    )
    assert answer_text(mmengine, "registry-name-missing").startswith("MyYOLOV3 is not in the mmdet::model registry")
    # heldout8 #31 (csuhan/ReDet#37): the build ran from a stock mmdetection checkout
    assert "the build ran from /path/mmdetection/mmdet/models/builder.py" in answer_text(
        HELDOUT8[31], "registry-name-missing"
    )


def test_a_registered_name_spelt_otherwise_or_never_set():
    # heldout8 #33 (open-mmlab/mmcv#2975): @DETECTORS.register_module() class mymodel, config asks for Mymodel
    text = answer_text(HELDOUT8[33], "registry-name-missing")
    assert text.startswith("Mymodel is not in the detector registry: the class is named mymodel")
    # https://github.com/megvii-research/LGD/issues/1: the config key is unset
    unset = 'KeyError: "No object named \'None\' found in \'CUSTOMIZED_DETECTORS\' registry!"'
    assert answer_text(unset, "registry-name-missing").startswith("The config names no class")


def test_a_name_registered_twice():
    # heldout8 #32 (open-mmlab/mmdetection#3275): mmcv newer than the mmdetection that registers ConvWS too
    text = answer_text(HELDOUT8[32], "registry-name-twice")
    assert text.startswith("ConvWS is registered twice in mmcv's conv layer registry")
    assert "a newer mmcv that added it while an older package built on it still registers its own" in text
    # https://github.com/sunny2109/SAFMN/issues/40 (basicsr's copy of fvcore's registry)
    twice = "AssertionError: An object named 'SAFMN' was already registered in 'arch' registry!"
    assert "two classes named SAFMN" in answer_text(twice, "registry-name-twice")


def test_not_a_registry_stays_with_its_own_reading():
    # https://github.com/ucbdrive/few-shot-object-detection/issues/46: detectron2's DatasetCatalog, a
    # dataset registered twice (a cell run again), not a class registry
    assert explain("AssertionError: Dataset 'voc_2007_trainval' is already registered!") is None
    assert explain("ValueError: ReDet is not in the list") is None


FASTAI = """TypeError                                 Traceback (most recent call last)
<ipython-input-18-6f946fbd1976> in <module>
---> 13 learn2.fit_one_cycle(1, 1e-3, callbacks=[MyCallback])

~/anaconda3/envs/fv1/lib/python3.6/site-packages/fastai/train.py in fit_one_cycle(learn, cyc_len, max_lr)
---> 22     learn.fit(cyc_len, max_lr, wd=wd, callbacks=callbacks)

TypeError: on_train_begin() missing 1 required positional argument: 'self'
"""
LIGHTNING = """Traceback (most recent call last):
  File "./train_encdec_pl.py", line 33, in <module>
    callbacks=[SavePredictionCB])
  File "/ws/venv/lib/python3.6/site-packages/pytorch_lightning/trainer/trainer.py", line 239, in __init__
    self.on_init_start()
  File "/ws/venv/lib/python3.6/site-packages/pytorch_lightning/trainer/callback_hook.py", line 18, in on_init_start
    callback.on_init_start(self)
TypeError: on_init_start() missing 1 required positional argument: 'trainer'
"""
# https://github.com/weecology/DeepForest-pytorch/issues/18: the same message, no class visible, one package
ONE_PACKAGE = """Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/home/bw/env/lib/python3.7/site-packages/pytorch_lightning/trainer/trainer.py", line 347, in __init__
    self.on_init_start()
  File "/home/bw/env/lib/python3.7/site-packages/pytorch_lightning/trainer/callback_hook.py", line 48, in on_init_start
    callback.on_init_start(self)
TypeError: on_init_start() missing 1 required positional argument: 'trainer'
"""


@pytest.mark.parametrize(
    ("text", "title"),
    [
        # https://github.com/fastai/fastai/issues/1084: self is the missing argument
        (FASTAI, "on_train_begin() was called on a class, not on an object of it"),
        # https://github.com/Lightning-AI/pytorch-lightning/issues/1106: callbacks=[SavePredictionCB]
        (LIGHTNING, "on_init_start() was called on a class, not on an object of it (SavePredictionCB, not"),
    ],
)
def test_a_callback_class_passed_without_creating_it(text, title):
    answer = answer_text(text, "called-on-class")
    assert answer.startswith(title) and "callbacks=[MyCallback()]" in answer


def test_a_missing_argument_with_nothing_to_tell_stays_unknown():
    assert explain(ONE_PACKAGE) is None


def test_a_starred_argument_that_spread_too_few_values():
    # heldout8 #39 (awni/speech#44): a Python 3 zip read twice, so *batch is empty
    text = answer_text(HELDOUT8[39], "starred-too-few")
    assert text.startswith("*batch spread fewer values than collate() takes (seq2seq.py:53 in loss)")
    assert "'inputs' and 'labels' got none" in text and "list(zip(...))" in text
    assert explain(HELDOUT8[39].replace("self.collate(*batch)", "self.collate(batch)")) is None


def test_a_hook_called_across_packages_of_other_releases():
    # heldout8 #70 (huggingface/setfit#593): setfit against sentence-transformers 4's callbacks
    text = answer_text(HELDOUT8[70], "hook-between-packages")
    assert text.startswith("setfit calls on_init_end() without 'trainer'")
    assert "Install versions of setfit, transformers and sentence_transformers that were released" in text
    # the user's own function handed to the library: the message does not say which side is wrong
    handed = HELDOUT8[70].replace("on_init_end", "compute_metrics")
    assert explain(handed.replace("fn(**kwargs)", "fn(compute_metrics=compute_metrics)")) is None


def test_none_passed_in_by_the_caller():
    # heldout8 #37 (labmlai/annotated_deep_learning_paper_implementations#166)
    text = answer_text(HELDOUT8[37], "none-passed-in")
    assert text.startswith("sample is None where trainer.py:64 in get_loss unpacks it: trainer.py:116 in train_epoch")
    other = HELDOUT8[37].replace("self.get_loss(sample, split_name)", "self.get_loss(batch, split_name)")
    assert explain(other) is None


# https://github.com/atlantistin/Blogs/issues/6: a generator whose yield was commented out
ZIP_QUOTED = (
    "    for serial, (ziti, back) in enumerate(zip(gener_ziti(zi, n=10), gener_back())):  # n=5\n"
    "TypeError: zip argument #1 must support iteration\n"
)


def test_zip_given_a_call_that_returned_no_iterable():
    text = answer_text(ZIP_QUOTED, "zip-argument-not-iterable")
    assert text.startswith("gener_ziti(zi, n=10) is not iterable where zip reads it")
    assert "a generator function whose yield was removed" in text
    # https://github.com/seveas/python-hpilo/issues/22: a plain name, nothing says what it holds
    name = """Traceback (most recent call last):
  File "/home/sparksa/python-hpilo-2.1/hpilo.py", line 608, in call_delayed
    for message, processor in zip(message, self._processors):
TypeError: zip argument #1 must support iteration
"""
    assert explain(name) is None


# https://github.com/pytorch/pytorch/issues/6184: torch 0.4.0a0 unpickling weights of a newer torch
SETSTATE = """  File "/home/lzh3/anaconda3/lib/python3.6/site-packages/torch/serialization.py", line 470, in _load
    result = unpickler.load()
  File "/home/lzh3/anaconda3/lib/python3.6/site-packages/torch/autograd/variable.py", line 79, in __setstate__
    self.requires_grad, _, self._backward_hooks = state
ValueError: too many values to unpack (expected 3)
"""


@pytest.mark.parametrize("text", [SETSTATE, HELDOUT7[33]])
def test_a_state_pickled_by_another_release(text):
    answer = answer_text(text, "pickled-state-layout")
    assert answer.startswith("The file was pickled by a newer torch than the installed one")


def test_an_unpacking_in_the_user_s_own_code_is_not_a_pickle():
    own = SETSTATE.replace("__setstate__", "__getitem__").replace(
        "/home/lzh3/anaconda3/lib/python3.6/site-packages/torch/autograd/variable.py", "/home/lzh3/project/data.py"
    )
    found = explain(own)
    assert found is None or found.id != "pickled-state-layout"


def test_an_error_report_that_failed_itself():
    # heldout7 #64 (bcmi/GPSDiffusion-Object-Shadow-Generation#7): print('loading error: ' + self.data[index])
    text = answer_text(HELDOUT7[64], "error-report-failed")
    assert text.startswith("The line that reports a failure failed itself (datasets_bbx.py:41 in __getitem__)")
    metric = HELDOUT7[64].replace("print('loading error: ' + self.data[index])", "print('train error: %f' % self.err)")
    assert explain(metric) is None


def test_the_project_s_own_check_of_a_path():
    # heldout5 #1008 (TheLastBen/fast-stable-diffusion#1959): the dreambooth script's own check
    text = answer_text(HELDOUT5[1008], "own-check-not-found")
    assert text.startswith("The project's own check stopped the run: Instance images root doesn't exists.")
    library = HELDOUT5[1008].replace(
        "/content/diffusers/examples/dreambooth/train_dreambooth.py", "/usr/lib/python3/site-packages/diffusers/x.py"
    )
    assert explain(library) is None
    device = HELDOUT5[1008].replace("Instance images root doesn't exists.", "CUDA device not found.")
    assert explain(device) is None


def test_a_torch_layer_asked_for_another_release_s_method():
    # heldout8 #15 (mkshing/ziplora-pytorch#11): diffusers' LoRACompatibleLinear had set_lora_layer
    text = answer_text(HELDOUT8[15], "layer-of-another-release")
    assert text.startswith("A plain torch.nn.Linear has no set_lora_layer(): the code expects another release's layer")
    # https://github.com/lllyasviel/sd-forge-layerdiffuse/issues/126: in_features is torch's own attribute,
    # so that 'Linear' is another library's class: not this reading
    own = HELDOUT8[15].replace("set_lora_layer", "in_features")
    assert explain(own) is None


def test_a_dotted_module_missing_from_the_installed_release():
    # working9 #6 (cubiq/ComfyUI_IPAdapter_plus#309): torchvision paired with torch 1.13 has no transforms.v2
    text = answer_text(WORKING9[6], "release-without-module")
    assert text.startswith("The installed torchvision has no torchvision.transforms.v2")
    # a project's own package (its folder is in the traceback) is no release question
    project = 'File "/home/me/proj/utils/__init__.py", line 3, in <module>\n    import utils.tools\n'
    found = explain(project + "ModuleNotFoundError: No module named 'utils.tools'")
    assert found is not None and found.id == "installed-module" and "the project's own package" in found.cause


def test_a_module_attribute_missing_where_a_package_reads_it():
    # working9 #36 (huggingface/datasets#4674): a second, older pyarrow found first
    text = answer_text(WORKING9[36], "release-without-name")
    assert text.startswith("The pyarrow that was imported has no pyarrow.lib.IpcReadOptions")
    # the same name read on the user's own line: a typo is as likely, so no release answer
    own = 'File "/home/me/train.py", line 9, in <module>\n    pa.lib.IpcReadOptions()\n' + WORKING9[36].strip("`")
    found = explain(own)
    assert found is None or found.id != "release-without-name"


def test_a_framework_calling_an_override_through_torch_s_plumbing_is_not_two_packages():
    # https://github.com/qubvel-org/segmentation_models.pytorch/issues/860: Lightning 2.0 calls the user's
    # on_validation_epoch_end without outputs (the thread quotes the message; the frames are Lightning 2.0's
    # usual ones); torch's no_grad decorator in them is no second package
    text = """Traceback (most recent call last):
  File "/home/u/train.py", line 80, in <module>
    trainer.fit(model, train_dataloaders=train_loader, val_dataloaders=valid_loader)
  File "/env/lib/python3.10/site-packages/pytorch_lightning/trainer/trainer.py", line 608, in fit
    call._call_and_handle_interrupt(
  File "/env/lib/python3.10/site-packages/torch/utils/_contextlib.py", line 115, in decorate_context
    return func(*args, **kwargs)
  File "/env/lib/python3.10/site-packages/pytorch_lightning/loops/evaluation_loop.py", line 190, in _on_epoch_end
    call._call_lightning_module_hook(trainer, hook_name)
  File "/env/lib/python3.10/site-packages/pytorch_lightning/trainer/call.py", line 144, in _call_lightning_module_hook
    output = fn(*args, **kwargs)
TypeError: PetModel.on_validation_epoch_end() missing 1 required positional argument: 'outputs'
"""
    assert explain(text) is None


def test_an_image_loader_s_none_followed_to_the_call_that_passed_it():
    # https://github.com/yuxng/PoseCNN/issues/59: cv2.imread returned None for a missing file, pad_im read .shape
    text = """Traceback (most recent call last):
  File "/home/ubuntu/PoseCNN/tools/demo.py", line 129, in <module>
    test_net_images(sess, network, imdb, weights_filename, rgb_filenames, depth_filenames, meta_data)
  File "/home/ubuntu/PoseCNN/tools/../lib/fcn/test.py", line 1870, in test_net_images
    rgba = pad_im(cv2.imread(rgb_filenames[i], cv2.IMREAD_UNCHANGED), 16)
  File "/home/ubuntu/PoseCNN/tools/../lib/utils/blob.py", line 49, in pad_im
    height = im.shape[0]
AttributeError: 'NoneType' object has no attribute 'shape'
"""
    answer = answer_text(text, "none-passed-in")
    assert answer.startswith("im is None where blob.py:49 in pad_im reads .shape of it: test.py:1870")
    assert "cv2.imread does not raise when it cannot read a file, it returns None" in answer
    # the caller passes two variables: which one was None is not readable, python_values' reading stands
    two = text.replace("pad_im(cv2.imread(rgb_filenames[i], cv2.IMREAD_UNCHANGED), 16)", "pad_im(rgba, size)")
    found = explain(two)
    assert found is None or found.id != "none-passed-in"


def test_len_of_a_local_none_is_not_followed():
    # https://github.com/RUCAIBox/UniSRec/issues/27: recbole's len(temp) of a local its own line made, not a
    # value the caller passed in, so nothing says where the None came from
    text = """  File "/env/lib/python3.9/site-packages/recbole/data/dataset/dataset.py", line 268, in _load_data
    self._load_inter_feat(token, dataset_path)
  File "/env/lib/python3.9/site-packages/recbole/data/dataset/dataset.py", line 309, in _load_inter_feat
    sub_inter_lens.append(len(temp))
TypeError: object of type 'NoneType' has no len()
"""
    assert explain(text) is None
    # the same len() of a name the caller handed in names that caller
    handed = text.replace("self._load_inter_feat(token, dataset_path)", "self._load_inter_feat(temp)")
    title = "temp is None where dataset.py:309 in _load_inter_feat takes len() of it"
    assert answer_text(handed, "none-passed-in").startswith(title)


# One reduced real text per reading (test_errors checks every table entry has a case).
CASES: list[tuple[str, str, list[str]]] = [
    (HELDOUT8[31], "registry-name-missing", ["pip install -v -e ."]),
    (HELDOUT8[32], "registry-name-twice", ["install the versions of mmcv and the package that uses it"]),
    (FASTAI, "called-on-class", ["callbacks=[MyCallback()]"]),
    (HELDOUT8[39], "starred-too-few", ["list(zip(...))"]),
    (HELDOUT8[70], "hook-between-packages", ["released to work together"]),
    (HELDOUT8[37], "none-passed-in", ["Follow sample back from trainer.py:116 in train_epoch"]),
    (ZIP_QUOTED, "zip-argument-not-iterable", ["Make gener_ziti return (or yield) the items"]),
    (SETSTATE, "pickled-state-layout", ["Install the torch release that matches the file"]),
    (HELDOUT7[64], "error-report-failed", ["except Exception as e: print(path, e)"]),
    (HELDOUT5[1008], "own-check-not-found", ["pass an existing path"]),
    (HELDOUT8[15], "layer-of-another-release", ["Install the library versions the project was written for"]),
]


@pytest.mark.parametrize(("text", "error_id", "phrases"), CASES, ids=[case[1] for case in CASES])
def test_each_reading_on_its_real_text(text, error_id, phrases):
    answer = answer_text(text, error_id)
    assert all(phrase in answer for phrase in phrases), [phrase for phrase in phrases if phrase not in answer]
