"""Known errors of ONNX Runtime refusing an input that does not match the exported graph.

An exported ONNX graph fixes each input's element type, rank and every dimension that was not
declared dynamic at export; ONNX Runtime checks the feed against it and names the input, the
index and both values: "Got invalid dimensions for input: input for the following indices
index: 0 Got: 4 Expected: 1", "Unexpected input
data type. Actual: (tensor(double)) , expected: (tensor(float))".
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _dimensions(match: re.Match[str], text: str) -> Explanation:
    name, index, got, expected = match.group(1), match.group(2), match.group(3), match.group(4)
    batch = index == "0"
    return answer(
        title=f"ONNX Runtime: input '{name}' has size {got} at dimension {index}, the graph fixes {expected}",
        meaning=(
            f"The exported graph declares dimension {index} of '{name}' as the constant {expected}"
            f" (it was not marked dynamic at export), and the feed has {got} there."
        ),
        cause=(
            f"The model was exported with a dummy input of batch size {expected} and no dynamic batch"
            " axis, and is now run with another batch size."
            if batch
            else f"The model was exported with a dummy input whose dimension {index} was {expected}, not"
            " marked dynamic, and is now fed another size (another image size or sequence length)."
        ),
        fix=(
            "Export again with that axis dynamic: torch.onnx.export(..., input_names=['"
            + name
            + f"'], dynamic_axes={{'{name}': {{{index}: '{'batch' if batch else 'dim' + index}'}}}}) (or"
            " dynamic_shapes with the dynamo exporter); or feed the size the graph expects."
        ),
    )


def _element_type(match: re.Match[str], text: str) -> Explanation:
    actual, expected = match.group(1), match.group(2)
    numpy_name = {"float": "np.float32", "double": "np.float64", "int64": "np.int64", "int32": "np.int32"}
    cast = numpy_name.get(expected, expected)
    return answer(
        title=f"ONNX Runtime: an input is {actual}, the graph expects {expected}",
        meaning=f"The exported graph's input type is tensor({expected}); the array fed is tensor({actual}).",
        cause=(
            "NumPy arrays default to float64 (double) and int64; the model was exported with float32"
            " (or the other way round), and the array was not cast."
        ),
        fix=f"Cast the feed: x.astype({cast}) before session.run.",
    )


KNOWN: list[KnownError] = [
    known(
        "onnxruntime-input-dimensions",
        r"Got invalid dimensions for input: (\S+) for the following indices\s+index: (\d+) Got: (\d+) Expected: (\d+)",
        _dimensions,
    ),
    known(
        "onnxruntime-input-type",
        r"Unexpected input data type\. Actual: \(tensor\((\w+)\)\)\s*, expected: \(tensor\((\w+)\)\)",
        _element_type,
    ),
]
