"""Algebraic invariants of one output coordinate (:doc:`/book/notes/invariants`).

With one output row (``d' = 1``, ``V = vᵀ``) the entry of ``φ(X) = V X Xᵀ A X`` in column
``j`` is a cubic form in the entries ``x_{k,n}`` of ``X``. Alexandr, Duan and Montúfar take its
coefficients, each divided by the number of weight monomials ``v_p A_{qr}`` it is a sum of, as
coordinates ("scaled coefficients"). In the book's tensor ``F``
(:func:`lsa_lib.singularities.function_coefficients`, ``k = 0``) they are:

* for every context column ``n ≠ j``, the coefficient of ``x_{p,n} x_{q,n} x_{r,j}`` (``p ≤ q``)
  is ``F[p, q, r]``: one copy of ``F`` per context column;
* for the target column itself, the coefficient of ``x_{p,j} x_{q,j} x_{r,j}`` is the full
  symmetrization ``Sym(F)[p, q, r]``.

A coordinate is named by its monomial: the sorted triple of its ``(row, column)`` index pairs,
1-based. :func:`scaled_coordinates` maps ``F`` to these coordinates exactly,
:func:`invariant_values` evaluates the invariant families at them, and :func:`variety_counts`
counts the coordinates, the linear relations among them, the dimension of the variety they
fill, and (smallest cases) its degree.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import flint
import numpy as np
import sympy
from numpy.typing import ArrayLike
from sympy.polys.orderings import grevlex

from . import _checks
from ._modp import DEFAULT_PRIME, rank_mod_p
from .rank import ExactRank, exact_rank

__all__ = ["scaled_coordinates", "invariant_values", "variety_counts"]

#: A coordinate's name: its monomial as the sorted triple of 1-based ``(row, column)`` pairs.
Label = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]

_FAMILIES_CROSS = ("linear", "low rank", "cubic", "syzygy", "veronese", "resultant")
_FAMILIES_SINGLE = ("linear", "low rank", "chow")
_PRIME = 2**31 - 1  # the finite field of the degree counts
_MODULUS = DEFAULT_PRIME  # below 2^20: products of two residues fit in int64
_MAX_DEGREE_COUNT = 100_000  # more standard monomials: the section is not finite


# ------------------------------------------------------------------------------------------
# exact scalars and the tensor F
# ------------------------------------------------------------------------------------------
def _scalar(x: Any, name: str) -> Fraction | sympy.Expr:
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


def _uniform(values: list[Any]) -> list[Any]:
    """All Fractions, or (when one is symbolic) all sympy."""
    if all(isinstance(v, Fraction) for v in values):
        return values
    return [
        sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v for v in values
    ]


def _tensor(F: Any) -> tuple[int, dict[tuple[int, int, int], Any]]:
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
    flat = _uniform([_scalar(x, "F") for x in arr.flat])
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


def _orbit(K: Sequence[int]) -> int:
    """The number of distinct orderings of a multiset."""
    return math.factorial(len(K)) // math.prod(math.factorial(K.count(k)) for k in set(K))


def _sym3(Fd: dict[tuple[int, int, int], Any], K: tuple[int, int, int]) -> Any:
    """``Sym(F)[K]``: the average of ``F`` over the distinct orderings of the multiset ``K``."""
    orders = set(itertools.permutations(K))
    total = sum(Fd[min(p, q), max(p, q), r] for p, q, r in orders)
    return total / len(orders) if isinstance(total, Fraction) else sympy.expand(total / len(orders))


def _pairs(d: int) -> list[tuple[int, int]]:
    return [(p, q) for p in range(d) for q in range(p, d)]


def _triples(d: int) -> list[tuple[int, int, int]]:
    return list(itertools.combinations_with_replacement(range(d), 3))


class _Coords:
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
            for (p, q), r in itertools.product(_pairs(d), range(d)):
                label = tuple(sorted([(p + 1, n), (q + 1, n), (r + 1, j)]))
                out.append((label, ("cross", n, (p, q, r))))
        for K in _triples(d):
            out.append((tuple((k + 1, j) for k in K), ("diag", K)))
        return out

    @classmethod
    def from_tensor(cls, Fd: dict, d: int, t: int, j: int) -> _Coords:
        cross = {n: dict(Fd) for n in range(1, t + 1) if n != j}
        return cls(d, t, j, cross, {K: _sym3(Fd, K) for K in _triples(d)})

    def as_dict(self) -> dict[Label, Any]:
        out = {}
        for label, key in self.labels(self.d, self.t, self.j):
            out[label] = self.cross[key[1]][key[2]] if key[0] == "cross" else self.diag[key[1]]
        return out

    @classmethod
    def from_dict(cls, y: Any) -> _Coords:
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
        values = _uniform([_scalar(given[lab], "y") for lab, _ in expected])
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
    d, Fd = _tensor(F)
    return _Coords.from_tensor(Fd, d, t, j).as_dict()


# ------------------------------------------------------------------------------------------
# exact linear algebra on Fractions or sympy expressions
# ------------------------------------------------------------------------------------------
def _expand(x: Any) -> Any:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return sympy.expand(x)


def _det(M: Sequence[Sequence[Any]]) -> Any:
    """The determinant of a small square matrix (Fractions exactly, sympy by Berkowitz)."""
    n = len(M)
    if n == 1:
        return M[0][0]
    if n == 2:
        return _expand(M[0][0] * M[1][1] - M[0][1] * M[1][0])
    if n == 3:
        return _expand(
            M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1])
            - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0])
            + M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])
        )
    if all(isinstance(x, Fraction) for row in M for x in row):
        D = flint.fmpq_mat(n, n, [flint.fmpq(x.numerator, x.denominator) for row in M for x in row])
        det = D.det()
        return Fraction(int(det.p), int(det.q))
    return sympy.expand(sympy.Matrix(M).det(method="berkowitz"))


def _minors(M: Sequence[Sequence[Any]], k: int) -> list[Any]:
    """All ``k × k`` minors."""
    rows, cols = range(len(M)), range(len(M[0]))
    return [
        _det([[M[r][c] for c in C] for r in R])
        for R in itertools.combinations(rows, k)
        for C in itertools.combinations(cols, k)
    ]


def _rank_q(rows: Sequence[Sequence[Any]]) -> int:
    """The exact rank over the rationals of a matrix of Fractions or integers."""
    return exact_rank([[Fraction(x) for x in row] for row in rows]).rank


# ------------------------------------------------------------------------------------------
# the invariant families
# ------------------------------------------------------------------------------------------
def _linear(Y: _Coords) -> list[Any]:
    """Copies agree; the target column's coordinates are the symmetrization of a copy's."""
    if Y.t == 1:
        return []
    base, *others = Y.contexts
    out = [Y.cross[n][key] - Y.cross[base][key] for n in others for key in Y.cross[base]]
    for K in _triples(Y.d):
        # |orbit K| · Sym(F)[K] = Σ over the distinct ways K = {p, q} ⊎ {r} of |orbit {p, q}| F[p, q, r]
        total = _orbit(K) * Y.diag[K]
        for r in sorted(set(K)):
            rest = list(K)
            rest.remove(r)
            p, q = rest
            total -= _orbit((p, q)) * Y.cross[base][p, q, r]
        out.append(_expand(total))
    return out


def _flattening(Y: _Coords, n: int) -> list[list[Any]]:
    """Rows: pairs ``p ≤ q``; columns ``r``: ``F[p, q, r]`` of context column ``n`` (= ``Φ(v) A``)."""
    return [[Y.cross[n][p, q, r] for r in range(Y.d)] for p, q in _pairs(Y.d)]


def _slice(Y: _Coords, n: int, k: int) -> list[list[Any]]:
    """The symmetric ``d × d`` slice ``F[·, ·, k]`` of context column ``n`` (= ``(v aₖᵀ + aₖ vᵀ)/2``)."""
    d = Y.d
    return [[Y.cross[n][min(r, s), max(r, s), k] for s in range(d)] for r in range(d)]


def _low_rank(Y: _Coords, a: int) -> list[Any]:
    d = Y.d
    if Y.t == 1:  # N[k, l] = Sym(F)[k, k, l] = (2 vₖ Sₖₗ + Sₖₖ vₗ)/3 with S = sym(A): rank ≤ 2a + 1
        size = 2 * a + 2
        if size > d:
            return []
        N = [[Y.diag[tuple(sorted((k, k, l)))] for l in range(d)] for k in range(d)]
        return _minors(N, size)
    if a >= d:
        return []
    return [m for n in Y.contexts for m in _minors(_flattening(Y, n), a + 1)]


def _cubics(Y: _Coords) -> list[Any]:
    """Coefficients in ``c`` of the 3 × 3 minors of the pencil ``Σ cₖ F[·, ·, k]`` (rank ≤ 2)."""
    d = Y.d
    if d < 3:
        return []
    out = []
    for n in Y.contexts:
        slices = [_slice(Y, n, k) for k in range(d)]
        for R in itertools.combinations(range(d), 3):
            for C in itertools.combinations(range(d), 3):
                if C < R:  # the pencil is symmetric: minor(R, C) = minor(C, R)
                    continue
                for m in itertools.combinations_with_replacement(range(d), 3):
                    # multilinear in the rows: row i of the minor comes from slice σᵢ
                    total = 0
                    for sigma in set(itertools.permutations(m)):
                        total += _det([[slices[s][r][c] for c in C] for s, r in zip(sigma, R)])
                    out.append(_expand(total))
    return out


@functools.lru_cache(maxsize=8)
def _syzygy_kernel(d: int) -> tuple[tuple[int, ...], ...]:
    """Integer vectors ``c`` with ``Σ_R c_R det Φ(v)[R, :] = 0`` identically in ``v``."""
    v = sympy.symbols(f"v0:{d}")
    Phi = [
        [(v[p] * int(q == c) + v[q] * int(p == c)) / sympy.Integer(2) for c in range(d)]
        for p, q in _pairs(d)
    ]
    minors = [
        sympy.Poly(sympy.Matrix([Phi[r] for r in R]).det(method="berkowitz"), *v)
        for R in itertools.combinations(range(len(Phi)), d)
    ]
    monomials = sorted({m for f in minors for m in f.monoms()})
    coeff = sympy.Matrix([[f.coeff_monomial(m) for f in minors] for m in monomials])
    basis = []
    for vec in coeff.nullspace():
        scale = sympy.ilcm(*[x.q for x in vec])
        basis.append(tuple(int(x * scale) for x in vec))
    return tuple(basis)


def _syzygies(Y: _Coords) -> list[Any]:
    """Cauchy–Binet: the maximal minors of ``Φ(v) A`` are ``det A`` times those of ``Φ(v)``."""
    if Y.d < 3:
        return []
    kernel = _syzygy_kernel(Y.d)
    out = []
    for n in Y.contexts:
        flat = _flattening(Y, n)
        minors = [_det([flat[r] for r in R]) for R in itertools.combinations(range(len(flat)), Y.d)]
        for c in kernel:
            out.append(_expand(sum(ci * m for ci, m in zip(c, minors) if ci)))
    return out


def _retraction(alpha: tuple[int, ...]) -> list[int]:
    """A map ``f: [r] → [r]`` with ``|f⁻¹(m)| = αₘ`` fixing every ``m`` with ``αₘ > 0``."""
    extra = [m for m, k in enumerate(alpha) for _ in range(k - 1)]
    it = iter(extra)
    return [p if alpha[p] > 0 else next(it) for p in range(len(alpha))]


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    return [
        tuple(b - a - 1 for a, b in zip((-1, *bars), (*bars, total + parts - 1)))
        for bars in itertools.combinations(range(total + parts - 1), parts - 1)
    ]


def _veronese(Y: _Coords, a: int) -> list[Any]:
    """``D_α(K, L) = v_K^α det A[K, L]``: rank-one catalecticants in ``α``, proportional in ``L``."""
    d = Y.d
    out = []
    for n in Y.contexts:
        Fn = Y.cross[n]

        def G(
            u: int, w: int, ell: int, Fn: dict = Fn
        ) -> Any:  # coefficient of x_u x_w in slice ell
            return (1 if u == w else 2) * Fn[min(u, w), max(u, w), ell]

        for r in range(2, min(a, d) + 1):
            alphas = _compositions(r, r)
            subsets = list(itertools.combinations(range(d), r))
            for K in subsets:
                D = {}
                for L in subsets:
                    for alpha in alphas:
                        f = _retraction(alpha)
                        D[L, alpha] = _det(
                            [[G(K[f[p]], K[p], L[q]) for q in range(r)] for p in range(r)]
                        )
                units, gammas = _compositions(1, r), _compositions(r - 1, r)
                block = [
                    [
                        D[L, tuple(b + g for b, g in zip(beta, gamma))]
                        for L in subsets
                        for gamma in gammas
                    ]
                    for beta in units
                ]
                out += _minors(block, 2)
                if len(subsets) > 1:
                    out += _minors([[D[L, alpha] for L in subsets] for alpha in alphas], 2)
    return out


def _default_lines(d: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    e = [tuple(int(i == k) for i in range(d)) for k in range(d)]
    ones = tuple([1] * d)
    lines = [(e[i], e[k]) for i, k in itertools.combinations(range(d), 2)]
    return lines + ([(ones, e[k]) for k in range(d)] if d > 2 else [])


def _resultants(
    Y: _Coords, lines: Sequence[tuple[Sequence[int], Sequence[int]]] | None
) -> list[Any]:
    """Coefficients in ``(u, w)`` of ``Res(Σ uₛ qₛ|ℓ, Σ wₛ qₛ|ℓ)`` for slice quadrics ``qₛ``."""
    d = Y.d
    if d < 2:
        return []
    lines = _default_lines(d) if lines is None else _check_lines(lines, d)
    out = []
    for n in Y.contexts:
        slices = [_slice(Y, n, s) for s in range(d)]
        for alpha, beta in lines:

            def form(M: list[list[Any]], x: Sequence[int], z: Sequence[int]) -> Any:
                return sum(x[i] * M[i][k] * z[k] for i in range(d) for k in range(d))

            # q_s restricted to the line x = σ α + τ β: A_s σ² + B_s στ + C_s τ²
            A = [form(M, alpha, alpha) for M in slices]
            B = [2 * form(M, alpha, beta) for M in slices]
            C = [form(M, beta, beta) for M in slices]

            def E(X: list[Any], Z: list[Any]) -> list[list[Any]]:
                return [[X[s] * Z[k] - X[k] * Z[s] for k in range(d)] for s in range(d)]

            EAC, EAB, EBC = E(A, C), E(A, B), E(B, C)
            # Res(f, g) = (f_A g_C − g_A f_C)² − (f_A g_B − g_A f_B)(f_B g_C − g_B f_C), and
            # f_X g_Z − g_X f_Z = uᵀ E(X, Z) w
            pairs = _pairs(d)
            for i, (s1, s2) in enumerate(pairs):
                for k1, k2 in pairs[i:]:
                    if not ((s1 != k1 and s2 != k2) or (s1 != k2 and s2 != k1)):
                        continue  # Res is a quadratic form in uᵢwₖ − uₖwᵢ: no such monomial
                    total = 0
                    for a1, a2 in {(s1, s2), (s2, s1)}:
                        for b1, b2 in {(k1, k2), (k2, k1)}:
                            total += EAC[a1][b1] * EAC[a2][b2] - EAB[a1][b1] * EBC[a2][b2]
                    out.append(_expand(total))
    return out


def _check_lines(lines: Any, d: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Pairs of independent integer vectors of length ``d``."""
    if isinstance(lines, (str, bytes)) or not isinstance(lines, Sequence):
        raise TypeError("lines must be a sequence of pairs (α, β) of integer vectors")
    out = []
    for item in lines:
        try:
            alpha, beta = (tuple(operator.index(x) for x in vec) for vec in item)
        except (TypeError, ValueError):
            raise TypeError(
                f"each line must be a pair (α, β) of integer vectors of length {d}, got {item!r}"
            ) from None
        if len(alpha) != d or len(beta) != d:
            raise ValueError(f"a line needs two vectors of length d = {d}, got {item!r}")
        if _rank_q([alpha, beta]) < 2:
            raise ValueError(f"the two vectors of a line must be independent, got {item!r}")
        out.append((alpha, beta))
    return out


