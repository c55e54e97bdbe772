"""Every public object of lsa_lib is documented, links its chapter, and has an API page.

The chapter link is a Sphinx cross-reference (``:doc:`/book/04_dimension```) that the site's
``-W -n`` build resolves; this test checks that each one names an existing chapter file, so a
renamed chapter fails here and in the build.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
import yaml
from sphinx.pycode import ModuleAnalyzer

ROOT = Path(__file__).resolve().parents[1]
# the public modules: lsa_lib/<name>.py and the packages lsa_lib/<name>/ (whose own modules
# are private, named _<part>.py)
PUBLIC = sorted(
    [p.stem for p in (ROOT / "lsa_lib").glob("*.py") if not p.stem.startswith("_")]
    + [
        p.parent.name
        for p in (ROOT / "lsa_lib").glob("*/__init__.py")
        if not p.parent.name.startswith("_")
    ]
)
# pages a docstring may link to: every notebook and text page of book/, as "NN_x" or "notes/x"
CHAPTERS = {
    p.relative_to(ROOT / "book").with_suffix("").as_posix()
    for p in [*(ROOT / "book").rglob("*.ipynb"), *(ROOT / "book").rglob("*.md")]
    if ".ipynb_checkpoints" not in p.parts
}
LINK = re.compile(r":doc:`(?:[^`<]*<)?/book/([\w/-]+)>?`")


def _public(module_name: str):
    module = importlib.import_module(f"lsa_lib.{module_name}")
    assert hasattr(module, "__all__"), f"lsa_lib.{module_name} has no __all__"
    attr_docs = ModuleAnalyzer.for_module(module.__name__).find_attr_docs()
    for name in module.__all__:
        obj = getattr(module, name)
        if callable(obj):
            yield name, obj, inspect.getdoc(obj) or ""
        else:  # a constant: its ``#:`` comment is its docstring
            yield name, obj, "\n".join(attr_docs.get(("", name), []))


def _links(text: str) -> list[str]:
    return LINK.findall(text)


@pytest.mark.parametrize("module_name", PUBLIC)
def test_every_public_object_links_an_existing_chapter(module_name):
    module = importlib.import_module(f"lsa_lib.{module_name}")
    assert _links(module.__doc__ or ""), (
        f"lsa_lib.{module_name}: the module docstring links no chapter"
    )
    missing, broken = [], []
    for name, _obj, doc in _public(module_name):
        links = _links(doc)
        if not links:
            missing.append(name)
        broken += [f"{name} → {c}" for c in links if c not in CHAPTERS]
    assert not missing, f"lsa_lib.{module_name}: no :doc: link to a chapter in {missing}"
    assert not broken, f"lsa_lib.{module_name}: links to chapters that do not exist: {broken}"


@pytest.mark.parametrize("module_name", PUBLIC)
def test_numpydoc_sections(module_name):
    """Functions with parameters document them; functions that return something say what."""
    problems = []
    for name, obj, doc in _public(module_name):
        if not inspect.isfunction(obj):
            continue
        params = [p for p in inspect.signature(obj).parameters if p not in ("self",)]
        if params and "Parameters\n----------" not in doc:
            problems.append(f"{name}: no Parameters section")
        returns = inspect.signature(obj).return_annotation
        if returns not in (None, "None", inspect.Signature.empty) and "Returns\n-------" not in doc:
            problems.append(f"{name}: no Returns section")
        if re.search(r"Notes\n-----\n(?:Explained|Used) in", doc):
            problems.append(f"{name}: a Notes section that only repeats the chapter link")
        if "Any" in str(inspect.signature(obj)) and re.search(r"array-like|ndarray", doc):
            for p, par in inspect.signature(obj).parameters.items():
                if par.annotation in ("Any", "ArrayLike | Any"):
                    line = re.search(rf"^{p} : (.*)$", doc, re.M)
                    if line and "array" in line.group(1):
                        problems.append(f"{name}: the array {p} is typed Any")
    assert not problems, f"lsa_lib.{module_name}: {problems}"


@pytest.mark.parametrize("module_name", PUBLIC)
def test_every_public_module_has_an_api_page(module_name):
    page = ROOT / "book" / "api" / f"{module_name}.md"
    assert page.exists(), f"lsa_lib.{module_name} has no page book/api/{module_name}.md"
    assert re.search(rf"automodule:: lsa_lib\.{module_name}\s", page.read_text())
    index = (ROOT / "book" / "api" / "index.md").read_text()
    assert f"<{module_name}>" in index, f"book/api/index.md does not list lsa_lib.{module_name}"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = {
        s["file"]
        for part in toc["parts"]
        for c in part["chapters"]
        for s in [c, *c.get("sections", [])]
    }
    assert f"book/api/{module_name}" in files, f"book/api/{module_name} is not in _toc.yml"


def test_private_modules_have_no_api_page():
    pages = {p.stem for p in (ROOT / "book" / "api").glob("*.md")} - {"index"}
    assert pages == set(PUBLIC)


def test_public_names_are_few_and_unique():
    names, seen = [], {}
    for m in PUBLIC:
        module = importlib.import_module(f"lsa_lib.{m}")
        for n in module.__all__:
            if n in getattr(module, "_MOVED", {}):  # a moved name kept at its old place
                home = importlib.import_module(f"lsa_lib.{module._MOVED[n]}")
                assert n in home.__all__ and getattr(module, n) is getattr(home, n)
                continue
            assert n not in seen, f"{n} is defined in lsa_lib.{seen[n]} and lsa_lib.{m}"
            seen[n] = m
            names.append(n)
    # 89 names after the reorganisation; + 4 for chapter 7's follow-up (multi-head attention,
    # metric tensor, holonomy), + 3 for lsa_lib.invariants (chapter 5), + 5 for lsa_lib.rules,
    # + 3 for chapter 2 (the fiber results FiberReading, FiberCertificate that print the
    # fiber, and plot_fiber_sketch), + 2 for the research notes (affine_metric_parametrization
    # and moves_possible, moved out of chapter 7's notebook into the library), + 4 for the
    # named tolerances NOT_A_SYMMETRY, SAME_RTOL, M212_TOL and output_changes (the symmetry
    # check the chapters repeat), + 2 for the research note on widening layers (FIBER_FAMILIES,
    # the fiber families' names, and needed_fiber_families, which the atlas uses), + 2 for the
    # read bound (HYPOTHESES, the clauses the formula and the rules share, and unread_count,
    # the seen-dimension correction), + 10 for the sweep beyond the atlas (lsa_lib.sweep: its
    # distribution KINDS, Limits and draw_architectures, SweepOptions, run_sweep, read_sweep, main,
    # certify_architecture, rule_checks) and lsa_lib.rules.REFUTED (the refuted rules it keeps
    # refuted); moving a name between modules does not add one
    assert len(names) <= 124


MENTION = re.compile(r"lsa_lib(?:\.[A-Za-z_]\w*)+")


def _resolves(dotted: str) -> bool:
    """An importable module, followed by attributes of it."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for name in parts[k:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_lsa_lib_name_the_book_mentions_exists():
    """Names in prose and code (``lsa_lib.rank.exact_rank``) that Sphinx roles would not catch."""
    pages = [*(ROOT / "book").rglob("*.md"), *(ROOT / "book").glob("*.ipynb"), ROOT / "README.md"]
    missing = sorted(
        {
            f"{page.relative_to(ROOT)}: {name}"
            for page in pages
            for name in MENTION.findall(page.read_text(encoding="utf-8"))
            if not _resolves(name.rstrip("."))
        }
    )
    assert not missing, "\n".join(missing)
