"""Tests of lsa_lib.softmax: normalized attention, identifiability checks, Figure 3 data."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib import random_layers
from lsa_lib.lightning import attention_matrix, deep_attention, softmax_attention
from lsa_lib.rank import RankAmbiguityError
from lsa_lib.softmax import (
    NORMALIZERS,
    SoftmaxEstimate,
    attention_value_normalized_parametrization,
    figure3_data,
    format_estimates,
    gap_order,
    normalized_attention,
    normalized_network,
    normalized_parametrization,
    rescaling_changes_function,
    softmax_dimension_estimate,
    softmax_fiber_dimension,
    symmetry_defects,
)

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 3, 4))
Q, K = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
V = RNG.standard_normal((2, 3))
A = attention_matrix(Q, K)


# ---------------------------------------------------------------- forward passes


def test_exp_is_the_softmax_layer_of_the_lightning_module():
    np.testing.assert_allclose(
        normalized_attention(X, A, V), softmax_attention(X, Q, K, V), rtol=1e-12, atol=1e-12
    )


def test_normalized_network_with_exp_is_deep_attention_normalized():
    layers = random_layers((3, 4, 2), (2, 3), rng=1)
    np.testing.assert_allclose(
        normalized_network(X, layers), deep_attention(X, layers, normalized=True), rtol=1e-12
    )


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_weights_sum_to_one(name):
    # With V = I and a constant first row in X, the output's first row is the weights' sums.
    Xc = X.copy()
    Xc[:, 0, :] = 1.0
    Y = normalized_attention(Xc, A, np.eye(3), normalizer=name)
    np.testing.assert_allclose(Y[:, 0, :], 1.0, rtol=1e-12)


def test_the_normalizers_are_what_they_say():
    s = np.linspace(-3, 3, 13)
    assert np.allclose(NORMALIZERS["square_plus_one"].function(s), s**2 + 1)
    assert np.allclose(NORMALIZERS["taylor2"].function(s), 1 + s + s**2 / 2)
    for S in NORMALIZERS.values():
        values = S.function(s)
        assert (values > 0).all() == S.positive
        if S.homogeneous_degree is not None:
            k = S.homogeneous_degree
            assert np.allclose(S.function(3.0 * s), 3.0**k * values)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(sorted(NORMALIZERS)))
def test_outputs_are_averages_of_values(seed, name):
    rng = np.random.default_rng(seed)
    Xs = rng.standard_normal((3, 4))
    Xs[0] = 1.0
    Y = normalized_attention(Xs, rng.standard_normal((3, 3)), np.eye(3), normalizer=name)
    np.testing.assert_allclose(Y[0], 1.0, rtol=1e-10)


def test_torch_in_torch_out():
    Y = normalized_attention(torch.tensor(X), torch.tensor(A), torch.tensor(V), "taylor2")
    assert isinstance(Y, torch.Tensor) and Y.dtype == torch.float64
    np.testing.assert_allclose(Y.numpy(), normalized_attention(X, A, V, "taylor2"), rtol=1e-12)


def test_forward_bad_input():
    with pytest.raises(ValueError, match="A must have shape"):
        normalized_attention(X, np.ones((2, 2)), V)
    with pytest.raises(ValueError, match="V must have shape"):
        normalized_attention(X, A, np.ones((2, 2)))
    with pytest.raises(ValueError, match="unknown normalizer"):
        normalized_attention(X, A, V, normalizer="relu")
    with pytest.raises(TypeError, match="normalizer must be one of"):
        normalized_attention(X, A, V, normalizer=np.exp)
    with pytest.raises(ValueError, match="non-finite"):
        normalized_attention(np.full((3, 2), np.nan), A, V)
    with pytest.raises(ValueError):
        normalized_network(X, random_layers((4, 2), (2,)))


# ---------------------------------------------------------------- parametrizations


def test_attention_value_parametrization():
    p = attention_value_normalized_parametrization(3, 2, t=4, normalizer="square_plus_one")
    assert p.shapes == ((3, 3), (2, 3)) and p.input_shape == (3, 4)
    assert p.n_params == 15 and not p.polynomial
    np.testing.assert_allclose(
        p.forward([A, V], X), normalized_attention(X, A, V, "square_plus_one"), rtol=1e-12
    )


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_deep_parametrization_matches_network(name):
    widths, attn = (3, 4, 2), (2, 3)
    layers = random_layers(widths, attn, rng=2)
    p = normalized_parametrization(widths, attn, t=4, normalizer=name)
    assert p.n_params == 2 * 2 * 3 + 4 * 3 + 2 * 3 * 4 + 2 * 4 and not p.polynomial
    params = [torch.tensor(m) for layer in layers for m in layer]
    got = p.forward(params, torch.tensor(X))
    np.testing.assert_allclose(
        np.asarray(got), normalized_network(X, layers, normalizer=name), rtol=1e-10, atol=1e-12
    )


def test_parametrization_bad_input():
    with pytest.raises(ValueError, match="t"):
        attention_value_normalized_parametrization(3, 2, t=0)
    with pytest.raises(ValueError, match="d_out"):
        attention_value_normalized_parametrization(3, 0)
    with pytest.raises(ValueError, match="attn"):
        normalized_parametrization((3, 3, 3), (2,))
    with pytest.raises(ValueError, match="unknown normalizer"):
        normalized_parametrization((3, 3), (2,), normalizer="tanh")


# ---------------------------------------------------------------- one layer


def test_one_softmax_layer_has_zero_dimensional_fibers():
    rng = np.random.default_rng(0)
    for d, d_out in [(2, 1), (2, 2), (3, 2)]:
        f = softmax_fiber_dimension(rng.standard_normal((d, d)), rng.standard_normal((d_out, d)))
        assert f.fiber_dimension == 0 and f.rank == f.n_params == d * d + d * d_out
        assert f.gap >= 1e6


def test_fibers_when_the_theorem_does_not_apply():
    rng = np.random.default_rng(1)
    A3, V3 = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    # one token: the single weight is 1, A is invisible
    assert softmax_fiber_dimension(A3, V3, t=1).fiber_dimension == 9
    # homogeneous normalizer: A -> cA is a symmetry
    assert softmax_fiber_dimension(A3, V3, normalizer="square").fiber_dimension == 1


def test_rescaling_changes_softmax_but_not_lightning():
    assert rescaling_changes_function(A, V, 2.0) > 1e-2
    assert rescaling_changes_function(A, V, -1.0, normalizer="taylor2") > 1e-2
    assert rescaling_changes_function(A, V, 3.0, normalizer=None) < 1e-12
    # x² is homogeneous: only V / c acts, so the output is divided by c exactly
    assert rescaling_changes_function(A, V, 4.0, normalizer="square") == pytest.approx(0.75)


@pytest.mark.parametrize("c", [0, 0.0, np.inf, "2", True, None])
def test_rescaling_bad_c(c):
    with pytest.raises(ValueError, match="c must be"):
        rescaling_changes_function(A, V, c)


def test_single_layer_bad_input():
    with pytest.raises(ValueError, match="square"):
        softmax_fiber_dimension(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="V must have shape"):
        rescaling_changes_function(A, np.ones((2, 2)), 2.0)
    with pytest.raises(ValueError, match="vanishes"):
        rescaling_changes_function(A, np.zeros((2, 3)), 2.0)


def test_symmetry_defects():
    layers = random_layers((3, 3, 3), (2, 2), rng=3)
    light = symmetry_defects(layers, normalizer=None)
    assert max(light["scaling"], light["attention basis"], light["between layers"]) < 1e-12
    for name in ("exp", "square_plus_one", "taylor2"):
        soft = symmetry_defects(layers, normalizer=name)
        assert soft["scaling"] > 1e-2 and soft["scaling A only"] > 1e-2
        assert soft["attention basis"] < 1e-12 and soft["between layers"] < 1e-12
    assert symmetry_defects(layers, normalizer="square")["scaling A only"] < 1e-12
    assert "between layers" not in symmetry_defects(layers[:1])
    with pytest.raises(ValueError):
        symmetry_defects([])


# ---------------------------------------------------------------- deep: Eq. 16, Figure 3


def test_figure3_expected_is_eq16():
    rows = figure3_data(range(3, 11), n_inputs=1, strict=False)
    assert [r.expected for r in rows] == [25, 40, 57, 76, 97, 120, 145, 172]


def test_figure3_small():
    rows = figure3_data([3, 4])
    assert [(r.delta, r.n_params, r.rank, r.expected) for r in rows] == [
        (3, 42, 25, 25),
        (4, 64, 40, 40),
    ]
    assert all(r.trusted and r.agrees and r.gap >= 1e6 for r in rows)
    assert all(isinstance(r, SoftmaxEstimate) and r.seconds > 0 for r in rows)


def test_figure3_other_normalizer_and_t1():
    (row,) = figure3_data([3], normalizer="square_plus_one")
    assert row.rank == 25 and row.normalizer == "square_plus_one"
    (row,) = figure3_data([3], normalizer="square")
    assert row.rank == 25 - 2  # homogeneous: the scaling symmetry is back
    (row,) = figure3_data([3], t=1)
    assert row.rank == 9  # one token: the network is X -> V_2 V_1 X


def test_too_few_inputs_underestimate():
    (row,) = figure3_data([3], n_inputs=1)
    assert row.rank == 9 < row.expected  # capped by the 1 * 3 * 3 rows


def test_float32_is_not_trusted_where_float64_is():
    (row,) = figure3_data([8], dtype=np.float32, strict=False)
    assert not row.trusted and row.dtype == "float32"
    with pytest.raises(RankAmbiguityError):
        figure3_data([8], dtype=torch.float32)


def test_general_estimate_and_table():
    est = softmax_dimension_estimate((4, 3, 3), (2, 2), n_inputs=60, expected=None)
    assert est.trusted and est.expected is None and not est.agrees
    text = format_estimates([est], seconds=True)
    assert "(4, 3, 3)" in text and "s/point" in text.splitlines()[0]
    with pytest.raises(TypeError, match="SoftmaxEstimate"):
        format_estimates([1])


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"deltas": []}, ValueError),
        ({"deltas": "345"}, ValueError),
        ({"deltas": [3], "depth": 0}, ValueError),
        ({"deltas": [3], "attn": (2, 2, 2)}, ValueError),
        ({"deltas": [3], "attn": "2"}, ValueError),
        ({"deltas": [3], "dtype": np.float16}, ValueError),
        ({"deltas": [3], "n_inputs": 0}, ValueError),
        ({"deltas": [3], "t": 0}, ValueError),
        ({"deltas": [3], "normalizer": "softplus"}, ValueError),
        ({"deltas": [3], "strict": 1}, TypeError),
        ({"deltas": [2], "attn": 3}, ValueError),
        ({"deltas": [3], "weight_scale": 0}, ValueError),
        ({"deltas": [3], "weight_scale": np.nan}, ValueError),
    ],
)
def test_figure3_bad_input(kwargs, error):
    with pytest.raises(error):
        figure3_data(**kwargs)


def test_gap_order():
    assert gap_order(3.2e8) == "1e+08" and gap_order(1.0) == "1e+00" and gap_order(0.5) == "1e-01"
    assert gap_order(np.inf) == "inf"
    for bad in (0, -1.0, np.nan, "1e8", True):
        with pytest.raises(ValueError, match="gap must be"):
            gap_order(bad)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 20.0), st.integers(0, 10_000))
def test_homogeneous_normalizer_only_sees_the_value_factor(c, seed):
    # S = x² is homogeneous: (cA, V/c) changes the output exactly by the factor 1/c
    rng = np.random.default_rng(seed)
    A2, V2 = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    got = rescaling_changes_function(A2, V2, c, normalizer="square", seed=seed)
    assert got == pytest.approx(abs(1 / c - 1), rel=1e-8, abs=1e-12)
