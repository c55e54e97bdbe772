"""Tests of lsa_lib.m212: the smallest example, pairs of binary quadrics, and its slice."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from lsa_lib import m212 as S
from lsa_lib.lightning import attention_layer


def test_quadric_pair_is_the_function():
    rng = np.random.default_rng(7)
    A, V, X = rng.standard_normal((2, 2)), rng.standard_normal((1, 2)), rng.standard_normal((2, 5))
    q = S.quadric_pair(A, V).reshape(2, 3)
    x, y = X
    sums = q @ np.array([(x * x).sum(), (x * y).sum(), (y * y).sum()])
    Q = np.eye(2)
    assert np.allclose(attention_layer(X, Q, A.T, V)[0], sums @ X)
    with pytest.raises(ValueError):
        S.quadric_pair(np.eye(3), np.ones((1, 3)))


def test_implicit_equation():
    R, syms = S.m212_implicit_equation()
    a1, b1, c1, a2, b2, c2 = syms
    ref = (a1 * c2 - a2 * c1) ** 2 - (a1 * b2 - a2 * b1) * (b1 * c2 - b2 * c1)
    assert sympy.expand(R - ref) == 0
    x = sympy.Symbol("x")
    Res = sympy.resultant(a1 * x**2 + b1 * x + c1, a2 * x**2 + b2 * x + c2, x)
    assert sympy.simplify(Res / R).is_number  # the resultant of q1 and q2, up to a constant
    assert len(sympy.factor_list(R)[1]) == 1  # irreducible
    rng = np.random.default_rng(8)
    f = sympy.lambdify(syms, R)
    for _ in range(5):
        q = S.quadric_pair(rng.standard_normal((2, 2)), rng.standard_normal((1, 2)))
        assert abs(f(*q)) < 1e-10
        assert abs(f(*rng.standard_normal(6))) > 1e-6


def test_membership_and_preimages():
    rng = np.random.default_rng(9)
    definite = np.array([1.0, 0.0, 1.0, 2.0, 0.0, 2.0])
    assert S._m212_value(definite) == 0 and not S.m212_contains(definite)
    with pytest.raises(ValueError, match="not in M"):
        S.m212_preimage(definite)
    assert S.m212_contains(np.zeros(6))
    A0, V0 = S.m212_preimage(np.zeros(6))
    assert np.allclose(S.quadric_pair(A0, V0), 0)
    indefinite = np.array([1.0, 1.0, -2.0, -3.0, -3.0, 6.0])
    square = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 2.0])  # (y², 2y²)
    product = np.array([0.0, 1.0, 0.0, 0.0, -2.0, 0.0])  # (xy, -2xy)
    for q in [indefinite, square, product] + [
        S.quadric_pair(rng.standard_normal((2, 2)), rng.standard_normal((1, 2))) for _ in range(5)
    ]:
        assert S.m212_contains(q)
        A, V = S.m212_preimage(q)
        assert np.allclose(S.quadric_pair(A, V), q)
        assert np.isclose(np.linalg.norm(A), np.linalg.norm(V))
    assert not S.m212_contains(rng.standard_normal(6))
    for bad in (np.ones(5), np.full(6, np.inf)):
        with pytest.raises(ValueError):
            S.m212_contains(bad)
    with pytest.raises(TypeError, match="numeric"):
        S.m212_contains("abc")
    with pytest.raises(ValueError):
        S.m212_contains(np.ones(6), tol=0)


def test_umbrella_slice():
    data = S.umbrella_slice(n=9)
    u, v, s = sympy.symbols("u v s")
    assert sympy.expand(data.equation - (u**2 + s * v**2)) == 0
    U, Vg, Sg = data.surface
    assert U.shape == (9, 9)
    for p in zip(U.ravel(), Vg.ravel(), Sg.ravel(), strict=True):
        assert S.m212_contains(S._slice_pair(*p))
    assert (data.singular_in_m[:, 2] <= 0).all() and (data.singular_not_in_m[:, 2] > 0).all()
    assert np.allclose(data.singular_in_m[:, :2], 0)
    fig = S.plot_umbrella_slice(data, elev=10, azim=30)
    assert len(fig.axes) == 1
    assert fig.axes[0].get_xlabel().startswith("u")
    import matplotlib.pyplot as plt

    plt.close(fig)
    for bad in ({"n": 3}, {"n": 2.5}, {"box": -1.0}, {"box": float("nan")}):
        with pytest.raises(ValueError):
            S.umbrella_slice(**bad)
