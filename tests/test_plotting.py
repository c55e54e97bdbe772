"""Tests of lsa_lib.plotting: the book's figure style and the plots the chapters repeat."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from lsa_lib.plotting import (
    _BOOK_COLORS,
    _SINGULAR_COLOR,
    loglog_with_fit,
    plot_count_grid,
    plot_fiber_sketch,
    plot_signed_matrix,
    plot_singular_values,
    use_book_style,
)


def test_use_book_style_sets_opaque_white_backgrounds():
    use_book_style()
    rc = matplotlib.rcParams
    for key in ("figure.facecolor", "axes.facecolor", "savefig.facecolor"):
        assert matplotlib.colors.to_hex(rc[key]) == "#ffffff"
    assert rc["axes.grid"] is True
    assert rc["figure.dpi"] == 100
    assert list(rc["figure.figsize"]) == [6.4, 4.0]
    assert [matplotlib.colors.to_hex(c) for c in rc["axes.prop_cycle"].by_key()["color"]] == [
        c.lower() for c in _BOOK_COLORS
    ]
    assert matplotlib.colors.is_color_like(_SINGULAR_COLOR)


def test_loglog_with_fit_draws_and_returns_slope():
    use_book_style()
    fig, ax = plt.subplots()
    x = np.array([10.0, 100.0, 1000.0])
    slope = loglog_with_fit(ax, x, x**2, "quadratic")
    assert slope == pytest.approx(2.0)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.lines) == 2
    assert ax.lines[1].get_label() == "quadratic (slope 2.00)"
    # the fit of an exact power law, and a fit restricted to the larger x
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    assert loglog_with_fit(ax, x, 3.0 * x**1.5, "p") == pytest.approx(1.5)
    y = np.where(x < 4, 1.0, x**2)
    assert loglog_with_fit(ax, x, y, "tail", fit_from=4) == pytest.approx(2.0)
    assert list(ax.lines[-1].get_xdata()) == [4.0, 8.0, 16.0]
    plt.close(fig)


@pytest.mark.parametrize(
    ("x", "y", "kw", "match"),
    [
        ([1, 2], [1, 2, 3], {}, "same length"),
        ([1], [1], {}, "two distinct"),
        ([2, 2], [1, 3], {}, "two distinct"),
        ([1, 2], [1, 3], {"fit_from": 2}, "two distinct"),
        ([1, 2], [0, 1], {}, "positive"),
        ([1, np.nan], [1, 2], {}, "positive"),
    ],
)
def test_loglog_with_fit_bad_input(x, y, kw, match):
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=match):
        loglog_with_fit(ax, x, y, "bad", **kw)
    plt.close(fig)


def test_plot_signed_matrix():
    fig, ax = plt.subplots()
    M = np.array([[1.0, -2.0, 0.0], [0.5, 0.0, 3.0]])
    image = plot_signed_matrix(ax, M, annotate=True)
    assert image.get_clim() == (-3.0, 3.0) and image.get_cmap().name == "RdBu_r"
    assert [t.get_text() for t in ax.texts] == ["1", "-2", "0", "0.5", "0", "3"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]  # 1-based
    image = plot_signed_matrix(ax, np.zeros((2, 2)), vmax=None, xlabels=["a", "b"])
    assert image.get_clim() == (-1.0, 1.0) and ax.get_xticklabels()[1].get_text() == "b"
    assert plot_signed_matrix(ax, M, vmax=10).get_clim() == (-10.0, 10.0)
    with pytest.raises(ValueError, match="matrix"):
        plot_signed_matrix(ax, np.ones(3))
    plt.close(fig)


def test_plot_count_grid():
    fig, ax = plt.subplots()
    counts = np.array([[0, 3], [12, 1]])
    frame = np.array([[True, False], [False, False]])
    plot_count_grid(ax, counts, xlabels=["a", "b"], ylabels=["1", "2"], outline=frame)
    assert sorted(t.get_text() for t in ax.texts) == ["1", "12", "3"]  # zero cells unlabelled
    assert len(ax.patches) == 1 and ax.patches[0].get_xy() == (-0.5, -0.5)
    for bad, match in [(np.ones(3, dtype=int), "matrix"), (np.array([[-1]]), "non-negative")]:
        with pytest.raises(ValueError, match=match):
            plot_count_grid(ax, bad, xlabels=["a"], ylabels=["1"])
    with pytest.raises(ValueError, match="labels"):
        plot_count_grid(ax, counts, xlabels=["a"], ylabels=["1", "2"])
    with pytest.raises(ValueError, match="outline"):
        plot_count_grid(ax, counts, xlabels=["a", "b"], ylabels=["1", "2"], outline=[True])
    with pytest.raises(ValueError, match="integers"):
        plot_count_grid(ax, counts * 0.5, xlabels=["a", "b"], ylabels=["1", "2"])
    plt.close(fig)


def test_plot_singular_values():
    fig, ax = plt.subplots()
    s = np.array([4.0, 2.0, 1e-9, 0.0])
    line = plot_singular_values(ax, s, rank=2, label="J")
    assert list(line.get_ydata()) == [1.0, 0.5, 2.5e-10, 1e-300] and line.get_label() == "J"
    assert ax.get_yscale() == "log" and ax.lines[-1].get_xdata()[0] == 2.5  # the rank line
    plot_singular_values(ax, s, rank=2, split=True, normalize=False)
    kernel = [ln for ln in ax.lines if ln.get_label() == "kernel"]
    assert len(kernel) == 1 and list(kernel[0].get_xdata()) == [3, 4]
    assert ax.get_ylabel() == "singular value"
    with pytest.raises(ValueError):
        plot_singular_values(ax, [1.0, -1.0])
    plt.close(fig)


def test_plot_fiber_sketch():
    use_book_style()
    fig = plot_fiber_sketch()
    weights, functions = fig.axes
    assert weights.get_title().startswith("weights") and "neuromanifold" in functions.get_title()
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    for word in ("one line", "two lines", "sheet of W", "singular point", "smooth point"):
        assert word in texts
    # the three weights, the two functions: one of them gold (singular)
    gold = [ln for ln in functions.lines if ln.get_color() == _SINGULAR_COLOR]
    assert len(gold) == 1 and len(weights.patches) == 2  # two neighbourhoods, W and W'
    assert sum(isinstance(a, matplotlib.patches.ConnectionPatch) for a in fig.artists) == 3
    assert matplotlib.colors.to_hex(fig.get_facecolor()) == "#ffffff"  # opaque: dark theme
    assert [ax.get_xticks().size for ax in fig.axes] == [0, 0]
    plt.close(fig)
    with pytest.raises(ValueError, match="figsize"):
        plot_fiber_sketch(figsize=(6.4, -1))
    with pytest.raises(ValueError, match="figsize"):
        plot_fiber_sketch(figsize=(6.4,))
