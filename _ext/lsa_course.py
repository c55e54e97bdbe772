"""The course page's numbers, computed from the book when it is built (a local Sphinx extension).

* ``{course-hours}``: per chapter of the course and per research note, its pages, words of prose,
  code cells, exercises, quiz questions and the estimated study hours
  (``tools/book_stats.py`` counts them and states the rule);
* ``{course-plan}`` with ``:weeks: N`` (and ``:notes:`` to add the research notes): the pages of
  the course, in reading order, cut into ``N`` consecutive weeks whose hours are as even as
  possible (the largest week is as small as it can be);
* ``{course-path}``: a short path, the pages listed in its content (one file per line, e.g.
  ``book/02_fibers/certificate``), with the hours of each and in all;
* ``{course-exercises}``: every exercise of the course by chapter, sorted into proofs
  (``:class: proof``), breaking the method (``:class: break``) and the others (compute, or
  derive and check).

Because the numbers come from the notebooks themselves, the page cannot fall out of step with
the chapters.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.addnodes import pending_xref
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[1]


def _stats():
    if "book_stats" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "book_stats", ROOT / "tools" / "book_stats.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["book_stats"] = module
        spec.loader.exec_module(module)
    return sys.modules["book_stats"]


def partition(hours: list[float], k: int) -> list[tuple[int, int]]:
    """Cut ``hours`` into ``k`` consecutive groups minimising the largest group's sum.

    Returns the ``(start, stop)`` index ranges. The classical linear-partition dynamic program;
    ties go to the earliest cut. ``k`` larger than the number of items gives one item a group.
    """
    n = len(hours)
    k = max(1, min(k, n))
    prefix = [0.0]
    for h in hours:
        prefix.append(prefix[-1] + h)
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(k + 1)]
    cut = [[0] * (n + 1) for _ in range(k + 1)]
    best[0][0] = 0.0
    for g in range(1, k + 1):
        for i in range(1, n + 1):
            for j in range(g - 1, i):
                cost = max(best[g - 1][j], prefix[i] - prefix[j])
                if cost < best[g][i] - 1e-9:
                    best[g][i], cut[g][i] = cost, j
    ranges, i = [], n
    for g in range(k, 0, -1):
        j = cut[g][i]
        ranges.append((j, i))
        i = j
    return ranges[::-1]


def _doc_link(
    here: str, file: str, title: list[nodes.Node] | None = None, env: Any = None
) -> nodes.Node:
    """A link to a page; ``title`` (parsed inline nodes, math included) as its text if given.

    Sphinx's ``doc`` references print their text as plain text, so on the website a title with
    math gets a direct reference to the page instead (its address from the HTML builder).
    """
    if title is not None and env is not None and env.app.builder.format == "html":
        # other builders (the PDF's LaTeX) have no page addresses: a plain doc reference there
        uri = env.app.builder.get_relative_uri(here, file)
        return nodes.reference("", "", *title, internal=True, refuri=uri)
    ref = pending_xref(
        "",
        refdomain="std",
        reftype="doc",
        reftarget="/" + file,
        refexplicit=False,
        refwarn=True,
        refdoc=here,
    )
    ref += nodes.inline(file, file)
    return ref


def _title(directive: SphinxDirective, page: dict) -> list[nodes.Node]:
    """The page's title as inline nodes (its ``$…$`` typeset as math)."""
    parsed, messages = directive.state.inline_text(page["title"], directive.lineno)
    return parsed + messages


