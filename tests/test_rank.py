"""Tests of the rank engine (lsa_lib.rank and its private helper lsa_lib._modp)."""

from __future__ import annotations

import flint
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsa_lib import _modp
from lsa_lib._core import flatten_layers, parameter_count, random_layers
from lsa_lib.rank import (
    DEFAULT_MIN_GAP,
    CertifiedDimension,
    NumericalDimension,
    Parametrization,
    RankAmbiguityError,
    _exact_jacobian,
    _generator_matrix,
    _orbit_rank,
    attention_value_parametrization,
    certified_dimension,
    certified_rank,
    float_jacobian,
    float_rank,
    lightning_parametrization,
    numerical_dimension,
    numerical_rank,
    read_rank,
)

P_PRIME = _modp.DEFAULT_PRIME


def single_layer_dimension(d: int, d_out: int, a: int) -> int:
    """The paper's single-layer formula, written out independently of lsa_lib.dimension."""
    return 2 * a * d + d * d_out - a * a - 1 if a <= d else d * d + d * d_out - 1


# ------------------------------------------------------------------------------------------
# float ranks: read_rank / float_rank
# ------------------------------------------------------------------------------------------
def test_read_rank_largest_gap() -> None:
    s = np.array([3.0, 2.0, 1.0, 1e-9, 1e-10])
    r = read_rank(s, (5, 5))
    assert r.rank == 3
    assert r.gap == pytest.approx(1e9)
    # the runner-up is the last value against the round-off floor s_1 · 5 · eps
    assert r.runner_up == pytest.approx(1e-10 / (3.0 * 5 * np.finfo(float).eps))


def test_read_rank_ambiguous_raises() -> None:
    s = np.logspace(0, -12, 13)  # every drop a factor 10, the last ~350 above round-off
    with pytest.raises(RankAmbiguityError) as info:
        read_rank(s, (13, 13))
    assert info.value.reading.gap < DEFAULT_MIN_GAP


def test_float_rank_of_known_matrix() -> None:
    rng = np.random.default_rng(0)
    M = rng.standard_normal((20, 3)) @ rng.standard_normal((3, 15))
    assert float_rank(M).rank == 3


# ------------------------------------------------------------------------------------------
# exact arithmetic mod p
# ------------------------------------------------------------------------------------------
def test_reduce_near_multiples_of_p() -> None:
    p = P_PRIME
    q = np.array([0, 1, 2**20, 2**32, 2**33 - 1], dtype=np.float64)
    x = np.concatenate([q * p + e for e in (-1.0, 0.0, 1.0, p - 1.0)])
    x = x[(x >= 0) & (x < 2**53)]
    expected = np.array([int(v) % p for v in x], dtype=np.float64)
    assert np.array_equal(_modp.reduce(x.copy(), p), expected)


def test_reduce_large_and_strided_arrays() -> None:
    p = P_PRIME
    rng = np.random.default_rng(2)
    q = rng.integers(0, 2**33, size=50_000)
    x = np.concatenate([q * p + e for e in (-1, 0, 1, p - 1)]).astype(np.float64)
    x = np.concatenate([x, -x[:1000]])
    expected = np.array([int(v) % p for v in x.astype(np.int64)], dtype=np.float64)
    assert np.array_equal(_modp.reduce(x.copy(), p), expected)
    y = np.stack([x, x])  # a strided (non-contiguous) view, reduced in place
    view = y[:, ::2]
    _modp.reduce(view, p)
    assert np.array_equal(y[0, ::2], expected[::2]) and np.array_equal(y[0, 1::2], x[1::2])


def test_mm_exact_with_long_inner_dimension() -> None:
    p = P_PRIME
    rng = np.random.default_rng(1)
    n = 3 * _modp.max_inner(p) + 5  # forces chunking
    A = rng.integers(p - 3, p, size=(2, n))
    B = rng.integers(p - 3, p, size=(n, 3))
    exact = (A.astype(object) @ B.astype(object)) % p
    got = _modp.mm(A.astype(np.float64), B.astype(np.float64), p)
    assert np.array_equal(got.astype(np.int64), exact.astype(np.int64))


@pytest.mark.parametrize("seed", range(6))
def test_rank_mod_p_agrees_with_flint(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 90, size=2))
    r = int(rng.integers(0, min(m, n) + 1))
    M = rng.integers(0, 7, size=(m, r)) @ rng.integers(0, 7, size=(r, n))
    if seed % 2:
        M[:, int(rng.integers(0, n))] = 0
        M[int(rng.integers(0, m))] = M[0] * 3
    expected = flint.nmod_mat(m, n, [int(v) for v in M.ravel()], P_PRIME).rank()
    assert _modp.rank_mod_p(M, P_PRIME) == expected


