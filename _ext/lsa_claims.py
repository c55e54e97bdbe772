"""The claims ledger: a status on every theorem-like box, anchors on the cells that check it,
and the generated "What is checked" page.

Two halves in one module, so that the site build and the tests read the notebooks the same way:

* pure functions (no Sphinx): :func:`read_notebook` parses a notebook's JSON into its claim
  boxes and checking cells, :func:`validate` returns every way they break the convention;
* the Sphinx extension (:func:`setup`): the ``status``, ``source`` and ``grid`` options of the
  ``prf:*`` boxes with a badge and a footer, an anchor ``check-<label>`` (``-2``, ``-3`` ...) on
  every code cell tagged ``check:<label>``, and the ``claims-ledger`` directive that writes the
  table.

The convention (statuses, required options, tags) is the one of the book's contributor notes:
a box of a claim kind carries ``:label:`` and ``:status:``; ``paper`` and ``reported`` name a
``:source:``; ``certified``, ``float evidence`` and ``refuted`` name a ``:grid:`` and have at
least one checking cell; a checking cell contains ``assert`` and prints its outcome last.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes

STATUSES: dict[str, str] = {
    "paper": "the paper's statement, in no stronger form than the sources support",
    "reported": "known from summaries or reviews of the paper; wording and hypotheses unseen",
    "proved here": "the book gives a complete proof",
    "certified": "exact computation (lower bound = upper bound) on the grid the box names",
    "float evidence": "float64 ranks with their singular-value gaps, on the grid the box names",
    "conjecture": "the book's or the paper's conjecture, with the evidence named",
    "refuted": "a certified counterexample is shown",
}
CLAIM_KINDS = ("theorem", "proposition", "lemma", "corollary", "conjecture", "observation")
NEEDS_SOURCE = frozenset({"paper", "reported"})
NEEDS_GRID = frozenset({"certified", "float evidence", "refuted"})
NEEDS_CHECK = NEEDS_GRID
NEEDS_PROOF = frozenset({"proved here"})
DEFAULT_SOURCE = "this book"
# the counts of the rules table, written by tools/check_rules.py (relative to the book's root)
RULES_DATA = "site_data/rules.json"
CHECK_TAG = "check:"
# Tags that stop nbval from comparing a cell's output: the outcome would go unverified.
UNVERIFIED_TAGS = frozenset({"nbval-ignore-output", "nbval-skip", "raises-exception"})
# Directives whose body is not markdown (a box inside them is an example, not a claim).
LITERAL_DIRECTIVES = frozenset(
    {"code", "code-block", "code-cell", "sourcecode", "math", "raw", "literalinclude", "eval-rst"}
)

# Kinds of problem. The first group is about a box's own options (the box directive reports
# them where the box is); the second about cells and tags (reported per notebook).
BOX_PROBLEMS = frozenset({"no-label", "no-status", "unknown-status", "no-source", "no-grid"})
CELL_PROBLEMS = frozenset(
    {
        "no-check-cell",
        "unknown-label",
        "not-code",
        "no-assert",
        "no-outcome",
        "unverified-outcome",
        "duplicate-label",
        "no-proof",
    }
)


# --------------------------------------------------------------------------------------------
# Pure part: notebooks -> boxes, checking cells, problems
# --------------------------------------------------------------------------------------------


@dataclass
class Box:
    """One ``prf:<kind>`` box in a markdown cell."""

    kind: str
    title: str
    options: dict[str, str]
    cell: int  # index of the markdown cell in the notebook (0-based)
    proof_follows: bool = False  # the next prf directive of the notebook is a prf:proof

    @property
    def label(self) -> str:
        return self.options.get("label", "").strip()

    @property
    def status(self) -> str:
        return normalize_status(self.options.get("status", ""))

    @property
    def source(self) -> str:
        return " ".join(self.options.get("source", "").split())

    @property
    def grid(self) -> str:
        return " ".join(self.options.get("grid", "").split())

    @property
    def is_claim(self) -> bool:
        return self.kind in CLAIM_KINDS


@dataclass
class CheckCell:
    """A code cell tagged ``check:<label>`` (one or more labels)."""

    cell: int  # index of the cell in the notebook
    cell_type: str
    labels: list[str]
    source: str
    tags: list[str]
    execution_count: int | None
    outcome: str | None  # last non-empty line printed on stdout, None if nothing was printed
    anchors: dict[str, str] = field(default_factory=dict)  # label -> anchor id


@dataclass
class Notebook:
    """The claims of one notebook: its boxes and its checking cells, in document order."""

    path: Path
    boxes: list[Box]
    checks: list[CheckCell]

    def claims(self) -> list[Box]:
        """Boxes that enter the ledger: claim kinds, and any other box given a status."""
        return [b for b in self.boxes if b.is_claim or "status" in b.options]

    def checks_of(self, label: str) -> list[CheckCell]:
        return [c for c in self.checks if label in c.labels]


@dataclass(frozen=True)
class Problem:
    """One break of the convention. ``code`` is one of BOX_PROBLEMS or CELL_PROBLEMS."""

    code: str
    path: str
    cell: int | None  # 0-based index; shown 1-based
    message: str

    def __str__(self) -> str:
        where = f"{self.path}" + (f", cell {self.cell + 1}" if self.cell is not None else "")
        return f"{where}: {self.message}"


def normalize_status(value: str) -> str:
    """The status as written, with runs of white space made single spaces."""
    return " ".join(str(value).split())


def check_anchor(label: str, k: int) -> str:
    """Anchor id of the ``k``-th (1-based) cell checking ``label``: check-L, check-L-2, ..."""
    return f"check-{label}" if k == 1 else f"check-{label}-{k}"


def _markdown_parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin

    return MarkdownIt("commonmark").use(colon_fence_plugin)


_DIRECTIVE_INFO = re.compile(r"^\{([\w:.-]+)\}\s*(.*)$")
_OPTION_LINE = re.compile(r"^:([\w-]+):(.*)$")


def split_options(content: str) -> tuple[dict[str, str], str]:
    """Split a MyST directive body into its options and the rest.

    Options are either a leading ``---`` YAML block or leading ``:key: value`` lines (an
    indented line continues the previous value).
    """
    lines = content.splitlines()
    options: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() == "---":
                block = yaml.safe_load("\n".join(lines[1:end])) or {}
                if isinstance(block, dict):
                    options = {str(k): "" if v is None else str(v) for k, v in block.items()}
                return options, "\n".join(lines[end + 1 :])
        return options, content
    i = 0
    key = None
    while i < len(lines):
        match = _OPTION_LINE.match(lines[i])
        if match:
            key = match.group(1)
            options[key] = match.group(2).strip()
        elif key is not None and lines[i][:1] in (" ", "\t") and lines[i].strip():
            options[key] = (options[key] + " " + lines[i].strip()).strip()
        else:
            break
        i += 1
    return options, "\n".join(lines[i:])


def find_boxes(
    markdown: str, cell: int = 0, _parser=None, _events: list[Box | None] | None = None
) -> list[Box]:
    """Every ``prf:*`` box of a markdown text, nested ones included, in document order.

    ``_events``, if given, receives the boxes and a ``None`` for each ``prf:proof``, in order.
    """
    parser = _parser or _markdown_parser()
    boxes: list[Box] = []
    for token in parser.parse(markdown):
        if token.type not in ("fence", "colon_fence"):
            continue
        match = _DIRECTIVE_INFO.match(token.info.strip())
        if not match:
            continue  # a code block
        name, argument = match.groups()
        if name in LITERAL_DIRECTIVES:
            continue
        options, body = split_options(token.content)
        if name == "prf:proof" and _events is not None:
            _events.append(None)
        elif name.startswith("prf:") and name != "prf:proof":
            boxes.append(Box(name.split(":", 1)[1], argument.strip(), options, cell))
            if _events is not None:
                _events.append(boxes[-1])
        boxes.extend(find_boxes(body, cell, parser, _events))
    return boxes


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def printed_outcome(outputs: list[dict]) -> str | None:
    """The last non-empty line the cell printed on stdout, or None."""
    printed = "".join(
        _text(o.get("text"))
        for o in outputs
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    return lines[-1] if lines else None


def has_assert(source: str) -> bool:
    """Whether the cell's code contains an ``assert`` statement (comments do not count)."""
    # IPython magics and shell escapes are not Python: blank them out before parsing.
    code = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def _check_labels(tags: list[str]) -> list[str]:
    return [t[len(CHECK_TAG) :].strip() for t in tags if t.startswith(CHECK_TAG)]


