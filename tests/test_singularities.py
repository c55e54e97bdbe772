"""Tests of lsa_lib.singularities: coefficients, tangent spaces, the rank rule, closedness."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib import singularities as S
from lsa_lib.dimension import general_width_formula
from lsa_lib.fibers import fiber_dimension
from lsa_lib.lightning import attention_layer
from lsa_lib.rank import RankAmbiguityError, exact_rank


def rank_r(rng, m, n, r):
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))


# ------------------------------------------------------------------ coefficients


@settings(max_examples=20)
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
    assert np.allclose(Y, attention_layer(X, Q, Q @ A.T, V))  # Kᵀ Q = A Qᵀ Q = A


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
    def pair(r):
        return r.rank, r.n_params

    assert pair(S.coefficient_evaluation_rank(2, 2, 1)) == (8, 12)
    assert pair(S.coefficient_evaluation_rank(2, 2, 2)) == (12, 12)
    assert pair(S.coefficient_evaluation_rank(3, 1, 3, n_inputs=40, seed=1)) == (18, 18)
    for bad in ((0, 1, 2), (2, 1, 1.0)):
        with pytest.raises(ValueError):
            S.coefficient_evaluation_rank(*bad)
    with pytest.raises(ValueError):
        S.coefficient_evaluation_rank(2, 2, 2, n_inputs=0)


def test_torch_coefficients_are_batched_and_equal():
    import torch

    rng = np.random.default_rng(2)
    A, V = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 2, 3))
    F = S.function_coefficients(torch.from_numpy(A), torch.from_numpy(V))
    assert F.shape == (4, 2, 3, 3, 3)
    for k in range(4):
        assert np.allclose(F[k].numpy(), S.function_coefficients(A[k], V[k]), rtol=1e-14)


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


@settings(max_examples=25)
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
    assert S.tangent_space(A, V, a=2).kind == "rank-deficient A"
    assert S.tangent_space(A, V).kind == "generic"
    assert S.tangent_space(np.zeros((3, 3)), V).kind == "zero"
    assert S.tangent_space(A, np.zeros((2, 3))).kind == "zero"
    assert S.tangent_space(A, rank_r(rng, 2, 3, 1)).kind == "rank-one pair"
    with pytest.raises(ValueError, match="rank 3 > a"):
        S.tangent_space(rng.standard_normal((3, 3)), V, a=2)
    with pytest.raises(ValueError, match="rank 3 > a"):
        S.is_singular(rng.standard_normal((3, 3)), V, a=2)
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError):
            S.is_singular(A, V, a=bad)
        with pytest.raises(ValueError):
            S.tangent_space(A, V, a=bad)
    with pytest.raises(ValueError):
        S.tangent_space(A, V, n_samples=0)
    with pytest.raises(RankAmbiguityError):
        S.is_singular(np.diag([1.0, 1e-6]), np.eye(2), min_gap=1e12)


def test_differential_rank_float_and_exact():
    # the rank of the differential of (A, V) ↦ φ at a point: the engine's rank, and at a
    # point where the engine's bounds do not meet, the exact rank of the coefficient
    # differential (an integer matrix once doubled), which the function determines for t ≥ 2
    rng = np.random.default_rng(6)
    A, V = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    res = fiber_dimension(A, V)
    assert (res.rank, res.n_params) == (7, 8) and res.gap > 1e6
    assert res.rank == general_width_formula((2, 2), (2,))
    b, c, v, w = (rng.integers(1, 4, 2) * np.array([1, -1]) + np.array([0, 1]) for _ in range(4))
    assert fiber_dimension(np.outer(b, c), np.outer(v, w), method="exact").rank == 7
    with pytest.raises(ValueError, match="do not meet"):  # w = b: the kernel exceeds the scaling
        fiber_dimension(np.outer(b, c), np.outer(v, b), method="exact")
    J2 = np.rint(2 * S.coefficient_differential(np.outer(b, c), np.outer(v, b))).astype(int)
    ex = exact_rank(J2)
    fl = fiber_dimension(np.outer(b, c) * 1.0, np.outer(v, b) * 1.0)
    assert ex.certified and ex.rank == fl.rank == 6
    Ai, Vi = rng.integers(-3, 4, (3, 3)), rng.integers(-3, 4, (2, 3))
    assert (
        fiber_dimension(Ai, Vi, method="exact").rank == S.tangent_space(Ai, Vi).sheet_ranks[0] == 14
    )


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
    with pytest.raises(ValueError, match="≥ 2"):
        S.blow_up_sequence([1], d=1)