def test_rank_mod_p_sees_the_prime() -> None:
    # [[1, 1], [1, 1 + 7]] has rank 2 over Q but rank 1 mod 7
    M = np.array([[1, 1], [1, 8]])
    assert _modp.rank_mod_p(M, 7) == 1
    assert _modp.rank_mod_p(M, P_PRIME) == 2


def test_residues_of_exact_integers() -> None:
    big = np.array([[2**80, -3], [7, 0]], dtype=object)
    assert np.array_equal(_modp.as_residues(big, 7), np.array([[4.0, 4.0], [0.0, 0.0]]))
    assert np.array_equal(_modp.as_residues(np.array([-1, 8]), 7), np.array([6.0, 1.0]))
    with pytest.raises(ValueError):
        _modp.as_residues(np.array([0.5], dtype=object), 7)
    with pytest.raises(TypeError):
        _modp.as_residues(np.array(["a"]), 7)


def test_rank_mod_p_bad_input() -> None:
    with pytest.raises(ValueError):
        _modp.rank_mod_p(np.array([[0.5, 1.0]]), P_PRIME)
    with pytest.raises(ValueError):
        _modp.rank_mod_p(np.zeros((2, 2, 2), dtype=int), P_PRIME)
    with pytest.raises(ValueError):
        _modp._check_prime(2**20 + 7)
    with pytest.raises(ValueError):
        _modp._check_prime(1048575)  # not prime


def test_dual_numbers_match_the_integer_jacobian() -> None:
    """Tangents mod p equal the exact integer Jacobian (small integers: float64 is exact)."""
    param = lightning_parametrization((3, 2, 2), (2, 1), t=2)
    rng = np.random.default_rng(3)
    point = [rng.integers(-2, 3, size=s) for s in param.shapes]
    X = rng.integers(-2, 3, size=(2, 3, 2))
    J = float_jacobian(param, point, X)
    assert np.abs(J).max() < 2**50
    p = P_PRIME
    res = [_modp.as_residues(x, p) for x in point]
    got = _exact_jacobian(param, res, _modp.as_residues(X, p), None, p)
    assert np.array_equal(got, np.mod(np.round(J), p))


def test_dual_elementwise_and_subtraction() -> None:
    p = 101
    # value shape (1, 2), two tangent directions (last axis): the two unit vectors
    a = _modp.ModDual(np.array([[3.0, 4.0]]), np.eye(2)[None], p)
    y = a * a - 2 * a + np.array([[1, 1]])  # (a - 1)²: derivative 2(a - 1)
    assert np.array_equal(y.value, np.array([[4.0, 9.0]]))
    assert np.array_equal(y.tangent[..., 0], np.array([[4.0, 0.0]]))
    assert np.array_equal(y.tangent[..., 1], np.array([[0.0, 6.0]]))
    w = (a.mT @ a).reshape(4)  # the outer product, flattened
    assert np.array_equal(w.value, np.array([9.0, 12.0, 12.0, 16.0]))
    assert np.array_equal(w.tangent[:, 0], np.array([6.0, 4.0, 4.0, 0.0]))
    z = -a
    assert np.array_equal(z.value, np.array([[98.0, 97.0]]))
    with pytest.raises(TypeError):
        a * 0.5


# ------------------------------------------------------------------------------------------
# hand-computed dimensions
# ------------------------------------------------------------------------------------------
def test_single_layer_d2_a2_is_7() -> None:
    cert = certified_dimension((2, 2), (2,))
    assert isinstance(cert, CertifiedDimension)
    assert (cert.lower, cert.upper, cert.n_params) == (7, 7, 12)
    assert cert.exact and cert.dimension == 7
    num = numerical_dimension((2, 2), (2,))
    assert isinstance(num, NumericalDimension)
    assert num.rank == 7 and num.gap >= DEFAULT_MIN_GAP and num.n_params == 12


