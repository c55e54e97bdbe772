"""What the chapters show: tables with the values to assert, stable numbers, timings, widgets.

Presentation only; the mathematics lives in the other modules. A chapter cell typically builds
a :class:`Table` from a function of one case (an architecture, a size), shows it, and asserts
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
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._checks import DType
from .dimension import exact_dimension, expected_dimension, failed_hypotheses, float_dimension
from .lightning import parameter_count
from .tolerances import GAP_MIN, ROUNDOFF

__all__ = ["Table", "fmt", "rel_diff", "timed", "dimension_table", "explorer"]


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
        self.rows = [dict(r) for r in rows]
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


def rel_diff(Y: ArrayLike, Z: ArrayLike) -> float:
    """The relative difference ``‖Y − Z‖ / ‖Z‖`` (Frobenius norms; ``Z`` is the reference).

    Explained in :doc:`/book/03_symmetries`.

    Parameters
    ----------
    Y, Z : array-like or torch.Tensor, same shape

    Returns
    -------
    float
        0 when both vanish.

    Raises
    ------
    ValueError
        If the shapes differ, or ``Z`` vanishes and ``Y`` does not.
    """
    Y, Z = (_checks.array(M, n, min_ndim=0) for M, n in ((Y, "Y"), (Z, "Z")))
    Y, Z = (M.detach().cpu().numpy() if _checks.is_torch(M) else M for M in (Y, Z))
    if Y.shape != Z.shape:
        raise ValueError(f"Y and Z must have the same shape, got {Y.shape} and {Z.shape}")
    diff, ref = float(np.linalg.norm(Y - Z)), float(np.linalg.norm(Z))
    if ref == 0:
        if diff == 0:
            return 0.0
        raise ValueError("the reference Z vanishes: no relative difference")
    return diff / ref


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


def dimension_table(
    architectures: Iterable[tuple[Sequence[int], Sequence[int]]],
    t: int = 3,
    normalizer: str | None = None,
    *,
    methods: Sequence[str] = ("exact", "float"),
    n_inputs: int | None = None,
    seed: int = 0,
    weight_scale: float = 1.0,
    dtype: DType = "float64",
    min_gap: float = GAP_MIN,
) -> Table:
    """Parameter count, expected and computed dimensions of many architectures.

    Explained in :doc:`/book/04_dimension` and :doc:`/book/06_softmax`.

    Parameters
    ----------
    architectures : iterable of (widths, attn)
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (float only).
    methods : sequence of {"exact", "float"}
        ``"exact"``: :func:`lsa_lib.dimension.exact_dimension` with the extra fiber directions;
        ``"float"``: :func:`lsa_lib.dimension.float_dimension`, an untrusted reading kept
        (shown with a ``?``), not raised.
    n_inputs : int, optional
        Random inputs of both methods; default ``⌈3P / (d_l t)⌉ + 2``.
    seed, weight_scale, dtype, min_gap
        As in :func:`lsa_lib.dimension.float_dimension`.

    Returns
    -------
    Table
        Columns ``widths``, ``attn``, ``P``, ``expected`` (:func:`lsa_lib.dimension.expected_dimension`, None
        where a hypothesis fails), then ``exact`` (an :class:`~lsa_lib.rank.ExactRank`, shown
        as ``36`` or ``34..40``) and ``P / dim``, and ``float`` (a
        :class:`~lsa_lib.rank.FloatRank`) and ``gap ≥`` (its order of magnitude).
    """
    archs = _checks.architectures(architectures)
    t = _checks.tokens(t)
    for m in methods:
        _checks.choice(m, "method", ("exact", "float"))
    if "exact" in methods and normalizer is not None:
        raise ValueError("the exact method needs lightning layers: use methods=('float',)")
    options = {"seed": seed, "weight_scale": weight_scale, "dtype": dtype, "min_gap": min_gap}
    rows = []
    for w, a in archs:
        P = parameter_count(w, a)
        n = n_inputs or -(-3 * P // (w[-1] * t)) + 2
        row: dict[str, Any] = {"widths": w, "attn": a, "P": P}
        row["expected"] = (
            None
            if failed_hypotheses(w, a, t, normalizer)
            else expected_dimension(w, a, t, normalizer)
        )
        if "exact" in methods:
            cert = exact_dimension(w, a, t, beyond_symmetries=True, seed=seed, n_inputs=n)
            row["exact"] = cert
            row["P / dim"] = P / cert.lower if cert.certified and cert.lower else None
        if "float" in methods:
            reading = float_dimension(w, a, t, normalizer, n_inputs=n, strict=False, **options)
            row["float"], row["gap ≥"] = reading, reading.gap
        rows.append(row)
    return Table(rows, formats={"gap ≥": "order", "P / dim": ".2f"})


def _parse(text: str, name: str) -> tuple[int, ...]:
    parts = text.replace("(", " ").replace(")", " ").replace(",", " ").split()
    try:
        return tuple(int(p) for p in parts)
    except ValueError as err:
        raise ValueError(f"{name} must be integers separated by commas, got {text!r}") from err


def _explore(widths: Sequence[int], attn: Sequence[int], t: int, certify: bool) -> str:
    lines = [str(dimension_table([(widths, attn)], t, methods=("exact",) if certify else ()))]
    lines += [f"- {f}" for f in failed_hypotheses(widths, attn, t)]
    return "\n".join(lines)


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
