"""Every page of the built site, loaded in headless Chromium from a local server and from disk.

Run by ``make test`` after the site build (``pytest -m browser``). The pages are found in the
built site (every HTML page but the search machinery's and redirects), and every page of the
table of contents must be among them. Each page is read at a desktop width (1400 px) and a
phone width (390 px), in the light and in the dark theme, and fails on:

* any console error or page error, failed, off-site or HTTP-error requests; a script that
  blocks the first paint; FontAwesome or the search index loaded (outside the search page);
* MathJax errors or math left untypeset (every formula is typeset, not only those in view);
  broken images; theorems without numbers; unresolved citations; raw Markdown tables; a
  picture that is not a numbered figure with a caption and alt text;
* a page wider than the window; a code or output line cut off at the edge of its box; a
  printed table whose rows wrap; an inline formula cut off; a box that scrolls sideways
  without the visible cue (``book-scroll``) or without keyboard focus;
* a violation of serious or critical impact found by axe-core (npm's copy): every rule in the
  light theme, contrast in both, read on one element of each kind of text (``JS_CONTRAST_SAMPLE``);
* no meta description, no link to the book's PDF;
* on a phone: a header or interactive control smaller than 44 × 44 px, a figure drawn below
  half its size or not shown whole (figures still waiting to be redrawn are listed, and fail
  once they are legible);
* weight: more than 500 KB (gzip) fetched before the reader scrolls, or more than 1 MB with
  every figure, on a page of the course or the research notes (less on the others).

Further tests click the navigation buttons (sidebar and page contents at both widths; a tap
on a drawer's link closes it), follow an exercise link inside a solution's title, drive the
atlas of dimensions over http and from ``file://`` (its numbers against the data and against
``lsa_lib``; no layout shift), turn the rotatable figure (both ways; its axis names apart),
print pages (code and outputs wrap, equations fit, the title keeps its number) and read the
PDF when ``make pdf`` has built it. Under ``CI=true`` a missing browser is a failure, not a
skip.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import os
import re
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site_theme"))
from site_pages import CHROMIUM, FLAGS, site_pages, toc_kinds  # noqa: E402

SITE = ROOT / "_build" / "html"
ATLAS = ROOT / "site_data" / "atlas"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP, PHONE = 1400, 390
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
KB = 1024
# gzip bytes a page may fetch: before the reader scrolls, and with every figure loaded
BUDGET = {"chapter": (500 * KB, 1024 * KB), "other": (400 * KB, 800 * KB)}
# figures drawn, on a phone, at least at this fraction of their own size (at 1x): the book's
# 10-point labels then stay at 7 px or more
LEGIBLE = 0.5
# Multi-panel figures that the chapters are redrawing with at most two panels per row (by
# figure label). Each is still checked: the test fails when one of them becomes legible, so
# that it leaves this list.
NOT_YET_LEGIBLE: set[str] = set()


def _pages() -> list[str]:
    return site_pages(SITE)


@functools.cache
def _toc() -> dict[str, str]:
    """Every document of the table of contents → its kind (site_theme/site_pages.py)."""
    return toc_kinds(ROOT / "_toc.yml")


def _kind(page_path: str) -> str:
    return _toc().get(page_path[: -len(".html")], "other")


def _gz_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))


@functools.cache
def _gz(path: str) -> int:
    return _gz_size(Path(path))


@pytest.fixture(scope="module")
def server():
    if not SITE.is_dir():
        pytest.fail(f"{SITE} does not exist: build the site first (make site-check)")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        message = "Chromium is missing: apt-get install chromium"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


FILE_SITE = SITE.resolve().as_uri()
NO_TRANSITIONS = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '*, *::before, *::after { transition: none !important; }';
  document.head.append(style);
});"""


class Watched:
    """A page in a fresh browser context whose every problem (console, network) is recorded.

    ``server`` is the site's address: the local server's, or ``file://…/_build/html``.
    """

    def __init__(self, browser, server: str, width: int, scheme: str = "light"):
        self.server = server
        self.context = browser.new_context(
            viewport={"width": width, "height": 900 if width > 600 else 844},
            color_scheme=scheme,
            device_scale_factor=1,
        )
        self.page = self.context.new_page()
        # no colour transitions: a theme switch takes effect at once (axe reads the colours)
        self.page.add_init_script(NO_TRANSITIONS)
        self.problems: list[str] = []
        self.fetched: list[str] = []  # files of the site the page loaded
        page = self.page
        page.on(
            "console",
            lambda m: (
                self.problems.append(
                    f"console {m.type}: {m.text} ({(m.location or {}).get('url', '')})"
                )
                if m.type in ("error", "assert")
                else None
            ),
        )
        page.on("pageerror", lambda err: self.problems.append(f"page error: {err}"))
        page.on("request", self._on_request)
        page.on("requestfailed", lambda r: self.problems.append(f"failed request: {r.url}"))
        page.on(
            "response",
            lambda r: (
                self.problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None
            ),
        )

    def _on_request(self, request) -> None:
        url = request.url
        if url.startswith(("data:", "blob:", "about:")):
            return
        if not url.startswith(self.server):
            self.problems.append(f"off-site request: {url}")
            return
        self.fetched.append(url[len(self.server) + 1 :].split("?")[0].split("#")[0])

    def goto(self, path: str, typeset_all: bool = True) -> None:
        self.page.goto(f"{self.server}/{path}", wait_until="load")
        self.wait_for_math(typeset_all)

    def wait_for_math(self, typeset_all: bool = True) -> None:
        """Wait for MathJax's first pass (the formulas near the screen); with ``typeset_all``,
        also typeset every other formula (they are typeset lazily, when scrolled to). A page
        without formulas of its own loads MathJax only when a formula of its sidebar comes
        into view: then wait for that."""
        page = self.page
        kind = page.evaluate(MATH_KIND)
        if kind == "none":
            return
        if kind == "on demand":
            page.wait_for_timeout(300)
            if not page.evaluate("() => !!window.MathJax"):
                return
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=20000,
        )
        page.evaluate("() => MathJax.startup.promise")
        if typeset_all:
            page.evaluate(
                "async () => { const d = MathJax.startup.document;"
                " if (d.lazyTypesetAll) await d.lazyTypesetAll(); }"
            )
        _after_frames(page)  # book.js marks wide boxes in the next frame

    def resize(self, width: int) -> None:
        self.page.set_viewport_size({"width": width, "height": 900 if width > 600 else 844})
        # book.js's resize handler waits 100 ms, then marks the boxes in the next frame
        _after_frames(self.page, delay_ms=110)

    def close(self) -> None:
        self.context.close()


