"""Execute book notebooks in place, storing clean outputs (the form nbval checks).

Usage: ``.venv/bin/python tools/run_notebook.py book/01_lightning_map.ipynb [...]``

Cells are run in order in a fresh kernel whose working directory is the notebook's folder;
execution counts are renumbered 1, 2, ...; timing metadata, widget state and kernel-specific
metadata are dropped (cell ids are kept: they are stable) so the committed notebook only changes when its content does.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# The kernel computes on one thread, as `make` and the tests do (see the Makefile).
os.environ["OMP_NUM_THREADS"] = "1"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
# tags (nbval, hiding) and mystnb (a figure's caption, name and alt text on the website)
KEEP_CELL_METADATA = {"tags", "mystnb"}


def clean(nb: nbformat.NotebookNode) -> None:
    """Drop volatile metadata in place."""
    nb.metadata = nbformat.NotebookNode(kernelspec=KERNELSPEC, language_info={"name": "python"})
    for cell in nb.cells:
        cell.metadata = nbformat.NotebookNode(
            {k: v for k, v in cell.metadata.items() if k in KEEP_CELL_METADATA}
        )


def run(path: Path, timeout: int = 900) -> float:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent.resolve())}},
        record_timing=False,
        store_widget_state=False,
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
        or (out.output_type == "stream" and out.get("name") == "stderr")
    ]
    clean(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    if errors:
        raise SystemExit(f"{path}: {len(errors)} error or stderr output(s); fix before committing")
    return elapsed


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for arg in sys.argv[1:]:
        seconds = run(Path(arg))
        print(f"{arg}: executed in {seconds:.1f} s")
