"""One exact linear algebra (private core of the library).

Determinants, minors, adjugates, ranks and kernels over the rationals, and their counterparts
modulo a prime, for every module that needs them: the symmetry tangents (which multiply by
determinants and adjugates to stay polynomial), the invariants of one output coordinate, the
commutant of a transport, the exact rank of a given matrix. Entries may be Python or numpy
integers, ``fractions.Fraction``, floats (then the answer is a float, as for float tangents)
or sympy expressions (then it is an expanded sympy expression).

One prime policy: every computation modulo a prime uses :data:`PRIME`, the largest prime below
``2^20`` (the rank engine's arithmetic, :mod:`lsa_lib._modp`, is exact for primes below
``2^20``), unless its caller is given another one.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint
import numpy as np
import sympy
from numpy.typing import NDArray

from . import _modp

__all__: list[str] = []

#: The prime of every computation modulo a prime.
PRIME = _modp.DEFAULT_PRIME

rank_mod_p = _modp.rank_mod_p


def _number(x: Any) -> Any:
    """Numpy scalars and sympy rationals as Python ints, ``Fraction`` or floats."""
    if type(x) is int:
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, sympy.Integer):
        return int(x)
    if isinstance(x, sympy.Rational):
        return Fraction(int(x.p), int(x.q))
    return x


def _rows(M: Any) -> list[list[Any]]:
    if isinstance(M, np.ndarray) and M.dtype.kind in "iu":
        return M.tolist()  # Python ints already
    rows = M.tolist() if isinstance(M, (sympy.MatrixBase, np.ndarray)) else M
    return [[_number(x) for x in row] for row in rows]


def _kind(rows: Sequence[Sequence[Any]]) -> str:
    """``"int"``, ``"rational"``, ``"float"`` or ``"symbolic"``: the field of the entries."""
    kind = "int"
    for row in rows:
        for x in row:
            if type(x) is int or (isinstance(x, numbers.Integral) and not isinstance(x, bool)):
                continue
            if isinstance(x, Fraction):
                kind = "rational" if kind == "int" else kind
            elif isinstance(x, float):
                kind = "float" if kind in ("int", "rational") else kind
            else:
                return "symbolic"
    return kind


def _fmpq(x: Any) -> flint.fmpq:
    x = Fraction(x)
    return flint.fmpq(x.numerator, x.denominator)


def _fraction(q: flint.fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def det(M: Any) -> Any:
    """The determinant of a square matrix (list of rows, numpy or sympy), exactly.

    Closed forms up to ``3 × 3``; then flint for integers (an ``int``) and rationals (a
    ``Fraction``), LAPACK for floats, Berkowitz's division-free algorithm for sympy entries.
    """
    A = _rows(M)
    n = len(A)
    if n == 0:
        return 1
    kind = _kind(A)
    if n == 1:
        value = A[0][0]
    elif n == 2:
        value = A[0][0] * A[1][1] - A[0][1] * A[1][0]
    elif n == 3:
        value = (
            A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1])
            - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0])
            + A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0])
        )
    elif kind == "int":
        return int(flint.fmpz_mat(A).det())
    elif kind == "rational":
        return _fraction(flint.fmpq_mat(n, n, [_fmpq(x) for row in A for x in row]).det())
    elif kind == "float":
        return float(np.linalg.det(np.array(A, dtype=np.float64)))
    else:
        return sympy.expand(sympy.Matrix(A).det(method="berkowitz"))
    return sympy.expand(value) if kind == "symbolic" else value


def minors(M: Any, k: int) -> list[Any]:
    """All ``k × k`` minors of a matrix, exactly: row sets in lexicographic order, and for each
    the column sets in lexicographic order (entries as for :func:`det`).

    Integer and rational matrices are converted once: every row is scaled to integers by the
    least common multiple of its denominators, and each minor is an integer determinant
    (flint) divided by the product of the scales of its rows (a ``Fraction``; an ``int`` for an
    integer matrix). Maximal minors come from one basis instead (:func:`_maximal_minors`).
    Other entries: one :func:`det` per minor.
    """
    A = _rows(M)
    n, m = len(A), len(A[0]) if A else 0
    kind = _kind(A)
    if k <= 3 or kind not in ("int", "rational") or k > min(n, m):
        return [
            det([[A[r][c] for c in C] for r in R])
            for R in itertools.combinations(range(n), k)
            for C in itertools.combinations(range(m), k)
        ]
    scales = [math.lcm(*(Fraction(x).denominator for x in row)) for row in A]
    Z = [[int(x * s) for x in row] for row, s in zip(A, scales)]
    if k == m:  # one column set: the minors of the row sets
        row_sets = list(itertools.combinations(range(n), k))
        values = _maximal_minors(Z)
    elif k == n:  # one row set: the minors of the column sets
        values = _maximal_minors([list(col) for col in zip(*Z)])
        row_sets = [tuple(range(n))] * len(values)
    else:
        pairs = [
            (R, C)
            for R in itertools.combinations(range(n), k)
            for C in itertools.combinations(range(m), k)
        ]
        row_sets = [R for R, _ in pairs]
        values = [int(flint.fmpz_mat([[Z[r][c] for c in C] for r in R]).det()) for R, C in pairs]
    if kind == "int":
        return values
    return [Fraction(v, math.prod(scales[r] for r in R)) for v, R in zip(values, row_sets)]


def _maximal_minors(Z: list[list[int]]) -> list[int]:
    """``det Z[R]`` for every set ``R`` of ``k`` rows (lexicographic) of an integer ``n × k`` matrix.

    With ``k`` independent rows ``B = Z[b]`` (``D = det B``), ``Z = X B`` where ``X[b] = I`` and
    ``D X = Z adj(B) =: Y`` is an integer matrix. In ``X[R]`` the rows ``r = b_j ∈ R`` are the unit
    vectors ``e_j``; the Laplace expansion along them leaves the rows ``S = R ∖ b`` and the
    columns ``T = {j : b_j ∉ R}``, so ``det Z[R] = (−1)^{Σ p + Σ j} D^{1 − |S|} det Y[S, T]``
    (``p`` the positions in ``R`` of the rows of ``b``): determinants of size at most ``n − k``.
    """
    n, k = len(Z), len(Z[0])
    F = flint.fmpz_mat(Z)
    if F.rank() < k:
        return [0] * math.comb(n, k)
    basis: list[int] = []
    for r in range(n):  # the first k independent rows, greedily
        if flint.fmpz_mat([Z[i] for i in basis + [r]]).rank() == len(basis) + 1:
            basis.append(r)
            if len(basis) == k:
                break
    B = flint.fmpq_mat(flint.fmpz_mat([Z[r] for r in basis]))
    D = int(B.det())
    adjB = B.inv() * D
    Y = (flint.fmpq_mat(F) * adjB).tolist()  # row r: D · (the coordinates of Z[r] in B)
    Y = [[int(x) for x in row] for row in Y]
    where = {r: j for j, r in enumerate(basis)}
    out = []
    for R in itertools.combinations(range(n), k):
        S = [r for r in R if r not in where]
        if not S:
            out.append(D)  # R = b
            continue
        inside = {where[r] for r in R if r in where}
        T = [j for j in range(k) if j not in inside]
        sign = sum(p + where[r] for p, r in enumerate(R) if r in where) % 2
        small = flint.fmpz_mat([[Y[r][j] for j in T] for r in S]).det()
        value = int(small) // D ** (len(S) - 1)
        out.append(-value if sign else value)
    return out


def adj(M: Any) -> NDArray[np.object_]:
    """The adjugate, ``adj(M) M = M adj(M) = det(M) I``, as an object array (exact entries)."""
    A = _rows(M)
    n = len(A)
    out = np.empty((n, n), dtype=object)
    if n == 1:
        out[0, 0] = 1
        return out
    kind = _kind(A)
    if kind in ("int", "rational"):
        F = flint.fmpq_mat(n, n, [_fmpq(x) for row in A for x in row])
        d = F.det()
        if d != 0:
            inv = F.inv()
            for i in range(n):
                for k in range(n):
                    v = _fraction(d * inv[i, k])
                    out[i, k] = int(v) if kind == "int" else v
            return out
    for i in range(n):  # cofactors: row i of adj(M) holds the (k, i) cofactors
        for k in range(n):
            minor = [row[:i] + row[i + 1 :] for r, row in enumerate(A) if r != k]
            out[i, k] = (-1) ** (i + k) * det(minor)
    return out


def rank_q(M: Any) -> int:
    """The rank over the rationals of a matrix of integers, fractions or sympy rationals."""
    A = _rows(M)
    if not A or not A[0]:
        return 0
    kind = _kind(A)
    if kind not in ("int", "rational"):
        raise TypeError(f"an exact rank needs integer or rational entries, got {kind} entries")
    if kind == "int":
        return int(flint.fmpz_mat(A).rank())
    return int(flint.fmpq_mat(len(A), len(A[0]), [_fmpq(x) for row in A for x in row]).rank())


def nullspace(M: Any) -> list[list[int]]:
    """A basis of the kernel ``{x : M x = 0}`` of an integer matrix, as primitive integer vectors."""
    A = _rows(M)
    if _kind(A) != "int":
        raise TypeError("the integer kernel basis needs an integer matrix")
    N, k = flint.fmpz_mat(A).nullspace()
    basis = []
    for column in N.transpose().tolist()[: int(k)]:  # the first k columns span the kernel
        v = [int(x) for x in column]
        g = math.gcd(*v)
        basis.append([x // g for x in v] if g else v)
    return basis


def cofactor_vectors(S: list[list[int]], n: int) -> list[list[int]]:
    """Integer vectors orthogonal to the ``m < n`` rows of ``S`` (generalized cross products).

    For each set of ``n − 1 − m`` unit rows ``E``, the cofactor vector ``w`` of the
    ``(n − 1) × n`` matrix ``[S; E]``, so that ``w · x = ± det [S; E; x]`` for every ``x``: a
    polynomial in the entries of ``S`` with integer coefficients. For generic ``S`` they span
    the orthogonal complement of its rows.
    """
    out = []
    for extra in itertools.combinations(range(n), n - 1 - len(S)):
        rows = S + [[1 if c == e else 0 for c in range(n)] for e in extra]
        out.append([(-1) ** c * det([r[:c] + r[c + 1 :] for r in rows]) for c in range(n)])
    return out


def independent_rows(rows: list[list[int]], limit: int) -> list[int]:
    """Indices of up to ``limit`` rows, each independent of the ones before (exact rank)."""
    chosen: list[int] = []
    for k, row in enumerate(rows):
        if len(chosen) == limit:
            break
        if any(row) and flint.fmpz_mat([rows[c] for c in chosen] + [row]).rank() > len(chosen):
            chosen.append(k)
    return chosen


def kernel_vectors(M: list[list[int]], n: int, bound: int) -> list[list[int]]:
    """A polynomial family of vectors orthogonal to every row of ``M``, if ``rank M ≤ bound``.

    ``bound`` must bound the rank of ``M`` at *every* point (a structural bound). Then any
    ``bound + 1`` rows of ``M`` are dependent everywhere, and the :func:`cofactor_vectors`
    ``w`` of any ``bound`` rows ``S`` satisfy ``w · x = ± det [S; E; x] = 0`` for every row
    ``x`` of ``M`` as polynomial identities. ``S`` is chosen independent at this point when it
    can be, and of the vectors only independent ones are kept (``n − rank M`` of them here).
    """
    if bound >= n:
        return []
    if len(M) <= bound:
        S = [list(r) for r in M]
    else:
        picked = independent_rows(M, bound)
        rest = [k for k in range(len(M)) if k not in picked]
        S = [list(M[k]) for k in sorted(picked + rest[: bound - len(picked)])]
    vectors = cofactor_vectors(S, n)
    return [vectors[k] for k in independent_rows(vectors, n)]


def det_mod(M: Sequence[Sequence[int]], p: int = PRIME) -> int:
    """``det M mod p`` for an integer matrix."""
    return int(flint.nmod_mat([[int(x) % p for x in row] for row in M], p).det())


def inv_mod(M: Sequence[Sequence[int]], p: int = PRIME) -> list[list[int]]:
    """``M⁻¹ mod p`` for an integer matrix invertible modulo ``p``."""
    Mi = flint.nmod_mat([[int(x) % p for x in row] for row in M], p).inv()
    return [[int(Mi[i, k]) for k in range(Mi.ncols())] for i in range(Mi.nrows())]


def adjugate_mod(M: Sequence[Sequence[int]], p: int = PRIME) -> tuple[int, list[list[int]]]:
    """``(det M, adj M)`` modulo ``p``: at corank one the columns of ``adj M`` span the kernel."""
    n = len(M)
    N = flint.nmod_mat([[int(x) % p for x in row] for row in M], p)
    d = int(N.det())
    if d:
        inv = N.inv()
        return d, [[d * int(inv[i, k]) % p for k in range(n)] for i in range(n)]
    cof = [
        [
            (-1) ** (i + k)
            * det_mod([[M[r][c] for c in range(n) if c != i] for r in range(n) if r != k], p)
            % p
            for k in range(n)
        ]
        for i in range(n)
    ]
    return d, cof


def orbit_rank(G: np.ndarray, shapes: Sequence[tuple[int, ...]], p: int = PRIME) -> int:
    """``rank_p(G)`` for symmetry tangents (residues, one row each), from small blocks if possible.

    Each generator touches few parameter blocks. Group the rows by the set of blocks they touch
    and look for an order of the groups with one *private* block per group, touched by no group
    placed before it: the submatrix on the private blocks is then block lower-triangular, so
    ``rank G ≥ Σ rank(diagonal blocks)``; when that sum reaches the number of non-zero rows it is
    the rank. Otherwise the dense rank is computed.
    """
    G = G[(G != 0).any(axis=1)]
    if G.shape[0] == 0:
        return 0
    edges = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    blocks = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    support = np.stack([(G[:, b] != 0).any(axis=1) for b in blocks], axis=1)
    signatures, labels = np.unique(support, axis=0, return_inverse=True)
    labels = labels.reshape(-1)
    remaining, total = set(range(len(signatures))), 0
    while remaining:
        pick = next(
            (
                (g, int(c))
                for g in sorted(remaining)
                for c in np.flatnonzero(signatures[g])
                if not any(signatures[h][c] for h in remaining if h != g)
            ),
            None,
        )
        if pick is None:
            return rank_mod_p(G, p)
        g, c = pick
        total += rank_mod_p(G[labels == g][:, blocks[c]], p)
        remaining.remove(g)
    return total if total == G.shape[0] else rank_mod_p(G, p)
