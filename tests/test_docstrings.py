"""Every public function and class of lsa_lib is documented and points to its chapter."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(
    p.stem for p in (ROOT / "lsa_lib").glob("*.py") if p.stem not in {"__init__", "_modp"}
)
API_PAGE = (ROOT / "book" / "api.md").read_text()


def _public(module_name: str):
    module = importlib.import_module(f"lsa_lib.{module_name}")
    assert hasattr(module, "__all__"), f"lsa_lib.{module_name} has no __all__"
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield name, obj


@pytest.mark.parametrize("module_name", MODULES)
def test_public_objects_name_their_chapter(module_name):
    missing = [
        name for name, obj in _public(module_name) if "chapter" not in (obj.__doc__ or "").lower()
    ]
    assert not missing, f"lsa_lib.{module_name}: no chapter named in the docstring of {missing}"


@pytest.mark.parametrize("module_name", MODULES)
def test_module_is_on_the_api_page(module_name):
    assert re.search(rf"automodule:: lsa_lib\.{module_name}\s", API_PAGE), (
        f"lsa_lib.{module_name} is not on book/api.md"
    )
