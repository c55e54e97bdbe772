"""Tests of lsa_lib.heads: several lightning heads summed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lsa_lib._generators import attention_fiber_dimension
from lsa_lib.heads import (
    cubic_map_dimension,
    exchange_values,
    mix_heads,
    moves_possible,
    multihead_attention,
    multihead_dimension,
    multihead_parametrization,
)
from lsa_lib.lightning import attention_layer
from lsa_lib.rank import exact_rank, float_jacobian, float_rank
from lsa_lib.symmetries import change_attention_basis, scale_layers

RNG = np.random.default_rng(20260603)


def _layer(a, d, d_out, rng=RNG):
    return tuple(rng.standard_normal(s) for s in ((a, d), (a, d), (d_out, d)))


def _close(A, B, tol=1e-9):
    A, B = np.asarray(A), np.asarray(B)
    return np.abs(A - B).max() <= tol * max(1.0, np.abs(B).max())


def test_multihead_is_sum_of_heads():
    X = RNG.standard_normal((2, 3, 5))  # batched
    heads = [_layer(2, 3, 2) for _ in range(3)]
    assert _close(multihead_attention(X, heads), sum(attention_layer(X, *h) for h in heads))


def test_head_symmetries():
    X = RNG.standard_normal((3, 4))
    heads = [_layer(3, 3, 2) for _ in range(3)]
    Y = multihead_attention(X, heads)
    assert _close(multihead_attention(X, [heads[i] for i in (1, 2, 0)]), Y)  # a permutation
    assert _close(multihead_attention(X, scale_layers(heads, [1.0, 1.0, 0.5])), Y)
    G = np.eye(3) + RNG.standard_normal((3, 3))
    assert _close(multihead_attention(X, change_attention_basis(heads, 2, G)), Y)
    M = np.eye(3) + 0.5 * RNG.standard_normal((3, 3))
    mixed = mix_heads(heads, M)
    assert _close(multihead_attention(X, mixed), Y) and not _close(mixed[0][2], heads[0][2], 1e-3)
    tmixed = mix_heads([tuple(torch.tensor(m) for m in h) for h in heads], M)
    assert isinstance(tmixed[0][0], torch.Tensor) and _close(multihead_attention(X, tmixed), Y)
    # moving one head alone (not a symmetry) changes the output
    moved = list(heads)
    moved[0] = (heads[0][0], heads[0][1], 2.0 * heads[0][2])
    assert not _close(multihead_attention(X, moved), Y, tol=1e-3)


def test_mix_heads_needs_a_at_least_d():
    heads = [_layer(2, 3, 2) for _ in range(2)]
    with pytest.raises(ValueError, match="a ≥ d"):
        mix_heads(heads, np.eye(2))
    with pytest.raises(ValueError, match="invertible"):
        mix_heads([_layer(3, 3, 2) for _ in range(2)], np.zeros((2, 2)))


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), c=st.floats(0.1, 10), H=st.integers(1, 3))
@example(seed=0, c=0.1, H=3)
def test_scaling_any_head_hypothesis(seed, c, H):
    rng = np.random.default_rng(seed)
    heads = [_layer(2, 3, 2, rng) for _ in range(H)]
    X = rng.standard_normal((3, 3))
    factors = [1.0] * H
    factors[seed % H] = c
    assert _close(
        multihead_attention(X, scale_layers(heads, factors)), multihead_attention(X, heads), 1e-8
    )


def test_dimension_counts():
    assert attention_fiber_dimension(2, 3) == 4
    assert attention_fiber_dimension(4, 3) == 24 - 9
    assert cubic_map_dimension(2, 2) == 12
    naive = multihead_parametrization(3, 3, 3, 2, mixing=False)
    assert naive.n_params - naive.predicted == 20  # per head: GL_3 and the scaling
    mixing = multihead_parametrization(3, 3, 3, 2)
    assert mixing.n_params - mixing.predicted == 22  # and the head mixing GL_2, less its diagonal
    assert multihead_parametrization(2, 2, 2, 1).predicted == 7  # the paper's single layer
    assert multihead_parametrization(2, 2, 2, 3).predicted == 12  # saturates
    assert multihead_parametrization(3, 3, 2, 3).predicted == 45
    assert multihead_parametrization(3, 1, 3, 2).predicted is None  # scalar values: no prediction


@pytest.mark.parametrize(
    ("args", "expected"),
    [((3, 3, 3, 2), 54 - 22), ((3, 3, 2, 3), 45), ((3, 2, 2, 2), 26)],
)
def test_certified_dimensions(args, expected):
    param = multihead_parametrization(*args)
    c = exact_rank(param)
    assert c.certified and c.rank == expected == param.predicted


def test_generators_are_symmetries_float():
    """Every generator lies in the kernel of the float Jacobian (mixing and rank-keeping moves)."""
    rng = np.random.default_rng(3)
    for par in (
        multihead_parametrization(3, 2, 2, 3),
        multihead_parametrization(2, 2, 3, 2),
        multihead_parametrization(2, 1, 2, 2),
        multihead_parametrization(3, 1, 2, 3),  # exchange through a corank-one A_l
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
        G = G[np.abs(G).sum(axis=1) > 0]  # a tangent may vanish at a particular point
        G /= np.abs(G).max(axis=1, keepdims=True)
        assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max()


@pytest.mark.parametrize(
    ("d", "d_out", "sizes", "below"),
    [
        (3, 1, [(1, 1), (2, 2)], 1),  # one exchange through the corank-one A_2
        (4, 1, [(2, 1), (3, 1)], 2),  # one per row of Q_1
        (3, 3, [(3, 2)] * 3, 3),  # each corank-one product moves in the span of the other two
        (4, 4, [(4, 3)] * 3, 3),
    ],
)
def test_corank_one_moves_close_the_bounds(d, d_out, sizes, below):
    """The moves through a matrix of corank one certify these layers below the count; the
    float engine, which knows no moves, reads the same rank."""
    c, count = multihead_dimension(d, d_out, sizes)
    assert moves_possible(d, d_out, sizes)
    assert c.certified and c.rank == count - below
    assert float_rank(multihead_parametrization(d, d_out, heads=sizes), seed=2).rank == c.rank


@pytest.mark.parametrize(("d", "a", "H", "expected"), [(3, 2, 2, 17), (4, 3, 2, 32), (4, 3, 3, 39)])
def test_summed_scalar_heads_with_corank_one_attention(d, a, H, expected):
    """Summed heads with d' = 1 and a = d − 1: the exchange through A_l of corank one."""
    param = multihead_parametrization(d, 1, a, H)
    c = exact_rank(param)
    upper = min(c.upper, cubic_map_dimension(d, 1))
    assert c.lower == upper == expected == float_rank(param, seed=2).rank


