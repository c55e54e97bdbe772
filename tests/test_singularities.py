"""Tests of lsa_lib.singularities (chapter "Singularities and the boundary")."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib import lightning_attention
from lsa_lib import singularities as S
from lsa_lib.rank import RankAmbiguityError


def rank_r(rng, m, n, r):
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))


# ------------------------------------------------------------------ coefficients


@settings(max_examples=20, deadline=None)
@given(
    d=st.integers(1, 4),
    d_out=st.integers(1, 3),
    t=st.integers(1, 4),
    seed=st.integers(0, 10**6),
)
def test_coefficients_reproduce_the_layer(d, d_out, t, seed):
    rng = np.random.default_rng(seed)
    A, V, X = (
        rng.standard_normal((d, d)),
        rng.standard_normal((d_out, d)),
        rng.standard_normal((d, t)),
    )
    F = S.function_coefficients(A, V)
    assert F.shape == (d_out, d, d, d)
    assert np.allclose(F, F.transpose(0, 2, 1, 3))
    Y = np.einsum("kpqr,pq,rj->kj", F, X @ X.T, X)
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    assert np.allclose(Y, lightning_attention(X, Q, Q @ A.T, V))  # Kᵀ Q = A Qᵀ Q = A


def test_coefficient_differential_is_the_jacobian():
    rng = np.random.default_rng(1)
    A, V = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    J = S.coefficient_differential(A, V)
    assert J.shape == (2 * 27, 9 + 6)
    dA, dV = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    h = 1e-6
    fd = (S.function_coefficients(A + h * dA, V + h * dV) - S.function_coefficients(A, V)) / h
    assert np.allclose(J @ np.concatenate([dA.ravel(), dV.ravel()]), fd.ravel(), atol=1e-5)
    Ji = S.coefficient_differential(np.arange(4).reshape(2, 2), np.ones((1, 2), dtype=int))
    assert np.allclose(2 * Ji, np.rint(2 * Ji))


@pytest.mark.parametrize(
    "A, V, err",
    [
        (np.ones((2, 3)), np.ones((1, 2)), ValueError),
        (np.ones((2, 2)), np.ones((1, 3)), ValueError),
        (np.ones(2), np.ones((1, 2)), ValueError),
        ("A", np.ones((1, 2)), TypeError),
        (np.ones((2, 2)) * 1j, np.ones((1, 2)), TypeError),
        (np.full((2, 2), np.nan), np.ones((1, 2)), ValueError),
    ],
)
def test_bad_pairs(A, V, err):
    with pytest.raises(err):
        S.function_coefficients(A, V)
    with pytest.raises(err):
        S.tangent_space(A, V)


def test_coefficient_evaluation_rank():
    assert S.coefficient_evaluation_rank(2, 2, 1) == (8, 12)
    assert S.coefficient_evaluation_rank(2, 2, 2) == (12, 12)
    assert S.coefficient_evaluation_rank(3, 1, 3, n_inputs=40, seed=1) == (18, 18)
    for bad in ((0, 1, 2), (2, 1, 1.0)):
        with pytest.raises(ValueError):
            S.coefficient_evaluation_rank(*bad)
    with pytest.raises(ValueError):
        S.coefficient_evaluation_rank(2, 2, 2, n_inputs=0)


def test_single_layer_dimension():
    assert S.single_layer_dimension(2, 2, 2) == 7
    assert S.single_layer_dimension(2, 1, 2) == 5
    assert S.single_layer_dimension(3, 2, 2) == 13
    assert S.single_layer_dimension(2, 2, 5) == 7
    for bad in [(0, 1, 1), (2, 2.0, 1), (2, 2, True)]:
        with pytest.raises(ValueError):
            S.single_layer_dimension(*bad)


# ------------------------------------------------------------------ tangent information

ARCHS = [(2, 2, 2), (2, 1, 2), (3, 2, 2), (3, 3, 3), (3, 2, 1), (3, 3, 2)]


@pytest.mark.parametrize("d, d_out, a", ARCHS)
def test_rule_agrees_with_tangent_span(d, d_out, a):
    rng = np.random.default_rng(d * 100 + d_out * 10 + a)
    for rA in range(min(a, d) + 1):
        for rV in range(min(d_out, d) + 1):
            A, V = rank_r(rng, d, d, rA), rank_r(rng, d_out, d, rV)
            ts = S.tangent_space(A, V, a=a)
            singular = S.is_singular(A, V, a=a)
            assert ts.verdict == ("singular" if singular else "smooth"), (rA, rV, ts)
            assert ts.basis.shape == (d_out * d**3, ts.dimension)
            assert np.allclose(ts.basis.T @ ts.basis, np.eye(ts.dimension))
            assert ts.excess == ts.dimension - ts.manifold_dimension
            # the span contains the differential at the point itself
            J = S.coefficient_differential(A, V)
            if a >= d:
                assert np.allclose(ts.basis @ (ts.basis.T @ J), J)


@settings(max_examples=25, deadline=None)
@given(
    d=st.integers(2, 3),
    d_out=st.integers(1, 3),
    a=st.integers(1, 3),
    data=st.data(),
)
def test_rule_agrees_with_tangent_span_random_architectures(d, d_out, a, data):
    if d_out == 1 and a == 1:
        return  # the rule does not apply there (tested below)
    rA = data.draw(st.integers(0, min(a, d)))
    rV = data.draw(st.integers(0, min(d_out, d)))
    rng = np.random.default_rng(data.draw(st.integers(0, 10**6)))
    A, V = rank_r(rng, d, d, rA), rank_r(rng, d_out, d, rV)
    verdict = S.tangent_space(A, V, a=a).verdict
    assert verdict == ("singular" if S.is_singular(A, V, a=a) else "smooth")


def test_swap_point_two_sheets_and_parallel_exception():
    rng = np.random.default_rng(3)
    b, c, v, w = (rng.standard_normal(2) for _ in range(4))
    ts = S.tangent_space(np.outer(b, c), np.outer(v, w))
    assert ts.kind == "rank-one pair" and ts.sheet_ranks == (7, 7) and ts.dimension == 9
    # w parallel to b: one preimage line, the differential drops rank: the test cannot decide
    ts = S.tangent_space(np.outer(b, c), np.outer(v, b))
    assert ts.verdict == "critical" and ts.sheet_ranks[0] == 6
    assert S.is_singular(np.outer(b, c), np.outer(v, b))


def test_edge_cases_of_the_rule():
    rng = np.random.default_rng(4)
    # d = 1: M is a linear space, nothing singular, the tangent span never exceeds dim M
    for A in (np.zeros((1, 1)), np.ones((1, 1))):
        V = rng.standard_normal((2, 1))
        assert S.is_singular(A, V) is False
        assert S.tangent_space(A, V).verdict in ("smooth", "critical")
        assert S.tangent_space(A, V).dimension == 2
    # d' = a = 1: generic rank-one pairs are smooth points
    A, V = rank_r(rng, 3, 3, 1), rank_r(rng, 1, 3, 1)
    assert S.tangent_space(A, V, a=1).verdict == "smooth"
    with pytest.raises(ValueError, match="does not apply"):
        S.is_singular(A, V, a=1)


def test_kinds_and_bad_a():
    rng = np.random.default_rng(5)
    A, V = rank_r(rng, 3, 3, 1), rank_r(rng, 2, 3, 2)
    assert S.singular_kind(A, V, a=2) == "rank-deficient A"
    assert S.singular_kind(A, V) == "generic"
    assert S.singular_kind(np.zeros((3, 3)), V) == "zero"
    with pytest.raises(ValueError, match="rank 3 > a"):
        S.tangent_space(rng.standard_normal((3, 3)), V, a=2)
    with pytest.raises(ValueError, match="rank 3 > a"):
        S.is_singular(rng.standard_normal((3, 3)), V, a=2)
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError):
            S.singular_kind(A, V, a=bad)
    with pytest.raises(ValueError):
        S.tangent_space(A, V, n_samples=0)
    with pytest.raises(RankAmbiguityError):
        S.is_singular(np.diag([1.0, 1e-6]), np.eye(2), min_gap=1e12)


def test_tangent_dimension_float_and_exact():
    rng = np.random.default_rng(6)
    A, V = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    res = S.tangent_dimension(A, V)
    assert (res.rank, res.exact, res.n_params) == (7, False, 8) and res.gap > 1e6
    b, c, v, w = (rng.integers(1, 4, 2) * np.array([1, -1]) + np.array([0, 1]) for _ in range(4))
    assert S.tangent_dimension(np.outer(b, c), np.outer(v, w)).rank == 7
    ex = S.tangent_dimension(np.outer(b, c), np.outer(v, b))
    fl = S.tangent_dimension(np.outer(b, c) * 1.0, np.outer(v, b) * 1.0)
    assert ex.exact and not fl.exact and ex.rank == fl.rank == 6
    # the engine's rank at the point equals the coefficient differential's rank
    Ai, Vi = rng.integers(-3, 4, (3, 3)), rng.integers(-3, 4, (2, 3))
    assert S.tangent_dimension(Ai, Vi).rank == S.tangent_space(Ai, Vi).sheet_ranks[0] == 14
    with pytest.raises(ValueError, match="t must"):
        S.tangent_dimension(A, V, t=1)
    with pytest.raises(ValueError, match="integer"):
        S.tangent_dimension(A, V, exact=True)


# ------------------------------------------------------------------ M_{2,1,2}


def test_quadric_pair_is_the_function():
    rng = np.random.default_rng(7)
    A, V, X = rng.standard_normal((2, 2)), rng.standard_normal((1, 2)), rng.standard_normal((2, 5))
    q = S.quadric_pair(A, V).reshape(2, 3)
    x, y = X
    sums = q @ np.array([(x * x).sum(), (x * y).sum(), (y * y).sum()])
    Q = np.eye(2)
    assert np.allclose(lightning_attention(X, Q, A.T, V)[0], sums @ X)
    with pytest.raises(ValueError):
        S.quadric_pair(np.eye(3), np.ones((1, 3)))


def test_implicit_equation():
    R, syms = S.m212_implicit_equation()
    a1, b1, c1, a2, b2, c2 = syms
    ref = (a1 * c2 - a2 * c1) ** 2 - (a1 * b2 - a2 * b1) * (b1 * c2 - b2 * c1)
    assert sympy.expand(R - ref) == 0
    Res, _ = S.m212_resultant()
    assert sympy.simplify(Res / R).is_number
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
    for bad in (np.ones(5), "abc", np.full(6, np.inf)):
        with pytest.raises(ValueError):
            S.m212_contains(bad)
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
    widget = S.explore_umbrella_slice(data)
    assert hasattr(widget, "children")
    for bad in ({"n": 3}, {"n": 2.5}, {"box": -1.0}, {"box": float("nan")}):
        with pytest.raises(ValueError):
            S.umbrella_slice(**bad)


# ------------------------------------------------------------------ closedness


def test_balanced_and_blow_up():
    rng = np.random.default_rng(10)
    A, V = rng.standard_normal((2, 2)), 1e3 * rng.standard_normal((3, 2))
    Ab, Vb = S.balanced(A, V)
    assert np.isclose(np.linalg.norm(Ab), np.linalg.norm(Vb))
    assert np.allclose(S.function_coefficients(Ab, Vb), S.function_coefficients(A, V))
    Z = np.zeros((2, 2))
    assert np.array_equal(S.balanced(Z, V)[0], Z)
    seq = S.blow_up_sequence([1, 10, 100, 1000])
    norms = [np.linalg.norm(A) for A, _ in seq["weights"]]
    assert norms[-1] > 50 * norms[0] and all(np.diff(norms) > 0)
    errs = [np.linalg.norm(F - seq["limit_function"]) for F in seq["functions"]]
    assert errs[-1] < 1e-2 * errs[0]
    assert all(not S.is_singular(A, V) for A, V in seq["weights"])
    assert S.is_singular(*seq["limit"])
    bal = [np.linalg.norm(A - seq["limit"][0]) for A, _ in seq["balanced"]]
    assert bal[-1] < 1e-2
    for bad in ([], [0, 1], [np.inf]):
        with pytest.raises(ValueError):
            S.blow_up_sequence(bad)
    with pytest.raises(ValueError):
        S.blow_up_sequence([1], d=1)


# ------------------------------------------------------------------ training experiment


def test_singular_proximity():
    rng = np.random.default_rng(11)
    b, c, v, w = (rng.standard_normal(2) for _ in range(4))
    assert S.singular_proximity(np.outer(b, c), np.outer(v, w)) < 1e-12
    assert S.singular_proximity(np.eye(2), np.eye(2)) == 1.0
    assert S.singular_proximity(np.zeros((2, 2)), np.eye(2)) == 1.0
    batch = S.singular_proximity(rng.standard_normal((5, 2, 2)), rng.standard_normal((5, 3, 2)))
    assert batch.shape == (5,)
    with pytest.raises(ValueError):
        S.singular_proximity(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError):
        S.singular_proximity(np.ones((2, 2)), np.ones((1, 2)))


def test_descent_runs_and_stats():
    rng = np.random.default_rng(12)
    A, V = rng.standard_normal((2, 2)) / 2, rng.standard_normal((2, 2)) / 2
    r1 = S.descent_runs(A, V, n_runs=4, steps=200, record_every=50, seed=3)
    r2 = S.descent_runs(A, V, n_runs=4, steps=200, record_every=50, seed=3)
    assert np.array_equal(r1.loss, r2.loss)
    assert r1.loss.shape == r1.proximity.shape == (4, 5)
    assert list(r1.steps) == [0, 50, 100, 150, 200]
    assert (r1.loss[:, -1] < r1.loss[:, 0]).all()
    assert np.allclose(r1.proximity, np.maximum(r1.ratio_A, r1.ratio_V))
    stats = S.near_singular_stats(r1)
    assert stats["n_runs"] == 4 and 0 <= stats["end_near"] <= 4
    lo, hi = stats["end_near_ci"]
    assert 0 <= lo <= hi <= 1
    with pytest.raises(TypeError):
        S.near_singular_stats("runs")
    with pytest.raises(ValueError):
        S.near_singular_stats(r1, threshold=2)
    for bad in ({"n_runs": 0}, {"steps": 1.5}, {"lr": -1.0}, {"t": 1}, {"init_scale": 0}):
        with pytest.raises(ValueError):
            S.descent_runs(A, V, **bad)


def test_wilson_interval():
    lo, hi = S.wilson_interval(0, 48)
    assert lo == 0 and 0.07 < hi < 0.08
    lo, hi = S.wilson_interval(24, 48)
    assert lo < 0.5 < hi and np.isclose(lo + hi, 1)
    for bad in ((5, 4), (-1, 4), (1, 0), (1.5, 4)):
        with pytest.raises(ValueError):
            S.wilson_interval(*bad)
