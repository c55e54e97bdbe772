"""One plotting style for the whole book, and the plots the chapters repeat.

Every chapter calls :func:`use_book_style` once, before its first figure: an opaque white
background (readable in the site's dark theme), dark text, a grid and the colour-blind-safe
Okabe–Ito cycle (``"C0"`` is blue, ``"C1"`` vermillion, …). The drawings of the library's
computed objects live here too (the umbrella slice of ``M_{2,1,2}``); the modules of the
mathematics do not draw. Introduced in
:doc:`/book/01_lightning_map`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, ConnectionPatch
from numpy.typing import ArrayLike

if TYPE_CHECKING:  # the data type of the umbrella plot; lsa_lib.m212 is imported when it draws
    from mpl_toolkits.mplot3d import Axes3D

    from .m212 import UmbrellaSlice

__all__ = [
    "use_book_style",
    "loglog_with_fit",
    "plot_signed_matrix",
    "plot_count_grid",
    "plot_singular_values",
    "plot_fiber_sketch",
    "plot_umbrella_slice",
]

# The Okabe–Ito palette (colour-blind safe), in the order of the book's colour cycle.
_BOOK_COLORS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)

_SINGULAR_COLOR = "gold"  # the singular locus, in every figure
_SMOOTH_COLOR = "#0072B2"  # smooth (generic) points

_TEXT = "#222222"


def use_book_style() -> None:
    """Set matplotlib's rcParams to the book's style (:doc:`/book/01_lightning_map`).

    White, opaque figure and axes backgrounds; dark text; font size 11; grid on; the Okabe–Ito
    colour cycle; ``figure.dpi = 100`` and ``figure.figsize = (6.4, 4)``.
    """
    mpl.rcParams.update(
        {
            "figure.facecolor": "white",
            "figure.edgecolor": "white",
            "axes.facecolor": "white",
            "savefig.facecolor": "white",
            "savefig.edgecolor": "white",
            "savefig.transparent": False,
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "figure.figsize": (6.4, 4.0),
            "figure.autolayout": False,
            "figure.constrained_layout.use": True,
            "font.size": 11,
            "axes.titlesize": 12,
            "axes.labelsize": 11,
            "legend.fontsize": 10,
            "legend.framealpha": 1.0,
            "legend.facecolor": "white",
            "text.color": _TEXT,
            "axes.labelcolor": _TEXT,
            "axes.edgecolor": _TEXT,
            "xtick.color": _TEXT,
            "ytick.color": _TEXT,
            "axes.grid": True,
            "grid.color": "#cccccc",
            "grid.linewidth": 0.6,
            "grid.alpha": 1.0,
            "axes.prop_cycle": cycler(color=list(_BOOK_COLORS)),
            "lines.linewidth": 1.8,
            "lines.markersize": 5,
            "image.cmap": "viridis",
        }
    )


def loglog_with_fit(
    ax: Axes,
    x: ArrayLike,
    y: ArrayLike,
    label: str,
    *,
    color: str | None = None,
    fit_from: float | None = None,
) -> float:
    """Plot ``y`` against ``x`` on log–log axes with its fitted power law; return the slope.

    Explained in :doc:`/book/01_lightning_map`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, y : array-like, shape=[n]
        Positive data.
    label : str
        Legend label; the slope is appended (``"label (slope 1.02)"``).
    color : str, optional
    fit_from : float, optional
        Fit only the points with ``x ≥ fit_from`` (default: all).

    Returns
    -------
    float
        The least-squares slope ``p`` of ``log y = p log x + c``.
    """
    xa, ya = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same length, got {xa.size} and {ya.size}")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all() and (xa > 0).all() and (ya > 0).all()):
        raise ValueError("x and y must be finite and positive for a log-log fit")
    use = xa >= fit_from if fit_from is not None else np.ones(xa.size, dtype=bool)
    if np.unique(xa[use]).size < 2:
        raise ValueError(f"need at least two distinct x values to fit, got {use.sum()} point(s)")
    slope, intercept = np.polyfit(np.log(xa[use]), np.log(ya[use]), 1)
    (line,) = ax.plot(xa, ya, "o", color=color)
    xs = xa[use]
    ax.plot(
        xs,
        np.exp(intercept) * xs**slope,
        "-",
        color=line.get_color(),
        label=f"{label} (slope {slope:.2f})",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    return float(slope)


def plot_signed_matrix(
    ax: Axes,
    M: ArrayLike,
    *,
    vmax: float | None = None,
    annotate: bool = False,
    xlabels: list[str] | None = None,
    ylabels: list[str] | None = None,
) -> AxesImage:
    """A heat map of a matrix with signs: red positive, blue negative, white zero.

    Explained in :doc:`/book/02_fibers/swap` (also used in :doc:`/book/03_symmetries` and
    :doc:`/book/notes/transport`).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    M : array-like, shape=[m, n]
    vmax : float, optional
        The colour scale ``[−vmax, vmax]`` (default ``max |M|``; share it across panels).
    annotate : bool
        Write each entry (``:g``) in its cell.
    xlabels, ylabels : sequence of str, optional
        Tick labels (default ``1, 2, …``: 1-based, as in the book).

    Returns
    -------
    matplotlib.image.AxesImage
        For ``fig.colorbar``.
    """
    A = np.asarray(M, dtype=np.float64)
    if A.ndim != 2 or 0 in A.shape:
        raise ValueError(f"M must be a non-empty matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("M has non-finite entries (nan or inf): no colour for them")
    if vmax is None:
        vmax = float(np.abs(A).max()) or 1.0
    image = ax.imshow(A, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    if annotate:
        for (i, j), v in np.ndenumerate(A):
            ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=10)
    ax.set_xticks(range(A.shape[1]), xlabels or [str(k + 1) for k in range(A.shape[1])])
    ax.set_yticks(range(A.shape[0]), ylabels or [str(k + 1) for k in range(A.shape[0])])
    ax.grid(False)
    return image


def plot_count_grid(
    ax: Axes,
    counts: ArrayLike,
    *,
    xlabels: list[str],
    ylabels: list[str],
    outline: ArrayLike | None = None,
    cmap: str = "Blues",
) -> AxesImage:
    """Counts on a grid, each written in its cell, the colour on a log scale; cells outlined.

    Explained in :doc:`/book/notes/sweep` (where the sweep's architectures lie, and where the
    refuted rules fail).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    counts : array-like of int, shape=[m, n]
        Non-negative; zero cells are left white and unlabelled.
    xlabels, ylabels : list of str
        The ``n`` column and ``m`` row labels.
    outline : array-like of bool, shape=[m, n], optional
        Cells to frame (the atlas's grid, say).
    cmap : str

    Returns
    -------
    matplotlib.image.AxesImage
    """
    from matplotlib.colors import LogNorm

    A = np.asarray(counts)
    if A.ndim != 2 or 0 in A.shape:
        raise ValueError(f"counts must be a non-empty matrix, got shape {A.shape}")
    if not np.issubdtype(A.dtype, np.integer) or (A < 0).any():
        raise ValueError("counts must be non-negative integers")
    if (len(ylabels), len(xlabels)) != A.shape:
        raise ValueError(f"{len(ylabels)} × {len(xlabels)} labels for counts of shape {A.shape}")
    shown = np.ma.masked_equal(A, 0)
    top = max(int(A.max()), 2)
    image = ax.imshow(shown, cmap=cmap, norm=LogNorm(vmin=1, vmax=top), aspect="auto")
    for (i, j), v in np.ndenumerate(A):
        if v:
            dark = np.log(v) > 0.6 * np.log(top)
            ax.text(
                j, i, str(v), ha="center", va="center", fontsize=8, color="white" if dark else _TEXT
            )
    if outline is not None:
        frame = np.asarray(outline, dtype=bool)
        if frame.shape != A.shape:
            raise ValueError(f"outline must have the shape of counts {A.shape}, got {frame.shape}")
        for i, j in zip(*np.nonzero(frame), strict=True):
            ax.add_patch(
                mpl.patches.Rectangle(
                    (j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=_BOOK_COLORS[1], linewidth=1.6
                )
            )
    ax.set_xticks(range(A.shape[1]), xlabels)
    ax.set_yticks(range(A.shape[0]), ylabels)
    ax.grid(False)
    return image


def plot_singular_values(
    ax: Axes,
    s: ArrayLike,
    *,
    rank: int | None = None,
    label: str | None = None,
    normalize: bool = True,
    split: bool = False,
    **style: object,
) -> Line2D:
    """Singular values against their index on a log scale, with the rank marked.

    Explained in :doc:`/book/04_dimension` (also used in :doc:`/book/02_fibers` and
    :doc:`/book/06_softmax`).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    s : array-like, shape=[n]
        Singular values, largest first (e.g. ``FloatRank.singular_values``).
    rank : int, optional
        Draw a dotted line between value ``rank`` and ``rank + 1``.
    label : str, optional
    normalize : bool
        Divide by the largest (the y label says so).
    split : bool
        With ``rank``: the values after the rank in a second colour and square markers,
        labelled "kernel".
    **style
        Passed to ``ax.semilogy`` (default marker ``".-"``).

    Returns
    -------
    matplotlib.lines.Line2D
        The (first) line drawn.
    """
    v = np.asarray(s, dtype=np.float64).ravel()
    if v.size == 0 or not np.isfinite(v).all() or (v < 0).any():
        raise ValueError("s must be a non-empty list of finite non-negative singular values")
    if normalize and v[0] > 0:
        v = v / v[0]
    v = np.maximum(v, 1e-300)  # zeros stay on the log axis
    k = np.arange(1, v.size + 1)
    fmt_ = style.pop("fmt", ".-")
    end = rank if (split and rank is not None) else v.size
    (line,) = ax.semilogy(k[:end], v[:end], fmt_, label=label, **style)
    if split and rank is not None:
        ax.semilogy(k[end:], v[end:], "s", color="C1", label="kernel")
    if rank is not None:
        ax.axvline(rank + 0.5, color=line.get_color(), linestyle=":", linewidth=1.2)
    ax.set_xlabel("index of the singular value")
    ax.set_ylabel("singular value / largest" if normalize else "singular value")
    return line


def plot_fiber_sketch(*, figsize: tuple[float, float] = (4.8, 6.4)) -> Figure:
    """A schematic of the map from weights to functions: fibers, sheets and a crossing.

    Top panel, the weights: the fiber of a generic function ``φ₀`` is one curve (the scaling
    line), the fiber of a function ``φ`` at a swap point is two curves that do not meet. Bottom
    panel, the functions: a small neighbourhood of each of the two weights ``W`` and ``W'`` maps
    onto a sheet (blue and vermillion) of the neuromanifold, and the two sheets cross at ``φ``
    (gold: a singular point), while ``φ₀`` lies on a single sheet. A drawing, not data: the
    curves stand for sets of any dimension. Explained in :doc:`/book/02_fibers/swap`.

    Parameters
    ----------
    figsize : tuple of float
        Width and height in inches (default: one column, two panels stacked, for phones).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: ``fig.axes[0]`` the weights, ``fig.axes[1]`` the functions.
    """
    if len(figsize) != 2 or not all(
        isinstance(v, (int, float)) and np.isfinite(v) and v > 0 for v in figsize
    ):
        raise ValueError(f"figsize must be two positive numbers, got {figsize!r}")
    blue, red, grey = _BOOK_COLORS[0], _BOOK_COLORS[1], "#555555"
    fig, (top, bottom) = plt.subplots(2, 1, figsize=figsize, facecolor="white")
    for ax, title in ((top, "weights θ = (A, V)"), (bottom, "functions: the neuromanifold")):
        ax.set(xlim=(0, 10), ylim=(0, 6), xticks=[], yticks=[], facecolor="white")
        ax.set_title(title, color=_TEXT, fontsize=15)
        ax.grid(False)
        ax.set_aspect("equal")
    # the weights: one fiber line over φ₀, two over φ
    generic = np.column_stack([np.linspace(0.6, 3.4, 60), 4.6 - 1.4 * np.linspace(0, 1, 60) ** 0.6])
    line1 = np.column_stack(
        [np.linspace(4.0, 6.6, 60), 1.2 + 2.6 / (1 + 3 * np.linspace(0, 1, 60))]
    )
    line2 = np.column_stack(
        [np.linspace(7.0, 9.6, 60), 1.4 + 2.8 / (1 + 3 * np.linspace(0, 1, 60))]
    )
    top.plot(*generic.T, color=grey, lw=2.4)
    top.plot(*line1.T, color=grey, lw=2.4)
    top.plot(*line2.T, color=grey, lw=2.4)
    w0, w1, w2 = generic[30], line1[22], line2[22]
    for (x, y), color in ((w1, blue), (w2, red)):
        top.add_patch(Circle((x, y), 0.55, color=color, alpha=0.25, lw=0))
    top.plot(*w0, "o", color=grey, ms=8)
    top.plot(*w1, "o", color=blue, ms=8)
    top.plot(*w2, "o", color=red, ms=8)
    top.text(w0[0], w0[1] + 0.45, "W₀", ha="center", fontsize=15, color=_TEXT)
    top.text(w1[0] + 0.65, w1[1] + 0.35, "W", fontsize=15, color=blue)
    top.text(w2[0] + 0.65, w2[1] + 0.35, "W′", fontsize=15, color=red)
    top.text(2.0, 5.0, "fiber of φ₀:\none line", ha="center", fontsize=14, color=_TEXT)
    top.text(6.8, 5.0, "fiber of φ:\ntwo lines", ha="center", fontsize=14, color=_TEXT)
    top.text(0.3, 0.3, r"↓  $\theta \mapsto \varphi_\theta$", fontsize=15, color=grey)
    # the functions: two sheets through φ, φ₀ on one of them
    x = np.linspace(0.8, 9.2, 120)
    sheet1 = np.column_stack([x, 3.0 + 0.42 * (x - 5.6) + 0.03 * (x - 5.6) ** 2])
    sheet2 = np.column_stack([x, 3.0 - 0.5 * (x - 5.6) + 0.02 * (x - 5.6) ** 2])
    near = np.abs(x - 5.6) < 1.3
    bottom.plot(*sheet1.T, color=blue, lw=2, alpha=0.55)
    bottom.plot(*sheet2.T, color=red, lw=2, alpha=0.55)
    bottom.plot(*sheet1[near].T, color=blue, lw=6, solid_capstyle="round")
    bottom.plot(*sheet2[near].T, color=red, lw=6, solid_capstyle="round")
    phi, phi0 = (5.6, 3.0), sheet1[14]
    bottom.plot(*phi, "o", color=_SINGULAR_COLOR, ms=13, mec=_TEXT, mew=1.2, zorder=5)
    bottom.plot(*phi0, "o", color=grey, ms=8, zorder=5)
    bottom.text(7.4, 0.3, "φ: two sheets cross\n(a singular point)", ha="center", fontsize=14)
    bottom.text(0.3, 0.4, "φ₀: a smooth point", fontsize=14, color=_TEXT)
    bottom.text(
        9.3, sheet1[-1, 1] - 0.1, "sheet of W", ha="right", va="top", fontsize=14, color=blue
    )
    bottom.text(
        9.3, sheet2[-1, 1] + 0.1, "sheet of W′", ha="right", va="bottom", fontsize=14, color=red
    )
    for start, end in ((w0, phi0), (w1, phi), (w2, phi)):
        fig.add_artist(
            ConnectionPatch(
                start,
                end,
                "data",
                "data",
                axesA=top,
                axesB=bottom,
                color=grey,
                lw=1.2,
                arrowstyle="-|>",
                mutation_scale=14,
                shrinkA=8,
                shrinkB=9,
                linestyle="--",
            )
        )
    return fig


def plot_umbrella_slice(
    data: UmbrellaSlice | None = None,
    *,
    elev: float = 24.0,
    azim: float = -35.0,
    ax: Axes3D | None = None,
) -> Figure:
    """Draw :func:`lsa_lib.m212.umbrella_slice` as a surface with the singular curve in gold.

    Explained in :doc:`/book/05_singularities/m212`.

    Parameters
    ----------
    data : UmbrellaSlice, optional
        Precomputed data (default: ``umbrella_slice()``).
    elev, azim : float
        Viewing angles in degrees.
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .m212 import UmbrellaSlice, umbrella_slice

    if data is None:
        data = umbrella_slice()
    elif not isinstance(data, UmbrellaSlice):
        raise TypeError(
            f"data must be an UmbrellaSlice (lsa_lib.m212.umbrella_slice), got {data!r}"
        )
    if ax is None:
        fig = plt.figure(figsize=(6.4, 5.2))
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    U, Vg, S = data.surface
    ax.computed_zorder = False  # draw the curves on top of the translucent surface
    ax.plot_surface(
        U,
        Vg,
        S,
        color=_SMOOTH_COLOR,
        alpha=0.45,
        linewidth=0.25,
        edgecolor="#1a3c5a",
        shade=True,
        zorder=1,
    )
    c_in, c_out = data.singular_in_m, data.singular_not_in_m
    ax.plot(
        c_in[:, 0],
        c_in[:, 1],
        c_in[:, 2],
        color=_SINGULAR_COLOR,
        lw=4.5,
        label="singular points (in M)",
        zorder=10,
    )
    ax.plot(
        c_out[:, 0],
        c_out[:, 1],
        c_out[:, 2],
        color="#555555",
        lw=2.2,
        ls="--",
        label="on the quartic, not in M",
        zorder=10,
    )
    ax.set_xlabel("u  (coefficient of y² in q₂)", labelpad=6)
    ax.set_ylabel("v  (coefficient of xy in q₂)", labelpad=6)
    ax.set_zlabel("s  (coefficient of y² in q₁)", labelpad=6)
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_ticks([-1.0, -0.5, 0.0, 0.5, 1.0])
    ax.view_init(elev=elev, azim=azim)
    ax.legend(loc="upper left")
    return fig
