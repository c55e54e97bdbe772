"""The pages of the built website, what kind each is (read from the table of contents), and
the headless Chromium that reads them.

Shared by the browser test (``tests/test_site_browser.py``) and the measuring script
(``benchmarks/bench_site.py``), which both find the pages in the built site rather than in a
fixed list, and open them in the same browser with the same flags.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: Debian's Chromium, and the flags of every headless run of it.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def toc_kinds(toc_file: Path) -> dict[str, str]:
    """Every document of the table of contents → ``"landing"`` (the root), ``"course"`` (the
    numbered part), ``"notes"`` (the part whose caption names notes) or ``"other"``."""
    import yaml

    toc = yaml.safe_load(Path(toc_file).read_text(encoding="utf-8"))
    kinds: dict[str, str] = {}

    def walk(entries, kind):
        for e in entries or []:
            if "file" in e:
                kinds[str(Path(e["file"]).with_suffix(""))] = kind
            walk(e.get("sections"), kind)

    for part in toc.get("parts", []):
        caption = str(part.get("caption", "")).lower()
        kind = "course" if part.get("numbered") else "notes" if "note" in caption else "other"
        walk(part.get("chapters"), kind)
    kinds[str(Path(toc["root"]).with_suffix(""))] = "landing"
    return kinds


def is_redirect(path: Path) -> bool:
    """A page left at an old address, which sends the reader on (``site_theme/moved.py``)."""
    head = Path(path).read_text(encoding="utf-8", errors="replace")[:1500].lower()
    return 'http-equiv="refresh"' in head or '<meta name="robots" content="noindex">' in head


def site_pages(site: Path) -> list[str]:
    """Every reading page of the built site (relative paths): not the static files, the
    sources, the root's redirect or the pages left at old addresses."""
    site = Path(site)
    if not site.is_dir():
        return []
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not {"_static", "_sources"} & set(p.relative_to(site).parts)
        and p.relative_to(site).as_posix() != "index.html"
        and not is_redirect(p)
    )
