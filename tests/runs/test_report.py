"""`torchwise report`: a self-contained HTML page; opened in headless Chromium it renders with
every plot visible and no console message; each embedded plot is a real, non-blank image."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification

import torchwise

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's `chromium` package is not installed "
                                                            "(apt-get install -y chromium)")
# Added to a copy of the page only: records each image's decoded width once the page has loaded.
CHECKER = ('<script>window.addEventListener("load", () => document.body.setAttribute("data-widths", '
           '[...document.images].map(i => i.complete ? i.naturalWidth : 0).join(",")));</script>')


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("report")
    data, val = tiny_classification(200), tiny_classification(60, seed=1)
    dirs = []
    for name, lr in (("fast", 0.01), ("slow", 0.001)):
        torch.manual_seed(0)
        result = torchwise.fit(torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)),
                               data, val, runs_dir=folder, name=name,
                               config=quiet_config(train={"epochs": 4, "batch_size": 16}, optim={"lr": lr},
                                                   checkpoint={"enabled": True}, log={"grad_stats_every": 5}))
        dirs.append(result.run_dir)
    return dirs


def embedded_pngs(page: str) -> list[bytes]:
    return [base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]


def assert_plots_are_drawn(page: str, count: int) -> None:
    import matplotlib.image

    pngs = embedded_pngs(page)
    assert len(pngs) == count
    for png in pngs:
        pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
        assert pixels.shape[0] > 200 and pixels.shape[1] > 300
        assert (pixels[..., :3] < 0.5).any() and pixels[..., :3].std() > 0.05  # ink on the page, not blank


def test_one_run_report_has_every_section_and_needs_no_network(runs):
    out = subprocess.run([sys.executable, "-m", "torchwise", "report", str(runs[0])], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    page_path = runs[0] / "report.html"
    assert out.stdout.strip() == f"report: {page_path}"
    page = page_path.read_text()
    for section in ("Diagnosis", "Curves", "Final metrics", "Checkpoints", "Config", "Environment"):
        assert f"<h2>{section}</h2>" in page
    assert re.search(r"(src|href)=\"(https?:)?//", page) is None and "<script" not in page
    for title in ("loss", "monitored: val_loss", "learning rate", "gradient norm (before clipping)", "throughput",
                  "share of step time waiting for data"):
        assert f'alt="{title}"' in page
    assert_plots_are_drawn(page, 6)
    assert "<td>best</td>" in page and "<td>last</td>" in page


def test_several_runs_overlay_their_curves_and_diff_their_config(runs, tmp_path):
    out = subprocess.run([sys.executable, "-m", "torchwise", "report", *map(str, runs), "--out",
                          str(tmp_path / "both.html")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "both.html").read_text()
    assert "<h1>2 runs: fast, slow</h1>" in page
    assert "<td>optim.lr</td><td>0.01</td><td>0.001</td>" in page
    assert_plots_are_drawn(page, 2)


def chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                           "--v=0", "--virtual-time-budget=5000", *args], capture_output=True, text=True, timeout=120)


@needs_chromium
@pytest.mark.parametrize("which", ["one", "several"])
def test_report_renders_in_headless_chromium(runs, tmp_path, which):
    paths = runs[:1] if which == "one" else runs
    page_path = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "torchwise", "report", *map(str, paths), "--out", str(page_path)],
                   check=True, capture_output=True, timeout=300)
    shot = tmp_path / "shot.png"
    rendered = chromium(f"--screenshot={shot}", "--window-size=1200,2600", page_path.as_uri())
    assert shot.is_file() and shot.stat().st_size > 20_000, rendered.stderr[-2000:]
    # The page has no script of its own: any console line would be the browser reporting an error.
    assert "CONSOLE" not in rendered.stderr, rendered.stderr[-2000:]
    checked = tmp_path / "checked.html"
    checked.write_text(page_path.read_text().replace("</body>", CHECKER + "</body>"))
    dom = chromium("--dump-dom", checked.as_uri()).stdout
    widths = re.search(r'data-widths="([^"]*)"', dom)
    assert widths is not None, dom[:500]
    expected = len(embedded_pngs(page_path.read_text()))
    assert [int(w) for w in widths.group(1).split(",")] == [640] * expected  # every plot decoded, 640 px wide
