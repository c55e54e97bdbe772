"""Tests of lsa_lib.transport: fixed and learned positional transport."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lsa_lib.lightning import attention_layer
from lsa_lib.rank import exact_rank, float_jacobian
from lsa_lib.symmetries import change_attention_basis
from lsa_lib.transport import (
    commutant_basis,
    learned_transport_attention,
    learned_transport_parametrization,
    rational_rotation,
    transport_parametrization,
    transport_scores,
    transported_attention,
)

RNG = np.random.default_rng(20260604)


def _layer(a, d, d_out, rng=RNG):
    return tuple(rng.standard_normal(s) for s in ((a, d), (a, d), (d_out, d)))


def _close(A, B, tol=1e-9):
    A, B = np.asarray(A), np.asarray(B)
    return np.abs(A - B).max() <= tol * max(1.0, np.abs(B).max())


def test_transport_scores_match_definition():
    d, a, t = 3, 2, 4
    X = RNG.standard_normal((d, t))
    Q, K, _ = _layer(a, d, 1)
    R_int, s = rational_rotation([(3, 4, 5)])
    R = R_int / s
    S = transport_scores(X, Q, K, R)
    for i in range(t):
        for j in range(t):
            P = np.linalg.matrix_power(R, j - i) if j >= i else np.linalg.matrix_power(R.T, i - j)
            assert abs(S[i, j] - (K @ X[:, i]) @ P @ (Q @ X[:, j])) < 1e-12


def test_transport_general_invertible_R_and_identity():
    d, a, t = 3, 2, 3
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    R = np.array([[2.0, 1.0], [0.0, 1.0]])  # invertible, not orthogonal
    S = transport_scores(X, Q, K, R)
    assert abs(S[2, 0] - (K @ X[:, 2]) @ np.linalg.inv(R @ R) @ (Q @ X[:, 0])) < 1e-12
    assert _close(transported_attention(X, Q, K, Vm, R), (Vm @ X) @ S)
    assert _close(transported_attention(X, Q, K, Vm, np.eye(a)), attention_layer(X, Q, K, Vm))
    out = transported_attention(torch.tensor(X), Q, K, Vm, R)
    assert isinstance(out, torch.Tensor) and _close(out.numpy(), (Vm @ X) @ S)


def test_transport_centralizer_and_broken_gl():
    d, a, t = 3, 4, 5
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2)
    R_int, s = rational_rotation([(3, 4, 5), (5, 12, 13)])
    R = R_int / s
    basis = commutant_basis(R_int)
    assert len(basis) == 4  # two distinct angles: C(R) = C* × C*, real dimension 4
    for B in basis:
        assert np.array_equal(B @ R_int, R_int @ B)
    G = np.eye(a) + sum(RNG.standard_normal() * B / np.abs(B).max() for B in basis)
    assert np.allclose(G @ R, R @ G)
    Y = transported_attention(X, Q, K, Vm, R)
    ((Q2, K2, _),) = change_attention_basis([(Q, K, Vm)], 1, G)
    assert _close(transported_attention(X, Q2, K2, Vm, R), Y)
    Gbad = np.eye(a) + 0.5 * RNG.standard_normal((a, a))
    ((Q3, K3, _),) = change_attention_basis([(Q, K, Vm)], 1, Gbad)
    assert not _close(transported_attention(X, Q3, K3, Vm, R), Y, tol=1e-3)


def test_transport_breaks_permutation_equivariance():
    d, t = 4, 4
    X = RNG.standard_normal((d, t))
    Q, K, Vm = _layer(2, d, d)
    perm = [3, 1, 2, 0]
    R = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert _close(attention_layer(X[:, perm], Q, K, Vm), attention_layer(X, Q, K, Vm)[:, perm])
    Y = transported_attention(X, Q, K, Vm, R)
    assert not _close(transported_attention(X[:, perm], Q, K, Vm, R), Y[:, perm], tol=1e-3)


def test_rational_rotation():
    R, s = rational_rotation([(3, 4, 5), (5, 12, 13)], a=5)
    assert s == 65 and R.dtype.kind == "i"
    assert np.array_equal(R @ R.T, s * s * np.eye(5, dtype=int))
    assert len(commutant_basis(R)) == 5  # two angles and one fixed axis


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
    basis = commutant_basis(R)
    assert len(basis) == dim
    assert exact_rank(np.array([B.ravel() for B in basis])).rank == dim
    param = transport_parametrization(2, 2, R, int(round(np.sqrt((R @ R.T)[0, 0]))))
    assert param.n_params - param.predicted == dim + 1  # the centralizer and the scaling


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        (lambda: transport_parametrization(3, 2, np.array([[0, -1], [1, 0]]), t=4), 15),
        (lambda: transport_parametrization(3, 3, *rational_rotation([(3, 4, 5), (5, 12, 13)])), 28),
    ],
)
def test_certified_dimensions(param, expected):
    p = param()
    c = exact_rank(p)
    assert c.certified and c.rank == expected == p.predicted


def test_generators_are_symmetries_float():
    rng = np.random.default_rng(3)
    for par in (
        transport_parametrization(2, 2, *rational_rotation([(3, 4, 5)])),
        learned_transport_parametrization(2, 2, 2, 3),
    ):
        params = [rng.integers(-3, 4, size=s) for s in par.shapes]
        J = float_jacobian(par, params, rng.standard_normal((4, *par.input_shape)))
        G = np.array(
            [
                np.concatenate([np.asarray(b, dtype=float).ravel() for b in g])
                for g in par.generators(params)
            ]
        )
        G /= np.abs(G).max(axis=1, keepdims=True)
        assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max()


def test_learned_transport_forward_and_symmetries():
    rng = np.random.default_rng(5)
    d, a, t = 3, 2, 4
    X = rng.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2, rng)
    T = rng.standard_normal((2 * t - 1, a, a))
    Y = learned_transport_attention(X, Q, K, Vm, T)
    S = np.array(
        [[(K @ X[:, i]) @ T[j - i + t - 1] @ (Q @ X[:, j]) for j in range(t)] for i in range(t)]
    )
    assert _close(Y, (Vm @ X) @ S)
    G, H = np.eye(a) + 0.3 * rng.standard_normal((2, a, a))
    T2 = np.linalg.inv(H).T @ T @ np.linalg.inv(G)
    assert _close(learned_transport_attention(X, G @ Q, H @ K, Vm, T2), Y)
    assert not _close(learned_transport_attention(X, Q, H @ K, Vm, T), Y, tol=1e-3)
    out = learned_transport_attention(torch.tensor(X), Q, K, Vm, T)
    assert isinstance(out, torch.Tensor) and _close(out.numpy(), Y)
    with pytest.raises(ValueError, match="2t - 1"):
        learned_transport_attention(X, Q, K, Vm, T[:3])


@pytest.mark.parametrize(
    ("d", "d_out", "a", "t", "certified"),
    [(3, 3, 2, 3, True), (2, 2, 2, 3, True), (4, 2, 3, 3, False)],
)
def test_learned_transport_dimension(d, d_out, a, t, certified):
    param = learned_transport_parametrization(d, d_out, a, t)
    c = exact_rank(param)
    assert c.lower == param.predicted
    assert c.certified == certified


def test_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    with pytest.raises(ValueError, match="shape"):
        transported_attention(X, Q, K, Vm, np.eye(3))
    with pytest.raises(ValueError, match="invertible"):
        transported_attention(X, Q, K, Vm, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="Pythagorean"):
        rational_rotation([(3, 4, 6)])
    with pytest.raises(ValueError, match="integers"):
        rational_rotation([(3.0, 4, 5)])
    with pytest.raises(ValueError, match="too small"):
        rational_rotation([(3, 4, 5)], a=1)
    with pytest.raises(ValueError, match="non-empty"):
        rational_rotation([])
    with pytest.raises(ValueError, match="integer"):
        commutant_basis(np.array([[0.5, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        commutant_basis(np.ones((2, 3), dtype=int))
    with pytest.raises(ValueError, match="orthogonal"):
        transport_parametrization(2, 2, np.array([[2, 0], [0, 1]]))
    with pytest.raises(ValueError, match="integer"):
        transport_parametrization(2, 2, np.eye(2) * 0.6)
    with pytest.raises(ValueError, match="too large"):
        transport_parametrization(2, 2, *rational_rotation([(39, 52, 65), (25, 60, 65)]), t=12)
    assert learned_transport_parametrization(2, 2, 3).predicted is None  # no prediction for a > d
    with pytest.raises(ValueError, match="at least 2"):
        learned_transport_parametrization(2, 2, 1, t=1)