def _lie_flattening(Y: _Coords) -> list[Any]:
    """``t = 1``: the cubic ``f = ℓ q`` has a positive-dimensional stabilizer in ``SL_d``."""
    d = Y.d
    if d < 3:
        return []
    f = {}
    for K in _triples(d):
        exp = tuple(K.count(i) for i in range(d))
        f[exp] = _orbit(K) * Y.diag[K]

    def apply(u: int, w: int) -> dict[tuple[int, ...], Any]:  # x_u ∂f/∂x_w
        g: dict[tuple[int, ...], Any] = {}
        for exp, c in f.items():
            if exp[w]:
                new = list(exp)
                new[w] -= 1
                new[u] += 1
                g[tuple(new)] = g.get(tuple(new), 0) + exp[w] * c
        return g

    ops = [(u, w) for u in range(d) for w in range(d) if u != w]
    columns = [apply(u, w) for u, w in ops]
    last = apply(d - 1, d - 1)
    for u in range(d - 1):
        h = apply(u, u)
        columns.append({m: h.get(m, 0) - last.get(m, 0) for m in set(h) | set(last)})
    monomials = [tuple(K.count(i) for i in range(d)) for K in _triples(d)]
    M = [[col.get(m, 0) for col in columns] for m in monomials]
    M = [[x if not isinstance(x, int) else Fraction(x) for x in row] for row in M]
    return _minors(M, d * d - 1)


