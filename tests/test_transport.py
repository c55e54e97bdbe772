"""Tests of lsa_lib.transport: fixed and learned positional transport."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import sympy
import torch

from lsa_lib.lightning import attention_layer
from lsa_lib.rank import exact_rank, float_jacobian, float_rank
from lsa_lib.symmetries import change_attention_basis
from lsa_lib.transport import (
    commutant_basis,
    holonomy,
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
    [(3, 3, 2, 3, True), (2, 2, 2, 3, True), (4, 2, 3, 3, True), (5, 2, 4, 3, True)],
)
def test_learned_transport_dimension(d, d_out, a, t, certified):
    param = learned_transport_parametrization(d, d_out, a, t)
    c = exact_rank(param)
    assert c.lower == param.predicted
    assert c.certified == certified


@pytest.mark.parametrize(("d", "d_out", "a", "dim"), [(4, 3, 3, 34), (5, 2, 4, 46), (4, 2, 3, 30)])
def test_flat_transport_with_two_tokens_and_a_below_d(d, d_out, a, dim):
    """a < d, 2a − d ≥ 2: the invisible antisymmetric directions of Kᵀ Q close the bounds."""
    param = learned_transport_parametrization(d, d_out, a, 2, causal=True, flat=True)
    c = exact_rank(param)
    assert c.certified and c.rank == param.predicted == dim
    without = replace(param, generators=_without_invisible(param, d, a))
    assert exact_rank(without).upper > dim  # the new directions are needed


def _without_invisible(param, d, a):
    """The flat connection's generators less the directions of the invisible offset 0."""
    m = 2 * a - d
    n_invisible = m * (m - 1) // 2

    def generators(params):
        G = param.generators(params)
        return G[: G.shape[0] - n_invisible]

    return generators


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


# ------------------------------------------------------------------ causal, flat, holonomy
def _causal_loop(X, Q, K, V, T):
    t = X.shape[1]
    S = np.zeros((t, t))
    for i in range(t):
        for j in range(i, t):
            S[i, j] = (K @ X[:, i]) @ T[j - i] @ (Q @ X[:, j])
    return (V @ X) @ S


def test_causal_transport_matches_an_explicit_loop():
    rng = np.random.default_rng(13)
    d, a, t = 3, 2, 4
    X = rng.standard_normal((d, t))
    Q, K, Vm = _layer(a, d, 2, rng)
    T = rng.standard_normal((t, a, a))
    Y = learned_transport_attention(X, Q, K, Vm, T, causal=True)
    assert _close(Y, _causal_loop(X, Q, K, Vm, T))
    # the last query sees every key, the first only itself
    assert _close(Y[:, 0], (Vm @ X[:, 0]) * ((K @ X[:, 0]) @ T[0] @ (Q @ X[:, 0])))
    with pytest.raises(ValueError, match=r"\(t, a, a\)"):
        learned_transport_attention(
            X, Q, K, Vm, rng.standard_normal((2 * t - 1, a, a)), causal=True
        )


@pytest.mark.parametrize("flat", [False, True])
def test_causal_parametrizations_compute_the_layer(flat):
    rng = np.random.default_rng(14)
    d, d_out, a, t = 3, 2, 2, 4
    par = learned_transport_parametrization(d, d_out, a, t, causal=True, flat=flat)
    params = [rng.standard_normal(s) for s in par.shapes]
    X = rng.standard_normal((3, d, t))
    Q, K, V = params[:3]
    if flat:
        T = np.stack([np.linalg.matrix_power(params[3], k) for k in range(t)])
    else:
        T = np.stack(params[3:])
    Y = par.forward([torch.tensor(p) for p in params], torch.tensor(X)).numpy()
    for n in range(3):
        assert _close(Y[n], _causal_loop(X[n], Q, K, V, T))


