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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import _checks
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
    "extra_fiber_directions",
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
                "for normalized networks with l ≥ 2 only equal widths d_0 = … = d_l = δ with "
                f"a_i ≤ δ are covered (the dimension the paper's Conjecture 3.10 predicts); got "
                f"widths {w}, attn {a}"
            )
        return failed
    if any(w[i] < w[i + 1] for i in range(l - 1)):
        failed.append(
            f"non-increasing input and hidden widths d_0 ≥ … ≥ d_{{l-1}} are required, got {w[:l]}"
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


def _orthogonal_vectors(S: list[list[int]], n: int) -> list[list[int]]:
    """Integer vectors orthogonal to the ``m < n`` rows of ``S`` (generalized cross products).

    For each set of ``n − 1 − m`` unit rows ``E``, the cofactor vector of ``[S; E]``; for
    generic ``S`` they span the orthogonal complement of its rows.
    """
    out = []
    for extra in itertools.combinations(range(n), n - 1 - len(S)):
        rows = S + [[1 if c == e else 0 for c in range(n)] for e in extra]
        out.append([(-1) ** c * _det([r[:c] + r[c + 1 :] for r in rows]) for c in range(n)])
    return out


def extra_fiber_directions(
    layers: Sequence[Layer], t: int = 3, *, normalizer: str | None = None
) -> NDArray[np.object_]:
    """Directions along which the function does not change, beyond the three symmetries.

    Polynomial with integer coefficients in the weights (so they tighten the exact engine's
    upper bound). Explained in :doc:`/book/04_dimension/counterexamples` and
    :doc:`/book/notes/general_widths` (the certified counterexamples):

    * **token-rank collapse** (lightning only): after a layer with ``a_i = 1`` (``i < l``),
      every later layer ``j`` sees only sym(A_j); ``(δQ_j, δK_j) = (N K_j, 0)`` and
      ``(0, N Q_j)`` with ``N = E_rs − E_sr`` move ``A_j`` by antisymmetric matrices (with
      ``t = 1``: every layer);
    * **unread hidden directions** (every normalizer): for integer ``w`` orthogonal to the
      rows of ``V_{i+1}``, ``K_{i+1}``, ``Q_{i+1}`` and every unit ``e_c``, ``δV_i = w e_cᵀ``
      changes nothing (layer ``i + 1`` reads its input only through those rows).

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Integer-valued weights.
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`: then only the
        families that are exact symmetries of the normalized network are returned.

    Returns
    -------
    numpy.ndarray of Python int, shape=[n_directions, P]
        Rows in the order ``Q_1, K_1, V_1, Q_2, …``.
    """
    t = _checks.tokens(t)
    normalized = _normalizer(normalizer) is not None
    mats = [
        tuple(_checks.integer_matrix(M, f"{n} of layer {i}").tolist() for n, M in zip("QKV", L))
        for i, L in enumerate(_checks.exact_layers(layers), start=1)
    ]
    offsets = np.cumsum([0] + [2 * len(Q) * len(Q[0]) + len(V) * len(V[0]) for Q, _, V in mats])
    P, l, rows = int(offsets[-1]), len(mats), []
    first = 0 if t == 1 else next((i + 1 for i, m in enumerate(mats[:-1]) if len(m[0]) == 1), l)
    if normalized:  # a normalized layer does not collapse its tokens
        first = l
    for j in range(first, l):
        Q, K, _ = mats[j]
        a, d = len(Q), len(Q[0])
        for r, s in itertools.combinations(range(a), 2):
            for shift, source in ((0, K), (a * d, Q)):  # δQ = N K, then δK = N Q
                row = [0] * P
                start = int(offsets[j]) + shift
                for k in range(d):  # N source: row r is source[s], row s is −source[r]
                    row[start + r * d + k] = source[s][k]
                    row[start + s * d + k] = -source[r][k]
                rows.append(row)
    for i in range(l - 1):
        V, (Qn, Kn, Vn) = mats[i][2], mats[i + 1]
        d_i, d_prev = len(V), len(V[0])
        if len(Vn) + len(Kn) + len(Qn) >= d_i:
            continue
        start = int(offsets[i]) + 2 * len(mats[i][0]) * d_prev
        for w in _orthogonal_vectors(Vn + Kn + Qn, d_i):
            for c in range(d_prev):
                row = [0] * P
                for r in range(d_i):
                    row[start + r * d_prev + c] = w[r]
                rows.append(row)
    out = np.empty((len(rows), P), dtype=object)
    for k, row in enumerate(rows):
        out[k, :] = row
    return out


def exact_dimension(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalizer: str | None = None,
    *,
    beyond_symmetries: bool = False,
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
    if _checks.flag(beyond_symmetries, "beyond_symmetries"):
        n = len(a)

        def generators(params: Sequence[Any]) -> NDArray[np.object_]:
            layers = [
                tuple(np.asarray(M).astype(np.int64) for M in params[3 * i : 3 * i + 3])
                for i in range(n)
            ]
            known = symmetry_generators(layers, normalizer).astype(object)
            extra = extra_fiber_directions(layers, t, normalizer=normalizer)
            return np.concatenate([known, extra]) if extra.shape[0] else known

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