_FAMILY_CODE: dict[str, Callable[..., list[Any]]] = {
    "linear": lambda Y, a, lines: _linear(Y),
    "low rank": lambda Y, a, lines: _low_rank(Y, a),
    "cubic": lambda Y, a, lines: _cubics(Y),
    "syzygy": lambda Y, a, lines: _syzygies(Y),
    "veronese": lambda Y, a, lines: _veronese(Y, a),
    "resultant": lambda Y, a, lines: _resultants(Y, lines),
    "chow": lambda Y, a, lines: _lie_flattening(Y),
}


def invariant_values(
    y: Mapping[Label, Any],
    a: int,
    families: str | Sequence[str] | None = None,
    *,
    lines: Sequence[tuple[Sequence[int], Sequence[int]]] | None = None,
) -> dict[str, list[Any]]:
    """The invariant families of the neuromanifold ``M_{d,1,a}``, evaluated exactly at ``y``.

    Each family is a list of polynomials in the coordinates that vanish on the neuromanifold;
    this returns their values. Every value is ``0`` at the coordinates of a point of
    ``M_{d,1,a}``; a point off it makes some value non-zero. Explained in
    :doc:`/book/notes/invariants`.

    Parameters
    ----------
    y : mapping
        Coordinates as returned by :func:`scaled_coordinates` (``d``, ``t`` and the target
        column are read from the labels); values exact or sympy expressions (then the values
        returned are the polynomials themselves).
    a : int
        The attention rank bound ``rk A ≤ a``.
    families : str or sequence of str, optional
        Default: every family of the regime. For ``t ≥ 2``:

        * ``"linear"``: the context columns' copies agree, and the target column's coordinates
          are the symmetrization of a copy: ``(t − 2) d²(d + 1)/2 + d(d + 1)(d + 2)/6``
          independent linear forms;
        * ``"low rank"`` (``a < d``): the ``(a + 1)``-minors of each flattening
          ``F[(p, q), r] = (Φ(v) A)[(p, q), r]``;
        * ``"cubic"`` (``d ≥ 3``): the coefficients of the ``3 × 3`` minors of the pencil
          ``Σ cₖ F[·, ·, k] = (v (Ac)ᵀ + (Ac) vᵀ)/2`` (rank ≤ 2);
        * ``"syzygy"`` (``d ≥ 3``): linear combinations of the maximal minors of a flattening
          that vanish because those of ``Φ(v)`` satisfy them (degree ``d``);
        * ``"veronese"`` (``2 ≤ r ≤ min(a, d)``): 2 × 2 minors of catalecticants of the
          ``r × r`` determinants ``D_α(K, L) = v_K^α det A[K, L]`` (degree ``2r``);
        * ``"resultant"`` (``d ≥ 2``): the coefficients of the resultant of two combinations of
          the slice quadrics ``qₛ(x) = (v·x)((A eₛ)·x)`` restricted to a line (quartics; all
          slices share the factor ``v·x``).

        For ``t = 1`` (only the target column): ``"linear"`` (none: the cubics ``ℓ q`` span
        all cubics), ``"low rank"`` (the ``(2a + 2)``-minors of ``Sym(F)[k, k, l]``, when
        ``2a + 2 ≤ d``) and ``"chow"`` (``d ≥ 3``: the maximal minors of the matrix of
        ``x_u ∂f/∂x_w`` over a basis of ``sl_d``, since ``f = ℓ q`` has a positive-dimensional
        stabilizer).
    lines : sequence of pairs of integer vectors, optional
        The lines ``x = σα + τβ`` of the resultant family; default the coordinate lines
        ``(eᵢ, eₖ)``, and for ``d ≥ 3`` also ``(𝟙, eₖ)``.

    Returns
    -------
    dict
        Family name → list of exact values (``Fraction`` or sympy expressions); a family with
        no members for these ``(d, a, t)`` gives an empty list.

    Raises
    ------
    ValueError
        If a family is unknown or does not belong to the regime of ``t``, or the coordinates'
        labels are not those of one output coordinate.
    """
    Y = _Coords.from_dict(y)
    a = _checks.size(a, "a (the attention rank bound)")
    known = _FAMILIES_SINGLE if Y.t == 1 else _FAMILIES_CROSS
    if families is None:
        names = list(known)
    else:
        names = [families] if isinstance(families, str) else list(families)
        for name in names:
            if name not in known:
                raise ValueError(
                    f"unknown family {name!r} for t = {Y.t}: choose from {', '.join(known)}"
                )
    return {name: _FAMILY_CODE[name](Y, a, lines) for name in names}


