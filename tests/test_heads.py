"""Tests of lsa_lib.heads: several lightning heads summed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lsa_lib.heads import (
    cubic_map_dimension,
    exchange_values,
    mix_heads,
    multihead_attention,
    multihead_parametrization,
)
from lsa_lib.lightning import attention_layer
from lsa_lib.rank import exact_rank, float_jacobian
from lsa_lib.symmetries import _attention_fiber_dimension, change_attention_basis, scale_layers

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
    assert _attention_fiber_dimension(2, 3) == 4
    assert _attention_fiber_dimension(4, 3) == 24 - 9
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