def _after_frames(page, delay_ms: int = 0, frames: int = 2) -> None:
    """Return once ``delay_ms`` have passed and then ``frames`` frames have been drawn."""
    page.evaluate(
        """([delay, frames]) => new Promise((done) => setTimeout(() => {
          const next = (n) => (n ? requestAnimationFrame(() => next(n - 1)) : done());
          next(frames);
        }, delay))""",
        [delay_ms, frames],
    )


MATH_KIND = """() => document.querySelector('script[src*="book-mathjax"]') ? 'page'
  : document.getElementById('book-mathjax') ? 'on demand' : 'none'"""


def _bytes_of(fetched: list[str]) -> int:
    total = 0
    for rel in dict.fromkeys(fetched):
        file = SITE / rel
        if file.is_file():
            total += _gz(str(file))
    return total


# ------------------------------------------------------------------------------------------
# what is checked on every page
# ------------------------------------------------------------------------------------------

# Lines of text that are the rows of a Markdown table shown raw: a delimiter row |---|---|.
RAW_TABLE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)

# A line of printed output laid out in columns (two gaps of two spaces or more), as in the
# text form of lsa_lib.report.Table; two such lines make a printed table.
JS_COLUMNS = r"/\S {2,}\S.* {2,}\S/"

JS_CUT_OFF = (
    """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const columns = COLUMNS;
  return [...document.querySelectorAll('.bd-article pre')]
    .filter(p => p.getClientRects().length && p.innerText.trim())
    .map(p => {
      const cs = getComputedStyle(p);
      ctx.font = `${cs.fontSize} ${cs.fontFamily}`;
      const ch = ctx.measureText('x'.repeat(100)).width / 100;
      const inner = p.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      const fits = Math.floor(inner / ch);
      const lines = p.innerText.split('\\n');
      const long = lines.filter(l => l.length > fits);
      const table = lines.filter(l => columns.test(l.trim())).length >= 2;
      const wraps = cs.whiteSpace !== 'pre' && cs.whiteSpace !== 'nowrap';
      return {kind: p.closest('.cell_output') ? 'output' : 'code', fits, table,
              cut: !wraps && p.scrollWidth > p.clientWidth + 1 && !p.classList.contains('book-scroll'),
              wrappedRows: table && wraps ? long.filter(l => columns.test(l.trim())).length : 0,
              lines: Math.max(long.length, 1), example: (long[0] || p.innerText).slice(0, 120)};
    })
    .filter(b => b.cut || b.wrappedRows);
}"""
).replace("COLUMNS", JS_COLUMNS)

# Boxes in the article that scroll sideways or hide what overhangs them.
JS_SCROLL_BOXES = """() => {
  const out = [];
  const shown = e => e.getClientRects().length > 0;
  const label = e => (e.textContent || e.getAttribute('alt') || '').trim().slice(0, 60);
  for (const e of document.querySelectorAll('.bd-article *')) {
    if (!shown(e) || e.closest('dialog')) continue;
    const cs = getComputedStyle(e);
    const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
    if (scrolls && e.scrollWidth > e.clientWidth + 1) {
      if (!e.classList.contains('book-scroll'))
        out.push(`scrolls sideways without the cue: ${e.tagName}.${e.className} ${label(e)}`);
      else if (e.tabIndex < 0)
        out.push(`scrolls sideways but cannot take the focus: ${e.tagName} ${label(e)}`);
    }
  }
  // inline formulas: the whole formula is visible, or its box scrolls
  for (const s of document.querySelectorAll('.bd-article span.math')) {
    const m = s.querySelector('mjx-container');
    if (!m || !shown(s)) continue;
    const box = s.getBoundingClientRect(), math = m.getBoundingClientRect();
    const block = s.parentElement.closest('p, li, dd, dt, td, th, h1, h2, h3, h4, h5, h6, figcaption, caption, div');
    const room = block ? block.getBoundingClientRect() : box;
    const cs = getComputedStyle(s);
    const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
    if (!scrolls && (math.right > room.right + 2 || (cs.overflowX !== 'visible'
        && math.right > box.right + 2)))
      out.push(`inline formula cut off by ${Math.round(math.right - Math.min(box.right, room.right))} px: ${label(s)}`);
  }
  // display equations: wider than their box means scrolling, with the cue
  for (const m of document.querySelectorAll('.bd-article div.math > mjx-container')) {
    const math = m.firstElementChild;
    if (!math || !shown(m)) continue;
    if (math.getBoundingClientRect().width > m.clientWidth + 2 && !m.classList.contains('book-scroll'))
      out.push(`display equation cut off: ${label(m)}`);
  }
  // printed tables (HTML): one line per row
  for (const cell of document.querySelectorAll('.bd-article table.book-table td, .bd-article table.book-table th')) {
    if (!shown(cell)) continue;
    const lh = parseFloat(getComputedStyle(cell).lineHeight) || 16;
    const range = document.createRange();
    range.selectNodeContents(cell);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (lines.size > 1 || range.getBoundingClientRect().height > 1.6 * lh)
      out.push(`table row wraps: ${label(cell.closest('tr'))}`);
  }
  return out;
}"""


# Every picture in a page is a figure: a number ("Fig. 4.1"), a caption, and alt text (not a
# file name). Returns one record per image.
JS_FIGURES = """() => [...document.querySelectorAll('.bd-article img')]
  .filter(img => !img.closest('table.modindextable'))  // the module index's +/- icons
  .map(img => {
  const fig = img.closest('figure');
  const cap = fig && fig.querySelector('figcaption');
  const number = cap && cap.querySelector('.caption-number');
  const text = cap && cap.querySelector('.caption-text');
  const section = img.closest('section');
  const heading = section && section.querySelector('h1, h2, h3');
  const alt = (img.getAttribute('alt') || '').trim();
  return {
    where: (heading ? heading.textContent.replace('#', '').trim() : '') + ' / '
      + img.src.split('/').pop().slice(0, 12),
    numbered: !!(number && /\\d/.test(number.textContent)),
    captioned: !!(text && text.textContent.trim().length >= 20),
    alt: alt.length >= 10 && !/\\.(png|jpe?g|svg|gif)$/i.test(alt),
  };
})"""

