"""Exact symbolic networks (sympy): one naming scheme, one exact forward pass.

A matrix named ``q1`` has the real symbols ``q1_11, q1_12, …`` (row and column, 1-based; a comma
separates them when an index exceeds 9). Layer ``i`` of :func:`symbolic_layers` holds ``q{i}``,
``k{i}`` and ``v{i}``. :func:`symbolic_attention` evaluates a lightning network exactly, in the
field of rational functions over the rationals (so symbolic group elements with inverses are
allowed), and returns every entry in canonical, expanded form: two networks compute the same
function exactly when their outputs on a matrix of symbols are equal. Explained in
:doc:`/book/01_lightning_map` and :doc:`/book/03_symmetries`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy
from sympy.polys.matrices import DomainMatrix
from sympy.polys.polyerrors import CoercionFailed

from . import _checks, _limits

__all__ = ["symbolic_matrix", "symbolic_layers", "symbolic_attention", "symbolic_difference"]

_MAX_SYMBOLS = 10**6  # entries of one symbolic matrix (about a minute to build)


def symbolic_matrix(name: str, rows: int, cols: int) -> sympy.Matrix:
    """A matrix of independent real symbols ``name_ij`` (:doc:`/book/01_lightning_map`).

    Parameters
    ----------
    name : str
        The stem, an identifier such as ``"x"`` or ``"q1"``.
    rows, cols : int

    Returns
    -------
    sympy.Matrix, shape=[rows, cols]
        Entry ``(i, j)`` is the symbol ``name_{i+1}{j+1}``.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be an identifier such as 'q', got {name!r}")
    rows, cols = _checks.size(rows, "rows"), _checks.size(cols, "cols")
    _limits.work(
        rows * cols,
        f"the number of symbols of a {rows} × {cols} matrix",
        _MAX_SYMBOLS,
        "sympy builds about 10⁴ symbols a second, and no exact network of that size expands",
    )
    sep = "," if max(rows, cols) > 9 else ""
    return sympy.Matrix(
        rows, cols, lambda i, j: sympy.Symbol(f"{name}_{i + 1}{sep}{j + 1}", real=True)
    )


def symbolic_layers(widths: Sequence[int], attn: Sequence[int]) -> list[tuple[sympy.Matrix, ...]]:
    """Layers of independent symbols ``q{i}``, ``k{i}``, ``v{i}`` (:doc:`/book/03_symmetries`).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.

    Returns
    -------
    list of (sympy.Matrix, sympy.Matrix, sympy.Matrix)
        ``Q_i, K_i`` of shape ``(a_i, d_{i-1})``, ``V_i`` of shape ``(d_i, d_{i-1})``.
    """
    return [
        tuple(symbolic_matrix(f"{n}{i}", *s) for n, s in zip("qkv", shapes, strict=True))
        for i, shapes in enumerate(_checks.layer_shapes(widths, attn), start=1)
    ]


def _check(X: Any, layers: Any) -> list[tuple[sympy.Matrix, ...]]:
    mats = _checks.triples(layers)
    if not _checks.symbolic_layers(mats) or not isinstance(X, sympy.MatrixBase):
        raise TypeError("symbolic evaluation needs sympy matrices for X and every weight")
    _checks.exact_layers(mats, d=X.shape[0])  # shapes fit and widths chain
    return mats


def _forward(X: sympy.Matrix, layers: list[tuple[sympy.Matrix, ...]], field: Any) -> DomainMatrix:
    def conv(M: sympy.Matrix) -> DomainMatrix:
        return DomainMatrix.from_Matrix(M).convert_to(field)

    Y = conv(X)
    for Q, K, V in layers:
        Q, K, V = conv(Q), conv(K), conv(V)
        Y = ((V * Y) * (K * Y).transpose()) * (Q * Y)
    return Y


def _field(*matrices: sympy.Matrix) -> Any:
    """The ring the networks are evaluated in: the polynomials over ℚ in the entries' symbols
    when every entry is one (the output is then a polynomial too, and no fraction is ever
    reduced), else the rational functions."""
    symbols: set[sympy.Symbol] = set()
    for M in matrices:
        symbols |= M.free_symbols
    gens = sorted(symbols, key=str) or [sympy.Symbol("_unused")]
    ring = sympy.QQ.poly_ring(*gens)
    try:
        for M in matrices:
            DomainMatrix.from_Matrix(M).convert_to(ring)
    except CoercionFailed:
        return sympy.QQ.frac_field(*gens)
    return ring


def symbolic_attention(X: sympy.Matrix, layers: Sequence[tuple[Any, Any, Any]]) -> sympy.Matrix:
    """A lightning network evaluated exactly on sympy matrices (:doc:`/book/01_lightning_map`).

    Parameters
    ----------
    X : sympy.Matrix, shape=[d_0, t]
        Tokens (symbols or rationals).
    layers : sequence of (sympy.Matrix, sympy.Matrix, sympy.Matrix)
        Entries may be rational functions of symbols (e.g. a layer moved by a symbolic
        change of basis).

    Returns
    -------
    sympy.Matrix, shape=[d_l, t]
        ``φ_l(… φ_1(X))`` with ``φ_i(Y) = V_i Y (Yᵀ K_iᵀ Q_i Y)``, each entry in canonical form
        (a polynomial is returned expanded).
    """
    mats = _check(X, layers)
    return _forward(X, mats, _field(X, *(M for layer in mats for M in layer))).to_Matrix()


def symbolic_difference(
    X: sympy.Matrix,
    layers: Sequence[tuple[Any, Any, Any]],
    other: Sequence[tuple[Any, Any, Any]],
) -> sympy.Matrix:
    """Exact difference ``φ_other(X) − φ_layers(X)`` of two lightning networks.

    Both are evaluated in one field of rational functions, so the result is the zero matrix
    exactly when the networks agree identically (:doc:`/book/03_symmetries`).

    Parameters
    ----------
    X : sympy.Matrix, shape=[d_0, t]
    layers, other : sequence of (sympy.Matrix, sympy.Matrix, sympy.Matrix)
        Two networks with the same ``d_0`` and ``d_l``.

    Returns
    -------
    sympy.Matrix, shape=[d_l, t]
    """
    a, b = _check(X, layers), _check(X, other)
    field = _field(X, *(M for layer in a + b for M in layer))
    return (_forward(X, b, field) - _forward(X, a, field)).to_Matrix()
