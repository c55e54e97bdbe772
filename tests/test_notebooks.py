"""Hygiene of the committed notebooks: the form nbval and the website rely on."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_claims():
    spec = importlib.util.spec_from_file_location("lsa_claims", ROOT / "_ext" / "lsa_claims.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["lsa_claims"] = module
    spec.loader.exec_module(module)
    return module


claims = sys.modules.get("lsa_claims") or _load_claims()
# every notebook of the book: chapters, their section pages (book/NN_x/…) and research notes
NOTEBOOKS = sorted(
    p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
)
SETUP_MARKER = "# Colab and Binder set-up"


def _toc_files() -> set[str]:
    return set(claims.toc_files(ROOT / "_toc.yml"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "book/ has no notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_clean(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), (
        f"{path.name}: the first cell must be a markdown '# Title'"
    )
    assert set(nb.metadata) <= {"kernelspec", "language_info"}, (
        f"{path.name}: notebook metadata has {sorted(nb.metadata)}; run tools/run_notebook.py"
    )
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cells"
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..{len(code)}: execute it in order "
        "with tools/run_notebook.py"
    )
    for i, cell in enumerate(nb.cells):
        assert set(cell.metadata) <= {"tags", "mystnb"}, (
            f"{path.name} cell {i}: metadata {dict(cell.metadata)}"
        )
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name} cell {i} stored an error"
            assert not (out.output_type == "stream" and out.name == "stderr"), (
                f"{path.name} cell {i} wrote to stderr: {out.text[:200]!r}"
            )
            text = out.get("text", "") or out.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            assert not re.search(r"0x[0-9a-f]{6,}", text), f"{path.name} cell {i}: memory address"
            assert "/tmp/" not in text and "/work/" not in text, f"{path.name} cell {i}: a path"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_starts_with_setup_cell(path: Path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].source.startswith(SETUP_MARKER), (
        f"{path.name}: the first code cell must be the Colab/Binder set-up cell "
        "(see tools/setup_cell.py)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_in_the_toc(path: Path):
    name = path.relative_to(ROOT).with_suffix("").as_posix()
    assert name in _toc_files(), f"{name} is not listed in _toc.yml"


def _course_chapters() -> list[list[Path]]:
    """The notebooks of each chapter of the numbered part(s): its first page, then its sections."""
    return [
        [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").exists()]
        for part in claims.toc_parts(ROOT / "_toc.yml")
        if part["numbered"]
        for files in part["chapters"]
    ]


def _markdown(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


@pytest.mark.parametrize("pages", _course_chapters(), ids=lambda ps: ps[0].stem)
def test_chapter_has_exercises_with_solutions(pages: list[Path]):
    exercises = sum(len(re.findall(r"```\{exercise\}", _markdown(p))) for p in pages)
    assert exercises >= 3, f"{pages[0].name}: {exercises} exercises in the chapter, need at least 3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_exercise_has_a_solution(path: Path):
    text = _markdown(path)
    exercises = re.findall(r"```\{exercise\}", text)
    solutions = re.findall(r"```\{solution(?:-start)?\}", text)
    assert len(solutions) >= len(exercises), f"{path.name}: an exercise has no solution"
