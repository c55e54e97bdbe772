"""Dimension formulas for lightning self-attention (chapter "Dimension formulas").

The dimension of the neuromanifold (the set of functions an architecture computes) is the
generic rank of the Jacobian of ``W ↦ φ_W``. This module holds the closed formulas for it and
the hypotheses under which each is established (by [HMK25], as reported) or certified (by the
book's exact computations); outside those hypotheses :func:`expected_dimension` raises
``ValueError`` naming the hypothesis that fails, rather than return a number that can be wrong.

* one layer [HMK25]: ``2ad + dd' − a² − 1`` if ``a ≤ d``, else ``d² + dd' − 1``;
* equal widths ``d_0 = … = d_l = δ``, ``a_i ≤ δ`` [HMK25, as reported]:
  ``δ² + Σ_i a_i (2δ − a_i) − l``;
* general widths (the book's own, certified on grids): with ``r_i = min(a_i, d_{i-1})``,
  ``d_l d_{l-1} + Σ_{i<l} d_i (d_{i-1} − d_i) + Σ_i r_i (2 d_{i-1} − r_i) − l``.

The normalized (softmax) versions add one per layer (the scaling symmetry is broken): reported
for one layer, conjectured for deep equal-width networks (Conjecture 3.10 of [HMK25]).

Where the general-width formula over-counts (a layer with ``a_i = 1`` before the last: the
tokens collapse to a line; a hidden space the later layers cannot read fully), the function has
fiber directions beyond the three symmetries; :func:`extra_fiber_directions` writes them down and
:func:`certified_dimension_beyond_symmetries` uses them to certify the true dimension exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._core import _check_t, check_architecture, parameter_count
from .rank import DEFAULT_MIN_GAP, RankAmbiguityError

__all__ = [
    "parameter_count",
    "general_width_formula",
    "seen_dimension",
    "failed_hypotheses",
    "formula_source",
    "expected_dimension",
    "extra_fiber_directions",
    "certified_dimension_beyond_symmetries",
    "DimensionRow",
    "dimension_table",
    "format_dimension_table",
    "explore",
    "explorer",
]

#: Source labels returned by :func:`formula_source`.
SOURCE_SINGLE = "one layer [HMK25]"
SOURCE_EQUAL = "equal widths [HMK25, as reported]"
SOURCE_GENERAL = "general widths [book, certified on grids]"
SOURCE_SOFTMAX_SINGLE = "one softmax layer [HMK25, as reported]"
SOURCE_SOFTMAX_EQUAL = "equal widths, softmax [HMK25, Conjecture 3.10]"


def _check_normalized(normalized: Any) -> bool:
    if not isinstance(normalized, bool):
        raise TypeError(f"normalized must be True or False, got {normalized!r}")
    return normalized


def general_width_formula(
    widths: Sequence[int], attn: Sequence[int], normalized: bool = False
) -> int:
    """The value of the general-width formula, with no check of its hypotheses.

    ``d_l d_{l-1} + Σ_{i=1}^{l-1} d_i (d_{i-1} − d_i) + Σ_{i=1}^{l} r_i (2 d_{i-1} − r_i) − l``
    with ``r_i = min(a_i, d_{i-1})`` (``+ l`` more when ``normalized``). For one layer it is the
    formula of [HMK25]; for equal widths it is their deep formula.

    This is the right-hand side of a formula, **not** a dimension: it over-counts when the
    hypotheses listed by :func:`failed_hypotheses` fail (the chapter shows certified
    counterexamples). Use :func:`expected_dimension` for a dimension.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    normalized : bool
        Add ``l`` (one per layer) for the softmax network.

    Returns
    -------
    int

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    w, a = check_architecture(widths, attn)
    normalized = _check_normalized(normalized)
    l = len(a)
    r = [min(a[i], w[i]) for i in range(l)]
    value = w[l] * w[l - 1]
    value += sum(w[i] * (w[i - 1] - w[i]) for i in range(1, l))
    value += sum(r[i] * (2 * w[i] - r[i]) for i in range(l))
    return value if normalized else value - l


