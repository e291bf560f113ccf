"""Known errors raised by autograd's anomaly mode when a backward function returns NaN.

Under ``torch.autograd.set_detect_anomaly(True)`` (or ``detect_anomaly()``) each backward function's
outputs are checked; "Function 'SqrtBackward0' returned nan values in its 0th output." names the
forward operation whose gradient first became NaN, and the traceback printed with it shows the
forward line that created it. The operation's name says the usual cause.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

# forward operations whose gradient is infinite or undefined at a value the data can reach
SINGULAR = {
    "Sqrt": "sqrt at 0 (a distance or norm of a zero vector): its gradient 1/(2*sqrt(x)) is infinite",
    "Pow": (
        "x ** p at a base of 0 or below: the gradient with respect to the exponent, log(x) * x ** p,"
        " is NaN there (PowBackward1's 1st output), and the one with respect to x infinite at 0 for p < 1"
    ),
    "Log": "log at 0 or a negative value (log of a probability that reached 0)",
    "Div": "a division by zero or a tiny denominator (a normalisation by a sum or norm that is 0)",
    "Norm": "a norm of a zero vector (the gradient x/|x| is 0/0)",
    "LinalgVectorNorm": "a norm of a zero vector (the gradient x/|x| is 0/0)",
    "Acos": "acos at exactly 1 or -1 (a cosine clamped to the boundary)",
    "Asin": "asin at exactly 1 or -1",
    "Atan2": "atan2 at (0, 0)",
    "Cdist": "a distance between identical points",
}


def _nan_backward(match: re.Match[str], text: str) -> Explanation:
    function, output = match.group(1), match.group(2)
    operation = re.sub(r"Backward\d*$", "", function)
    singular = SINGULAR.get(operation)
    cause = (
        f"The forward operation {operation} is evaluated where its derivative does not exist: {singular}."
        if singular
        else f"The gradient of {operation} became NaN: its input already held inf/NaN (an overflow"
        " earlier in the forward, often in float16), or it was evaluated where its derivative is"
        " undefined (0/0, inf - inf)."
    )
    return answer(
        title=f"The gradient of {operation} is NaN (found by anomaly detection)",
        meaning=(
            f"Anomaly mode checked each backward function and {function} returned NaN in its"
            f" {output} output; the traceback printed with it points at the forward line of {operation}."
        ),
        cause=cause,
        fix=(
            "At that forward line keep the input away from the singular point (torch.sqrt(x + eps),"
            " torch.pow(x.clamp_min(eps), p),"
            " torch.log(x.clamp_min(eps)), x / (n + eps), F.normalize(..., eps=...), clamp acos/asin"
            " inputs to [-1 + eps, 1 - eps]), and check the inputs are finite (torch.isfinite(x).all())"
            " where float16 may overflow."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "anomaly-nan-gradient",
        r"Function '(\w+)' returned nan values in its (\d+(?:st|nd|rd|th)) output",
        _nan_backward,
    ),
]
