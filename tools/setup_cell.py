"""Insert (or refresh) the Colab/Binder set-up cell as the first code cell of each notebook.

Usage: ``.venv/bin/python tools/setup_cell.py book/*.ipynb``

The cell installs ``lsa_lib`` when it is not importable (a fresh Colab runtime) and does
nothing locally or on Binder, where the environment already has it. It prints nothing, so
inserting it keeps every stored output valid; execution counts are renumbered. On the website
the cell is folded (tag ``hide-input``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

REPOSITORY = "https://github.com/lsa-book/lightning-self-attention-book"
SOURCE = f"""# Colab and Binder set-up: install lsa_lib if this runtime does not have it yet.
import importlib.util
import subprocess
import sys

REPO = "git+{REPOSITORY}"
if importlib.util.find_spec("lsa_lib") is None:  # e.g. a fresh Colab runtime
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", REPO], check=True)"""
MARKER = SOURCE.splitlines()[0][:25]


def insert(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    old = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(MARKER)]
    cells = [c for c in nb.cells if not any(c is o for o in old)]
    setup = nbformat.v4.new_code_cell(SOURCE, metadata={"tags": ["hide-input"]})
    if old and "id" in old[0]:
        setup["id"] = old[0]["id"]  # keep the id stable across refreshes
    first_code = next(i for i, c in enumerate(cells) if c.cell_type == "code")
    cells.insert(first_code, setup)
    count = 0
    for cell in cells:
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for out in cell.get("outputs", []):
                if "execution_count" in out:
                    out["execution_count"] = count
    nb.cells = cells
    nbformat.write(nb, path)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        insert(Path(arg))
        print(f"{arg}: set-up cell in place")