def seen_dimension(widths: Sequence[int], attn: Sequence[int], i: int) -> int:
    """How many directions of hidden layer ``i``'s output the later layers can read, at most.

    The rest of the network reads the output of ``V_i`` (the row space of ``V_i``, of dimension
    ``d_i`` inside ``R^{d_{i-1}}``) only through

    * the rows of ``V_{i+1}``, ``K_{i+1}`` and ``Q_{i+1}``: at most ``d_{i+1} + 2 r_{i+1}``
      directions, with ``r_j = min(a_j, d_{j-1})``;
    * and, further on, through the rows of ``V_l ⋯ V_{i+1}`` (at most ``min(d_i, …, d_l)``)
      and the row and column spaces of the later attention matrices (``2 r_j`` each).

    This returns ``min(d_i, d_{i+1} + 2 r_{i+1}, min(d_i, …, d_l) + 2 Σ_{j>i} r_j)``.

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture ``(d_0, …, d_l)``, ``(a_1, …, a_l)``.
    i : int
        A hidden layer, ``1 ≤ i ≤ l − 1``.

    Returns
    -------
    int

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the counterexample ``(5, 4, 1)``).
    """
    w, a = check_architecture(widths, attn)
    l = len(a)
    if isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= l - 1:
        raise ValueError(f"i must be a hidden layer index 1 ≤ i ≤ l − 1 = {l - 1}, got {i!r}")
    r = [min(a[j], w[j]) for j in range(l)]  # r[j] belongs to layer j + 1
    next_layer = w[i + 1] + 2 * r[i]
    further = min(w[i:]) + 2 * sum(r[i:])
    return min(w[i], next_layer, further)


def failed_hypotheses(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalized: bool = False
) -> list[str]:
    """The hypotheses of the dimension formulas that the architecture violates.

    The formulas of this module are established or certified under these hypotheses
    (lightning):

    1. ``t ≥ 2`` tokens (with one token only the symmetric part of each ``A_i`` is seen);
    2. for ``l ≥ 2``: non-increasing input and hidden widths ``d_0 ≥ d_1 ≥ … ≥ d_{l-1}``;
    3. for ``l ≥ 2``: ``a_i ≥ 2`` for every layer but the last (otherwise the tokens after
       layer ``i`` span a line, and later layers see only the symmetric part of their
       attention matrices: the *token-rank collapse*);
    4. for ``l ≥ 2``: every hidden layer ``i`` with ``d_i < d_{i-1}`` is fully read by the later
       layers: :func:`seen_dimension` equals ``d_i``.

    For the normalized (softmax) network the formulas are stated only for one layer and for
    equal widths ``d_0 = … = d_l = δ`` with ``a_i ≤ δ`` (Conjecture 3.10 of [HMK25]); there the
    token-rank collapse (3) does not occur.

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture.
    t : int
        Tokens per input.
    normalized : bool
        The softmax network instead of the lightning one.

    Returns
    -------
    list of str
        One sentence per violated hypothesis; empty when :func:`expected_dimension` applies.

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    w, a = check_architecture(widths, attn)
    t = _check_t(t)
    normalized = _check_normalized(normalized)
    l = len(a)
    failed = []
    if t < 2:
        failed.append(
            f"t ≥ 2 tokens is required (t = {t}: with one token only the symmetric part of "
            "each attention matrix is seen, and the dimension drops)"
        )
    if l == 1:
        return failed
    if normalized:
        delta = w[0]
        if any(x != delta for x in w) or any(x > delta for x in a):
            failed.append(
                "for softmax networks with l ≥ 2 only equal widths d_0 = … = d_l = δ with "
                f"a_i ≤ δ are covered (Conjecture 3.10); got widths {w}, attn {a}"
            )
        return failed
    if any(w[i] < w[i + 1] for i in range(l - 1)):
        failed.append(
            f"non-increasing input and hidden widths d_0 ≥ … ≥ d_{{l-1}} are required, got {w[:l]}"
        )
    ones = [i + 1 for i in range(l - 1) if a[i] == 1]
    if ones:
        failed.append(
            "a_i ≥ 2 is required for every layer but the last (token-rank collapse); "
            f"a_i = 1 in layer(s) {ones}"
        )
    if not any(w[i] < w[i + 1] for i in range(l - 1)):
        for i in range(1, l):
            if w[i] < w[i - 1] and seen_dimension(w, a, i) < w[i]:
                failed.append(
                    f"hidden layer {i} (d_{i} = {w[i]} < d_{i - 1} = {w[i - 1]}) must be fully "
                    f"read by the later layers, but they read at most "
                    f"{seen_dimension(w, a, i)} of its {w[i]} directions"
                )
    return failed


def formula_source(widths: Sequence[int], attn: Sequence[int], normalized: bool = False) -> str:
    """Which formula covers the architecture, and whose it is.

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture.
    normalized : bool
        The softmax network instead of the lightning one.

    Returns
    -------
    str
        One of ``"one layer [HMK25]"``, ``"equal widths [HMK25, as reported]"``,
        ``"general widths [book, certified on grids]"`` and their softmax counterparts
        ``"one softmax layer [HMK25, as reported]"``,
        ``"equal widths, softmax [HMK25, Conjecture 3.10]"``. The hypotheses are not checked
        here (see :func:`failed_hypotheses`).

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    w, a = check_architecture(widths, attn)
    normalized = _check_normalized(normalized)
    equal = all(x == w[0] for x in w) and all(x <= w[0] for x in a)
    if len(a) == 1:
        return SOURCE_SOFTMAX_SINGLE if normalized else SOURCE_SINGLE
    if normalized:
        return SOURCE_SOFTMAX_EQUAL
    return SOURCE_EQUAL if equal else SOURCE_GENERAL


