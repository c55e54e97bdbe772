"""The closed dimension formulas and their hypotheses (part of :mod:`lsa_lib.dimension`).

The general-width formula, the seen dimension of a hidden layer, the hypotheses a formula
needs (:func:`failed_hypotheses`) and the dimension they give where they all hold
(:func:`expected_dimension`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _checks, _kernel


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
    return value if _kernel.normalizer(normalizer) is not None else value - l


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
    if _kernel.normalizer(normalizer) is not None:
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
