"""Tests of the validation layer lsa_lib._checks (every input check of the library)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy
import torch

from lsa_lib import _checks
from lsa_lib.lightning import random_layers
from lsa_lib.tolerances import MAX_CONDITION


def test_architecture_returns_int_tuples():
    w, a = _checks.architecture([3, np.int64(4), 2], (2, 1))
    assert w == (3, 4, 2) and a == (2, 1)
    assert all(type(x) is int for x in w + a)


@pytest.mark.parametrize(
    ("widths", "attn", "match"),
    [
        ((3,), (), "at least"),
        ((3, 4, 2), (2,), "one entry per layer"),
        ((3, 4), (2, 1), "one entry per layer"),
        ((3, 0), (2,), r"widths\[1\] must be a positive integer"),
        ((3, 4), (-1,), r"attn\[0\] must be a positive integer"),
        ((3, 2.5), (1,), "positive integer"),
        ((3, True), (1,), "positive integer"),
        ("34", (1,), "sequence"),
        ((3, 4), 2, "sequence"),
    ],
)
def test_architecture_bad(widths, attn, match):
    with pytest.raises(ValueError, match=match):
        _checks.architecture(widths, attn)


@pytest.mark.parametrize(
    ("archs", "err"), [([], ValueError), ("ab", TypeError), ([((2, 2),)], TypeError)]
)
def test_architectures_bad(archs, err):
    with pytest.raises(err):
        _checks.architectures(archs)


def test_scalars():
    assert _checks.size(np.int32(3), "n") == 3
    for bad in (0, -1, 2.0, True, np.bool_(True), "3", None):
        with pytest.raises(ValueError, match="n must be a positive integer"):
            _checks.size(bad, "n")
    with pytest.raises(ValueError, match="an integer ≥ 5"):
        _checks.size(4, "n", minimum=5)
    assert _checks.tokens(1) == 1
    with pytest.raises(ValueError, match=r"at least 2 \(with t = 1 only the symmetric part"):
        _checks.tokens(1, minimum=2)
    with pytest.raises(ValueError, match="seed"):
        _checks.seed(-1)
    # one rule for flags: Python and numpy booleans, nothing else
    assert _checks.flag(np.bool_(True), "f") is True and _checks.flag(False, "f") is False
    for bad in (1, 0, "yes", None):
        with pytest.raises(TypeError, match="f must be True or False"):
            _checks.flag(bad, "f")
    assert _checks.real(np.float32(2.5), "x") == 2.5
    for bad, kw in ((0.0, {"nonzero": True}), (-1.0, {"positive": True}), (np.inf, {}), (True, {})):
        with pytest.raises(ValueError):
            _checks.real(bad, "x", **kw)
    assert _checks.choice("a", "opt", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="opt must be one of 'a', 'b'; got 'c'"):
        _checks.choice("c", "opt", ("a", "b"))
    assert _checks.index(2, 3, "i") == 2
    for bad in (0, 4, 1.0, True):
        with pytest.raises(ValueError, match="i must be"):
            _checks.index(bad, 3, "i")
    for good in ("float32", np.float64, torch.float32):
        assert _checks.dtype(good) in ("float32", "float64")
    for bad in ("float16", torch.int64, "nonsense"):
        with pytest.raises(ValueError, match="dtype"):
            _checks.dtype(bad)
    for bad in (1, 1.0, True, "2"):
        with pytest.raises(ValueError, match="min_gap"):
            _checks.min_gap(bad)


def test_array_conversions_and_errors():
    assert _checks.array([[1, 2]], "X").dtype == np.float64
    assert _checks.array(np.array([[True]]), "X").dtype == np.float64
    assert _checks.array(np.array([[Fraction(1, 2)]], dtype=object), "X")[0, 0] == 0.5
    t = _checks.array(torch.ones(2, 2, dtype=torch.int64), "X")
    assert t.dtype == torch.float64
    like = torch.ones(1, dtype=torch.float32)
    assert _checks.array([[1.0]], "X", like=like).dtype == torch.float32
    with pytest.raises(TypeError, match="X must be numeric"):
        _checks.array("text", "X")
    with pytest.raises(TypeError, match="numeric"):
        _checks.array(np.array([[object()]]), "X")
    with pytest.raises(TypeError, match="real"):
        _checks.array(torch.ones(2, 2, dtype=torch.bool), "X")
    with pytest.raises(TypeError, match="real"):
        _checks.array(np.ones((2, 2)) * 1j, "X")
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        _checks.array(np.ones(3), "X")
    with pytest.raises(ValueError, match="empty size"):
        _checks.array(np.ones((0, 3)), "X")
    with pytest.raises(ValueError, match="non-finite"):
        _checks.array(np.array([[np.nan]]), "X")
    with pytest.raises(ValueError, match="non-finite"):
        _checks.array(torch.tensor([[np.inf]]), "X")
    assert _checks.matrix(sympy.Matrix([[1, 2]]), "M").tolist() == [[1.0, 2.0]]
    with pytest.raises(ValueError, match="matrix"):
        _checks.matrix(np.ones((2, 2, 2)), "M")
    with pytest.raises(TypeError, match="numeric entries"):
        _checks.matrix(sympy.Matrix([[sympy.Symbol("x")]]), "M")


def test_layer_and_layers():
    Q, K, V = random_layers((4, 3), (2,), rng=0)[0]
    assert all(isinstance(m, np.ndarray) for m in _checks.layer(Q, K, V, d=4))
    with pytest.raises(ValueError, match=r"expects input width 4.*width 5"):
        _checks.layer(Q, K, V, d=5)
    with pytest.raises(ValueError, match=r"V of layer 2"):
        _checks.layer(Q, K, V[:, :2], index=2)
    with pytest.raises(ValueError, match=r"Q and K must have the same shape"):
        _checks.layer(Q, K[:1], V)
    layers = random_layers((4, 3, 2), (2, 2), rng=0)
    assert len(_checks.layers(layers, d=4)) == 2
    with pytest.raises(ValueError, match="layer 2"):
        _checks.layers([layers[0], layers[0]])
    assert len(_checks.layers([layers[0], layers[0]], chain=False)) == 2
    with pytest.raises(ValueError, match="non-empty"):
        _checks.layers([])
    with pytest.raises(TypeError, match="triple"):
        _checks.layers([(Q, K)])
    with pytest.raises(TypeError, match="wrap one layer"):
        _checks.layers((Q, K, V))
    mixed = _checks.layers([(torch.from_numpy(Q), K, V)])
    assert all(isinstance(m, torch.Tensor) for m in mixed[0])


def test_exact_layers_keep_dtypes():
    layers = [(np.ones((1, 2), dtype=int), np.ones((1, 2), dtype=int), np.ones((3, 2), dtype=int))]
    assert _checks.exact_layers(layers)[0][0].dtype.kind == "i"
    with pytest.raises(TypeError, match="integer or float"):
        _checks.exact_layers([(np.ones((1, 2), dtype=complex),) + layers[0][1:]])
    with pytest.raises(ValueError, match="empty size"):
        _checks.exact_layers([(np.ones((0, 2)),) * 2 + (np.ones((3, 2)),)])
    with pytest.raises(ValueError, match="expects input width"):
        _checks.exact_layers(layers + layers)


def test_exact_input():
    assert _checks.is_exact(np.array([[1, 2]])) and _checks.is_exact(
        sympy.Matrix([[sympy.Rational(1, 3)]])
    )
    assert _checks.is_exact(np.array([[Fraction(1, 2)]], dtype=object))
    assert not _checks.is_exact(np.array([[1.0]])) and not _checks.is_exact(torch.ones(1))
    assert not _checks.is_exact("x") and _checks.is_exact(torch.ones(1, dtype=torch.int64))
    R = _checks.rational_matrix(np.array([[0.5, True]], dtype=object), "R")
    assert R == sympy.Matrix([[sympy.Rational(1, 2), 1]])
    for bad, err in (
        ("s", TypeError),
        (np.ones(3), ValueError),
        (np.zeros((0, 2)), ValueError),
        (np.array([[np.nan]]), ValueError),
        (sympy.Matrix([[sympy.pi]]), TypeError),
    ):
        with pytest.raises(err):
            _checks.rational_matrix(bad, "R")
    assert _checks.integer_matrix(np.array([[2.0, -3.0]]), "M").dtype == np.int64
    assert _checks.integer_matrix(sympy.Matrix([[2, 3]]), "M").tolist() == [[2, 3]]
    assert _checks.integer_matrix(torch.tensor([[1, 2]]), "M").tolist() == [[1, 2]]
    for bad, err in (
        (np.array([[0.5]]), ValueError),
        (sympy.Matrix([[sympy.Rational(1, 2)]]), ValueError),
        (np.array([["a"]]), TypeError),
        (np.ones(2), ValueError),
        (np.array([[2.0**63]]), ValueError),
    ):
        with pytest.raises(err):
            _checks.integer_matrix(bad, "M")
    assert _checks.shape(sympy.zeros(2, 3), "M") == (2, 3)
    with pytest.raises(TypeError):
        _checks.shape("M", "M")


def test_pairs():
    assert _checks.pair_shapes((3, 3), (2, 3)) == (3, 2)
    for A, V in (((3, 2), (2, 2)), ((3, 3), (2, 2)), ((0, 0), (1, 0))):
        with pytest.raises(ValueError):
            _checks.pair_shapes(A, V)
    A, V = _checks.pair([[1, 2], [3, 4]], [[1, 1]])
    assert A.dtype == V.dtype == np.float64


def test_one_invertibility_cut_off():
    G, Gi = _checks.inverse(np.array([[2.0, 1.0], [0.0, 1.0]]), 2, "G")
    assert np.allclose(G @ Gi, np.eye(2))
    near = np.array([[1.0, 1.0], [1.0, 1.0 + 1e-13]])
    assert np.linalg.cond(near) > MAX_CONDITION
    with pytest.raises(ValueError, match="condition number"):
        _checks.inverse(near, 2, "G")
    with pytest.raises(ValueError, match="shape"):
        _checks.inverse(np.eye(3), 2, "G")
    Gt, Git = _checks.inverse(np.eye(2), 2, "G", like=torch.ones(1, dtype=torch.float64))
    assert isinstance(Git, torch.Tensor)
    S, Si = _checks.inverse(sympy.Matrix([[2, 1], [1, 1]]), 2, "G")
    assert S * Si == sympy.eye(2)
    with pytest.raises(ValueError, match="exactly 0"):
        _checks.inverse(sympy.Matrix([[1, 2], [2, 4]]), 2, "G")
    with pytest.raises(ValueError, match="shape"):
        _checks.inverse(sympy.eye(3), 2, "G")


def test_primes():
    assert _checks.prime(7) == 7
    for bad in (2, 2**20 + 7, 1048575, 9.0, True):
        with pytest.raises(ValueError):
            _checks.prime(bad)


def test_symbolic_layers_refuse_mixing():
    S = sympy.eye(2)
    assert _checks.symbolic_layers([(S, S, S)])
    assert not _checks.symbolic_layers([(np.eye(2),) * 3])
    with pytest.raises(TypeError, match="mixing"):
        _checks.symbolic_layers([(S, S, np.eye(2))])
