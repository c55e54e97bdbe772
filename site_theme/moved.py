"""Old links keep working after text moves between pages (a local Sphinx extension).

When the book was split into course chapters with section pages and research notes, sections,
boxes, equations, figures and exercises moved to other pages. ``moved_anchors.json`` lists every
anchor the chapter pages had before the move (``pages``: old page → its anchors) and, for the
few whose name changed, ``aliases``: old anchor → new anchor. After the build this extension
finds the page that now holds each anchor and

* adds to every old page that still exists a small script: when the address's ``#anchor`` is
  not on the page but has moved, the browser goes to its new home;
* writes, for an old page that no longer exists, a stub page that does the same (and, for an
  address without an anchor or with an unknown one, links the pages its content went to).

``moved_map(outdir)`` returns the map, so that the tests can check that every old anchor
resolves.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

HERE = Path(__file__).resolve().parent
ANCHORS = HERE / "moved_anchors.json"
_ID = re.compile(r'\sid="([^"]+)"')
_STUB_MARK = '<meta name="robots" content="noindex">'

_SCRIPT = """<script>
(function () {{
  var moved = {data};
  var id = decodeURIComponent(location.hash.slice(1));
  if (id && !document.getElementById(id) && moved[id]) {{ location.replace(moved[id]); }}
}})();
</script>"""

_STUB = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="description" content="This page of the book has moved; the links below lead to its content.">
<title>Moved: {title}</title>
<script>
(function () {{
  var moved = {data};
  var id = decodeURIComponent(location.hash.slice(1));
  if (moved[id]) {{ location.replace(moved[id]); }}
}})();
</script>
</head><body>
<main><h1>This page has moved</h1>
<p>The book was reorganised into a course and research notes. The content of this page is now on:</p>
<ul>
{links}
</ul></main>
</body></html>
"""


def _read() -> dict[str, Any]:
    return json.loads(ANCHORS.read_text(encoding="utf-8"))


def _ids_by_page(outdir: Path, docs: set[str] | None = None) -> dict[str, set[str]]:
    """Every ``id`` of every built page (relative path without ``.html``).

    Only the book's current documents count (``docs``; by default every HTML file that is not
    a stub of this extension), so that a stale file of a retired page holds nothing.
    """
    out = {}
    for path in outdir.rglob("*.html"):
        rel = path.relative_to(outdir).with_suffix("").as_posix()
        if rel.startswith(("_", "genindex", "search", "py-modindex")):
            continue
        if docs is not None and rel not in docs:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if docs is None and _STUB_MARK in text:
            continue
        out[rel] = set(_ID.findall(text))
    return out


def moved_map(outdir: Path | str, docs: set[str] | None = None) -> dict[str, dict[str, str | None]]:
    """Old page → {old anchor → the page#anchor that holds it now, or None if none does}."""
    outdir = Path(outdir)
    data = _read()
    aliases = data.get("aliases", {})
    ids = _ids_by_page(outdir, docs)
    home: dict[str, str] = {}
    for page, page_ids in sorted(ids.items()):
        for i in page_ids:
            home.setdefault(i, page)
    result: dict[str, dict[str, str | None]] = {}
    for old, anchors in data["pages"].items():
        result[old] = {}
        for anchor in anchors:
            new = aliases.get(anchor, anchor)
            if old in ids and new in ids[old]:
                target = old  # still here
            else:
                target = home.get(new)
            result[old][anchor] = None if target is None else f"{target}#{new}"
    return result


def _relative(target: str, page: str) -> str:
    path, _, anchor = target.partition("#")
    rel = os.path.relpath(f"{path}.html", os.path.dirname(page) or ".")
    return f"{rel}#{anchor}" if anchor else rel


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    titles = {doc: title.astext() for doc, title in app.env.titles.items()}
    docs = set(app.env.all_docs)
    for old, anchors in moved_map(outdir, docs).items():
        moved = {
            a: _relative(t, old)
            for a, t in anchors.items()
            if t is not None and not t.startswith(f"{old}#")
        }
        data = json.dumps(moved, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
        path = outdir / f"{old}.html"
        if old in docs:
            if moved:
                text = path.read_text(encoding="utf-8")
                text = text.replace("</body>", _SCRIPT.format(data=data) + "\n</body>", 1)
                path.write_text(text, encoding="utf-8")
            continue
        pages = sorted({t.split("#")[0] for t in anchors.values() if t is not None})
        links = "\n".join(
            f'<li><a href="{html.escape(_relative(p, old))}">{html.escape(titles.get(p, p))}</a></li>'
            for p in pages
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            _STUB.format(title=html.escape(old), data=data, links=links), encoding="utf-8"
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", _build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
