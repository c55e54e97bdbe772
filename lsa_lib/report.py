"""What the chapters show: tables with the values to assert, stable numbers, timings, widgets.

Presentation only: no mathematics lives here (the relative difference is
:func:`lsa_lib.tolerances.rel_diff`, the table of dimensions
:func:`lsa_lib.dimension.dimension_table`). A chapter cell typically builds a :class:`Table` from a function of one case (an architecture, a size), shows it, and asserts
on its columns::

    tab = Table.of(row, cases)
    display(tab)
    assert tab["rank"] == tab["expected"]

``display(tab)`` (or ``tab`` as the cell's last line) shows an HTML table in a notebook and on
the website, with the text form of ``print(tab)`` next to it for plain-text front ends (and
for nbval, which compares both).

Numbers are printed by :func:`fmt`, which keeps stored outputs stable: round-off-sized values
as a bound, singular-value gaps by their order of magnitude. Explained in
:doc:`/book/01_lightning_map`.
"""

from __future__ import annotations

import html
import importlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import _checks
from .tolerances import ROUNDOFF

__all__ = ["Table", "fmt", "timed", "explorer", "dimension_table"]  # noqa: F822 (__getattr__)

# Moved to the modules of their mathematics; still importable from here by their old names.
# ``dimension_table`` is also still documented here (listed in ``__all__``) while pages of the
# book link it by its old name; it is the same function as lsa_lib.dimension.dimension_table.
_MOVED = {"rel_diff": "tolerances", "dimension_table": "dimension"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        return getattr(importlib.import_module(f"lsa_lib.{_MOVED[name]}"), name)
    raise AttributeError(f"module 'lsa_lib.report' has no attribute {name!r}")


def __dir__() -> list[str]:  # the moved names too (the API page lists the module's members)
    return sorted(set(globals()) | set(_MOVED))


def fmt(value: Any, spec: str = "") -> str:
    """A value as text that does not change with the last bits of float arithmetic.

    Explained in :doc:`/book/01_lightning_map`.

    Parameters
    ----------
    value : Any
        A number, None, a rank result, or anything with a ``str``.
    spec : str
        ``""``: integers as they are, None as ``"–"``, floats with three significant digits,
        except floats below :data:`lsa_lib.tolerances.ROUNDOFF` in absolute value, zero
        included, printed as ``"< 1e-12"`` (whether a round-off difference comes out as
        exactly zero depends on the machine); ``"order"``: the power of ten at or below a positive number, e.g.
        ``3.2e8 → "1e+08"`` (for singular-value gaps); any other string is a Python format
        specification (``".2f"``, ``">5"``).

    Returns
    -------
    str
    """
    if value is None:
        return "–"
    if spec == "order":
        x = _checks.real(value, "value", positive=True) if value != np.inf else np.inf
        return "inf" if x == np.inf else f"1e{int(np.floor(np.log10(x))):+03d}"
    if spec:
        return format(value, spec)
    if isinstance(value, (float, np.floating)):
        if abs(value) < ROUNDOFF:
            return f"< {ROUNDOFF:.0e}"
        return f"{value:.3g}"
    return str(value)


class Table:
    """Rows of named values: printed as a table, read back by column to assert on.

    Explained in :doc:`/book/01_lightning_map`. Columns whose name starts with ``_`` are kept
    (for assertions) but not printed. ``str(table)`` (and ``print``) gives the text form,
    columns right-aligned; in a notebook ``display(table)`` shows an HTML table with the same
    cells (``_repr_html_``), one line per row, which scrolls sideways when it is wider than
    the page.

    Parameters
    ----------
    rows : sequence of mapping
        One mapping ``column → value`` per row; columns in order of first appearance.
    formats : mapping, optional
        ``column → spec`` for :func:`fmt`, or ``column → callable(value) → str``.
    """

    def __init__(
        self, rows: Sequence[Mapping[str, Any]], formats: Mapping[str, Any] | None = None
    ) -> None:
        self.rows = _checks.table_rows(rows)
        self.columns: list[str] = []
        for r in self.rows:
            self.columns += [c for c in r if c not in self.columns]
        self.formats = dict(formats or {})

    @classmethod
    def of(
        cls,
        func: Callable[..., Mapping[str, Any]],
        cases: Iterable[Any],
        formats: Mapping[str, Any] | None = None,
    ) -> Table:
        """The table of ``func(*case)`` (``func(case)`` when a case is not a tuple)."""
        return cls([func(*c) if isinstance(c, tuple) else func(c) for c in cases], formats=formats)

    def __getitem__(self, column: str) -> list[Any]:
        if column not in self.columns:
            raise KeyError(f"no column {column!r}; the columns are {self.columns}")
        return [r.get(column) for r in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        shown = [c for c in self.columns if not c.startswith("_")]
        body = []
        for r in self.rows:
            line = []
            for c in shown:
                f = self.formats.get(c, "")
                v = r.get(c)
                line.append(f(v) if callable(f) else fmt(v, f if v is not None else ""))
            body.append(line)
        return shown, body

    def __str__(self) -> str:
        head, body = self._cells()
        widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
        lines += ["  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True)) for r in body]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        """The HTML form: the cells of the text form, escaped, in a scrolling frame."""
        head, body = self._cells()
        esc = html.escape
        cells = "".join(f'<th scope="col">{esc(h)}</th>' for h in head)
        rows = "".join("<tr>" + "".join(f"<td>{esc(x)}</td>" for x in r) + "</tr>" for r in body)
        return (
            '<div class="book-table-scroll" tabindex="0" role="region" aria-label="table">'
            f'<table class="book-table"><thead><tr>{cells}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"
        )

    def to_markdown(self) -> str:
        """The table as a Markdown pipe table (for ``IPython.display.Markdown``)."""
        head, body = self._cells()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


class Timing(NamedTuple):
    result: Any
    wall: float
    cpu: float


def timed(
    func: Callable[..., Any], *args: Any, repeats: int = 1, warmup: bool = False, **kwargs: Any
) -> Timing:
    """Run ``func(*args, **kwargs)`` and time it (:doc:`/book/01_lightning_map`).

    Times depend on the machine and its load: show them (in cells whose output is not
    compared), never assert on them.

    Parameters
    ----------
    func : callable
    *args, **kwargs
        Passed to ``func``.
    repeats : int
        Timed runs; medians are returned.
    warmup : bool
        One untimed run first (the first call of torch functions pays one-off costs).

    Returns
    -------
    Timing
        A named tuple ``(result, wall, cpu)``: the last result, the median wall-clock time and
        the median CPU time of the process (which, unlike wall-clock time, does not count the
        time other programs hold the processor; with several threads it adds their times up).
    """
    repeats = _checks.size(repeats, "repeats")
    if _checks.flag(warmup, "warmup"):
        func(*args, **kwargs)
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        result = func(*args, **kwargs)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return Timing(result, float(np.median(wall)), float(np.median(cpu)))


def _parse(text: str, name: str) -> tuple[int, ...]:
    parts = text.replace("(", " ").replace(")", " ").replace(",", " ").split()
    try:
        return tuple(int(p) for p in parts)
    except ValueError as err:
        raise ValueError(f"{name} must be integers separated by commas, got {text!r}") from err


def _explore(widths: Sequence[int], attn: Sequence[int], t: int, certify: bool) -> str:
    from .dimension import dimension_table, expected_dimension, failed_hypotheses
    from .lightning import parameter_count

    failed = failed_hypotheses(widths, attn, t)
    if certify:
        table = dimension_table([(widths, attn)], t, methods=("exact",))
    else:
        expected = None if failed else expected_dimension(widths, attn, t)
        row = {"widths": tuple(widths), "attn": tuple(attn), "P": parameter_count(widths, attn)}
        table = Table([row | {"expected": expected}])
    return "\n".join([str(table)] + [f"- {f}" for f in failed])


def explorer() -> Any:
    """An interactive explorer (ipywidgets): widths and attention dims in, dimensions out.

    Shows the parameter count, the expected dimension or the hypotheses that fail, and the
    exact certificate (up to 400 parameters). Needs a live kernel (Binder, JupyterLab).
    Explained in :doc:`/book/04_dimension`.

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets  # optional dependency, only for live kernels

    widths_box = widgets.Text(value="3, 3, 3", description="widths")
    attn_box = widgets.Text(value="2, 2", description="attn")
    t_box = widgets.BoundedIntText(value=3, min=1, max=8, description="t")
    out = widgets.Output()

    def update(_change: Any = None) -> None:
        out.clear_output()
        with out:
            try:
                from .lightning import parameter_count

                w, a = _parse(widths_box.value, "widths"), _parse(attn_box.value, "attn")
                small = parameter_count(w, a) <= 400
                if not small:
                    print("more than 400 parameters: too big for an interactive certificate")
                print(_explore(w, a, t_box.value, certify=small))
            except (ValueError, TypeError) as err:
                print(f"cannot use this input: {err}")

    for box in (widths_box, attn_box, t_box):
        box.observe(update, names="value")
    update()
    return widgets.VBox([widths_box, attn_box, t_box, out])
