"""Tests of lsa_lib.dimension: the formulas, their hypotheses, the computed dimensions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lsa_lib.dimension import (
    exact_dimension,
    expected_dimension,
    extra_fiber_directions,
    failed_hypotheses,
    float_dimension,
    general_width_formula,
    seen_dimension,
)
from lsa_lib.lightning import parameter_count, random_layers
from lsa_lib.rank import float_jacobian
from lsa_lib.symmetries import network_parametrization


def certified_dimension_beyond_symmetries(widths, attn, t=3):
    return exact_dimension(widths, attn, t, beyond_symmetries=True)


# ---------------------------------------------------------------- formulas (no engine) ---


@given(d=st.integers(1, 12), d_out=st.integers(1, 12), a=st.integers(1, 12))
@settings(max_examples=60)
@example(d=2, d_out=2, a=2)  # the paper's example: 12 parameters, dimension 7
@example(d=3, d_out=1, a=4)  # a > d
def test_single_layer_formula(d, d_out, a):
    expected = 2 * a * d + d * d_out - a * a - 1 if a <= d else d * d + d * d_out - 1
    assert expected_dimension((d, d_out), (a,)) == expected
    assert expected_dimension((d, d_out), (a,), normalizer="exp") == expected + 1


@given(delta=st.integers(2, 10), l=st.integers(1, 5), data=st.data())
@settings(max_examples=60)
def test_equal_width_formula(delta, l, data):
    attn = data.draw(st.lists(st.integers(2, delta), min_size=l, max_size=l))
    widths = (delta,) * (l + 1)
    value = delta**2 + sum(a * (2 * delta - a) for a in attn) - l
    assert expected_dimension(widths, attn) == value
    assert expected_dimension(widths, attn, normalizer="exp") == value + l
    # equivalently: parameters minus the symmetries (Σ a_i², (l-1)δ², l)
    P = parameter_count(widths, attn)
    assert value == P - sum(a * a for a in attn) - (l - 1) * delta**2 - l


def test_paper_figure3_expected_values():
    # the "Expected" curve of the paper's Figure 3: softmax, l = 2, a_i = 2, δ = 3..10
    got = [expected_dimension((d, d, d), (2, 2), normalizer="exp") for d in range(3, 11)]
    assert got == [25, 40, 57, 76, 97, 120, 145, 172]


def test_general_formula_examples():
    # one layer: the dimension a smooth point's tangent space has (chapter 5)
    assert [
        general_width_formula((d, o), (a,))
        for d, o, a in ((2, 2, 2), (2, 1, 2), (3, 2, 2), (2, 2, 5))
    ] == [7, 5, 13, 7]
    assert general_width_formula((5, 3, 3, 4), (1, 2, 2)) == 40
    assert general_width_formula((5, 4, 1), (2, 1)) == 29
    assert general_width_formula((4, 3, 3, 4), (2, 2, 2)) == 40
    assert general_width_formula((4, 3, 3, 4), (2, 2, 2), normalizer="exp") == 43
    assert expected_dimension((4, 3, 3, 4), (2, 2, 2)) == 40


def test_seen_dimension():
    assert seen_dimension((5, 4, 1), (2, 1), 1) == 3
    assert seen_dimension((5, 4, 2), (2, 1), 1) == 4
    assert seen_dimension((6, 5, 2, 1), (2, 1, 1), 1) == 4  # V_2, K_2, Q_2: 2 + 1 + 1 rows
    assert seen_dimension((7, 6, 1, 1), (2, 2, 1), 1) == 5
    assert seen_dimension((7, 6, 1, 1), (2, 3, 1), 1) == 6
    with pytest.raises(ValueError, match="hidden layer"):
        seen_dimension((5, 4, 1), (2, 1), 2)
    with pytest.raises(ValueError, match="hidden layer"):
        seen_dimension((5, 4, 1), (2, 1), 0)
    with pytest.raises(ValueError, match="hidden layer"):
        seen_dimension((5, 4), (2,), 1)


# ---------------------------------------------------------------- hypotheses ---


@pytest.mark.parametrize(
    ("widths", "attn", "t", "match"),
    [
        ((3, 3), (2,), 1, "t ≥ 2"),
        ((3, 3, 3), (2, 2), 1, "t ≥ 2"),
        ((3, 4, 2), (2, 2), 3, "non-increasing"),
        ((5, 3, 3, 4), (1, 2, 2), 3, "collapses the tokens"),
        ((3, 3, 3), (1, 2), 3, "collapses the tokens"),
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
    # a token collapse costs the softmax nothing (chapter 6): 9 + 5 + 8, with l = 2 added
    assert expected_dimension((3, 3, 3), (1, 2), normalizer="exp") == 9 + 5 + 8
    with pytest.raises(ValueError, match="collapses"):
        expected_dimension((3, 3, 3), (1, 2))
    # narrowing and fully read, and a > δ: covered by the formula (certified 32 and 26)
    assert expected_dimension((4, 3, 3), (2, 2), normalizer="exp") == 32
    assert expected_dimension((3, 3, 3), (4, 2), normalizer="exp") == 26
    # the unread direction of (5, 4, 1) is a softmax symmetry too; widening is not covered
    for widths, attn, match in [((5, 4, 1), (2, 1), "fully read"), ((4, 6, 3), (2, 2), "widens")]:
        with pytest.raises(ValueError, match=match):
            expected_dimension(widths, attn, normalizer="exp")
    with pytest.raises(ValueError, match="t ≥ 2"):
        expected_dimension((3, 3), (2,), normalizer="exp", t=1)


@pytest.mark.parametrize("normalizer", ["square", "square_plus_one", "taylor2"])
def test_no_formula_for_other_normalizers(normalizer):
    # one homogeneous layer with a = 1 is 11, not the formula's 13 (:doc:`/book/06_softmax`)
    (sentence,) = failed_hypotheses((3, 3), (1,), normalizer=normalizer)
    assert "checked for the softmax" in sentence and normalizer in sentence
    with pytest.raises(ValueError, match="checked for the softmax"):
        expected_dimension((3, 3), (1,), normalizer=normalizer)


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


def test_bad_normalizer():
    with pytest.raises(TypeError, match="normalizer"):
        expected_dimension((3, 3), (2,), normalizer=True)
    with pytest.raises(ValueError, match="normalizer"):
        expected_dimension((3, 3), (2,), normalizer="softmax")
    with pytest.raises(ValueError, match="t "):
        expected_dimension(
            (3, 3), (2,), "exp"
        )  # the argument order is (widths, attn, t, normalizer)


# ---------------------------------------------------------------- with the engine ---


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
    cert = exact_dimension(widths, attn)
    assert cert.certified
    assert cert.rank == expected_dimension(widths, attn)


@pytest.mark.parametrize(
    ("widths", "attn", "true"),
    [((5, 3, 3, 4), (1, 2, 2), 36), ((5, 4, 1), (2, 1), 28), ((7, 6, 1, 1), (2, 2, 1), 53)],
)
def test_counterexamples_certified(widths, attn, true):
    cert = certified_dimension_beyond_symmetries(widths, attn, t=3)
    assert cert.certified and cert.rank == true
    formula = general_width_formula(widths, attn)
    assert formula > true
    # the three symmetries alone only give the formula as an upper bound
    assert exact_dimension(widths, attn).upper == formula
    # and the default number of inputs is ⌈3P / (d_l t)⌉ + 2
    assert cert.n_inputs == -(-3 * parameter_count(widths, attn) // (widths[-1] * 3)) + 2


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
    g = np.random.default_rng(1)
    layers = [tuple(np.round(3 * M) for M in layer) for layer in random_layers(widths, attn, g)]
    D = extra_fiber_directions(layers)
    assert D.shape == (n_extra, parameter_count(widths, attn))
    assert all(type(v) is int for v in D.ravel())  # exact Python integers
    param = network_parametrization(widths, attn, t=3)
    X = g.standard_normal((6, widths[0], 3))
    J = float_jacobian(param, [M for layer in layers for M in layer], X)
    Df = D.astype(np.float64)
    if n_extra:
        assert np.abs(Df).max() > 0
        assert np.abs(J @ Df.T).max() <= 1e-9 * np.abs(J).max() * np.abs(Df).max()


def test_extra_fiber_directions_bad_input():
    with pytest.raises(ValueError, match="integer entries"):
        extra_fiber_directions([(np.full((1, 2), 0.5), np.ones((1, 2)), np.ones((2, 2)))])
    with pytest.raises(ValueError, match="non-empty"):
        extra_fiber_directions([])
    with pytest.raises(TypeError, match="triple"):
        extra_fiber_directions([(np.ones((1, 2)), np.ones((1, 2)))])
    with pytest.raises(ValueError, match="expects input width"):
        extra_fiber_directions(
            [(np.ones((1, 2)),) * 2 + (np.ones((3, 2)),), (np.ones((1, 2)),) * 3]
        )


def test_extra_fiber_directions_one_token():
    layers = [(np.array([[1, 2], [3, 5]]), np.array([[2, 1], [1, 4]]), np.array([[1, 0], [2, 3]]))]
    assert extra_fiber_directions(layers, t=3).shape == (0, 12)
    D = extra_fiber_directions(layers, t=1)
    assert D.shape == (2, 12)
    with pytest.raises(ValueError, match="t"):
        extra_fiber_directions(layers, t=0)
    # with one token, one layer: the certificate is d(d+1)/2 + d d' - 1 = 6
    cert = certified_dimension_beyond_symmetries((2, 2), (2,), t=1)
    assert cert.certified and cert.rank == 6


@given(d0=st.integers(2, 5), data=st.data())
@settings(max_examples=12)
def test_formula_holds_under_the_hypotheses(d0, data):
    d1 = data.draw(st.integers(1, d0))
    d2 = data.draw(st.integers(1, 3))
    attn = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    _check_formula_against_certificate((d0, d1, d2), attn)


def _check_formula_against_certificate(widths, attn):
    cert = certified_dimension_beyond_symmetries(widths, attn)
    assert cert.certified
    formula = general_width_formula(widths, attn)
    if not failed_hypotheses(widths, attn):
        assert cert.rank == formula
    if cert.rank != formula:
        assert failed_hypotheses(widths, attn)


@pytest.mark.parametrize(
    ("widths", "attn"),
    [((5, 4, 1), (2, 1)), ((4, 4, 4), (3, 3)), ((5, 3, 2), (1, 2)), ((4, 2, 3), (2, 2))],
)
def test_formula_against_certificate_pinned_cases(widths, attn):
    _check_formula_against_certificate(widths, attn)


def test_float_dimension_options():
    r = float_dimension((3, 3, 3), (2, 2), 3, "exp", n_inputs=40, weight_scale=0.5)
    assert r.rank == expected_dimension((3, 3, 3), (2, 2), normalizer="exp") and r.n_inputs == 40
    r32 = float_dimension((3, 3, 3), (2, 2), 3, "exp", n_inputs=40, dtype="float32", strict=False)
    assert r32.dtype == "float32" and r32.singular_values.dtype == np.float64


@pytest.mark.parametrize(
    ("widths", "attn"),
    [
        ((3, 3, 3), (1, 1)),
        ((4, 4, 4, 4), (2, 1, 1)),
        ((5, 3, 3, 4), (2, 1, 1)),
        ((4, 4, 4), (3, 1)),
    ],
)
def test_attention_dimension_one_loses_nothing_when_no_later_layer_has_more(widths, attn):
    """𝔰𝔬(1) = 0: a collapse followed only by a_j = 1 layers obeys the formula (certified)."""
    assert not failed_hypotheses(widths, attn)
    cert = exact_dimension(widths, attn, beyond_symmetries=True)
    assert cert.certified and cert.rank == expected_dimension(widths, attn)
