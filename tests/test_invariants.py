"""Tests of lsa_lib.invariants against computations that do not use it.

The coordinates are checked against the coefficients of the output polynomial expanded by
sympy; the counts against symbolic ranks, the library's exact dimension engine and closed
forms; the invariants on points built from random rational weights and on random points; the
two-dimensional resultant against lsa_lib.m212; the degrees against the M_{2,1,2} quartic and
the degree formula.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy

from lsa_lib.dimension import exact_dimension
from lsa_lib.invariants import invariant_values, scaled_coordinates, variety_counts
from lsa_lib.m212 import m212_implicit_equation
from lsa_lib.singularities import function_coefficients


def _weights(d: int, a: int, rng: np.random.Generator) -> tuple[list, np.ndarray]:
    """Random rational ``v`` and ``A = B Cᵀ`` of rank ``a`` (object arrays of Fractions)."""

    def frac(*shape: int) -> np.ndarray:
        num = rng.integers(-9, 10, size=shape)
        den = rng.integers(1, 5, size=shape)
        return np.vectorize(Fraction, otypes=[object])(num, den)

    B, C = frac(d, a), frac(d, a)
    return list(frac(d)), B @ C.T


def _tensor(v: list, A: np.ndarray) -> np.ndarray:
    """``F[p, q, r] = (v_p A_{qr} + v_q A_{pr}) / 2`` written out independently of the library."""
    d = len(v)
    F = np.empty((d, d, d), dtype=object)
    for p, q, r in itertools.product(range(d), repeat=3):
        F[p, q, r] = (v[p] * A[q, r] + v[q] * A[p, r]) / 2
    return F


def _expanded_coordinates(d: int, t: int, j: int) -> tuple[dict, tuple]:
    """The scaled coefficients, by expanding ``(vᵀ X Xᵀ A X)[0, j]`` with symbolic weights."""
    v = sympy.symbols(f"v1:{d + 1}")
    A = sympy.Matrix(d, d, lambda p, q: sympy.Symbol(f"A{p + 1}{q + 1}"))
    X = sympy.Matrix(d, t, lambda k, n: sympy.Symbol(f"x_{k + 1}_{n + 1}"))
    out = (sympy.Matrix([v]) * X * X.T * A * X)[0, j - 1]
    xs = list(X)
    coords = {}
    for monom, coeff in sympy.Poly(sympy.expand(out), *xs).terms():
        label = []
        for x, e in zip(xs, monom):
            _, k, n = x.name.split("_")
            label += [(int(k), int(n))] * e
        coords[tuple(sorted(label))] = sympy.expand(coeff / len(sympy.Add.make_args(coeff)))
    return coords, (*v, *A)


@pytest.mark.parametrize("d, t, j", [(2, 1, 1), (2, 2, 2), (2, 3, 1), (3, 2, 1), (3, 3, 3)])
def test_coordinates_are_the_scaled_coefficients(d, t, j):
    ref, weights = _expanded_coordinates(d, t, j)
    v, A = weights[:d], sympy.Matrix(d, d, weights[d:])
    y = scaled_coordinates(_tensor(list(v), np.array(A.tolist(), dtype=object)), t, target=j)
    assert set(y) == set(ref)
    assert all(sympy.expand(y[k] - ref[k]) == 0 for k in ref)
    # the float tensor of integer weights is exact, and gives the same coordinates
    rng = np.random.default_rng(d + t)
    vi, Ai = rng.integers(-5, 6, size=d), rng.integers(-5, 6, size=(d, d))
    exact = scaled_coordinates(
        _tensor([Fraction(int(x)) for x in vi], Ai.astype(object)), t, target=j
    )
    assert scaled_coordinates(function_coefficients(Ai, vi[None, :]), t, target=j) == exact


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("t", [1, 2, 3, 4])
def test_linear_relations(d, t):
    ref, weights = _expanded_coordinates(d, t, 1) if d * t <= 9 else (None, None)
    counts = variety_counts(d, 1, t)
    n = counts["coordinates"]
    closed = 0 if t == 1 else (t - 2) * d * d * (d + 1) // 2 + math.comb(d + 2, 3)
    assert counts["linear relations"] == closed
    if ref is not None:  # N − the rank of the coordinates as polynomials in the weights
        polys = [sympy.Poly(c, *weights) for c in ref.values()]
        monomials = sorted({m for f in polys for m in f.monoms()})
        M = sympy.Matrix([[f.coeff_monomial(m) for m in monomials] for f in polys])
        assert len(ref) == n and n - M.rank() == closed
    # the "linear" family is that many independent forms: evaluate it on the unit vectors
    labels = list(scaled_coordinates(np.zeros((d, d, d), dtype=int), t))
    columns = []
    for label in labels:
        unit = {k: int(k == label) for k in labels}
        columns.append(invariant_values(unit, 1, "linear")["linear"])
    rank = sympy.Matrix(columns).T.rank() if closed else 0
    assert rank == closed


@pytest.mark.parametrize(
    "d, a, t", [(2, 1, 2), (2, 2, 3), (3, 1, 2), (3, 2, 2), (3, 3, 3), (4, 2, 2), (4, 3, 2)]
)
def test_dimension_agrees_with_the_exact_engine(d, a, t):
    dim = variety_counts(d, a, t, seed=3)["dimension"]
    engine = exact_dimension((d, 1), (a,), t)
    assert dim.certified and engine.certified and dim.rank == engine.rank


@pytest.mark.parametrize("d, a", [(2, 1), (3, 1), (3, 2), (4, 1), (4, 2), (5, 2)])
def test_single_token_dimension(d, a):
    # t = 1: the cubics ℓ q with q a quadric of rank ≤ s = min(2a, d), up to the scaling
    s = min(2 * a, d)
    dim = variety_counts(d, a, 1)["dimension"]
    assert dim.certified and dim.rank == d + s * d - s * (s - 1) // 2 - 1
    assert exact_dimension((d, 1), (a,), 1).lower == dim.rank


CROSS_CASES = [(2, 1, 2), (2, 2, 3), (3, 1, 2), (3, 2, 2), (3, 3, 2), (3, 2, 3), (4, 2, 2)]


@pytest.mark.parametrize("d, a, t", CROSS_CASES)
def test_invariants_vanish_on_the_neuromanifold_only(d, a, t):
    rng = np.random.default_rng(10 * d + a + t)
    v, A = _weights(d, a, rng)
    on = invariant_values(scaled_coordinates(_tensor(v, A), t, target=t), a)
    assert all(x == 0 for vals in on.values() for x in vals)
    # a random tensor (symmetric in its first two indices): every non-linear family with
    # members is violated; a random vector of coordinates violates the linear relations
    G = rng.integers(-9, 10, size=(d, d, d)).astype(object)
    off = invariant_values(scaled_coordinates(G + G.transpose(1, 0, 2), t, target=t), a)
    y = scaled_coordinates(_tensor(v, A), t, target=t)
    noise = {k: Fraction(int(rng.integers(-9, 10)), 7) for k in y}
    off["linear"] = invariant_values(noise, a, "linear")["linear"]
    for name, vals in off.items():
        assert (len(vals) == 0) == (len(on[name]) == 0)
        assert not vals or any(x != 0 for x in vals), name
    if a < d:  # rank a + 1: on the larger neuromanifold only the low-rank minors notice
        v2, A2 = _weights(d, a + 1, rng)
        bigger = invariant_values(scaled_coordinates(_tensor(v2, A2), t), a)
        assert any(x != 0 for x in bigger["low rank"])
        assert all(x == 0 for x in bigger["cubic"] + bigger["resultant"] + bigger["linear"])


@pytest.mark.parametrize("d, a", [(3, 1), (3, 2), (4, 1)])
def test_single_token_invariants(d, a):
    rng = np.random.default_rng(d + a)
    v, A = _weights(d, a, rng)
    on = invariant_values(scaled_coordinates(_tensor(v, A), 1), a)
    assert set(on) == {"linear", "low rank", "chow"} and on["linear"] == []
    assert all(x == 0 for vals in on.values() for x in vals) and on["chow"]
    G = rng.integers(-9, 10, size=(d, d, d)).astype(object)
    off = invariant_values(scaled_coordinates(G + G.transpose(1, 0, 2), 1), a)
    assert any(x != 0 for x in off["chow"])
    assert (2 * a + 2 <= d) == bool(off["low rank"]) and (
        not off["low rank"] or any(off["low rank"])
    )


def test_resultants_hold_on_any_line():
    rng = np.random.default_rng(5)
    v, A = _weights(3, 3, rng)
    y = scaled_coordinates(_tensor(v, A), 2)
    lines = [
        tuple(tuple(int(x) for x in rng.integers(-4, 5, size=3)) for _ in range(2))
        for _ in range(3)
    ]
    assert all(x == 0 for x in invariant_values(y, 3, "resultant", lines=lines)["resultant"])


def test_m212_quartic_is_the_resultant_family():
    R, (a1, b1, c1, a2, b2, c2) = m212_implicit_equation()
    F = np.empty((2, 2, 2), dtype=object)  # q_r = a_r x² + b_r xy + c_r y² is the slice F[·, ·, r]
    for r, (a, b, c) in enumerate([(a1, b1, c1), (a2, b2, c2)]):
        F[0, 0, r], F[0, 1, r], F[1, 0, r], F[1, 1, r] = a, b / 2, b / 2, c
    y = scaled_coordinates(F, 2)
    res = invariant_values(y, 2, "resultant")["resultant"]
    assert [sympy.simplify(f / R) for f in res] == [1, -2]
    # another line x = σα + τβ: the same quartic times det(α, β)⁴
    other = invariant_values(y, 2, "resultant", lines=[((1, 2), (3, -1))])["resultant"]
    assert [sympy.simplify(f / R) for f in other] == [7**4, -2 * 7**4]
    # and in two dimensions the Veronese catalecticant is the same quartic
    assert [sympy.simplify(f / R) for f in invariant_values(y, 2, "veronese")["veronese"]] == [-1]


@pytest.mark.parametrize("d, a", [(2, 1), (2, 2), (3, 1), (3, 3)])
def test_degree(d, a):
    counts = variety_counts(d, a, 2, degree=True, seed=1)
    assert counts["degree"] == counts["degree formula"]
    if (d, a) == (2, 2):  # a hypersurface: the degree of its equation
        R, syms = m212_implicit_equation()
        assert counts["degree"] == sympy.Poly(R, *syms).total_degree()
    if (d, a) == (2, 1):  # pairs (c₁ g, c₂ g): the Segre threefold P¹ × P², of degree 3
        assert counts["degree"] == 3


def _symbolic_tensor(d: int) -> tuple[np.ndarray, list]:
    F, symbols = np.empty((d, d, d), dtype=object), []
    for p, q, r in itertools.product(range(d), repeat=3):
        if p <= q:
            symbols.append(sympy.Symbol(f"f{p}{q}{r}"))
            F[p, q, r] = F[q, p, r] = symbols[-1]
    return F, symbols


@pytest.mark.parametrize(
    "d, a, k, families",
    [
        (2, 1, 2, ["low rank"]),
        (2, 2, 4, ["resultant"]),
        (3, 1, 2, ["low rank"]),
        (3, 3, 3, ["cubic", "syzygy"]),
    ],
)
def test_lowest_degree_forms_are_the_families(d, a, k, families):
    F, symbols = _symbolic_tensor(d)
    vals = invariant_values(scaled_coordinates(F, 2), a, families)
    polys = [sympy.Poly(f, *symbols) for name in families for f in vals[name]]
    assert all(f.is_homogeneous and f.total_degree() == k for f in polys)
    monomials = sorted({m for f in polys for m in f.monoms()})
    spanned = sympy.Matrix([[f.coeff_monomial(m) for m in monomials] for f in polys]).rank()
    counts = variety_counts(d, a, 2, vanishing_degree=k)
    assert spanned == counts["vanishing forms"] > 0
    assert variety_counts(d, a, 2, vanishing_degree=k - 1)["vanishing forms"] == 0


def test_errors():
    F = np.zeros((2, 2, 2), dtype=int)
    with pytest.raises(ValueError, match="shape"):
        scaled_coordinates(np.zeros((2, 2, 2, 2)), 2)
    with pytest.raises(ValueError, match="symmetric"):
        G = F.copy()
        G[0, 1, 0] = 1
        scaled_coordinates(G, 2)
    with pytest.raises(ValueError, match="target column"):
        scaled_coordinates(F, 2, target=3)
    with pytest.raises(TypeError, match="entries"):
        scaled_coordinates(np.full((2, 2, 2), "x"), 2)
    y = scaled_coordinates(F, 2)
    with pytest.raises(ValueError, match="unknown family"):
        invariant_values(y, 1, "chow")
    with pytest.raises(ValueError, match="labels"):
        invariant_values(dict(list(y.items())[1:]), 1)
    with pytest.raises(TypeError, match="mapping"):
        invariant_values([1, 2], 1)
    with pytest.raises(ValueError, match="independent"):
        invariant_values(y, 1, "resultant", lines=[((1, 1), (2, 2))])
    with pytest.raises(ValueError, match="positive integer"):
        invariant_values(y, 0)
    with pytest.raises(ValueError, match="degree is counted"):
        variety_counts(4, 4, 2, degree=True)
    with pytest.raises(ValueError, match="degree is counted"):
        variety_counts(2, 2, 1, degree=True)


@pytest.mark.parametrize("seed", range(6))
def test_solution_counts_agree_with_sympys_groebner_basis(seed):
    """The library's Buchberger algorithm over GF(p) against sympy's, on zero-dimensional ideals."""
    from lsa_lib.invariants._counts import _count_solutions

    rng = np.random.default_rng(seed)
    p, n_vars = 10007, 2 + seed % 2
    polys = []
    for i in range(n_vars):  # x_i^e plus terms of lower degree: the ideal is zero-dimensional
        e = int(rng.integers(1, 4))
        f = {tuple(e * int(j == i) for j in range(n_vars)): 1}
        for m in itertools.product(range(e), repeat=n_vars):
            if sum(m) < e:
                f[m] = int(rng.integers(0, p))
        polys.append(f)
    # and a combination of them with a common factor: a smaller (and non-generic) ideal
    g = {m: int(rng.integers(0, p)) for m in itertools.product(range(2), repeat=n_vars)}
    xs = sympy.symbols(f"z0:{n_vars}")
    exprs = [sympy.Poly.from_dict(f, *xs, modulus=p).as_expr() for f in polys]
    extra = sympy.Poly.from_dict(g, *xs, modulus=p).as_expr() * (exprs[0] + exprs[-1] ** 2)
    exprs.append(extra)
    polys.append({m: int(c) % p for m, c in sympy.Poly(extra, *xs).as_dict().items()})
    G = sympy.groebner(exprs, *xs, modulus=p, order="grevlex")
    leads = [q.monoms(order="grevlex")[0] for q in G.polys]
    bound = max(max(lead) for lead in leads) + 1
    expected = sum(
        1
        for m in itertools.product(range(bound), repeat=n_vars)
        if not any(all(x >= y for x, y in zip(m, lead)) for lead in leads)
    )
    assert _count_solutions(polys, n_vars, p) == expected