# ------------------------------------------------------------------------------------------
# counts: coordinates, linear span, dimension, degree
# ------------------------------------------------------------------------------------------
def _tensor_of(
    v: Sequence[Any], A: Sequence[Sequence[Any]]
) -> dict[tuple[int, int, int], Fraction]:
    """``F[p, q, r] = (v_p A_{qr} + v_q A_{pr}) / 2`` for ``p ≤ q``, exactly."""
    d = len(v)
    return {
        (p, q, r): Fraction(v[p] * A[q][r] + v[q] * A[p][r], 2)
        for (p, q), r in itertools.product(_pairs(d), range(d))
    }


def _product(B: Sequence[Sequence[Any]], C: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """``B Cᵀ``."""
    return [[sum(b * c for b, c in zip(Bi, Ck)) for Ck in C] for Bi in B]


def _vector(Fd: dict, d: int, t: int) -> list[Any]:
    return _Coords.from_tensor(Fd, d, t, 1).vector()


def _dimension_bounds(d: int, a: int, t: int, rng: np.random.Generator) -> ExactRank:
    """Jacobian rank (lower) and parameters minus symmetry orbit (upper), exactly.

    Both bounds hold at every point; a point with small integer entries can be special (for
    ``d = 2``, ``a = 1``, ``v`` parallel to a factor of ``A``), so up to five points are tried
    and the best bounds kept.
    """
    best = _bounds_at_a_point(d, a, t, rng)
    for _ in range(4):
        if best.certified:
            break
        other = _bounds_at_a_point(d, a, t, rng)
        best = ExactRank(
            max(best.lower, other.lower), min(best.upper, other.upper), best.n_params, None
        )
    return best


def _bounds_at_a_point(d: int, a: int, t: int, rng: np.random.Generator) -> ExactRank:
    def ints(*shape: int) -> list:
        return rng.integers(-9, 10, size=shape).tolist()

    v = ints(d)
    r = min(a, d)
    B, C = ints(d, r), ints(d, r)
    A = _product(B, C)
    cols = [_vector(_tensor_of([int(i == k) for i in range(d)], A), d, t) for k in range(d)]
    for i, k in itertools.product(range(d), range(r)):
        dB = [[C[x][k] if y == i else 0 for x in range(d)] for y in range(d)]  # eᵢ C[:, k]ᵀ
        dC = [[B[y][k] if x == i else 0 for x in range(d)] for y in range(d)]  # B[:, k] eᵢᵀ
        cols += [_vector(_tensor_of(v, dB), d, t), _vector(_tensor_of(v, dC), d, t)]
    lower = _rank_q(list(map(list, zip(*cols))))
    if t >= 2:
        # (cv, B/c, C) and (B G, C G⁻ᵀ) fix the function: tangents (v, −B, 0), (0, B E, −C Eᵀ)
        P = d + 2 * d * r
        gens = [v + [-x for row in B for x in row] + [0] * (d * r)]
        for e1, e2 in itertools.product(range(r), repeat=2):
            BE = [[B[y][e1] if k == e2 else 0 for k in range(r)] for y in range(d)]
            CE = [[-C[y][e2] if k == e1 else 0 for k in range(r)] for y in range(d)]
            gens.append([0] * d + [x for row in BE for x in row] + [x for row in CE for x in row])
        return ExactRank(lower, P - _rank_q(gens), P, None)
    # t = 1 sees only S = sym(A), i.e. every symmetric matrix of rank ≤ s = min(2a, d): in the
    # parametrization (v, W) ↦ Sym(v ⊗ W Wᵀ) the scaling (c² v, W / c) and W ↦ W O (O ∈ O(s))
    # fix the function
    s = min(2 * a, d)
    W = ints(d, s)
    P = d + d * s
    gens = [[2 * x for x in v] + [-x for row in W for x in row]]
    for e1, e2 in itertools.combinations(range(s), 2):
        WE = [
            [W[y][e2] if k == e1 else (-W[y][e1] if k == e2 else 0) for k in range(s)]
            for y in range(d)
        ]
        gens.append([0] * d + [x for row in WE for x in row])
    return ExactRank(lower, P - _rank_q(gens), P, None)


def _determinantal_degree(d: int, a: int) -> int:
    """The degree of the variety of ``d × d`` matrices of rank ≤ ``a``."""
    out = Fraction(1)
    for i in range(d - a):
        out *= Fraction(
            math.factorial(i) * math.factorial(d + i),
            math.factorial(a + i) * math.factorial(d - a + i),
        )
    return int(out)


def _degree_formula(d: int, a: int) -> int:
    """``C(d − 1 + m, d − 1) · deg D_a / (2 if a = 1)``, ``m = a(2d − a) − 1`` (see the chapter)."""
    a = min(a, d)
    m = a * (2 * d - a) - 1
    total = math.comb(d - 1 + m, d - 1) * _determinantal_degree(d, a)
    return total // 2 if a == 1 and d >= 2 else total


def _det_mod(M: list[list[int]], p: int) -> int:
    return int(flint.nmod_mat(M, p).det())


def _interpolate(
    values: Callable[[tuple[int, ...]], list[int]], n_vars: int, deg: int, p: int
) -> list[dict[tuple[int, ...], int]]:
    """Coefficients (mod ``p``) of polynomials of degree ≤ ``deg`` in each variable, from their
    values (a list, one per polynomial) on the grid ``{0, …, deg}^n_vars``."""
    nodes = list(range(deg + 1))
    Vinv = flint.nmod_mat([[pow(x, k, p) for k in nodes] for x in nodes], p).inv()
    inv = np.array([[int(Vinv[i, k]) for k in nodes] for i in nodes], dtype=object)
    grid = list(itertools.product(nodes, repeat=n_vars))
    table = [values(point) for point in grid]
    out = []
    for m in range(len(table[0])):
        T = np.empty((deg + 1,) * n_vars, dtype=object)
        for point, vals in zip(grid, table):
            T[point] = vals[m] % p
        for axis in range(n_vars):
            T = np.moveaxis(np.tensordot(inv, T, axes=([1], [axis])) % p, 0, axis)
        out.append({e: int(c) for e, c in np.ndenumerate(T) if int(c) % p})
    return out


def _count_solutions(polys: list[dict[tuple[int, ...], int]], n_vars: int, p: int) -> int:
    """The number of solutions (with multiplicity) over the algebraic closure of ``GF(p)``."""
    xs = sympy.symbols(f"z0:{n_vars}")
    exprs = [sympy.Poly.from_dict(f, *xs, modulus=p).as_expr() for f in polys if f]
    G = sympy.groebner(exprs, *xs, modulus=p, order="grevlex")
    leads = [g.monoms(order=grevlex)[0] for g in G.polys]
    count, frontier, seen = 0, [(0,) * n_vars], {(0,) * n_vars}
    while frontier:
        m = frontier.pop()
        if any(all(mi >= li for mi, li in zip(m, lead)) for lead in leads):
            continue
        count += 1
        if count > _MAX_DEGREE_COUNT:
            raise RuntimeError("the random linear section is not finite: try another seed")
        for i in range(n_vars):
            nxt = m[:i] + (m[i] + 1,) + m[i + 1 :]
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return count


def _adjugate(M: list[list[int]], p: int) -> tuple[int, list[list[int]]]:
    """``(det M, adj M)`` mod ``p``: the columns of ``adj M`` span the kernel at corank one."""
    n = len(M)
    N = flint.nmod_mat(M, p)
    det = int(N.det())
    if det:
        inv = N.inv()
        return det, [[det * int(inv[i, k]) % p for k in range(n)] for i in range(n)]
    adj = [
        [
            (-1) ** (i + k)
            * _det_mod([[M[r][c] for c in range(n) if c != i] for r in range(n) if r != k], p)
            % p
            for k in range(n)
        ]
        for i in range(n)
    ]
    return det, adj


def _degree_count(d: int, a: int, rng: np.random.Generator) -> int:
    """Points of the variety on a random linear space of complementary dimension, over ``GF(p)``.

    The variety lives in the span of ``F`` (the coordinates are an injective linear image of
    it). ``dim − 1`` random linear forms cut its cone in finitely many lines. The forms are
    linear in one factor once the other is fixed, so the lines are found in two variables:

    * ``a ≥ d``: ``F = sym(v ⊗ A)`` is linear in ``A``; the points are the ``v = (1, z)`` where the
      ``(dim − 1) × d²`` matrix of the forms drops rank (its maximal minors vanish);
    * ``a = d − 1 = 2``: the matrix is square; at ``v`` on its determinant curve its kernel
      (a column of the adjugate) must be a singular matrix ``A``;
    * ``a = 1``: ``F[p, q, r] = S[p, q] c[r]`` with ``S = sym(v ⊗ b)`` a product of two linear
      forms, linear in ``S``; the points are the ``c = (1, z)`` where the square matrix of the
      forms is singular and (``d = 3``) its kernel ``S`` is singular too.

    Each point is counted with its multiplicity (the number of standard monomials of a Gröbner
    basis); on a random linear space they are simple.
    """
    p = _PRIME
    a = min(a, d)
    dim = 2 * a * d + d - a * a - 1
    coords = list(itertools.product(_pairs(d), range(d)))
    lam = [[int(x) for x in rng.integers(0, p, size=len(coords))] for _ in range(dim - 1)]
    n_vars = d - 1

    def in_A(z: tuple[int, ...]) -> list[list[int]]:  # rows: the forms as linear maps of A
        v = (1, *z)
        rows = []
        for L in lam:
            row = [0] * (d * d)  # 2 F[p, q, r] = v_p A_{qr} + v_q A_{pr}
            for c, ((p_, q), r) in zip(L, coords):
                row[q * d + r] += c * v[p_]
                row[p_ * d + r] += c * v[q]
            rows.append([x % p for x in row])
        return rows

    def in_S(z: tuple[int, ...]) -> list[list[int]]:  # rows: the forms as linear maps of S
        c = (1, *z)
        pairs = _pairs(d)
        return [
            [
                sum(x * c[r] for x, ((p_, q), r) in zip(L, coords) if (p_, q) == pq) % p
                for pq in pairs
            ]
            for L in lam
        ]

    def kernel_matrix(column: list[int]) -> list[list[int]]:
        if a == 1:  # the kernel is S, listed by pairs p ≤ q
            S = [[0] * d for _ in range(d)]
            for x, (p_, q) in zip(column, _pairs(d)):
                S[p_][q] = S[q][p_] = x
            return S
        return [column[i * d : (i + 1) * d] for i in range(d)]

    if a == d:
        size = d * d
        row_sets = list(itertools.combinations(range(dim - 1), size))

        def minors(z: tuple[int, ...]) -> list[int]:
            M = in_A(z)
            return [_det_mod([M[i] for i in rows], p) for rows in row_sets]

        polys = _interpolate(minors, n_vars, size, p)
    elif a == 1 or (d, a) == (3, 2):
        matrix = in_S if a == 1 else in_A
        n = len(matrix((0,) * n_vars))
        with_kernel = not (a == 1 and d == 2)  # d = 2: every binary quadric is a product
        mix = [[int(x) for x in rng.integers(0, p, size=n)] for _ in range(2)]

        def values(z: tuple[int, ...]) -> list[int]:
            det, adj = _adjugate(matrix(z), p)
            if not with_kernel:
                return [det]
            # two random combinations of the adjugate's columns: kernel vectors that vanish
            # together nowhere on the determinant curve (generically)
            columns = [[sum(x * w for x, w in zip(row, ws)) % p for row in adj] for ws in mix]
            return [det] + [_det_mod(kernel_matrix(col), p) for col in columns]

        polys = _interpolate(values, n_vars, d * (n - 1) if with_kernel else n, p)
    else:
        raise ValueError(
            f"the degree is counted for d ∈ {{2, 3}} only (got d = {d}, a = {a}); "
            "the formula covers every case"
        )
    return _count_solutions(polys, n_vars, p)


def _vanishing_bound(d: int, a: int, t: int, k: int, rng: np.random.Generator) -> int:
    """An upper bound on the number of independent degree-``k`` forms vanishing on the variety.

    In the coordinates of its span (``F[p, q, r]``, ``p ≤ q``, for ``t ≥ 2``; ``Sym(F)`` for
    ``t = 1``): the number of monomials minus the rank, modulo a prime, of their values at as
    many random points of the variety (over the prime field) plus ten. A rank modulo ``p`` at
    chosen points is at most the rank over the rationals at generic points, so the count is at
    least the true one.
    """
    p = _MODULUS
    r = min(a, d)
    monomials = None
    rows = []
    while monomials is None or len(rows) < len(monomials) + 10:
        v = [int(x) for x in rng.integers(0, p, size=d)]
        B, C = rng.integers(0, p, size=(d, r)), rng.integers(0, p, size=(d, r))
        A = [
            [sum(int(B[i, m]) * int(C[j, m]) for m in range(r)) % p for j in range(d)]
            for i in range(d)
        ]
        F = {
            key: (v[key[0]] * A[key[1]][key[2]] + v[key[1]] * A[key[0]][key[2]]) % p
            for key in itertools.product(range(d), repeat=3)
            if key[0] <= key[1]
        }
        if t >= 2:
            x = [F[key] for key in sorted(F)]
        else:  # 6 Sym(F)[K] = Σ over the orderings of K, each distinct one |stabilizer| times
            x = [
                sum(F[min(i, j), max(i, j), l] for i, j, l in itertools.permutations(K)) % p
                for K in _triples(d)
            ]
        if monomials is None:
            monomials = np.array(list(itertools.combinations_with_replacement(range(len(x)), k)))
        vals = np.ones(len(monomials), dtype=np.int64)
        xs = np.array(x, dtype=np.int64)
        for col in monomials.T:
            vals = vals * xs[col] % p
        rows.append(vals.tolist())
    return len(monomials) - rank_mod_p(np.array(rows, dtype=np.int64), p)


def variety_counts(
    d: int,
    a: int,
    t: int,
    *,
    degree: bool = False,
    vanishing_degree: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """How many coordinates, linear relations, dimensions (and degree) one output coordinate has.

    The variety is the closure of the set of coordinates (:func:`scaled_coordinates`) of the
    points of ``M_{d,1,a}``. Explained in :doc:`/book/notes/invariants`.

    Parameters
    ----------
    d, a, t : int
        Input width, attention rank bound, tokens.
    degree : bool
        Also count the degree (``t ≥ 2``, ``d ∈ {2, 3}``): the points on a random linear space
        of complementary dimension over ``GF(2³¹ − 1)`` (a Gröbner basis in two variables).
    vanishing_degree : int, optional
        Also bound the number of independent forms of this degree that vanish on the variety,
        in the coordinates of its linear span.
    seed : int
        Seeds the random points, the linear space and the parametrization's point.

    Returns
    -------
    dict
        * ``"coordinates"``: their number ``N``;
        * ``"span"``: the dimension of their linear span, the exact rank of the coordinates of
          ``N + 5`` random integer points of the variety;
        * ``"linear relations"``: ``N − span``;
        * ``"dimension"``: a :class:`lsa_lib.rank.ExactRank` over the rationals: the rank of
          the Jacobian of the weights ↦ coordinates at a random integer point (lower bound) and
          the number of weights minus the rank of the symmetries' tangents (upper bound; for
          ``t = 1`` in the parametrization by ``(v, S)`` with ``S = W Wᵀ`` symmetric of rank
          ``≤ min(2a, d)``, which has the same closure);
        * ``"degree formula"`` (``t ≥ 2``; ``None`` for ``t = 1``): ``C(d − 1 + m, d − 1)
          · deg D_a``, halved when ``a = 1``, with ``D_a`` the ``d × d`` matrices of rank
          ``≤ a`` (dimension ``m + 1 = a(2d − a)``);
        * ``"degree"`` (only with ``degree=True``): the count over the finite field;
        * ``"vanishing forms"`` (only with ``vanishing_degree=k``): an upper bound on the number
          of independent forms of degree ``k`` (in the ``F[p, q, r]``, ``p ≤ q``, for ``t ≥ 2``,
          in the ``Sym(F)[p, q, r]`` for ``t = 1``) vanishing on the variety: the number of
          monomials minus the rank, modulo ``1048573``, of their values at random points of the
          variety. Invariants known to vanish and independent over the rationals give a lower
          bound; when the two meet, they span those forms.

    Raises
    ------
    ValueError
        If a size is not a positive integer, or the degree is asked outside the cases counted.
    """
    d = _checks.size(d, "d")
    a = _checks.size(a, "a (the attention rank bound)")
    t = _checks.tokens(t)
    rng = np.random.default_rng(_checks.seed(seed))
    n_coord = len(_Coords.labels(d, t, 1))
    points = []
    for _ in range(n_coord + 5):
        v = rng.integers(-9, 10, size=d).tolist()
        r = min(a, d)
        B, C = (
            rng.integers(-9, 10, size=(d, r)).tolist(),
            rng.integers(-9, 10, size=(d, r)).tolist(),
        )
        points.append(_vector(_tensor_of(v, _product(B, C)), d, t))
    span = _rank_q(points)
    out: dict[str, Any] = {
        "coordinates": n_coord,
        "span": span,
        "linear relations": n_coord - span,
        "dimension": _dimension_bounds(d, a, t, rng),
        "degree formula": _degree_formula(d, a) if t >= 2 else None,
    }
    if _checks.flag(degree, "degree"):
        if t < 2 or d not in (2, 3):
            raise ValueError(
                f"the degree is counted for t ≥ 2 and d ∈ {{2, 3}} only, got d = {d}, t = {t}"
            )
        out["degree"] = _degree_count(d, a, rng)
    if vanishing_degree is not None:
        k = _checks.size(vanishing_degree, "vanishing_degree")
        out["vanishing forms"] = _vanishing_bound(d, a, t, k, rng)
    return out
