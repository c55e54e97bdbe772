"""Tests of lsa_lib.symbolic: one naming scheme, one exact forward pass."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from lsa_lib.lightning import attention_layer, deep_attention, random_layers
from lsa_lib.symbolic import (
    symbolic_attention,
    symbolic_difference,
    symbolic_layers,
    symbolic_matrix,
)
from lsa_lib.symmetries import change_attention_basis, pass_through, scale_layers


def _layer(d, d_out, a, t):
    X = symbolic_matrix("x", d, t)
    [(Q, K, V)] = symbolic_layers((d, d_out), (a,))
    return X, Q, K, V, symbolic_attention(X, [(Q, K, V)])


def test_one_naming_scheme():
    M = symbolic_matrix("x", 2, 3)
    assert [str(s) for s in M] == ["x_11", "x_12", "x_13", "x_21", "x_22", "x_23"]
    assert all(s.is_real for s in M)
    assert str(symbolic_matrix("q", 10, 1)[9, 0]) == "q_10,1"
    layers = symbolic_layers((3, 2, 1), (2, 1))
    assert [M.shape for layer in layers for M in layer] == [
        (2, 3),
        (2, 3),
        (2, 3),
        (1, 2),
        (1, 2),
        (1, 2),
    ]
    assert str(layers[1][0][0, 1]) == "q2_12" and str(layers[0][2][1, 2]) == "v1_23"


def test_layer_is_cubic_in_X_and_linear_in_each_weight():
    X, Q, K, V, phi = _layer(2, 1, 1, 2)
    assert phi.shape == (1, 2)
    c = sympy.Symbol("c")
    assert (symbolic_attention(c * X, [(Q, K, V)]) - c**3 * phi).applyfunc(
        sympy.expand
    ) == sympy.zeros(1, 2)
    assert (symbolic_attention(X, [(c * Q, K, V)]) - c * phi).applyfunc(
        sympy.expand
    ) == sympy.zeros(1, 2)
    for entry in phi:  # returned expanded: degree 3 in X, 1 in each of Q, K, V
        assert entry == sympy.expand(entry)
        for mats, deg in ((X, 3), (Q, 1), (K, 1), (V, 1)):
            assert sympy.Poly(entry, *sorted(mats.free_symbols, key=str)).homogeneous_order() == deg


def test_exact_forward_matches_the_float_forward():
    X, Q, K, V, phi = _layer(2, 2, 1, 3)
    rng = np.random.default_rng(12)
    nums, vals = {}, {}
    for name, M in zip("XQKV", (X, Q, K, V), strict=True):
        nums[name] = rng.integers(-3, 4, size=M.shape).astype(float)
        vals.update({M[i, j]: int(nums[name][i, j]) for i in range(M.rows) for j in range(M.cols)})
    exact = np.array(phi.subs(vals), dtype=float)
    np.testing.assert_allclose(attention_layer(nums["X"], nums["Q"], nums["K"], nums["V"]), exact)
    # deep: two layers of rationals
    layers = [
        tuple(sympy.Matrix(rng.integers(-2, 3, s)) / 2 for s in ((2, 3), (2, 3), (2, 3))),
        tuple(sympy.Matrix(rng.integers(-2, 3, s)) for s in ((1, 2), (1, 2), (3, 2))),
    ]
    Xi = rng.integers(-2, 3, (3, 4))
    got = np.array(symbolic_attention(sympy.Matrix(Xi), layers), dtype=float)
    flt = [tuple(np.array(M, dtype=float) for M in layer) for layer in layers]
    np.testing.assert_allclose(deep_attention(Xi.astype(float), flt), got, rtol=1e-12)


def test_symmetries_hold_exactly():
    layers = symbolic_layers((2, 2, 1), (1, 1))
    X = symbolic_matrix("x", 2, 2)
    c1, c2, g = sympy.symbols("c1 c2 g")
    C = sympy.Matrix(2, 2, sympy.symbols("C0:4"))
    for moved in (
        scale_layers(layers, [c1, c2]),
        change_attention_basis(layers, 2, sympy.Matrix([[g]])),
        pass_through(layers, 1, C),
    ):
        assert symbolic_difference(X, layers, moved) == sympy.zeros(1, 2)
    # a change that is not a symmetry is detected (small network: the difference is printed)
    small = symbolic_layers((1, 1), (1,))
    q, k, v = small[0]
    x = symbolic_matrix("x", 1, 1)
    assert symbolic_difference(x, small, [(2 * q, k, v)]) == sympy.Matrix(
        [[q[0] * k[0] * v[0] * x[0] ** 3]]
    )
    y = symbolic_attention(X, [(sympy.Matrix([[1, 0]]), sympy.Matrix([[1, 0]]), sympy.eye(2))])
    x11, x12 = X[0, 0], X[0, 1]
    assert sympy.expand(y[0, 0] - x11 * (x11 * x11 + x12 * x12)) == 0


def test_bad_input():
    with pytest.raises(ValueError, match="identifier"):
        symbolic_matrix("1x", 2, 2)
    with pytest.raises(ValueError, match="rows"):
        symbolic_matrix("x", 0, 2)
    layers = symbolic_layers((2, 2, 1), (1, 1))
    X = symbolic_matrix("x", 2, 2)
    with pytest.raises(TypeError, match="sympy"):
        symbolic_attention(np.ones((2, 2)), layers)
    with pytest.raises(TypeError, match="sympy"):
        symbolic_difference(X, layers, random_layers((2, 2, 1), (1, 1)))
    with pytest.raises(ValueError, match="expects input width"):
        symbolic_attention(symbolic_matrix("x", 3, 2), layers)
    M = symbolic_matrix("m", 2, 2)
    with pytest.raises(ValueError, match="same shape"):
        symbolic_attention(M, [(symbolic_matrix("q", 1, 2), M, M)])
    with pytest.raises(ValueError, match="positive integer"):
        symbolic_layers((2, 2), (0,))