def test_saturated_heads_need_the_ambient_bound():
    c = exact_rank(multihead_parametrization(2, 2, 2, 3))
    assert c.lower == cubic_map_dimension(2, 2) < c.upper


def test_exchange_values_scalar_outputs():
    rng = np.random.default_rng(11)
    heads = [_layer(3, 3, 1, rng) for _ in range(3)]
    X = rng.standard_normal((2, 3, 4))
    Y = multihead_attention(X, heads)
    moved = exchange_values(heads, 1, 3, rng.standard_normal(3))  # heads 1 and 3 (1-based)
    assert _close(multihead_attention(X, moved), Y)
    assert not _close(moved[0][1], heads[0][1], tol=1e-3) and np.array_equal(
        moved[1][0], heads[1][0]
    )
    out = exchange_values([tuple(torch.tensor(m) for m in h) for h in heads], 2, 1, np.ones(3))
    assert isinstance(out[0][0], torch.Tensor)
    with pytest.raises(ValueError, match="d_out = 1"):
        exchange_values([_layer(3, 3, 2) for _ in range(2)], 1, 2, np.ones(3))
    with pytest.raises(ValueError, match="different"):
        exchange_values(heads, 2, 2, np.ones(3))
    with pytest.raises(ValueError, match="h must be"):
        exchange_values(heads, 0, 2, np.ones(3))
    with pytest.raises(ValueError, match="u must"):
        exchange_values(heads, 1, 2, np.ones(2))


