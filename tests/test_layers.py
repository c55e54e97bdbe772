"""The library's layers, as a newcomer should find them (read from the source, not imported).

* The private core (``lsa_lib/_*.py``: input checks, the array protocol, the kernel, the exact
  algebra, the engines, the kit of tangents) is the only place private names come from: no
  public module imports a private name of another public module.
* No module is longer than 600 lines.
* Presentation (``report``, ``plotting``) holds no mathematics: it imports no module of the
  mathematics at module level (the explorer and the umbrella drawing import theirs when they
  run), and no module of the mathematics imports ``plotting`` or ``matplotlib``.
* A forward pass makes its constants through the array protocol: ``_backend`` is the only
  module that builds torch tensors of constants for the kernels.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lsa_lib"
FILES = sorted(LIB.rglob("*.py"))
MAX_LINES = 600


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    package = _module(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)] if node.level else []
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path, top_level: bool = False):
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level:
            yield _resolve(path, node), [a.name for a in node.names]


MODULES = {_module(p) for p in FILES}


def test_private_names_come_only_from_the_private_core():
    crossings = []
    for path in FILES:
        for source, names in _imports(path):
            if not source.startswith("lsa_lib") or _is_private(source):
                continue
            for name in names:
                if f"{source}.{name}" in MODULES:  # a module (a private one: the core)
                    continue
                if name.startswith("_") and source != _module(path):
                    crossings.append(f"{_module(path)} imports {source}.{name}")
        tree = ast.parse(path.read_text())
        public = {
            a.asname or a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.level
            for a in n.names
            if not _is_private(f"{_resolve(path, n)}.{a.name}")
        }
        for n in ast.walk(tree):  # module._name on an imported public module
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                if n.value.id in public and n.attr.startswith("_") and not n.attr.startswith("__"):
                    crossings.append(f"{_module(path)} uses {n.value.id}.{n.attr}")
    assert not crossings, "\n".join(crossings)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(LIB)))
def test_no_module_is_longer_than_600_lines(path: Path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines (at most {MAX_LINES})"


MATHEMATICS = {
    "lsa_lib.dimension", "lsa_lib.fibers", "lsa_lib.heads", "lsa_lib.invariants",
    "lsa_lib.m212", "lsa_lib.metric", "lsa_lib.rank", "lsa_lib.residual", "lsa_lib.rules",
    "lsa_lib.singularities", "lsa_lib.softmax", "lsa_lib.symbolic", "lsa_lib.symmetries",
    "lsa_lib.transport", "lsa_lib.descent",
}  # fmt: skip


@pytest.mark.parametrize("name", ["report", "plotting"])
def test_presentation_imports_no_mathematics_at_module_level(name: str):
    found = [
        source
        for source, _ in _imports(LIB / f"{name}.py", top_level=True)
        if any(source == m or source.startswith(m + ".") for m in MATHEMATICS)
    ]
    assert not found, f"lsa_lib.{name} imports {found} at module level"


def test_mathematics_does_not_draw():
    drawing = []
    for path in FILES:
        module = _module(path)
        if module in ("lsa_lib.plotting", "lsa_lib.report") or path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if not node.level else [_resolve(path, node)]
            drawing += [f"{module}: {n}" for n in names if n.startswith(("matplotlib", "mpl_"))]
            drawing += [f"{module}: {n}" for n in names if n == "lsa_lib.plotting"]
    assert not drawing, drawing
