"""The checkpoint format, in one place that training, loading and export read.

``checkpoint`` saves and loads a checkpoint folder (safetensors + meta.json, checksummed);
``checkpoint_folder`` swaps it into place atomically; ``state_codec`` turns training state into
tensors and JSON; ``tensor_file`` writes and hashes safetensors files; ``compare`` says how saved
weights fit a model; ``weights`` reads weights saved by other tools. Nothing here imports from
``torchwise.train``: data flows from training into this package, never back.

Importing ``torchwise.checkpoints`` alone loads nothing heavy; its modules import torch.
"""