def test_scalar_output_heads_certified_with_exchange_tangents():
    c = exact_rank(multihead_parametrization(3, 1, 3, 2))
    assert c.certified and c.rank == 17
    assert c.rank < cubic_map_dimension(3, 1) == 18


def test_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    with pytest.raises(ValueError, match="d = 3"):
        multihead_attention(X[:2], [(Q, K, Vm)])
    with pytest.raises(ValueError, match="all heads"):
        multihead_attention(X, [(Q, K, Vm), _layer(1, 3, 3)])
    with pytest.raises(TypeError):
        multihead_attention("tokens", [(Q, K, Vm)])
    with pytest.raises(ValueError, match="positive integer"):
        cubic_map_dimension(0, 2)
    with pytest.raises(TypeError, match="mixing"):
        multihead_parametrization(2, 2, 2, 2, mixing="yes")
    with pytest.raises(ValueError, match="non-zero"):
        scale_layers([(Q, K, Vm)], [0.0])


# ------------------------------------------------------------------ heads with output maps
def _quad(dk, dv, d, d_out, rng=RNG):
    return tuple(rng.standard_normal(s) for s in ((dk, d), (dk, d), (dv, d), (d_out, dv)))


def _loop_output_heads(X, heads, softmax):
    """Column by column, token by token: Σ_h O_h Σ_i w_ij V_h x_i."""
    d_out, t = heads[0][3].shape[0], X.shape[1]
    Y = np.zeros((d_out, t))
    for Q, K, V, O in heads:
        for j in range(t):
            s = np.array([(K @ X[:, i]) @ (Q @ X[:, j]) for i in range(t)])
            w = np.exp(s - s.max()) / np.exp(s - s.max()).sum() if softmax else s
            Y[:, j] += O @ sum(w[i] * (V @ X[:, i]) for i in range(t))
    return Y


@pytest.mark.parametrize("normalizer", [None, "exp"])
def test_output_heads_match_an_explicit_loop(normalizer):
    rng = np.random.default_rng(5)
    d, d_out = 3, 2
    heads = [_quad(2, 1, d, d_out, rng), _quad(4, 3, d, d_out, rng), _quad(1, 2, d, d_out, rng)]
    X = rng.standard_normal((d, 5)) / 2
    Y = multihead_attention(X, heads, normalizer)
    assert Y.shape == (d_out, 5)
    assert _close(Y, _loop_output_heads(X, heads, normalizer == "exp"))
    Xb = rng.standard_normal((2, d, 4))  # batched, and torch in gives torch out
    Yb = multihead_attention(torch.tensor(Xb), heads, normalizer)
    assert isinstance(Yb, torch.Tensor)
    assert _close(Yb[1].numpy(), _loop_output_heads(Xb[1], heads, normalizer == "exp"))


def test_summed_heads_accept_a_normalizer():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((3, 4))
    heads = [_layer(2, 3, 2, rng) for _ in range(2)]
    ident = [(Q, K, V, np.eye(2)) for Q, K, V in heads]
    assert _close(multihead_attention(X, heads, "exp"), multihead_attention(X, ident, "exp"))
    assert _close(
        multihead_attention(X, heads, "exp"), sum(attention_layer(X, *h, "exp") for h in heads)
    )


def _flat(g):
    return np.concatenate([np.asarray(b, dtype=float).ravel() for b in g])


