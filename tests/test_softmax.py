"""Tests of normalized attention: the forward pass with normalizers, identifiability, Figure 3."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lsa_lib.dimension import expected_dimension, float_dimension
from lsa_lib.fibers import attention_value_parametrization, fiber_dimension
from lsa_lib.lightning import (
    NORMALIZERS,
    attention_layer,
    attention_matrix,
    deep_attention,
    random_layers,
)
from lsa_lib.rank import RankAmbiguityError
from lsa_lib.report import dimension_table, fmt
from lsa_lib.softmax import symmetry_defects
from lsa_lib.symmetries import network_parametrization

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 3, 4))
Q, K = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
V = RNG.standard_normal((2, 3))
A = attention_matrix(Q, K)


def normalized_attention(X, A, V, normalizer="exp"):
    """One normalized layer in (A, V) coordinates: Q = A, K = I."""
    return attention_layer(X, A, np.eye(np.shape(A)[0]), V, normalizer)


def rescaling_change(A, V, c, normalizer="exp", seed=0):
    return symmetry_defects([(A, np.eye(A.shape[0]), V)], normalizer=normalizer, c=c, seed=seed)[
        "scaling"
    ]


# ---------------------------------------------------------------- forward passes


def test_av_coordinates_are_the_layer_with_K_identity():
    np.testing.assert_allclose(
        normalized_attention(X, A, V), attention_layer(X, Q, K, V, "exp"), rtol=1e-12, atol=1e-12
    )
    layers = random_layers((3, 4, 2), (2, 3), rng=1)
    Y = X
    for Ql, Kl, Vl in layers:
        Y = attention_layer(Y, Ql, Kl, Vl, "taylor2")
    np.testing.assert_allclose(deep_attention(X, layers, "taylor2"), Y, rtol=1e-12)


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


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.sampled_from(sorted(NORMALIZERS)))
@example(0, "square")  # only non-negative: still weights that sum to one on generic inputs
def test_outputs_are_averages_of_values(seed, name):
    rng = np.random.default_rng(seed)
    Xs = rng.standard_normal((3, 4))
    Xs[0] = 1.0
    Y = normalized_attention(Xs, rng.standard_normal((3, 3)), np.eye(3), normalizer=name)
    np.testing.assert_allclose(Y[0], 1.0, rtol=1e-10)


def test_torch_in_torch_out():
    T = [torch.tensor(m) for m in (X, A, V)]
    Y = attention_layer(T[0], T[1], torch.eye(3, dtype=torch.float64), T[2], "taylor2")
    assert isinstance(Y, torch.Tensor) and Y.dtype == torch.float64
    np.testing.assert_allclose(Y.numpy(), normalized_attention(X, A, V, "taylor2"), rtol=1e-12)


def test_forward_bad_input():
    with pytest.raises(ValueError, match="normalizer must be one of"):
        normalized_attention(X, A, V, normalizer="relu")
    with pytest.raises(TypeError, match="normalizer must be None or one of"):
        normalized_attention(X, A, V, normalizer=np.exp)
    with pytest.raises(ValueError, match="non-finite"):
        normalized_attention(np.full((3, 2), np.nan), A, V)
    with pytest.raises(ValueError):
        deep_attention(X, random_layers((4, 2), (2,)), "exp")


# ---------------------------------------------------------------- parametrizations


def test_attention_value_parametrization():
    p = attention_value_parametrization(3, 2, t=4, normalizer="square_plus_one")
    assert p.shapes == ((3, 3), (2, 3)) and p.input_shape == (3, 4)
    assert p.n_params == 15 and not p.polynomial
    np.testing.assert_allclose(
        p.forward([A, V], X), normalized_attention(X, A, V, "square_plus_one"), rtol=1e-12
    )


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_deep_parametrization_matches_network(name):
    widths, attn = (3, 4, 2), (2, 3)
    layers = random_layers(widths, attn, rng=2)
    p = network_parametrization(widths, attn, t=4, normalizer=name)
    assert p.n_params == 2 * 2 * 3 + 4 * 3 + 2 * 3 * 4 + 2 * 4 and not p.polynomial
    params = [torch.tensor(m) for layer in layers for m in layer]
    got = p.forward(params, torch.tensor(X))
    np.testing.assert_allclose(
        np.asarray(got), deep_attention(X, layers, name), rtol=1e-10, atol=1e-12
    )


def test_parametrization_bad_input():
    with pytest.raises(ValueError, match="t"):
        attention_value_parametrization(3, 2, t=0, normalizer="exp")
    with pytest.raises(ValueError, match="d_out"):
        attention_value_parametrization(3, 0, normalizer="exp")
    with pytest.raises(ValueError, match="attn"):
        network_parametrization((3, 3, 3), (2,), normalizer="exp")
    with pytest.raises(ValueError, match="normalizer must be one of"):
        network_parametrization((3, 3), (2,), normalizer="tanh")


# ---------------------------------------------------------------- one layer


def test_one_softmax_layer_has_zero_dimensional_fibers():
    rng = np.random.default_rng(0)
    for d, d_out in [(2, 1), (2, 2), (3, 2)]:
        f = fiber_dimension(
            rng.standard_normal((d, d)), rng.standard_normal((d_out, d)), normalizer="exp"
        )
        assert f.nullity == 0 and f.rank == f.n_params == d * d + d * d_out
        assert f.gap >= 1e6


def test_fibers_when_the_theorem_does_not_apply():
    rng = np.random.default_rng(1)
    A3, V3 = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    # one token: the single weight is 1, A is invisible
    assert fiber_dimension(A3, V3, t=1, normalizer="exp").nullity == 9
    # homogeneous normalizer: A -> cA is a symmetry
    assert fiber_dimension(A3, V3, normalizer="square").nullity == 1


def test_rescaling_changes_softmax_but_not_lightning():
    assert rescaling_change(A, V, 2.0) > 1e-2
    assert rescaling_change(A, V, -1.0, normalizer="taylor2") > 1e-2
    assert rescaling_change(A, V, 3.0, normalizer=None) < 1e-12
    # x² is homogeneous: only V / c acts, so the output is divided by c exactly
    assert rescaling_change(A, V, 4.0, normalizer="square") == pytest.approx(0.75)


@pytest.mark.parametrize("c", [0, 0.0, np.inf, "2", True, None])
def test_rescaling_bad_c(c):
    with pytest.raises(ValueError, match="c must be"):
        rescaling_change(A, V, c)


def test_single_layer_bad_input():
    with pytest.raises(ValueError, match="square"):
        fiber_dimension(np.ones((2, 3)), np.ones((2, 2)), normalizer="exp")
    with pytest.raises(ValueError, match="vanishes"):
        rescaling_change(A, np.zeros((2, 3)), 2.0)


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


def figure3(deltas, **kw):
    archs = [((d,) * 3, (2, 2)) for d in deltas]
    return dimension_table(
        archs,
        kw.pop("t", 3),
        kw.pop("normalizer", "exp"),
        methods=("float",),
        **{"n_inputs": 250, **kw},
    )


def test_figure3_expected_is_eq16():
    tab = figure3(range(3, 11), n_inputs=1)
    assert tab["expected"] == [25, 40, 57, 76, 97, 120, 145, 172]


def test_figure3_small():
    tab = figure3([3, 4])
    assert tab["P"] == [42, 64] and [r.rank for r in tab["float"]] == tab["expected"] == [25, 40]
    assert all(r.trusted and r.gap >= 1e6 and r.n_inputs == 250 for r in tab["float"])


def test_figure3_other_normalizer_and_t1():
    assert float_dimension((3, 3, 3), (2, 2), 3, "square_plus_one", n_inputs=250).rank == 25
    # homogeneous: the scaling symmetry is back
    assert float_dimension((3, 3, 3), (2, 2), 3, "square", n_inputs=250).rank == 25 - 2
    # one token: the network is X -> V_2 V_1 X
    assert float_dimension((3, 3, 3), (2, 2), 1, "exp", n_inputs=250).rank == 9
    assert figure3([3], t=1)["expected"] == [None]  # the formula needs t ≥ 2


def test_too_few_inputs_underestimate():
    r = float_dimension((3, 3, 3), (2, 2), 3, "exp", n_inputs=1)
    assert r.rank == 9 < expected_dimension((3, 3, 3), (2, 2), normalizer="exp")  # 1 · 3 · 3 rows


def test_float32_is_not_trusted_where_float64_is():
    r = float_dimension((8, 8, 8), (2, 2), 3, "exp", n_inputs=250, dtype=np.float32, strict=False)
    assert not r.trusted and r.dtype == "float32"
    assert float_dimension((8, 8, 8), (2, 2), 3, "exp", n_inputs=250).trusted
    with pytest.raises(RankAmbiguityError):
        float_dimension((8, 8, 8), (2, 2), 3, "exp", n_inputs=250, dtype=torch.float32)


def test_float32_at_delta_10_misses_the_smallest_genuine_singular_value():
    # the chapter's claim: float64 reads 172 with a clear gap; in float32 the drop after the
    # 172nd singular value is only 10 to 1000, the smallest genuine value (about 1e-4 s_1) is
    # below the fixed float32 tolerance, and the usual threshold count is not 172
    r64 = float_dimension((10, 10, 10), (2, 2), 3, "exp", n_inputs=250)
    r32 = float_dimension(
        (10, 10, 10), (2, 2), 3, "exp", n_inputs=250, dtype="float32", strict=False
    )
    assert r64.rank == 172 and r64.gap >= 1e6
    s64, s32 = r64.singular_values, r32.singular_values
    assert 1e1 < s32[171] / s32[172] < 1e3 and not r32.trusted
    assert s64[171] / s64[0] < 250 * 10 * 3 * np.finfo(np.float32).eps
    assert r32.threshold_rank != 172


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"dtype": np.float16}, ValueError),
        ({"n_inputs": 0}, ValueError),
        ({"t": 0}, ValueError),
        ({"normalizer": "softplus"}, ValueError),
        ({"strict": 1}, TypeError),
        ({"weight_scale": 0}, ValueError),
        ({"weight_scale": np.nan}, ValueError),
    ],
)
def test_float_dimension_bad_input(kwargs, error):
    args = {"normalizer": "exp", "n_inputs": 10, **kwargs}
    with pytest.raises(error):
        float_dimension((3, 3, 3), (2, 2), **args)


def test_gap_order():
    assert (
        fmt(3.2e8, "order") == "1e+08"
        and fmt(1.0, "order") == "1e+00"
        and fmt(0.5, "order") == "1e-01"
    )
    for bad in (0, -1.0, np.nan, "1e8", True):
        with pytest.raises(ValueError):
            fmt(bad, "order")


@settings(max_examples=25)
@given(st.floats(0.05, 20.0), st.integers(0, 10_000))
@example(1.0, 0)  # the identity: nothing changes
def test_homogeneous_normalizer_only_sees_the_value_factor(c, seed):
    # S = x² is homogeneous: (cA, V/c) changes the output exactly by the factor 1/c
    rng = np.random.default_rng(seed)
    A2, V2 = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    got = rescaling_change(A2, V2, c, normalizer="square", seed=seed)
    assert got == pytest.approx(abs(1 / c - 1), rel=1e-8, abs=1e-12)
