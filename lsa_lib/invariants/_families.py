"""The invariant families of ``M_{d,1,a}``, evaluated exactly (part of :mod:`lsa_lib.invariants`).

Each family is a list of polynomials in the scaled coordinates that vanish on the
neuromanifold: linear relations, minors of flattenings, the cubic pencil, syzygies of maximal
minors, Veronese catalecticants, resultants of slice quadrics, and (one token) the Chow
condition. Exact determinants and ranks come from :mod:`lsa_lib._exact`.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import sympy

from .. import _checks, _exact
from ._coordinates import Coordinates, Label, orbit, pair_indices, triple_indices

__all__: list[str] = []

_FAMILIES_CROSS = ("linear", "low rank", "cubic", "syzygy", "veronese", "resultant")
_FAMILIES_SINGLE = ("linear", "low rank", "chow")


def _expand(x: Any) -> Any:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return sympy.expand(x)


def _det(M: Sequence[Sequence[Any]]) -> Any:
    return _expand(_exact.det(M))


def _minors(M: Sequence[Sequence[Any]], k: int) -> list[Any]:
    """All ``k × k`` minors."""
    return [_expand(x) for x in _exact.minors(M, k)]


def _linear(Y: Coordinates) -> list[Any]:
    """Copies agree; the target column's coordinates are the symmetrization of a copy's."""
    if Y.t == 1:
        return []
    base, *others = Y.contexts
    out = [Y.cross[n][key] - Y.cross[base][key] for n in others for key in Y.cross[base]]
    for K in triple_indices(Y.d):
        # |orbit K| · Sym(F)[K] = Σ over the distinct ways K = {p, q} ⊎ {r} of |orbit {p, q}| F[p, q, r]
        total = orbit(K) * Y.diag[K]
        for r in sorted(set(K)):
            rest = list(K)
            rest.remove(r)
            p, q = rest
            total -= orbit((p, q)) * Y.cross[base][p, q, r]
        out.append(_expand(total))
    return out


def _flattening(Y: Coordinates, n: int) -> list[list[Any]]:
    """Rows: pairs ``p ≤ q``; columns ``r``: ``F[p, q, r]`` of context column ``n`` (= ``Φ(v) A``)."""
    return [[Y.cross[n][p, q, r] for r in range(Y.d)] for p, q in pair_indices(Y.d)]


def _slice(Y: Coordinates, n: int, k: int) -> list[list[Any]]:
    """The symmetric ``d × d`` slice ``F[·, ·, k]`` of context column ``n`` (= ``(v aₖᵀ + aₖ vᵀ)/2``)."""
    d = Y.d
    return [[Y.cross[n][min(r, s), max(r, s), k] for s in range(d)] for r in range(d)]


def _low_rank(Y: Coordinates, a: int) -> list[Any]:
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


def _cubics(Y: Coordinates) -> list[Any]:
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
        for p, q in pair_indices(d)
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


def _syzygies(Y: Coordinates) -> list[Any]:
    """Cauchy–Binet: the maximal minors of ``Φ(v) A`` are ``det A`` times those of ``Φ(v)``."""
    if Y.d < 3:
        return []
    kernel = _syzygy_kernel(Y.d)
    out = []
    for n in Y.contexts:
        flat = _flattening(Y, n)
        minors = _minors(flat, Y.d)  # the maximal minors, row sets in lexicographic order
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


def _veronese(Y: Coordinates, a: int) -> list[Any]:
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
    Y: Coordinates, lines: Sequence[tuple[Sequence[int], Sequence[int]]] | None
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
            pairs = pair_indices(d)
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
        if _exact.rank_q([alpha, beta]) < 2:
            raise ValueError(f"the two vectors of a line must be independent, got {item!r}")
        out.append((alpha, beta))
    return out


def _lie_flattening(Y: Coordinates) -> list[Any]:
    """``t = 1``: the cubic ``f = ℓ q`` has a positive-dimensional stabilizer in ``SL_d``."""
    d = Y.d
    if d < 3:
        return []
    f = {}
    for K in triple_indices(d):
        exp = tuple(K.count(i) for i in range(d))
        f[exp] = orbit(K) * Y.diag[K]

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
    monomials = [tuple(K.count(i) for i in range(d)) for K in triple_indices(d)]
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
    Y = Coordinates.from_dict(y)
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