# Figures at phone width: drawn size against their own size at 1x, and whether the whole
# width is on screen.
JS_LEGIBLE = """() => [...document.querySelectorAll('.bd-article figure img, .bd-article .cell_output img')]
  .filter(i => i.complete && i.naturalWidth > 0 && i.getClientRects().length)
  .map(i => {
    const fig = i.closest('figure');
    const oneX = parseFloat(i.style.getPropertyValue('--book-1x')) || parseFloat(i.style.width)
      || i.naturalWidth;
    const frame = i.closest('a.image-reference') || i.parentElement;
    const r = i.getBoundingClientRect();
    return {id: fig ? fig.id : i.src.split('/').pop(),
            number: fig && fig.querySelector('.caption-number')
              ? fig.querySelector('.caption-number').textContent.trim() : '',
            ratio: r.width / oneX, whole: frame.scrollWidth <= frame.clientWidth + 1
              && r.left >= -1 && r.right <= window.innerWidth + 1};
  })"""

# Lazily loaded pictures, loaded now.
JS_LOAD_IMAGES = """() => Promise.all([...document.images].map(i => {
  i.loading = 'eager';
  return i.decode().catch(() => null);
}))"""

# Header buttons and the controls of the interactive pages, as a finger meets them.
JS_TARGETS = """() => [...document.querySelectorAll(
    '.bd-header-article button, .bd-header-article a.btn, .bd-header-article .dropdown-toggle,'
    + ' .atlas select, .umbrella input, .umbrella button')]
  .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
  .map(e => { const r = e.getBoundingClientRect();
    return {what: (e.getAttribute('aria-label') || e.title || e.id || e.textContent).trim().slice(0, 40),
            w: Math.round(r.width), h: Math.round(r.height)}; })
  .filter(t => t.w < 44 || t.h < 44)"""


# axe-core's contrast rule reads every element with text, one by one, and was most of a page's
# test. It reads instead one element of each kind, where a kind is everything its verdict
# depends on: the text's colour, size, weight, style, shadow and opacity, and the layers behind
# it up to the first opaque background (a layer counts when it paints: a colour, a picture, a
# filter, a blend mode, or a position out of the flow, which puts other content behind it).
# Elements of one kind get one verdict; test_contrast_sample_finds_a_new_kind plants new kinds
# and checks that each is read. (Sampling the links of ``link-in-text-block`` the same way
# saved nothing: that rule's cost is in each link it reads.)
JS_CONTRAST_SAMPLE = """(excluded) => {
  const opacity = new Map(), behind = new Map();
  const chainOpacity = (el) => {
    if (!el || el.nodeType !== 1) return 1;
    if (!opacity.has(el))
      opacity.set(el, parseFloat(getComputedStyle(el).opacity) * chainOpacity(el.parentElement));
    return opacity.get(el);
  };
  const background = (el) => {
    if (!el || el.nodeType !== 1) return '';
    if (behind.has(el)) return behind.get(el);
    const cs = getComputedStyle(el);
    const placed = cs.position === 'static' || cs.position === 'relative' ? '' : cs.position;
    const layer = [cs.backgroundColor, cs.backgroundImage, placed, cs.mixBlendMode, cs.filter].join(' ');
    const clear = layer === 'rgba(0, 0, 0, 0) none  normal none';
    const opaque = cs.backgroundImage === 'none' && cs.backgroundColor.startsWith('rgb(');
    const below = opaque ? '' : background(el.parentElement);
    const sig = clear ? below : below ? `${layer} / ${below}` : layer;
    behind.set(el, sig);
    return sig;
  };
  const seen = new Set(), kinds = new Set(), picked = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const el = t.parentElement;
    if (!t.nodeValue.trim() || !el || seen.has(el)) continue;
    seen.add(el);
    if (excluded && el.closest(excluded)) continue;
    if (!el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    const cs = getComputedStyle(el);
    const kind = [cs.color, cs.fontSize, cs.fontWeight, cs.fontStyle, cs.textShadow,
                  chainOpacity(el), background(el)].join(' | ');
    if (!kinds.has(kind)) { kinds.add(kind); picked.push(el); }
  }
  return picked;
}"""

AXE_RUN = (
    """async ([excluded, everything]) => {
  const options = {resultTypes: ['violations'], preload: false};  // no CSS fetches of its own
  const found = [];
  if (everything)  // every rule but contrast, on the whole page
    found.push(...(await axe.run({exclude: excluded ? [[excluded]] : []},
      {...options, rules: {'color-contrast': {enabled: false}}})).violations);
  const sample = (SAMPLE)(excluded);
  if (sample.length)
    found.push(...(await axe.run({include: sample},
      {...options, runOnly: {type: 'rule', values: ['color-contrast']}})).violations);
  return found.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.impact} ${v.id} (${v.nodes.length}): `
      + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '));
}"""
).replace("(SAMPLE)", f"({JS_CONTRAST_SAMPLE})")


def _axe(page, everything: bool = True, code: bool = False) -> list[str]:
    """Serious and critical violations found by axe-core on the page as it is now: every rule
    (``everything``) or contrast alone; contrast is read on one element of each kind
    (``JS_CONTRAST_SAMPLE``). Code blocks are left to ``test_code_colours`` (thousands of token
    spans of a few kinds) unless ``code``."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    return list(page.evaluate(AXE_RUN, [None if code else ".highlight pre", everything]))


def _math_problems(page) -> list[str]:
    """Formulas shown (on a page that loads MathJax only on demand: shown on the screen) but
    not typeset, and MathJax's errors."""
    problems = []
    untypeset = page.evaluate(
        """(kind) => [...document.querySelectorAll('.math')]
          .filter(e => e.checkVisibility({visibilityProperty: true})  // not in a closed <details>
            && !e.querySelector('mjx-container'))
          .filter(e => { if (kind !== 'on demand') return true;
            const r = e.getBoundingClientRect();
            return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth; })
          .map(e => e.textContent.slice(0, 40))""",
        page.evaluate(MATH_KIND),
    )
    if untypeset:
        problems.append(
            f"{len(untypeset)} formula(s) not typeset by MathJax, e.g. {untypeset[0]!r}"
        )
    if page.evaluate("() => document.querySelectorAll('mjx-merror').length"):
        problems.append("MathJax reported an error (mjx-merror)")
    return problems