def test_flat_generators_are_derivatives_of_conjugation():
    rng = np.random.default_rng(15)
    d, d_out, a, t = 3, 2, 2, 3
    par = learned_transport_parametrization(d, d_out, a, t, causal=True, flat=True)
    params = [rng.integers(-3, 4, size=s).astype(float) for s in par.shapes]
    Q, K, V, R = params
    gens = [
        np.concatenate([np.asarray(b, float).ravel() for b in g]) for g in par.generators(params)
    ]
    eps = 1e-6

    def act(G):
        Gi = np.linalg.inv(G)
        return np.concatenate(
            [(G @ Q).ravel(), (Gi.T @ K).ravel(), V.ravel(), (G @ R @ Gi).ravel()]
        )

    expected = []
    for r in range(a):
        for s in range(a):
            E = np.zeros((a, a))
            E[r, s] = 1
            expected.append((act(np.eye(a) + eps * E) - act(np.eye(a) - eps * E)) / (2 * eps))
    assert len(gens) == len(expected) + 1  # and the value scaling
    for g, e in zip(gens[1:], expected):
        assert np.allclose(g, e, atol=1e-6)
    J = float_jacobian(par, params, rng.standard_normal((4, d, t)))
    G = np.array(gens)
    assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max() * np.abs(G).max()


@pytest.mark.parametrize(
    ("d", "d_out", "a", "t"), [(3, 2, 1, 3), (3, 2, 2, 3), (4, 2, 2, 4), (2, 2, 2, 3)]
)
def test_flat_and_curved_dimensions(d, d_out, a, t):
    flat = exact_rank(learned_transport_parametrization(d, d_out, a, t, causal=True, flat=True))
    curved = exact_rank(learned_transport_parametrization(d, d_out, a, t, causal=True))
    m = max(0, 2 * a - d)
    assert flat.certified and flat.rank == 2 * a * d + d * d_out - 1
    assert curved.certified
    assert curved.rank == 2 * a * d + d * d_out + (t - 2) * a * a - 1 - m * (m - 1) // 2
    # two tokens: no loop, no curvature, the same dimension
    flat2 = exact_rank(learned_transport_parametrization(d, d_out, a, 2, causal=True, flat=True))
    curved2 = exact_rank(learned_transport_parametrization(d, d_out, a, 2, causal=True))
    assert curved2.certified and flat2.lower == curved2.rank


def test_holonomy_of_powers_is_the_identity_exactly():
    R_int, s = rational_rotation([(3, 4, 5)])
    R = sympy.Matrix(R_int) / s
    t = 4
    per_offset = np.empty((2 * t - 1, 2, 2), dtype=object)
    for n, k in enumerate(range(-(t - 1), t)):
        per_offset[n] = np.array((R**k).tolist(), dtype=object)
    for loop in ([0, 1, 0], [0, 1, 3, 2, 0], [2, 2], [3, 0, 1, 3]):
        assert holonomy(per_offset, loop) == sympy.eye(2)
        assert holonomy(per_offset[t - 1 :], loop, causal=True) == sympy.eye(2)
    # a path, not a loop, is R^(start − end)
    edges = np.empty((t, t, 2, 2), dtype=object)
    for i in range(t):
        for j in range(t):
            edges[i, j] = np.array((R ** (j - i)).tolist(), dtype=object)
    assert holonomy(edges, [0, 2, 3, 1, 0]) == sympy.eye(2)


def test_holonomy_of_independent_maps_is_their_product():
    rng = np.random.default_rng(16)
    t, a = 3, 2
    T = rng.standard_normal((2 * t - 1, a, a))
    Tk = {k: T[k + t - 1] for k in range(-(t - 1), t)}
    # 0 → 1 → 2 → 0: τ(0→1) = T_{−1}, τ(1→2) = T_{−1}, τ(2→0) = T_2
    assert _close(holonomy(T, [0, 1, 2, 0]), Tk[2] @ Tk[-1] @ Tk[-1])
    assert not _close(holonomy(T, [0, 1, 2, 0]), np.eye(a), tol=1e-3)
    C = T[t - 1 :]  # causal: the reverse steps are inverses
    inv1 = np.linalg.inv(C[1])  # 0 → 1 → 2 go against the offsets, 2 → 0 along T_2
    assert _close(holonomy(C, [0, 1, 2, 0], causal=True), C[2] @ inv1 @ inv1)
    assert _close(holonomy(C, [0, 2, 0], causal=True), np.eye(a))  # there and back
    E = rng.standard_normal((t, t, a, a))
    assert _close(holonomy(E, [1, 0, 2, 1]), E[1, 2] @ E[2, 0] @ E[0, 1])


