from __future__ import annotations

from torchwise.env.probe import parse_smi_header, parse_smi_query, probe_smi


def test_fake_nvidia_smi_is_parsed_like_the_real_one(fake_smi):
    smi = fake_smi(
        driver="550.54.14",
        cuda="12.4",
        gpus=[("NVIDIA GeForce RTX 4090", "8.9", 24564), ("NVIDIA A100-SXM4-80GB", "8.0", 81920)],
    )
    assert smi.driver_version == "550.54.14"
    assert smi.cuda == (12, 4)
    assert [(g.index, g.name, g.capability, g.memory_mib) for g in smi.gpus] == [
        (0, "NVIDIA GeForce RTX 4090", (8, 9), 24564),
        (1, "NVIDIA A100-SXM4-80GB", (8, 0), 81920),
    ]


def test_no_nvidia_smi_on_path_means_no_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert probe_smi() is None


def test_header_without_cuda_version_and_query_without_capability():
    assert parse_smi_header("| NVIDIA-SMI 470.82.01   Driver Version: 470.82.01 |") == (
        "470.82.01",
        None,
    )
    gpus = parse_smi_query("0, Tesla K80, [N/A], [N/A]\nnot a row\n")
    assert [(g.name, g.capability, g.memory_mib) for g in gpus] == [("Tesla K80", None, None)]


def test_nvidia_smi_that_fails_is_not_the_same_as_no_nvidia_smi(failing_smi):
    assert failing_smi is not None
    assert failing_smi.error.startswith("NVIDIA-SMI has failed because it couldn't communicate")
    assert failing_smi.gpus == []


def test_old_driver_without_compute_cap_falls_back_to_names(tmp_path, monkeypatch):
    script = tmp_path / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        '  *compute_cap*) echo "Field \\"compute_cap\\" is not a valid field to query."; exit 2;;\n'
        '  *--query-gpu*) echo "0, Tesla V100-SXM2-16GB";;\n'
        '  *) echo "| NVIDIA-SMI 470.82.01   Driver Version: 470.82.01   CUDA Version: 11.4 |";;\n'
        "esac\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    smi = probe_smi()
    assert (smi.driver_version, smi.cuda, smi.error) == ("470.82.01", (11, 4), None)
    assert [(g.name, g.capability) for g in smi.gpus] == [("Tesla V100-SXM2-16GB", None)]