def _content_problems(page) -> list[str]:
    """Checks that do not depend on the window width or the theme."""
    problems = _math_problems(page)
    broken = page.evaluate(
        "() => [...document.images].filter(i => i.complete && i.naturalWidth === 0).map(i => i.src)"
    )
    problems += [f"broken image: {src}" for src in broken]
    titles = page.evaluate(
        "() => [...document.querySelectorAll('div.proof > p.admonition-title, "
        "div.proof .admonition-title')].map(e => e.textContent.trim())"
    )
    problems += [f"theorem without a number: {t!r}" for t in titles if not re.search(r"\d", t)]
    body = page.evaluate("() => document.querySelector('main, article, body').innerText")
    unresolved = re.findall(r"\[(?:hmk2025|[a-z]+\d{4}[a-z]*)\]", body)
    problems += [f"unresolved citation {u}" for u in unresolved]
    shown = page.evaluate(
        """() => {
          const main = (document.querySelector('.bd-article') || document.body).cloneNode(true);
          main.querySelectorAll('.cell_input, div.highlight:not(.cell_output *)')
              .forEach(e => e.remove());
          return main.innerText;
        }"""
    )
    for fig in page.evaluate(JS_FIGURES):
        what = f"figure {fig['where']!r}"
        if not fig["numbered"]:
            problems.append(f"{what} has no number")
        if not fig["captioned"]:
            problems.append(f"{what} has no caption")
        if not fig["alt"]:
            problems.append(f"{what} has no alt text")
    for m in RAW_TABLE.finditer(shown):
        problems.append(f"raw Markdown table shown as text: {m.group(0).strip()[:60]!r}")
    head = page.evaluate(
        """() => ({
          blocking: [...document.querySelectorAll('head script[src]:not([defer]):not([async])')]
            .map(s => s.getAttribute('src')),
          description: (document.querySelector('meta[name="description"]') || {}).content || '',
          pdf: [...document.querySelectorAll('a[href]')]
            .filter(a => /(^|\\/)book\\.pdf$/.test(a.getAttribute('href'))).map(a => a.href),
          menu: !!document.querySelector('.dropdown-download-buttons'),
          menuPdf: !!document.querySelector('.dropdown-download-buttons a[href$="book.pdf"]'),
          printButton: !!document.querySelector('[onclick*="print"]'),
        })"""
    )
    problems += [f"render-blocking script in the head: {s}" for s in head["blocking"]]
    if len(head["description"]) < 40 or "\\" in head["description"]:
        problems.append(f"no proper meta description: {head['description']!r}")
    if not head["pdf"] or head["printButton"] or (head["menu"] and not head["menuPdf"]):
        problems.append("the page (or its download menu) does not link the book's PDF")
    elif not all(url.endswith("/book.pdf") and url.count("/book.pdf") == 1 for url in head["pdf"]):
        problems.append(f"PDF link not at the site's root: {head['pdf']}")
    return problems


def _layout_problems(page, label: str) -> list[str]:
    """Checks that depend on the window width and the theme."""
    problems = []
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if width[0] > width[1]:
        wide = page.evaluate(
            """() => [...document.querySelectorAll('.bd-article *')]
              .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
              .filter(e => !e.closest('pre, mjx-container, table, .book-scroll'))
              .slice(0, 3).map(e => e.tagName + '.' + e.className + ': '
                               + (e.textContent || '').trim().slice(0, 50))"""
        )
        problems.append(f"{label}: page is {width[0]} px wide in a {width[1]} px window: {wide}")
    for block in page.evaluate(JS_CUT_OFF):
        if block["cut"]:
            problems.append(
                f"{label}: {block['lines']} {block['kind']} line(s) cut off (box fits "
                f"{block['fits']} characters), e.g. {block['example']!r}"
            )
        if block["wrappedRows"]:
            problems.append(
                f"{label}: a printed table wraps {block['wrappedRows']} row(s), "
                f"e.g. {block['example']!r}"
            )
    problems += [f"{label}: {p}" for p in page.evaluate(JS_SCROLL_BOXES)]
    squashed = page.evaluate(
        """() => [...document.querySelectorAll('.bd-article img')]
          .filter(i => i.complete && i.naturalWidth > 0 && i.clientWidth > 0)
          .filter(i => {
            const st = getComputedStyle(i);  // the content box: the dark theme pads images
            const w = i.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
            const h = i.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
            const ratio = i.naturalWidth / i.naturalHeight;
            return Math.abs(w / h - ratio) > 0.02 * ratio;
          })
          .map(i => i.src.split('/').pop())"""
    )
    problems += [f"{label}: image drawn out of proportion: {src}" for src in squashed]
    return problems


def test_site_has_pages():
    pages = set(_pages())
    assert len(pages) >= 4, f"too few pages in {SITE}: {sorted(pages)}"
    missing = [doc for doc in _toc() if f"{doc}.html" not in pages]
    assert not missing, f"pages of the table of contents that were not built: {missing}"


@pytest.mark.parametrize("page_path", _pages())
def test_page(page_path, server, browser):
    """The page at 1400 px and at 390 px, each in the light and in the dark theme.

    One load: the window is then narrowed (as a reader turning a tablet would) and the
    reader's system switches between light and dark (the site follows it), in the order
    that needs the fewest switches: 1400 px light, 1400 px dark, 390 px dark, 390 px light.
    axe-core reads the page in both themes: every rule in the light one as the page first
    shows, and contrast in the dark one once every formula and figure is in; the colours of
    code are checked once for every kind of token (``test_code_colours``).
    """
    w = Watched(browser, server, DESKTOP, "light")
    page = w.page
    try:
        w.page.goto(f"{server}/{page_path}", wait_until="load")
        w.wait_for_math(typeset_all=False)
        first_view = _bytes_of(w.fetched)
        problems = [f"1400 px, light: axe: {v}" for v in _axe(page)]
        page.evaluate(JS_LOAD_IMAGES)  # as a reader scrolling to the end would
        w.wait_for_math(typeset_all=True)
        problems += _content_problems(page)
        problems += _layout_problems(page, f"{DESKTOP} px, light")
        _theme(page, "dark")
        problems += [f"1400 px, dark: axe: {v}" for v in _axe(page, everything=False)]
        problems += _layout_problems(page, f"{DESKTOP} px, dark")
        w.resize(PHONE)
        problems += _layout_problems(page, f"{PHONE} px, dark")
        _theme(page, "light")
        problems += _layout_problems(page, f"{PHONE} px, light")
        small = page.evaluate(JS_TARGETS)
        problems += [f"{PHONE} px: touch target smaller than 44 px: {t}" for t in small]
        problems += _legibility_problems(page_path, page.evaluate(JS_LEGIBLE))
        whole = _bytes_of(w.fetched)  # with every picture and every formula's fonts
        chapter = _kind(page_path) in ("course", "notes")
        first_max, whole_max = BUDGET["chapter" if chapter else "other"]
        if first_view > first_max or whole > whole_max:
            problems.append(
                f"too heavy: {first_view // KB} KB before scrolling (at most {first_max // KB}),"
                f" {whole // KB} KB with every figure (at most {whole_max // KB}), gzip"
            )
        heavy = [f for f in w.fetched if "fontawesome" in f and _gz(str(SITE / f)) > 20 * KB]
        if heavy:
            problems.append(f"FontAwesome is loaded whole: {heavy}")
        if any(f.endswith("searchindex.js") for f in w.fetched) and page_path != "search.html":
            problems.append("the search index is loaded outside the search page")
        problems += w.problems
    finally:
        w.close()
    assert not problems, f"{page_path}:\n" + "\n".join(sorted(set(problems)))


