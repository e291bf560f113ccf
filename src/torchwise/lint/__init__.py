"""``torchwise lint``: find the classic PyTorch training mistakes in the source, before a run.

Pure ``ast``: nothing here imports torch. `engine.lint_paths` is the entry point.
"""
