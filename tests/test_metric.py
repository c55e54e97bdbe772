"""Tests of lsa_lib.metric: attention with a content-dependent metric."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.linalg import expm

from lsa_lib.lightning import attention_layer
from lsa_lib.metric import (
    affine_metric_parametrization,
    metric_attention,
    metric_parametrization,
    riemannian_attention,
    riemannian_parametrization,
)
from lsa_lib.rank import exact_rank, float_jacobian, float_rank

RNG = np.random.default_rng(20260602)


def _layer(a, d, d_out, rng=RNG):
    return tuple(rng.standard_normal(s) for s in ((a, d), (a, d), (d_out, d)))


def _close(A, B, tol=1e-9):
    A, B = np.asarray(A), np.asarray(B)
    return np.abs(A - B).max() <= tol * max(1.0, np.abs(B).max())


def test_metric_matches_definition():
    d, a, t = 3, 2, 4
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    mu = RNG.standard_normal(d)
    m = mu @ X
    S = np.outer(m, m) * ((K @ X).T @ (Q @ X))
    assert _close(metric_attention(X, Q, K, Vm, mu), (Vm @ X) @ S)
    assert _close(metric_attention(X, Q, K, Vm, mu[None, :]), (Vm @ X) @ S)


def test_metric_symmetries():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    mu = RNG.standard_normal(3)
    Y = metric_attention(X, Q, K, Vm, mu)
    s = -1.7  # the metric scaling (Q, μ) ↦ (s⁻² Q, s μ)
    assert _close(metric_attention(X, Q / s**2, K, Vm, s * mu), Y)
    assert not _close(metric_attention(X, Q, K, Vm, 2 * mu), Y, tol=1e-3)


@pytest.mark.parametrize(
    ("d", "d_out", "a", "expected"), [(3, 3, 2, 18), (2, 2, 1, 7), (3, 2, 4, 16)]
)
def test_certified_dimension_is_the_prediction(d, d_out, a, expected):
    param = metric_parametrization(d, d_out, a)
    r = min(a, d)
    assert param.predicted == param.n_params - (2 * a * d - r * (2 * d - r)) - 2 == expected
    c = exact_rank(param)
    assert c.certified and c.rank == expected


def test_generators_are_symmetries_float():
    rng = np.random.default_rng(3)
    par = metric_parametrization(2, 2, 1)
    params = [rng.integers(-3, 4, size=s) for s in par.shapes]
    J = float_jacobian(par, params, rng.standard_normal((4, *par.input_shape)))
    G = np.array(
        [
            np.concatenate([np.asarray(b, dtype=float).ravel() for b in g])
            for g in par.generators(params)
        ]
    )
    assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max() * np.abs(G).max()


def test_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    with pytest.raises(ValueError, match="mu"):
        metric_attention(X, Q, K, Vm, np.ones(4))
    with pytest.raises(ValueError, match="non-finite"):
        metric_attention(X, Q, K, Vm, np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="at least 2"):
        metric_parametrization(2, 2, 1, t=1)


# ------------------------------------------------------------------ the affine content weight


def test_affine_weight_matches_definition():
    d, a, t = 3, 2, 4
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    mu, c = RNG.standard_normal(d), 0.7
    m = mu @ X + c
    S = np.outer(m, m) * ((K @ X).T @ (Q @ X))
    assert _close(metric_attention(X, Q, K, Vm, mu, c), (Vm @ X) @ S)
    assert _close(metric_attention(X, Q, K, Vm, mu, 0), metric_attention(X, Q, K, Vm, mu))
    tX, tQ, tK, tV, tmu = (torch.tensor(M) for M in (X, Q, K, Vm, mu))
    out = metric_attention(tX, tQ, tK, tV, tmu, c)
    assert isinstance(out, torch.Tensor) and _close(out.numpy(), (Vm @ X) @ S)


def test_affine_parametrization_forward_is_the_layer():
    par = affine_metric_parametrization(3, 2, 2, t=4)
    rng = np.random.default_rng(8)
    Q, K, Vm, mu, c = (rng.standard_normal(s) for s in par.shapes)
    X = rng.standard_normal((5, 3, 4))
    Y = par.forward([Q, K, Vm, mu, c], X)
    for n in range(5):
        assert _close(Y[n], metric_attention(X[n], Q, K, Vm, mu, float(c[0, 0])))


def test_affine_generators_are_symmetries_float():
    rng = np.random.default_rng(5)
    par = affine_metric_parametrization(3, 2, 2)
    params = [rng.integers(-3, 4, size=s) for s in par.shapes]
    J = float_jacobian(par, params, rng.standard_normal((4, *par.input_shape)))
    G = np.array(
        [
            np.concatenate([np.asarray(b, dtype=float).ravel() for b in g])
            for g in par.generators(params)
        ]
    )
    assert len(G) == 2 * 2 + 2  # GL_2, the value scaling and the metric scaling
    assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max() * np.abs(G).max()


@pytest.mark.parametrize(
    ("d", "d_out", "a"), [(2, 2, 1), (3, 3, 2), (3, 2, 2), (4, 2, 3), (2, 2, 3)]
)
def test_affine_weight_adds_one_dimension(d, d_out, a):
    par = affine_metric_parametrization(d, d_out, a)
    assert par.n_params == 2 * a * d + d * d_out + d + 1
    c, linear = exact_rank(par), exact_rank(metric_parametrization(d, d_out, a))
    assert c.certified and c.rank == par.predicted == linear.rank + 1


def test_affine_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    with pytest.raises(ValueError, match="c must be a finite"):
        metric_attention(X, Q, K, Vm, np.ones(3), np.inf)
    with pytest.raises(ValueError, match="c must be a real"):
        metric_attention(X, Q, K, Vm, np.ones(3), "1")
    with pytest.raises(ValueError, match="at least 2"):
        affine_metric_parametrization(2, 2, 1, t=1)
    with pytest.raises(ValueError, match="a must"):
        affine_metric_parametrization(2, 2, 0)


# ------------------------------------------------------------------ the metric tensor


def _metric(x, B):
    return np.eye(B.shape[1]) + sum(np.outer(Bk @ x, Bk @ x) for Bk in B)


def _loop(X, Q, K, V, B, softmax):
    t = X.shape[1]
    Y = np.zeros((V.shape[0], t))
    for j in range(t):
        G = _metric(X[:, j], B)
        s = np.array([(K @ X[:, i]) @ G @ (Q @ X[:, j]) for i in range(t)])
        w = np.exp(s - s.max()) / np.exp(s - s.max()).sum() if softmax else s
        Y[:, j] = sum(w[i] * (V @ X[:, i]) for i in range(t))
    return Y


@pytest.mark.parametrize("normalizer", [None, "exp"])
@pytest.mark.parametrize("r", [1, 2])
def test_riemannian_matches_an_explicit_loop(normalizer, r):
    rng = np.random.default_rng(9)
    d, d_out, a = 3, 2, 2
    Q, K, V = _layer(a, d, d_out, rng)
    B = rng.standard_normal((r, a, d)) / 2
    X = rng.standard_normal((d, 4)) / 2
    Y = riemannian_attention(X, Q, K, V, B, normalizer)
    assert _close(Y, _loop(X, Q, K, V, B, normalizer == "exp"))
    if r == 1:
        assert _close(riemannian_attention(X, Q, K, V, B[0], normalizer), Y)
    Xb = rng.standard_normal((2, d, 4)) / 2
    Yb = riemannian_attention(torch.tensor(Xb), Q, K, V, B, normalizer)
    assert isinstance(Yb, torch.Tensor)
    assert _close(Yb[0].numpy(), _loop(Xb[0], Q, K, V, B, normalizer == "exp"))


def test_the_metric_is_positive_definite_and_not_a_scalar_weight():
    rng = np.random.default_rng(10)
    B = rng.standard_normal((2, 3, 4))
    for x in rng.standard_normal((20, 4)):
        assert np.linalg.eigvalsh(_metric(x, B)).min() >= 1 - 1e-12
    # B = 0 is the plain layer
    X = rng.standard_normal((4, 5))
    Q, K, V = _layer(3, 4, 2, rng)
    assert _close(
        riemannian_attention(X, Q, K, V, np.zeros((1, 3, 4))), attention_layer(X, Q, K, V)
    )


def _flat(g):
    return np.concatenate([np.asarray(b, dtype=float).ravel() for b in g])


def test_riemannian_generators_are_derivatives_of_the_group_actions():
    rng = np.random.default_rng(11)
    d, d_out, a, r = 3, 2, 3, 2
    par = riemannian_parametrization(d, d_out, a, r)
    params = [rng.integers(-3, 4, size=s).astype(float) for s in par.shapes]
    gens = [_flat(g) for g in par.generators(params)]
    Q, K, V, B = params
    eps = 1e-6

    def diff(act):
        return (_flat(act(eps)) - _flat(act(-eps))) / (2 * eps)

    expected = []
    for p in range(a):
        for q in range(p + 1, a):
            W = np.zeros((a, a))
            W[p, q], W[q, p] = 1, -1

            def rot(e, W=W):
                O = expm(e * W)
                return [
                    O @ Q,
                    O @ K,
                    V,
                    np.concatenate([O @ B[k * a : (k + 1) * a] for k in range(r)]),
                ]

            expected.append(diff(rot))
    expected.append(diff(lambda e: [np.exp(e) * Q, np.exp(-e) * K, V, B]))

    def mix(e):
        Rk = expm(e * np.array([[0.0, 1.0], [-1.0, 0.0]]))
        blocks = [B[k * a : (k + 1) * a] for k in range(r)]
        return [
            Q,
            K,
            V,
            np.concatenate([sum(Rk[k, m] * blocks[m] for m in range(r)) for k in range(r)]),
        ]

    expected.append(diff(mix))
    expected.append(diff(lambda e: [np.exp(e) * Q, K, np.exp(-e) * V, B]))
    assert len(gens) == len(expected)
    for g, e in zip(gens, expected):
        assert np.allclose(g, e, atol=1e-6)


@pytest.mark.parametrize("normalizer", [None, "exp"])
def test_riemannian_symmetries_and_broken_gl(normalizer):
    rng = np.random.default_rng(12)
    d, d_out, a, r = 3, 2, 2, 2
    Q, K, V = _layer(a, d, d_out, rng)
    B = rng.standard_normal((r, a, d)) / 2
    X = rng.standard_normal((d, 4)) / 2
    Y = riemannian_attention(X, Q, K, V, B, normalizer)
    O = expm(np.array([[0.0, 0.7], [-0.7, 0.0]]))
    c = -1.7
    assert _close(riemannian_attention(X, c * O @ Q, O @ K / c, V, O @ B, normalizer), Y)
    G = np.eye(a) + 0.5 * rng.standard_normal((a, a))  # a general change of basis breaks it
    moved = riemannian_attention(X, G @ Q, np.linalg.inv(G).T @ K, V, G @ B, normalizer)
    assert not _close(moved, Y, tol=1e-3)
    scaled = riemannian_attention(X, 2 * Q, K, V / 2, B, normalizer)  # the value scaling
    assert _close(scaled, Y) == (normalizer is None)


def _count(d, d_out, a, r, lightning):
    P = 2 * a * d + d * d_out + r * a * d
    return P - (a * (a - 1) // 2 + 1 + r * (r - 1) // 2 + (1 if lightning else 0))


@pytest.mark.parametrize(
    ("d", "d_out", "a", "r"), [(2, 1, 1, 2), (3, 2, 2, 1), (3, 1, 3, 2), (4, 2, 2, 2)]
)
def test_riemannian_dimension_is_the_count(d, d_out, a, r):
    light = exact_rank(riemannian_parametrization(d, d_out, a, r))
    assert light.certified and light.rank == _count(d, d_out, a, r, True)
    soft = float_rank(
        riemannian_parametrization(d, d_out, a, r, normalizer="exp"), weight_scale=0.5
    )
    assert soft.rank == _count(d, d_out, a, r, False)


@pytest.mark.parametrize(("d", "d_out", "a"), [(2, 1, 3), (3, 2, 4), (2, 3, 2)])
def test_rank_one_metric_beyond_a_equals_d_reaches_its_ceiling(d, d_out, a):
    """For a ≥ d the layer sees A = KᵀQ, C = KᵀB and sym(BᵀQ) only (and V)."""
    ceiling = 2 * d * d + d * (d + 1) // 2 + d * d_out - 2
    light = exact_rank(riemannian_parametrization(d, d_out, a, 1))
    assert light.lower == ceiling
    assert light.upper == _count(d, d_out, a, 1, True) >= ceiling


def test_riemannian_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 2)
    with pytest.raises(ValueError, match="B must have shape"):
        riemannian_attention(X, Q, K, Vm, np.ones((1, 3, 3)))
    with pytest.raises(ValueError, match="B must have at least 2"):
        riemannian_attention(X, Q, K, Vm, np.ones(3))
    with pytest.raises(ValueError, match="non-finite"):
        riemannian_attention(X, Q, K, Vm, np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="normalizer"):
        riemannian_attention(X, Q, K, Vm, np.ones((2, 3)), "softmax")
    with pytest.raises(ValueError, match="r must be"):
        riemannian_parametrization(3, 2, 2, 0)
    with pytest.raises(ValueError, match="at least 2"):
        riemannian_parametrization(3, 2, 2, 1, t=1)


@pytest.mark.parametrize(("d", "d_out", "a", "r"), [(3, 3, 1, 5), (2, 2, 1, 4), (2, 1, 1, 4)])
def test_riemannian_count_with_more_blocks_than_ad(d, d_out, a, r):
    """For r ≥ ad + 2 the O(r) mixing of the B_k has a stabilizer O(r − ad): the count, which
    subtracts only the orbit, is the dimension, and more blocks than ad add nothing."""
    n = r - a * d
    param = riemannian_parametrization(d, d_out, a, r)
    light = exact_rank(param)
    assert param.predicted == _count(d, d_out, a, r, True) + n * (n - 1) // 2
    assert light.certified and light.rank == param.predicted
    assert light.rank == exact_rank(riemannian_parametrization(d, d_out, a, a * d)).rank
