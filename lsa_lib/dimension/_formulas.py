"""The closed dimension formulas and their hypotheses (part of :mod:`lsa_lib.dimension`).

The general-width formula, the seen dimension of a hidden layer (how much of it the later
layers read), the hypotheses the formula needs (:data:`HYPOTHESES`, :func:`failed_hypotheses`)
and the dimension it gives where they all hold (:func:`expected_dimension`). The book's rules
(:mod:`lsa_lib.rules`) build their domains from the same hypotheses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _checks, _kernel
from .._clauses import Clause, failing


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


def _read_bounds(
    widths: Sequence[int], attn: Sequence[int], attention_read: bool = True
) -> list[int]:
    """``ŝ_0, …, ŝ_l``: the seen dimensions of :func:`seen_dimension` (``ŝ_l = d_l``).

    ``ŝ_i = min(d_i, 2 min(a_{i+1}, d_i) + min(ŝ_{i+1}, d_{i+1}))``; without the ``Q, K`` rows
    (``2 min(a_{i+1}, d_i)`` dropped) when the attention is not read (one token, normalized).
    Widths and attention dimensions are taken as checked.
    """
    l = len(attn)
    bound = [0] * (l + 1)
    bound[l] = widths[l]
    for i in range(l - 1, -1, -1):
        qk = 2 * min(attn[i], widths[i]) if attention_read else 0
        bound[i] = min(widths[i], qk + min(bound[i + 1], widths[i + 1]))
    return bound


def seen_dimension(widths: Sequence[int], attn: Sequence[int], i: int) -> int:
    """How many directions of hidden layer ``i``'s output the later layers read, generically.

    The later layers see the hidden tokens ``X_i`` only through the *read matrix*
    ``Rd_i = [Q_{i+1}; K_{i+1}; Rd_{i+1} V_{i+1}]`` (``Rd_l = I``), whose generic rank is
    the recursion

    ``ŝ_l = d_l``,  ``ŝ_i = min(d_i, 2 r_{i+1} + min(ŝ_{i+1}, d_{i+1}))``,  ``r_j = min(a_j, d_{j-1})``;

    unrolled, ``ŝ_i = min over k ≥ i of d_k + 2 Σ_{j=i+1}^{k} r_j``: a narrow layer anywhere
    later limits what reaches the output. Layer ``i`` is *fully read* when ``ŝ_i = d_i``.
    Explained in :doc:`/book/notes/general_widths` (where a bound that looks only one layer
    ahead fails from depth 4) and :doc:`/book/notes/widening` (the read matrices).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    i : int
        A hidden layer, ``1 ≤ i ≤ l − 1``.

    Returns
    -------
    int

    Examples
    --------
    >>> seen_dimension((5, 4, 1), (2, 1), 1)  # Q_2, K_2 and V_2: 1 + 1 + 1 rows
    3
    >>> seen_dimension((7, 6, 6, 1, 1), (1, 1, 1, 1), 1)  # 1 + 1 + (1 + 1 + 1): layer 3 is narrow
    5
    """
    w, a = _checks.architecture(widths, attn)
    l = len(a)
    if l < 2:
        raise ValueError(f"i must be a hidden layer index 1 ≤ i ≤ l − 1 = {l - 1}, got {i!r}")
    i = _checks.index(i, l - 1, "i (a hidden layer)")
    return _read_bounds(w, a)[i]


def unread_count(widths: Sequence[int], attn: Sequence[int]) -> int:
    """``Σ (d_i − ŝ_i)(d_{i-1} − d_i)`` over the narrowing hidden layers (``d_i < d_{i-1}``).

    What the general-width formula over-counts when a narrowing hidden layer is not fully read
    (:func:`seen_dimension`): its unread directions, once per input direction it drops.
    Explained in :doc:`/book/notes/general_widths` (the counterexample ``(5, 4, 1)``).

    Parameters
    ----------
    widths, attn : sequence of int

    Returns
    -------
    int

    Examples
    --------
    >>> unread_count((5, 4, 1), (2, 1))  # one unread direction of a 4-dim layer fed by 5
    1
    """
    w, a = _checks.architecture(widths, attn)
    seen = _read_bounds(w, a)
    return sum((w[i] - seen[i]) * (w[i - 1] - w[i]) for i in range(1, len(a)) if w[i] < w[i - 1])


# ---------------------------------------------------------------- the hypotheses ---


def _enough_tokens(widths: Any, attn: Any, t: int) -> bool:
    return t >= 2


def _why_tokens(widths: Any, attn: Any, t: int) -> str:
    return (
        f"t ≥ 2 tokens is required (t = {t}: with one token only the symmetric part of each "
        "attention matrix is seen, and the dimension drops)"
    )


def _widening(widths: Any, attn: Any) -> int | None:
    """The first layer ``i < l`` with ``d_i > d_{i-1}`` (1-based), or None."""
    return next((i for i in range(1, len(attn)) if widths[i] > widths[i - 1]), None)


def _non_increasing(widths: Any, attn: Any, t: int) -> bool:
    return _widening(widths, attn) is None


def _why_widening(widths: Any, attn: Any, t: int) -> str:
    i = _widening(widths, attn)
    return (
        "non-increasing input and hidden widths d_0 ≥ … ≥ d_{l-1} are required, but layer "
        f"{i} widens: d_{i} = {widths[i]} > d_{i - 1} = {widths[i - 1]}"
    )


def _costly_collapse(attn: Any) -> tuple[int, list[int]] | None:
    """A layer with ``a_i = 1`` (``i < l``) and the later layers with ``a_j ≥ 2`` (1-based)."""
    first = next((i for i in range(len(attn) - 1) if attn[i] == 1), None)
    later = [] if first is None else [j + 1 for j in range(first + 1, len(attn)) if attn[j] >= 2]
    return (first + 1, later) if later else None


def _no_collapse_loss(widths: Any, attn: Any, t: int) -> bool:
    return _costly_collapse(attn) is None


def _why_collapse(widths: Any, attn: Any, t: int) -> str:
    first, later = _costly_collapse(attn)  # type: ignore[misc]
    return (
        f"layer {first} has attention dimension 1, so it collapses the tokens to a line, and the "
        f"later {_layers(later)} attention dimension at least 2 (their antisymmetric directions "
        "are lost)"
    )


def _unread_layers(widths: Any, attn: Any) -> list[tuple[int, int]]:
    """The narrowing hidden layers ``i`` with ``ŝ_i < d_i``, with ``ŝ_i``."""
    seen = _read_bounds(widths, attn)
    return [
        (i, seen[i])
        for i in range(1, len(attn))
        if widths[i] < widths[i - 1] and seen[i] < widths[i]
    ]


def _fully_read(widths: Any, attn: Any, t: int) -> bool:
    return not _unread_layers(widths, attn)


def _why_unread(widths: Any, attn: Any, t: int) -> str:
    parts = [
        f"hidden layer {i} (d_{i} = {widths[i]} < d_{i - 1} = {widths[i - 1]}) must be fully "
        f"read by the later layers, but they read at most {s} of its {widths[i]} "
        "directions"
        for i, s in _unread_layers(widths, attn)
    ]
    return "; ".join(parts)


#: The hypotheses of the general-width formula, by name: each a clause with its words and its
#: test on a case ``widths, attn, t``. Lightning needs all four; softmax all but
#: ``"no collapse loss"``. The rules of :mod:`lsa_lib.rules` build their domains from them.
#: Explained in :doc:`/book/04_dimension/counterexamples` and :doc:`/book/notes/general_widths`.
HYPOTHESES: dict[str, Clause] = {
    "tokens": Clause("t ≥ 2", _enough_tokens, _why_tokens),
    "non-increasing": Clause(
        "non-increasing input and hidden widths d₀ ≥ … ≥ dₗ₋₁", _non_increasing, _why_widening
    ),
    "no collapse loss": Clause(
        "no aᵢ = 1 followed by a later aⱼ ≥ 2", _no_collapse_loss, _why_collapse
    ),
    "fully read": Clause(
        "every narrowing hidden layer fully read by the later layers (ŝᵢ = dᵢ)",
        _fully_read,
        _why_unread,
    ),
}


def _formula_hypotheses(normalizer: str | None = None) -> tuple[Clause, ...]:
    """The clauses of :data:`HYPOTHESES` that the general-width formula needs.

    Lightning: all four. Softmax (``"exp"``): a token collapse costs nothing (chapter 6), so
    all but ``"no collapse loss"``.

    Parameters
    ----------
    normalizer : str, optional
        None or ``"exp"``; the book states no formula for the other normalizers.

    Returns
    -------
    tuple of Clause

    Raises
    ------
    ValueError
        For another normalizer.
    """
    nz = _kernel.normalizer(normalizer)
    if nz is None:
        return tuple(HYPOTHESES.values())
    if nz.name != "exp":
        raise ValueError(_no_formula_for(nz))
    return tuple(c for k, c in HYPOTHESES.items() if k != "no collapse loss")


def _no_formula_for(nz: Any) -> str:
    return (
        "the book's dimension formulas for normalized networks are checked for the softmax "
        f"(normalizer 'exp') only, not for {nz.name!r} ({nz.formula}): with a homogeneous "
        "normalizer and some aᵢ = 1, for one, the weights stop depending on the query"
    )


def failed_hypotheses(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalizer: str | None = None
) -> list[str]:
    """The hypotheses of the general-width formula that the architecture violates.

    Lightning: ``t ≥ 2``, non-increasing ``d_0 ≥ … ≥ d_{l-1}``, no layer with ``a_i = 1``
    followed by a later layer with ``a_j ≥ 2`` (the first collapses the tokens to a line, and
    the later one then loses its antisymmetric directions, which are zero when ``a_j = 1``),
    every narrowing hidden layer fully read by the later ones (:func:`seen_dimension`). Softmax
    (``normalizer="exp"``): the same but the token collapse. Explained in
    :doc:`/book/04_dimension/counterexamples`, :doc:`/book/06_softmax` and
    :doc:`/book/notes/general_widths`.

    Parameters
    ----------
    widths, attn : sequence of int
    t : int
    normalizer : str, optional
        None or ``"exp"`` (for another normalizer the one sentence says no formula is checked).

    Returns
    -------
    list of str
        One sentence per violated hypothesis; empty when :func:`expected_dimension` applies.
    """
    w, a = _checks.architecture(widths, attn)
    case = {"widths": w, "attn": a, "t": _checks.tokens(t)}
    nz = _kernel.normalizer(normalizer)
    if nz is not None and nz.name != "exp":
        return [_no_formula_for(nz)]
    return [c.explain(**case) for c in failing(_formula_hypotheses(normalizer), **case)]


def _layers(indices: Sequence[int]) -> str:
    """'layer 3 has' / 'layers 2 and 3 have', for messages."""
    if len(indices) == 1:
        return f"layer {indices[0]} has"
    return "layers " + ", ".join(map(str, indices[:-1])) + f" and {indices[-1]} have"


def expected_dimension(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalizer: str | None = None
) -> int:
    """The dimension of the neuromanifold from the general-width formula, where it holds.

    Explained in :doc:`/book/04_dimension` (and :doc:`/book/06_softmax` for the softmax). The
    formula's hypotheses (:func:`failed_hypotheses`) are the domain of the rules
    "general widths" and "softmax formula" of :mod:`lsa_lib.rules`, which the tests check
    against every certified case of the atlas and of the sweep.

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    t : int
        Tokens per input (``t ≥ 2`` required).
    normalizer : str, optional
        None (lightning) or ``"exp"`` (softmax: one more dimension per layer; for the paper's
        configurations that is the dimension its Conjecture 3.10 predicts, the "Expected"
        values of Eq. 16).

    Returns
    -------
    int
        :func:`general_width_formula`, which contains the one-layer and equal-width formulas.

    Raises
    ------
    ValueError
        On a bad architecture, or when a hypothesis fails (the message names it): no number
        is returned where the book has no checked formula.

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
            f"no checked dimension formula for widths {tuple(widths)}, attn {tuple(attn)}, "
            f"t = {t}: " + "; ".join(failed)
        )
    return general_width_formula(widths, attn, normalizer)
