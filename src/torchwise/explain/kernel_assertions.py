"""What a GPU kernel's own assertion line says failed (``Assertion `t >= 0 && t < n_classes` failed``):
the checks explain reads, shared by ``runtime_errors``' device-side assert and the evidence gate,
which withholds the bare reading where the kernel names a check not listed here. Pure data.
"""

# The kernel assertion printed before "device-side assert triggered" names the real error.
ASSERTIONS = (
    (
        r"srcIndex < srcSelectDimSize|indexSelect",
        "an index >= num_embeddings reached nn.Embedding (or index_select)",
        "check the ids: assert ids.max() < emb.num_embeddings (a tokenizer larger than the"
        " vocabulary, or a sequence longer than the position embeddings)",
    ),
    (
        r"t >= 0 && t < n_classes|cur_target >= 0 && cur_target < n_classes",
        "a class label >= the number of classes (or negative) reached CrossEntropyLoss/NLLLoss",
        "check the labels: assert 0 <= y.min() and y.max() < num_classes (labels counted from 1,"
        " or an ignore value other than -100)",
    ),
    (
        r"index out of bounds|-sizes\[i\] <= index && index < sizes\[i\]",
        "a tensor index is out of range (x[idx], gather or scatter with an index >= the size)",
        "check the index tensor: assert idx.min() >= -n and idx.max() < n for the indexed size n",
    ),
    (
        r"input_val >= zero && input_val <= one",
        "BCELoss got values outside [0, 1] (raw logits, or NaN)",
        "use nn.BCEWithLogitsLoss on the raw outputs instead of BCELoss",
    ),
)
