"""One plotting style for the whole book, and small helpers shared by the chapters.

Every chapter calls :func:`use_book_style` once, before its first figure, so figures look
alike: an opaque white background (readable in the site's dark theme), dark text, a grid and a
fixed colour-blind-safe colour cycle (Okabe–Ito).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "BOOK_COLORS",
    "SINGULAR_COLOR",
    "SMOOTH_COLOR",
    "use_book_style",
    "loglog_with_fit",
    "fit_loglog_slope",
]

#: The Okabe–Ito palette (colour-blind safe), in the order of the book's colour cycle.
BOOK_COLORS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)

#: Colour for singular points (the singular locus) in every chapter's figures.
SINGULAR_COLOR: str = "gold"

#: Colour for smooth (generic) points, contrasting with :data:`SINGULAR_COLOR`.
SMOOTH_COLOR: str = "#0072B2"

_TEXT = "#222222"


def use_book_style() -> None:
    """Set matplotlib's rcParams to the book's style (call once per notebook).

    White, opaque figure and axes backgrounds; dark text; font size 11; grid on; the
    :data:`BOOK_COLORS` cycle; ``figure.dpi = 100`` and ``figure.figsize = (6.4, 4)``.
    The inline backend keeps its default PNG output.

    Notes
    -----
    Used by every chapter; introduced in the chapter "The lightning map".
    """
    import matplotlib as mpl
    from cycler import cycler

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
            "axes.prop_cycle": cycler(color=list(BOOK_COLORS)),
            "lines.linewidth": 1.8,
            "lines.markersize": 5,
            "image.cmap": "viridis",
        }
    )


def fit_loglog_slope(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of ``log y = slope · log x + intercept``.

    Used by the figures of every chapter, first in "The lightning map".

    Parameters
    ----------
    x, y : array-like, shape=[n]
        Positive values, ``n >= 2``, with at least two distinct ``x``.

    Returns
    -------
    tuple of float
        ``(slope, intercept)`` (natural logarithms).

    Raises
    ------
    ValueError
        If the arrays differ in length, have fewer than two points, or hold a value that is
        not finite and positive.
    """
    xa = np.asarray(x, dtype=np.float64).reshape(-1)
    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same length, got {xa.size} and {ya.size}")
    if xa.size < 2 or np.unique(xa).size < 2:
        raise ValueError(f"need at least two distinct x values, got {xa.size} point(s)")
    if not (
        np.all(np.isfinite(xa)) and np.all(np.isfinite(ya)) and (xa > 0).all() and (ya > 0).all()
    ):
        raise ValueError("x and y must be finite and positive for a log-log fit")
    slope, intercept = np.polyfit(np.log(xa), np.log(ya), 1)
    return float(slope), float(intercept)


def loglog_with_fit(
    ax: Any, x: Sequence[float], y: Sequence[float], label: str, *, color: str | None = None
) -> float:
    """Plot ``y`` against ``x`` on log–log axes with its fitted power law; return the slope.

    Used by the figures of every chapter, first in "The lightning map".

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on (set to log scale on both axes).
    x, y : array-like, shape=[n]
        Positive data.
    label : str
        Legend label; the fitted slope is appended (``"label (slope 1.02)"``).
    color : str, optional
        Line colour (default: next in the cycle).

    Returns
    -------
    float
        The fitted slope (the exponent ``p`` in ``y ≈ c xᵖ``).
    """
    slope, intercept = fit_loglog_slope(x, y)
    xa = np.asarray(x, dtype=np.float64)
    (line,) = ax.plot(xa, np.asarray(y, dtype=np.float64), "o", color=color)
    ax.plot(
        xa,
        np.exp(intercept) * xa**slope,
        "-",
        color=line.get_color(),
        label=f"{label} (slope {slope:.2f})",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    return slope
