"""Internal links of the built docs site: every `href` and `src` that points inside the site
must name a file that exists, and an `#anchor` must name an `id` on that page.

    python tests/site_links.py site      # after `mkdocs build`; exits 1 and lists what is broken
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)


def parse(page: Path) -> _Page:
    parsed = _Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    return parsed


def target_file(site: Path, page: Path, path: str) -> Path:
    base = site if path.startswith("/") else page.parent  # a root-relative link (404.html has them)
    target = (base / unquote(path).lstrip("/")).resolve() if path else page
    if target.is_dir() or path.endswith("/"):
        target = target / "index.html"
    return target


def broken_links(site: Path) -> list[str]:
    """`page: link (why)` for each internal link that leads nowhere."""
    site = site.resolve()
    pages = {page: parse(page) for page in site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue  # outside the site: not this checker's business
            target = target_file(site, page, parts.path)
            where = f"{page.relative_to(site)}: {link}"
            if not target.is_file() or site not in target.parents:
                broken.append(f"{where} (no file {target})")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no id '{parts.fragment}' on {target.relative_to(site)})")
    return broken


if __name__ == "__main__":
    found = broken_links(Path(sys.argv[1] if len(sys.argv) > 1 else "site"))
    print("\n".join(found) or "no broken internal link", file=sys.stderr if found else sys.stdout)
    sys.exit(1 if found else 0)
