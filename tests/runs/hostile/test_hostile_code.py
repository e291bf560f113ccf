"""Class 1 of issue 20: a folder must not run code without --trust-code, whatever the spelling.

The gate reads the validated config, so every spelling the schema accepts (a ``!!binary`` string,
a bare ``"module:name"`` metric) is seen; non-plain YAML tags are refused outright; and a resume
that was given the model and data (``fit(resume=RUN)``) does not sign code it never checked.
"""

from __future__ import annotations

import base64

from tests.runs.hostile.attack import PAYLOAD_MODULE, Bench, foreign_model_run

GATE_HINT = ("read that code first; to accept it, add --trust-code (Python: trust_code=True), or run "
             "`torchwise trust {run}` to sign the folder as yours")
TAG_HINT = ("a run's config.yaml holds mappings, lists, strings, numbers, booleans and nulls only; restore the "
            "file from the run's owner, or remove it; a folder someone sent you may be hostile")


def gate_refused(bench: Bench, outcome, reason: str, listed: str) -> None:
    """The trust gate's refusal: why the folder is foreign, the one target it lists, the base_dir."""
    bench.refused(outcome, f"{bench.run} is not a run you wrote ({reason}), and opening it would import code it "
                           f"names:\n{listed}\n  and puts its base_dir {bench.payload} first on sys.path while "
                           "importing them", GATE_HINT.format(run=bench.run))


def with_tagged_target(bench: Bench, tagged: str) -> int:
    """Write the model target as ``tagged`` YAML; return the line it is on."""
    config = bench.config()
    config["model"] = {**config["model"], "name": None, "target": "PLACEHOLDER"}
    text = __import__("yaml").safe_dump(config, sort_keys=False).replace("PLACEHOLDER", tagged)
    (bench.run / "config.yaml").write_text(text)
    return text[: text.index(tagged)].count("\n") + 1


def test_a_binary_tagged_target_is_refused_before_anything_is_built(tmp_path):
    bench = Bench(tmp_path)
    encoded = base64.b64encode(b"subprocess:run").decode()
    line = with_tagged_target(bench, f"!!binary {encoded}")
    for command in (["resume", str(bench.run)], ["trust", str(bench.run), "--yes"], ["export", str(bench.run)]):
        bench.refused(bench.torchwise(*command),
                      f"{bench.run / 'config.yaml'}:{line}: the YAML tag tag:yaml.org,2002:binary is not plain data",
                      TAG_HINT)


def test_a_python_object_tag_still_is_refused(tmp_path):
    bench = Bench(tmp_path)
    line = with_tagged_target(bench, "!!python/object/apply:os.system ['touch marker']")
    bench.refused(bench.torchwise("predict", str(bench.run), "in.csv"),
                  f"{bench.run / 'config.yaml'}:{line}: the YAML tag tag:yaml.org,2002:python/object/apply:os.system "
                  "is not plain data", TAG_HINT)


def test_a_bare_metric_string_is_seen_by_the_gate_and_by_trust(tmp_path):
    bench = Bench(tmp_path)
    config = bench.config()
    config["task"]["metrics"] = {"score": f"{PAYLOAD_MODULE}:metric"}
    config["base_dir"] = str(bench.payload)
    bench.write_config(config)
    listed = (f"  task.metrics.score.target  {PAYLOAD_MODULE}:metric  ->  imports {PAYLOAD_MODULE} from "
              f"{bench.payload / (PAYLOAD_MODULE + '.py')}")
    gate_refused(bench, bench.torchwise("resume", str(bench.run), "train.epochs=2"),
                 "config.yaml changed since it was signed", listed)
    # `trust` lists exactly what the gate checks; answered "no", it signs nothing.
    described = bench.torchwise("trust", str(bench.run))
    assert described.code == 1 and listed in described.stdout.splitlines(), described.stdout
    assert "not signed" in described.stdout
    bench.assert_untouched()


def test_fit_resume_with_the_model_passed_does_not_sign_the_foreign_target(tmp_path):
    bench = Bench(tmp_path, source=foreign_model_run())
    config = bench.config()
    config["base_dir"] = str(bench.payload)  # the colleague's module, swapped for the payload
    bench.write_config(config)
    # The model and data are passed, so the folder's model.target is neither imported nor checked
    # here; the resume trains, and must leave the folder signed as it found it: by the colleague.
    fit = bench.python(
        "import torch, torchwise\n"
        "from pathlib import Path\n"
        "from torchwise.runs.trust import verify_run\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.linear = torch.nn.Linear(1, 1)\n"
        "    def forward(self, x):\n"
        "        return self.linear(x)\n"
        "x = torch.rand(64, 1); data = torch.utils.data.TensorDataset(x, 2 * x)\n"
        f"result = torchwise.fit(Net(), data, val_data=data, resume={str(bench.run)!r}, "
        "overrides=['train.epochs=2'], quiet=True)\n"
        "print(result.summary['status'], result.summary['epochs'])\n"
        f"print(verify_run(Path({str(bench.run)!r})).reason)\n")
    assert fit.code == 0, fit.stderr[-2000:]
    assert fit.stdout.splitlines()[-2:] == ["completed 2", "it was signed by another account or machine"]
    listed = (f"  model.target  {PAYLOAD_MODULE}:Net  ->  imports {PAYLOAD_MODULE} from "
              f"{bench.payload / (PAYLOAD_MODULE + '.py')}")
    gate_refused(bench, bench.torchwise("resume", str(bench.run), "train.epochs=3"),
                 "it was signed by another account or machine", listed)
