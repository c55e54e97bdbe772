"""The claims convention: every claim box has a status, checked claims point to cells that
assert and print their outcome, and the built "What is checked" page lists every claim.

Three groups of tests:

* on the book's notebooks (the ones in ``_toc.yml``), through the same functions the site
  build uses (``_ext/lsa_claims.py``);
* on small synthetic notebooks, one defect at a time, so that each check is seen to fail, and
  on a small Sphinx project, so that the build is seen to warn;
* on the built site (marked ``browser``: they run in ``make browser-check``, after the site
  build): every claim has a row on the ledger page, with working links to its box and cells.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import os
import re
import shutil
import sys
from html import escape as html_escape
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"


def _load_claims():
    spec = importlib.util.spec_from_file_location("lsa_claims", ROOT / "_ext" / "lsa_claims.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["lsa_claims"] = module
    spec.loader.exec_module(module)
    return module


claims = sys.modules.get("lsa_claims") or _load_claims()
NOTEBOOKS = claims.toc_notebooks(ROOT / "_toc.yml")
BOX_OPENING = re.compile(
    r"^\s*(`{3,}|:{3,})\{prf:(" + "|".join(claims.CLAIM_KINDS) + r")\}", re.MULTILINE
)


def _codes(problems) -> set[str]:
    return {p.code for p in problems}


def _problems(path: Path, codes: set[str]) -> list[str]:
    nb = claims.read_notebook(path)
    return [str(p) for p in claims.validate_notebook(nb) if p.code in codes]


# --------------------------------------------------------------------------------------------
# The book's notebooks
# --------------------------------------------------------------------------------------------


def test_the_toc_lists_the_chapters():
    chapters = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    assert chapters and set(chapters) <= set(NOTEBOOKS), "a chapter is missing from the toc"


def test_the_book_has_claims():
    boxes = [b for p in NOTEBOOKS for b in claims.read_notebook(p).claims()]
    assert len(boxes) >= 5, f"only {len(boxes)} claim boxes found in {len(NOTEBOOKS)} notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parser_finds_every_claim_box(path: Path):
    """The markdown parser against a plain count of the opening lines of claim boxes."""
    nb = nbformat.read(path, as_version=4)
    openings = sum(
        len(BOX_OPENING.findall(c.source)) for c in nb.cells if c.cell_type == "markdown"
    )
    found = [b for b in claims.read_notebook(path).boxes if b.is_claim]
    assert len(found) == openings, f"{path.name}: {openings} box openings, parser found {found}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_claim_boxes_have_a_label_and_a_known_status(path: Path):
    problems = _problems(path, {"no-label", "no-status", "unknown-status"})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_paper_and_reported_claims_name_their_source(path: Path):
    problems = _problems(path, {"no-source"})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_checked_claims_name_a_grid_and_a_checking_cell(path: Path):
    """certified / float evidence / refuted: a :grid: and at least one check: cell."""
    problems = _problems(path, {"no-grid", "no-check-cell"})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_proved_claims_are_followed_by_their_proof(path: Path):
    problems = _problems(path, {"no-proof"})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_check_tags_name_a_claim_of_the_same_notebook(path: Path):
    problems = _problems(path, {"unknown-label", "not-code"})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_checking_cells_assert(path: Path):
    problems = _problems(path, {"no-assert"})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_checking_cells_print_an_outcome_that_nbval_verifies(path: Path):
    problems = _problems(path, {"no-outcome", "unverified-outcome"})
    assert not problems, "\n".join(problems)


def test_claim_labels_are_unique_in_the_book():
    problems = [
        str(p)
        for p in claims.validate([claims.read_notebook(p) for p in NOTEBOOKS])
        if p.code == "duplicate-label"
    ]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------
# The checker on synthetic notebooks: a clean one, then one defect at a time
# --------------------------------------------------------------------------------------------

CERTIFIED = """\
```{prf:proposition} Two is even
:label: prop-two
:status: certified
:grid: the integers 0 to 10

Two is even.
```
"""
PAPER = """\
```{prf:theorem} A theorem of the paper
:label: thm-paper
:status: paper
:source: HMK25, Theorem 1

Statement.
```
"""
PROVED = """\
```{prf:lemma} Four is even
:label: lem-four
:status: proved here

Four is even.
```