def test_output_generators_are_derivatives_of_the_group_actions():
    """Per-head GL_{d_k}, GL_{d_v} and the scaling: each tangent is a central difference."""
    rng = np.random.default_rng(7)
    d, d_out, sizes = 3, 2, [(2, 3), (1, 1)]
    par = multihead_parametrization(d, d_out, heads=sizes, mixing=False)
    params = [rng.integers(-3, 4, size=s).astype(float) for s in par.shapes]
    gens = [_flat(g) for g in par.generators(params)]
    eps = 1e-6
    expected = []
    for h, (dk, dv) in enumerate(sizes):
        Q, K, V, O = params[4 * h : 4 * h + 4]
        for n, kind in ((dk, "qk"), (dv, "vo")):
            for r in range(n):
                for c in range(n):
                    E = np.zeros((n, n))
                    E[r, c] = 1
                    moved = []
                    for e in (eps, -eps):
                        G = np.eye(n) + e * E
                        new = list(params)
                        if kind == "qk":
                            new[4 * h], new[4 * h + 1] = G @ Q, np.linalg.inv(G).T @ K
                        else:
                            new[4 * h + 2], new[4 * h + 3] = G @ V, O @ np.linalg.inv(G)
                        moved.append(_flat(new))
                    expected.append((moved[0] - moved[1]) / (2 * eps))
        new_p, new_m = list(params), list(params)
        new_p[4 * h], new_p[4 * h + 3] = (1 + eps) * Q, O / (1 + eps)
        new_m[4 * h], new_m[4 * h + 3] = (1 - eps) * Q, O / (1 - eps)
        expected.append((_flat(new_p) - _flat(new_m)) / (2 * eps))
    # every group tangent is one of the generators (which also hold the moves of V in ker O)
    for e in expected:
        assert any(np.allclose(g, e, atol=1e-6) for g in gens)


@pytest.mark.parametrize(
    ("d", "d_out", "sizes"),
    [
        (4, 1, [(2, 2)]),  # V moves in ker O beyond GL_2 (d_out < d_v < d)
        (2, 3, [(1, 2), (3, 4)]),  # O moves against the columns of V (d < d_v)
        (3, 3, [(3, 3), (4, 3)]),  # mixing
        (3, 1, [(1, 1), (4, 2)]),  # exchange with a row of Q_1
        (3, 2, [(2, 2), (1, 3), (2, 2)]),  # rank-keeping (d_k = d − 1)
        (3, 1, [(1, 1), (2, 2)]),  # exchange through the corank-one A_2
        (4, 1, [(3, 1), (2, 3), (3, 2)]),  # the same between every pair
        (3, 3, [(3, 2), (3, 2), (4, 2)]),  # a corank-one product in the span of the others
    ],
)
def test_output_generators_are_in_the_jacobian_kernel(d, d_out, sizes):
    rng = np.random.default_rng(8)
    par = multihead_parametrization(d, d_out, heads=sizes)
    params = [rng.integers(-3, 4, size=s) for s in par.shapes]
    J = float_jacobian(par, params, rng.standard_normal((6, *par.input_shape)))
    G = np.array([_flat(g) for g in par.generators(params)])
    G = G[np.abs(G).sum(axis=1) > 0]
    G /= np.abs(G).max(axis=1, keepdims=True)
    assert np.abs(J @ G.T).max() <= 1e-9 * np.abs(J).max()


def _product_rank(d, d_out, sizes, seed=0):
    """The rank of (Q_h, K_h, V_h, O_h) ↦ (K_hᵀ Q_h, O_h V_h), by central differences."""
    rng = np.random.default_rng(seed)
    shapes = [s for dk, dv in sizes for s in ((dk, d), (dk, d), (dv, d), (d_out, dv))]
    theta = rng.standard_normal(sum(int(np.prod(s)) for s in shapes))

    def products(x):
        blocks, pos = [], 0
        for s in shapes:
            blocks.append(x[pos : pos + int(np.prod(s))].reshape(s))
            pos += int(np.prod(s))
        out = []
        for h in range(len(sizes)):
            Q, K, V, O = blocks[4 * h : 4 * h + 4]
            out += [(K.T @ Q).ravel(), (O @ V).ravel()]
        return np.concatenate(out)

    eps = 1e-6
    J = np.stack(
        [
            (products(theta + eps * e) - products(theta - eps * e)) / (2 * eps)
            for e in np.eye(len(theta))
        ],
        axis=1,
    )
    return np.linalg.matrix_rank(J, tol=1e-6 * np.abs(J).max())


