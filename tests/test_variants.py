"""Tests for lsa_lib.variants (chapter "Beyond the paper")."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib import variants as V
from lsa_lib.lightning import lightning_attention
from lsa_lib.symmetries import pass_through

RNG = np.random.default_rng(20260601)


def _layer(a, d, d_out, rng=RNG):
    return tuple(rng.standard_normal(s) for s in ((a, d), (a, d), (d_out, d)))


def _close(A, B, tol=1e-9):
    A, B = np.asarray(A), np.asarray(B)
    return np.abs(A - B).max() <= tol * max(1.0, np.abs(B).max())


# ------------------------------------------------------------------------------ forwards


def test_residual_is_identity_plus_layers():
    d, t = 3, 4
    X = RNG.standard_normal((d, t))
    L = [_layer(2, d, d), _layer(1, d, d)]
    Y1 = X + lightning_attention(X, *L[0])
    Y2 = Y1 + lightning_attention(Y1, *L[1])
    assert _close(V.residual_attention(X, L), Y2)
    Xt = torch.tensor(X)
    out = V.residual_attention(Xt, L)
    assert isinstance(out, torch.Tensor) and _close(out.numpy(), Y2)


def test_multihead_is_sum_of_heads():
    X = RNG.standard_normal((2, 3, 5))  # batched
    heads = [_layer(2, 3, 2) for _ in range(3)]
    expected = sum(lightning_attention(X, *h) for h in heads)
    assert _close(V.multihead_attention(X, heads), expected)


def test_transport_scores_match_definition():
    d, a, t = 3, 2, 4
    X = RNG.standard_normal((d, t))
    Q, K, _ = _layer(a, d, 1)
    R_int, s = V.rational_rotation([(3, 4, 5)])
    R = R_int / s
    S = V.transport_scores(X, Q, K, R)
    for i in range(t):
        for j in range(t):
            P = np.linalg.matrix_power(R, j - i) if j >= i else np.linalg.matrix_power(R.T, i - j)
            assert abs(S[i, j] - (K @ X[:, i]) @ P @ (Q @ X[:, j])) < 1e-12


def test_transport_general_invertible_R_and_identity():
    d, a, t = 3, 2, 3
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    R = np.array([[2.0, 1.0], [0.0, 1.0]])  # invertible, not orthogonal
    S = V.transport_scores(X, Q, K, R)
    assert abs(S[2, 0] - (K @ X[:, 2]) @ np.linalg.inv(R @ R) @ (Q @ X[:, 0])) < 1e-12
    assert _close(V.transported_attention(X, Q, K, Vm, R), (Vm @ X) @ S)
    assert _close(V.transported_attention(X, Q, K, Vm, np.eye(a)), lightning_attention(X, Q, K, Vm))
    out = V.transported_attention(torch.tensor(X), Q, K, Vm, R)
    assert isinstance(out, torch.Tensor)


def test_metric_matches_definition():
    d, a, t = 3, 2, 4
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    mu = RNG.standard_normal(d)
    m = mu @ X
    S = np.outer(m, m) * ((K @ X).T @ (Q @ X))
    assert _close(V.metric_attention(X, Q, K, Vm, mu), (Vm @ X) @ S)
    assert _close(V.metric_attention(X, Q, K, Vm, mu[None, :]), (Vm @ X) @ S)


# ------------------------------------------------------------------------------ symmetries


def test_residual_symmetries_survive_and_pass_through_breaks():
    d = 3
    X = RNG.standard_normal((d, 4))
    L = [_layer(2, d, d), _layer(2, d, d)]
    Y = V.residual_attention(X, L)
    assert _close(V.residual_attention(X, V.scale_head(L, 1, -2.5)), Y)
    G = RNG.standard_normal((2, 2))
    assert _close(V.residual_attention(X, V.change_head_basis(L, 0, G)), Y)
    C = np.eye(d) + 0.5 * RNG.standard_normal((d, d))
    assert not _close(V.residual_attention(X, pass_through(L, 1, C)), Y, tol=1e-3)
    # the same pass-through is a symmetry without skips
    from lsa_lib.lightning import deep_attention

    assert _close(deep_attention(X, pass_through(L, 1, C)), deep_attention(X, L))


def test_head_symmetries():
    X = RNG.standard_normal((3, 4))
    heads = [_layer(3, 3, 2) for _ in range(3)]
    Y = V.multihead_attention(X, heads)
    assert _close(V.multihead_attention(X, V.permute_heads(heads, [1, 2, 0])), Y)
    assert _close(V.multihead_attention(X, V.scale_head(heads, 2, 0.5)), Y)
    assert _close(
        V.multihead_attention(
            X, V.change_head_basis(heads, 1, np.eye(3) + RNG.standard_normal((3, 3)))
        ),
        Y,
    )
    G = np.eye(3) + 0.5 * RNG.standard_normal((3, 3))
    assert _close(V.multihead_attention(X, V.mix_heads(heads, G)), Y)
    # moving one head alone (not a symmetry) changes the output
    moved = list(heads)
    moved[0] = (heads[0][0], heads[0][1], 2.0 * heads[0][2])
    assert not _close(V.multihead_attention(X, moved), Y, tol=1e-3)


def test_mix_heads_needs_a_at_least_d():
    heads = [_layer(2, 3, 2) for _ in range(2)]
    with pytest.raises(ValueError, match="a ≥ d"):
        V.mix_heads(heads, np.eye(2))


def test_transport_centralizer_and_broken_gl():
    d, a, t = 3, 4, 5
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    R_int, s = V.rational_rotation([(3, 4, 5), (5, 12, 13)])
    R = R_int / s
    basis = V.commutant_basis(R_int)
    assert len(basis) == 4  # two distinct angles: C(R) = C* × C*, real dimension 4
    for B in basis:
        assert np.array_equal(B @ R_int, R_int @ B)
    G = np.eye(a) + sum(RNG.standard_normal() * B / np.abs(B).max() for B in basis)
    Y = V.transported_attention(X, Q, K, Vm, R)
    Q2, K2 = V.change_transport_basis(Q, K, G, R)
    assert _close(V.transported_attention(X, Q2, K2, Vm, R), Y)
    Gbad = np.eye(a) + 0.5 * RNG.standard_normal((a, a))
    with pytest.raises(ValueError, match="commute"):
        V.change_transport_basis(Q, K, Gbad, R)
    ((Q3, K3, _),) = V.change_head_basis([(Q, K, Vm)], 0, Gbad)
    assert not _close(V.transported_attention(X, Q3, K3, Vm, R), Y, tol=1e-3)


def test_transport_breaks_permutation_equivariance():
    d, t = 4, 4
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(2, d, d)
    perm = [3, 1, 2, 0]
    R = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert _close(
        lightning_attention(X[:, perm], Q, K, Vm), lightning_attention(X, Q, K, Vm)[:, perm]
    )
    Y = V.transported_attention(X, Q, K, Vm, R)
    assert not _close(V.transported_attention(X[:, perm], Q, K, Vm, R), Y[:, perm], tol=1e-3)


def test_metric_symmetries():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    mu = RNG.standard_normal(3)
    Y = V.metric_attention(X, Q, K, Vm, mu)
    Q2, mu2 = V.scale_metric(Q, mu, -1.7)
    assert _close(V.metric_attention(X, Q2, K, Vm, mu2), Y)
    assert not _close(V.metric_attention(X, Q, K, Vm, 2 * mu), Y, tol=1e-3)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), c=st.floats(0.1, 10), H=st.integers(1, 3))
def test_scaling_any_head_hypothesis(seed, c, H):
    rng = np.random.default_rng(seed)
    heads = [_layer(2, 3, 2, rng) for _ in range(H)]
    X = rng.standard_normal((3, 3))
    h = seed % H
    assert _close(
        V.multihead_attention(X, V.scale_head(heads, h, c)), V.multihead_attention(X, heads), 1e-8
    )


# ------------------------------------------------------------------------------ exact helpers


def test_rational_rotation():
    R, s = V.rational_rotation([(3, 4, 5), (5, 12, 13)], a=5)
    assert s == 65 and R.dtype.kind == "i"
    assert np.array_equal(R @ R.T, s * s * np.eye(5, dtype=int))
    assert len(V.commutant_basis(R)) == 5  # two angles and one fixed axis


@pytest.mark.parametrize(
    ("R", "dim"),
    [
        (np.eye(3, dtype=int), 9),
        (np.array([[0, -1], [1, 0]]), 2),
        (np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]]), 3),
        (np.array([[3, -4, 0, 0], [4, 3, 0, 0], [0, 0, 3, -4], [0, 0, 4, 3]]), 8),
    ],
)
def test_commutant_dimension(R, dim):
    basis = V.commutant_basis(R)
    assert len(basis) == dim
    M = np.array([B.ravel() for B in basis])
    assert np.linalg.matrix_rank(M) == dim
    assert V.transport_symmetry_dimension(R) == dim + 1


def test_dimension_counts():
    assert V.attention_fiber_dimension(2, 3) == 4
    assert V.attention_fiber_dimension(4, 3) == 24 - 9
    assert V.cubic_map_dimension(2, 2) == 12
    assert V.residual_symmetry_dimension(3, (2, 2)) == 10
    assert V.multihead_symmetry_dimension(3, 3, 2, mixing=False) == 20
    assert V.multihead_symmetry_dimension(3, 3, 2) == 22
    assert V.multihead_predicted_dimension(2, 2, 2, 1) == 7  # the paper's single layer
    assert V.multihead_predicted_dimension(2, 2, 2, 3) == 12  # saturates
    assert V.multihead_predicted_dimension(3, 3, 2, 3) == 45
    assert V.metric_symmetry_dimension(2, 3) == 6


# ------------------------------------------------------------------------------ bad input


def test_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    with pytest.raises(ValueError, match="V of shape"):
        V.residual_attention(X, [(Q, K, Vm[:2])])
    with pytest.raises(TypeError, match="list of"):
        V.residual_attention(X, (Q, K, Vm))
    with pytest.raises(ValueError, match="d = 3"):
        V.multihead_attention(X[:2], [(Q, K, Vm)])
    with pytest.raises(ValueError, match="all heads"):
        V.multihead_attention(X, [(Q, K, Vm), _layer(1, 3, 3)])
    with pytest.raises(ValueError, match="square|shape"):
        V.transported_attention(X, Q, K, Vm, np.eye(3))
    with pytest.raises(ValueError, match="invertible"):
        V.transported_attention(X, Q, K, Vm, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="mu"):
        V.metric_attention(X, Q, K, Vm, np.ones(4))
    with pytest.raises(ValueError, match="non-finite"):
        V.metric_attention(X, Q, K, Vm, np.array([1.0, np.nan, 0.0]))
    with pytest.raises(TypeError):
        V.multihead_attention("tokens", [(Q, K, Vm)])
    with pytest.raises(ValueError, match="Pythagorean"):
        V.rational_rotation([(3, 4, 6)])
    with pytest.raises(ValueError, match="too small"):
        V.rational_rotation([(3, 4, 5)], a=1)
    with pytest.raises(ValueError, match="integer"):
        V.commutant_basis(np.array([[0.5, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="permutation"):
        V.permute_heads([(Q, K, Vm)] * 2, [0, 0])
    with pytest.raises(ValueError, match="h must"):
        V.scale_head([(Q, K, Vm)], 1, 2.0)
    with pytest.raises(ValueError, match="non-zero"):
        V.scale_head([(Q, K, Vm)], 0, 0.0)
    with pytest.raises(ValueError, match="non-zero"):
        V.scale_metric(Q, np.ones(3), 0)
    with pytest.raises(ValueError, match="invertible"):
        V.change_head_basis([(Q, K, Vm)], 0, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="positive integer"):
        V.cubic_map_dimension(0, 2)


# ------------------------------------------------------------------------------ rank engine


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        (lambda: V.residual_parametrization(3, (2, 2)), 42 - 10),
        (lambda: V.residual_parametrization(2, (1, 2, 2)), 32 - 12),
        (lambda: V.multihead_parametrization(3, 3, 3, 2), 54 - 22),
        (lambda: V.multihead_parametrization(3, 3, 2, 3), 45),
        (lambda: V.multihead_parametrization(3, 2, 2, 2), 26),
        (lambda: V.transport_parametrization(3, 2, np.array([[0, -1], [1, 0]]), t=4), 15),
        (
            lambda: V.transport_parametrization(
                3, 3, *V.rational_rotation([(3, 4, 5), (5, 12, 13)])
            ),
            28,
        ),
        (lambda: V.metric_parametrization(3, 3, 2), 18),
    ],
)
def test_certified_dimensions(param, expected):
    from lsa_lib.rank import certified_rank

    c = certified_rank(param())
    assert c.exact and c.dimension == expected


def test_generators_are_symmetries_float():
    """Every generator lies in the kernel of the float Jacobian (transport, mixing moves)."""
    from lsa_lib.rank import float_jacobian

    rng = np.random.default_rng(3)
    for par in (
        V.multihead_parametrization(3, 2, 2, 3),
        V.multihead_parametrization(2, 2, 3, 2),
        V.transport_parametrization(2, 2, *V.rational_rotation([(3, 4, 5)])),
        V.metric_parametrization(2, 2, 1),
    ):
        params = [rng.integers(-3, 4, size=s) for s in par.shapes]
        X = rng.standard_normal((4, *par.input_shape))
        J = float_jacobian(par, params, X)
        G = np.array(
            [
                np.concatenate([np.asarray(b, dtype=float).ravel() for b in g])
                for g in par.generators(params)
            ]
        )
        G /= np.abs(G).max(axis=1, keepdims=True)
        assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max()


def test_saturated_heads_need_the_ambient_bound():
    from lsa_lib.rank import certified_rank

    c = certified_rank(V.multihead_parametrization(2, 2, 2, 3))
    assert c.lower == V.cubic_map_dimension(2, 2) < c.upper


def test_parametrization_bad_input():
    with pytest.raises(ValueError, match="orthogonal"):
        V.transport_parametrization(2, 2, np.array([[2, 0], [0, 1]]))
    with pytest.raises(ValueError, match="integer"):
        V.transport_parametrization(2, 2, np.eye(2) * 0.6)
    with pytest.raises(ValueError, match="at least 2"):
        V.metric_parametrization(2, 2, 1, t=1)
    with pytest.raises(ValueError, match="attn"):
        V.residual_parametrization(2, ())
    with pytest.raises(TypeError, match="mixing"):
        V.multihead_parametrization(2, 2, 2, 2, mixing="yes")


def test_exchange_values_scalar_outputs():
    rng = np.random.default_rng(11)
    heads = [_layer(3, 3, 1, rng) for _ in range(3)]
    X = rng.standard_normal((2, 3, 4))
    Y = V.multihead_attention(X, heads)
    moved = V.exchange_values(heads, 0, 2, rng.standard_normal(3))
    assert _close(V.multihead_attention(X, moved), Y)
    assert not _close(moved[0][1], heads[0][1], tol=1e-3)
    out = V.exchange_values([tuple(torch.tensor(m) for m in h) for h in heads], 1, 0, np.ones(3))
    assert isinstance(out[0][0], torch.Tensor)
    with pytest.raises(ValueError, match="d_out = 1"):
        V.exchange_values([_layer(3, 3, 2) for _ in range(2)], 0, 1, np.ones(3))
    with pytest.raises(ValueError, match="different"):
        V.exchange_values(heads, 1, 1, np.ones(3))
    with pytest.raises(ValueError, match="u must"):
        V.exchange_values(heads, 0, 1, np.ones(2))


def test_scalar_output_heads_certified_with_exchange_tangents():
    from lsa_lib.rank import certified_rank

    c = certified_rank(V.multihead_parametrization(3, 1, 3, 2))
    assert c.exact and c.dimension == 17
    assert c.dimension < V.cubic_map_dimension(3, 1) == 18
    with pytest.raises(ValueError, match="d_out = 1"):
        V.multihead_predicted_dimension(3, 1, 3, 2)


def test_learned_transport_forward_and_symmetries():
    rng = np.random.default_rng(5)
    d, a, t = 3, 2, 4
    X = rng.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2, rng)
    T = rng.standard_normal((2 * t - 1, a, a))
    Y = V.learned_transport_attention(X, Q, K, Vm, T)
    S = np.array(
        [[(K @ X[:, i]) @ T[j - i + t - 1] @ (Q @ X[:, j]) for j in range(t)] for i in range(t)]
    )
    assert _close(Y, (Vm @ X) @ S)
    G, H = np.eye(a) + 0.3 * rng.standard_normal((2, a, a))
    T2 = np.linalg.inv(H).T @ T @ np.linalg.inv(G)
    assert _close(V.learned_transport_attention(X, G @ Q, H @ K, Vm, T2), Y)
    assert not _close(V.learned_transport_attention(X, Q, H @ K, Vm, T), Y, tol=1e-3)
    out = V.learned_transport_attention(torch.tensor(X), Q, K, Vm, T)
    assert isinstance(out, torch.Tensor) and _close(out.numpy(), Y)
    with pytest.raises(ValueError, match="2t - 1"):
        V.learned_transport_attention(X, Q, K, Vm, T[:3])


@pytest.mark.parametrize(
    ("d", "d_out", "a", "t", "exact"), [(3, 3, 2, 3, True), (2, 2, 2, 3, True), (4, 2, 3, 3, False)]
)
def test_learned_transport_dimension(d, d_out, a, t, exact):
    from lsa_lib.rank import certified_rank

    c = certified_rank(V.learned_transport_parametrization(d, d_out, a, t))
    assert c.lower == V.learned_transport_predicted_dimension(d, d_out, a, t)
    assert c.exact == exact


def test_learned_transport_prediction_bad_input():
    with pytest.raises(ValueError, match="a > d"):
        V.learned_transport_predicted_dimension(2, 2, 3)
    with pytest.raises(ValueError, match="at least 2"):
        V.learned_transport_parametrization(2, 2, 1, t=1)