def _theme(page, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)
    page.wait_for_function(f"() => document.documentElement.dataset.theme === '{scheme}'")


def _legibility_problems(page_path: str, figures: list[dict]) -> list[str]:
    """At 390 px every figure is drawn at least at half its own size and shown whole (a tap on
    a figure opens the picture itself, to zoom); the figures still to be redrawn must fail."""
    problems = []
    for f in figures:
        ok = f["ratio"] >= LEGIBLE - 0.005 and f["whole"]
        where = f"figure {f['number']}#{f['id']} drawn at {f['ratio']:.2f} of its size"
        if not ok and f["id"] not in NOT_YET_LEGIBLE:
            problems.append(f"{PHONE} px: {where}" + ("" if f["whole"] else ", not shown whole"))
        if ok and f["id"] in NOT_YET_LEGIBLE:
            problems.append(f"{where}: legible now, remove it from NOT_YET_LEGIBLE")
    return problems


# Code as the site shows it: one line per kind of token (the Pygments classes of every page)
# and a printed output, in a code cell of a real page, read by axe in both themes.
def _token_classes() -> list[str]:
    classes: set[str] = set()
    for rel in _pages():
        for block in re.findall(
            r'<div class="highlight"><pre>(.*?)</pre>', (SITE / rel).read_text(), re.S
        ):
            classes.update(re.findall(r'<span class="([\w ]+)">', block))
    return sorted(classes)


def test_code_colours(server, browser):
    """Every kind of code token and printed output has enough contrast in both themes."""
    classes = _token_classes()
    assert classes, "no highlighted code found"
    w = Watched(browser, server, DESKTOP)
    try:
        w.goto(_a_chapter(), typeset_all=False)
        page = w.page
        page.evaluate(
            """(classes) => {
              const tokens = classes.map(c => `<span class="${c}">token_${c.replace(/ /g, '_')}</span>`);
              document.querySelector('.bd-article').innerHTML =
                '<div class="cell docutils container"><div class="cell_input docutils container">'
                + '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre>'
                + tokens.join('\\n') + '</pre></div></div></div>'
                + '<div class="cell_output docutils container"><div class="output stream '
                + 'highlight-myst-ansi notranslate"><div class="highlight"><pre>printed output '
                + '1.0e-12 (2, 3)</pre></div></div></div></div>';
            }""",
            classes,
        )
        problems = []
        for scheme in ("light", "dark"):
            _theme(page, scheme)
            problems += [f"{scheme}: {v}" for v in _axe(page, everything=False, code=True)]
        assert not problems, "\n".join(problems)
    finally:
        w.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_contrast_sample_finds_a_new_kind(scheme, server, browser):
    """The contrast rule reads one element of each kind (``JS_CONTRAST_SAMPLE``). Planted in a
    paragraph of a real page, each new kind is read and fails, in both themes: a phrase in a
    faint colour, deep inside the paragraph, and words on a box of a new colour."""
    w = Watched(browser, server, DESKTOP, scheme)
    try:
        w.goto(_a_chapter(), typeset_all=False)
        page = w.page
        assert not _axe(page, everything=False), "the page itself should pass"
        # a pale grey on the light theme's white, or a dark one on the dark theme's black; and
        # the text's own colour on a box of the other theme's text colour
        faint, box = ("#bbb", "#444") if scheme == "light" else ("#555", "#bbb")
        page.evaluate(
            """([faint, box]) => {
              const p = [...document.querySelectorAll('.bd-article section p')].at(-1);
              p.insertAdjacentHTML('beforeend', ` <em><span id="faint" style="color: ${faint}">
                faint words</span></em> <span id="boxed" style="background: ${box}">words on a
                box</span>`);
            }""",
            [faint, box],
        )
        found = _axe(page, everything=False)
        for target in ("#faint", "#boxed"):
            assert any("color-contrast" in v and target in v for v in found), (target, found)
    finally:
        w.close()


@pytest.mark.parametrize("page_path", ["search.html", "book/intro.html"])
def test_pages_from_the_file_system(page_path, browser):
    """Opened from disk (``file://``), a page shows no error; the search page finds pages."""
    w = Watched(browser, FILE_SITE, PHONE)
    try:
        target = page_path + ("?q=fiber" if page_path == "search.html" else "")
        w.goto(target)
        page = w.page
        assert not _math_problems(page)
        if page_path == "search.html":
            page.wait_for_selector("#search-results ul.search li", timeout=20000)
            assert page.locator("#search-results ul.search li").count() >= 3
        assert not w.problems, w.problems
    finally:
        w.close()


# ------------------------------------------------------------------------------------------
# navigation buttons
# ------------------------------------------------------------------------------------------

JS_NAV = """() => {
  const shown = e => {
    if (!e) return false;
    const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    return cs.visibility !== 'hidden' && cs.display !== 'none' && cs.opacity !== '0'
      && r.width > 0 && r.height > 0 && r.right > 0 && r.left < window.innerWidth;
  };
  const pm = document.getElementById('pst-primary-sidebar-modal');
  const sm = document.getElementById('pst-secondary-sidebar-modal');
  const links = m => m && m.open ? [...m.querySelectorAll('a')].filter(shown).length : 0;
  const article = document.querySelector('.bd-article').getBoundingClientRect();
  return {
    articleInside: article.left >= 0 && article.right <= window.innerWidth + 1,
    sidebar: shown(document.getElementById('pst-primary-sidebar')),
    contents: shown(document.getElementById('pst-secondary-sidebar')),
    drawer: !!(pm && pm.open && shown(pm)), drawerLinks: links(pm),
    contentsDrawer: !!(sm && sm.open && shown(sm)), contentsLinks: links(sm),
  };
}"""


def _settle(page) -> dict:
    page.wait_for_timeout(350)  # the theme's transitions take 0.2–0.25 s
    return page.evaluate(JS_NAV)