GRID = [
    (2, 1, [(2, 2)]),
    (3, 2, [(1, 1), (4, 4)]),
    (4, 1, [(2, 2)]),
    (3, 3, [(2, 1), (1, 3)]),
    (2, 3, [(3, 1), (1, 2), (2, 2)]),
    (4, 2, [(1, 3), (5, 1)]),
]


@pytest.mark.parametrize(("d", "d_out", "sizes"), GRID)
def test_count_is_the_rank_of_the_per_head_products(d, d_out, sizes):
    _, count = multihead_dimension(d, d_out, sizes, normalizer="exp")
    assert count == _product_rank(d, d_out, sizes)
    _, light = multihead_dimension(d, d_out, sizes)
    assert light == count - len(sizes)


@pytest.mark.parametrize(("d", "d_out", "sizes"), GRID)
def test_softmax_dimension_is_the_count_and_lightning_is_certified(d, d_out, sizes):
    soft, count = multihead_dimension(d, d_out, sizes, normalizer="exp")
    assert soft.trusted and soft.gap > 1e8 and soft.rank == count
    light, _ = multihead_dimension(d, d_out, sizes)
    assert light.certified
    par = multihead_parametrization(d, d_out, heads=sizes)
    assert float_rank(par, seed=3).rank == light.rank  # the float engine agrees


def test_lightning_heads_mix_below_the_count():
    light, count = multihead_dimension(3, 3, [(3, 3), (3, 3)])
    assert light.certified and light.rank == count - 2  # GL_2 mixing less its diagonal
    light, count = multihead_dimension(2, 2, [(2, 2), (2, 2)])  # saturated
    assert light.certified and light.rank == cubic_map_dimension(2, 2) == 12 < count
    # the same sizes as the summed model: the output maps add parameters, not functions
    summed = exact_rank(multihead_parametrization(3, 3, 3, 2))
    assert summed.rank == multihead_dimension(3, 3, [(3, 3), (3, 3)])[0].rank


def test_output_heads_bad_inputs():
    X = RNG.standard_normal((3, 4))
    good = _quad(2, 2, 3, 2)
    with pytest.raises(TypeError, match="all .* triples"):
        multihead_attention(X, [good, good[:3]])
    with pytest.raises(ValueError, match="O of head 2"):
        multihead_attention(X, [good, (*good[:3], np.ones((2, 3)))])
    with pytest.raises(ValueError, match="d_out"):
        multihead_attention(X, [good, _quad(2, 2, 3, 3)])
    with pytest.raises(ValueError, match="normalizer"):
        multihead_attention(X, [good], "softmax")
    with pytest.raises(ValueError, match="either"):
        multihead_parametrization(3, 2, 2, 2, heads=[(2, 2)])
    with pytest.raises(ValueError, match="give a and H"):
        multihead_parametrization(3, 2)
    with pytest.raises(TypeError, match="pair"):
        multihead_dimension(3, 2, [(2, 2, 2)])
    with pytest.raises(ValueError, match="d_v of head 1"):
        multihead_dimension(3, 2, [(2, 0)])
    with pytest.raises(ValueError, match="at least 2"):
        multihead_dimension(3, 2, [(2, 2)], t=1)


@pytest.mark.parametrize(("d", "d_out", "sizes"), [(4, 1, [(2, 2)]), (3, 2, [(1, 1), (4, 4)])])
def test_softmax_dimension_certified_by_ball_arithmetic(d, d_out, sizes):
    exact, count = multihead_dimension(d, d_out, sizes, normalizer="exp", method="exact")
    assert exact.certified and exact.lower_by == "ball" and exact.rank == count


