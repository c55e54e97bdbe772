"""Hygiene of the committed notebooks: the form nbval and the website rely on."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
SETUP_MARKER = "# Colab and Binder set-up"


def _toc_files() -> set[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = {toc["root"]}
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            files.add(chapter["file"])
    return files


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
    assert f"book/{path.stem}" in _toc_files(), f"{path.name} is not listed in _toc.yml"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_has_exercises_with_solutions(path: Path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    exercises = re.findall(r"```\{exercise\}", text)
    solutions = re.findall(r"```\{solution(?:-start)?\}", text)
    assert len(exercises) >= 3, f"{path.name}: {len(exercises)} exercises, need at least 3"
    assert len(solutions) >= len(exercises), f"{path.name}: an exercise has no solution"
