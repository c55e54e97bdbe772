"""The website's MathJax: one file holding exactly the parts of MathJax 3 that the book uses.

MathJax's ready-made ``tex-mml-chtml.js`` (1.17 MB, 266 KB gzip) also carries a MathML input
and the context menu, which the book does not use, and typesets every formula of a page
before the reader can scroll it (seconds on a phone for a long chapter). The bundle written
here concatenates, from the npm copy of MathJax in ``_static/mathjax`` (``make setup``), the
startup code, the core, the TeX input with the AMS macros (``\\operatorname``, ``pmatrix``,
``\\tfrac``, …), ``\\newcommand`` and ``autoload`` (any other TeX package is fetched from the
same copy the first time a formula needs it), the CommonHTML output with its TeX font,
hidden MathML for screen readers, and *lazy typesetting*: a formula is typeset when it comes
near the screen. Each part is a standalone MathJax component; they are listed in dependency
order and then marked as loaded, which is what MathJax's own combined files do.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from book_site_html import EAGER_CLASS

BUNDLE = "book-mathjax.js"

# (component name, file in the es5 folder), in dependency order; startup first, so that each
# later part registers itself with it
PARTS = [
    ("startup", "startup.js"),
    ("core", "core.js"),
    ("input/tex-base", "input/tex-base.js"),
    ("[tex]/ams", "input/tex/extensions/ams.js"),
    ("[tex]/newcommand", "input/tex/extensions/newcommand.js"),
    ("[tex]/require", "input/tex/extensions/require.js"),
    ("[tex]/autoload", "input/tex/extensions/autoload.js"),
    ("output/chtml", "output/chtml.js"),
    ("output/chtml/fonts/tex", "output/chtml/fonts/tex.js"),
    ("ui/lazy", "ui/lazy.js"),
    ("a11y/assistive-mml", "a11y/assistive-mml.js"),
]
TEX_PACKAGES = ["ams", "newcommand", "require", "autoload"]
# MathJax scales its font to the x-height of the text around a formula; for the theme's
# text font it measures 123.7 % in a paragraph: every formula gets that size, in the browser
# and ahead of time
SCALE = 1.237


def config(user: dict[str, Any] | None) -> dict[str, Any]:
    """MathJax's configuration (``mathjax3_config``): the user's, with what the bundle needs."""
    out = copy.deepcopy(user or {})
    loader = out.setdefault("loader", {})
    loader.setdefault("load", [])  # everything is in the bundle
    tex = out.setdefault("tex", {})
    tex.setdefault("packages", {"[+]": TEX_PACKAGES})
    # the formulas of the first screen (marked by book_site_html.eager_math) are typeset at
    # once; the others when they come within 200 px of the screen. ("head" matches on every
    # page: MathJax 3.2.2 fails on a page where none of these selectors matches.)
    out.setdefault("options", {}).setdefault("lazyAlwaysTypeset", [f".{EAGER_CLASS}", "head"])
    # one size for every formula, the one of the formulas typeset ahead of time (MathJax's own
    # matching of the text's x-height gave 123.7 % in paragraphs, 127 % in boxes and lists)
    chtml = out.setdefault("chtml", {})
    chtml.setdefault("scale", SCALE)
    chtml.setdefault("matchFontHeight", False)
    return out


def bundle(es5: Path) -> str:
    pieces = [f"/* MathJax 3 components for this book: {', '.join(n for n, _ in PARTS)} */"]
    for name, file in PARTS:
        path = es5 / file
        if not path.exists():
            raise FileNotFoundError(f"MathJax component {name} is missing: {path} (make setup)")
        pieces.append(f"/* {file} */\n" + path.read_text(encoding="utf-8").strip() + ";")
    names = ", ".join(f'"{n}"' for n, _ in PARTS)
    pieces.append(f"MathJax.loader.preLoad({names});")
    return "\n".join(pieces) + "\n"


def write_bundle(es5: Path) -> Path:
    """Write the bundle next to the components (``_static/mathjax``), where MathJax finds its
    fonts and any package loaded later."""
    target = es5 / BUNDLE
    text = bundle(es5)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return target


# ------------------------------------------------------------------------------------------
# the first screen's formulas, typeset while the site is written
# ------------------------------------------------------------------------------------------

PRERENDER_JS = Path(__file__).with_name("prerender_math.js")
PRERENDERED_CSS = "book-prerendered.css"
FONT_URL = "mathjax/output/chtml/fonts/woff-v2"  # the style sheet is written to _static


def prerender(formulas: list[tuple[str, bool]], es5: Path) -> tuple[list[str | None], str] | None:
    """Each formula ``(TeX, display)`` as MathJax's CommonHTML (None where MathJax reports an
    error: the browser typesets that one), and the style sheet of their characters; None when
    Node is missing (then the browser typesets every formula)."""
    node = shutil.which("node")
    if node is None or not formulas:
        return None
    job = {
        "mathjax": str(es5.resolve()),
        "scale": SCALE,
        "fontURL": FONT_URL,
        "packages": TEX_PACKAGES,
        "formulas": formulas,
    }
    done = subprocess.run(
        [node, str(PRERENDER_JS)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    out = json.loads(done.stdout)
    # each character's box has its size from the style sheet, not from the font: drawn at once
    # in a fallback font and redrawn in MathJax's when it arrives, a formula does not move, and
    # the paragraph around it does not wait for the font to be painted
    css = re.sub(r"(@font-face[^{]*\{)", r"\1\n  font-display: swap;", out["css"])
    return out["html"], css
