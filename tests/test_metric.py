"""Tests of lsa_lib.metric: attention with a content-dependent metric."""

from __future__ import annotations

import numpy as np
import pytest

from lsa_lib.metric import metric_attention, metric_parametrization
from lsa_lib.rank import exact_rank, float_jacobian

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
