"""The shape of the course and the research notes: the teaching spine of every course chapter,
terms linked at first use, and the page sizes.

The markup the tests look for is the book's convention for its course chapters:

* the machine-learning opening: an admonition with class ``ml-why`` on the chapter's first
  page, before its first ``##`` section;
* the running example: an admonition with class ``running-example`` followed by a code cell
  that computes on it (``lsa_lib.m212`` or the architecture ``(2, 1), (2,)``);
* the self-check quiz: a ``## Self-check quiz`` section with 5–8 answers in ``{dropdown} Answer``;
* among the exercises, one ``:class: proof`` and one ``:class: break`` (break the method);
* every glossary term's first use in a chapter is a ``{term}`` link or its bold definition.

The sizes: a course chapter has at most 4,000 words of prose over its pages (quiz and exercises
apart), a section page at most 2,000, a research note page at most 3,000
(``tools/book_stats.py`` counts them).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER_WORDS, SECTION_WORDS, NOTE_WORDS = 4000, 2000, 3000
# The course's chapters in the paper's order carry the whole spine; the payoff chapter
# (the training experiment) and later ones carry the opening, the quiz and the exercises.
SPINE_CHAPTERS = 6


def _load(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


claims = _load("lsa_claims", ROOT / "_ext" / "lsa_claims.py")
stats = _load("book_stats", ROOT / "tools" / "book_stats.py")
PARTS = claims.toc_parts(ROOT / "_toc.yml")
COURSE = next((p for p in PARTS if p["numbered"]), {"chapters": []})["chapters"]
NOTES = [
    f
    for p in PARTS
    if p["caption"].lower().startswith("research notes")
    for c in p["chapters"]
    for f in c
]


def _pages(files: list[str]) -> list[Path]:
    return [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").exists()]


def _cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def _markdown(pages: list[Path]) -> str:
    return "\n".join(c.source for p in pages for c in _cells(p) if c.cell_type == "markdown")


def _admonitions(text: str, cls: str) -> list[str]:
    """The admonitions of class ``cls`` (colon or backtick fences) in markdown text."""
    pattern = re.compile(
        r"^(:{3,}|`{3,})\{admonition\}[^\n]*\n(?::[\w-]+:[^\n]*\n)*?:class:[^\n]*\b"
        + re.escape(cls)
        + r"\b",
        re.MULTILINE,
    )
    return pattern.findall(text)


def _ids(chapters: list[list[str]]) -> list[str]:
    return [files[0].split("/")[-1] for files in chapters]


SPINE = COURSE[:SPINE_CHAPTERS]
# a code cell computes on the running example if it uses lsa_lib.m212 or the architecture itself
_M212 = importlib.import_module("lsa_lib.m212").__all__
RUNNING = re.compile(r"m212|\(2, 1\)|\b(" + "|".join(map(re.escape, _M212)) + r")\b")


def test_the_course_has_its_chapters_in_the_papers_order():
    names = [files[0] for files in COURSE]
    expected = [
        "book/01_lightning_map",
        "book/02_fibers",
        "book/03_symmetries",
        "book/04_dimension",
        "book/05_singularities",
        "book/06_softmax",
    ]
    assert names[:6] == expected, names
    assert NOTES, "the toc has no part captioned 'Research notes'"


@pytest.mark.parametrize("files", COURSE, ids=_ids(COURSE))
def test_chapter_opens_with_why_it_matters_for_machine_learning(files):
    first = _cells(_pages(files)[0])
    before = []
    for cell in first:
        if cell.cell_type == "markdown" and re.search(r"^## ", cell.source, re.MULTILINE):
            before.append(cell.source.split("\n## ")[0])
            break
        if cell.cell_type == "markdown":
            before.append(cell.source)
    assert _admonitions("\n".join(before), "ml-why"), (
        f"{files[0]}: no 'Why this matters for machine learning' admonition (class ml-why) "
        "before the first section"
    )


@pytest.mark.parametrize("files", SPINE, ids=_ids(SPINE))
def test_chapter_uses_the_running_example(files):
    found = False
    for page in _pages(files):
        cells = _cells(page)
        for k, cell in enumerate(cells):
            if cell.cell_type != "markdown" or not _admonitions(cell.source, "running-example"):
                continue
            code = next((c for c in cells[k + 1 :] if c.cell_type == "code"), None)
            if code is not None and RUNNING.search(code.source):
                found = True
    assert found, (
        f"{files[0]}: no running-example admonition followed by a code cell computing on M_(2,1,2)"
    )


@pytest.mark.parametrize("files", COURSE, ids=_ids(COURSE))
def test_chapter_ends_with_a_self_check_quiz(files):
    text = _markdown(_pages(files))
    parts = re.split(r"^## Self-check quiz\s*$", text, flags=re.MULTILINE)
    assert len(parts) == 2, f"{files[0]}: needs exactly one '## Self-check quiz' section"
    quiz = re.split(r"^## ", parts[1], flags=re.MULTILINE)[0]
    answers = len(re.findall(r"\{dropdown\}\s*Answer", quiz))
    assert 5 <= answers <= 8, f"{files[0]}: the quiz has {answers} answered questions, not 5–8"


@pytest.mark.parametrize("files", COURSE, ids=_ids(COURSE))
def test_chapter_has_a_proof_and_a_break_the_method_exercise(files):
    text = _markdown(_pages(files))
    classes = re.findall(r"```\{exercise\}[^\n]*\n((?::[\w-]+:[^\n]*\n)*)", text)
    kinds = {k for block in classes for k in re.findall(r":class:\s*([^\n]*)", block)}
    kinds = {w for k in kinds for w in k.split()}
    assert "proof" in kinds, f"{files[0]}: no exercise with :class: proof"
    assert "break" in kinds, f"{files[0]}: no exercise with :class: break"


def test_chapter_one_explains_how_to_read_the_code():
    assert _admonitions(_markdown(_pages(COURSE[0])), "how-to-read-code")


def test_chapter_two_explains_the_certificate_before_it_is_used():
    pages = _pages(COURSE[1])
    text = _markdown(pages)
    assert "(sec-certificate)=" in text, "chapter 2 has no (sec-certificate)= target"
    assert re.search(r":label: prop-exact-bounds\b", text), "prop-exact-bounds is not in ch. 2"
    scratch = [c for p in pages for c in _cells(p) if "from-scratch" in c.metadata.get("tags", [])]
    checked = [c for c in scratch if "assert" in c.source]
    assert len(checked) >= 2, "chapter 2 needs two from-scratch cells checked against the library"


@pytest.mark.parametrize("files", COURSE[2:SPINE_CHAPTERS], ids=_ids(COURSE[2:SPINE_CHAPTERS]))
def test_later_chapters_link_the_certificate(files):
    text = _markdown(_pages(files))
    assert re.search(r"sec-certificate|prf:ref\}`prop-exact-bounds`", text), (
        f"{files[0]} never links it"
    )


# --------------------------------------------------------------------------------------------
# Terms at first use
# --------------------------------------------------------------------------------------------


def glossary_terms() -> list[str]:
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    return [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.startswith(" ")]


_FENCE = re.compile(r"^\s*(`{3,}|:{3,}|~{3,})(.*)$")
_INLINE_SKIP = re.compile(
    r"(?P<term>\{term\}`[^`]*`)"  # a glossary link: kept, it is a (linked) use
    r"|(?<!\\)\$[^$\n]+\$"  # inline math
    r"|\{(?!term\})[\w:-]+\}`[^`]*`"  # roles other than {term}: references, citations
    r"|``?[^`\n]+``?"  # inline code
    r"|\[[^\]\n]*\]\([^)\n]*\)"  # a link (its text is not a use)
)


def prose_spans(text: str) -> tuple[list[bool], list[tuple[int, int]], list[tuple[int, int]]]:
    """Which characters of a markdown cell are prose, and its glossary links and bold spans.

    Not prose: fenced code, display math, directive lines and their options, headings, inline
    math and code, roles other than ``{term}``, links. Fences are paired line by line (the
    innermost open fence of the same character closes first).
    """
    prose = [False] * len(text)
    stack: list[tuple[str, bool]] = []  # (fence, is code)
    in_math, options, pos = False, False, 0
    for line in text.splitlines(keepends=True):
        start, stripped = pos, line.strip()
        pos += len(line)
        m = _FENCE.match(line)
        if stack and stack[-1][1]:  # inside code: only its closing fence counts
            if (
                m
                and m[1][0] == stack[-1][0][0]
                and len(m[1]) >= len(stack[-1][0])
                and not m[2].strip()
            ):
                stack.pop()
            continue
        if m:
            marker, rest = m[1], m[2].strip()
            if (
                not rest
                and stack
                and marker[0] == stack[-1][0][0]
                and len(marker) >= len(stack[-1][0])
            ):
                stack.pop()
            elif rest.startswith("{"):
                stack.append((marker, False))
                options = True
            else:
                stack.append((marker, True))
            continue
        if options and re.match(r"^\s*:[\w-]+:", line):
            continue
        options = False
        if stripped.startswith("$$"):
            in_math = not (in_math or (stripped.endswith("$$") and len(stripped) > 2))
            continue
        if in_math or stripped.startswith("#") or re.match(r"^\(\S+\)=\s*$", stripped):
            continue
        for k in range(start, pos):
            prose[k] = True
        for skip in _INLINE_SKIP.finditer(line):
            if skip["term"]:
                continue
            for k in range(start + skip.start(), start + skip.end()):
                prose[k] = False
    linked = [(m.start(), m.end()) for m in re.finditer(r"\{term\}`[^`]*`", text)]
    bold = [(m.start(), m.end()) for m in re.finditer(r"\*\*[^*\n]+\*\*", text)]
    return prose, linked, bold


def _term_pattern(term: str) -> re.Pattern:
    words = [re.escape(w) for w in term.lower().split()]
    return re.compile(r"(?<![\w-])" + r"[\s-]+".join(words) + r"(?:s|es)?(?![\w-])", re.I)


def first_use(pages: list[Path], term: str) -> tuple[Path, int, int, str] | None:
    """The first prose use of a term in the pages: (page, cell, offset, how it is marked)."""
    pattern = _term_pattern(term)
    for page in pages:
        for k, cell in enumerate(_cells(page)):
            if cell.cell_type != "markdown":
                continue
            prose, linked, bold = prose_spans(cell.source)
            for m in pattern.finditer(cell.source):
                if not prose[m.start()]:
                    continue
                if any(a <= m.start() < b for a, b in linked):
                    return page, k, m.start(), "linked"
                if any(a <= m.start() < b for a, b in bold):
                    return page, k, m.start(), "defined"
                return page, k, m.start(), "bare"
    return None


def first_uses(pages: list[Path], terms: list[str]) -> dict[str, str]:
    """Each glossary term used in the pages → how its first use is marked (or its context)."""
    out = {}
    for term in terms:
        found = first_use(pages, term)
        if found is None:
            continue
        page, k, at, how = found
        if how == "bare":
            source = _cells(page)[k].source
            how = f"{page.relative_to(ROOT)} cell {k}: …" + source[max(0, at - 40) : at + 40]
        out[term] = how.replace("\n", " ")
    return out


@pytest.mark.parametrize("files", COURSE, ids=_ids(COURSE))
def test_glossary_terms_are_linked_at_first_use(files):
    uses = first_uses(_pages(files), glossary_terms())
    bare = {t: where for t, where in uses.items() if where not in ("linked", "defined")}
    assert not bare, f"{files[0]}: first uses without a {{term}} link: {bare}"


# --------------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("files", COURSE, ids=_ids(COURSE))
def test_course_chapter_sizes(files):
    pages = [stats.page_stats(p) for p in _pages(files)]
    total = sum(p.prose_words for p in pages)
    assert total <= CHAPTER_WORDS, f"{files[0]}: {total} words of prose > {CHAPTER_WORDS}"
    if len(pages) > 1 or total > SECTION_WORDS:
        long = {p.file: p.prose_words for p in pages if p.prose_words > SECTION_WORDS}
        assert not long, f"section pages over {SECTION_WORDS} words: {long}"


@pytest.mark.parametrize("file", NOTES)
def test_research_note_sizes(file):
    path = ROOT / f"{file}.ipynb"
    if not path.exists():
        path = ROOT / f"{file}.md"
    words = stats.page_stats(path).prose_words
    assert words <= NOTE_WORDS, f"{file}: {words} words of prose > {NOTE_WORDS}"


# --------------------------------------------------------------------------------------------
# The course page's plans
# --------------------------------------------------------------------------------------------

course_ext = _load("lsa_course", ROOT / "_ext" / "lsa_course.py")


@pytest.mark.parametrize(
    ("hours", "k", "largest"),
    [([1, 2, 3, 4, 5, 6, 7, 8, 9], 3, 17), ([5, 1, 1, 1, 5], 2, 7), ([3, 3, 3, 3], 4, 3)],
)
def test_weekly_plans_are_as_even_as_possible(hours, k, largest):
    import itertools

    ranges = course_ext.partition(hours, k)
    assert [r[0] for r in ranges][0] == 0 and ranges[-1][1] == len(hours)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), "weeks must be consecutive"
    assert max(sum(hours[a:b]) for a, b in ranges) == largest
    # brute force over every way to cut: nothing does better
    best = min(
        max(sum(hours[a:b]) for a, b in itertools.pairwise((0, *cuts, len(hours))))
        for cuts in itertools.combinations(range(1, len(hours)), k - 1)
    )
    assert best == largest
