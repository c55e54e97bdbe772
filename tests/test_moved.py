"""Old links keep working: every anchor the chapter pages had before the book was split into
course chapters and research notes resolves on the built site (``site_theme/moved.py``)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"

pytestmark = pytest.mark.browser


def _moved():
    spec = importlib.util.spec_from_file_location("moved", ROOT / "site_theme" / "moved.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("moved", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def moved_map():
    if not (SITE / "book").exists():
        pytest.fail(f"{SITE} was not built (make site-check)")
    return _moved().moved_map(SITE)


def test_every_old_anchor_resolves(moved_map):
    lost = [
        f"{page}#{a}"
        for page, anchors in moved_map.items()
        for a, t in anchors.items()
        if t is None
    ]
    assert not lost, f"{len(lost)} old anchors lead nowhere (add an alias): {lost[:20]}"


def test_old_pages_redirect_to_the_new_homes(moved_map):
    for page, anchors in moved_map.items():
        html = (SITE / f"{page}.html").read_text()
        moved = {a: t for a, t in anchors.items() if t and not t.startswith(f"{page}#")}
        if not moved:
            continue
        assert "var moved = {" in html, f"{page}.html has no redirect script"
        for target in moved.values():
            path, _, new = target.partition("#")
            assert re.search(rf'\sid="{re.escape(new)}"', (SITE / f"{path}.html").read_text())
