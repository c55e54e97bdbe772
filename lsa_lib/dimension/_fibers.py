"""The fiber families beyond the three symmetries (part of :mod:`lsa_lib.dimension`).

Directions along which the function does not change, beyond the symmetries:
:func:`extra_fiber_directions` writes them down, polynomial in the weights;
:func:`needed_fiber_families` tells which of them an upper bound needs; the exact dimension's
generators are the symmetries' tangents and the chosen families.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .. import _checks, _exact, _kernel
from ..lightning import Layer, parameter_count
from ..symmetries import symmetry_generators
from ._formulas import _read_bounds

# The families of extra_fiber_directions, in the order of its rows (documented as
# lsa_lib.dimension.FIBER_FAMILIES).
FIBER_FAMILIES: tuple[str, ...] = ("collapse", "unread", "unused", "one token")


def _matmul(A: list[list[int]], B: list[list[int]]) -> list[list[int]]:
    """The exact product of two matrices of Python integers (lists of rows)."""
    cols = list(zip(*B, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in cols] for row in A]


def extra_fiber_directions(
    layers: Sequence[Layer],
    t: int = 3,
    *,
    normalizer: str | None = None,
    families: Sequence[str] | None = None,
) -> NDArray[np.object_]:
    """Directions along which the function does not change, beyond the three symmetries.

    Polynomial with integer coefficients in the weights and in the kernel of the Jacobian at
    every point (so they tighten the exact engine's upper bound); each moves the weights along
    a line on which the function is constant. Explained in :doc:`/book/notes/widening` (and the
    token collapse in :doc:`/book/04_dimension/counterexamples`). With
    ``L_i = V_i ⋯ V_1`` and the *read matrices* ``Rd_l = I``,
    ``Rd_i = [Q_{i+1}; K_{i+1}; Rd_{i+1} V_{i+1}]`` (the output depends on the hidden tokens
    ``X_i`` only through ``Rd_i X_i``, and ``X_i`` lies in the column space of ``L_i``), the
    families are, in this order:

    * ``"collapse"`` (lightning only): after a layer with ``a_i = 1`` (``i < l``), every later
      layer ``j`` sees only sym(A_j); ``(δQ_j, δK_j) = (N K_j, 0)`` and ``(0, N Q_j)`` with
      ``N = E_rs − E_sr`` move ``A_j`` by antisymmetric matrices (with ``t = 1``: every layer);
    * ``"unread"`` (every normalizer): ``δV_i = z e_cᵀ`` for ``z`` in the kernel of ``Rd_i``
      (``1 ≤ i < l``) and every unit ``e_c``: hidden directions no later layer reads;
    * ``"unused"`` (every normalizer): ``δQ_{i+1}, δK_{i+1}, δV_{i+1} = e_r zᵀ`` for ``z`` with
      ``zᵀ L_i = 0`` (``1 ≤ i < l``) and every unit ``e_r``: behind a widening layer, input
      directions of layer ``i + 1`` that its input never takes;
    * ``"one token"`` (normalizers, ``t = 1``): every ``δQ_i`` and ``δK_i`` (one token's
      attention weight is 1 whatever the scores); ``Rd_i`` then has no ``Q, K`` rows.

    The vectors ``z`` are cofactor vectors of rows of ``Rd_i`` and of ``L_iᵀ``, polynomial
    families in the kernel because the rank of those matrices is bounded at every point by the
    widths (the note's lemma on cofactor vectors).

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Integer-valued weights.
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`: then only the
        families that are exact symmetries of the normalized network are returned.
    families : sequence of str, optional
        Names from :data:`FIBER_FAMILIES` to include (default: all that apply).

    Returns
    -------
    numpy.ndarray of Python int, shape=[n_directions, P]
        Rows in the order ``Q_1, K_1, V_1, Q_2, …``.
    """
    t = _checks.tokens(t)
    P, rows = _family_rows(layers, t, normalizer, _families(families))
    flat = [row for family in FIBER_FAMILIES for row in rows.get(family, [])]
    out = np.zeros((len(flat), P), dtype=object)
    for k, row in enumerate(flat):
        for c, x in row.items():
            out[k, c] = x
    return out


def _family_rows(
    layers: Sequence[Layer], t: int, normalizer: str | None, wanted: Sequence[str]
) -> tuple[int, dict[str, list[dict[int, int]]]]:
    """``P`` and the sparse rows (position → value) of each family of
    :func:`extra_fiber_directions`."""
    normalized = _kernel.normalizer(normalizer) is not None
    mats = [
        tuple(_checks.integer_matrix(M, f"{n} of layer {i}").tolist() for n, M in zip("QKV", L))
        for i, L in enumerate(_checks.exact_layers(layers), start=1)
    ]
    offsets = [0]
    for Q, _, V in mats:
        offsets.append(offsets[-1] + 2 * len(Q) * len(Q[0]) + len(V) * len(V[0]))
    P, l = offsets[-1], len(mats)
    widths = [len(mats[0][0][0])] + [len(V) for _, _, V in mats]
    attn = [len(Q) for Q, _, _ in mats]
    out: dict[str, list[dict[int, int]]] = {}

    def unit_rows(rows: list[dict[int, int]], block: int, n: int, width: int, z: list[int]) -> None:
        """``e_r zᵀ`` in the ``n × width`` block starting at ``block``, for every row ``r``."""
        for r in range(n):
            rows.append({block + r * width + c: x for c, x in enumerate(z) if x})

    if "collapse" in wanted and not normalized:
        rows = out.setdefault("collapse", [])
        first = 0 if t == 1 else next((i + 1 for i in range(l - 1) if attn[i] == 1), l)
        for j in range(first, l):
            Q, K, _ = mats[j]
            a, d = attn[j], widths[j]
            for r, s in itertools.combinations(range(a), 2):
                for shift, source in ((0, K), (a * d, Q)):  # δQ = N K, then δK = N Q
                    row = {}
                    start = offsets[j] + shift
                    for k in range(d):  # N source: row r is source[s], row s is −source[r]
                        row[start + r * d + k] = source[s][k]
                        row[start + s * d + k] = -source[r][k]
                    rows.append(row)
    attention_read = not (normalized and t == 1)
    if "unread" in wanted and l > 1:
        rows = out.setdefault("unread", [])
        bound = _read_bounds(widths, attn, attention_read)
        read = [[1 if c == r else 0 for c in range(widths[l])] for r in range(widths[l])]
        for i in range(l - 1, 0, -1):  # read becomes Rd_i, read by layer i + 1 = mats[i]
            Qn, Kn, Vn = mats[i]
            read = (Qn + Kn if attention_read else []) + _matmul(read, Vn)
            d_i, d_prev = widths[i], widths[i - 1]
            start = offsets[i - 1] + 2 * attn[i - 1] * d_prev
            for z in _exact.kernel_vectors(read, d_i, bound[i]):
                for c in range(d_prev):  # δV_i = z e_cᵀ: column c of V_i moves by z
                    rows.append({start + r * d_prev + c: z[r] for r in range(d_i) if z[r]})
    if "unused" in wanted and l > 1:
        rows = out.setdefault("unused", [])
        L = mats[0][2]
        for i in range(1, l):  # L is L_i; layer i + 1 = mats[i] reads it
            narrowest = min(widths[: i + 1])
            d_i = widths[i]
            for z in _exact.kernel_vectors(
                [list(col) for col in zip(*L, strict=True)], d_i, narrowest
            ):
                unit_rows(rows, offsets[i], attn[i], d_i, z)  # δQ_{i+1} = e_r zᵀ
                unit_rows(rows, offsets[i] + attn[i] * d_i, attn[i], d_i, z)  # δK_{i+1}
                unit_rows(rows, offsets[i] + 2 * attn[i] * d_i, widths[i + 1], d_i, z)  # δV
            L = _matmul(mats[i][2], L)
    if "one token" in wanted and normalized and t == 1:
        rows = out.setdefault("one token", [])
        for j in range(l):
            for k in range(2 * attn[j] * widths[j]):  # every entry of Q_j and of K_j
                rows.append({offsets[j] + k: 1})
    return P, out


def _families(families: Sequence[str] | None) -> tuple[str, ...]:
    """Checked family names (default: all of :data:`FIBER_FAMILIES`)."""
    if families is None:
        return FIBER_FAMILIES
    if isinstance(families, str) or not isinstance(families, Sequence):
        raise TypeError(f"families must be a sequence of names from {FIBER_FAMILIES}")
    for f in families:
        if f not in FIBER_FAMILIES:
            raise ValueError(f"unknown fiber family {f!r}; the families are {FIBER_FAMILIES}")
    return tuple(families)


def _fiber_generators(
    widths: tuple[int, ...],
    attn: tuple[int, ...],
    t: int,
    normalizer: str | None,
    families: Sequence[str] | None,
) -> Any:
    """``generators(params)``: the symmetries' tangents, then the chosen fiber families."""
    n = len(attn)

    def generators(params: Sequence[Any]) -> NDArray[np.object_]:
        layers = [
            tuple(np.asarray(M).astype(np.int64) for M in params[3 * i : 3 * i + 3])
            for i in range(n)
        ]
        known = symmetry_generators(layers, normalizer).astype(object)
        if families is not None and not families:
            return known
        extra = extra_fiber_directions(layers, t, normalizer=normalizer, families=families)
        return np.concatenate([known, extra]) if extra.shape[0] else known

    return generators


def _fiber_rows(
    widths: tuple[int, ...], attn: tuple[int, ...], t: int, normalizer: str | None, seed: int
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]]]:
    """At a random integer point: the symmetries' tangents and each family's rows, mod ``p``."""
    p = _exact.PRIME
    rng = np.random.default_rng(_checks.seed(seed))
    shapes = [s for layer in _checks.layer_shapes(widths, attn) for s in layer]
    point = [rng.integers(0, p, size=s) for s in shapes]
    layers = [tuple(point[3 * i : 3 * i + 3]) for i in range(len(attn))]
    sym = np.mod(symmetry_generators(layers, normalizer), p).astype(np.float64)
    P, sparse = _family_rows(layers, t, normalizer, FIBER_FAMILIES)
    rows = {}
    for f, family in sparse.items():
        if family:
            R = np.zeros((len(family), P))
            for k, row in enumerate(family):
                for c, x in row.items():
                    R[k, c] = x % p  # exact Python integers, reduced
            rows[f] = R
    return sym, rows


def _stacked_rank(blocks: Sequence[NDArray[np.float64]]) -> int:
    """The rank modulo the prime of residue blocks stacked on each other."""
    blocks = [b for b in blocks if b.shape[0]]
    if not blocks:
        return 0
    return _exact.rank_mod_p(np.concatenate(blocks), _exact.PRIME)


class FiberBounds(NamedTuple):
    """Upper bounds with and without the fiber families (what :func:`needed_fiber_families`
    returns)."""

    symmetries: int
    """``P`` minus the rank of the symmetries' tangents alone."""
    families: int
    """``P`` minus the rank of the symmetries' tangents and every family's directions."""
    needed: tuple[str, ...]
    """The families without which the second bound would be higher (see the function)."""


def needed_fiber_families(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalizer: str | None = None,
    *,
    seed: int = 0,
) -> FiberBounds:
    """Which of the fiber families the upper bound needs, at one random integer point.

    The tangents of the symmetries (those that survive the normalizer, if any) and of each
    family of :func:`extra_fiber_directions`, ranked modulo a prime, in combinations: cheap, no
    Jacobian (:func:`exact_dimension` computes the bound with every family next to a lower
    one). Explained in :doc:`/book/notes/widening`: the atlas says for each entry which
    families closed its bounds.

    Parameters
    ----------
    widths, attn : sequence of int
    t : int
    normalizer : str, optional
    seed : int
        Seeds the point.

    Returns
    -------
    FiberBounds
        A named tuple: ``symmetries``, ``P`` minus the rank of the symmetries' tangents alone;
        ``families``, ``P`` minus the rank of those and of every family's directions (both upper
        bounds on the dimension: the rank at this point is at most the generic rank); and
        ``needed``, empty when the symmetries alone give the second bound, otherwise the
        families without which it would be higher, or, where none is indispensable on its own
        (two families overlap), every family that lowers the symmetries' bound by itself.

    Examples
    --------
    >>> needed_fiber_families((5, 4, 1), (2, 1))
    FiberBounds(symmetries=29, families=28, needed=('unread',))
    >>> needed_fiber_families((2, 3, 2), (2, 1))  # the unused directions give the dimension 9
    FiberBounds(symmetries=10, families=9, needed=('unused',))
    """
    w, a = _checks.architecture(widths, attn)
    t = _checks.tokens(t)
    _kernel.normalizer(normalizer)
    sym, rows = _fiber_rows(w, a, t, normalizer, seed)
    P = parameter_count(w, a)
    base = _stacked_rank([sym])
    with_one = {f: _stacked_rank([sym, rows[f]]) for f in rows}
    helping = [f for f in rows if with_one[f] > base]
    if len(helping) <= 1:
        best = with_one[helping[0]] if helping else base
        return FiberBounds(P - base, P - best, tuple(helping))
    best = _stacked_rank([sym] + [rows[f] for f in helping])
    needed = [
        f for f in helping if _stacked_rank([sym] + [rows[g] for g in helping if g != f]) < best
    ]
    return FiberBounds(P - base, P - best, tuple(needed or helping))
