"""Tests for lsa_lib.dimension (chapter "Dimension formulas")."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib import dimension as dim
from lsa_lib.dimension import (
    DimensionRow,
    certified_dimension_beyond_symmetries,
    dimension_table,
    expected_dimension,
    explore,
    extra_fiber_directions,
    failed_hypotheses,
    format_dimension_table,
    formula_source,
    general_width_formula,
    parameter_count,
    seen_dimension,
)

rank = pytest.importorskip("lsa_lib.rank")
HAS_ENGINE = hasattr(rank, "certified_dimension")
needs_engine = pytest.mark.skipif(not HAS_ENGINE, reason="rank engine not available")


# ---------------------------------------------------------------- formulas (no engine) ---


def test_parameter_count_is_the_core_one():
    from lsa_lib._core import parameter_count as core

    assert parameter_count is core
    assert parameter_count((2, 2), (2,)) == 12
    assert parameter_count((5, 4, 1), (2, 1)) == 52


@given(d=st.integers(1, 12), d_out=st.integers(1, 12), a=st.integers(1, 12))
@settings(max_examples=60, deadline=None)
def test_single_layer_formula(d, d_out, a):
    expected = 2 * a * d + d * d_out - a * a - 1 if a <= d else d * d + d * d_out - 1
    assert expected_dimension((d, d_out), (a,)) == expected
    assert expected_dimension((d, d_out), (a,), normalized=True) == expected + 1
    assert formula_source((d, d_out), (a,)) == dim.SOURCE_SINGLE


@given(delta=st.integers(2, 10), l=st.integers(1, 5), data=st.data())
@settings(max_examples=60, deadline=None)
def test_equal_width_formula(delta, l, data):
    attn = data.draw(st.lists(st.integers(2, delta), min_size=l, max_size=l))
    widths = (delta,) * (l + 1)
    value = delta**2 + sum(a * (2 * delta - a) for a in attn) - l
    assert expected_dimension(widths, attn) == value
    assert expected_dimension(widths, attn, normalized=True) == value + l
    # equivalently: parameters minus the symmetries (Σ a_i², (l-1)δ², l)
    P = parameter_count(widths, attn)
    assert value == P - sum(a * a for a in attn) - (l - 1) * delta**2 - l


def test_paper_figure3_expected_values():
    # the "Expected" curve of the paper's Figure 3: softmax, l = 2, a_i = 2, δ = 3..10
    got = [expected_dimension((d, d, d), (2, 2), normalized=True) for d in range(3, 11)]
    assert got == [25, 40, 57, 76, 97, 120, 145, 172]


def test_general_formula_examples():
    assert general_width_formula((5, 3, 3, 4), (1, 2, 2)) == 40
    assert general_width_formula((5, 4, 1), (2, 1)) == 29
    assert general_width_formula((4, 3, 3, 4), (2, 2, 2)) == 40
    assert general_width_formula((4, 3, 3, 4), (2, 2, 2), normalized=True) == 43
    assert expected_dimension((4, 3, 3, 4), (2, 2, 2)) == 40
    assert formula_source((4, 3, 3, 4), (2, 2, 2)) == dim.SOURCE_GENERAL
    assert formula_source((3, 3, 3), (2, 2)) == dim.SOURCE_EQUAL
    assert formula_source((3, 3, 3), (2, 2), normalized=True) == dim.SOURCE_SOFTMAX_EQUAL
    assert formula_source((3, 2), (2,), normalized=True) == dim.SOURCE_SOFTMAX_SINGLE


def test_seen_dimension():
    assert seen_dimension((5, 4, 1), (2, 1), 1) == 3
    assert seen_dimension((5, 4, 2), (2, 1), 1) == 4
    assert seen_dimension((6, 5, 2, 1), (2, 1, 1), 1) == 4  # V_2, K_2, Q_2: 2 + 1 + 1 rows
    assert seen_dimension((7, 6, 1, 1), (2, 2, 1), 1) == 5
    assert seen_dimension((7, 6, 1, 1), (2, 3, 1), 1) == 6
    with pytest.raises(ValueError, match="hidden layer index"):
        seen_dimension((5, 4, 1), (2, 1), 2)
    with pytest.raises(ValueError, match="hidden layer index"):
        seen_dimension((5, 4, 1), (2, 1), 0)


# ---------------------------------------------------------------- hypotheses ---


@pytest.mark.parametrize(
    ("widths", "attn", "t", "match"),
    [
        ((3, 3), (2,), 1, "t ≥ 2"),
        ((3, 3, 3), (2, 2), 1, "t ≥ 2"),
        ((3, 4, 2), (2, 2), 3, "non-increasing"),
        ((5, 3, 3, 4), (1, 2, 2), 3, "token-rank collapse"),
        ((3, 3, 3), (1, 2), 3, "token-rank collapse"),
        ((5, 4, 1), (2, 1), 3, "fully read"),
        ((6, 5, 2), (2, 1), 3, "fully read"),
        # layer 2 reads only d_2 + 2 a_2 = 5 < 6 directions of layer 1's output
        ((7, 6, 1, 1), (2, 2, 1), 3, "fully read"),
    ],
)
def test_hypotheses_violated_raise(widths, attn, t, match):
    assert failed_hypotheses(widths, attn, t=t)
    with pytest.raises(ValueError, match=match):
        expected_dimension(widths, attn, t=t)


def test_softmax_hypotheses():
    assert expected_dimension((3, 3, 3), (1, 2), normalized=True) == 9 + 5 + 8
    with pytest.raises(ValueError, match="Conjecture 3.10"):
        expected_dimension((4, 3, 3), (2, 2), normalized=True)
    with pytest.raises(ValueError, match="Conjecture 3.10"):
        expected_dimension((3, 3, 3), (4, 2), normalized=True)
    with pytest.raises(ValueError, match="t ≥ 2"):
        expected_dimension((3, 3), (2,), normalized=True, t=1)


def test_hypotheses_hold():
    for widths, attn in [((2, 2), (2,)), ((5, 4, 2), (2, 1)), ((4, 3, 3, 4), (2, 2, 2))]:
        assert failed_hypotheses(widths, attn) == []


@pytest.mark.parametrize(
    ("widths", "attn", "err"),
    [
        ((3,), (), ValueError),
        ((3, 3), (2, 2), ValueError),
        ((3, 0), (2,), ValueError),
        ((3, 3), (-1,), ValueError),
        ((3, 2.5), (2,), ValueError),
        ("33", (2,), ValueError),
    ],
)
def test_bad_architecture(widths, attn, err):
    with pytest.raises(err):
        expected_dimension(widths, attn)
    with pytest.raises(err):
        general_width_formula(widths, attn)


@pytest.mark.parametrize("t", [0, -1, 2.0, True, "3"])
def test_bad_t(t):
    with pytest.raises(ValueError, match="t"):
        expected_dimension((3, 3), (2,), t=t)


def test_bad_normalized():
    with pytest.raises(TypeError, match="normalized"):
        expected_dimension((3, 3), (2,), normalized="yes")


# ---------------------------------------------------------------- table, explorer ---


def test_table_without_engine_and_format():
    rows = dimension_table(
        [((2, 2), (2,)), ((5, 4, 1), (2, 1))], certify=False, float_estimate=False
    )
    assert [r.n_params for r in rows] == [12, 52]
    assert rows[0].expected == 7 and rows[1].expected is None
    assert "fully read" in rows[1].source
    assert rows[0].agrees is None
    md = format_dimension_table(rows)
    assert md.splitlines()[0].startswith("| widths")
    assert "| none |" in md
    text = format_dimension_table(rows, style="text")
    assert "none" in text and "|" not in text
    with pytest.raises(ValueError, match="style"):
        format_dimension_table(rows, style="html")
    with pytest.raises(ValueError, match="gaps"):
        format_dimension_table(rows, gaps="exact")
    with pytest.raises(TypeError, match="DimensionRow"):
        format_dimension_table([1])


@pytest.mark.parametrize(
    ("archs", "err"),
    [
        ([], ValueError),
        ("abc", TypeError),
        ([((2, 2),)], TypeError),
        ([((2, 2), (2, 2))], ValueError),
    ],
)
def test_table_bad_input(archs, err):
    with pytest.raises(err):
        dimension_table(archs, certify=False, float_estimate=False)


def test_explore_without_certificate():
    text = explore((5, 4, 1), (2, 1), certify=False)
    assert "parameters P = 52" in text
    assert "expected dimension: none" in text
    assert "would give 29" in text
    assert "expected dimension: 7" in explore((2, 2), (2,), certify=False)


@needs_engine
def test_explorer_widget():
    pytest.importorskip("ipywidgets")
    w = dim.explorer()
    assert len(w.children) == 4


# ---------------------------------------------------------------- with the engine ---


@needs_engine
@pytest.mark.parametrize(
    ("widths", "attn"),
    [
        ((2, 2), (2,)),
        ((3, 2), (4,)),
        ((3, 3, 3), (2, 2)),
        ((4, 3, 3, 4), (2, 2, 2)),
        ((5, 4, 2), (2, 1)),
    ],
)
def test_formula_equals_certified(widths, attn):
    cert = rank.certified_dimension(widths, attn, t=3)
    assert cert.exact
    assert cert.lower == expected_dimension(widths, attn)


@needs_engine
@pytest.mark.parametrize(
    ("widths", "attn", "true"),
    [((5, 3, 3, 4), (1, 2, 2), 36), ((5, 4, 1), (2, 1), 28), ((7, 6, 1, 1), (2, 2, 1), 53)],
)
def test_counterexamples_certified(widths, attn, true):
    cert = certified_dimension_beyond_symmetries(widths, attn, t=3)
    assert cert.exact and cert.lower == true
    formula = general_width_formula(widths, attn)
    assert formula > true
    # the three symmetries alone only give the formula as an upper bound
    assert rank.certified_dimension(widths, attn, t=3).upper == formula


@needs_engine
@pytest.mark.parametrize(
    ("widths", "attn", "n_extra"),
    [
        ((2, 2), (2,), 0),
        ((4, 3, 3, 4), (2, 2, 2), 0),
        ((5, 3, 3, 4), (1, 2, 2), 4),
        ((5, 4, 1), (2, 1), 5),
        ((3, 3, 3), (1, 1), 0),
    ],
)
def test_extra_fiber_directions_are_in_the_kernel(widths, attn, n_extra):
    from lsa_lib._core import random_layers

    g = np.random.default_rng(1)
    layers = [tuple(np.round(3 * M) for M in layer) for layer in random_layers(widths, attn, g)]
    D = extra_fiber_directions(layers)
    assert D.shape == (n_extra, parameter_count(widths, attn))
    if n_extra == 0:
        return
    assert any(v != 0 for v in D.ravel())
    param = rank.lightning_parametrization(widths, attn, t=3)
    X = g.standard_normal((6, widths[0], 3))
    J = rank.float_jacobian(param, [M for layer in layers for M in layer], X)
    Df = D.astype(np.float64)
    assert np.abs(J @ Df.T).max() <= 1e-9 * np.abs(J).max() * np.abs(Df).max()


def test_extra_fiber_directions_bad_input():
    with pytest.raises(ValueError, match="integers"):
        extra_fiber_directions([(np.full((1, 2), 0.5), np.ones((1, 2)), np.ones((2, 2)))])
    with pytest.raises(ValueError, match="non-empty"):
        extra_fiber_directions([])
    with pytest.raises(TypeError, match="triple"):
        extra_fiber_directions([(np.ones((1, 2)), np.ones((1, 2)))])
    with pytest.raises(ValueError, match="expects width"):
        extra_fiber_directions(
            [(np.ones((1, 2)),) * 2 + (np.ones((3, 2)),), (np.ones((1, 2)),) * 3]
        )


@needs_engine
def test_table_with_engine():
    rows = dimension_table([((2, 2), (2,)), ((5, 4, 1), (2, 1))])
    assert rows[0].certified.exact and rows[0].agrees is True
    assert rows[0].numerical_note == "ok" and rows[0].numerical.rank == 7
    assert rows[1].certified.lower == 28 and rows[1].agrees is None
    assert isinstance(rows[0], DimensionRow)
    assert "7 (exact)" in format_dimension_table(rows)
    assert "7 (gap ≥ 1e+04)" in format_dimension_table(rows, gaps="threshold")
    assert "certificate: 7 ≤ dim ≤ 7 (exact" in explore((2, 2), (2,))


@needs_engine
def test_extra_fiber_directions_one_token():
    layers = [(np.array([[1, 2], [3, 5]]), np.array([[2, 1], [1, 4]]), np.array([[1, 0], [2, 3]]))]
    assert extra_fiber_directions(layers, t=3).shape == (0, 12)
    D = extra_fiber_directions(layers, t=1)
    assert D.shape == (2, 12)
    with pytest.raises(ValueError, match="t"):
        extra_fiber_directions(layers, t=0)
    # with one token, one layer: the certificate is d(d+1)/2 + d d' - 1 = 6
    cert = certified_dimension_beyond_symmetries((2, 2), (2,), t=1)
    assert cert.exact and cert.lower == 6


@needs_engine
@given(
    d0=st.integers(2, 5),
    data=st.data(),
)
@settings(max_examples=12, deadline=None)
def test_formula_holds_under_the_hypotheses(d0, data):
    d1 = data.draw(st.integers(1, d0))
    d2 = data.draw(st.integers(1, 3))
    attn = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    widths = (d0, d1, d2)
    cert = certified_dimension_beyond_symmetries(widths, attn)
    assert cert.exact
    formula = general_width_formula(widths, attn)
    if not failed_hypotheses(widths, attn):
        assert cert.lower == formula
    if cert.lower != formula:
        assert failed_hypotheses(widths, attn)
