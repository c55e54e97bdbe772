"""The last pass over the written website (``build-finished``): lighter pages, offline data.

Each function takes the text of one HTML page and returns it changed; :func:`finish` applies
them to every page of the built site and writes the offline copies of the interactive pages'
data. Every rewrite is idempotent (a second pass changes nothing), so an incremental build that
rewrites only some pages leaves the others as they were.

* Icons: the theme draws about fifteen icons with FontAwesome, a 1.5 MB script plus two web
  fonts (817 KB gzip of the 980 KB every page carried). Each icon becomes an inline SVG with
  the same drawing, read from the theme's own copy of FontAwesome Free (CC BY 4.0 icons,
  https://fontawesome.com/license/free); the script is no longer loaded. The icons the
  theme's style sheets draw with FontAwesome's fonts remain, from fonts cut down to them.
* Style sheets: the dozen sheets of a page become one file (one render-blocking request).
* Scripts: the theme's scripts are deferred, so that none blocks the first paint; the few lines
  of page options that inline scripts read are inlined.
* Figures: every picture gets its pixel size and ``loading="lazy"`` (a picture on the first
  screen excepted), so that a page fetches its figures as the reader scrolls to them, and nothing moves
  when one arrives; the PNGs are re-encoded with a 256-colour palette (a third of the bytes).
* Offline data: the atlas and the rotatable figure read their data from ``.json`` files
  (written by ``tools/make_atlas.py`` and ``tools/make_umbrella.py``). A browser does not let a
  page opened from the file system ``fetch`` them, so each gets a ``.js`` twin that registers
  the same data when loaded by a ``<script>`` tag (``site_theme/static/book_data.js``).
* Formulas of the first screen: typeset while the site is written, by the same copy of MathJax
  run in Node (``site_theme/prerender_math.js``), so that the first screen does not move when
  MathJax arrives (TeX, then empty boxes, then formulas); their characters' style sheet is
  bundled with the page's. Without Node the browser typesets them, at once.
* Printed tables: an output whose lines are in columns is marked, so that on a phone it keeps
  its rows and scrolls sideways instead of wrapping them (``book.css``).
* Accessible names: the sidebar's expand buttons get a name; summaries and the search field
  lose labels that contradict their visible text; the bibliography's list gets valid roles.
* Print: the printed title keeps its chapter number; the footer links the book's PDF.
* Colour theme: set in the head to the one the theme's script will set once the page is
  parsed (it restyled the whole page on load).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import struct
from collections.abc import Callable, Iterable
from pathlib import Path

# ------------------------------------------------------------------------------------------
# icons
# ------------------------------------------------------------------------------------------

# the icons the theme's templates use; an unknown one fails the build (see icon_svg)
ICON_PACKS = {"fa-solid": "fas", "fas": "fas", "fa-regular": "far", "far": "far", "fab": "fab"}
ICON_PACKS["fa-brands"] = "fab"
_PACK_CALL = re.compile(r'\b[\w$]+\("(fa[bsr])",')
_ICON_DEF = re.compile(
    r'(?:"([a-z0-9-]+)"|\b([a-z][a-z0-9]*)):\[(\d+),(\d+),\[[^\]]*\],"[0-9a-f]+","([^"]+)"\]'
)
_ICON_TAG = re.compile(r'<(i|span) class="([^"]*\bfa-[a-z0-9-]+[^"]*)"([^>]*)>\s*</\1>')


def read_icons(fontawesome_js: str) -> dict[tuple[str, str], tuple[int, int, str]]:
    """``(pack, name) → (width, height, path)`` from FontAwesome's all-in-one script, whose
    icon tables each precede the call that defines their pack (``…("fab", {…})``)."""
    calls = [(m.start(), m.group(1)) for m in _PACK_CALL.finditer(fontawesome_js)]
    icons: dict[tuple[str, str], tuple[int, int, str]] = {}
    start = 0
    for end, pack in calls:
        for m in _ICON_DEF.finditer(fontawesome_js, start, end):
            icons.setdefault((pack, m[1] or m[2]), (int(m[3]), int(m[4]), m[5]))
        start = end
    return icons


def icon_svg(classes: str, attrs: str, icons: dict) -> str:
    names = classes.split()
    pack = next((ICON_PACKS[c] for c in names if c in ICON_PACKS), "fas")
    shape = [c[3:] for c in names if c.startswith("fa-") and c not in ICON_PACKS]
    shape = [s for s in shape if s not in ("lg", "fw", "xs", "sm", "2x")]
    if len(shape) != 1 or (pack, shape[0]) not in icons:
        raise KeyError(f"no FontAwesome icon for class {classes!r}")
    width, height, path = icons[(pack, shape[0])]
    keep = [c for c in names if not c.startswith("fa") or c == "fa-lg"]
    cls = " ".join(["book-icon", f"book-icon-{shape[0]}", *keep]).replace("fa-lg", "book-icon-lg")
    attrs = re.sub(r'\s+title="[^"]*"', "", attrs)  # the button around it carries the name
    return (
        f'<svg class="{cls}"{attrs} viewBox="0 0 {width} {height}" aria-hidden="true" '
        f'focusable="false"><path fill="currentColor" d="{path}"/></svg>'
    )


def inline_icons(page: str, icons: dict) -> str:
    page = _ICON_TAG.sub(lambda m: icon_svg(m[2], m[3], icons), page)
    page = re.sub(r'\s*<script defer src="[^"]*fontawesome\.js[^"]*"></script>', "", page)
    return re.sub(
        r'\s*<link rel="preload" as="script" href="[^"]*fontawesome\.js[^"]*"\s*/>', "", page
    )


# The theme's style sheets still draw about twenty icons with FontAwesome's web fonts
# (admonition titles, the sidebar's carets, external links: CSS ``content`` glyphs). Those fonts
# are cut down to the glyphs some style sheet uses (a few KB instead of 270 KB).
_FA_FONTS = ("fa-solid-900", "fa-regular-400", "fa-brands-400")
_PUA = re.compile("[\ue000-\uf8ff]|\\\\(f[0-9a-f]{3})")
_ICON_CLASS_RULE = re.compile(r"\.fa-[\w-]+::?(before|after)")


def css_icon_codepoints(css: str) -> set[int]:
    """Private-use code points in the ``content`` of rules other than FontAwesome's own
    ``.fa-<name>:before`` classes (which the pages no longer use)."""
    found: set[int] = set()
    for m in re.finditer(r"([^{}]*)\{([^{}]*)\}", css):
        selectors = [x.strip() for x in m[1].split(",")]
        if all(_ICON_CLASS_RULE.fullmatch(x) for x in selectors):
            continue
        for c in _PUA.finditer(m[2]):
            found.add(int(c[1], 16) if c[1] else ord(c[0]))
    return found


def subset_icon_fonts(static: Path) -> None:
    from fontTools import subset

    webfonts = static / "vendor" / "fontawesome" / "webfonts"
    if not webfonts.is_dir():
        return
    css_files = sorted(static.rglob("*.css"))
    used: set[int] = set()
    for css in css_files:
        used |= css_icon_codepoints(css.read_text(encoding="utf-8"))
    for name in _FA_FONTS:
        source = webfonts / f"{name}.ttf"
        if not source.exists():
            continue
        options = subset.Options()
        options.flavor = "woff"
        font = subset.load_font(str(source), options)
        cutter = subset.Subsetter(options)
        cutter.populate(unicodes=sorted(used))
        cutter.subset(font)
        subset.save_font(font, str(webfonts / f"{name}-book.woff"), options)
    for css in css_files:
        text = original = css.read_text(encoding="utf-8")
        for name in _FA_FONTS:
            text = text.replace(
                f'fontawesome/webfonts/{name}.woff2) format("woff2")',
                f'fontawesome/webfonts/{name}-book.woff) format("woff")',
            )
        if text != original:
            css.write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------
# scripts
# ------------------------------------------------------------------------------------------

_SYNC_SCRIPT = re.compile(
    r'<script((?:\s+(?!defer|async|type=)[\w-]+="[^"]*")*)\s+src="([^"]+)"></script>'
)


def defer_scripts(page: str, static: Path, page_dir: Path) -> str:
    """Every external script without ``defer``/``async`` gets ``defer`` (which keeps their
    order); ``documentation_options.js``, whose variable later inline scripts read, is inlined."""

    def one(m: re.Match[str]) -> str:
        attrs, src = m[1], m[2]
        if "documentation_options.js" in src:
            file = (page_dir / src.split("?")[0]).resolve()
            code = file.read_text(encoding="utf-8").strip()
            return f"<script{attrs}>{code}</script>"
        return f'<script{attrs} defer src="{src}"></script>'

    return _SYNC_SCRIPT.sub(one, page)


# ------------------------------------------------------------------------------------------
# style sheets
# ------------------------------------------------------------------------------------------

_STYLE_LINK = re.compile(
    r'<link (?:rel="stylesheet" type="text/css" href="([^"]+)"|href="([^"]+)" rel="stylesheet")'
    r"\s*/?>\s*"
)
_CSS_URL = re.compile(r"""url\(\s*(?:(['"])(.*?)\1|([^)'"\s]+))\s*\)""")
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)['"]?\s*\)?\s*;""")


def _relocated_css(file: Path, static: Path, seen: set[Path]) -> str:
    """The text of a style sheet as if it sat in ``static``: relative ``url()``s rewritten,
    ``@import``s replaced by the imported sheet."""
    text = file.read_text(encoding="utf-8")
    seen.add(file)

    def url(m: re.Match[str]) -> str:
        target = m[2] if m[2] is not None else m[3]
        if re.match(r"(data:|[a-z]+://|/|#)", target):
            return m[0]
        moved = os.path.relpath((file.parent / target).resolve(), static.resolve())
        return f'url("{Path(moved).as_posix()}")'

    parts: list[str] = []

    def imported(m: re.Match[str]) -> str:
        target = (file.parent / m[1]).resolve()
        found = target not in seen and target.exists()
        parts.append(_relocated_css(target, static, seen) if found else "")
        return f"\0import{len(parts) - 1}\0"

    # this sheet's own urls are moved; an imported sheet moves its own
    text = _CSS_URL.sub(url, _CSS_IMPORT.sub(imported, text))
    return re.sub("\0import(\\d+)\0", lambda m: parts[int(m[1])], text)


def bundle_styles(page: str, page_dir: Path, static: Path, bundles: dict) -> str:
    """The page's dozen style sheets (each a render-blocking request) as one file in
    ``_static``, in the same order; pages with the same sheets share it."""
    links = list(_STYLE_LINK.finditer(page))
    if len(links) < 2:
        return page
    files = []
    for m in links:
        href = (m[1] or m[2]).split("?")[0]
        file = (page_dir / href).resolve()
        if static.resolve() not in file.parents or not file.exists():
            return page
        files.append(file)
    key = tuple(files)
    if key not in bundles:
        text = "\n".join(_relocated_css(f, static, set()) for f in files)
        name = f"book-styles-{hashlib.sha256(text.encode()).hexdigest()[:10]}.css"
        (static / name).write_text(text, encoding="utf-8")
        bundles[key] = name
    href = Path(os.path.relpath(static / bundles[key], page_dir)).as_posix()
    tag = f'<link rel="stylesheet" type="text/css" href="{href}" />\n'
    first, rest = links[0], links[1:]
    out = page[: first.start()] + tag
    pos = first.end()
    for m in rest:
        out += page[pos : m.start()]
        pos = m.end()
    return out + page[pos:]


# ------------------------------------------------------------------------------------------
# figures
# ------------------------------------------------------------------------------------------

_IMG = re.compile(r"<img\b([^>]*?)\s*/?>")


def png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None


def lazy_images(page: str, page_dir: Path) -> str:
    """Pictures of the article: pixel size as ``width``/``height`` (which reserve their space
    before they load, keeping the theme's CSS size) and lazy loading, except for a first
    picture within the first screen of text (about EAGER_CHARACTERS characters); a figure that stands in for an interactive one (class ``umbrella-static``: shown in print
    and without JavaScript) is lazy too, so that the screen never fetches it."""
    start = page.find('<article class="bd-article"')
    if start < 0:
        return page
    end = page.find("</article>", start)
    seen = 0

    def one(m: re.Match[str]) -> str:
        nonlocal seen
        attrs = m[1]
        src = re.search(r'src="([^"]+)"', attrs)
        if not src or src[1].startswith(("data:", "http")):
            return m[0]
        figure = body.rfind("<figure", 0, m.start())
        stand_in = figure >= 0 and "umbrella-static" in body[figure : body.find(">", figure)]
        seen += 0 if stand_in else 1
        file = page_dir / html.unescape(src[1])
        size = png_size(file.read_bytes()[:32]) if file.suffix == ".png" and file.exists() else None
        if size and "width=" not in attrs:
            attrs += f' width="{size[0]}" height="{size[1]}"'
        shown = re.search(r'style="width: (\d+(?:\.\d+)?)px;', attrs)
        if shown and "--book-1x" not in attrs:  # its size at 1x (see book.css)
            attrs = attrs.replace('style="', f'style="--book-1x: {shown[1]}px; ', 1)
        early = seen == 1 and len(_text(body[: m.start()]).split()) * 6 < EAGER_CHARACTERS
        if (not early or stand_in) and "loading=" not in attrs:
            attrs += ' loading="lazy"'
        if "decoding=" not in attrs:
            attrs += ' decoding="async"'
        return f"<img{attrs} />"

    body = page[start:end]
    return page[:start] + _IMG.sub(one, body) + page[end:]


# ------------------------------------------------------------------------------------------
# formulas of the first screen
# ------------------------------------------------------------------------------------------

EAGER_CLASS = "book-eager"
EAGER_CHARACTERS = 3000  # about a desktop screen of text, two phone screens (30 lines)
_MATH_OPEN = re.compile(r'<(span|div) class="math notranslate nohighlight"')
# the first screen is measured in lines of LINE characters (a desktop line): a paragraph, list
# item, table cell (a narrow column wraps; not the cells' paragraphs) or heading starts a new
# line, as does each line of code; a display formula takes two more lines, a picture four;
# what a folded box (<details>, a hidden code cell) holds is not shown
LINE = 100
_NEW_LINE = re.compile(r"<(p|li|tr|td|th|dt|dd|h[1-6]|pre|figcaption)[\s>]")
_TALL = {'<div class="math notranslate': 2 * LINE, "<img": 4 * LINE}


def eager_math(page: str, characters: int = EAGER_CHARACTERS) -> str:
    """Mark the formulas within about the first ``characters`` of the article's text (counted
    in lines, see LINE): they are typeset ahead of time (book_site_math.prerender), or by
    MathJax at once, the others when the reader scrolls near them (a formula waiting for that
    is an empty box, which would make the first screen jump)."""
    start = page.find('<article class="bd-article"')
    # (the class also appears in MathJax's configuration, which names the marked formulas)
    if start < 0 or f'class="math {EAGER_CLASS} ' in page:
        return page
    end = page.find("</article>", start)
    out, seen, pos, folded, code, row = [], 0, start, 0, 0, 0

    def new_line(seen: int) -> int:
        return -(-seen // LINE) * LINE

    for m in re.finditer(r"<[^>]+>|[^<]+", page[start:end]):
        token = m[0]
        if token.startswith("<"):
            opens_fold = token.startswith("<details")
            row += token.startswith("<tr") - token.startswith("</tr")
            if not folded:
                # (the paragraphs of a table's cells sit side by side, on the row's line)
                starts = _NEW_LINE.match(token)
                if opens_fold or (starts and (not row or starts[1] in ("tr", "td", "th"))):
                    seen = new_line(seen)
                seen += next((n for tag, n in _TALL.items() if token.startswith(tag)), 0)
                if seen < characters and _MATH_OPEN.match(token):
                    token = token.replace('class="math ', f'class="math {EAGER_CLASS} ', 1)
            folded += opens_fold - token.startswith("</details")
            code += token.startswith("<pre") - token.startswith("</pre")
        elif not folded:
            lines = token.split("\n") if code else [token]
            seen += len(lines[0].strip())
            for line in lines[1:]:
                seen = new_line(seen) + len(line.strip())
        out.append(token)
        pos = start + m.end()
        if seen >= characters:
            break
    return page[:start] + "".join(out) + page[pos:]


_EAGER_MATH = re.compile(
    rf'(<(span|div) class="math {EAGER_CLASS} notranslate nohighlight"[^>]*>'
    r'(?:\s*<span class="eqno">.*?</span>)?\s*)'
    r"(\\\(|\\\[)(.*?)(?:\\\)|\\\])(</\2>)",
    re.S,
)


def eager_formulas(page: str) -> list[tuple[str, bool]]:
    """The formulas :func:`eager_math` marked, as ``(TeX, display)``."""
    return [(html.unescape(m[4]), m[3] == "\\[") for m in _EAGER_MATH.finditer(page)]


def prerendered_math(page: str, typeset: dict[tuple[str, bool], str], css_href: str) -> str:
    """The first screen's formulas replaced by their typeset form (``typeset``: MathJax's
    CommonHTML, written ahead of time by ``book_site_math.prerender``), and the style sheet
    of their characters linked. Typeset in the browser, they would first show as TeX, then
    as empty boxes (lazy typesetting), then as formulas: the first screen would move twice."""

    def one(m: re.Match[str]) -> str:
        done = typeset.get((html.unescape(m[4]), m[3] == "\\["))
        if done is None:
            return m[0]
        return m[1] + done + m[5]

    out = _EAGER_MATH.sub(one, page)
    if out == page or css_href in page:
        return out
    tag = f'<link rel="stylesheet" type="text/css" href="{css_href}" />\n'
    head = out.find("</head>")
    return out[:head] + tag + out[head:]


def math_on_demand(page: str, root: str, math: dict | None) -> str:
    """A page without formulas of its own does not load MathJax, but its sidebar can hold a
    page title with a formula: the page gets MathJax's address and configuration, and book.js
    loads it when such a formula comes into view (the reader opens that part of the sidebar)."""
    if not math or "book-mathjax" in page or 'class="math' not in page:
        return page
    data = {"src": root + math["src"], "config": math["config"]}
    tag = (
        '<script type="application/json" id="book-mathjax">'
        + json.dumps(data).replace("</", "<\\/")
        + "</script>\n"
    )
    return page.replace("</head>", tag + "</head>", 1)


# ------------------------------------------------------------------------------------------
# printed tables
# ------------------------------------------------------------------------------------------

_OUTPUT_PRE = re.compile(
    r'(<div class="output stream[^"]*"><div class="highlight"><pre)(>)(.*?)(</pre>)', re.S
)
_COLUMNS = re.compile(r"\S {2,}\S.* {2,}\S")


def is_text_table(text: str) -> bool:
    """Printed output laid out in columns: at least two lines with two or more gaps of two
    spaces or more (``lsa_lib.report.Table``'s text form, or any aligned print)."""
    return sum(bool(_COLUMNS.search(line.strip())) for line in text.splitlines()) >= 2


def mark_text_tables(page: str) -> str:
    def one(m: re.Match[str]) -> str:
        if not is_text_table(html.unescape(re.sub(r"<[^>]+>", "", m[3]))):
            return m[0]
        return f'{m[1]} class="book-text-table"{m[2]}{m[3]}{m[4]}'

    return _OUTPUT_PRE.sub(one, page)


def shrink_pngs(images: Path, cache: Path) -> None:
    """Re-encode the figures as 256-colour PNGs (a third of their size; the book's plots have
    few colours, and the difference is not visible) when that saves a quarter or more. Opaque
    pictures only; results are kept in ``cache`` by the original's content hash."""
    import io

    from PIL import Image

    cache.mkdir(parents=True, exist_ok=True)
    for file in sorted(images.glob("*.png")):
        data = file.read_bytes()
        key = cache / (hashlib.sha256(data).hexdigest() + ".png")
        if key.exists():
            small = key.read_bytes()
        else:
            with Image.open(io.BytesIO(data)) as im:
                opaque = im.mode == "RGB" or (
                    im.mode == "RGBA" and im.getchannel("A").getextrema()[0] == 255
                )
                if not opaque:  # a palette image (already small) or a transparent one
                    small = data
                else:
                    out = io.BytesIO()
                    rgb = im.convert("RGB")
                    rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
                        out, "PNG", optimize=True
                    )
                    small = out.getvalue() if len(out.getvalue()) <= 0.75 * len(data) else data
            key.write_bytes(small)
        if small != data:
            file.write_bytes(small)


# ------------------------------------------------------------------------------------------
# accessible names and roles
# ------------------------------------------------------------------------------------------


def accessible_names(page: str) -> str:
    # the sidebar's expand buttons: a <summary> holding only an icon
    page = re.sub(
        r'(<a class="[^"]*reference internal[^"]*" href="[^"]*">((?:(?!</a>).)*)</a>)'
        r"(<details[^>]*>)<summary>",
        lambda m: f'{m[1]}{m[3]}<summary aria-label="Sections of {_attr(_text(m[2]))}">',
        page,
    )
    # the chapter sidebar is the book's navigation (its first items, the title and the search
    # box, sit before the <nav> of the chapter list)
    page = page.replace(
        '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar">',
        '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar" role="navigation"'
        ' aria-label="The book">',
    )
    # "Show code cell source": the visible text is the name, not "Toggle hidden content"
    page = page.replace('<summary aria-label="Toggle hidden content">', "<summary>")
    # the search field's visible text ("Search Ctrl+K") is its name
    page = page.replace(
        '<button class="btn search-button-field search-button__button pst-js-only" '
        'title="Search" aria-label="Search"',
        '<button class="btn search-button-field search-button__button pst-js-only" title="Search"',
    )
    # the bibliography: docutils marks its entries with a deprecated DPUB role, so that the
    # list seems to hold the entries' back-links; they are list items
    return page.replace(' role="doc-biblioentry"', ' role="listitem"')


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _attr(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=True)


# ------------------------------------------------------------------------------------------
# print
# ------------------------------------------------------------------------------------------


_THEME_SETUP = re.compile(
    r'document\.documentElement\.dataset\.theme = localStorage\.getItem\("theme"\) \|\| "(\w+)";'
)


def early_theme(page: str) -> str:
    """The theme's first lines in the head set the colour theme to the stored one or to
    ``auto``, which no style rule matches, and its script then sets ``light`` or ``dark`` once
    the page is parsed, which restyles the whole page on load. Here the head sets the theme its
    script will set: the mode's own (light, dark), or the reader's system's for ``auto``."""

    def one(m: re.Match[str]) -> str:
        return (
            f'document.documentElement.dataset.theme = ((m) => m === "light" || m === "dark" ? m'
            ' : matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light")'
            f'(localStorage.getItem("mode") || "{m[1]}");'
        )

    return _THEME_SETUP.sub(one, page)


def print_title(page: str) -> str:
    """The printed title (the theme's ``#jb-print-docs-body`` heading) with the page's number."""
    number = re.search(
        r'<article class="bd-article">.*?<h1><span class="section-number">([^<]+)</span>',
        page,
        re.S,
    )
    if not number:
        return page
    return re.sub(
        r'(<div id="jb-print-docs-body" class="onlyprint">\s*<h1>)(?!<span)',
        lambda m: f'{m[1]}<span class="section-number">{number[1]}</span>',
        page,
        count=1,
    )


# ------------------------------------------------------------------------------------------
# the PDF
# ------------------------------------------------------------------------------------------


def pdf_link(page: str, root: str, name: str) -> str:
    """A link to the book's PDF in the footer of every page (pages with a source also have it
    in their download menu); ``root`` is the relative path of the site's root."""
    if 'class="book-pdf"' in page:
        return page
    link = (
        f'<p class="book-pdf"><a href="{root}{name}">The whole book as a PDF</a> '
        "(for reading offline and printing).</p>"
    )
    return re.sub(r'(<p class="book-licence">.*?</p>)', lambda m: m[1] + link, page, count=1)


# ------------------------------------------------------------------------------------------
# offline data
# ------------------------------------------------------------------------------------------


def data_script(key: str, data: str) -> str:
    """The ``.js`` twin of a data file: registers the parsed JSON under its path in
    ``_static`` (see ``book_data.js``)."""
    json.loads(data)  # refuse to wrap something that is not JSON
    return f"(self.bookData = self.bookData || {{}})[{json.dumps(key)}] = {data.strip()};\n"


def write_data_scripts(static: Path, folders: Iterable[str]) -> int:
    count = 0
    for folder in folders:
        for file in sorted((static / folder).rglob("*.json")):
            key = file.relative_to(static).as_posix()
            twin = file.with_suffix(".js")
            text = data_script(key, file.read_text(encoding="utf-8"))
            if not twin.exists() or twin.read_text(encoding="utf-8") != text:
                twin.write_text(text, encoding="utf-8")
            count += 1
    return count


# ------------------------------------------------------------------------------------------
# the pass
# ------------------------------------------------------------------------------------------


def pages(outdir: Path) -> list[Path]:
    return sorted(
        p
        for p in outdir.rglob("*.html")
        if not {"_static", "_sources"} & set(p.relative_to(outdir).parts)
    )


def strip_icon_classes(static: Path) -> None:
    """Drop FontAwesome's 1,900 ``.fa-<name>:before`` rules from the theme's style sheet (no
    page uses those classes any more: 20 KB of the 65 KB gzip every page loads first)."""
    css = static / "styles" / "pydata-sphinx-theme.css"
    if not css.exists():
        return
    text = css.read_text(encoding="utf-8")
    kept = re.sub(
        r"(?<=[{}])([^{}@]*)\{[^{}]*\}",
        lambda m: (
            "" if all(_ICON_CLASS_RULE.fullmatch(x.strip()) for x in m[1].split(",")) else m[0]
        ),
        text,
    )
    if kept != text:
        css.write_text(kept, encoding="utf-8")


def typeset_first_screens(
    files: list[Path], static: Path, prerender: Callable[[list], tuple | None] | None
) -> tuple[dict[tuple[str, bool], str], str | None]:
    """The formulas of the pages' first screens typeset ahead of time (``prerender``: see
    ``book_site_math.prerender``), and the style sheet of their characters, written to
    ``_static`` under a name from its content (a page rewritten by a later, incremental build
    links its own sheet; the earlier pages keep theirs)."""
    formulas = sorted({f for file in files for f in eager_formulas(eager_math(file.read_text()))})
    done = prerender(formulas) if prerender else None
    if not done:
        return {}, None
    typeset = {f: h for f, h in zip(formulas, done[0], strict=True) if h}
    name = f"book-math-{hashlib.sha256(done[1].encode()).hexdigest()[:10]}.css"
    (static / name).write_text(done[1], encoding="utf-8")
    return typeset, name


def finish(
    outdir: Path,
    data_folders: Iterable[str],
    pdf_name: str,
    math: dict | None = None,
    prerender: Callable[[list], tuple | None] | None = None,
) -> None:
    static = outdir / "_static"
    fa = static / "scripts" / "fontawesome.js"
    icons = read_icons(fa.read_text(encoding="utf-8")) if fa.exists() else {}
    bundles: dict = {}
    files = pages(outdir)
    typeset, math_css = typeset_first_screens(files, static, prerender)

    def first_screen(t: str, d: Path) -> str:
        if not math_css:
            return t
        href = Path(os.path.relpath(static / math_css, d)).as_posix()
        return prerendered_math(t, typeset, href)

    steps: list[Callable[[str, Path], str]] = [
        lambda t, d: inline_icons(t, icons) if icons else t,
        lambda t, d: defer_scripts(t, static, d),
        lambda t, d: lazy_images(t, d),
        lambda t, d: mark_text_tables(t),
        lambda t, d: eager_math(t),
        first_screen,
        lambda t, d: math_on_demand(t, "../" * len(d.relative_to(outdir).parts), math),
        lambda t, d: accessible_names(t),
        lambda t, d: print_title(t),
        lambda t, d: early_theme(t),
        lambda t, d: pdf_link(t, "../" * len(d.relative_to(outdir).parts), pdf_name),
        lambda t, d: bundle_styles(t, d, static, bundles),
    ]
    # the style sheets and pictures first: the pages' pass bundles the sheets as they are then
    write_data_scripts(static, data_folders)
    subset_icon_fonts(static)
    strip_icon_classes(static)
    shrink_pngs(outdir / "_images", outdir.parent / "png-cache")
    for file in files:
        text = original = file.read_text(encoding="utf-8")
        for step in steps:
            text = step(text, file.parent)
        if text != original:
            file.write_text(text, encoding="utf-8")
