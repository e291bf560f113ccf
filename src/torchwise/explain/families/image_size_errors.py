"""Known errors of a vision transformer given an image of another size than it was built for.

A ViT's patch embedding (timm's ``PatchEmbed``, and copies of it in many repositories) is built
for one image size and checks each input against it: "Input image size (768*1152) doesn't match
model (384*384)", "Input image height (224) doesn't match model (518)". The two sizes in the
message are the input and the size the model was created with.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _image_size(match: re.Match[str], text: str) -> Explanation:
    side = match.group(1) or "size"
    got, built = match.group(2), match.group(3)
    # the paste's own preprocessing makes the input size: then the model's img_size is the odd one
    first = re.match(r"\d+", got)
    prepared = bool(first) and re.search(rf"(?:Resize|Crop|resize|crop)\w*\(\s*\(?\s*{first.group(0)}\b", text)
    preprocessing = (
        "The inputs are not preprocessed to the model's size (a resize/crop to another size, full images"
        " where the code expects the crops its preprocessing script makes)"
    )
    creation = (
        "the model was created with another img_size than the data uses (the default of its config, where"
        " an older timm does not apply the checkpoint's img_size)"
    )
    return answer(
        title=f"The model's patch embedding was built for {built} and got an image of {got}",
        meaning=(
            f"A vision transformer's patch embedding checks that the input image {side} equals the one"
            f" the model was created with (its img_size, {built}); this input is {got}."
        ),
        cause=(
            f"The code's own transforms make {got} images, so the model was created with another img_size"
            " than the data and checkpoint use (the default of its config, where an older timm does not"
            f" apply the checkpoint's img_size={got}); or the transforms are not the model's."
            if prepared
            else f"{preprocessing}, or {creation}."
        ),
        fix=(
            f"Resize or crop the inputs to {built} (the preprocessing the repository or model card"
            " gives), or create the model for the data's size: timm.create_model(..., img_size=<size>)"
            " (dynamic_img_size=True in recent timm; upgrade timm to the version the model card names)."
            if not prepared
            else f"Create the model for {got} inputs: upgrade timm to the version the model card names (so it"
            f" applies the checkpoint's config), or pass img_size={got} to timm.create_model; or resize the"
            f" inputs to {built}."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "vit-image-size",
        r"Input image (height|width|size)? ?\(([\d*x ,]+)\) doesn'?t match model \(([\d*x ,]+)\)",
        _image_size,
    ),
]
