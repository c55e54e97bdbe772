"""How many coordinates, relations, dimensions and degrees one output coordinate has.

Part of :mod:`lsa_lib.invariants`: the linear span of the coordinates, the dimension of the
variety they fill (certified bounds over the rationals), its degree (points on a random linear
space over a prime field, counted by a Gröbner basis), the formula for the degree, and bounds
on the forms of one degree that vanish on it. Exact linear algebra from :mod:`lsa_lib._exact`,
one prime for every count modulo a prime (:data:`lsa_lib._exact.PRIME`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from .. import _checks, _exact, _limits
from ..rank import ExactRank
from ._coordinates import Coordinates, pair_indices, triple_indices

__all__: list[str] = []

_MAX_DEGREE_COUNT = 100_000  # more standard monomials: the section is not finite


def _tensor_of(
    v: Sequence[Any], A: Sequence[Sequence[Any]]
) -> dict[tuple[int, int, int], Fraction]:
    """``F[p, q, r] = (v_p A_{qr} + v_q A_{pr}) / 2`` for ``p ≤ q``, exactly."""
    d = len(v)
    return {
        (p, q, r): Fraction(v[p] * A[q][r] + v[q] * A[p][r], 2)
        for (p, q), r in itertools.product(pair_indices(d), range(d))
    }


def _product(B: Sequence[Sequence[Any]], C: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """``B Cᵀ``."""
    return [[sum(b * c for b, c in zip(Bi, Ck)) for Ck in C] for Bi in B]


def _vector(Fd: dict, d: int, t: int) -> list[Any]:
    return Coordinates.fromtensor(Fd, d, t, 1).vector()


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
    lower = _exact.rank_q(list(map(list, zip(*cols))))
    if t >= 2:
        # (cv, B/c, C) and (B G, C G⁻ᵀ) fix the function: tangents (v, −B, 0), (0, B E, −C Eᵀ)
        P = d + 2 * d * r
        gens = [v + [-x for row in B for x in row] + [0] * (d * r)]
        for e1, e2 in itertools.product(range(r), repeat=2):
            BE = [[B[y][e1] if k == e2 else 0 for k in range(r)] for y in range(d)]
            CE = [[-C[y][e2] if k == e1 else 0 for k in range(r)] for y in range(d)]
            gens.append([0] * d + [x for row in BE for x in row] + [x for row in CE for x in row])
        return ExactRank(lower, P - _exact.rank_q(gens), P, None)
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
    return ExactRank(lower, P - _exact.rank_q(gens), P, None)


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


def _interpolate(
    values: Callable[[tuple[int, ...]], list[int]], n_vars: int, deg: int, p: int
) -> list[dict[tuple[int, ...], int]]:
    """Coefficients (mod ``p``) of polynomials of degree ≤ ``deg`` in each variable, from their
    values (a list, one per polynomial) on the grid ``{0, …, deg}^n_vars``."""
    nodes = list(range(deg + 1))
    inv = np.array(_exact.inv_mod([[pow(x, k, p) for k in nodes] for x in nodes], p), dtype=object)
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


def _remainder(f: flint.nmod_mpoly, G: Sequence[flint.nmod_mpoly]) -> flint.nmod_mpoly:
    """A remainder of ``f`` on division by ``G``: no term divisible by a leading monomial of ``G``."""
    changed = True
    while changed and f != 0:
        changed = False
        for g in G:
            q, r = divmod(f, g)  # flint's division by one polynomial, every term reduced
            if q != 0:
                f, changed = r, True
                if f == 0:
                    break
    return f


def _groebner_leads(
    polys: list[dict[tuple[int, ...], int]], n_vars: int, p: int
) -> list[tuple[int, ...]]:
    """The leading monomials (degree-reverse-lexicographic) of a Gröbner basis over ``GF(p)``.

    Buchberger's algorithm with its two criteria (coprime leading monomials; the chain
    criterion: a pair whose leading-monomial lcm is divisible by a third element's, both of
    whose pairs with it are done), pairs taken by the degree of their lcm, on flint's sparse
    polynomials (Cox, Little and O'Shea, *Ideals, Varieties, and Algorithms*, §2.10).
    """
    names = tuple(f"z{i}" for i in range(n_vars))
    ctx = flint.nmod_mpoly_ctx.get(names, ordering="degrevlex", modulus=p)
    G: list[flint.nmod_mpoly] = []
    leads: list[tuple[int, ...]] = []
    pending: list[tuple[int, tuple[int, ...], int, int]] = []  # a heap: (deg lcm, lcm, i, j)
    open_pairs: set[tuple[int, int]] = set()

    def add(g: flint.nmod_mpoly) -> None:
        m = g.monomial(0)
        for i, lead in enumerate(leads):
            lcm = tuple(max(x, y) for x, y in zip(lead, m))
            heapq.heappush(pending, (sum(lcm), lcm, i, len(G)))
            open_pairs.add((i, len(G)))
        G.append(g * pow(int(g.leading_coefficient()), -1, p))
        leads.append(m)

    def done(i: int, k: int) -> bool:
        return (min(i, k), max(i, k)) not in open_pairs

    for f in polys:
        g = _remainder(ctx.from_dict(f), G)
        if g != 0:
            add(g)
    while pending:
        _, lcm, i, j = heapq.heappop(pending)
        open_pairs.discard((i, j))
        if all(min(x, y) == 0 for x, y in zip(leads[i], leads[j])):
            continue
        if any(
            k not in (i, j)
            and all(x <= y for x, y in zip(leads[k], lcm))
            and done(i, k)
            and done(j, k)
            for k in range(len(G))
        ):
            continue
        s = G[i] * ctx.term(exp_vec=tuple(y - x for x, y in zip(leads[i], lcm))) - G[j] * ctx.term(
            exp_vec=tuple(y - x for x, y in zip(leads[j], lcm))
        )
        h = _remainder(s, G)
        if h != 0:
            add(h)
    return leads


def _count_solutions(polys: list[dict[tuple[int, ...], int]], n_vars: int, p: int) -> int:
    """The number of solutions (with multiplicity) over the algebraic closure of ``GF(p)``: the
    standard monomials of a Gröbner basis."""
    leads = _groebner_leads([f for f in polys if f], n_vars, p)
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
    p = _exact.PRIME
    a = min(a, d)
    dim = 2 * a * d + d - a * a - 1
    coords = list(itertools.product(pair_indices(d), range(d)))
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
        pairs = pair_indices(d)
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
            for x, (p_, q) in zip(column, pair_indices(d)):
                S[p_][q] = S[q][p_] = x
            return S
        return [column[i * d : (i + 1) * d] for i in range(d)]

    if a == d:
        size = d * d
        row_sets = list(itertools.combinations(range(dim - 1), size))

        def minors(z: tuple[int, ...]) -> list[int]:
            M = in_A(z)
            return [_exact.det_mod([M[i] for i in rows], p) for rows in row_sets]

        polys = _interpolate(minors, n_vars, size, p)
    elif a == 1 or (d, a) == (3, 2):
        matrix = in_S if a == 1 else in_A
        n = len(matrix((0,) * n_vars))
        with_kernel = not (a == 1 and d == 2)  # d = 2: every binary quadric is a product
        mix = [[int(x) for x in rng.integers(0, p, size=n)] for _ in range(2)]

        def values(z: tuple[int, ...]) -> list[int]:
            det, adj = _exact.adjugate_mod(matrix(z), p)
            if not with_kernel:
                return [det]
            # two random combinations of the adjugate's columns: kernel vectors that vanish
            # together nowhere on the determinant curve (generically)
            columns = [[sum(x * w for x, w in zip(row, ws)) % p for row in adj] for ws in mix]
            return [det] + [_exact.det_mod(kernel_matrix(col), p) for col in columns]

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
    p = _exact.PRIME
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
                for K in triple_indices(d)
            ]
        if monomials is None:
            monomials = np.array(list(itertools.combinations_with_replacement(range(len(x)), k)))
        vals = np.ones(len(monomials), dtype=np.int64)
        xs = np.array(x, dtype=np.int64)
        for col in monomials.T:
            vals = vals * xs[col] % p
        rows.append(vals.tolist())
    return len(monomials) - _exact.rank_mod_p(np.array(rows, dtype=np.int64), p)


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
        of complementary dimension over ``GF(p)`` with ``p = 1048573``, the library's prime (a
        Gröbner basis in two variables).
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
    n_coord = (t - 1) * d * d * (d + 1) // 2 + d * (d + 1) * (d + 2) // 6
    _limits.fits(
        100 * n_coord * (n_coord + 5),
        f"the exact coordinates of {n_coord + 5} points ({n_coord} coordinates each)",
    )
    points = []
    for _ in range(n_coord + 5):
        v = rng.integers(-9, 10, size=d).tolist()
        r = min(a, d)
        B, C = (
            rng.integers(-9, 10, size=(d, r)).tolist(),
            rng.integers(-9, 10, size=(d, r)).tolist(),
        )
        points.append(_vector(_tensor_of(v, _product(B, C)), d, t))
    span = _exact.rank_q(points)
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
