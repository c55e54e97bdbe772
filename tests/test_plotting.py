"""Tests for lsa_lib.plotting (the book's figure style)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lsa_lib.plotting import (  # noqa: E402
    BOOK_COLORS,
    SINGULAR_COLOR,
    fit_loglog_slope,
    loglog_with_fit,
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
        c.lower() for c in BOOK_COLORS
    ]
    assert matplotlib.colors.is_color_like(SINGULAR_COLOR)


def test_fit_loglog_slope_exact_power_law():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    slope, intercept = fit_loglog_slope(x, 3.0 * x**1.5)
    assert slope == pytest.approx(1.5)
    assert np.exp(intercept) == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        ([1, 2], [1, 2, 3], "same length"),
        ([1], [1], "two distinct"),
        ([2, 2], [1, 3], "two distinct"),
        ([1, 2], [0, 1], "positive"),
        ([1, np.nan], [1, 2], "positive"),
    ],
)
def test_fit_loglog_slope_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        fit_loglog_slope(x, y)


def test_loglog_with_fit_draws_and_returns_slope():
    use_book_style()
    fig, ax = plt.subplots()
    x = np.array([10.0, 100.0, 1000.0])
    slope = loglog_with_fit(ax, x, x**2, "quadratic")
    assert slope == pytest.approx(2.0)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.lines) == 2
    assert ax.lines[1].get_label() == "quadratic (slope 2.00)"
    plt.close(fig)