def test_multihead_dimension_options():
    light, _ = multihead_dimension(3, 3, [(3, 3), (3, 3)], method="float")
    assert light.rank == 32 and light.gap > 1e8  # the float engine on lightning heads
    wide, count = multihead_dimension(8, 8, [(8, 8)], normalizer="exp", weight_scale=8**-0.5)
    assert wide.rank == count == 128
    with pytest.raises(ValueError, match="method"):
        multihead_dimension(3, 3, [(2, 2)], method="symbolic")
    with pytest.raises(ValueError, match="weight_scale"):
        multihead_dimension(3, 3, [(2, 2)], normalizer="exp", weight_scale=0.0)


# ------------------------------------------------------------------ which heads can move


@pytest.mark.parametrize(
    ("d", "d_out", "sizes", "expected"),
    [
        (3, 2, [(3, 2), (3, 2)], True),  # free W_1 and free A_2: mixing
        (3, 2, [(3, 1), (1, 3)], True),  # free W_2 (d_v = 3 ≥ 2), free A_1
        (3, 1, [(3, 1), (1, 1)], True),  # scalar outputs and a free A: exchange
        (3, 2, [(2, 2), (1, 2), (1, 2)], True),  # d_k = d − 1 and two other free W: rank-keeping
        (3, 2, [(2, 2), (1, 2)], False),  # only one other free W
        (3, 2, [(1, 1), (2, 2)], False),  # no free A, d_k = d − 1 with one free W
        (3, 1, [(1, 1), (2, 2)], True),  # scalar outputs, A_2 of corank one: exchange
        (3, 3, [(3, 2)] * 3, True),  # a corank-one product, two other free A
        (3, 3, [(3, 2)] * 2, False),  # only one other free A
        (3, 4, [(4, 2)] * 4, True),  # codimension 2 and three other free A
        (3, 4, [(4, 2)] * 3, False),  # codimension 2 and two other free A
        (4, 4, [(2, 2)] * 4, False),  # the usual sizes d_k = d_v = d / H
        (2, 2, [(2, 2)], False),  # one head
    ],
)
def test_moves_possible(d, d_out, sizes, expected):
    assert moves_possible(d, d_out, sizes) is expected


def test_moves_possible_agrees_with_the_generators():
    """Where no move is possible, the lifted moves add no tangent: mixing=True changes nothing."""
    rng = np.random.default_rng(4)
    for _ in range(40):
        d, d_out = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        sizes = [tuple(int(v) for v in rng.integers(1, d + 2, size=2)) for _ in range(2)]
        with_moves = exact_rank(multihead_parametrization(d, d_out, heads=sizes))
        bare = multihead_parametrization(d, d_out, heads=sizes, mixing=False)
        if not moves_possible(d, d_out, sizes):
            assert with_moves.upper == exact_rank(bare).upper, (d, d_out, sizes)


def test_moves_possible_bad_inputs():
    with pytest.raises(ValueError, match="d_out"):
        moves_possible(3, 0, [(1, 1)])
    with pytest.raises(ValueError, match="non-empty list"):
        moves_possible(3, 2, [])
    with pytest.raises(TypeError, match="head 2"):
        moves_possible(3, 2, [(1, 1), (1, 2, 3)])
    with pytest.raises(ValueError, match="d_k of head 1"):
        moves_possible(3, 2, [(0, 1)])


@pytest.mark.parametrize(("d", "d_out", "a", "H"), [(1, 2, 1, 3), (1, 3, 2, 4), (2, 2, 1, 7)])
def test_summed_heads_beyond_d_squared_heads(d, d_out, a, H):
    """More heads than d² attention matrices can span: the span, not H, limits the moves."""
    param = multihead_parametrization(d, d_out, a, H)
    c = exact_rank(param)
    cap = cubic_map_dimension(d, d_out)
    assert c.lower == min(c.upper, cap) == param.predicted == cap