def _cell(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    para = nodes.paragraph()
    para.extend(children)
    entry += para
    return entry


def _table(header: list[str], rows: list[list[nodes.Node]], widths: list[int]) -> nodes.Node:
    table = nodes.table(classes=["course-table"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    hrow = nodes.row()
    for text in header:
        hrow += _cell(nodes.Text(text))
    head += hrow
    group += head
    body = nodes.tbody()
    for cells in rows:
        row = nodes.row()
        for c in cells:
            row += _cell(c) if not isinstance(c, nodes.entry) else c
        body += row
    group += body
    return nodes.container("", table, classes=["claims-table-scroll"])


def _parts(env: Any) -> list[dict]:
    stats = _stats()
    env.note_dependency(str(ROOT / "_toc.yml"))
    parts = stats.book_stats()
    for part in parts:
        for chapter in part["chapters"]:
            for page in chapter["pages"]:
                suffix = ".ipynb" if (ROOT / f"{page['file']}.ipynb").exists() else ".md"
                env.note_dependency(str(ROOT / f"{page['file']}{suffix}"))
    return parts


def _hours(minutes: float) -> str:
    return f"{minutes / 60:.1f} h"


def _page_minutes(page: dict) -> float:
    stats = _stats()
    keys = ("file", "title", "prose_words", "code_cells", "exercises", "quiz_questions")
    return stats.PageStats(**{k: page[k] for k in keys}).minutes


class CourseHours(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        here, rows = self.env.docname, []
        for part in _parts(self.env):
            if part["caption"].lower() not in ("the course", "research notes"):
                continue
            for ch in part["chapters"]:
                t = ch["total"]
                rows.append(
                    [
                        _doc_link(
                            here, ch["pages"][0]["file"], _title(self, ch["pages"][0]), self.env
                        ),
                        nodes.Text(str(len(ch["pages"]))),
                        nodes.Text(f"{t['prose_words']:,}"),
                        nodes.Text(str(t["code_cells"])),
                        nodes.Text(str(t["exercises"])),
                        nodes.Text(str(t["quiz_questions"])),
                        nodes.strong(text=f"{t['hours']:.1f} h"),
                    ]
                )
        header = ["Chapter or note", "Pages", "Words", "Code cells", "Exercises", "Quiz", "Hours"]
        return [_table(header, rows, [40, 8, 10, 10, 10, 8, 10])]


class CoursePlan(SphinxDirective):
    has_content = False
    option_spec = {"weeks": directives.positive_int, "notes": directives.flag}

    def run(self) -> list[nodes.Node]:
        here = self.env.docname
        weeks = self.options.get("weeks", 8)
        captions = ("the course", "research notes") if "notes" in self.options else ("the course",)
        pages = [
            (ch["pages"][0]["title"], page)
            for part in _parts(self.env)
            if part["caption"].lower() in captions
            for ch in part["chapters"]
            for page in ch["pages"]
        ]
        minutes = [_page_minutes(p) for _, p in pages]
        rows = []
        for w, (start, stop) in enumerate(partition(minutes, weeks), 1):
            para: list[nodes.Node] = []
            for k in range(start, stop):
                if k > start:
                    para.append(nodes.Text("; "))
                para.append(
                    _doc_link(here, pages[k][1]["file"], _title(self, pages[k][1]), self.env)
                )
            rows.append(
                [
                    nodes.Text(str(w)),
                    nodes.strong(text=_hours(sum(minutes[start:stop]))),
                    _cell(*para),
                ]
            )
        return [_table(["Week", "Hours", "Read and work"], rows, [8, 10, 82])]


class CoursePath(SphinxDirective):
    has_content = True
    option_spec = {"reading": directives.flag}

    def run(self) -> list[nodes.Node]:
        here = self.env.docname
        by_file = {
            page["file"]: page
            for part in _parts(self.env)
            for ch in part["chapters"]
            for page in ch["pages"]
        }
        rows, total = [], 0.0
        for line in self.content:
            file = line.strip()
            if not file:
                continue
            if file not in by_file:
                raise self.error(f"course-path: {file!r} is not a page of the toc")
            page = dict(by_file[file])
            if "reading" in self.options:  # reading and running only: exercises and quiz apart
                page["exercises"] = page["quiz_questions"] = 0
            m = _page_minutes(page)
            total += m
            rows.append(
                [
                    _doc_link(here, file, _title(self, by_file[file]), self.env),
                    nodes.Text(_hours(m)),
                ]
            )
        rows.append([nodes.strong(text="In all"), nodes.strong(text=_hours(total))])
        return [_table(["Page", "Hours"], rows, [80, 20])]


_EXERCISE = re.compile(r"^(`{3,})\{exercise\}[^\n]*\n((?::[\w-]+:[^\n]*\n)*)", re.MULTILINE)


def exercises(path: Path) -> list[tuple[str, set[str]]]:
    """The exercises of a notebook: (label, classes), in order."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    out = []
    for m in _EXERCISE.finditer(text):
        options = dict(re.findall(r":([\w-]+):\s*([^\n]*)", m[2]))
        if "label" in options:
            out.append((options["label"].strip(), set(options.get("class", "").split())))
    return out


def _ref(here: str, label: str) -> nodes.Node:
    ref = pending_xref(
        "",
        refdomain="std",
        reftype="ref",
        reftarget=label,
        refexplicit=False,
        refwarn=True,
        refdoc=here,
    )
    ref += nodes.inline(label, label)
    return ref


def _refs(here: str, labels: list[str]) -> list[nodes.Node]:
    out: list[nodes.Node] = []
    for k, label in enumerate(labels):
        if k:
            out.append(nodes.Text(", "))
        out.append(_ref(here, label))
    return out or [nodes.Text("—")]


class CourseExercises(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        here, rows = self.env.docname, []
        for part in _parts(self.env):
            if part["caption"].lower() != "the course":
                continue
            for ch in part["chapters"]:
                found = [
                    e
                    for page in ch["pages"]
                    if (ROOT / f"{page['file']}.ipynb").exists()
                    for e in exercises(ROOT / f"{page['file']}.ipynb")
                ]
                proofs = [label for label, cls in found if "proof" in cls]
                breaks = [label for label, cls in found if "break" in cls]
                others = [label for label, cls in found if not cls & {"proof", "break"}]
                rows.append(
                    [
                        _doc_link(
                            here, ch["pages"][0]["file"], _title(self, ch["pages"][0]), self.env
                        ),
                        _cell(*_refs(here, proofs)),
                        _cell(*_refs(here, breaks)),
                        _cell(*_refs(here, others)),
                    ]
                )
        header = ["Chapter", "Prove", "Break the method", "Compute, or derive and check"]
        return [_table(header, rows, [28, 24, 24, 24])]


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("course-hours", CourseHours)
    app.add_directive("course-plan", CoursePlan)
    app.add_directive("course-path", CoursePath)
    app.add_directive("course-exercises", CourseExercises)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