def _a_chapter() -> str:
    """A course page with page contents (its own sections): the first such in the toc."""
    for doc, kind in _toc().items():
        html = SITE / f"{doc}.html"
        if kind == "course" and html.exists() and "secondary-toggle" in html.read_text():
            return f"{doc}.html"
    return "book/intro.html"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("which", ["landing", "chapter"])
def test_navigation_buttons_at_desktop_width(which, scheme, server, browser):
    """1400 px: the ☰ button hides and shows the chapter sidebar; the contents are shown."""
    page_path = "book/intro.html" if which == "landing" else _a_chapter()
    w = Watched(browser, server, DESKTOP, scheme)
    try:
        w.goto(page_path, typeset_all=False)
        page = w.page
        toggles = page.locator(".primary-toggle")
        assert toggles.count() == 1, "exactly one sidebar button (no hidden duplicate)"
        searches = page.evaluate(
            """() => [...document.querySelectorAll('.search-button-field, .search-button')]
              .filter(e => e.offsetParent !== null && e.getBoundingClientRect().width > 0).length"""
        )
        assert searches == 1, f"{searches} search boxes shown (one expected)"
        state = page.evaluate(JS_NAV)
        assert state["sidebar"] and state["contents"], state
        toggles.click()
        state = _settle(page)
        assert not state["sidebar"], "the ☰ button did not hide the sidebar"
        assert state["articleInside"], "with the sidebar hidden, the text runs off the window"
        toggles.click()
        state = _settle(page)
        assert state["sidebar"] and state["articleInside"], "the sidebar did not come back"
        assert not w.problems, w.problems
    finally:
        w.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("which", ["landing", "chapter"])
def test_navigation_buttons_at_phone_width(which, scheme, server, browser):
    """390 px: ☰ opens the chapter drawer and Escape closes it; the contents button too; a tap
    on one of the contents closes the drawer and lands on that section."""
    page_path = "book/intro.html" if which == "landing" else _a_chapter()
    w = Watched(browser, server, PHONE, scheme)
    try:
        w.goto(page_path, typeset_all=False)
        page = w.page
        state = page.evaluate(JS_NAV)
        assert not state["sidebar"] and not state["drawer"], state
        page.locator(".primary-toggle").click()
        state = _settle(page)
        assert state["drawer"] and state["drawerLinks"] >= 8, f"no chapter drawer: {state}"
        page.keyboard.press("Escape")
        assert not _settle(page)["drawer"], "Escape did not close the chapter drawer"
        # a second opening works too, and a chapter link in the drawer is followable
        page.locator(".primary-toggle").click()
        assert _settle(page)["drawer"], "the drawer did not open a second time"
        page.keyboard.press("Escape")
        _settle(page)
        secondary = page.locator(".secondary-toggle")
        if which == "landing" and secondary.count() == 0:
            return  # a page without sections has no contents drawer
        assert secondary.count() == 1 and secondary.is_visible(), "no page-contents button"
        secondary.click()
        state = _settle(page)
        assert state["contentsDrawer"] and state["contentsLinks"] >= 1, (
            f"the contents button opened nothing: {state}"
        )
        page.keyboard.press("Escape")
        assert not _settle(page)["contentsDrawer"], "Escape did not close the contents"
        secondary.click()
        _settle(page)
        link = page.locator("#pst-secondary-sidebar-modal a.nav-link").last
        target = link.get_attribute("href")
        link.click()
        state = _settle(page)
        assert not state["contentsDrawer"], "the contents drawer stays open after a tap"
        top = page.evaluate(
            "(id) => document.getElementById(decodeURIComponent(id)).getBoundingClientRect().top",
            target.split("#")[1],
        )
        assert 0 <= top < 300, f"the tap on {target} did not land on it (top {top})"
        assert not w.problems, w.problems
    finally:
        w.close()


def test_sidebar_formula_on_a_page_without_math(server, browser):
    """A page without formulas of its own typesets a formula of its sidebar (a page title)
    when the reader opens the part of the sidebar that shows it."""
    pages = [
        rel
        for rel in _pages()
        if 'id="book-mathjax"' in (text := (SITE / rel).read_text())
        and not re.search(r'<script[^>]* src="[^"]*book-mathjax\.js', text)
    ]
    if not pages:
        pytest.skip("no page with a formula only in its sidebar")
    w = Watched(browser, server, DESKTOP)
    try:
        w.goto(pages[0], typeset_all=False)
        page = w.page
        assert not page.evaluate("() => !!window.MathJax"), "MathJax loaded before it is needed"
        page.evaluate(
            """() => { const f = document.querySelector('#pst-primary-sidebar .math');
              let d = f.closest('details');
              while (d) { d.open = true; d = d.parentElement.closest('details'); }
              f.scrollIntoView({block: 'center'}); }"""
        )
        page.wait_for_function(
            "() => document.querySelector('#pst-primary-sidebar .math mjx-container')",
            timeout=20000,
        )
        assert not w.problems, w.problems
    finally:
        w.close()


def _a_page_with_solutions() -> str | None:
    for rel in _pages():
        text = (SITE / rel).read_text(encoding="utf-8")
        if re.search(r'class="solution[^"]*"', text) and 'class="reference internal"' in text:
            return rel
    return None


def test_exercise_link_in_a_solution_title(server, browser):
    """The first click of a page on the "Exercise N" link of a solution's title navigates to
    the exercise with no page error (the box's toggle handler used to fail on it)."""
    page_path = _a_page_with_solutions()
    if page_path is None:
        pytest.skip("no page with solutions")
    w = Watched(browser, server, PHONE)
    try:
        w.goto(page_path, typeset_all=False)
        page = w.page
        link = page.locator(".solution > .admonition-title a[href*='#']").first
        href = link.get_attribute("href")
        link.scroll_into_view_if_needed()
        link.click()
        page.wait_for_timeout(400)
        hash_now = page.evaluate("() => decodeURIComponent(location.hash)")
        assert hash_now == "#" + href.split("#", 1)[1], f"the link did not navigate: {href}"
        assert not w.problems, w.problems
    finally:
        w.close()


# ------------------------------------------------------------------------------------------
# print
# ------------------------------------------------------------------------------------------

PRINT_WIDTH = 680  # A4 with 14 mm margins, in CSS px


