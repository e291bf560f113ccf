"""Known errors of loading a state dict into a model: keys the model has and the checkpoint lacks
(or the other way round), prefixes that wrappers add, and tensors whose sizes differ.

The answer is read from the whole message: the key lists and size lines below its first line.
"""

from __future__ import annotations

import re

from torchwise.explain.checkpoint_keys import cut_keys, cut_keys_reading, listed_keys, listing_cut, whole_checkpoint
from torchwise.explain.evidence_gate import permuted
from torchwise.explain.evidence_readings import permuted_layout_reading, repeated_tensor, repeated_tensor_reading
from torchwise.explain.explanation import Explanation, KnownError, answer, dims, fact, known, sentence, told_apart
from torchwise.explain.stated_facts import stored_constants, stored_constants_reading


def _nesting(missing: list[str], unexpected: list[str]) -> tuple[str, str] | None:
    """(prefix, "checkpoint") when every key the checkpoint has is a key of the model with one
    prefix in front (a larger model's state dict), (prefix, "model") the other way round (the
    model wraps the saved network); None otherwise. The wrappers' own prefixes are read above."""
    for longer, shorter, side in ((unexpected, missing, "checkpoint"), (missing, unexpected, "model")):
        if not longer or not shorter:
            continue
        prefixes = {
            key[: len(key) - len(inner)] for key in longer for inner in shorter if key.endswith("." + inner)
        }
        if len(prefixes) == 1:
            prefix = prefixes.pop()
            exact = all(key.startswith(prefix) and key[len(prefix) :] in shorter for key in longer)
            # round 8: every key the model lacks is in the file under the prefix, beside the larger
            # model's other parts (InferSent's "encoder." inside an NLI net with its classifier)
            covered = side == "checkpoint" and all(prefix + inner in longer for inner in shorter)
            if prefix not in ("module.", "_orig_mod.") and (exact or covered):
                return prefix, side
    return None


def _vocabulary_rows(name: str, saved: str, current: str) -> bool:
    """A token table (embed_tokens, wte, word_embeddings, lm_head, shared) that differs only in rows."""
    before, after = dims(saved), dims(current)
    table = re.search(r"embed|wte\b|lm_head|\bshared\b|tok_embeddings|word_embeddings", name)
    same_width = len(before) == len(after) == 2 and before[1] == after[1]
    return bool(table) and same_width and before[0] != after[0] and min(before[0], after[0]) >= 1000


SEVERAL_GPUS = re.compile(r"\b(?:[2-9]|two|several|multiple) GPUs\b|multi-?gpu|DataParallel", re.IGNORECASE)


def _shown(keys: list[str], most: int = 4) -> str:
    more = f" and {len(keys) - most} more" if len(keys) > most else ""
    return ", ".join(keys[:most]) + more


STRICT_FALSE = (
    ". model.load_state_dict(state, strict=False) skips missing and unexpected keys (those layers"
    " keep their initial weights: check the missing_keys and unexpected_keys it returns) but never"
    " a size mismatch."
)
# strict=False on the whole checkpoint would skip every key and load no weight at all
STRICT_FALSE_IS_EMPTY = ". Do not reach for strict=False here: it would skip every key and load nothing."


# A task head that a pretrained encoder does not have (missing keys all of it: the fine-tuned model)
HEAD = re.compile(r"(?:head|heads|fc|fc_norm|classifier|cls_head|pre_logits|last_linear)\.")


def _decoder(unexpected: list[str]) -> list[str]:
    """The checkpoint's extra keys that are a decoder's (MAE's decoder_blocks, a model's decoder.)."""
    return [key for key in unexpected if re.match(r"(?:\w+\.)?decoder", key)]


def _optimizer_state(unexpected: list[str]) -> bool:
    """The dict passed is an optimizer's state_dict: its two top-level keys."""
    return {"state", "param_groups"} <= set(unexpected)