```{prf:proof}
4 = 2 + 2.
```
"""
OUTCOME = "2 % 2 == 0: '2' is even"  # quotes must reach the ledger as printed
CHECK_SOURCE = f"assert 2 % 2 == 0\nprint({OUTCOME!r})"


def _notebook(
    certified=CERTIFIED,
    paper=PAPER,
    proved=PROVED,
    tags=("check:prop-two",),
    source=CHECK_SOURCE,
    outputs=None,
    execution_count=1,
    markdown_tags=(),
):
    if outputs is None:
        outputs = [new_output("stream", name="stdout", text=OUTCOME + "\n")]
    text = new_markdown_cell("# A chapter\n\n" + certified + "\n" + paper + "\n" + proved)
    if markdown_tags:
        text.metadata["tags"] = list(markdown_tags)
    cell = new_code_cell(source, execution_count=execution_count, outputs=outputs)
    if tags:
        cell.metadata["tags"] = list(tags)
    return new_notebook(cells=[text, cell])


def _validate(**changes) -> set[str]:
    nb = claims.parse_notebook(_notebook(**changes), "synthetic.ipynb")
    return _codes(claims.validate_notebook(nb))


def test_a_clean_notebook_has_no_problems():
    assert _validate() == set()
    nb = claims.parse_notebook(_notebook(), "synthetic.ipynb")
    assert [b.label for b in nb.claims()] == ["prop-two", "thm-paper", "lem-four"]
    assert nb.checks[0].outcome == OUTCOME
    assert nb.checks[0].anchors == {"prop-two": "check-prop-two"}


MUTATIONS = {
    "no-status": dict(paper=PAPER.replace(":status: paper\n", "")),
    "unknown-status": dict(paper=PAPER.replace(":status: paper", ":status: verified")),
    "misspelled-status": dict(certified=CERTIFIED.replace("certified", "Certified")),
    "no-label": dict(paper=PAPER.replace(":label: thm-paper\n", "")),
    "no-source": dict(paper=PAPER.replace(":source: HMK25, Theorem 1\n", "")),
    "no-grid": dict(certified=CERTIFIED.replace(":grid: the integers 0 to 10\n", "")),
    "no-check-cell": dict(tags=()),
    "tag-names-no-claim": dict(tags=("check:prop-tow",)),
    "tag-on-markdown": dict(markdown_tags=("check:thm-paper",)),
    "no-assert": dict(source="# " + CHECK_SOURCE),
    "assert-only-in-a-string": dict(source="print('assert 2 % 2 == 0')"),
    "nothing-printed": dict(outputs=[]),
    "only-a-result-no-print": dict(
        outputs=[new_output("execute_result", data={"text/plain": "True"}, execution_count=1)]
    ),
    "only-stderr": dict(outputs=[new_output("stream", name="stderr", text="done\n")]),
    "output-ignored-by-nbval": dict(tags=("check:prop-two", "nbval-ignore-output")),
    "never-executed": dict(execution_count=None),
    "proved-without-proof": dict(proved=PROVED.split("```{prf:proof}")[0]),
    "proof-after-another-box": dict(
        proved=PROVED.split("```{prf:proof}")[0]
        + PAPER.replace("thm-paper", "thm-other")
        + "```{prf:proof}"
        + PROVED.split("```{prf:proof}")[1]
    ),
}
EXPECTED = {
    "no-status": {"no-status"},
    "unknown-status": {"unknown-status"},
    "misspelled-status": {"unknown-status"},
    "no-label": {"no-label"},
    "no-source": {"no-source"},
    "no-grid": {"no-grid"},
    "no-check-cell": {"no-check-cell"},
    "tag-names-no-claim": {"unknown-label", "no-check-cell"},
    "tag-on-markdown": {"not-code"},
    "no-assert": {"no-assert"},
    "assert-only-in-a-string": {"no-assert"},
    "nothing-printed": {"no-outcome"},
    "only-a-result-no-print": {"no-outcome"},
    "only-stderr": {"no-outcome"},
    "output-ignored-by-nbval": {"unverified-outcome"},
    "never-executed": {"unverified-outcome"},
    "proved-without-proof": {"no-proof"},
    "proof-after-another-box": {"no-proof"},
}


@pytest.mark.parametrize("defect", sorted(MUTATIONS))
def test_each_defect_is_caught(defect):
    assert _validate(**MUTATIONS[defect]) == EXPECTED[defect]


def test_every_kind_of_problem_has_a_defect_that_shows_it():
    shown = set().union(*EXPECTED.values()) | {"duplicate-label"}
    assert shown == claims.BOX_PROBLEMS | claims.CELL_PROBLEMS


def test_a_label_used_in_two_notebooks_is_caught():
    one = claims.parse_notebook(_notebook(), "one.ipynb")
    two = claims.parse_notebook(_notebook(), "two.ipynb")
    assert _codes(claims.validate([one])) == set()
    assert _codes(claims.validate([one, two])) == {"duplicate-label"}


def test_the_printed_outcome_is_the_last_printed_line():
    outputs = [
        new_output("stream", name="stdout", text="first\nsecond\n"),
        new_output("stream", name="stderr", text="a warning\n"),
        new_output("stream", name="stdout", text="third: the outcome\n\n"),
    ]
    assert claims.printed_outcome(outputs) == "third: the outcome"
    assert claims.printed_outcome([]) is None


def test_asserts_are_statements_not_words():
    assert claims.has_assert("def f():\n    assert True\n")
    assert claims.has_assert("%time x = 1\nassert x == 1")
    assert not claims.has_assert("x = 1  # assert x == 1")
    assert not claims.has_assert("print('assert')")


def test_anchors_count_the_cells_of_each_claim():
    text = new_markdown_cell(CERTIFIED + "\n" + PAPER)
    cells = [text]
    for tags in (["check:prop-two"], ["check:thm-paper", "check:prop-two"], ["check:prop-two"]):
        cell = new_code_cell(CHECK_SOURCE, execution_count=len(cells), outputs=[])
        cell.metadata["tags"] = tags
        cells.append(cell)
    nb = claims.parse_notebook(new_notebook(cells=cells))
    assert [c.anchors for c in nb.checks] == [
        {"prop-two": "check-prop-two"},
        {"thm-paper": "check-thm-paper", "prop-two": "check-prop-two-2"},
        {"prop-two": "check-prop-two-3"},
    ]


def test_the_parser_reads_every_form_of_box():
    markdown = """\
