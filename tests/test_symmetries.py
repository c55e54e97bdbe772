"""Tests of lsa_lib.symmetries: the three symmetries, their tangents, virtual weights."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib.lightning import deep_attention, parameter_count, random_layers
from lsa_lib.rank import exact_rank, float_jacobian, float_rank
from lsa_lib.symmetries import (
    change_attention_basis,
    network_parametrization,
    orbit_dimension_count,
    pass_through,
    scale_layers,
    symmetry_generators,
    virtual_forward,
    virtual_weights,
)
from lsa_lib.tolerances import MAX_CONDITION

ARCHS = [((4, 3, 2), (2, 3)), ((3, 3, 3), (2, 2)), ((3, 2), (2,)), ((2, 3, 2), (3, 1))]


def _X(w, n=6, t=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, w[0], t))


def flatten_layers(layers):
    return np.concatenate([np.asarray(m).reshape(-1) for layer in layers for m in layer])


def _jacobian(layers, w, a, X, normalizer):
    param = network_parametrization(w, a, X.shape[-1], normalizer)
    return float_jacobian(param, [m for layer in layers for m in layer], X)


# --------------------------------------------------------------------------- generators


@pytest.mark.parametrize("w,a", ARCHS)
@pytest.mark.parametrize("normalized", [None, "exp"])
def test_generators_are_in_the_jacobian_kernel(w, a, normalized):
    layers = random_layers(w, a, 1)
    G = symmetry_generators(layers, normalized)
    assert G.shape == (orbit_dimension_count(w, a, normalized), parameter_count(w, a))
    J = _jacobian(layers, w, a, _X(w), normalized)
    assert np.abs(J @ G.T).max() < 1e-12 * np.abs(J).max()
    # and they are not trivially zero: every row moves some weight
    assert (np.abs(G).sum(axis=1) > 0).all()


@pytest.mark.parametrize("w,a", [((4, 3, 2), (2, 3)), ((3, 3, 3), (2, 2))])
def test_generator_rank_plus_jacobian_rank_is_parameter_count(w, a):
    # a_i <= d_{i-1} and non-increasing widths: the orbit is the whole fiber (chapter claim)
    layers = random_layers(w, a, 2)
    G = symmetry_generators(layers)
    J = _jacobian(layers, w, a, _X(w, n=20), None)
    assert float_rank(G).rank == G.shape[0]
    assert float_rank(G).rank + float_rank(J).rank == parameter_count(w, a)


def test_generators_keep_integer_dtype_and_match_float():
    w, a = (3, 2, 2), (2, 3)
    rng = np.random.default_rng(5)
    layers = [tuple(rng.integers(-9, 10, m.shape) for m in layer) for layer in random_layers(w, a)]
    G = symmetry_generators(layers)
    assert G.dtype.kind == "i"
    Gf = symmetry_generators([tuple(m.astype(float) for m in layer) for layer in layers])
    assert np.array_equal(G, Gf.astype(G.dtype))
    # the exact rank is smaller than the count: a_2 = 3 > d_1 = 2
    assert exact_rank(G).rank < G.shape[0]


def test_generator_rows_match_group_actions():
    # finite differences of the group actions reproduce the first rows of each kind
    w, a = (3, 2, 2), (2, 2)
    layers = random_layers(w, a, 3)
    G = symmetry_generators(layers)
    th = flatten_layers(layers)
    h = 1e-6
    # scaling of layer 2
    moved = scale_layers(layers, [1.0, 1.0 + h])
    assert np.allclose((flatten_layers(moved) - th) / h, G[1], atol=1e-5)
    # E_01 in GL_{a_1}
    E = np.zeros((2, 2))
    E[0, 1] = 1.0
    moved = change_attention_basis(layers, 1, np.eye(2) + h * E)
    assert np.allclose((flatten_layers(moved) - th) / h, G[2 + 1], atol=1e-5)
    # E_10 in GL_{d_1}
    E = np.zeros((2, 2))
    E[1, 0] = 1.0
    moved = pass_through(layers, 1, np.eye(2) + h * E)
    assert np.allclose((flatten_layers(moved) - th) / h, G[2 + 8 + 2], atol=1e-5)


def test_generators_bad_input():
    layers = random_layers((3, 2), (2,))
    with pytest.raises(TypeError):
        symmetry_generators(layers, normalizer=True)
    with pytest.raises(ValueError):
        symmetry_generators(layers, normalizer="softmax")
    with pytest.raises(TypeError):
        symmetry_generators(tuple(layers[0]))
    with pytest.raises(ValueError):
        symmetry_generators([])
    Q, K, V = layers[0]
    with pytest.raises(ValueError):
        symmetry_generators([(Q, K[:1], V)])
    with pytest.raises(ValueError):
        symmetry_generators([(Q, K, V[:, :1])])
    with pytest.raises(ValueError):
        symmetry_generators([(Q, K, V), (Q, K, V)])  # width 2 into a layer expecting 3
    with pytest.raises(TypeError):
        symmetry_generators([(Q.astype(complex), K, V)])


def test_orbit_dimension_count():
    assert orbit_dimension_count((3, 3, 3), (2, 2)) == 4 + 4 + 9 + 2
    assert orbit_dimension_count((3, 3, 3), (2, 2), normalizer="exp") == 4 + 4 + 9
    assert orbit_dimension_count((5, 2), (3,)) == 10
    with pytest.raises(ValueError):
        orbit_dimension_count((3, 3), (2, 2))
    with pytest.raises(TypeError):
        orbit_dimension_count((3, 3), (2,), normalizer=1)


# --------------------------------------------------------------------------- group actions


@pytest.mark.parametrize("normalized", [None, "exp"])
def test_group_actions_preserve_function(normalized):
    w, a = (4, 3, 3, 2), (2, 3, 2)
    layers = random_layers(w, a, 4)
    X = _X(w, t=4)
    y = deep_attention(X, layers, normalized)
    rng = np.random.default_rng(9)
    for i in (1, 2, 3):
        G = rng.standard_normal((a[i - 1], a[i - 1])) + 2 * np.eye(a[i - 1])
        y2 = deep_attention(X, change_attention_basis(layers, i, G), normalized)
        assert np.allclose(y2, y, rtol=1e-9, atol=1e-9 * np.abs(y).max())
    for i in (1, 2):
        C = rng.standard_normal((w[i], w[i])) + 2 * np.eye(w[i])
        y2 = deep_attention(X, pass_through(layers, i, C), normalized)
        assert np.allclose(y2, y, rtol=1e-9, atol=1e-9 * np.abs(y).max())
    y2 = deep_attention(X, scale_layers(layers, [2.0, -0.5, 3.0]), normalized)
    if normalized:
        assert np.abs(y2 - y).max() > 1e-3 * np.abs(y).max()
    else:
        assert np.allclose(y2, y, rtol=1e-9, atol=1e-9 * np.abs(y).max())


def test_group_actions_do_not_modify_input_and_change_weights():
    layers = random_layers((3, 2, 2), (2, 2), 0)
    before = flatten_layers(layers).copy()
    C = np.array([[2.0, 1.0], [0.0, 1.0]])
    out = pass_through(layers, 1, C)
    assert np.array_equal(flatten_layers(layers), before)
    assert not np.allclose(flatten_layers(out), before)
    assert np.allclose(out[0][2], C @ layers[0][2])


def test_group_actions_bad_input():
    layers = random_layers((3, 2, 2), (2, 2), 0)
    with pytest.raises(ValueError, match="nonzero"):
        scale_layers(layers, [1.0, 0.0])
    with pytest.raises(ValueError, match="one scalar per layer"):
        scale_layers(layers, [1.0])
    with pytest.raises(ValueError):
        scale_layers(layers, [1.0, np.inf])
    with pytest.raises(ValueError):
        scale_layers(layers, 2.0)
    with pytest.raises(ValueError, match="not .*invertible"):
        change_attention_basis(layers, 1, np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match="shape"):
        change_attention_basis(layers, 1, np.eye(3))
    with pytest.raises(ValueError, match="1..2"):
        change_attention_basis(layers, 3, np.eye(2))
    with pytest.raises(ValueError):
        change_attention_basis(layers, 0, np.eye(2))
    with pytest.raises(ValueError):
        change_attention_basis(layers, 1.0, np.eye(2))
    with pytest.raises(ValueError, match="not .*invertible"):
        pass_through(layers, 1, np.zeros((2, 2)))
    near = np.array([[1.0, 1.0], [1.0, 1.0 + 1e-13]])
    assert np.linalg.cond(near) > MAX_CONDITION
    with pytest.raises(ValueError, match="condition number"):
        pass_through(layers, 1, near)
    with pytest.raises(ValueError, match="shape"):
        pass_through(layers, 1, np.eye(3))
    with pytest.raises(ValueError, match="1..1"):
        pass_through(layers, 2, np.eye(2))
    with pytest.raises(ValueError, match="two layers"):
        pass_through(layers[:1], 1, np.eye(2))
    with pytest.raises(TypeError):
        pass_through([layers[0], tuple(sympy.Matrix(m) for m in layers[1])], 1, np.eye(2))


# --------------------------------------------------------------------------- symbolic


def test_symbolic_actions_bad_input():
    from lsa_lib.symbolic import symbolic_layers

    layers = symbolic_layers((2, 2, 1), (1, 1))
    with pytest.raises(ValueError, match="exactly 0"):
        pass_through(layers, 1, sympy.Matrix([[1, 2], [2, 4]]))
    with pytest.raises(ValueError, match="nonzero"):
        scale_layers(layers, [1, 0])
    with pytest.raises(ValueError, match="same shape"):
        scale_layers([(sympy.ones(1, 2), sympy.ones(2, 2), sympy.ones(1, 2))], [1])


def test_actions_apply_to_heads_with_any_widths():
    # the actions need triples, not chained widths: they apply to the heads of one layer
    heads = [tuple(np.ones(s) for s in ((2, 3), (2, 3), (4, 3)))] * 2
    moved = change_attention_basis(heads, 2, np.array([[2.0, 0.0], [1.0, 1.0]]))
    assert np.allclose(moved[1][1].T @ moved[1][0], heads[1][1].T @ heads[1][0])
    assert np.allclose(scale_layers(heads, [1.0, 2.0])[1][2], heads[1][2] / 2)


# --------------------------------------------------------------------------- virtual weights


@pytest.mark.parametrize("w,a", ARCHS + [((4, 3, 3, 2), (2, 3, 2))])
@pytest.mark.parametrize("normalized", [None, "exp"])
def test_virtual_forward_equals_deep_attention(w, a, normalized):
    layers = random_layers(w, a, 7)
    X = _X(w, n=4, t=5) * 0.7
    M, L = virtual_weights(layers)
    assert len(M) == len(a) and all(m.shape == (w[0], w[0]) for m in M)
    assert L.shape == (w[-1], w[0])
    y = deep_attention(X, layers, normalized)
    assert np.allclose(
        virtual_forward(X, M, L, normalized), y, rtol=1e-9, atol=1e-9 * np.abs(y).max()
    )
    # unbatched
    assert np.allclose(
        virtual_forward(X[0], M, L, normalized), y[0], rtol=1e-9, atol=1e-9 * np.abs(y).max()
    )


def test_virtual_weights_invariant_under_basis_change_and_pass_through():
    w, a = (3, 3, 2), (2, 2)
    layers = random_layers(w, a, 1)
    M, L = virtual_weights(layers)
    moved = pass_through(
        change_attention_basis(layers, 2, np.array([[1.0, 2.0], [0.0, 1.0]])),
        1,
        np.diag([2.0, -1.0, 0.5]),
    )
    M2, L2 = virtual_weights(moved)
    assert np.allclose(L2, L) and all(np.allclose(x, y) for x, y in zip(M2, M))
    # scaling changes them as the docstring says
    M3, L3 = virtual_weights(scale_layers(layers, [2.0, 3.0]))
    assert np.allclose(M3[0], 2.0 * M[0]) and np.allclose(M3[1], 3.0 / 4.0 * M[1])
    assert np.allclose(L3, L / 6.0)


def test_virtual_torch():
    w, a = (3, 2, 2), (2, 2)
    layers = [tuple(torch.tensor(m) for m in layer) for layer in random_layers(w, a, 1)]
    M, L = virtual_weights(layers)
    X = torch.tensor(_X(w))
    assert isinstance(L, torch.Tensor)
    assert torch.allclose(virtual_forward(X, M, L), deep_attention(X, layers))


def test_virtual_bad_input():
    layers = random_layers((3, 2, 2), (2, 2), 0)
    M, L = virtual_weights(layers)
    X = _X((3,))
    with pytest.raises(ValueError):
        virtual_forward(X, [], L)
    with pytest.raises(ValueError, match="M_2"):
        virtual_forward(X, [M[0], np.eye(2)], L)
    with pytest.raises(ValueError, match="L must"):
        virtual_forward(X, M, np.eye(2))
    with pytest.raises(TypeError):
        virtual_forward(X, M, L, normalizer=1)
    with pytest.raises(ValueError):
        virtual_forward(np.ones((2, 3)), M, L)
    with pytest.raises(ValueError):
        virtual_weights([])


def test_group_actions_torch():
    w, a = (3, 2, 2), (2, 2)
    layers = [tuple(torch.tensor(m) for m in layer) for layer in random_layers(w, a, 1)]
    X = torch.tensor(_X(w))
    y = deep_attention(X, layers)
    for new in (
        scale_layers(layers, [2.0, -1.0]),
        change_attention_basis(layers, 2, np.array([[2.0, 1.0], [0.0, 1.0]])),
        pass_through(layers, 1, torch.tensor([[1.0, 2.0], [0.0, 3.0]], dtype=torch.float64)),
    ):
        assert isinstance(new[1][0], torch.Tensor)
        assert torch.allclose(deep_attention(X, new), y)
    with pytest.raises(ValueError, match="condition number"):
        pass_through(layers, 1, torch.zeros(2, 2, dtype=torch.float64))


@settings(max_examples=15)
@given(
    widths=st.lists(st.integers(1, 3), min_size=2, max_size=4),
    attn_seed=st.integers(0, 10**6),
    normalized=st.sampled_from([None, "exp"]),
)
def test_generators_kill_the_jacobian_hypothesis(widths, attn_seed, normalized):
    w = tuple(widths)
    a = tuple(np.random.default_rng(attn_seed).integers(1, 4, len(w) - 1).tolist())
    layers = random_layers(w, a, attn_seed)
    G = symmetry_generators(layers, normalized)
    assert G.shape == (orbit_dimension_count(w, a, normalized), parameter_count(w, a))
    J = _jacobian(layers, w, a, 0.5 * _X(w, n=3), normalized)
    scale = np.abs(J).max() * max(np.abs(G).max(), 1.0)
    assert np.abs(J @ G.T).max() <= 1e-12 * scale + 1e-300