def parse_notebook(nb: dict, path: Path | str = "<notebook>") -> Notebook:
    """Boxes and checking cells of a notebook given as its JSON dictionary (nbformat 4)."""
    parser = _markdown_parser()
    boxes: list[Box] = []
    checks: list[CheckCell] = []
    counts: Counter[str] = Counter()
    events: list[Box | None] = []  # boxes, and None for each proof, in document order
    for index, cell in enumerate(nb.get("cells", [])):
        source = _text(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            boxes.extend(find_boxes(source, index, parser, events))
        tags = list(cell.get("metadata", {}).get("tags", []))
        labels = _check_labels(tags)
        if not labels:
            continue
        check = CheckCell(
            cell=index,
            cell_type=cell.get("cell_type", ""),
            labels=labels,
            source=source,
            tags=tags,
            execution_count=cell.get("execution_count"),
            outcome=printed_outcome(cell.get("outputs", [])),
        )
        if check.cell_type == "code":
            for label in labels:
                counts[label] += 1
                check.anchors[label] = check_anchor(label, counts[label])
        checks.append(check)
    for k, box in enumerate(events):
        following = events[k + 1] if k + 1 < len(events) else False
        if box is not None:
            box.proof_follows = following is None
    return Notebook(Path(path), boxes, checks)


def read_notebook(path: Path | str) -> Notebook:
    """Boxes and checking cells of the notebook file at ``path``."""
    path = Path(path)
    return parse_notebook(json.loads(path.read_text(encoding="utf-8")), path)


def box_problems(kind: str, options: dict[str, str]) -> list[tuple[str, str]]:
    """``(code, message)`` for every way one box's options break the convention."""
    problems = []
    label = options.get("label", "").strip()
    status = normalize_status(options.get("status", ""))
    name = f"prf:{kind} box" + (f" '{label}'" if label else "")
    claim = kind in CLAIM_KINDS
    if claim and not label:
        problems.append(("no-label", f"{name} has no :label: (the ledger links to it)"))
    if "status" not in options or not status:
        if claim:
            allowed = ", ".join(STATUSES)
            problems.append(("no-status", f"{name} has no :status: (one of: {allowed})"))
        return problems
    if status not in STATUSES:
        allowed = ", ".join(STATUSES)
        problems.append(
            ("unknown-status", f"{name}: unknown :status: {status!r} (one of: {allowed})")
        )
        return problems
    if status in NEEDS_SOURCE and not " ".join(options.get("source", "").split()):
        problems.append(("no-source", f"{name}: status '{status}' needs a :source:"))
    if status in NEEDS_GRID and not " ".join(options.get("grid", "").split()):
        problems.append(("no-grid", f"{name}: status '{status}' needs a :grid:"))
    return problems


def validate_notebook(nb: Notebook, name: str | None = None) -> list[Problem]:
    """Every break of the convention inside one notebook."""
    where = name or nb.path.name
    problems: list[Problem] = []
    claims = nb.claims()
    for box in nb.boxes:
        problems += [Problem(c, where, box.cell, m) for c, m in box_problems(box.kind, box.options)]
    labels = {b.label for b in claims if b.label}
    for box in claims:
        if box.status in NEEDS_CHECK and box.label and not nb.checks_of(box.label):
            problems.append(
                Problem(
                    "no-check-cell",
                    where,
                    box.cell,
                    f"'{box.label}' is {box.status} but no code cell is tagged "
                    f"'{CHECK_TAG}{box.label}'",
                )
            )
        if box.status in NEEDS_PROOF and not box.proof_follows:
            problems.append(
                Problem(
                    "no-proof",
                    where,
                    box.cell,
                    f"'{box.label or box.title}' is {box.status} but the next prf directive is "
                    "not its prf:proof",
                )
            )
    for check in nb.checks:
        for label in check.labels:
            if label not in labels:
                problems.append(
                    Problem(
                        "unknown-label",
                        where,
                        check.cell,
                        f"tag '{CHECK_TAG}{label}' names no claim box of this notebook",
                    )
                )
        if check.cell_type != "code":
            problems.append(
                Problem("not-code", where, check.cell, "a check: tag on a cell that is not code")
            )
            continue
        if not has_assert(check.source):
            problems.append(
                Problem("no-assert", where, check.cell, "checking cell has no assert statement")
            )
        if check.outcome is None:
            problems.append(
                Problem(
                    "no-outcome",
                    where,
                    check.cell,
                    "checking cell printed nothing: its last printed line is the outcome",
                )
            )
        unverified = sorted(UNVERIFIED_TAGS & set(check.tags))
        if unverified or check.execution_count is None:
            why = f"tag {unverified[0]}" if unverified else "no execution count"
            problems.append(
                Problem(
                    "unverified-outcome",
                    where,
                    check.cell,
                    f"nbval would not verify this checking cell's output ({why})",
                )
            )
    return problems


def validate(notebooks: list[Notebook]) -> list[Problem]:
    """Every break of the convention in a book: per notebook, and labels used twice."""
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for nb in notebooks:
        problems += validate_notebook(nb)
        for box in nb.claims():
            if not box.label:
                continue
            if box.label in seen:
                problems.append(
                    Problem(
                        "duplicate-label",
                        nb.path.name,
                        box.cell,
                        f"label '{box.label}' is also used in {seen[box.label]}",
                    )
                )
            seen.setdefault(box.label, nb.path.name)
    return problems


def toc_files(toc_path: Path | str) -> list[str]:
    """The files of a Jupyter Book ``_toc.yml``, in reading order (without extensions)."""
    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8")) or {}
    files: list[str] = []

    def walk(entry: dict) -> None:
        if "file" in entry:
            files.append(str(entry["file"]))
        for key in ("parts", "chapters", "sections"):
            for sub in entry.get(key, []) or []:
                walk(sub)

    if "root" in toc:
        files.append(str(toc["root"]))
    walk(toc)
    return [re.sub(r"\.(ipynb|md|rst)$", "", f) for f in files]


def toc_parts(toc_path: Path | str) -> list[dict]:
    """The parts of a ``_toc.yml``: caption, numbered, and per chapter its files in order.

    A chapter's files are its first page, then its section pages (without extensions).
    """
    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8")) or {}

    def pages(entry: dict) -> list[str]:
        out = [re.sub(r"\.(ipynb|md|rst)$", "", str(entry["file"]))] if "file" in entry else []
        for sub in entry.get("sections", []) or []:
            out += pages(sub)
        return out

    return [
        {
            "caption": part.get("caption", ""),
            "numbered": bool(part.get("numbered")),
            "chapters": [pages(chapter) for chapter in part.get("chapters", []) or []],
        }
        for part in toc.get("parts", []) or []
    ]


def toc_notebooks(toc_path: Path | str) -> list[Path]:
    """The notebooks listed in a ``_toc.yml``, in reading order."""
    root = Path(toc_path).resolve().parent
    paths = [root / f"{f}.ipynb" for f in toc_files(toc_path)]
    return [p for p in paths if p.exists()]


# --------------------------------------------------------------------------------------------
# Sphinx part
# --------------------------------------------------------------------------------------------

STATIC = Path(__file__).resolve().parent / "static"
CSS_FILE = "lsa_claims.css"


def _status_class(status: str) -> str:
    if status in STATUSES:
        return "claim-status-" + status.replace(" ", "-")
    return "claim-status-unknown"


class claim_status(nodes.inline):
    """The status badge of a box: a pill in HTML, ``[status]`` in LaTeX."""


class claim_footer(nodes.container):
    """Source, grid and checking cells at the foot of a box."""


def _visit_status_latex(self, node):
    self.body.append(r"\hspace{0.5em}\textsf{[")


def _depart_status_latex(self, node):
    self.body.append("]}")


def setup(app):
    from docutils.parsers.rst import directives
    from sphinx.addnodes import pending_xref
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective

    app.setup_extension("sphinx_proof")
    from sphinx_proof.domain import ProofDomain

    logger = logging.getLogger(__name__)

    app.add_node(claim_status, latex=(_visit_status_latex, _depart_status_latex))
    app.add_node(claim_footer)

    def badge(status: str) -> nodes.Node:
        return claim_status(status, status, classes=["claim-status", _status_class(status)])

    def parse_inline(state, text: str, lineno: int) -> list[nodes.Node]:
        if not text:
            return []
        parsed, messages = state.inline_text(text, lineno)
        return parsed + messages

    # ---- the boxes ------------------------------------------------------------------------
    def claim_directive(base):
        class ClaimDirective(base):
            option_spec = {
                **base.option_spec,
                "status": directives.unchanged,
                "source": directives.unchanged,
                "grid": directives.unchanged,
            }

            def run(self):
                result = super().run()
                kind = self.name.split(":", 1)[1]
                options = {
                    k: self.options[k]
                    for k in ("label", "status", "source", "grid")
                    if k in self.options and self.options[k] is not None
                }
                for code, message in box_problems(kind, options):
                    logger.warning(
                        message,
                        location=(self.env.docname, self.lineno),
                        type="claims",
                        subtype=code,
                    )
                status = normalize_status(options.get("status", ""))
                if not status:
                    return result
                node = result[0]
                node["claim_status"] = status
                node["classes"].append("claim")
                title = node[0]
                title += nodes.Text(" ")
                title += badge(status)
                source = " ".join(options.get("source", "").split()) or DEFAULT_SOURCE
                grid = " ".join(options.get("grid", "").split())
                para = nodes.paragraph(classes=["claim-footer-text"])
                para += nodes.strong("Source:", "Source:")
                para += nodes.Text(" ")
                para += parse_inline(self.state, source, self.lineno)
                if grid:
                    para += nodes.Text(" · ")
                    para += nodes.strong("Grid:", "Grid:")
                    para += nodes.Text(" ")
                    para += parse_inline(self.state, grid, self.lineno)
                para["claim_label"] = options.get("label", "").strip()
                footer = claim_footer(classes=["claim-footer"])
                footer += para
                node += footer
                return result

        ClaimDirective.__name__ = base.__name__
        return ClaimDirective

    for name, base in list(ProofDomain.directives.items()):
        if name == "proof":
            continue
        app.add_directive_to_domain("prf", name, claim_directive(base), override=True)

    # ---- the checking cells ---------------------------------------------------------------
    def cell_link(docname: str, anchor: str, text: str) -> nodes.Node:
        ref = pending_xref(
            "",
            refdomain="std",
            reftype="ref",
            reftarget=anchor,
            refexplicit=True,
            refwarn=True,
            refdoc=docname,
        )
        ref += nodes.inline(text, text)
        return ref

    def box_link(docname: str, label: str) -> nodes.Node:
        """A link to a box, shown as its kind and number ("Theorem 4.2")."""
        ref = pending_xref(
            "",
            refdomain="prf",
            reftype="ref",
            reftarget=label,
            refexplicit=False,
            refwarn=True,
            refdoc=docname,
        )
        ref += nodes.inline(label, label)  # the proof domain puts the number in its place
        return ref

    def on_doctree_read(app, doctree):
        env = app.env
        docname = env.docname
        path = Path(env.doc2path(docname))
        if path.suffix != ".ipynb":
            return
        nb = read_notebook(path)
        cells = {
            node.get("cell_index"): node
            for node in doctree.findall(nodes.container)
            if node.get("nb_element") == "cell_code"
        }
        std = env.get_domain("std")
        for check in nb.checks:
            container = cells.get(check.cell)
            if container is None:
                continue  # a removed cell: links to it fail the -n build
            container["classes"].append("claim-check")
            caption = nodes.paragraph(classes=["claim-check-caption"])
            caption += nodes.Text("This cell checks ")
            for k, label in enumerate(check.labels):
                if k:
                    caption += nodes.Text(" and " if k == len(check.labels) - 1 else ", ")
                caption += box_link(docname, label)
            caption += nodes.Text(".")
            container.insert(0, caption)
            for label, anchor in check.anchors.items():
                if anchor in std.anonlabels and std.anonlabels[anchor][0] != docname:
                    logger.warning(
                        f"anchor '{anchor}' is already a label in {std.anonlabels[anchor][0]}",
                        location=(docname, None),
                        type="claims",
                        subtype="duplicate-label",
                    )
                    continue
                container["ids"].append(anchor)
                doctree.ids[anchor] = container
                std.anonlabels[anchor] = (docname, anchor)
                std.labels[anchor] = (docname, anchor, f"check of {label}")
        for para in list(doctree.findall(nodes.paragraph)):
            if "claim-footer-text" not in para["classes"]:
                continue
            label = para.get("claim_label", "")
            anchors = [c.anchors[label] for c in nb.checks_of(label) if label in c.anchors]
            if not anchors:
                continue
            para += nodes.Text(" · ")
            para += nodes.strong("Checked in:", "Checked in:")
            for k, anchor in enumerate(anchors, 1):
                para += nodes.Text(" " if k == 1 else ", ")
                para += cell_link(docname, anchor, f"check {k}")
        for problem in validate_notebook(nb, path.name):
            if problem.code in CELL_PROBLEMS:
                cell = "" if problem.cell is None else f"cell {problem.cell + 1}: "
                logger.warning(
                    cell + problem.message,
                    location=(docname, None),
                    type="claims",
                    subtype=problem.code,
                )

    app.connect("doctree-read", on_doctree_read)

    # ---- the ledger -----------------------------------------------------------------------
    def table_cell(*children, classes=None) -> nodes.entry:
        entry = nodes.entry(classes=classes or [])
        para = nodes.paragraph()
        para.extend(children)
        entry += para
        return entry

    class ClaimsLedger(SphinxDirective):
        """The "What is checked" table, built from the notebooks of the toc."""

        has_content = False

        def _notebooks(self) -> list[tuple[str, Notebook]]:
            env = self.env
            srcdir = Path(env.srcdir)
            toc = getattr(env.config, "external_toc_path", None) or "_toc.yml"
            toc_path = Path(toc) if Path(toc).is_absolute() else srcdir / toc
            result = []
            for path in toc_notebooks(toc_path):
                docname = env.path2doc(str(path))
                if docname is None:
                    continue
                env.note_dependency(str(path))
                result.append((docname, read_notebook(path)))
            return result

        def _cell(self, *children, classes=None) -> nodes.entry:
            return table_cell(*children, classes=classes)

        def run(self):
            notebooks = self._notebooks()
            rows = [(docname, nb, box) for docname, nb in notebooks for box in nb.claims()]
            counts = Counter(box.status for _, _, box in rows)
            checked = sum(1 for _, nb, box in rows if nb.checks_of(box.label))
            pages = len({docname for docname, _, _ in rows})
            out: list[nodes.Node] = []

            summary = nodes.paragraph(classes=["claims-summary"])
            summary += nodes.Text(
                f"{len(rows)} claims on {pages} pages; a checking cell is linked for "
                f"{checked} of them. By status:"
            )
            out.append(summary)

            legend = nodes.table(classes=["claims-legend"])
            group = nodes.tgroup(cols=3)
            legend += group
            for width in (18, 70, 12):
                group += nodes.colspec(colwidth=width)
            head = nodes.thead()
            hrow = nodes.row()
            for text in ("Status", "Meaning", "Claims"):
                hrow += self._cell(nodes.Text(text))
            head += hrow
            group += head
            body = nodes.tbody()
            for status, meaning in STATUSES.items():
                row = nodes.row()
                row += self._cell(badge(status))
                row += self._cell(nodes.Text(meaning))
                row += self._cell(nodes.Text(str(counts.get(status, 0))))
                body += row
            unknown = sum(n for s, n in counts.items() if s not in STATUSES)
            if unknown:
                row = nodes.row()
                row += self._cell(badge("missing"))
                row += self._cell(nodes.Text("no status, or one outside the list above"))
                row += self._cell(nodes.Text(str(unknown)))
                body += row
            group += body
            out.append(nodes.container("", legend, classes=["claims-table-scroll"]))

            table = nodes.table(classes=["claims-ledger"])
            group = nodes.tgroup(cols=5)
            table += group
            for width in (26, 14, 18, 18, 24):
                group += nodes.colspec(colwidth=width)
            head = nodes.thead()
            hrow = nodes.row()
            for text in ("Claim", "Chapter", "Status and source", "Grid", "Checked in: outcome"):
                hrow += self._cell(nodes.Text(text))
            head += hrow
            group += head
            body = nodes.tbody()
            for docname, nb, box in rows:
                body += self._row(docname, nb, box)
            group += body
            out.append(nodes.container("", table, classes=["claims-table-scroll"]))
            return out

        def _row(self, docname: str, nb: Notebook, box: Box) -> nodes.row:
            here = self.env.docname
            row = nodes.row(ids=[f"ledger-{box.label}"] if box.label else [])
            claim = nodes.paragraph()
            if box.label:
                claim += box_link(here, box.label)
            else:
                claim += nodes.Text(box.kind.title())
            if box.title:
                claim += nodes.Text(" ")
                claim += parse_inline(self.state, box.title, self.lineno)
            entry = nodes.entry(classes=["claim-name"])
            entry += claim
            if box.label:
                entry += nodes.paragraph(
                    "", "", nodes.literal(box.label, box.label), classes=["claim-label"]
                )
            row += entry

            chapter = pending_xref(
                "",
                refdomain="std",
                reftype="doc",
                reftarget="/" + docname,
                refexplicit=False,
                refwarn=True,
                refdoc=here,
            )
            chapter += nodes.inline(docname, docname)
            row += self._cell(chapter)

            status = box.status if box.status in STATUSES else "missing"
            entry = self._cell(badge(status))
            source = nodes.paragraph(classes=["claim-source"])
            source += parse_inline(self.state, box.source or DEFAULT_SOURCE, self.lineno)
            entry += source
            row += entry

            grid = parse_inline(self.state, box.grid, self.lineno) if box.grid else []
            row += self._cell(*(grid or [nodes.Text("—")]))

            entry = nodes.entry(classes=["claim-outcome"])
            for k, check in enumerate(nb.checks_of(box.label) if box.label else [], 1):
                anchor = check.anchors.get(box.label)
                if anchor is None:
                    continue
                para = nodes.paragraph()
                para += cell_link(here, anchor, f"check {k}")
                para += nodes.Text(": ")
                # printed text, shown as printed (no typographic quotes)
                para += nodes.inline(
                    "",
                    check.outcome or "(nothing printed)",
                    classes=["claim-outcome-text"],
                    support_smartquotes=False,
                )
                entry += para
            if not entry.children:
                entry += nodes.paragraph("—", "—")
            row += entry
            return row

    app.add_directive("claims-ledger", ClaimsLedger)

    class RulesLedger(SphinxDirective):
        """The table of the book's rules: domain, cases checked, disagreements just outside.

        Reads ``site_data/rules.json`` (written by ``tools/check_rules.py``, kept in step with
        ``lsa_lib.rules`` by the tests).
        """

        has_content = False

        def run(self):
            from lsa_rules import checked_on, rule_anchor

            path = Path(self.env.srcdir) / RULES_DATA
            self.env.note_dependency(str(path))
            rules = json.loads(path.read_text(encoding="utf-8"))
            table = nodes.table(classes=["claims-ledger", "rules-ledger"])
            group = nodes.tgroup(cols=4)
            table += group
            for width in (24, 36, 20, 20):
                group += nodes.colspec(colwidth=width)
            head = nodes.thead()
            hrow = nodes.row()
            for text in ("Rule", "Domain (in code)", "Checked on", "Just outside the domain"):
                hrow += table_cell(nodes.Text(text))
            head += hrow
            group += head
            body = nodes.tbody()
            std = self.env.get_domain("std")
            for name, r in rules.items():
                anchor = rule_anchor(name)
                row = nodes.row(ids=[anchor])
                # a label, so that the {rule} role's links resolve (and are checked)
                std.anonlabels[anchor] = (self.env.docname, anchor)
                std.labels[anchor] = (self.env.docname, anchor, f"rule {name}")
                cell = nodes.paragraph()
                cell += box_link(self.env.docname, r["label"])
                cell += nodes.Text(f" ({r['model']}: {name})")
                entry = nodes.entry()
                entry += cell
                row += entry
                row += table_cell(nodes.Text(r["domain"]))
                row += ClaimsLedger._cell(
                    self,
                    nodes.Text(
                        f"{r['inside']:,} certified cases inside the domain ({checked_on(r)})"
                    ),
                )
                row += ClaimsLedger._cell(
                    self,
                    nodes.Text(
                        f"{r['disagree_outside']} of {r['outside']} certified cases disagree"
                        if r["outside"]
                        else "no certified case just outside"
                    ),
                )
                body += row
            group += body
            return [nodes.container("", table, classes=["claims-table-scroll"])]

    app.add_directive("rules-ledger", RulesLedger)

    def add_static(app, config):
        config.html_static_path.append(str(STATIC))

    app.connect("config-inited", add_static)
    app.add_css_file(CSS_FILE)

    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
