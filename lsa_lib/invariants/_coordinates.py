"""The scaled coefficient coordinates of one output coordinate (part of :mod:`lsa_lib.invariants`).

The tensor ``F`` of a layer with one output row, its coordinates (one copy of ``F`` per
context column, ``Sym(F)`` for the target column), named by their monomials, and the exact
scalars they hold. Shared by the invariant families and the counts.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import flint
import numpy as np
import sympy
from numpy.typing import ArrayLike

from .. import _checks

__all__: list[str] = []

#: A coordinate's name: its monomial as the sorted triple of 1-based ``(row, column)`` pairs.
Label = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def scalar(x: Any, name: str) -> Fraction | sympy.Expr:
    """An exact value: a Fraction, or a sympy expression (symbolic input)."""
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, (bool, numbers.Integral)):
        return Fraction(int(x))
    if isinstance(x, Fraction):
        return x
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"{name} has non-finite entries (nan or inf)")
        return Fraction(x)  # the binary rational the float stores
    if isinstance(x, flint.fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, sympy.Basic):
        if x.is_Rational:
            return Fraction(int(x.p), int(x.q))
        if x.is_Float:
            return Fraction(float(x))
        if isinstance(x, sympy.Expr) and x.is_commutative and x.is_real is not False:
            return x
    raise TypeError(
        f"{name} must have integer, rational, float or sympy entries, got {x!r} "
        f"({type(x).__name__})"
    )


def uniform(values: list[Any]) -> list[Any]:
    """All Fractions, or (when one is symbolic) all sympy."""
    if all(isinstance(v, Fraction) for v in values):
        return values
    return [
        sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v for v in values
    ]


def tensor(F: Any) -> tuple[int, dict[tuple[int, int, int], Any]]:
    """``(d, {(p, q, r): F[p, q, r]})`` for ``p ≤ q`` (0-based), checked symmetric in ``(p, q)``."""
    if _checks.is_torch(F):
        F = F.detach().cpu().numpy()
    if isinstance(F, (str, bytes)):
        raise TypeError("F must be an array of shape (d, d, d) or (1, d, d, d)")
    if isinstance(F, sympy.NDimArray):
        F = np.array(F.tolist(), dtype=object)
    arr = np.asarray(F, dtype=object)
    if arr.ndim == 4:
        if arr.shape[0] != 1:
            raise ValueError(
                f"the invariants are those of one output coordinate (d' = 1): F must have shape "
                f"(1, d, d, d) or (d, d, d), got {arr.shape}"
            )
        arr = arr[0]
    if arr.ndim != 3 or len(set(arr.shape)) != 1 or arr.shape[0] == 0:
        raise ValueError(f"F must have shape (d, d, d) or (1, d, d, d), got {np.shape(F)}")
    d = arr.shape[0]
    flat = uniform([scalar(x, "F") for x in arr.flat])
    full = np.empty(arr.shape, dtype=object)
    full.flat[:] = flat
    out = {}
    for p, q, r in itertools.product(range(d), repeat=3):
        if p <= q:
            diff = full[p, q, r] - full[q, p, r]
            if (diff if isinstance(diff, Fraction) else sympy.expand(diff)) != 0:
                raise ValueError(
                    f"F must be symmetric in its first two indices (F[p, q, r] = F[q, p, r]), "
                    f"but F[{p}, {q}, {r}] ≠ F[{q}, {p}, {r}]"
                )
            out[p, q, r] = full[p, q, r]
    return d, out


def orbit(K: Sequence[int]) -> int:
    """The number of distinct orderings of a multiset."""
    return math.factorial(len(K)) // math.prod(math.factorial(K.count(k)) for k in set(K))


def sym3(Fd: dict[tuple[int, int, int], Any], K: tuple[int, int, int]) -> Any:
    """``Sym(F)[K]``: the average of ``F`` over the distinct orderings of the multiset ``K``."""
    orders = set(itertools.permutations(K))
    total = sum(Fd[min(p, q), max(p, q), r] for p, q, r in orders)
    return total / len(orders) if isinstance(total, Fraction) else sympy.expand(total / len(orders))


def pair_indices(d: int) -> list[tuple[int, int]]:
    return [(p, q) for p in range(d) for q in range(p, d)]


def triple_indices(d: int) -> list[tuple[int, int, int]]:
    return list(itertools.combinations_with_replacement(range(d), 3))


class Coordinates:
    """The coordinates of one output coordinate, organised: ``cross[n][(p, q, r)]`` (0-based
    ``p ≤ q``, context column ``n`` 1-based) and ``diag[K]`` (sorted 0-based triple ``K``)."""

    def __init__(self, d: int, t: int, j: int, cross: dict, diag: dict):
        self.d, self.t, self.j, self.cross, self.diag = d, t, j, cross, diag

    @property
    def contexts(self) -> list[int]:
        return [n for n in range(1, self.t + 1) if n != self.j]

    @staticmethod
    def labels(d: int, t: int, j: int) -> list[tuple[Label, tuple]]:
        """Every label with its key: ``("cross", n, (p, q, r))`` or ``("diag", K)``."""
        out = []
        for n in range(1, t + 1):
            if n == j:
                continue
            for (p, q), r in itertools.product(pair_indices(d), range(d)):
                label = tuple(sorted([(p + 1, n), (q + 1, n), (r + 1, j)]))
                out.append((label, ("cross", n, (p, q, r))))
        for K in triple_indices(d):
            out.append((tuple((k + 1, j) for k in K), ("diag", K)))
        return out

    @classmethod
    def fromtensor(cls, Fd: dict, d: int, t: int, j: int) -> Coordinates:
        cross = {n: dict(Fd) for n in range(1, t + 1) if n != j}
        return cls(d, t, j, cross, {K: sym3(Fd, K) for K in triple_indices(d)})

    def as_dict(self) -> dict[Label, Any]:
        out = {}
        for label, key in self.labels(self.d, self.t, self.j):
            out[label] = self.cross[key[1]][key[2]] if key[0] == "cross" else self.diag[key[1]]
        return out

    @classmethod
    def from_dict(cls, y: Any) -> Coordinates:
        if not isinstance(y, Mapping) or not y:
            raise TypeError(
                "the coordinates must be a non-empty mapping label → value, as returned by "
                "scaled_coordinates"
            )
        try:
            pairs = [tuple(tuple(int(i) for i in pair) for pair in label) for label in y]
            rows = {r for label in pairs for r, _ in label}
            cols = {c for label in pairs for _, c in label}
        except (TypeError, ValueError):
            raise ValueError(
                "coordinate labels must be triples of 1-based (row, column) pairs, e.g. "
                "((1, 1), (2, 1), (1, 2))"
            ) from None
        d, t = max(rows), max(cols)
        diag_cols = {label[0][1] for label in pairs if len({c for _, c in label}) == 1}
        if len(diag_cols) != 1:
            raise ValueError(
                "cannot find the target column: the labels must contain the monomials "
                "x_{p,j} x_{q,j} x_{r,j} of exactly one column j"
            )
        (j,) = diag_cols
        expected = cls.labels(d, t, j)
        given = dict(zip(pairs, y.values()))
        missing = [lab for lab, _ in expected if lab not in given]
        extra = set(given) - {lab for lab, _ in expected}
        if missing or extra:
            raise ValueError(
                f"the labels are not those of d = {d}, t = {t}, target column j = {j}: "
                f"missing {missing[:3]}, unexpected {sorted(extra)[:3]}"
            )
        values = uniform([scalar(given[lab], "y") for lab, _ in expected])
        cross: dict[int, dict] = {n: {} for n in range(1, t + 1) if n != j}
        diag = {}
        for (_, key), val in zip(expected, values):
            if key[0] == "cross":
                cross[key[1]][key[2]] = val
            else:
                diag[key[1]] = val
        return cls(d, t, j, cross, diag)

    def vector(self) -> list[Any]:
        return list(self.as_dict().values())


def scaled_coordinates(F: ArrayLike, t: int, *, target: int = 1) -> dict[Label, Any]:
    """The scaled coefficient coordinates of one output coordinate, from the tensor ``F``.

    Column ``target`` of the single output row is ``Σ F[p, q, r] (X Xᵀ)[p, q] X[r, target]``;
    each of its coefficients (a coefficient of a monomial in the entries of ``X``), divided by
    the number of weight monomials it is a sum of, is one coordinate. Explained in
    :doc:`/book/notes/invariants`.

    Parameters
    ----------
    F : array-like, shape=[1, d, d, d] or [d, d, d]
        The coefficient tensor of a layer with one output row, symmetric in its first two
        indices (:func:`lsa_lib.singularities.function_coefficients`). Integers, fractions,
        sympy numbers, floats (read as the binary rationals they store: the tensor of integer
        weights is exact in float64) or sympy expressions (then the coordinates are polynomials).
    t : int
        The number of tokens.
    target : int
        The output column ``j``, 1-based (``1 ≤ j ≤ t``).

    Returns
    -------
    dict
        Label → exact value (``fractions.Fraction``, or a sympy expression for symbolic input);
        ``t ≥ 2``: ``(t − 1) · d²(d + 1)/2 + d(d + 1)(d + 2)/6`` entries, ``t = 1``:
        ``d(d + 1)(d + 2)/6``. The label of ``x_{p,n} x_{q,n} x_{r,j}`` (``n ≠ j``) is
        ``sorted(((p, n), (q, n), (r, j)))`` and its value ``F[p, q, r]``; the label of
        ``x_{p,j} x_{q,j} x_{r,j}`` is ``((p, j), (q, j), (r, j))`` (``p ≤ q ≤ r``) and its value
        ``Sym(F)[p, q, r]``, the average over the distinct orderings of ``(p, q, r)``.

    Raises
    ------
    ValueError
        If ``F`` has the wrong shape or is not symmetric in its first two indices, or
        ``target`` is not a column.
    TypeError
        If an entry is not a number or a sympy expression.
    """
    t = _checks.tokens(t)
    j = _checks.index(target, t, "target column")
    d, Fd = tensor(F)
    return Coordinates.fromtensor(Fd, d, t, j).as_dict()
