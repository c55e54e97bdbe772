"""Multi-head attention: summed heads, and the standard layer with output maps (:doc:`/book/notes/multihead`).

Two forms, both lightning or normalized (``normalizer``, as in
:func:`lsa_lib.lightning.attention_layer`):

* **summed heads** ``X ↦ Σ_h V_h X S_h(X)``, every head a triple ``(Q_h, K_h, V_h)`` with
  ``V_h`` of shape ``(d_out, d)`` and one attention dimension ``a`` (the book's first model);
* **the standard layer** ``X ↦ Σ_h O_h V_h X S_h(X)``, every head a quadruple
  ``(Q_h, K_h, V_h, O_h)`` with ``Q_h, K_h ∈ R^{d_k×d}``, ``V_h ∈ R^{d_v×d}``,
  ``O_h ∈ R^{d_out×d_v}`` (the per-head blocks of the transformer's output projection), sizes
  ``(d_k, d_v)`` free per head.

``S_h(X)`` is the score matrix ``Xᵀ K_hᵀ Q_h X`` (lightning) or its normalization. Head
indices are 1-based. Each head depends on its weights only through ``A_h = K_hᵀ Q_h`` and
``W_h = O_h V_h``; the changes of basis inside these two products, the permutations of heads
and (lightning) the per-head scaling are symmetries. Lightning heads can also mix
(:func:`mix_heads`, ``a ≥ d``), move inside the span of all attention matrices (``a = d − 1``)
and, for scalar outputs, exchange values (:func:`exchange_values`); softmax heads cannot
(:func:`multihead_dimension` compares both with the count of the per-head symmetries, and
:func:`moves_possible` says when the sizes of the heads allow such moves).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from . import _backend, _checks, _generators, _head_moves, _kernel, _limits
from ._checks import Array
from .lightning import Layer
from .rank import ExactRank, FloatRank, Parametrization, exact_rank, float_rank

__all__ = [
    "multihead_attention",
    "mix_heads",
    "exchange_values",
    "cubic_map_dimension",
    "moves_possible",
    "multihead_parametrization",
    "multihead_dimension",
]


def _heads(heads: Any, like: Any = None) -> list[tuple[Any, ...]]:
    checked = _checks.layers(heads, chain=False, like=like)
    (a, d), d_out = checked[0][0].shape, checked[0][2].shape[0]
    for h, (Q, _, V) in enumerate(checked, start=1):
        if tuple(Q.shape) != (a, d) or V.shape[0] != d_out:
            raise ValueError(
                f"all heads must have Q, K of shape (a, d) = {(a, d)} and V of shape "
                f"(d_out, d) = {(d_out, d)}; head {h} has Q {tuple(Q.shape)}, V {tuple(V.shape)}"
            )
    return checked


def _output_heads(heads: Any, like: Any = None) -> list[tuple[Any, ...]]:
    """Checked ``(Q, K, V, O)`` heads: ``Q, K`` ``(d_k, d)``, ``V`` ``(d_v, d)``, ``O`` ``(d_out, d_v)``."""
    out: list[tuple[Any, ...]] = []
    d = d_out = None
    for h, head in enumerate(heads, start=1):
        Q, K, V, O = (
            _checks.array(M, f"{name} of head {h}", like=like)
            for M, name in zip(head, "QKVO", strict=True)
        )
        _checks.layer_shapes_fit(Q, K, V, f" of head {h}")
        if len(O.shape) != 2 or O.shape[1] != V.shape[0]:
            raise ValueError(
                f"O of head {h} must have shape (d_out, d_v) with d_v = {V.shape[0]} (the rows "
                f"of V), got O {tuple(O.shape)}"
            )
        if d is None:
            d, d_out = Q.shape[1], O.shape[0]
        elif Q.shape[1] != d or O.shape[0] != d_out:
            raise ValueError(
                f"all heads must read width d = {d} and write width d_out = {d_out}; head {h} "
                f"has Q {tuple(Q.shape)} and O {tuple(O.shape)}"
            )
        out.append((Q, K, V, O))
    return out


def _form(heads: Any) -> int:
    """3 (summed heads) or 4 (heads with output maps), from the structure of ``heads``."""
    if isinstance(heads, (str, bytes)) or not isinstance(heads, Sequence) or not heads:
        raise ValueError("heads must be a non-empty list of (Q, K, V) or (Q, K, V, O) tuples")
    sizes = {len(h) if isinstance(h, (tuple, list)) else None for h in heads}
    if sizes == {4}:
        return 4
    if sizes == {3}:
        return 3
    raise TypeError(
        "heads must be all (Q, K, V) triples (summed heads) or all (Q, K, V, O) quadruples "
        f"(heads with output maps); got tuples of sizes {sorted(map(str, sizes))}"
    )


def multihead_attention(
    X: ArrayLike, heads: Sequence[Sequence[ArrayLike]], normalizer: str | None = None
) -> Array:
    """A multi-head layer: ``Σ_h V_h X S_h(X)`` or, with output maps, ``Σ_h O_h V_h X S_h(X)``.

    ``S_h(X)`` holds the scores ``K_h x_i · Q_h x_j`` (lightning) or their normalization over
    the keys ``i``; every head is one call of the library's attention kernel, the output map
    applied after it. Explained in :doc:`/book/notes/multihead`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    heads : sequence of (Q, K, V) or of (Q, K, V, O)
        Triples: summed heads, ``Q_h, K_h`` of one shape ``(a, d)``, ``V_h`` of shape
        ``(d_out, d)``. Quadruples: the standard layer, ``Q_h, K_h`` of shape ``(d_k, d)``,
        ``V_h`` of shape ``(d_v, d)``, ``O_h`` of shape ``(d_out, d_v)``, ``d_k`` and ``d_v``
        free per head.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (``"exp"``: softmax).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]

    Raises
    ------
    ValueError
        On shapes that do not fit (every head must read ``d`` and write ``d_out``).
    TypeError
        If triples and quadruples are mixed, or an entry is not numeric.
    """
    S = _kernel.normalizer(normalizer)
    like = _checks.torch_like(X, heads)
    if _form(heads) == 4:
        checked = _output_heads(heads, like)
        X = _checks.array(X, "X", like=like)
        _checks.tokens_fit(X, checked[0][0], "Q_1 and K_1")
        out = checked[0][3] @ _kernel.layer(X, *checked[0][:3], S)
        for Q, K, V, O in checked[1:]:
            out = out + O @ _kernel.layer(X, Q, K, V, S)
        return _checks.finite_result(out, "multihead_attention")
    checked = _heads(heads, like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, checked[0][0])
    out = _kernel.layer(X, *checked[0], S)
    for head in checked[1:]:
        out = out + _kernel.layer(X, *head, S)
    return _checks.finite_result(out, "multihead_attention")


def _realize(A: Any, a: int) -> tuple[Any, Any]:
    """``(Q, K)`` with ``Kᵀ Q = A`` and ``a ≥ d`` rows: ``Q = [I_d; 0]``, ``K = [Aᵀ; 0]``."""
    d, tor = A.shape[0], _checks.is_torch(A)
    Q, K = (torch.zeros((a, d), dtype=A.dtype) if tor else np.zeros((a, d)) for _ in range(2))
    Q[:d] = torch.eye(d, dtype=A.dtype) if tor else np.eye(d)
    K[:d] = A.T
    return Q, K


def mix_heads(heads: Sequence[Layer], G: ArrayLike) -> list[Layer]:
    """Mix heads by ``G ∈ GL_H`` (needs ``a ≥ d``): the sum of the heads is unchanged.

    ``V'_h = Σ_k G_hk V_k`` and ``A'_h = Σ_k (G⁻¹)_kh A_k``, realized as ``Q'_h = [I_d; 0]``,
    ``K'_h = [A'_hᵀ; 0]``. Explained in :doc:`/book/notes/multihead`.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
        ``H`` heads with ``a ≥ d``.
    G : array-like, shape=[H, H]
        Invertible.

    Returns
    -------
    list of (Q, K, V)

    Raises
    ------
    ValueError
        If ``a < d`` (then ``A'_h`` would need rank ``> a``).
    """
    like = _checks.torch_like(heads, G)
    checked = _heads(heads, like)
    (a, d), H = checked[0][0].shape, len(checked)
    if a < d:
        raise ValueError(
            f"mixing heads needs a ≥ d (attention matrices of any rank); got a={a}, d={d}"
        )
    G, Gi = _checks.inverse(G, H, "G", like=checked[0][0])
    As = [K.T @ Q for Q, K, _ in checked]
    out = []
    for h in range(H):
        Vn = sum(G[h, k] * checked[k][2] for k in range(H))
        out.append((*_realize(sum(Gi[k, h] * As[k] for k in range(H)), a), Vn))
    return out


def exchange_values(heads: Sequence[Layer], h: int, l: int, u: ArrayLike) -> list[Layer]:
    """Scalar outputs (``d_out = 1``, ``a ≥ d``): ``A_h ↦ A_h + w_l uᵀ``, ``A_l ↦ A_l − w_h uᵀ``.

    With ``V_h = w_hᵀ`` the change adds ``(w_h·x_i)(w_l·x_i)(u·x_j) − (w_l·x_i)(w_h·x_i)(u·x_j)
    = 0``: the values are numbers, which commute. Explained in :doc:`/book/notes/multihead`.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
        ``V_h`` of shape ``(1, d)``, ``a ≥ d``.
    h, l : int
        Two different heads, 1-based.
    u : array-like, shape=[d]

    Returns
    -------
    list of (Q, K, V)
        Heads ``h`` and ``l`` realized as ``Q' = [I_d; 0]``, ``K' = [A'ᵀ; 0]``.
    """
    like = _checks.torch_like(heads, u)
    checked = _heads(heads, like)
    (a, d), H = checked[0][0].shape, len(checked)
    if checked[0][2].shape[0] != 1 or a < d:
        raise ValueError(
            f"exchange_values needs d_out = 1 and a ≥ d, got d_out={checked[0][2].shape[0]}, "
            f"a={a}, d={d}"
        )
    h, l = _checks.index(h, H, "h"), _checks.index(l, H, "l")
    if h == l:
        raise ValueError("h and l must be different heads")
    u = _checks.array(u, "u", min_ndim=1, like=like).reshape(1, -1)
    if u.shape[1] != d:
        raise ValueError(f"u must have {d} entries, got {u.shape[1]}")
    out = list(checked)
    for k, B in ((h, checked[l - 1][2].T @ u), (l, -(checked[h - 1][2].T @ u))):
        Q, K, V = checked[k - 1]
        out[k - 1] = (*_realize(K.T @ Q + B, a), V)
    return out


def cubic_map_dimension(d: int, d_out: int) -> int:
    """``d_out · d · d(d+1)/2``: the dimension of the cubic maps ``X ↦ [Σ_i T(x_i, x_i, x_j)]_j``.

    Every sum of heads is such a map (``T`` symmetric in its first two slots; different ``T``
    give different maps for ``t ≥ 2``): a bound for the dimension of any number of heads.
    Explained in :doc:`/book/notes/multihead`.

    Parameters
    ----------
    d, d_out : int

    Returns
    -------
    int
    """
    d, d_out = _checks.size(d, "d"), _checks.size(d_out, "d_out")
    return d_out * d * d * (d + 1) // 2


def moves_possible(d: int, d_out: int, heads: Sequence[tuple[int, int]]) -> bool:
    """Whether lightning heads of these sizes admit moves between heads (the standard layer).

    Each head depends on its weights through ``A_h = K_hᵀ Q_h`` and the product ``O_h V_h``.
    Call the product *free* when ``d_v ≥ min(d, d_out)`` (it can be any ``d_out × d`` matrix)
    and ``A_h`` free when ``d_k ≥ d``. The moves of :func:`multihead_parametrization`
    (``mixing``) need: a free product in one head and a free ``A_l`` in another (mixing);
    scalar outputs ``d_out = 1``, two heads, and a free ``A_l`` or one with ``d_k = d − 1``
    (exchange); a head with ``d_k = d − 1`` and free products in at least two other heads
    (rank-keeping); or a product that is not free, of rank ``r_v = min(d_v, d, d_out)``, and at
    least ``(d − r_v)(d_out − r_v) + 1`` other heads with a free ``A`` (the product moves inside
    the span of the others, keeping its rank; the generators hold these moves only for
    ``d_out = d``, ``d_v = d − 1``). The sizes alone decide; the weights do not. Explained in
    :doc:`/book/notes/multihead/output-maps`.

    Parameters
    ----------
    d, d_out : int
        Input and output width.
    heads : sequence of (d_k, d_v)
        One pair of sizes per head.

    Returns
    -------
    bool
        True if some pair of heads can mix or exchange, or some head's ``A_h`` or product can
        move while it keeps its rank.

    Raises
    ------
    ValueError, TypeError
        On sizes that are not positive integers or a ``heads`` that is not a list of pairs.
    """
    d, d_out = _checks.size(d, "d"), _checks.size(d_out, "d_out")
    sizes = _head_sizes(heads)
    free_W = [d_v >= min(d, d_out) for _, d_v in sizes]
    free_A = [d_k >= d for d_k, _ in sizes]
    H = len(sizes)
    mix = any(free_W[h] and free_A[l] for h in range(H) for l in range(H) if h != l)
    exchange = (
        d_out == 1 and H >= 2 and any(free or d_k == d - 1 for free, (d_k, _) in zip(free_A, sizes))
    )
    keep = any(d_k == d - 1 and sum(free_W) - free_W[h] >= 2 for h, (d_k, _) in enumerate(sizes))
    keep_product = any(
        not free_W[h]
        and sum(free_A) - free_A[h] >= (d - min(d_v, d, d_out)) * (d_out - min(d_v, d, d_out)) + 1
        for h, (_, d_v) in enumerate(sizes)
    )
    return mix or exchange or keep or keep_product


def _too_many_tangents(n: int, P: int) -> None:
    """Refuse symmetry tangents (exact integers, about 40 bytes each) this machine cannot hold."""
    _limits.fits(40 * n * P, f"about {n} symmetry tangents of {P} exact entries each")


def _head_sizes(heads: Any) -> list[tuple[int, int]]:
    if isinstance(heads, (str, bytes)) or not isinstance(heads, Sequence) or not heads:
        raise ValueError("heads must be a non-empty list of (d_k, d_v) pairs, one per head")
    out = []
    for h, pair in enumerate(heads, start=1):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"head {h} must be a (d_k, d_v) pair of sizes, got {pair!r}")
        out.append(
            (_checks.size(pair[0], f"d_k of head {h}"), _checks.size(pair[1], f"d_v of head {h}"))
        )
    return out


def _product_dimension(rows: int, inner: int, cols: int) -> int:
    """The dimension of the ``rows × cols`` matrices of rank ``≤ inner``: ``r (rows + cols − r)``."""
    r = min(rows, inner, cols)
    return r * (rows + cols - r)


def _count(d: int, d_out: int, sizes: Sequence[tuple[int, int]], lightning: bool) -> int:
    """``Σ_h [r_k (2d − r_k) + r_v (d + d_out − r_v)]``, minus ``H`` for lightning."""
    total = sum(_product_dimension(d, dk, d) + _product_dimension(d_out, dv, d) for dk, dv in sizes)
    return total - len(sizes) if lightning else total


def multihead_parametrization(
    d: int,
    d_out: int,
    a: int | None = None,
    H: int | None = None,
    t: int = 3,
    mixing: bool = True,
    *,
    heads: Sequence[tuple[int, int]] | None = None,
    normalizer: str | None = None,
) -> Parametrization:
    """A multi-head layer as a map for the rank engine (:doc:`/book/notes/multihead`).

    Either ``H`` summed heads of attention dimension ``a`` (blocks ``Q_1, K_1, V_1, …``), or,
    with ``heads``, the standard layer with output maps (blocks ``Q_1, K_1, V_1, O_1, …``).

    Parameters
    ----------
    d, d_out : int
        Input and output width.
    a, H : int, optional
        Summed heads: the attention dimension of every head and the number of heads.
    t : int
        Tokens per input (at least 2).
    mixing : bool
        Lightning only: include, besides the per-head symmetries, the head-mixing tangents
        (``a ≥ d``), the rank-keeping moves (``a = d − 1``) and the exchange moves
        (``d_out = 1``). With output maps they are lifted through ``W_h = O_h V_h`` when every
        head has the same ``d_k`` and ``d_v ≥ min(d, d_out)``.
    heads : sequence of (d_k, d_v), optional
        The standard layer: one pair per head (then ``a`` and ``H`` stay None).
    normalizer : str, optional
        None (lightning, polynomial) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (the
        float engine only; the generators are then the changes of basis alone).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Summed heads: ``predicted`` is, with ``mixing``, the book's conjecture
        ``min(cubic_map_dimension, P − H·f − H·max(1, min(H, d²) − (d − r)²))`` with ``f`` the
        fiber dimension of ``(Q, K) ↦ A`` and ``r = min(a, d)`` (None for ``d_out = 1``,
        ``H ≥ 2``);
        without, or with a normalizer, the per-head count ``P − H (f + 1)`` (``P − H f``).
        Output maps: ``predicted`` is the count of the per-head symmetries,
        ``Σ_h [r_k (2d − r_k) + r_v (d + d_out − r_v)]`` with ``r_k = min(d_k, d)``,
        ``r_v = min(d_v, d, d_out)``, minus ``H`` for lightning; the generators span the
        fibers of ``(Q_h, K_h) ↦ K_hᵀ Q_h`` and ``(V_h, O_h) ↦ O_h V_h`` (``GL_{d_k}``,
        ``GL_{d_v}`` and, for ``d_v`` strictly between ``d_out`` and ``d``, the moves of
        ``V_h`` inside ``ker O_h`` or of ``O_h`` against the column space of ``V_h``), the
        lightning scaling and the lifted mixing.

    Raises
    ------
    ValueError
        If both or neither of ``(a, H)`` and ``heads`` are given, or a size is not positive.
    """
    d, d_out = _checks.size(d, "d"), _checks.size(d_out, "d_out")
    t, S = _checks.tokens(t, minimum=2), _kernel.normalizer(normalizer)
    mixing = _checks.flag(mixing, "mixing")
    if heads is not None:
        if a is not None or H is not None:
            raise ValueError("give either a and H (summed heads) or heads=[(d_k, d_v), ...]")
        return _output_parametrization(d, d_out, _head_sizes(heads), t, normalizer, mixing)
    if a is None or H is None:
        raise ValueError("give a and H (summed heads) or heads=[(d_k, d_v), ...] (output maps)")
    a, H = _checks.size(a, "a"), _checks.size(H, "H")
    P, f, r = H * (2 * a * d + d_out * d), _generators.attention_fiber_dimension(a, d), min(a, d)
    if S is not None:
        predicted: int | None = P - H * f
    elif not mixing:
        predicted = P - H * (f + 1)
    elif d_out == 1 and H > 1:
        predicted = None
    else:
        span = min(H, d * d)  # the span of the H attention matrices
        predicted = min(cubic_map_dimension(d, d_out), P - H * f - H * max(1, span - (d - r) ** 2))

    def forward(params: Sequence[Any], X: Any) -> Any:
        out = _kernel.layer(X, *params[0:3], S)
        for h in range(1, H):
            out = out + _kernel.layer(X, *params[3 * h : 3 * h + 3], S)
        return out

    def generators(params: Sequence[Any]) -> np.ndarray:
        moves = H * H * (1 + d) + H**3 // 2 if S is None and mixing else 0
        _too_many_tangents(H * (a * a + 1) + moves, P)
        T = _generators.Tangents([_backend.exact(p) for p in params])
        T.triples(H, scaling=S is None)  # a normalizer breaks the scaling (Q, 0, −V)
        if S is None and mixing:
            _head_moves.summed_moves(T, H, a, d)
        return T.matrix()

    return Parametrization(
        name=f"{H} heads d={d} d'={d_out} a={a}" + (f" {normalizer}" if S else ""),
        shapes=tuple(s for _ in range(H) for s in ((a, d), (a, d), (d_out, d))),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        polynomial=S is None,
        predicted=predicted,
    )


def _output_parametrization(
    d: int, d_out: int, sizes: list[tuple[int, int]], t: int, normalizer: str | None, mixing: bool
) -> Parametrization:
    S = _kernel.normalizer(normalizer)
    H = len(sizes)
    shapes = tuple(s for dk, dv in sizes for s in ((dk, d), (dk, d), (dv, d), (d_out, dv)))

    def forward(params: Sequence[Any], X: Any) -> Any:
        out = params[3] @ _kernel.layer(X, *params[0:3], S)
        for h in range(1, H):
            out = out + params[4 * h + 3] @ _kernel.layer(X, *params[4 * h : 4 * h + 3], S)
        return out

    def generators(params: Sequence[Any]) -> np.ndarray:
        per_head = sum(dk * dk + dv * dv + dv * (d + d_out) + 1 for dk, dv in sizes)
        moves = H * H * (1 + d) + H**3 // 2 if S is None and mixing else 0
        _too_many_tangents(per_head + moves, sum(int(np.prod(s)) for s in shapes))
        T = _generators.Tangents([_backend.exact(p) for p in params])
        _head_moves.output_tangents(T, sizes, S is None, mixing)
        return T.matrix()

    label = ", ".join(f"({dk},{dv})" for dk, dv in sizes)
    return Parametrization(
        name=f"heads [{label}] d={d} d'={d_out} {normalizer or 'lightning'}",
        shapes=shapes,
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        polynomial=S is None,
        predicted=_count(d, d_out, sizes, S is None),
    )


def multihead_dimension(
    d: int,
    d_out: int,
    heads: Sequence[tuple[int, int]],
    *,
    normalizer: str | None = None,
    t: int = 3,
    method: str | None = None,
    seed: int = 0,
    weight_scale: float = 1.0,
) -> tuple[ExactRank | FloatRank, int]:
    """The dimension of the standard multi-head layer, and the count of its per-head symmetries.

    The layer ``X ↦ Σ_h O_h V_h X S_h(X)`` of :func:`multihead_attention` with output maps.
    ``"exact"`` (the default for lightning): certified bounds from
    :func:`lsa_lib.rank.exact_rank`, the upper bound ``P`` minus the rank of the symmetry
    tangents of :func:`multihead_parametrization` (for lightning also at most
    :func:`cubic_map_dimension`, which bounds every sum of lightning heads); for a normalized
    layer the lower bound is a Jacobian minor proven non-zero in ball arithmetic. ``"float"``
    (the default with a normalizer): the float64 Jacobian rank read at its largest gap
    (:func:`lsa_lib.rank.float_rank`). Explained in :doc:`/book/notes/multihead/output-maps`.

    Parameters
    ----------
    d, d_out : int
        Input and output width.
    heads : sequence of (d_k, d_v)
        One pair per head: ``Q_h, K_h ∈ R^{d_k×d}``, ``V_h ∈ R^{d_v×d}``,
        ``O_h ∈ R^{d_out×d_v}``.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (``"exp"``).
    t : int
        Tokens per input (at least 2).
    method : {"exact", "float"}, optional
        Default ``"exact"`` for lightning, ``"float"`` with a normalizer.
    seed : int
        Seeds the point and the inputs.
    weight_scale : float
        The float engines' random point is ``weight_scale`` times standard normal (wide softmax
        layers need a smaller scale to keep their scores of order one).

    Returns
    -------
    reading : lsa_lib.rank.ExactRank or lsa_lib.rank.FloatRank
        ``.lower``, ``.upper``, ``.certified`` (exact); ``.rank``, ``.gap`` (float).
    count : int
        Parameters minus the fibers of the per-head products ``A_h = K_hᵀ Q_h`` and
        ``W_h = O_h V_h``: ``Σ_h [r_k (2d − r_k) + r_v (d + d_out − r_v)]`` with
        ``r_k = min(d_k, d)``, ``r_v = min(d_v, d, d_out)``, minus ``H`` for lightning (the
        per-head scaling). The dimension if these are all the symmetries.

    Raises
    ------
    lsa_lib.rank.RankAmbiguityError
        If a float reading shows no gap of at least :data:`lsa_lib.tolerances.GAP_MIN`.
    """
    param = multihead_parametrization(d, d_out, t=t, heads=heads, normalizer=normalizer)
    count = param.predicted
    assert count is not None
    default = "exact" if param.polynomial else "float"
    method = _checks.choice(default if method is None else method, "method", ("exact", "float"))
    scale = _checks.real(weight_scale, "weight_scale", positive=True)
    if method == "float":
        return float_rank(param, seed=seed, weight_scale=scale), count
    if param.polynomial:
        c = exact_rank(param, seed=seed)
        upper = min(c.upper, cubic_map_dimension(d, d_out))
        return replace(c, upper=upper), count
    rng = np.random.default_rng(_checks.seed(seed))
    point = [scale * rng.standard_normal(s) for s in param.shapes]
    return exact_rank(param, point, seed=seed), count
