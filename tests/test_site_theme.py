"""Unit tests of the website's build passes (site_theme/): each rewrite does what it says and
changes nothing the second time; the bibliography's labels; the MathJax bundle's parts.

The built site itself is read in a browser by tests/test_site_browser.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site_theme"))

import book_site_bib  # noqa: E402
import book_site_html as h  # noqa: E402
import book_site_math  # noqa: E402

ICONS = {("fas", "bars"): (448, 512, "M0 0h448v64H0z"), ("fab", "github"): (496, 512, "M1 1z")}


def test_icons_become_inline_svg_with_the_same_drawing():
    page = (
        '<span class="fa-solid fa-bars"></span><i class="fab fa-github"></i>'
        '<i class="theme-switch fa-solid fa-bars fa-lg" data-mode="dark" title="Dark"></i>'
        '<script defer src="../_static/scripts/fontawesome.js?digest=1"></script>'
    )
    out = h.inline_icons(page, ICONS)
    assert "fa-" not in out.replace("book-icon-", "") and "fontawesome.js" not in out
    assert out.count("<svg") == 3 and 'viewBox="0 0 448 512"' in out and "M1 1z" in out
    assert 'class="book-icon book-icon-bars theme-switch book-icon-lg" data-mode="dark"' in out
    assert 'title="Dark"' not in out and h.inline_icons(out, ICONS) == out
    with pytest.raises(KeyError, match="fa-rocket"):
        h.inline_icons('<i class="fas fa-rocket"></i>', ICONS)


def test_fontawesome_tables_are_read_per_pack():
    js = (
        'var a={github:[496,512,[],"f09b","M1 1z"]};x("fab",a);'
        'var b={sun:[512,512,[],"f185","M2 2z"]};x("far",b);'
        'var c={sun:[512,512,[9728],"f185","M3 3z"],"magnifying-glass":[1,2,[],"f002","M4"]};'
        'x("fas",c);'
    )
    icons = h.read_icons(js)
    assert icons[("fab", "github")][2] == "M1 1z" and icons[("far", "sun")][2] == "M2 2z"
    assert icons[("fas", "sun")][2] == "M3 3z" and icons[("fas", "magnifying-glass")][:2] == (1, 2)


def test_scripts_are_deferred_and_page_options_inlined(tmp_path):
    static = tmp_path / "_static"
    static.mkdir()
    (static / "documentation_options.js").write_text("const DOCUMENTATION_OPTIONS = {};\n")
    page = (
        '<script src="../_static/documentation_options.js?v=1"></script>\n'
        '<script src="../_static/doctools.js?v=2"></script>\n'
        '<script data-x="y" src="../_static/tabs.js"></script>\n'
        '<script defer src="../_static/already.js"></script>\n'
        "<script>inline()</script>"
    )
    out = h.defer_scripts(page, static, tmp_path / "book")
    assert "<script>const DOCUMENTATION_OPTIONS = {};</script>" in out
    assert '<script defer src="../_static/doctools.js?v=2"></script>' in out
    assert '<script data-x="y" defer src="../_static/tabs.js"></script>' in out
    assert out.count("defer") == 3 and h.defer_scripts(out, static, tmp_path / "book") == out


def test_text_tables_are_told_from_prose():
    table = "widths  attn  P\n(2, 2)  (2,)  12\n(3, 3)  (3,)  27\n"
    assert h.is_text_table(table)
    assert not h.is_text_table("137 architectures: 91 agree with the formula\nrank 36\n")
    page = (
        '<div class="output stream highlight-myst-ansi notranslate"><div class="highlight">'
        f"<pre><span></span>{table}</pre></div></div>"
    )
    out = h.mark_text_tables(page)
    assert '<pre class="book-text-table">' in out and h.mark_text_tables(out) == out


def test_first_screen_formulas_are_marked_eager():
    math = '<span class="math notranslate nohighlight">\\(x\\)</span>'
    page = f'<article class="bd-article"><p>{math} {"word " * 50}</p><p>{math}</p></article>'
    out = h.eager_math(page, characters=100)
    assert out.count("book-eager") == 1 and out.index("book-eager") < out.index("word")
    assert h.eager_math(out, characters=100) == out


def test_first_screen_formulas_are_typeset_ahead_of_time():
    inline = '<span class="math notranslate nohighlight">\\(a &lt; b\\)</span>'
    display = (
        '<div class="math notranslate nohighlight" id="equation-e">\n<span class="eqno">(1.1)'
        '<a class="headerlink" href="#equation-e">#</a></span>\\[\nx\n\\]</div>'
    )
    plain = '<div class="math notranslate nohighlight">\n\\[y\\]</div>'
    page = f'<head></head><article class="bd-article"><p>{inline}</p>{display}{plain}</article>'
    eager = h.eager_math(page)
    assert h.eager_formulas(eager) == [("a < b", False), ("\nx\n", True), ("y", True)]
    typeset = {("a < b", False): "<mjx-container>A</mjx-container>"}
    out = h.prerendered_math(eager, typeset, "../_static/m.css")
    assert "<mjx-container>A</mjx-container></span>" in out and "\\[\nx\n\\]</div>" in out
    assert out.count('href="../_static/m.css"') == 1
    assert h.prerendered_math(out, typeset, "../_static/m.css") == out


def test_the_head_sets_the_colour_theme_the_script_will_set():
    head = (
        '<script>document.documentElement.dataset.theme = localStorage.getItem("theme") || "auto";'
    )
    out = h.early_theme(head)
    assert "prefers-color-scheme: dark" in out and 'getItem("mode") || "auto"' in out
    assert h.early_theme(out) == out


def test_pictures_get_their_size_and_load_lazily(tmp_path):
    png = (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (800).to_bytes(4, "big") + (600).to_bytes(4, "big")
    )
    (tmp_path / "a.png").write_bytes(png + b"\x00" * 16)
    img = '<img alt="x" src="a.png" style="width: 400px; height: 300px;" />'
    page = f'<article class="bd-article"><p>Start.</p>{img}<p>{"text " * 2000}</p>{img}</article>'
    out = h.lazy_images(page, tmp_path)
    first, second = out.split("<img")[1:]
    assert 'width="800" height="600"' in first and "--book-1x: 400px" in first
    assert "lazy" not in first and 'loading="lazy"' in second
    assert h.lazy_images(out, tmp_path) == out


def test_style_sheets_become_one_with_their_urls_moved(tmp_path):
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "basic.css").write_text("a{background:url(file.png)}")
    (static / "styles" / "theme.css").write_text('@import "../basic.css";\nb{x:1}')
    (static / "styles" / "big.css").write_text('c{src:url(../vendor/f.woff) format("woff")}')
    (static / "book.css").write_text('d{background:url("data:image/svg+xml,(x)")}')
    page = (
        '<link href="../_static/styles/theme.css?digest=1" rel="stylesheet" />\n'
        '<link href="../_static/styles/big.css" rel="stylesheet" />\n'
        '<link rel="stylesheet" type="text/css" href="../_static/book.css?v=2" />\n'
    )
    bundles: dict = {}
    out = h.bundle_styles(page, tmp_path / "book", static, bundles)
    assert out.count("<link") == 1 and len(bundles) == 1
    css = (static / next(iter(bundles.values()))).read_text()
    assert 'url("file.png")' in css and 'url("vendor/f.woff")' in css and "@import" not in css
    assert 'url("data:image/svg+xml,(x)")' in css
    assert css.index('url("file.png")') < css.index("b{x:1}") < css.index("vendor")
    assert h.bundle_styles(out, tmp_path / "book", static, bundles) == out


def test_data_files_get_script_twins(tmp_path):
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "index.json").write_text('{"grid": {"1": 6}}')
    assert h.write_data_scripts(tmp_path, ["atlas"]) == 1
    twin = (tmp_path / "atlas" / "index.js").read_text()
    assert (
        twin == '(self.bookData = self.bookData || {})["atlas/index.json"] = {"grid": {"1": 6}};\n'
    )
    with pytest.raises(json.JSONDecodeError):
        h.data_script("x.json", "not json")


def test_accessible_names_and_roles():
    page = (
        '<a class="current reference internal" href="#">5. Singular <em>points</em></a>'
        '<details open="open"><summary><span class="toctree-toggle"></span></summary>'
        '<summary aria-label="Toggle hidden content"><p>Show code cell source</p></summary>'
        '<div class="citation" id="id3" role="doc-biblioentry">'
    )
    out = h.accessible_names(page)
    assert '<summary aria-label="Sections of 5. Singular points">' in out
    assert "Toggle hidden content" not in out and 'role="listitem"' in out
    assert h.accessible_names(out) == out


def test_pdf_link_and_printed_number():
    page = (
        '<div id="jb-print-docs-body" class="onlyprint">\n    <h1>Dimension</h1>'
        '<article class="bd-article"><h1><span class="section-number">4. </span>Dimension</h1>'
        '<p class="book-licence">Licence.</p>'
    )
    out = h.print_title(h.pdf_link(page, "../", "book.pdf"))
    assert '<h1><span class="section-number">4. </span>Dimension</h1>' in out.split("<article")[0]
    assert '<a href="../book.pdf">' in out
    assert h.print_title(h.pdf_link(out, "../", "book.pdf")) == out


def test_icon_codepoints_skip_fontawesomes_own_classes():
    css = '.fa-bell:before{content:"\\f0f3"}.admonition>.title:after{content:"\\f05a"}'
    css += ':root{--pst-icon-x:"\uf019"}.fade{opacity:0}'
    assert h.css_icon_codepoints(css) == {0xF05A, 0xF019}


def test_bibliography_labels_are_author_year():
    from pybtex.database import parse_string

    bib = parse_string(
        r"""
        @article{a, author = {Alexandr, Yulia and Duan, Yuhan and Mont{\'u}far, Guido},
                 title = {T}, year = {2026}}
        @misc{b, author = {{Anonymous}}, title = {U}, year = {n.d.}}
        @book{c, author = {Watanabe, Sumio}, title = {V}, year = {2009}}
        @article{d, author = {Henry, N. and Kohn, K.}, title = {W}, year = {2025}}
        @article{e, author = {Henry, N. and Kohn, K.}, title = {X}, year = {2025}}
        """,
        "bibtex",
    )
    labels = list(book_site_bib.AuthorYearLabels().format_labels(bib.entries.values()))
    assert labels == [
        "Alexandr et al. 2026",
        "Anonymous n.d.",
        "Watanabe 2009",
        "Henry and Kohn 2025a",
        "Henry and Kohn 2025b",
    ]


def test_mathjax_bundle_has_its_parts_in_order():
    es5 = ROOT / "node_modules" / "mathjax" / "es5"
    if not es5.is_dir():
        pytest.skip("MathJax is installed by `make setup` (npm)")
    text = book_site_math.bundle(es5)
    starts = [text.index(f"/* {file} */") for _, file in book_site_math.PARTS]
    assert starts == sorted(starts) and text.rstrip().endswith(");")
    config = book_site_math.config({"options": {"processHtmlClass": "math"}})
    assert config["options"]["processHtmlClass"] == "math" and config["loader"]["load"] == []
    assert config["options"]["lazyAlwaysTypeset"][0] == "." + h.EAGER_CLASS
    # ahead of time, as the browser would (Node runs the same copy of MathJax)
    done = book_site_math.prerender([("x^2", False), ("\\undefinedmacro", False)], es5)
    if done is None:
        pytest.skip("no Node")
    (html_x, failed), css = done
    assert html_x.startswith('<mjx-container class="MathJax" jax="CHTML"') and failed is None
    assert "font-size: 123.7%" in html_x and "mjx-assistive-mml" in html_x
    assert "mjx-c.mjx-c1D465.TEX-I::before" in css
