"""Tests of lsa_lib.fibers: same functions, swaps, rescalings, fiber dimensions."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lsa_lib.fibers import (
    _SAME_RTOL,
    FiberCertificate,
    FiberReading,
    FunctionComparison,
    _rank_one_factors,
    attention_value_parametrization,
    fiber_dimension,
    rescaling_factor,
    same_function,
    swap,
)
from lsa_lib.lightning import random_layers
from lsa_lib.rank import ExactRank, FloatRank, RankAmbiguityError, exact_rank, float_rank
from lsa_lib.symmetries import network_parametrization
from lsa_lib.tolerances import GAP_MIN


def scaling_fiber(A, V, c):
    return c * np.asarray(A), np.asarray(V) / c


def rank_one_factors(M, name="M", min_gap=GAP_MIN):
    return _rank_one_factors(M, name, min_gap)


RNG = np.random.default_rng(12345)


def _pair(d=3, d_out=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d, d)), rng.standard_normal((d_out, d))


def _rank_one_integer():
    b, c = np.array([1, 2, 0]), np.array([0, 1, -1])
    v, w = np.array([1, -1]), np.array([2, 0, 1])
    return np.outer(b, c), np.outer(v, w), (b, c, v, w)


# ------------------------------------------------------------------------------------------
# same_function
# ------------------------------------------------------------------------------------------


def test_same_function_numeric_scaling_and_perturbation():
    A, V = _pair()
    res = same_function((A, V), (2.5 * A, V / 2.5))
    assert isinstance(res, FunctionComparison)
    assert res and res.same and res.method == "float"
    assert res.rel_diff < 1e-14 and res.rtol == _SAME_RTOL == 1e-9 and res.n_inputs == 16
    off = same_function((A, V), (A + 1e-3, V))
    assert not off and 1e-5 < off.rel_diff < 1e-1


def test_same_function_qkv_equals_av():
    ((Q, K, V),) = random_layers((3, 2), (2,), rng=1)
    assert same_function((Q, K, V), (K.T @ Q, V))
    G = np.array([[2.0, 1.0], [0.5, -1.0]])
    assert same_function((Q, K, V), (G @ Q, np.linalg.inv(G).T @ K, V))
    assert not same_function((Q, K, V), (Q, K, 2 * V))


def test_same_function_t1_sees_only_symmetric_part():
    A, V = _pair(seed=3)
    S = np.array([[0.0, 1.0, -2.0], [-1.0, 0.0, 0.5], [2.0, -0.5, 0.0]])
    assert same_function((A, V), (A + S, V), t=1)
    assert not same_function((A, V), (A + S, V), t=2)
    assert same_function((A, V), (A.T, V), t=1)
    assert not same_function((A, V), (A.T, V), t=2)


def test_same_function_symbolic_exact():
    A, V, _ = _rank_one_integer()
    res = same_function((A, V), (2 * A, sympy.Matrix(V) / 2), method="exact")
    assert res.same and res.rel_diff == 0.0 and res.rtol is None and res.n_inputs is None
    # an exact difference of 1/1000 in one entry is found
    B = sympy.Matrix(A)
    B[0, 0] += sympy.Rational(1, 1000)
    res = same_function((A, V), (B, V), method="exact", t=2)
    assert not res.same and res.rel_diff > 0
    # fractions and floats (exact binary values) are accepted
    Af = np.array([[Fraction(1, 2), 0], [0, 1]], dtype=object)
    assert same_function((Af, np.eye(2)), (np.diag([0.5, 1.0]), np.eye(2)), method="exact")
    assert not same_function(
        (np.array([[0.1 * 3]]), [[1]]), (np.array([[0.3]]), [[1]]), method="exact"
    )


def test_same_function_symbolic_t1():
    S = [[0, 1], [-1, 0]]
    assert same_function(
        ([[1, 0], [0, 2]], [[1, 1]]), ([[1, 1], [-1, 2]], [[1, 1]]), method="exact", t=1
    )
    assert not same_function(
        ([[1, 0], [0, 2]], [[1, 1]]),
        (np.add([[1, 0], [0, 2]], S), [[1, 1]]),
        method="exact",
        t=2,
    )


def test_same_function_relative_to_uncancelled_size():
    # skew A at t = 1: the function is zero up to round-off, and compares equal to zero
    rng = np.random.default_rng(4)
    S = rng.standard_normal((4, 4))
    S = S - S.T
    V = rng.standard_normal((2, 4))
    zero = (np.zeros((4, 4)), np.zeros((2, 4)))
    res = same_function((S, V), zero, t=1)
    assert res and res.rel_diff < 1e-14
    assert not same_function((S, V), zero, t=2)
    # the same through (Q, K, V) with K^T Q skew
    Q, K = np.eye(4)[:2], np.array([[0.0, 1, 0, 0], [-1, 0, 0, 0]])
    assert np.allclose(K.T @ Q + Q.T @ K, 0)
    assert same_function((Q, K, V), zero, t=1)
    assert not same_function((Q, K, V), zero, t=2)


def test_same_function_zero_layers():
    A, V = _pair()
    assert same_function((np.zeros_like(A), V), (A, np.zeros_like(V)))
    res = same_function((np.zeros_like(A), V), (A, np.zeros_like(V)), method="exact", t=2)
    assert res.same and res.rel_diff == 0.0


@pytest.mark.parametrize(
    "layer_b, error",
    [
        ((np.eye(2), np.ones((2, 2))), ValueError),  # different d
        ((np.eye(3), np.ones((3, 3))), ValueError),  # different d_out
        ((np.ones((3, 2)), np.ones((2, 3))), ValueError),  # A not square
        ((np.eye(3), np.ones((2, 4))), ValueError),  # V with wrong columns
        ((np.ones((2, 3)), np.ones((1, 3)), np.ones((2, 3))), ValueError),  # Q, K mismatch
        ((np.eye(3),), TypeError),  # neither (A, V) nor (Q, K, V)
        ("layer", TypeError),
        ((np.eye(3), "V"), TypeError),
        ((np.eye(3), np.full((2, 3), np.nan)), ValueError),
    ],
)
def test_same_function_bad_layers(layer_b, error):
    A, V = _pair()
    with pytest.raises(error):
        same_function((A, V), layer_b)


def test_same_function_bad_options():
    A, V = _pair()
    with pytest.raises(ValueError, match="method"):
        same_function((A, V), (A, V), method="symbolic")
    with pytest.raises(ValueError, match="t "):
        same_function((A, V), (A, V), t=0)
    with pytest.raises(ValueError, match="n_inputs"):
        same_function((A, V), (A, V), n_inputs=0)
    with pytest.raises(ValueError, match="rtol"):
        same_function((A, V), (A, V), rtol=-1.0)
    with pytest.raises(ValueError, match="exact comparison handles"):
        same_function((np.eye(7), np.eye(7)), (np.eye(7), np.eye(7)), method="exact", t=6)
    with pytest.raises(TypeError):
        same_function((sympy.Matrix([[sympy.Symbol("s")]]), [[1]]), ([[1]], [[1]]), method="exact")


@settings(max_examples=25)
@given(
    d=st.integers(1, 4),
    d_out=st.integers(1, 3),
    c=st.floats(0.1, 10.0) | st.floats(-10.0, -0.1),
    seed=st.integers(0, 10_000),
)
def test_scaling_keeps_function_property(d, d_out, c, seed):
    A, V = _pair(d, d_out, seed)
    assert same_function((A, V), scaling_fiber(A, V, c), t=2)


# ------------------------------------------------------------------------------------------
# rank_one_factors and swap
# ------------------------------------------------------------------------------------------


def test_rank_one_factors_exact_integer():
    A, V, (b, c, v, w) = _rank_one_integer()
    u, z = rank_one_factors(A)
    assert u * z.T == sympy.Matrix(A)
    assert all(x.is_Integer for x in (*u, *z))
    assert list(u) == list(b) and list(z) == list(c)
    u, z = rank_one_factors(-3 * A)  # sign and content go to z
    assert list(u) == list(b) and u * z.T == sympy.Matrix(-3 * A)


def test_rank_one_factors_fraction_and_float():
    M = np.array([[Fraction(1, 2), Fraction(1, 3)], [Fraction(1, 4), Fraction(1, 6)]], dtype=object)
    u, z = rank_one_factors(M)
    assert u * z.T == sympy.Matrix(M)
    F = np.outer([1.0, -2.0, 0.5], [3.0, 1.0])
    u, z = rank_one_factors(F)
    np.testing.assert_allclose(np.outer(u, z), F, atol=1e-13)
    assert np.isclose(np.linalg.norm(u), np.linalg.norm(z))


@pytest.mark.parametrize(
    "M, pattern",
    [
        (np.eye(2, dtype=int), "rank 1, but it has rank 2"),
        (np.zeros((2, 2), dtype=int), "rank 1, but it has rank 0"),
        (np.eye(2), "float rank is 2"),
    ],
)
def test_rank_one_factors_wrong_rank(M, pattern):
    with pytest.raises(ValueError, match=pattern):
        rank_one_factors(M)


def test_rank_one_factors_ambiguous_float_rank():
    M = np.diag(10.0 ** (-1.6 * np.arange(10)))  # drops of 40 only: no rank can be trusted
    with pytest.raises(RankAmbiguityError):
        rank_one_factors(M)


def test_swap_exact_integer_pair():
    A, V, (b, c, v, w) = _rank_one_integer()
    A2, V2 = swap(A, V)
    assert isinstance(A2, sympy.MatrixBase)
    assert A2 == sympy.Matrix(np.outer(w, c)) and V2 == sympy.Matrix(np.outer(v, b))
    assert same_function((A, V), (A2, V2), method="exact")
    assert rescaling_factor((A, V), (A2, V2)) is None
    # swapping twice comes back to the scaling line of (A, V)
    A3, V3 = swap(A2, V2)
    assert rescaling_factor((A, V), (A3, V3)) is not None


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 4), d_out=st.integers(1, 3))
def test_swap_float_property(seed, d, d_out):
    rng = np.random.default_rng(seed)
    b, c, w = (rng.standard_normal(d) for _ in range(3))
    v = rng.standard_normal(d_out)
    A, V = np.outer(b, c), np.outer(v, w)
    A2, V2 = swap(A, V)
    assert same_function((A, V), (A2, V2), t=2)
    assert rescaling_factor((A, V), (A2, V2)) is None  # b and w are not parallel


_small_int_vectors = st.lists(st.integers(-3, 3), min_size=3, max_size=3).filter(any)


@settings(max_examples=10)
@given(b=_small_int_vectors, c=_small_int_vectors, w=_small_int_vectors, v=_small_int_vectors)
def test_swap_exact_property(b, c, w, v):
    assume(any(v[:2]))
    A, V = np.outer(b, c), np.outer(v[:2], w)
    A2, V2 = swap(A, V)
    assert same_function((A, V), (A2, V2), method="exact", t=2)
    parallel = np.linalg.matrix_rank(np.array([b, w])) == 1
    assert (rescaling_factor((A, V), (A2, V2)) is not None) == parallel


def test_swap_parallel_factors_is_rescaling():
    b = np.array([1, 2, 0])
    A, V = np.outer(b, [0, 1, 1]), np.outer([1, 3], -2 * b)
    A2, V2 = swap(A, V)
    assert rescaling_factor((A, V), (A2, V2)) is not None


def test_swap_not_rank_one():
    A, V = _pair()
    _, V1, _ = _rank_one_integer()
    A1, _, _ = _rank_one_integer()
    with pytest.raises(ValueError, match="A must have rank 1"):
        swap(A, np.outer([1.0, 2.0], [1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="V must have rank 1"):
        swap(A1, np.ones((2, 3), dtype=int) + np.eye(2, 3, dtype=int))
    with pytest.raises(ValueError, match="rank 0"):
        swap(np.zeros((3, 3), dtype=int), V1)
    with pytest.raises(ValueError, match="square"):
        swap(np.ones((3, 2)), V1)
    with pytest.raises(ValueError, match="d_out, d"):
        swap(A1, np.ones((2, 2)))


# ------------------------------------------------------------------------------------------
# rescaling_factor
# ------------------------------------------------------------------------------------------


def test_rescaling_factor_float():
    A, V = _pair()
    c = rescaling_factor((A, V), scaling_fiber(A, V, -0.75))
    assert c == pytest.approx(-0.75)
    assert rescaling_factor((A, V), (A, 2 * V)) is None
    assert rescaling_factor((A, V), (2 * A, 2 * V)) is None
    assert rescaling_factor((A, V), (0 * A, V)) is None
    Z = np.zeros_like(A)
    assert rescaling_factor((Z, V), (Z, V / 4)) == pytest.approx(4.0)
    assert rescaling_factor((Z, 0 * V), (Z, 0 * V)) == 1.0
    assert rescaling_factor((Z, 0 * V), (Z, V)) is None


def test_rescaling_factor_exact():
    A, V, _ = _rank_one_integer()
    A2, V2 = sympy.Matrix(A) * sympy.Rational(2, 3), sympy.Matrix(V) / sympy.Rational(2, 3)
    assert rescaling_factor((A, V), (A2, V2)) == sympy.Rational(2, 3)
    assert rescaling_factor((A, V), (A, 2 * V)) is None
    Z = np.zeros((3, 3), dtype=int)
    assert rescaling_factor((Z, V), (Z, 3 * V)) == sympy.Rational(1, 3)
    assert rescaling_factor((Z, V), (A, V)) is None
    assert rescaling_factor((Z, 0 * V), (Z, 0 * V)) == 1


def test_rescaling_factor_bad_input():
    A, V = _pair()
    with pytest.raises(TypeError):
        rescaling_factor((A, V, V), (A, V))
    with pytest.raises(ValueError, match="different shapes"):
        rescaling_factor((A, V), (A, np.ones((3, 3))))
    with pytest.raises(ValueError, match="square"):
        rescaling_factor((np.ones((3, 2)), V), (A, V))


# ------------------------------------------------------------------------------------------
# fiber_dimension (uses the rank engine)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d, d_out, a", [(2, 2, 1), (2, 1, 2), (3, 2, 2), (3, 3, 3)])
def test_fiber_dimension_generic(d, d_out, a):
    ((Q, K, V),) = random_layers((d, d_out), (a,), rng=7)
    fa = fiber_dimension(K.T @ Q, V)
    assert isinstance(fa, FloatRank) and fa.n_params == d * d + d_out * d  # (A, V) coordinates
    assert fa.n_inputs == -(-2 * fa.n_params // (d_out * 3)) + 2  # twice the parameters
    assert fa.nullity == 1 and fa.gap > 1e4 and fa.rank == fa.n_params - 1
    fq = fiber_dimension(Q, K, V)
    assert fq.n_params == 2 * a * d + d_out * d  # (Q, K, V) coordinates
    assert fq.nullity == a * a + 1


def test_fiber_dimension_coordinate_conversions():
    ((Q, K, V),) = random_layers((3, 2), (2,), rng=3)
    assert fiber_dimension(Q, K, V, coordinates="AV").nullity == 1
    A = K.T @ Q  # rank 2
    assert fiber_dimension(A, V, coordinates="QKV", a=2).nullity == 5
    assert fiber_dimension(A, V, coordinates="QKV").n_params == 2 * 9 + 6  # a = d = 3
    with pytest.raises(ValueError, match="rank 2"):
        fiber_dimension(A, V, coordinates="QKV", a=1)
    with pytest.raises(ValueError, match="at most d"):
        fiber_dimension(A, V, coordinates="QKV", a=4)


def test_fiber_dimension_zero_fiber_and_t1():
    A, V = _pair(3, 2, seed=11)
    assert fiber_dimension(np.zeros_like(A), V).nullity == 3 * 2
    assert fiber_dimension(A, np.zeros_like(V)).nullity == 3 * 3
    assert fiber_dimension(A, V, t=1).nullity == 1 + 3
    assert fiber_dimension(A, V, t=2).nullity == 1


def test_fiber_dimension_exact():
    Q = np.array([[1, 0, 2, -1], [0, 1, 1, 1]])
    K = np.array([[2, 1, 0, 0], [-1, 0, 1, 3]])
    V = np.array([[1, 2, 0, 1], [0, -1, 1, 0], [1, 0, 0, 1]])
    fq = fiber_dimension(Q, K, V, method="exact")
    assert isinstance(fq, ExactRank) and fq.certified and fq.nullity == 2 * 2 + 1
    assert fiber_dimension(Q, K, V, coordinates="AV", method="exact").nullity == 1
    # the integer swap pair: both points certified to have a 1-dimensional kernel
    A, V, (b, c, v, w) = _rank_one_integer()
    assert fiber_dimension(A, V, method="exact").nullity == 1
    assert fiber_dimension(np.outer(w, c), np.outer(v, b), method="exact").nullity == 1
    # (A, V) in (Q, K, V) coordinates: the point (A, I, V)
    A2 = np.array([[1, 2], [0, 3]])
    assert fiber_dimension(A2, [[1, 1]], coordinates="QKV", method="exact").nullity == 5
    with pytest.raises(ValueError, match="a must be d"):
        fiber_dimension(A2, [[1, 1]], coordinates="QKV", a=1, method="exact")


def test_fiber_dimension_prints_the_fiber_dimension():
    ((Q, K, V),) = random_layers((3, 2), (2,), rng=0)
    reading = fiber_dimension(Q, K, V)
    assert isinstance(reading, FiberReading) and isinstance(reading, FloatRank)
    assert (reading.rank, reading.nullity) == (13, 5)  # P = 18: rank and kernel both kept
    assert str(reading) == f"{reading}" == "5"  # prints the fiber, not the rank
    untrusted = dataclasses.replace(reading, trusted=False)
    assert str(untrusted) == "5?" and untrusted.rank == 13
    # the same fields as the engine's reading, nothing lost
    plain = float_rank(network_parametrization((3, 2), (2,)), [Q, K, V], n_inputs=reading.n_inputs)
    assert plain.rank == reading.rank and str(plain) == "13"
    assert np.allclose(plain.singular_values, reading.singular_values)
    A, V, _ = _rank_one_integer()
    cert = fiber_dimension(A, V, method="exact")
    assert isinstance(cert, FiberCertificate) and isinstance(cert, ExactRank)
    assert str(cert) == "1" and cert.rank == 14 and cert.nullity == 1 and cert.certified
    apart = FiberCertificate(lower=10, upper=14, n_params=15, prime=cert.prime)
    assert str(apart) == "1..5" and not apart.certified


def test_fiber_dimension_exact_refuses():
    A, V, _ = _rank_one_integer()
    # at A = 0 the kernel (dimension d'd) is larger than the scaling: no certificate
    with pytest.raises(ValueError, match="do not meet"):
        fiber_dimension(np.zeros((3, 3), dtype=int), V, method="exact")
    with pytest.raises(TypeError, match="integer"):
        fiber_dimension(A.astype(float), V, method="exact")
    half = np.array([[Fraction(1, 2), 0], [0, 1]], dtype=object)
    with pytest.raises(ValueError, match="integer entries"):
        fiber_dimension(half, [[1, 1]], method="exact")
    with pytest.raises(ValueError, match="method"):
        fiber_dimension(A, V, method="symbolic")
    with pytest.raises(ValueError, match="polynomial"):
        fiber_dimension(A, V, method="exact", normalizer="exp")


def test_fiber_dimension_bad_input():
    A, V = _pair()
    with pytest.raises(TypeError):
        fiber_dimension(A)
    with pytest.raises(ValueError, match="coordinates"):
        fiber_dimension(A, V, coordinates="XY")
    with pytest.raises(ValueError, match="t "):
        fiber_dimension(A, V, t=0)
    with pytest.raises(ValueError, match="a is only"):
        fiber_dimension(A, V, a=2)
    with pytest.raises(ValueError, match="a must be"):
        fiber_dimension(A, V, coordinates="QKV", a=0)
    with pytest.raises(ValueError, match="a is read"):
        fiber_dimension(A[:2], A[:2], V, a=2)
    with pytest.raises(ValueError, match="same shape"):
        fiber_dimension(A[:2], A[:1], V)
    with pytest.raises(ValueError, match="d_out, d"):
        fiber_dimension(A, np.ones((2, 2)))


def test_same_function_scale_is_the_uncancelled_size():
    # the float comparison divides by max over the two layers of ‖|V| |X| |X|ᵀ |A| |X|‖
    # (Frobenius, over the same seeded inputs), with |A| = |K|ᵀ|Q| for a (Q, K, V) layer
    rng = np.random.default_rng(21)
    Q, K, V = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    A2, V2 = 0.2 * rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    X = np.random.default_rng(4).standard_normal((7, 3, 2))

    def layer(X, A, V):
        return V @ X @ X.transpose(0, 2, 1) @ A @ X

    aX = np.abs(X)
    scale = max(
        np.linalg.norm(layer(aX, np.abs(K).T @ np.abs(Q), np.abs(V))),
        np.linalg.norm(layer(aX, np.abs(A2), np.abs(V2))),
    )
    expected = np.linalg.norm(layer(X, K.T @ Q, V) - layer(X, A2, V2)) / scale
    res = same_function((Q, K, V), (A2, V2), t=2, n_inputs=7, seed=4)
    assert res.rel_diff == pytest.approx(expected, rel=1e-12)
    # the larger of the two layers sets the scale, whichever comes first
    res_b = same_function((A2, V2), (Q, K, V), t=2, n_inputs=7, seed=4)
    assert res_b.rel_diff == pytest.approx(expected, rel=1e-12)
    # |K|ᵀ|Q| is not |KᵀQ|: the (Q, K, V) form is measured with the uncancelled product
    alt = max(
        np.linalg.norm(layer(aX, np.abs(K.T @ Q), np.abs(V))),
        np.linalg.norm(layer(aX, np.abs(A2), np.abs(V2))),
    )
    assert not np.isclose(alt, scale, rtol=1e-6)


def test_same_function_tolerance_decides():
    A, V = _pair()
    B = A.copy()
    B[0, 0] += 1e-6
    res = same_function((A, V), (B, V))
    assert 1e-9 < res.rel_diff < 1e-5 and not res
    assert same_function((A, V), (B, V), rtol=1e-5)


def test_attention_value_parametrization():
    p = attention_value_parametrization(3, 2)
    assert p.shapes == ((3, 3), (2, 3)) and p.polynomial and p.generators is not None
    assert exact_rank(p).rank == 9 + 6 - 1
    soft = attention_value_parametrization(3, 2, normalizer="exp")
    assert not soft.polynomial and soft.generators is None
    with pytest.raises(ValueError):
        attention_value_parametrization(0, 2)


def test_fiber_dimension_of_normalized_layers():
    # softmax is generically one-to-one in (A, V); with one token A is invisible; the
    # homogeneous x² is invariant under A ↦ cA; in (Q, K, V) coordinates the fiber is GL_a
    rng = np.random.default_rng(3)
    A, V = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    assert fiber_dimension(A, V, normalizer="exp").nullity == 0
    assert fiber_dimension(A, V, t=1, normalizer="exp").nullity == A.size
    assert fiber_dimension(A, V, normalizer="square").nullity == 1
    ((Q, K, V2),) = random_layers((3, 2), (2,), rng=4)
    assert fiber_dimension(Q, K, V2, normalizer="exp").nullity == 2 * 2
