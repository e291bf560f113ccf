"""The docs site builds with `mkdocs build --strict` (every warning an error: a page missing from
the nav, a link to a page or an anchor that does not exist) and no internal link of the built
site leads nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from site_links import broken_links

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strict_with_no_broken_internal_link(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (make test installs it)")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (site / "config" / "index.html").is_file()
    assert broken_links(site) == []


def test_the_link_checker_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text('<h2 id="here">x</h2><a href="a/">ok</a><a href="#here">ok</a>'
                                         '<a href="https://example.org/x">outside</a>')
    (tmp_path / "a" / "index.html").write_text('<a href="../b/">gone</a><a href="../#there">no anchor</a>'
                                               '<img src="/img.png">')
    assert broken_links(tmp_path) == [
        f"a/index.html: ../b/ (no file {tmp_path.resolve()}/b/index.html)",
        "a/index.html: ../#there (no id 'there' on index.html)",
        f"a/index.html: /img.png (no file {tmp_path.resolve()}/img.png)",
    ]
