"""Hugging Face: datasets, tokenizers and transformers models through torchwise's own batch
contract (imported only when a run uses them: ``pip install torchwise[hf]``)."""