:::{prf:lemma} In a colon fence
:label: lem-colon
:status: proved here
:::

````{exercise}
:label: ex-1

```{prf:corollary} Nested in an exercise
---
label: cor-yaml
status: float evidence
grid: >-
  random points, seeds 0 to 9
---
Text.
```
````

```{prf:observation}
:label: obs-long
:status: certified
:grid: every architecture with
  d_0 <= 5

Text.
```

```markdown
{prf:theorem} Not a box: an example in a code block
```

````{code-block} md
```{prf:theorem} Not a box either
:label: thm-example
```
````

```{prf:definition} A definition
:label: def-plain
```

```{prf:proof}
Proof.
```
"""
    boxes = claims.find_boxes(markdown)
    assert [(b.kind, b.label) for b in boxes] == [
        ("lemma", "lem-colon"),
        ("corollary", "cor-yaml"),
        ("observation", "obs-long"),
        ("definition", "def-plain"),
    ]
    assert boxes[0].title == "In a colon fence"
    assert boxes[1].status == "float evidence"
    assert boxes[1].grid == "random points, seeds 0 to 9"
    assert boxes[2].grid == "every architecture with d_0 <= 5"
    assert [b.is_claim for b in boxes] == [True, True, True, False]


# --------------------------------------------------------------------------------------------
# The extension in a small Sphinx project: warnings, badge, footer, anchors, ledger
# --------------------------------------------------------------------------------------------

MINI_CHAPTER = new_notebook(
    cells=[
        new_markdown_cell(
            "# Mini chapter\n\n"
            + CERTIFIED
            + "\n"
            + "```{prf:theorem} Bad status\n:label: thm-bad\n:status: obviously true\n\nX.\n```\n\n"
            + "```{prf:lemma} No status\n:label: lem-none\n\nX.\n```\n\n"
            + "```{prf:theorem} Paper without source\n:label: thm-nosource\n:status: paper\n\n"
            + "X.\n```\n\n"
            + "```{prf:corollary} Refuted without grid\n:label: cor-nogrid\n:status: refuted\n\n"
            + "X.\n```\n"
        ),
        new_code_cell(
            CHECK_SOURCE,
            execution_count=1,
            outputs=[new_output("stream", name="stdout", text=OUTCOME + "\n")],
            metadata={"tags": ["check:prop-two"]},
        ),
        new_code_cell(
            "print('no assert here')",
            execution_count=2,
            outputs=[new_output("stream", name="stdout", text="no assert here\n")],
            metadata={"tags": ["check:prop-missing"]},
        ),
    ],
    metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    },
)


@pytest.fixture(scope="module")
def mini_build(tmp_path_factory):
    from sphinx.application import Sphinx

    src = tmp_path_factory.mktemp("mini")
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'sphinx_proof', 'lsa_claims']\n"
        "nb_execution_mode = 'off'\n"
        "nitpicky = True\n"
        "exclude_patterns = ['_build']\n"
    )
    (src / "_toc.yml").write_text("root: index\nchapters:\n  - file: chapter\n  - file: ledger\n")
    (src / "index.md").write_text("# Mini\n\n```{toctree}\nchapter\nledger\n```\n")
    (src / "ledger.md").write_text(
        "# Ledger\n\nSee {ref}`the check <check-prop-two>` and {ref}`check-prop-two`.\n\n"
        "```{claims-ledger}\n```\n"
    )
    nbformat.write(MINI_CHAPTER, src / "chapter.ipynb")
    warnings = io.StringIO()
    app = Sphinx(
        str(src),
        str(src),
        str(src / "_build" / "html"),
        str(src / "_build" / "doctrees"),
        "html",
        status=None,
        warning=warnings,
        freshenv=True,
    )
    app.build()
    return src / "_build" / "html", warnings.getvalue()


def test_the_build_warns_on_every_bad_box(mini_build):
    _, warnings = mini_build
    expected = [
        "'thm-bad': unknown :status: 'obviously true'",
        "'lem-none' has no :status:",
        "'thm-nosource': status 'paper' needs a :source:",
        "'cor-nogrid': status 'refuted' needs a :grid:",
        "tag 'check:prop-missing' names no claim box",
        "checking cell has no assert statement",
    ]
    missing = [w for w in expected if w not in warnings]
    assert not missing, f"no warning for {missing}; warnings:\n{warnings}"
    assert "prop-two" not in warnings, f"the good claim drew a warning:\n{warnings}"


def test_the_build_shows_badge_footer_and_anchor(mini_build):
    html_dir, warnings = mini_build
    html = (html_dir / "chapter.html").read_text()
    assert 'class="claim-status claim-status-certified">certified</span>' in html
    assert "<strong>Grid:</strong> the integers 0 to 10" in html
    assert re.search(r'<strong>Checked in:</strong> <a [^>]*href="#check-prop-two"', html)
    assert re.search(r'<div class="cell [^"]*" id="check-prop-two">', html)
    ledger = (html_dir / "ledger.html").read_text()
    assert 'id="ledger-prop-two"' in ledger
    assert 'href="chapter.html#check-prop-two"' in ledger
    assert re.search(r'href="chapter.html#check-prop-two"><span[^>]*>the check</span>', ledger)
    assert re.search(r'href="chapter.html#check-prop-two"><span[^>]*>check of prop-two<', ledger)
    assert html_escape(OUTCOME, quote=False) in ledger


# --------------------------------------------------------------------------------------------
# The built site (after make site-check)
# --------------------------------------------------------------------------------------------


def _built(page: str) -> str:
    path = SITE / page
    if not path.exists():
        pytest.fail(f"{path} was not built: build the site first (make site-check)")
    return path.read_text(encoding="utf-8")


# The built pages and the notebooks' claims are read once for all the tests below (the site
# does not change while they run).
@functools.cache
def _ids(page: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', _built(page)))


@functools.cache
def _ledger_rows() -> dict[str, object]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_built("book/checked.html"), "html.parser")
    table = soup.select_one("table.claims-ledger")
    assert table is not None, "book/checked.html has no ledger table"
    return {row.get("id", ""): row for row in table.select("tbody tr")}


@functools.cache
def _book_claims() -> list[tuple]:
    """(notebook path, read notebook, claim box) of every claim of the book."""
    return [
        (path, nb, box)
        for path in NOTEBOOKS
        for nb in [claims.read_notebook(path)]
        for box in nb.claims()
    ]


def _target(href: str) -> tuple[str, str]:
    url = urlsplit(urljoin("book/checked.html", href))
    return url.path, url.fragment


@pytest.mark.browser
def test_the_ledger_page_lists_every_claim():
    rows = _ledger_rows()
    expected = {f"ledger-{box.label}" for _, _, box in _book_claims()}
    assert set(rows) == expected, (
        f"missing rows: {sorted(expected - set(rows))}; extra rows: {sorted(set(rows) - expected)}"
    )


@pytest.mark.browser
@pytest.mark.parametrize(
    "label", [box.label for _, _, box in _book_claims()] or ["(no claims)"], ids=str
)
def test_the_ledger_row_links_to_the_box_and_its_cells(label):
    rows = _ledger_rows()
    found = [(p, nb, b) for p, nb, b in _book_claims() if b.label == label]
    assert found, f"no claim {label}"
    path, nb, box = found[0]
    row = rows.get(f"ledger-{label}")
    assert row is not None, f"no row for {label} on the ledger page"
    targets = [_target(a["href"]) for a in row.select("a[href]")]
    page = path.relative_to(ROOT).with_suffix(".html").as_posix()  # section pages: book/NN_x/…
    assert (page, label) in targets, f"{label}: no link to its box in {page}: {targets}"
    assert label in _ids(page), f"{page} has no element with id {label}"
    assert row.select_one(".claim-status").get_text(strip=True) == box.status
    for check in nb.checks_of(label):
        anchor = check.anchors[label]
        assert (page, anchor) in targets, f"{label}: no link to its cell {anchor}"
        assert anchor in _ids(page), f"{page} has no anchor {anchor}"
        assert check.outcome in row.get_text(" ", strip=True), f"{label}: outcome not shown"


@pytest.mark.browser
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_boxes_show_their_status(path: Path):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(
        _built(path.relative_to(ROOT).with_suffix(".html").as_posix()), "html.parser"
    )
    for box in claims.read_notebook(path).claims():
        element = soup.find(id=box.label)
        assert element is not None, f"{path.stem}: no box with id {box.label}"
        badge = element.select_one(".admonition-title .claim-status")
        assert badge is not None and badge.get_text(strip=True) == box.status, box.label
        footer = element.select_one(".claim-footer")
        assert footer is not None and "Source:" in footer.get_text(), box.label


@pytest.mark.browser
def test_the_ledger_page_fits_a_phone():
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("Chromium is missing: apt-get install chromium")
        pytest.skip("Chromium is missing: apt-get install chromium")
    page_path = SITE / "book" / "checked.html"
    _built("book/checked.html")
    from playwright.sync_api import sync_playwright

    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=flags)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(page_path.as_uri(), wait_until="load")
        width = page.evaluate("document.documentElement.scrollWidth")
        browser.close()
    assert width <= 390, f"the ledger page is {width} px wide on a 390 px screen"
