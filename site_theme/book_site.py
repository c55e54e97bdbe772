"""The book's own adjustments to the Jupyter Book 1 website (a local Sphinx extension).

* Theme: the colour mode defaults to ``auto`` (an empty mode makes the theme log an error on
  every page); the template in ``templates/layout.html`` drops the theme's top navigation bar,
  whose hidden sidebar buttons captured the click handlers of the visible ones.
* Scripts: the Thebe ("live code") scripts are not loaded — the book launches its chapters in
  Binder or Colab through plain links, and the Thebe configuration snippet was injected twice
  into every page (a console error).
* Inline code: long names get line-break opportunities after each dot and underscore, so
  that ``lsa_lib.dimension.certified_dimension_beyond_symmetries`` wraps on a phone.
* Weight and speed, offline data, accessible names, print (``book_site_html``, run once the
  site is written): inline SVG icons instead of FontAwesome, deferred scripts, lazily loaded
  figures with their sizes, ``.js`` twins of the interactive pages' data for ``file://``.
* MathJax: one file with exactly the parts the book uses (TeX input with the AMS macros,
  CommonHTML output, hidden MathML for screen readers, lazy typesetting: a formula is typeset
  when it comes near the screen, so long pages do not freeze), written from the npm copy; the
  formulas of each page's first screen are typeset ahead of time with it (in Node).
* Search: the theme's search tools and the search index load on the search page only (the
  other pages' search box sends the reader there).
* The PDF: the download menu of every page links the book's PDF (``book.pdf`` at the site's
  root, built by ``make pdf``) instead of the browser's print dialog.
* A meta description per page: the page's ``description`` field (front matter of a Markdown
  page, top-level metadata of a notebook), else the start of its first paragraph.
* Bibliography labels in the author–year form of the citations ("Henry et al. 2025").
* ``{theorem-index}``: a directive listing every theorem, definition, proposition and
  conjecture of the book with its number, title and chapter (the readable counterpart of the
  proof domain's index, which lists raw labels and is therefore not built).
* ``_static/labels.json``: every label (theorem-like boxes and targets) with the address of
  the page and anchor that hold it, relative to the site's root, for pages that link by label
  in JavaScript (the atlas), so that their links follow text that moves between pages.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import book_site_bib
import book_site_html
import book_site_math
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent
# the interactive pages' data folders (in site_data/, copied to _static/)
DATA_FOLDERS = ("atlas", "umbrella")
PDF_NAME = "book.pdf"

# ----------------------------------------------------------------------------------------
# configuration
# ----------------------------------------------------------------------------------------


_FOOTER = (
    '<p class="book-licence">Text licensed under '
    '<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>; code (the '
    "<code>lsa_lib</code> library and the notebooks' code) under the "
    '<a href="{url}/blob/{release}/LICENSE">MIT licence</a>.</p>'
)


def _config_inited(app: Sphinx, config: Any) -> None:
    # the licence footer links the LICENSE of the release set in _config.yml's repository block
    options = dict(config.html_theme_options or {})
    url = str(options.get("repository_url", "")).rstrip("/")
    release = options.get("repository_branch", "main")
    options["extra_footer"] = _FOOTER.format(url=url, release=release)
    config.html_theme_options = options
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context
    config.templates_path = [str(HERE / "templates"), *list(config.templates_path or [])]
    # The proof domain's own index lists raw labels; the book's theorem index replaces it.
    config.html_domain_indices = ["py-modindex"]
    # MathJax: the book's own bundle (see book_site_math), lazy typesetting
    config.mathjax_path = f"mathjax/{book_site_math.BUNDLE}"
    config.mathjax3_config = book_site_math.config(config.mathjax3_config)
    book_site_bib.register()
    config.bibtex_default_style = book_site_bib.STYLE


def _builder_inited(app: Sphinx) -> None:
    # the theme's files, then the data the interactive pages read (written by `make atlas`)
    app.config.html_static_path.extend([str(HERE / "static"), str(HERE.parent / "site_data")])


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    book_site_math.write_bundle(outdir / "_static" / "mathjax")
    book_site_html.finish(
        outdir,
        DATA_FOLDERS,
        PDF_NAME,
        math={"src": f"_static/{app.config.mathjax_path}", "config": app.config.mathjax3_config},
        prerender=lambda formulas: book_site_math.prerender(
            formulas, outdir / "_static" / "mathjax"
        ),
    )
    # the PDF, when `make pdf` has built it (the html build does not run LaTeX)
    pdf = Path(app.outdir).parent / "latex" / PDF_NAME
    if pdf.exists():
        shutil.copyfile(pdf, outdir / PDF_NAME)


# ----------------------------------------------------------------------------------------
# per-page adjustments
# ----------------------------------------------------------------------------------------

_THEBE = ("sphinx-thebe.js", "sphinx-thebe.css")
_THEBE_CONFIG = re.compile(r'\s*<script type="text/x-thebe-config">.*?</script>', re.S)
_PRE_SPAN = re.compile(r'(<span class="pre">)([^<]{16,})(</span>)')


def _is_thebe(asset: Any) -> bool:
    filename = str(getattr(asset, "filename", asset) or "")
    body = str((getattr(asset, "attributes", None) or {}).get("body", ""))
    return filename.endswith(_THEBE) or "THEBE_JS_URL" in body


def _dedupe(assets: list[Any]) -> list[Any]:
    seen, out = set(), []
    for asset in assets:
        key = (
            str(getattr(asset, "filename", asset) or ""),
            str((getattr(asset, "attributes", None) or {}).get("body", "")),
        )
        if key in seen:
            continue
        seen.add(key)
        out.append(asset)
    return out


def _break_after_dots(match: re.Match[str]) -> str:
    return match[1] + match[2].replace(".", ".<wbr>").replace("_", "_<wbr>") + match[3]


def _pdf_button(app: Sphinx, context: dict) -> None:
    """The download menu's ".pdf" entry: the book's PDF, not the print dialog."""
    for group in context.get("header_buttons", []):
        for k, button in enumerate(group.get("buttons", [])):
            if button.get("label") == "download-pdf-button":
                group["buttons"][k] = {
                    "type": "link",
                    "url": context["pathto"](PDF_NAME, 1),
                    "text": "PDF of the book",
                    "tooltip": "The whole book as a PDF",
                    "icon": "fas fa-file-pdf",
                    "label": "download-pdf-button",
                }


_DESCRIPTION_LENGTH = 155


def _description(app: Sphinx, pagename: str, context: dict, doctree: Any) -> str:
    """The page's ``description`` field, else the start of its first paragraph, else the
    book's description."""
    meta = context.get("meta") or {}
    text = str(meta.get("description") or "").strip()
    if not text and doctree is not None:
        for para in doctree.findall(nodes.paragraph):
            if _inside(para, _NOT_PROSE):
                continue
            candidate = " ".join(_prose(para).split())
            if len(candidate) >= 40:
                text = candidate
                break
    if not text:
        text = app.config.book_description
    text = re.sub(r"\\[a-zA-Z]+\s*|[{}]", "", text)  # TeX outside a formula (a docstring's)
    if len(text) > _DESCRIPTION_LENGTH:
        text = text[: _DESCRIPTION_LENGTH - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def _prose(node: nodes.Node) -> str:
    """The text of a paragraph with its formulas in plain letters (``\\mathcal{M}_{2,1,2}``
    becomes ``M_2,1,2``)."""
    out = []
    for child in node.findall(nodes.Text):
        if isinstance(child.parent, nodes.math):
            tex = re.sub(r"\\[lc]?dots\b", "…", child.astext())
            out.append(re.sub(r"\\[a-zA-Z]+\s*|[{}]", "", tex))
        else:
            out.append(child.astext())
    return "".join(out)


_NOT_PROSE = (nodes.Admonition, nodes.table, nodes.container, nodes.footnote, nodes.citation)


def _inside(node: nodes.Node, kinds: tuple[type, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def _html_page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    _pdf_button(app, context)
    metatags = context.get("metatags", "")
    if 'name="description"' not in metatags:
        text = _description(app, pagename, context, doctree)
        tag = f'<meta name="description" content="{html.escape(text, quote=True)}" />'
        context["metatags"] = (metatags + "\n" + tag).strip()
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = _dedupe([a for a in context[key] if not _is_thebe(a)])
    if "body" in context:
        body = _THEBE_CONFIG.sub("", context["body"])
        context["body"] = _PRE_SPAN.sub(_break_after_dots, body)


# ----------------------------------------------------------------------------------------
# the theorem index
# ----------------------------------------------------------------------------------------


class theorem_index(nodes.General, nodes.Element):
    """Placeholder replaced by the table once every page is read and numbered."""


class TheoremIndex(SphinxDirective):
    """``{theorem-index}``: every numbered theorem-like box of the book, in reading order."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [theorem_index("")]


def _plain_title(app: Sphinx, node: nodes.Element) -> str:
    """The title the author wrote, without the ``(…)`` the proof title format adds; for an
    untitled statement, the start of its first sentence."""
    title = node.get("title", "")
    prefix, _, suffix = str(getattr(app.config, "proof_title_format", " (%t)")).partition("%t")
    if title and title.startswith(prefix) and title.endswith(suffix):
        title = title[len(prefix) : len(title) - len(suffix) if suffix else None]
    title = title.strip()
    if title:
        return title
    body = node.next_node(nodes.paragraph)
    words = body.astext().split() if body is not None else []
    return " ".join(words[:12]) + (" …" if len(words) > 12 else "")


def _collect_titles(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    titles = env.__dict__.setdefault("book_proof_titles", {})
    position = 0
    for node in doctree.findall(nodes.Admonition):
        label = node.get("label")
        if label and node.get("realtype"):
            position += 1
            titles[label] = {
                "docname": env.docname,
                "position": position,
                "title": _plain_title(app, node),
                "realtype": node["realtype"],
                "countertype": node.get("countertype", node["realtype"]),
                "id": (node.get("ids") or [label])[0],
            }


def _purge(app: Sphinx, env: Any, docname: str) -> None:
    titles = getattr(env, "book_proof_titles", {})
    for label in [k for k, v in titles.items() if v["docname"] == docname]:
        del titles[label]


def _merge(app: Sphinx, env: Any, docnames: Any, other: Any) -> None:
    env.__dict__.setdefault("book_proof_titles", {}).update(getattr(other, "book_proof_titles", {}))


def _doc_title(env: Any, docname: str) -> str:
    title = env.titles.get(docname)
    text = title.astext() if title is not None else docname
    number = env.toc_secnumbers.get(docname, {}).get("")
    return f"{'.'.join(map(str, number))}. {text}" if number else text


def _fill_theorem_index(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    env = app.env
    entries = list(getattr(env, "book_proof_titles", {}).values())
    order = {doc: k for k, doc in enumerate(_reading_order(env))}
    entries.sort(key=lambda e: (order.get(e["docname"], 10**6), e["position"]))
    for node in list(doctree.findall(theorem_index)):
        table = nodes.table(classes=["theorem-index"])
        group = nodes.tgroup(cols=3)
        table += group
        for width in (18, 52, 30):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        row = nodes.row()
        for text in ("Number", "Statement", "Chapter"):
            row += nodes.entry("", nodes.paragraph(text=text))
        head += row
        body = nodes.tbody()
        group += body
        for e in entries:
            number = ".".join(map(str, _number(env, e)))
            label = f"{e['realtype'].title()} {number}".strip()
            uri = app.builder.get_relative_uri(fromdocname, e["docname"]) + "#" + e["id"]
            row = nodes.row()
            ref = nodes.reference("", label, internal=True, refuri=uri)
            row += nodes.entry("", nodes.paragraph("", "", ref))
            title = nodes.paragraph()
            title += nodes.Text(e["title"])
            row += nodes.entry("", title)
            chapter = nodes.reference(
                "",
                _doc_title(env, e["docname"]),
                internal=True,
                refuri=app.builder.get_relative_uri(fromdocname, e["docname"]),
            )
            row += nodes.entry("", nodes.paragraph("", "", chapter))
            body += row
        node.replace_self(table)


def _number(env: Any, entry: dict) -> tuple[int, ...]:
    numbers = env.toc_fignumbers.get(entry["docname"], {}).get(entry["countertype"], {})
    return tuple(numbers.get(entry["id"], ()))


def _reading_order(env: Any) -> list[str]:
    """Documents in table-of-contents order (the root first, then depth first)."""
    out: list[str] = []

    def walk(doc: str) -> None:
        if doc in out:
            return
        out.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return out


# ----------------------------------------------------------------------------------------
# the label map
# ----------------------------------------------------------------------------------------


def _write_label_map(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    env, uri = app.env, app.builder.get_target_uri
    labels = {
        name: f"{uri(doc)}#{anchor}"
        for name, (doc, anchor, _) in env.domaindata["std"]["labels"].items()
        if anchor and doc in env.all_docs
    }
    for name, e in getattr(env, "book_proof_titles", {}).items():
        labels[name] = f"{uri(e['docname'])}#{e['id']}"
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    text = json.dumps(labels, sort_keys=True) + "\n"
    (static / "labels.json").write_text(text, encoding="utf-8")
    # its .js twin, for a page opened from the file system (book.js: loadBookData)
    twin = book_site_html.data_script("labels.json", text)
    (static / "labels.js").write_text(twin, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value(
        "book_description",
        "An executable textbook on the geometry of lightning self-attention.",
        "html",
        types=[str],
    )
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    # after sphinx-book-theme's own handlers (priority 501), which build the header buttons
    app.connect("html-page-context", _html_page_context, priority=900)
    # after the theme's own (which writes the light and dark code colours into pygments.css)
    app.connect("build-finished", _build_finished, priority=900)
    app.add_node(theorem_index)
    app.add_directive("theorem-index", TheoremIndex)
    app.connect("doctree-read", _collect_titles)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _fill_theorem_index)
    app.connect("build-finished", _write_label_map)
    app.add_css_file("book.css")
    app.add_js_file("book.js", loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