@pytest.mark.parametrize(
    "d, d_out, a, t",
    [(2, 1, 1, 2), (3, 2, 2, 2), (3, 3, 3, 3), (2, 3, 3, 2), (2, 2, 4, 3), (4, 2, 1, 3)],
)
def test_single_layer_formula(d: int, d_out: int, a: int, t: int) -> None:
    cert = certified_dimension((d, d_out), (a,), t=t)
    assert cert.exact and cert.dimension == single_layer_dimension(d, d_out, a)
    assert numerical_dimension((d, d_out), (a,), t=t).rank == cert.dimension


def test_attention_value_coordinates_give_the_same_dimension() -> None:
    param = attention_value_parametrization(3, 2)
    assert param.n_params == 9 + 6
    cert = certified_rank(param)
    assert cert.exact and cert.dimension == single_layer_dimension(3, 2, 3)
    assert numerical_rank(param).rank == cert.dimension


def test_deep_equal_widths_formula_lightning_and_softmax() -> None:
    # δ² + Σ a_i (2δ − a_i) − l for lightning, + l for softmax (δ = 4, l = 2, a = 2)
    expected = 16 + 2 * 2 * (8 - 2) - 2
    cert = certified_dimension((4, 4, 4), (2, 2))
    assert cert.exact and cert.dimension == expected
    assert numerical_dimension((4, 4, 4), (2, 2)).rank == expected
    assert numerical_dimension((4, 4, 4), (2, 2), normalized=True).rank == expected + 2


def test_inputs_are_added_until_the_rank_saturates() -> None:
    # one input's Jacobian block has rank far below its 3·8 outputs once a few inputs are
    # seen, so the first guess (rows ≈ 1.1 k) is not enough: both engines add inputs
    expected = 64 + 4 * 8 * (16 - 8) - 4  # δ² + Σ a_i (2δ − a_i) − l, δ = a_i = 8, l = 4
    cert = certified_dimension((8,) * 5, (8,) * 4)
    assert cert.exact and cert.dimension == expected
    assert cert.n_inputs * 8 * 3 > 2 * expected
    num = numerical_dimension((8, 8, 8), (8, 8))
    assert num.rank == 64 + 2 * 64 - 2 and num.gap >= DEFAULT_MIN_GAP
    soft = numerical_dimension((6, 6, 6), (2, 2), normalized=True)
    assert soft.rank == 36 + 2 * 2 * 10  # the conjectured softmax dimension, δ = 6


def test_bounds_that_do_not_meet_are_reported() -> None:
    # an a_i = 1 layer before later layers: the symmetries do not explain the whole fiber
    cert = certified_dimension((5, 3, 3, 4), (1, 2, 2))
    assert cert.lower == 36 and cert.upper == 40 and not cert.exact
    with pytest.raises(ValueError, match="do not meet"):
        _ = cert.dimension


def test_certified_rank_at_a_given_singular_point() -> None:
    # (A, V) = (0, I): the differential is δA ↦ V X Xᵀ δA X, of rank d² = 4
    param = attention_value_parametrization(2, 2)
    cert = certified_rank(param, [np.zeros((2, 2), dtype=int), np.eye(2, dtype=int)])
    assert cert.lower == 4
    assert cert.upper == 7  # only the scaling tangent (0, -V) is known to be in the kernel


def test_one_layer_and_deep_params_given() -> None:
    layers = random_layers((3, 3, 2), (2, 2), rng=5)
    param = lightning_parametrization((3, 3, 2), (2, 2))
    blocks = [m for layer in layers for m in layer]
    res = numerical_rank(param, blocks)
    assert res.rank == numerical_rank(param).rank
    ints = [np.round(3 * m).astype(int) for m in blocks]
    cert = certified_rank(param, ints)
    assert cert.lower <= cert.upper <= param.n_params
    assert np.array_equal(flatten_layers(layers).shape, (param.n_params,))


def test_torch_params_accepted() -> None:
    param = lightning_parametrization((2, 2), (1,))
    blocks = [torch.randn(s, dtype=torch.float64) for s in param.shapes]
    assert numerical_rank(param, blocks).rank == single_layer_dimension(2, 2, 1)


def test_float_jacobian_modes_agree() -> None:
    param = lightning_parametrization((3, 2), (2,), normalized=True)
    rng = np.random.default_rng(0)
    point = [rng.standard_normal(s) for s in param.shapes]
    X = rng.standard_normal((4, 3, 3))
    J1 = float_jacobian(param, point, X, mode="forward")
    J2 = float_jacobian(param, point, X, mode="reverse")
    assert J1.shape == (4 * 2 * 3, param.n_params)
    assert np.allclose(J1, J2, atol=1e-12)