def _print_pages() -> list[str]:
    """The course pages with the most display equations and printed outputs, the ledger."""
    counts = []
    for doc, kind in _toc().items():
        html = SITE / f"{doc}.html"
        if kind == "course" and html.exists():
            text = html.read_text(encoding="utf-8")
            counts.append(
                (text.count('class="math notranslate nohighlight"') + text.count("<pre"), doc)
            )
    chosen = [f"{doc}.html" for _, doc in sorted(counts)[-2:]]
    return chosen + (["book/checked.html"] if (SITE / "book/checked.html").exists() else [])


@pytest.mark.parametrize("page_path", _print_pages() if SITE.is_dir() else [])
def test_print(page_path, server, browser):
    """Printed on A4: no code, output or equation runs off the page; the title keeps its
    chapter number."""
    w = Watched(browser, server, PRINT_WIDTH)
    try:
        w.goto(page_path)
        page = w.page
        page.emulate_media(media="print")
        page.wait_for_timeout(300)
        over = page.evaluate(
            """() => {
              const out = [];
              const right = document.querySelector('.bd-article').getBoundingClientRect().right;
              for (const e of document.querySelectorAll('.bd-article pre, .bd-article table,'
                  + ' .bd-article mjx-container[display="true"] > mjx-math, .bd-article img')) {
                if (!e.getClientRects().length) continue;
                const r = e.getBoundingClientRect();
                if (r.right > right + 2 || e.scrollWidth > e.clientWidth + 2)
                  out.push(`${e.tagName}: ${(e.textContent || e.getAttribute('src') || '').trim().slice(0, 60)}`);
              }
              return out;
            }"""
        )
        assert not over, f"{page_path}: runs off the printed page:\n" + "\n".join(over)
        title = page.evaluate(
            "() => { const h = document.querySelector('#jb-print-docs-body h1');"
            " return h && getComputedStyle(h).display !== 'none' ? h.textContent : null; }"
        )
        html = (SITE / page_path).read_text(encoding="utf-8")
        number = re.search(r'<h1><span class="section-number">([^<]+)</span>', html)
        if number:
            assert title and title.strip().startswith(number[1].strip()), (
                f"printed title {title!r} lacks the number {number[1]!r}"
            )
        assert not w.problems, w.problems
    finally:
        w.close()


