"""The book's own adjustments to the Jupyter Book 1 website (a local Sphinx extension).

* Theme: the colour mode defaults to ``auto`` (an empty mode makes the theme log an error on
  every page); the template in ``templates/layout.html`` drops the theme's top navigation bar,
  whose hidden sidebar buttons captured the click handlers of the visible ones.
* Scripts: the Thebe ("live code") scripts are not loaded — the book launches its chapters in
  Binder or Colab through plain links, and the Thebe configuration snippet was injected twice
  into every page (a console error).
* Inline code: long names get line-break opportunities after each dot and underscore, so
  that ``lsa_lib.dimension.certified_dimension_beyond_symmetries`` wraps on a phone.
* ``{theorem-index}``: a directive listing every theorem, definition, proposition and
  conjecture of the book with its number, title and chapter (the readable counterpart of the
  proof domain's index, which lists raw labels and is therefore not built).
* ``_static/labels.json``: every label (theorem-like boxes and targets) with the address of
  the page and anchor that hold it, relative to the site's root, for pages that link by label
  in JavaScript (the atlas), so that their links follow text that moves between pages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent

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


def _builder_inited(app: Sphinx) -> None:
    # the theme's files, then the data the interactive pages fetch (written by `make atlas`)
    app.config.html_static_path.extend([str(HERE / "static"), str(HERE.parent / "site_data")])


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


def _html_page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
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
    (static / "labels.json").write_text(json.dumps(labels, sort_keys=True) + "\n", encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _html_page_context)
    app.add_node(theorem_index)
    app.add_directive("theorem-index", TheoremIndex)
    app.connect("doctree-read", _collect_titles)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _fill_theorem_index)
    app.connect("build-finished", _write_label_map)
    app.add_css_file("book.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