def _state_dict(match: re.Match[str], text: str) -> Explanation | None:
    named = match.group(1) or fact(text, r"Error\(s\) in loading state_dict for (\w+)")
    model = f" {named}" if named else ""  # the old wording names no class
    missing, unexpected = listed_keys("Missing", text), listed_keys("Unexpected", text)
    # \s+ between words: pasted logs often wrap these long lines
    sizes = re.findall(
        r"size mismatch\s+for ([\w.]+): copying a param with shape\s+torch\.Size\(\[([\d, ]*)\]\)"
        r"\s+from checkpoint, the shape in current model is\s+torch\.Size\(\[([\d, ]*)\]\)",
        text,
    )
    # torch before 1.0: "While copying the parameter named X, whose dimensions in the model are
    # torch.Size([22, 200]) and whose dimensions in the checkpoint are torch.Size([20, 200])."
    sizes += [
        (name, saved, current)
        for name, current, saved in re.findall(
            r"While copying the parameter named \"?([\w.]+)\"?, whose dimensions in the model are"
            r" torch\.Size\(\[([\d, ]*)\]\) and whose dimensions in the checkpoint are"
            r" torch\.Size\(\[([\d, ]*)\]\)",
            text,
        )
    ]
    facts, causes, fixes = [], [], []
    if missing:
        facts.append(
            f"the model has {len(missing)} key(s) the checkpoint lacks ({_shown(missing)})"
        )
    if unexpected:
        facts.append(
            f"the checkpoint has {len(unexpected)} key(s) the model lacks ({_shown(unexpected)})"
        )
    entry = whole_checkpoint(missing, unexpected)
    if _optimizer_state(unexpected):
        entry = "state"  # like a whole checkpoint, strict=False would load nothing
        causes.append(
            "the file holds an optimizer's state (its keys state and param_groups): it was saved"
            " from optimizer.state_dict(), or the run saved model and optimizer to separate files"
            " and the optimizer's was picked"
        )
        fixes.append(
            "load the file saved from model.state_dict() (or the checkpoint entry that holds it),"
            " and pass the optimizer's file to optimizer.load_state_dict"
        )
    elif entry:
        beside = " beside the epoch, the optimizer and the run's settings" if len(unexpected) > 1 else ""
        causes.append(
            f"the file is {'a whole training' if beside else 'a'} checkpoint (a dict with the weights under"
            f" '{entry}'{beside}), and that dict"
            " was passed to load_state_dict instead of the weights inside it"
        )
        fixes.append(
            f"checkpoint = torch.load(path, map_location='cpu');"
            f" model.load_state_dict(checkpoint['{entry}'])"
        )
    for prefix, source in (
        ("module.", "DataParallel/DistributedDataParallel"),
        ("_orig_mod.", "torch.compile"),
    ):
        if missing and all(key.startswith(prefix) for key in missing) and not unexpected:
            # the other direction: a wrapped model (model = DataParallel(model)) given a plain
            # checkpoint; "module.module." means the model was wrapped twice
            twice = all(key.startswith(prefix * 2) for key in missing)
            causes.append(
                f"the model is wrapped in {source}{' twice' if twice else ''}, which adds"
                f" '{prefix}' to every key the model expects, while the checkpoint was saved"
                " from the bare model"
            )
            fixes.append(
                f"load into the inner model (model.module.load_state_dict(state)), or add the"
                f' prefix: state = {{"{prefix}" + k: v for k, v in state.items()}}'
                + (f"; and wrap only once: model.module is already a {source}" if twice else "")
            )
        # a model that IS the wrapper ("for DataParallel") expects the prefix itself: its extra
        # keys are layers the model lacks, not a wrapper's mark
        wrapper = named in ("DataParallel", "DistributedDataParallel", "OptimizedModule")
        if unexpected and all(key.startswith(prefix) for key in unexpected) and not wrapper:
            causes.append(
                f"the checkpoint was saved from a {source} wrapper,"
                f" which adds '{prefix}' to every key"
            )
            fixes.append(
                f'state = {{k.removeprefix("{prefix}"): v for k, v in state.items()}}'
                " before load_state_dict"
            )
    for name, saved, current in sizes:
        facts.append(f"{name} is [{saved}] in the checkpoint but [{current}] in the model")
    if sizes and all(dims(current) in ([], [0]) for _, _, current in sizes):
        # the model's own parameters are empty: partitioned at construction, not built smaller
        causes.append(
            "the model's parameters are empty placeholders (shape [0]): under DeepSpeed ZeRO-3"
            " (zero.Init, or transformers' HfDeepSpeedConfig) or FSDP each rank holds only its"
            " shard, so a plain load_state_dict cannot copy the full tensors into them"
        )
        fixes.append(
            "load the weights through from_pretrained (it gathers and partitions them), or inside"
            " deepspeed.zero.GatheredParameters(list(model.parameters()), modifier_rank=0), or before"
            " ZeRO-3 or FSDP wraps the model"
        )
    elif sizes and all(_vocabulary_rows(name, saved, current) for name, saved, current in sizes):
        # round 8: only the token tables differ, and only in their rows: another vocabulary size
        saved_rows = dims(sizes[0][1])[0]
        causes.append(
            f"only the token embedding and output tables differ, in their number of rows ({saved_rows} in the"
            f" checkpoint, {dims(sizes[0][2])[0]} in the model): a vocabulary of another size, from tokens added"
            " to the tokenizer (a pad token) with the embeddings resized on one side, or a config with another"
            " vocab_size (a padded vocabulary, another variant of the model)"
        )
        fixes.append(
            f"give the model the checkpoint's table size before loading: model.resize_token_embeddings({saved_rows})"
            f" (or config.vocab_size={saved_rows}), and use the tokenizer saved with the checkpoint"
        )
    elif sizes and all(permuted(dims(saved), dims(current)) for _, saved, current in sizes):
        cause, fix = permuted_layout_reading([name for name, _, _ in sizes])  # round 9: a layout, not sizes
        causes.append(cause)
        fixes.append(fix)
    elif sizes:
        names = ", ".join(f'"{name}"' for name, _, _ in sizes)
        causes.append(
            "the model is built with other sizes than at save time (number of classes, hidden size)"
        )
        fixes.append(
            "build the model with the sizes used when saving; or, to reuse all but those layers"
            f" (a new head for fine-tuning), drop them first: state = {{k: v for k, v in"
            f" state.items() if k not in {{{names}}}}} and load with strict=False"
        )
    cut = cut_keys(missing, unexpected) if not causes else None  # round 10: a prefix stripped by position
    if cut:
        example = next((key, key[cut:]) for key in missing if key[cut:] in unexpected and len(key) > cut + 2)
        cause, fix = cut_keys_reading(cut, example)
        causes.append(cause)
        fixes.append(fix)
    nested = _nesting(missing, unexpected) if not causes else None
    if nested and nested[1] == "checkpoint":
        causes.append(
            f"the file holds a larger model, of which this{model} is the part under '{nested[0]}'"
            f" (its keys are this model's with '{nested[0]}' in front): the whole model's state"
            " dict was loaded into one of its submodules"
        )
        fixes.append(
            f"load it into the whole model it was saved from (then take the part from it), or keep"
            f" that part's keys: state = {{k.removeprefix(\"{nested[0]}\"): v for k, v in"
            f' state.items() if k.startswith("{nested[0]}")}}'
        )
    elif nested:
        causes.append(
            f"this{model} wraps the saved network under '{nested[0]}' (its keys are the checkpoint's"
            f" with '{nested[0]}' in front): the file was saved from the bare network, and the"
            " script that loads it builds the network inside another module"
        )
        fixes.append(
            f"load into that part: model.{nested[0].rstrip('.')}.load_state_dict(state), or build and"
            " wrap the network the way the script that saved it did"
        )
    if not causes and unexpected and all(key.endswith("position_ids") for key in unexpected):
        causes.append(
            "the checkpoint was saved with an older transformers, which stored the text encoder's"
            " position_ids as a buffer in the state dict; newer releases (4.31 and later) no"
            " longer register it, so the key is left over (it only holds 0, 1, 2, ...)"
        )
        fixes.append(
            "load with strict=False (nothing is lost: position_ids is rebuilt by the model), or"
            " delete the key first: state.pop(key), or install the transformers the checkpoint"
            " was made with"
        )
    # round 9: one tensor of every layer on one side only is a code version, not a model's options
    side, keys = ("checkpoint", unexpected) if unexpected and not missing else ("model", missing)
    repeated = repeated_tensor(keys) if not causes and not (missing and unexpected) else None
    constants = stored_constants(unexpected) if not causes and not missing and not repeated else None
    if repeated or constants:  # after round 9: a nested module's stored constants are a release, not options
        cause, fix = (repeated_tensor_reading(repeated, len(keys), side=side) if repeated
                      else stored_constants_reading(constants, len(unexpected)))
        causes.append(cause)
        fixes.append(fix)
    if not causes and unexpected and not missing:
        causes.append(
            "the model was built with fewer parts than the one that was saved: an option given"
            " when building it (a branch or head switched off, another variant or number of"
            " types/classes) differs from training, or the code dropped those layers"
        )
        fixes.append(
            "build the model with the same options the checkpoint was trained with (the"
            " config or command-line flags saved with it)"
        )
    elif not causes and missing and not unexpected and listing_cut("Missing", text):
        # torch lists the unexpected keys after the missing ones: a listing cut short hides them,
        # and with them whether the checkpoint's keys are the same layers under other names
        if not SEVERAL_GPUS.search(text):
            return None
        causes.append(
            "the checkpoint was saved on several GPUs (the paste says so), where the model was"
            " wrapped in nn.DataParallel/DistributedDataParallel: its keys carry a 'module.'"
            " prefix, so none of the bare model's keys is found (the unexpected keys, cut from"
            " the paste, are the same layers with the prefix)"
        )
        fixes.append(
            "check with print(next(iter(state))); strip the prefix before loading:"
            ' state = {k.removeprefix("module."): v for k, v in state.items()} (or save'
            " model.module.state_dict() when training on several GPUs)"
        )
    elif not causes and missing and not unexpected:
        causes.append(
            "the model has parts the checkpoint never had: it was built with other options"
            " (an extra head or branch, another variant), or the checkpoint holds only part of"
            " the model (a backbone, or one of several saved state dicts)"
        )
        fixes.append(
            "build the model with the options used at save time, or load the part the"
            " checkpoint holds into that sub-module (model.backbone.load_state_dict(state))"
        )
    elif not causes and missing and _decoder(unexpected) and all(HEAD.match(key) for key in missing):
        causes.append(
            f"the file holds a model with a decoder ({_shown(_decoder(unexpected), 3)}) and no task"
            f" head, and this{model} is the fine-tuned model whose head ({_shown(missing, 3)}) the"
            " file lacks: a pretraining checkpoint (a masked autoencoder's encoder and decoder,"
            " say) was given where a fine-tuned one is expected (to evaluate or to resume)"
        )
        fixes.append(
            "give the fine-tuned checkpoint (the one whose keys include the head) to evaluate or"
            " resume; to start fine-tuning from the pretrained one, load only its encoder (the"
            " project's fine-tune or pretrained-weights option, not resume), leaving the head new"
        )
    elif not causes:
        causes.append(
            "the model's code changed since the checkpoint was saved (layers added, renamed or removed:"
            " another release of the project or library), or the file was saved from another model or variant"
        )
        fixes.append(
            "load with the model code that saved the checkpoint (or the checkpoint made for this model),"
            " or rename the keys in the dict"
        )
    return answer(
        title=f"The checkpoint does not fit the model{model}",
        meaning=(
            "load_state_dict matches tensors by name and shape: "
            + "; ".join(facts or ["keys differ"])
            + "."
        ),
        cause=sentence("; ".join(causes)),
        fix="; ".join(fixes) + (STRICT_FALSE_IS_EMPTY if entry or cut else STRICT_FALSE),
    )