def _pdf_pages(data: bytes) -> int:
    """Pages of a PDF: its page objects, counted in the file and in its compressed object
    streams (LaTeX's PDFs keep them there)."""
    import zlib

    chunks = [data]
    for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        try:
            chunks.append(zlib.decompress(m[1]))
        except zlib.error:
            continue
    return sum(len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", c)) for c in chunks)


def test_the_pdf_is_part_of_the_site():
    """The PDF that `make pdf` builds is in the site, where every page links it: a PDF of the
    whole book (at least one page per page of the website)."""
    pdf = SITE / "book.pdf"
    if not pdf.exists():
        pytest.skip("the PDF is built by `make pdf` (LaTeX), not by the test's site build")
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-" and data.rstrip().endswith(b"%%EOF")
    pages = _pdf_pages(data)
    assert pages >= len(_toc()), f"{pages} pages for {len(_toc())} pages of the website"


# ------------------------------------------------------------------------------------------
# the atlas of dimensions
# ------------------------------------------------------------------------------------------

# One architecture of each kind: one layer (a < d, a > d), equal widths, general widths,
# each way the formula can fail, and depth 3.
ATLAS_CASES = [
    ((3, 2), (2,)),
    ((2, 3), (5,)),
    ((4, 4, 4), (3, 3)),
    ((5, 4, 2), (2, 1)),
    ((3, 2, 2), (1, 2)),
    ((5, 4, 1), (2, 1)),
    ((2, 3, 3), (2, 2)),
    ((3, 3, 3, 3), (2, 2, 2)),
    ((4, 2, 3, 1), (1, 2, 4)),
    ((1, 1, 1, 1), (1, 1, 1)),
]


@functools.cache
def _atlas() -> dict:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from make_atlas import read_atlas
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return read_atlas(ATLAS)


def _atlas_entry(widths, attn) -> dict:
    return _atlas()[(tuple(widths), tuple(attn))]


def _live_entry(widths, attn) -> dict:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from make_atlas import compute_entry
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return compute_entry(widths, attn, softmax=False)


def _pick(page, widths, attn) -> dict:
    """Choose the architecture with the controls, as a reader would; return what is shown."""
    page.select_option("#atlas-depth", str(len(attn)))
    for i, d in enumerate(widths):
        page.select_option(f"#atlas-d-{i}", str(d))
    for i, a in enumerate(attn, start=1):
        page.select_option(f"#atlas-a-{i}", str(a))
    key = ",".join(map(str, widths)) + "|" + ",".join(map(str, attn))
    page.wait_for_selector(f'table.atlas-table[data-key="{key}"]', timeout=10000)
    return page.evaluate(
        """() => {
          const t = id => { const e = document.getElementById(id); return e ? e.innerText : null; };
          return {P: t('atlas-P'), formula: t('atlas-formula'), rhs: t('atlas-rhs'),
                  failed: [...document.querySelectorAll('#atlas-failed li')].map(e => e.innerText),
                  certified: t('atlas-certified'), lower: t('atlas-lower'), upper: t('atlas-upper'),
                  softmaxFormula: t('atlas-softmax-formula'), softmaxRank: t('atlas-softmax-rank'),
                  softmaxCell: t('atlas-softmax-cell'),
                  softmaxCertified: t('atlas-softmax-certified'),
                  softmaxBounds: [t('atlas-softmax-lower'), t('atlas-softmax-upper')],
                  chapter: document.getElementById('atlas-chapter').getAttribute('href'),
                  hash: location.hash};
        }"""
    )


# The atlas's height in every frame while the page loads (its place is reserved, so that the
# text below does not move when the controls and the first result replace the placeholder).
JS_ATLAS_HEIGHTS = """(() => {
  window.__atlasHeights = [];
  (function sample() {
    const a = document.getElementById('atlas');
    if (a) window.__atlasHeights.push([!!a.querySelector('table.atlas-table'),
                                       a.getBoundingClientRect().height]);
    if (!(a && a.querySelector('table.atlas-table')) || window.__atlasHeights.length < 5)
      requestAnimationFrame(sample);
  })();
})();"""


@pytest.mark.parametrize("origin", ["http", "file"])
@pytest.mark.parametrize("width", sorted(WIDTHS), ids=str)
def test_atlas_controls_show_the_computed_values(width, origin, server, browser):
    """Drive the controls; the numbers shown are the data's, and the data is lsa_lib's. Over
    http and from the file system (the data then arrives by <script>, not fetch); the page
    does not shift when the data arrives (the atlas keeps the height reserved for it)."""
    w = Watched(browser, server if origin == "http" else FILE_SITE, WIDTHS[width])
    try:
        w.page.add_init_script(JS_ATLAS_HEIGHTS)
        w.goto("book/atlas.html", typeset_all=False)
        page = w.page
        page.wait_for_selector("table.atlas-table", timeout=10000)
        page.wait_for_timeout(300)
        heights = [round(h) for _, h in page.evaluate("() => window.__atlasHeights")]
        assert max(heights) - min(heights) <= 2, f"the atlas's height changed: {heights}"
        page.wait_for_selector("#atlas-depth option", state="attached")
        for widths, attn in ATLAS_CASES if origin == "http" else ATLAS_CASES[::4]:
            shown = _pick(page, widths, attn)
            data = _atlas_entry(widths, attn)
            label = f"widths {widths}, attn {attn}"
            assert shown["P"] == str(data["P"]), label
            if data["formula"] is None:
                assert shown["formula"] is None and shown["rhs"] == str(data["formula_rhs"]), label
                assert shown["failed"] == data["failed"], label
            else:
                assert shown["formula"] == str(data["formula"]) and not shown["failed"], label
            if data["lower"] == data["upper"]:
                assert shown["certified"] == str(data["lower"]), label
            else:
                assert (shown["lower"], shown["upper"]) == (str(data["lower"]), str(data["upper"]))
            if data["softmax_formula"] is not None:
                assert shown["softmaxFormula"] == str(data["softmax_formula"]), label
            if data["softmax_lower"] == data["softmax_upper"]:
                assert shown["softmaxCertified"] == str(data["softmax_lower"]), label
            else:
                bounds = [str(data["softmax_lower"]), str(data["softmax_upper"])]
                assert shown["softmaxBounds"] == bounds, label
            if data["softmax_rank"] is not None:
                assert shown["softmaxRank"] == str(data["softmax_rank"]), label
            else:
                assert (
                    "no clear gap" in shown["softmaxCell"] or "not computed" in shown["softmaxCell"]
                )
            assert shown["hash"] == f"#w={','.join(map(str, widths))}&a={','.join(map(str, attn))}"
            target = shown["chapter"].split("#")
            html = (SITE / "book" / target[0]).read_text()
            assert f'id="{target[1]}"' in html, (
                f"{label}: link to a missing anchor {shown['chapter']}"
            )
        if origin == "http":
            # the data agree with lsa_lib, recomputed now for a few of the cases
            for widths, attn in ATLAS_CASES[::3]:
                data, live = _atlas_entry(widths, attn), _live_entry(widths, attn)
                for key in ("P", "formula", "formula_rhs", "failed", "softmax_formula"):
                    assert data[key] == live[key], (widths, attn, key)
                assert live["lower"] <= data["upper"] and data["lower"] <= live["upper"]
        # an address opens the atlas on its architecture
        page.goto(f"{w.server}/book/atlas.html#w=5,4,1&a=2,1", wait_until="load")
        page.wait_for_selector('table.atlas-table[data-key="5,4,1|2,1"]', timeout=10000)
        assert page.input_value("#atlas-d-2") == "1" and page.input_value("#atlas-a-2") == "1"
        problems = _layout_problems(page, "atlas") + w.problems
        assert not problems, problems
    finally:
        w.close()


# ------------------------------------------------------------------------------------------
# the rotatable Figure 1
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", ["http", "file"])
def test_umbrella_turns(origin, server, browser):
    w = Watched(browser, server if origin == "http" else FILE_SITE, DESKTOP)
    try:
        w.goto("book/umbrella.html", typeset_all=False)
        page = w.page
        page.wait_for_selector('#umbrella[data-ready="true"]', timeout=10000)
        canvas = page.locator("#umbrella-canvas")
        before = canvas.screenshot()
        colours = page.evaluate(
            """() => { const c = document.getElementById('umbrella-canvas');
              const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
              let blue = 0, gold = 0;
              for (let i = 0; i < d.length; i += 4) {
                if (d[i+2] > 120 && d[i] < 90) blue++;
                if (d[i] > 220 && d[i+1] > 180 && d[i+2] < 60) gold++;
              }
              return {blue, gold}; }"""
        )
        assert colours["blue"] > 5000 and colours["gold"] > 50, f"nothing drawn: {colours}"
        assert not page.locator("figure.umbrella-static").is_visible(), "static copy shown twice"
        box = canvas.bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx + 120, cy + 40, steps=6)
        page.mouse.up()
        assert page.input_value("#umbrella-azim") != "-35", "dragging did not turn the figure"
        assert canvas.screenshot() != before, "the picture did not change"
        page.click(".umbrella-reset")
        assert page.input_value("#umbrella-azim") == "-35"
        assert page.input_value("#umbrella-elev") == "24"
        # the axis names are apart from each other, at the default view and at a phone's width
        for width in (DESKTOP, PHONE):
            w.resize(width)
            labels = json.loads(canvas.get_attribute("data-labels"))
            for i, (a, xa, ya) in enumerate(labels):
                for b, xb, yb in labels[i + 1 :]:
                    assert abs(xa - xb) > 18 or abs(ya - yb) > 18, f"{a} and {b} overlap: {labels}"
        page.emulate_media(media="print")
        assert page.locator("figure.umbrella-static").is_visible(), "no static figure in print"
        assert not w.problems, w.problems
    finally:
        w.close()


# ------------------------------------------------------------------------------------------
# launch buttons
# ------------------------------------------------------------------------------------------


def _repository() -> tuple[str, str]:
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = config["repository"]["url"].rstrip("/")
    return url.split("github.com/")[1], config["repository"].get("branch", "main")


@pytest.mark.parametrize(
    "notebook",
    sorted(
        p.relative_to(ROOT / "book").with_suffix("").as_posix()
        for p in (ROOT / "book").rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts
    ),
    ids=str,
)
def test_launch_buttons_point_at_the_notebook(notebook):
    """Binder and Colab buttons open this chapter's notebook in the configured repository."""
    html_path = SITE / "book" / f"{notebook}.html"
    if not html_path.exists():
        pytest.fail(f"{html_path} was not built")
    html = html_path.read_text()
    repo, branch = _repository()
    binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=tree/book/{notebook}.ipynb"
    colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/book/{notebook}.ipynb"
    assert f'href="{binder}"' in html, f"{notebook}: no Binder button to {binder}"
    assert f'href="{colab}"' in html, f"{notebook}: no Colab button to {colab}"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
