"""Dimension formulas, their hypotheses, and the computed dimensions (:doc:`/book/04_dimension`).

The dimension of the neuromanifold is the generic rank of the Jacobian of ``W ↦ φ_W``
(:func:`exact_dimension`, :func:`float_dimension`). The closed formulas:

* one layer [HMK25, as reported]: ``2ad + dd' − a² − 1`` if ``a ≤ d``, else ``d² + dd' − 1``;
* equal widths ``δ`` with one attention dimension ``a`` in every layer (the configuration of
  the paper's Figure 3 and of the authors' script): ``δ² + l·a(2δ − a) − l``; the book's
  per-layer form ``δ² + Σ_i a_i (2δ − a_i) − l`` holds unless some ``a_i = 1`` is followed by a
  later ``a_j ≥ 2`` (certified on grids);
* general widths (the book's, certified on grids; :doc:`/book/notes/general_widths`): with
  ``r_i = min(a_i, d_{i-1})``,
  ``d_l d_{l-1} + Σ_{i<l} d_i (d_{i-1} − d_i) + Σ_i r_i (2 d_{i-1} − r_i) − l``;

plus ``l`` with a normalizer (one softmax layer as reported; for the paper's configurations the
formula plus ``l`` gives the "Expected" values of the paper's Eq. 16). :func:`expected_dimension`
refuses architectures outside the formulas' hypotheses (:func:`failed_hypotheses`); where the
general formula over-counts, :func:`extra_fiber_directions` writes down the fiber directions
beyond the three symmetries.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import flint
import numpy as np
from numpy.typing import NDArray

from . import _checks, _modp
from ._checks import DType
from .lightning import Layer, _normalizer, parameter_count
from .rank import ExactRank, FloatRank, exact_rank, float_rank
from .symmetries import _det, network_parametrization, symmetry_generators
from .tolerances import GAP_MIN

__all__ = [
    "general_width_formula",
    "seen_dimension",
    "failed_hypotheses",
    "expected_dimension",
    "FIBER_FAMILIES",
    "extra_fiber_directions",
    "needed_fiber_families",
    "exact_dimension",
    "float_dimension",
]


def general_width_formula(
    widths: Sequence[int], attn: Sequence[int], normalizer: str | None = None
) -> int:
    """The general-width formula's value, its hypotheses unchecked.

    Explained in :doc:`/book/notes/general_widths`.

    ``d_l d_{l-1} + Σ_{i=1}^{l-1} d_i (d_{i-1} − d_i) + Σ_{i=1}^{l} r_i (2 d_{i-1} − r_i) − l``
    with ``r_i = min(a_i, d_{i-1})``, plus ``l`` with a normalizer. The right-hand side of a
    formula, not a dimension: it over-counts where :func:`failed_hypotheses` is not empty.

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`.

    Returns
    -------
    int
    """
    w, a = _checks.architecture(widths, attn)
    l = len(a)
    r = [min(a[i], w[i]) for i in range(l)]
    value = w[l] * w[l - 1] + sum(w[i] * (w[i - 1] - w[i]) for i in range(1, l))
    value += sum(r[i] * (2 * w[i] - r[i]) for i in range(l))
    return value if _normalizer(normalizer) is not None else value - l


def seen_dimension(widths: Sequence[int], attn: Sequence[int], i: int) -> int:
    """How many directions of hidden layer ``i``'s output the later layers can read, at most.

    ``min(d_i, d_{i+1} + 2 r_{i+1}, min(d_i, …, d_l) + 2 Σ_{j>i} r_j)`` with
    ``r_j = min(a_j, d_{j-1})``: the rows of ``V_{i+1}, K_{i+1}, Q_{i+1}``, and further on the
    rows of ``V_l ⋯ V_{i+1}`` and the later attention matrices. Explained in
    :doc:`/book/notes/general_widths` (the counterexample ``(5, 4, 1)``).

    Parameters
    ----------
    widths, attn : sequence of int
    i : int
        A hidden layer, ``1 ≤ i ≤ l − 1``.

    Returns
    -------
    int
    """
    w, a = _checks.architecture(widths, attn)
    l = len(a)
    if l < 2:
        raise ValueError(f"i must be a hidden layer index 1 ≤ i ≤ l − 1 = {l - 1}, got {i!r}")
    i = _checks.index(i, l - 1, "i (a hidden layer)")
    r = [min(a[j], w[j]) for j in range(l)]  # r[j] belongs to layer j + 1
    return min(w[i], w[i + 1] + 2 * r[i], min(w[i:]) + 2 * sum(r[i:]))


def failed_hypotheses(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalizer: str | None = None
) -> list[str]:
    """The hypotheses of the dimension formulas that the architecture violates.

    Lightning: (1) ``t ≥ 2``; for ``l ≥ 2`` also (2) non-increasing ``d_0 ≥ … ≥ d_{l-1}``,
    (3) no layer with ``a_i = 1`` followed by a later layer with ``a_j ≥ 2`` (the first
    collapses the tokens to a line, and the later one then loses its antisymmetric directions,
    which are zero when ``a_j = 1``), (4) every narrowing hidden layer fully read by the later
    ones (:func:`seen_dimension`). With a
    normalizer and ``l ≥ 2``: equal widths ``δ`` with ``a_i ≤ δ`` (the dimension the
    paper's Conjecture 3.10 predicts, :doc:`/book/06_softmax`). Explained in
    :doc:`/book/04_dimension/counterexamples` and :doc:`/book/notes/general_widths`.

    Parameters
    ----------
    widths, attn : sequence of int
    t : int
    normalizer : str, optional

    Returns
    -------
    list of str
        One sentence per violated hypothesis; empty when :func:`expected_dimension` applies.
    """
    w, a = _checks.architecture(widths, attn)
    t, l, failed = _checks.tokens(t), len(a), []
    if t < 2:
        failed.append(
            f"t ≥ 2 tokens is required (t = {t}: with one token only the symmetric part of "
            "each attention matrix is seen, and the dimension drops)"
        )
    if l == 1:
        return failed
    if _normalizer(normalizer) is not None:
        if any(x != w[0] for x in w) or any(x > w[0] for x in a):
            failed.append(
                "for deep normalized networks this formula is stated for equal widths "
                "d_0 = … = d_l = δ with every a_i ≤ δ (the book's reading of the paper's Eq. 16, "
                "the dimension the paper's Conjecture 3.10 predicts); here the widths are "
                f"{_words(w)} and the attention dimensions {_words(a)}"
            )
        return failed
    if any(w[i] < w[i + 1] for i in range(l - 1)):
        i = next(i for i in range(l - 1) if w[i] < w[i + 1])
        failed.append(
            "non-increasing input and hidden widths d_0 ≥ … ≥ d_{l-1} are required, but layer "
            f"{i + 1} widens: d_{i + 1} = {w[i + 1]} > d_{i} = {w[i]}"
        )
    collapse = next((i for i in range(l - 1) if a[i] == 1), None)
    later = [j + 1 for j in range(l) if collapse is not None and j > collapse and a[j] >= 2]
    if later:
        failed.append(
            f"layer {collapse + 1} has attention dimension 1, so it collapses the tokens to a "
            f"line, and the later {_layers(later)} attention dimension at least 2 (their "
            "antisymmetric directions are lost)"
        )
    if not any(w[i] < w[i + 1] for i in range(l - 1)):
        for i in range(1, l):
            if w[i] < w[i - 1] and (seen := seen_dimension(w, a, i)) < w[i]:
                failed.append(
                    f"hidden layer {i} (d_{i} = {w[i]} < d_{i - 1} = {w[i - 1]}) must be fully "
                    f"read by the later layers, but they read at most {seen} of its {w[i]} "
                    "directions"
                )
    return failed


def _words(values: Sequence[int]) -> str:
    """'4, 3, 3 and 4', for messages."""
    text = [str(v) for v in values]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]


def _layers(indices: Sequence[int]) -> str:
    """'layer 3 has' / 'layers 2 and 3 have', for messages."""
    if len(indices) == 1:
        return f"layer {indices[0]} has"
    return "layers " + ", ".join(map(str, indices[:-1])) + f" and {indices[-1]} have"


def expected_dimension(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalizer: str | None = None
) -> int:
    """The dimension of the neuromanifold from the formula that covers the architecture.

    Explained in :doc:`/book/04_dimension` (and :doc:`/book/06_softmax` for normalizers).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    t : int
        Tokens per input (``t ≥ 2`` required).
    normalizer : str, optional
        One more dimension per layer; for ``l ≥ 2`` that is the dimension the paper's
        Conjecture 3.10 predicts (for its configurations, the "Expected" values of Eq. 16).

    Returns
    -------
    int
        :func:`general_width_formula`, which contains the one-layer and equal-width formulas.

    Raises
    ------
    ValueError
        On a bad architecture, or when a hypothesis fails (the message names it): no number
        is returned where no formula is established or certified.

    Examples
    --------
    >>> expected_dimension((2, 2), (2,))
    7
    >>> expected_dimension((3, 3, 3), (2, 2), normalizer="exp")
    25
    """
    failed = failed_hypotheses(widths, attn, t, normalizer)
    if failed:
        raise ValueError(
            f"no established dimension formula for widths {tuple(widths)}, attn {tuple(attn)}, "
            f"t = {t}: " + "; ".join(failed)
        )
    return general_width_formula(widths, attn, normalizer)


#: The families of :func:`extra_fiber_directions`, in the order of its rows
#: (:doc:`/book/notes/widening`).
FIBER_FAMILIES: tuple[str, ...] = ("collapse", "unread", "unused", "one token")


def _cofactor_vectors(S: list[list[int]], n: int) -> list[list[int]]:
    """Integer vectors orthogonal to the ``m < n`` rows of ``S`` (generalized cross products).

    For each set of ``n − 1 − m`` unit rows ``E``, the cofactor vector ``w`` of the
    ``(n − 1) × n`` matrix ``[S; E]``, so that ``w · x = ± det [S; E; x]`` for every ``x``: a
    polynomial in the entries of ``S`` with integer coefficients. For generic ``S`` they span
    the orthogonal complement of its rows.
    """
    out = []
    for extra in itertools.combinations(range(n), n - 1 - len(S)):
        rows = S + [[1 if c == e else 0 for c in range(n)] for e in extra]
        out.append([(-1) ** c * _det([r[:c] + r[c + 1 :] for r in rows]) for c in range(n)])
    return out


def _independent(rows: list[list[int]], limit: int) -> list[int]:
    """Indices of up to ``limit`` rows, each independent of the ones before (exact rank)."""
    chosen: list[int] = []
    for k, row in enumerate(rows):
        if len(chosen) == limit:
            break
        if any(row) and flint.fmpz_mat([rows[c] for c in chosen] + [row]).rank() > len(chosen):
            chosen.append(k)
    return chosen


def _kernel_vectors(M: list[list[int]], n: int, bound: int) -> list[list[int]]:
    """A polynomial family of vectors orthogonal to every row of ``M``, if ``rank M ≤ bound``.

    ``bound`` must bound the rank of ``M`` at *every* point (a structural bound). Then any
    ``bound + 1`` rows of ``M`` are dependent everywhere, and the :func:`_cofactor_vectors`
    ``w`` of any ``bound`` rows ``S`` satisfy ``w · x = ± det [S; E; x] = 0`` for every row
    ``x`` of ``M`` as polynomial identities. ``S`` is chosen independent at this point when it
    can be, and of the vectors only independent ones are kept (``n − rank M`` of them here).
    """
    if bound >= n:
        return []
    if len(M) <= bound:
        S = [list(r) for r in M]
    else:
        picked = _independent(M, bound)
        rest = [k for k in range(len(M)) if k not in picked]
        S = [list(M[k]) for k in sorted(picked + rest[: bound - len(picked)])]
    vectors = _cofactor_vectors(S, n)
    return [vectors[k] for k in _independent(vectors, n)]


def _matmul(A: list[list[int]], B: list[list[int]]) -> list[list[int]]:
    """The exact product of two matrices of Python integers (lists of rows)."""
    cols = list(zip(*B, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in cols] for row in A]


def _read_bounds(widths: Sequence[int], attn: Sequence[int], attention_read: bool) -> list[int]:
    """``ŝ_i``, bounds at every point on the rank of the read matrices ``Rd_i`` (``i = 0..l``).

    ``Rd_l = I`` and ``Rd_i = [Q_{i+1}; K_{i+1}; Rd_{i+1} V_{i+1}]`` (without ``Q, K`` when the
    attention is not read): ``ŝ_l = d_l``, ``ŝ_i = min(d_i, 2 min(a_{i+1}, d_i) +
    min(ŝ_{i+1}, d_{i+1}))``.
    """
    l = len(attn)
    bound = [0] * (l + 1)
    bound[l] = widths[l]
    for i in range(l - 1, -1, -1):
        qk = 2 * min(attn[i], widths[i]) if attention_read else 0
        bound[i] = min(widths[i], qk + min(bound[i + 1], widths[i + 1]))
    return bound


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
    normalized = _normalizer(normalizer) is not None
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
            for z in _kernel_vectors(read, d_i, bound[i]):
                for c in range(d_prev):  # δV_i = z e_cᵀ: column c of V_i moves by z
                    rows.append({start + r * d_prev + c: z[r] for r in range(d_i) if z[r]})
    if "unused" in wanted and l > 1:
        rows = out.setdefault("unused", [])
        L = mats[0][2]
        for i in range(1, l):  # L is L_i; layer i + 1 = mats[i] reads it
            narrowest = min(widths[: i + 1])
            d_i = widths[i]
            for z in _kernel_vectors([list(col) for col in zip(*L, strict=True)], d_i, narrowest):
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
    p = _modp.DEFAULT_PRIME
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
    """The rank modulo the prime of residue blocks stacked on each other (small: flint)."""
    blocks = [b for b in blocks if b.shape[0]]
    if not blocks:
        return 0
    M = np.concatenate(blocks).astype(np.int64)
    return int(flint.nmod_mat(*M.shape, M.ravel().tolist(), _modp.DEFAULT_PRIME).rank())


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
    _normalizer(normalizer)
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


def exact_dimension(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalizer: str | None = None,
    *,
    beyond_symmetries: bool = False,
    families: Sequence[str] | None = None,
    seed: int = 0,
    n_inputs: int | None = None,
) -> ExactRank:
    """Certified bounds on the dimension of a deep network's neuromanifold.

    :func:`lsa_lib.rank.exact_rank` of :func:`lsa_lib.symmetries.network_parametrization`:
    for lightning networks modulo a prime at a random integer point (explained in
    :doc:`/book/04_dimension` and :doc:`/book/notes/rank_engine`), for normalized ones
    (softmax) with a lower bound proven in ball arithmetic at a random float point (explained
    in :doc:`/book/06_softmax`).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`.
    beyond_symmetries : bool
        Subtract :func:`extra_fiber_directions` (those of the normalizer, if any) too in the
        upper bound. Lightning: use ``⌈3P / (d_l t)⌉ + 2`` inputs by default (architectures
        whose outputs carry less information per input still get a tight lower bound); if the
        bounds do not meet, the engine's own rounds of inputs are tried too and the better
        bounds kept.
    families : sequence of str, optional
        With ``beyond_symmetries``: only these of :data:`FIBER_FAMILIES` (default: all).
    seed : int
        Seeds the point, the inputs and the compression.
    n_inputs : int, optional
        Default: added in rounds until the bounds meet (or as above).

    Returns
    -------
    lsa_lib.rank.ExactRank
        ``.certified`` when the bounds meet; then ``.rank`` is the dimension.
    """
    w, a = _checks.architecture(widths, attn)
    t = _checks.tokens(t)
    param = network_parametrization(w, a, t, normalizer)
    beyond = _checks.flag(beyond_symmetries, "beyond_symmetries")
    if families is not None and not beyond:
        raise ValueError("families selects extra fiber directions: pass beyond_symmetries=True")
    if beyond:
        generators = _fiber_generators(
            w, a, t, normalizer, None if families is None else _families(families)
        )
        param = replace(
            param, name=param.name + " (with extra fiber directions)", generators=generators
        )
        if n_inputs is None and normalizer is None:
            generous = -(-3 * parameter_count(w, a) // (w[-1] * t)) + 2
            cert = exact_rank(param, seed=seed, n_inputs=generous)
            if cert.certified:
                return cert
            other = exact_rank(param, seed=seed)  # both bound pairs are proofs: keep the best
            return replace(
                cert, lower=max(cert.lower, other.lower), upper=min(cert.upper, other.upper)
            )
    return exact_rank(param, seed=seed, n_inputs=n_inputs)


def float_dimension(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalizer: str | None = None,
    *,
    n_inputs: int | None = None,
    seed: int = 0,
    weight_scale: float = 1.0,
    dtype: DType = "float64",
    min_gap: float = GAP_MIN,
    strict: bool = True,
) -> FloatRank:
    """The float estimate of the dimension: the Jacobian rank at a random point.

    :func:`lsa_lib.rank.float_rank` of :func:`lsa_lib.symmetries.network_parametrization`, at
    ``weight_scale`` times standard normal weights, on random normal inputs. Explained in
    :doc:`/book/04_dimension/float_failure` and :doc:`/book/notes/rank_engine` (lightning) and
    :doc:`/book/06_softmax` (Figure 3, float32).

    Parameters
    ----------
    widths, attn : sequence of int
    t : int
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`.
    n_inputs, seed, weight_scale, dtype, min_gap, strict
        As in :func:`lsa_lib.rank.float_rank` (``weight_scale = 1/√δ`` keeps the scores of
        wide softmax networks of order one).

    Returns
    -------
    lsa_lib.rank.FloatRank

    Raises
    ------
    lsa_lib.rank.RankAmbiguityError
        If ``strict`` and no gap reaches ``min_gap`` (deep lightning networks are badly
        conditioned: use :func:`exact_dimension`).
    """
    param = network_parametrization(widths, attn, t, normalizer)
    return float_rank(
        param,
        n_inputs=n_inputs,
        seed=seed,
        weight_scale=weight_scale,
        dtype=dtype,
        min_gap=min_gap,
        strict=strict,
    )