def _old_unexpected_key(match: re.Match[str], text: str) -> Explanation:
    key = match.group(1)
    prefixed = key.startswith("module.")
    return answer(
        title=f"The checkpoint has a key the model lacks: {key} (torch 0.3's wording)",
        meaning=(
            "load_state_dict (torch before 0.4) stops at the first key of the checkpoint that the"
            " model has no parameter for."
        ),
        cause=(
            "The checkpoint was saved from a DataParallel/DistributedDataParallel wrapper, which adds"
            " 'module.' to every key" if prefixed else
            "The checkpoint was saved by another version of the model's code (layers renamed, added"
            " or removed)"
        ) + ".",
        fix=(
            'Strip the prefix before loading: state = {k.replace("module.", "", 1): v for k, v in'
            " state.items()}, or load into model.module; or use the checkpoint released for this code."
            if prefixed else
            "Load it with the model code that saved it, or the checkpoint released for this code."
        ),
    )


def _dict_as_model(match: re.Match[str], text: str) -> Explanation:
    attribute = match.group(1)
    return answer(
        title=f"A state_dict was used as a model (OrderedDict has no .{attribute})",
        meaning=(
            "torch.load returned an OrderedDict of tensors (a state_dict: the weights only), and"
            f" the code calls .{attribute}() on it as if it were the model object."
        ),
        cause=(
            "The file holds model.state_dict() (official weights are usually saved that way), while"
            " the script expects a whole pickled model (torch.save(model)); or it holds a checkpoint"
            " dict whose weights sit under a key."
        ),
        fix=(
            "Build the model from its class or config, then load the weights into it: model ="
            " TheModel(...); model.load_state_dict(torch.load(path, map_location='cpu')) (or"
            " checkpoint['model'] / ['state_dict']), and call .to()/.eval() on that model."
        ),
    )

KNOWN: list[KnownError] = [
    told_apart(
        "state-dict-mismatch",
        r"Error\(s\) in loading state_dict for (\w+)"
        r"|While copying the parameter named \"?[\w.]+\"?, whose dimensions in the model are()"
        r"|(?:^\s*|error: )(?:Missing|Unexpected) key\(s\) in state_dict: \"[\w.]+\"()"  # quoted alone
        r"|(?:^\s*|error: )size mismatch\s+for [\w.]+: copying a param with shape()",
        _state_dict,
        re.MULTILINE,
    ),
    known(
        "state-dict-mismatch",
        r"unexpected key \"([\w.]+)\" in state_dict",  # torch 0.3 raised a KeyError
        _old_unexpected_key,
    ),
    known(
        "state-dict-as-model",
        r"'collections\.OrderedDict' object has no attribute '(to|eval|cuda|cpu|train|forward|"
        r"parameters|modules|named_parameters|half|float|fuse|predict)'",
        _dict_as_model,
    ),
]
