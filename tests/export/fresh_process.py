"""Loads artefacts the way a deployment does, in a process that never imports torchwise.

Run as ``python fresh_process.py JOBS.json``: each job names an artefact, its format, a .pt file
of named input tensors and where to write the outputs. The structure to call the model with is
read from the artefact's manifest, as a user would.
"""

import json
import sys

import torch


def call(module, structure, names, inputs):
    if structure == "tensor":
        return module(inputs[names[0]])
    if structure == "tuple":
        return module(*[inputs[n] for n in names])
    return module(**{n: inputs[n] for n in names})


def leaves(output):
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, dict):
        return [t for value in output.values() for t in leaves(value)]
    return [t for value in output for t in leaves(value)]


def main(jobs_file):
    for job in json.load(open(jobs_file)):
        manifest = json.load(open(job["manifest"]))
        names = [t["name"] for t in manifest["inputs"]["tensors"]]
        structure = manifest["inputs"]["structure"]
        inputs = torch.load(job["inputs"], weights_only=True)
        if job["format"] == "onnx":
            import onnxruntime

            session = onnxruntime.InferenceSession(job["artefact"], providers=["CPUExecutionProvider"])
            outputs = [torch.from_numpy(o) for o in session.run(None, {n: inputs[n].numpy() for n in names})]
        else:
            if job["format"] == "exported":
                module = torch.export.load(job["artefact"]).module()
            else:
                module = torch.jit.load(job["artefact"])
            with torch.inference_mode():
                outputs = leaves(call(module, structure, names, inputs))
        torch.save(outputs, job["outputs"])
    loaded = sorted(name for name in sys.modules if name.split(".")[0] == "torchwise")
    print(json.dumps({"torchwise_modules": loaded}))


if __name__ == "__main__":
    main(sys.argv[1])
