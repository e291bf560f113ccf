"""Export a trained model to an artefact that runs without torchwise, verify it, and predict with it.

``formats`` writes torch.export / TorchScript / ONNX files, ``runtime`` loads them back,
``verify`` compares them with the eager model, ``manifest`` records how to use them,
``exporter`` puts these together, and ``predict`` runs batch inference from a run or an artefact.
"""