def expected_dimension(
    widths: Sequence[int], attn: Sequence[int], normalized: bool = False, t: int = 3
) -> int:
    """The dimension of the neuromanifold, from the formula that covers the architecture.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    normalized : bool
        The softmax network (one more dimension per layer; for ``l ≥ 2`` this is
        Conjecture 3.10 of [HMK25], supported numerically, not proved).
    t : int
        Tokens per input; ``t ≥ 2`` is required.

    Returns
    -------
    int
        ``2ad + dd' − a² − 1`` (one layer, ``a ≤ d``), ``d² + dd' − 1`` (one layer, ``a > d``),
        or the general-width formula (see :func:`general_width_formula`), which contains the
        equal-width formula ``δ² + Σ_i a_i (2δ − a_i) − l``; plus ``l`` when normalized.

    Raises
    ------
    ValueError
        On a bad architecture, or when a hypothesis of the formulas fails (the message names
        it; see :func:`failed_hypotheses`): no number is returned where the formula is not
        established or certified.

    Examples
    --------
    >>> expected_dimension((2, 2), (2,))
    7
    >>> expected_dimension((3, 3, 3), (2, 2), normalized=True)
    25

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    failed = failed_hypotheses(widths, attn, t=t, normalized=normalized)
    if failed:
        raise ValueError(
            f"no established dimension formula for widths {tuple(widths)}, attn "
            f"{tuple(attn)}, t = {t}: " + "; ".join(failed)
        )
    return general_width_formula(widths, attn, normalized=normalized)


# --------------------------------------------------------------------------------------------
# fiber directions beyond the three symmetries (the book's counterexamples)
# --------------------------------------------------------------------------------------------


def _int_matrix(M: Any, name: str) -> list[list[int]]:
    arr = np.asarray(M)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a matrix, got shape {arr.shape}")
    out = []
    for row in arr.tolist():
        vals = []
        for v in row:
            if isinstance(v, bool) or not float(v).is_integer():
                raise ValueError(f"{name} must hold integers (exact directions), got {v!r}")
            vals.append(int(v))
        out.append(vals)
    return out


def _det(M: list[list[int]]) -> int:
    """Exact determinant of a square integer matrix (Bareiss' fraction-free elimination)."""
    n = len(M)
    if n == 0:
        return 1
    A = [row[:] for row in M]
    sign, prev = 1, 1
    for k in range(n - 1):
        if A[k][k] == 0:
            swap = next((r for r in range(k + 1, n) if A[r][k] != 0), None)
            if swap is None:
                return 0
            A[k], A[swap] = A[swap], A[k]
            sign = -sign
        for r in range(k + 1, n):
            for c in range(k + 1, n):
                A[r][c] = (A[r][c] * A[k][k] - A[r][k] * A[k][c]) // prev
        prev = A[k][k]
    return sign * A[n - 1][n - 1]


def _orthogonal_vectors(S: list[list[int]], n: int) -> list[list[int]]:
    """Integer vectors orthogonal to the rows of ``S`` (``m < n`` rows of length ``n``).

    Generalized cross products: for each set ``E`` of ``n − 1 − m`` unit rows, the cofactor
    vector of the ``(n−1) × n`` matrix ``[S; E]``. Polynomial with integer coefficients in the
    entries of ``S``; for generic ``S`` they span the orthogonal complement of its rows.
    """
    m = len(S)
    out = []
    for extra in itertools.combinations(range(n), n - 1 - m):
        rows = S + [[1 if c == e else 0 for c in range(n)] for e in extra]
        w = [
            (-1) ** c * _det([[row[k] for k in range(n) if k != c] for row in rows])
            for c in range(n)
        ]
        out.append(w)
    return out


def _layer_blocks(layers: Sequence[Any]) -> tuple[list[tuple[list[list[int]], ...]], list[int]]:
    if not isinstance(layers, Sequence) or len(layers) == 0:
        raise ValueError("layers must be a non-empty list of (Q, K, V) triples")
    mats, offsets, pos = [], [], 0
    for i, layer in enumerate(layers, start=1):
        if not isinstance(layer, (tuple, list)) or len(layer) != 3:
            raise TypeError(f"layer {i} must be a (Q, K, V) triple")
        Q, K, V = (_int_matrix(M, f"{n} of layer {i}") for n, M in zip("QKV", layer, strict=True))
        if len(Q) != len(K) or len(Q[0]) != len(K[0]) or len(V[0]) != len(Q[0]):
            raise ValueError(f"layer {i}: Q, K must be (a, d) and V (d_out, d)")
        if mats and len(Q[0]) != len(mats[-1][2]):
            raise ValueError(
                f"layer {i} expects width {len(Q[0])}, layer {i - 1} outputs {len(mats[-1][2])}"
            )
        mats.append((Q, K, V))
        offsets.append(pos)
        pos += 2 * len(Q) * len(Q[0]) + len(V) * len(V[0])
    offsets.append(pos)
    return mats, offsets


def extra_fiber_directions(layers: Sequence[Any], t: int = 3) -> np.ndarray:
    """Directions along which the function does not change, beyond the three symmetries.

    Two families, both polynomial with integer coefficients in the weights (so they give
    certified upper bounds with :func:`lsa_lib.rank.certified_rank`):

    * **token-rank collapse**: if ``a_i = 1`` for some ``i < l``, every later layer ``j`` sees
      only the symmetric part of ``A_j``; the directions ``(δQ_j, δK_j) = (N K_j, 0)`` and
      ``(0, N Q_j)`` with ``N = E_rs − E_sr`` change ``A_j`` by the antisymmetric matrices
      ``K_jᵀ N K_j`` and ``Q_jᵀ Nᵀ Q_j``; with one token (``t = 1``) this holds for every
      layer ``j``, including the first;
    * **unread hidden directions**: layer ``i + 1`` reads ``V_i``'s output only through the
      rows of ``V_{i+1}``, ``K_{i+1}``, ``Q_{i+1}``; for every integer vector ``w`` orthogonal
      to all of them and every unit vector ``e_c``, ``δV_i = w e_cᵀ`` changes nothing.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Integer-valued weights (numpy arrays of any numeric dtype); ``Q_i, K_i`` of shape
        ``(a_i, d_{i-1})``, ``V_i`` of shape ``(d_i, d_{i-1})``.
    t : int
        Tokens per input (``t = 1`` adds the antisymmetric directions of every layer).

    Returns
    -------
    numpy.ndarray of Python int, shape=[n_directions, P]
        Rows in the ``flatten_layers`` order (``n_directions`` may be 0).

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the certified counterexamples).
    """
    t = _check_t(t)
    mats, offsets = _layer_blocks(layers)
    P = offsets[-1]
    rows: list[list[int]] = []
    l = len(mats)
    # the first layer whose tokens may be collapsed to a line: after a layer with a_i = 1, or
    # every layer when there is a single token
    first = next((i + 1 for i, (Q, _, _) in enumerate(mats[:-1]) if len(Q) == 1), l)
    if t == 1:
        first = 0
    if first < l:
        for j in range(first, l):
            Q, K, _ = mats[j]
            a, d = len(Q), len(Q[0])
            for r_, s_ in itertools.combinations(range(a), 2):
                for target, source in (("Q", K), ("K", Q)):
                    # N source with N = E_rs - E_sr: row r is source[s], row s is -source[r]
                    delta = [[0] * d for _ in range(a)]
                    delta[r_] = source[s_][:]
                    delta[s_] = [-x for x in source[r_]]
                    row = [0] * P
                    start = offsets[j] + (0 if target == "Q" else a * d)
                    for k, x in enumerate(v for rr in delta for v in rr):
                        row[start + k] = x
                    rows.append(row)
    for i in range(l - 1):
        V = mats[i][2]
        Qn, Kn, Vn = mats[i + 1]
        d_i, d_prev = len(V), len(V[0])
        S = Vn + Kn + Qn
        if len(S) >= d_i:
            continue
        start = offsets[i] + 2 * len(mats[i][0]) * d_prev
        for w in _orthogonal_vectors(S, d_i):
            for c in range(d_prev):
                row = [0] * P
                for r_ in range(d_i):
                    row[start + r_ * d_prev + c] = w[r_]
                rows.append(row)
    out = np.empty((len(rows), P), dtype=object)
    for k, row in enumerate(rows):
        out[k, :] = row
    return out


def certified_dimension_beyond_symmetries(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    seed: int = 0,
    n_inputs: int | None = None,
) -> Any:
    """Certified bounds with the upper bound from the symmetries *and* the extra directions.

    Like :func:`lsa_lib.rank.certified_dimension`, but the upper bound subtracts the rank of
    the three symmetries' tangents together with :func:`extra_fiber_directions`, and the
    default number of inputs is generous (``⌈3P / (d_l t)⌉ + 2``), so that architectures whose
    outputs carry less information per input (token-rank collapse) still get a tight lower
    bound.

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture.
    t : int
        Tokens per input.
    seed : int
        Seeds the point, the inputs and the column compression.
    n_inputs : int, optional
        Number of random inputs.

    Returns
    -------
    CertifiedDimension

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the certified counterexamples).
    """
    from .rank import certified_rank, lightning_parametrization
    from .symmetries import symmetry_generators

    w, a = check_architecture(widths, attn)
    t = _check_t(t)
    base = lightning_parametrization(w, a, t=t)
    n_layers = len(a)

    def generators(params: Sequence[Any]) -> np.ndarray:
        layers = [tuple(params[3 * i : 3 * i + 3]) for i in range(n_layers)]
        ints = [tuple(np.asarray(M).astype(np.int64) for M in layer) for layer in layers]
        known = symmetry_generators(ints).astype(object)
        extra = extra_fiber_directions(ints, t=t)
        return np.concatenate([known, extra]) if extra.shape[0] else known

    param = replace(base, name=base.name + " (with extra fiber directions)", generators=generators)
    if n_inputs is None:
        n_inputs = _generous_inputs(w, a, t)
    return certified_rank(param, seed=seed, n_inputs=n_inputs)


def _generous_inputs(widths: tuple[int, ...], attn: tuple[int, ...], t: int) -> int:
    """``⌈3P / (d_l t)⌉ + 2`` inputs: three times the bare minimum of output numbers."""
    return -(-3 * parameter_count(widths, attn) // (widths[-1] * t)) + 2


@dataclass(frozen=True)
class DimensionRow:
    """One architecture's parameter count, expected dimension and computed dimensions.

    Explained in the chapter "Dimension formulas".

    Attributes
    ----------
    widths, attn : tuple of int
        The architecture.
    t : int
        Tokens per input.
    n_params : int
        The parameter count ``P``.
    expected : int or None
        :func:`expected_dimension`, or None when no formula applies.
    source : str
        Which formula (:func:`formula_source`), or why none applies (the failed hypotheses).
    certified : CertifiedDimension or None
        The exact computation (``lower``, ``upper``); None if not requested.
    numerical : NumericalDimension or None
        The float64 estimate with its gap; None if not requested or not readable.
    numerical_note : str
        ``"ok"``, ``"not computed"`` or ``"ambiguous: …"`` (a :class:`RankAmbiguityError`).
    """

    widths: tuple[int, ...]
    attn: tuple[int, ...]
    t: int
    n_params: int
    expected: int | None
    source: str
    certified: Any = None
    numerical: Any = None
    numerical_note: str = "not computed"

    @property
    def agrees(self) -> bool | None:
        """Whether the certified dimension is exact and equals the expected one.

        None when there is no expected value or no exact certificate.
        """
        if self.expected is None or self.certified is None or not self.certified.exact:
            return None
        return self.certified.lower == self.expected


def _architectures(architectures: Iterable[Any]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    if isinstance(architectures, (str, bytes)):
        raise TypeError("architectures must be a list of (widths, attn) pairs")
    out = []
    for k, arch in enumerate(architectures):
        if not isinstance(arch, (tuple, list)) or len(arch) != 2:
            raise TypeError(f"architecture {k} must be a (widths, attn) pair, got {arch!r}")
        out.append(check_architecture(*arch))
    if not out:
        raise ValueError("architectures is empty: give at least one (widths, attn) pair")
    return out


def dimension_table(
    architectures: Iterable[Any],
    t: int = 3,
    *,
    certify: bool = True,
    float_estimate: bool = True,
    seed: int = 0,
) -> list[DimensionRow]:
    """Parameter count, expected dimension and computed dimensions for many architectures.

    Parameters
    ----------
    architectures : iterable of (widths, attn)
        The architectures (lightning networks).
    t : int
        Tokens per input.
    certify : bool
        Compute the certified dimension (exact ranks mod p, with the upper bound from the
        symmetries and the extra fiber directions:
        :func:`certified_dimension_beyond_symmetries`).
    float_estimate : bool
        Compute the float64 estimate (:func:`lsa_lib.rank.numerical_dimension`, on
        ``⌈3P / (d_l t)⌉ + 2`` inputs like the certificate); a rank that cannot be read is
        recorded as ``"ambiguous: …"``, not raised.
    seed : int
        Seed of the random point and inputs.

    Returns
    -------
    list of DimensionRow

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    t = _check_t(t)
    archs = _architectures(architectures)
    if float_estimate:
        from .rank import numerical_dimension
    rows = []
    for w, a in archs:
        failed = failed_hypotheses(w, a, t=t)
        expected = None if failed else general_width_formula(w, a)
        source = "; ".join(failed) if failed else formula_source(w, a)
        cert = certified_dimension_beyond_symmetries(w, a, t=t, seed=seed) if certify else None
        num, note = None, "not computed"
        if float_estimate:
            try:
                num = numerical_dimension(w, a, t=t, seed=seed, n_inputs=_generous_inputs(w, a, t))
                note = "ok"
            except RankAmbiguityError as err:
                note = f"ambiguous: largest gap {err.reading.gap:.1e} at rank {err.reading.rank}"
        rows.append(DimensionRow(w, a, t, parameter_count(w, a), expected, source, cert, num, note))
    return rows


def _cert_text(cert: Any) -> str:
    if cert is None:
        return "–"
    if cert.exact:
        return f"{cert.lower} (exact)"
    return f"{cert.lower}…{cert.upper}"


def _float_text(row: DimensionRow, gaps: str) -> str:
    if row.numerical is not None:
        if gaps == "threshold":
            return f"{row.numerical.rank} (gap ≥ {DEFAULT_MIN_GAP:.0e})"
        return f"{row.numerical.rank} (gap {row.numerical.gap:.0e})"
    if gaps == "threshold" and row.numerical_note.startswith("ambiguous"):
        return f"ambiguous (gap < {DEFAULT_MIN_GAP:.0e})"
    return row.numerical_note


def format_dimension_table(
    rows: Sequence[DimensionRow], style: str = "markdown", gaps: str = "value"
) -> str:
    """Render :func:`dimension_table` rows as a Markdown or plain-text table.

    Parameters
    ----------
    rows : sequence of DimensionRow
    style : {"markdown", "text"}
        A Markdown pipe table, or aligned plain text.
    gaps : {"value", "threshold"}
        Print each float gap's value (``"7 (gap 6e+12)"``), or only whether it passed the
        float engine's threshold (``"7 (gap ≥ 1e+04)"``, ``"ambiguous (gap < 1e+04)"``): the
        value of a gap against round-off varies with the linear-algebra library, the
        comparison with the threshold does not (used where outputs must be reproducible).

    Returns
    -------
    str
        Columns: widths, attn, P, expected dimension (or "none"), certified dimension
        (``"n (exact)"`` or ``"lower…upper"``), float estimate with its gap, and ``P / dim``.

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    if style not in ("markdown", "text"):
        raise ValueError(f"style must be 'markdown' or 'text', got {style!r}")
    if gaps not in ("value", "threshold"):
        raise ValueError(f"gaps must be 'value' or 'threshold', got {gaps!r}")
    header = ["widths", "attn", "P", "expected", "certified", "float64", "P / dim"]
    body = []
    for row in rows:
        if not isinstance(row, DimensionRow):
            raise TypeError(f"rows must be DimensionRow objects, got {type(row).__name__}")
        exact = row.certified is not None and row.certified.exact
        ratio = (
            f"{row.n_params / row.certified.lower:.2f}" if exact and row.certified.lower else "–"
        )
        body.append(
            [
                str(row.widths),
                str(row.attn),
                str(row.n_params),
                "none" if row.expected is None else str(row.expected),
                _cert_text(row.certified),
                _float_text(row, gaps),
                ratio,
            ]
        )
    if style == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    cols = list(zip(header, *body, strict=True))
    sizes = [max(len(c) for c in col) for col in cols]
    lines = ["  ".join(h.ljust(s) for h, s in zip(header, sizes, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(s) for c, s in zip(r, sizes, strict=True)).rstrip() for r in body]
    return "\n".join(lines)


def _parse_sizes(text: str, name: str) -> tuple[int, ...]:
    parts = [p for p in text.replace("(", " ").replace(")", " ").replace(",", " ").split() if p]
    try:
        return tuple(int(p) for p in parts)
    except ValueError as err:
        raise ValueError(f"{name} must be integers separated by commas, got {text!r}") from err


def explore(widths: Sequence[int], attn: Sequence[int], t: int = 3, certify: bool = True) -> str:
    """The explorer's report for one architecture, as plain text (used by :func:`explorer`).

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture.
    t : int
        Tokens per input.
    certify : bool
        Run the exact computation (milliseconds for small architectures).

    Returns
    -------
    str
        Parameter count, expected dimension or the failed hypotheses, and the certificate.

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    w, a = check_architecture(widths, attn)
    t = _check_t(t)
    lines = [f"widths {w}, attn {a}, t = {t}", f"parameters P = {parameter_count(w, a)}"]
    failed = failed_hypotheses(w, a, t=t)
    if failed:
        lines.append("expected dimension: none, because")
        lines += [f"  - {f}" for f in failed]
        lines.append(f"  (the general-width formula would give {general_width_formula(w, a)})")
    else:
        lines.append(f"expected dimension: {general_width_formula(w, a)} ({formula_source(w, a)})")
    if certify:
        cert = certified_dimension_beyond_symmetries(w, a, t=t)
        lines.append(
            f"certificate: {cert.lower} ≤ dim ≤ {cert.upper} "
            f"({'exact' if cert.exact else 'not exact'}; mod p = {cert.prime}, "
            f"{cert.n_inputs} inputs)"
        )
    return "\n".join(lines)


def explorer() -> Any:
    """An interactive explorer (ipywidgets): choose widths and attention dims, see P and dim.

    Type widths ``d_0, …, d_l`` and attention dimensions ``a_1, …, a_l``; the explorer shows
    the parameter count, the expected dimension (or the hypotheses that fail) and the exact
    certificate (:func:`explore`). Needs a live Jupyter kernel (Binder, JupyterLab).

    Returns
    -------
    ipywidgets.VBox
        The widget (display it by leaving it as the last expression of a cell).

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    import ipywidgets as widgets

    widths_box = widgets.Text(value="3, 3, 3", description="widths")
    attn_box = widgets.Text(value="2, 2", description="attn")
    t_box = widgets.BoundedIntText(value=3, min=1, max=8, description="t")
    out = widgets.Output()

    def update(_change: Any = None) -> None:
        out.clear_output()
        with out:
            try:
                w = _parse_sizes(widths_box.value, "widths")
                a = _parse_sizes(attn_box.value, "attn")
                if parameter_count(w, a) > 400:
                    print("more than 400 parameters: too big for an interactive certificate")
                    print(explore(w, a, t=t_box.value, certify=False))
                else:
                    print(explore(w, a, t=t_box.value))
            except (ValueError, TypeError) as err:
                print(f"cannot use this input: {err}")

    for box in (widths_box, attn_box, t_box):
        box.observe(update, names="value")
    update()
    return widgets.VBox([widths_box, attn_box, t_box, out])