# ------------------------------------------------------------------------------------------
# property tests
# ------------------------------------------------------------------------------------------
architectures = st.integers(1, 2).flatmap(
    lambda l: st.tuples(
        st.lists(st.integers(1, 4), min_size=l + 1, max_size=l + 1),
        st.lists(st.integers(1, 3), min_size=l, max_size=l),
        st.integers(2, 3),
    )
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arch=architectures, seed=st.integers(0, 5))
def test_bounds_are_consistent(arch: tuple, seed: int) -> None:
    widths, attn, t = arch
    cert = certified_dimension(widths, attn, t=t, seed=seed)
    assert 0 <= cert.lower <= cert.upper <= parameter_count(widths, attn)
    try:
        num = numerical_dimension(widths, attn, t=t, seed=seed)
    except RankAmbiguityError:
        return
    assert cert.lower <= num.rank <= cert.upper


# ------------------------------------------------------------------------------------------
# ambiguity and bad input
# ------------------------------------------------------------------------------------------
def test_numerical_rank_raises_when_no_gap_is_large_enough() -> None:
    with pytest.raises(RankAmbiguityError):
        numerical_dimension((2, 2), (2,), min_gap=1e30)


@pytest.mark.parametrize(
    "widths, attn",
    [((2, 2, 2), (2,)), ((2,), ()), ((0, 2), (1,)), ((2, 2), (0,)), ((2.5, 2), (1,)), ("22", (1,))],
)
def test_bad_architecture(widths: object, attn: object) -> None:
    with pytest.raises(ValueError):
        certified_dimension(widths, attn)
    with pytest.raises(ValueError):
        numerical_dimension(widths, attn)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        certified_dimension((2, 2), (1,), t=0)
    with pytest.raises(ValueError):
        numerical_dimension((2, 2), (1,), t=1.5)
    with pytest.raises(ValueError):
        numerical_dimension((2, 2), (1,), n_inputs=0)
    with pytest.raises(ValueError):
        numerical_dimension((2, 2), (1,), min_gap=1.0)
    with pytest.raises(ValueError):
        certified_dimension((2, 2), (1,), seed=-1)
    param = lightning_parametrization((2, 2), (1,))
    with pytest.raises(ValueError):
        certified_rank(param, prime=1048575)
    with pytest.raises(ValueError):
        certified_rank(param, [np.ones((1, 2)), np.ones((1, 2))])  # two blocks, not three
    with pytest.raises(ValueError):
        certified_rank(param, [np.ones((2, 1), dtype=int)] * 2 + [np.ones((2, 2), dtype=int)])
    with pytest.raises(ValueError):
        certified_rank(param, [np.full((1, 2), 0.5), np.ones((1, 2)), np.ones((2, 2))])
    with pytest.raises(ValueError):
        certified_rank(lightning_parametrization((2, 2), (1,), normalized=True))
    with pytest.raises(TypeError):
        numerical_rank("not a parametrization")
    with pytest.raises(TypeError):
        lightning_parametrization((2, 2), (1,), normalized="yes")


def test_parametrization_checks() -> None:
    def forward(params, X):
        return params[0] @ X

    param = Parametrization("linear", ((2, 2),), (2, 3), forward)
    assert param.n_params == 4
    assert numerical_rank(param).rank == 4
    cert = certified_rank(param)
    assert (cert.lower, cert.upper) == (4, 4)
    with pytest.raises(ValueError):
        Parametrization("bad", ((0, 2),), (2, 3), forward)
    with pytest.raises(ValueError):
        Parametrization("bad", ((2, 2),), (2, 0), forward)
    with pytest.raises(TypeError):
        Parametrization("bad", ((2, 2),), (2, 3), "not callable")


@pytest.mark.parametrize(
    "widths, attn",
    [((3, 2), (4,)), ((4, 4, 4), (2, 2)), ((2, 3, 2), (3, 1)), ((3, 3), (1,)), ((3, 1, 2), (2, 2))],
)
def test_orbit_rank_matches_the_dense_rank(widths: tuple, attn: tuple) -> None:
    param = lightning_parametrization(widths, attn)
    rng = np.random.default_rng(0)
    point = [rng.integers(0, P_PRIME, size=s).astype(np.float64) for s in param.shapes]
    G = _generator_matrix(param, point, P_PRIME)
    assert _orbit_rank(G, param.shapes, P_PRIME) == _modp.rank_mod_p(G, P_PRIME)