def test_holonomy_bad_inputs():
    T = np.ones((5, 2, 2))
    with pytest.raises(ValueError, match="closed"):
        holonomy(T, [0, 1, 2])
    with pytest.raises(ValueError, match="position"):
        holonomy(T, [0, 3, 0])
    with pytest.raises(ValueError, match="at least two"):
        holonomy(T, [0])
    with pytest.raises(ValueError, match="T must have shape"):
        holonomy(np.ones((4, 2, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="per edge"):
        holonomy(np.ones((3, 3, 2, 2)), [0, 1, 0], causal=True)
    with pytest.raises(ValueError, match="not invertible"):
        holonomy(np.array([np.eye(2), np.zeros((2, 2))], dtype=int), [0, 1, 0], causal=True)
    with pytest.raises(ValueError, match="invertible"):
        holonomy(np.array([np.eye(2), np.zeros((2, 2))]), [0, 1, 0], causal=True)
    with pytest.raises(ValueError, match="causal=True"):
        learned_transport_parametrization(3, 2, 2, flat=True)
    with pytest.raises(TypeError, match="causal"):
        learned_transport_attention(
            np.ones((3, 2)),
            np.ones((2, 3)),
            np.ones((2, 3)),
            np.ones((2, 3)),
            np.ones((2, 2, 2)),
            causal=1,
        )


@pytest.mark.parametrize(("d", "d_out", "a"), [(3, 3, 3), (4, 2, 3), (2, 2, 2)])
def test_flat_prediction_with_two_tokens(d, d_out, a):
    """t = 2: no loop, the flat and the curved connection give one function space."""
    flat = learned_transport_parametrization(d, d_out, a, 2, causal=True, flat=True)
    curved = exact_rank(learned_transport_parametrization(d, d_out, a, 2, causal=True))
    reading = float_rank(flat, seed=1)
    assert reading.gap > 1e6 and reading.rank == flat.predicted
    assert curved.lower <= flat.predicted <= curved.upper
    three = learned_transport_parametrization(d, d_out, a, 3, causal=True, flat=True)
    assert exact_rank(three).rank == three.predicted == 2 * a * d + d * d_out - 1


def _offset_loop(X, Q, K, V, T):
    """The definition, non-causal: ``s_ij = (K x_i)ᵀ T_{j−i} (Q x_j)``, ``T[k + t − 1] = T_k``."""
    t = X.shape[1]
    S = np.array(
        [[(K @ X[:, i]) @ T[j - i + t - 1] @ (Q @ X[:, j]) for j in range(t)] for i in range(t)]
    )
    return (V @ X) @ S


def test_the_parametrizations_compute_the_public_layers():
    """One forward per map: the rank engine's maps are the layers the chapter defines."""
    rng = np.random.default_rng(16)
    d, d_out, t = 3, 2, 4
    X = rng.standard_normal((5, d, t))
    # learned transport per offset, non-causal (keys and queries in their own roles)
    par = learned_transport_parametrization(d, d_out, 2, t)
    params = [rng.standard_normal(s) for s in par.shapes]
    Q, K, V, *T = params
    Y = par.forward([torch.tensor(p) for p in params], torch.tensor(X)).numpy()
    for n in range(5):
        expected = _offset_loop(X[n], Q, K, V, np.stack(T))
        assert _close(Y[n], expected)
        assert _close(Y[n], learned_transport_attention(X[n], Q, K, V, np.stack(T)))
    swapped = _offset_loop(X[0], K, Q, V, np.stack(T))  # keys and queries exchanged
    assert not _close(Y[0], swapped)
    # fixed transport by a rational rotation: scale^{2(t−1)} times the public layer
    R_int, s = rational_rotation([(3, 4, 5)], a=3)
    par = transport_parametrization(d, d_out, R_int, s, t=t)
    Q, K, V = (rng.standard_normal(sh) for sh in par.shapes)
    Y = par.forward([torch.tensor(M) for M in (Q, K, V)], torch.tensor(X)).numpy()
    for n in range(5):
        public = transported_attention(X[n], Q, K, V, R_int / s)
        assert _close(Y[n], s ** (2 * (t - 1)) * public)
    transposed = transported_attention(X[0], Q, K, V, (R_int / s).T)  # the other direction
    assert not _close(Y[0], s ** (2 * (t - 1)) * transposed)


def test_the_exact_engine_runs_the_same_forward():
    """Mod p, with integer weights and inputs: the dual numbers' values are the layer's."""
    from lsa_lib import _modp

    rng = np.random.default_rng(17)
    d, d_out, a, t = 2, 2, 2, 3
    par = learned_transport_parametrization(d, d_out, a, t)
    params = [rng.integers(-3, 4, size=s).astype(np.float64) for s in par.shapes]
    X = rng.integers(-3, 4, size=(d, t)).astype(np.float64)
    p = _modp.DEFAULT_PRIME
    duals = [_modp.ModDual(_modp.as_residues(M, p), None, p) for M in params]
    got = par.forward(duals, _modp.ModDual(_modp.as_residues(X, p), None, p)).value
    Q, K, V, *T = params
    expected = np.mod(np.round(_offset_loop(X, Q, K, V, np.stack(T))), p)
    assert np.array_equal(got, expected)


def test_finite_input_gives_finite_output_or_a_clear_error():
    rng = np.random.default_rng(18)
    X = rng.standard_normal((3, 2000))
    Q, K, V = _layer(2, 3, 2, rng)
    with pytest.raises(ValueError, match="powers R\\^k overflow"):
        transported_attention(X, Q, K, V, 2 * np.eye(2))
    Y = transported_attention(X[:, :50], Q, K, V, 1.01 * np.eye(2))
    assert np.isfinite(Y).all()
    with pytest.raises(ValueError, match="holonomy overflows"):
        holonomy(np.stack([2 * np.eye(2)] * 3), [0, 1] * 600 + [0])
    exact = holonomy(np.stack([2 * np.eye(2, dtype=int)] * 3), [0, 1] * 600 + [0])
    assert exact == sympy.eye(2) * 2**1200  # exact entries do not overflow
    with pytest.raises(ValueError, match=r"0\.\.1 \(0-based\)"):
        holonomy(np.stack([np.eye(2)] * 3), [0, 5, 0])


@pytest.mark.parametrize(("d", "d_out", "a"), [(3, 3, 3), (2, 2, 2), (4, 2, 4)])
def test_flat_and_curved_are_certified_equal_with_two_tokens(d, d_out, a):
    """t = 2, a = d: the antisymmetric part of Kᵀ Q is invisible to the flat layer too."""
    flat = learned_transport_parametrization(d, d_out, a, 2, causal=True, flat=True)
    curved = learned_transport_parametrization(d, d_out, a, 2, causal=True)
    f, c = exact_rank(flat), exact_rank(curved)
    count = 2 * a * d + d * d_out - 1 - a * (a - 1) // 2
    assert f.certified and c.certified and f.rank == c.rank == count == flat.predicted


def test_the_flat_rule_needs_three_tokens():
    """The flat count 2ad + dd' − 1 with t ≥ 2 in its domain is refuted at (3, 3, 3), t = 2."""
    from dataclasses import replace

    from lsa_lib.rules import check_rule, rule

    flat = rule("flat connection")
    case = {"d": 3, "d_out": 3, "a": 3, "t": 2}
    cert = flat.certificate(**case)
    assert cert.certified and cert.rank == 23 and flat.formula(**case) == 26
    too_wide = replace(flat, clauses=rule("curved connection").clauses)  # a ≤ d, t ≥ 2
    assert check_rule(too_wide, [(case, cert.rank)]).disagree_inside
    assert not check_rule(flat, [(case, cert.rank)]).disagree_inside
    assert rule("curved connection").value(**case) == 23
