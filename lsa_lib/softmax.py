"""Normalized self-attention and the softmax conjecture (chapter "The softmax conjecture").

A normalized layer replaces the lightning scores ``s_ij = x_iᵀ A x_j`` (``A = Kᵀ Q``) by

    w_ij = S(s_ij) / Σ_k S(s_kj),

for a positive function ``S`` (``S = exp`` is softmax), and outputs ``Σ_i w_ij V x_i`` in
column ``j``. The paper proves that one softmax layer is generically identifiable in
``(A, V)`` and conjectures that deep softmax networks are identifiable in their virtual
weights, so that their dimension is the lightning dimension plus the number of layers
(Conjecture 3.10 and Eq. 16 of [HMK25]). This module builds the parametrizations the rank
engine (:mod:`lsa_lib.rank`) needs to test that, with ``exp`` or another normalizer, and the
data of the paper's Figure 3.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._core import _check_t, _is_torch, as_array, check_architecture, check_layers, parameter_count
from .dimension import expected_dimension
from .lightning import _softmax_columns
from .rank import (
    DEFAULT_MIN_GAP,
    NumericalDimension,
    Parametrization,
    RankAmbiguityError,
    RankReading,
    lightning_parametrization,
    numerical_rank,
)
from .symmetries import change_attention_basis, pass_through, scale_layers

try:
    import torch
except ImportError:  # pragma: no cover - torch is in requirements.txt
    torch = None  # type: ignore[assignment]

__all__ = [
    "NORMALIZERS",
    "normalized_attention",
    "normalized_network",
    "attention_value_normalized_parametrization",
    "normalized_parametrization",
    "SoftmaxFiber",
    "softmax_fiber_dimension",
    "rescaling_changes_function",
    "symmetry_defects",
    "SoftmaxEstimate",
    "softmax_dimension_estimate",
    "figure3_data",
    "gap_order",
    "format_estimates",
]


# --------------------------------------------------------------------------------------------
# normalizers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Normalizer:
    """A function ``S`` that turns scores into unnormalized weights.

    Attributes
    ----------
    name : str
        The key in :data:`NORMALIZERS`.
    formula : str
        ``S(x)`` written out.
    positive : bool
        ``S(x) > 0`` for every real ``x`` (so the normalization is always defined).
    homogeneous_degree : int or None
        ``k`` if ``S(c x) = cᵏ S(x)`` for all ``c > 0`` (then ``A ↦ c A`` leaves the layer
        unchanged), else ``None``.
    """

    name: str
    formula: str
    positive: bool
    homogeneous_degree: int | None
    function: Callable[[Any], Any]


def _square_plus_one(s: Any) -> Any:
    return s * s + 1


def _taylor2(s: Any) -> Any:
    return 1 + s + s * s * 0.5


def _square(s: Any) -> Any:
    return s * s


#: The normalizers the chapter compares. ``"exp"`` is softmax; ``"square_plus_one"``
#: (``x² + 1``) and ``"taylor2"`` (``1 + x + x²/2``, positive since its discriminant is
#: negative) are positive and not homogeneous; ``"square"`` (``x²``) is homogeneous of
#: degree 2 and only non-negative: it is there to show what homogeneity does.
NORMALIZERS: dict[str, Normalizer] = {
    "exp": Normalizer("exp", "exp(x)", True, None, np.exp),
    "square_plus_one": Normalizer("square_plus_one", "x² + 1", True, None, _square_plus_one),
    "taylor2": Normalizer("taylor2", "1 + x + x²/2", True, None, _taylor2),
    "square": Normalizer("square", "x²", False, 2, _square),
}


def _check_normalizer_or_lightning(normalizer: Any) -> Normalizer | None:
    return None if normalizer is None else _check_normalizer(normalizer)


def _check_normalizer(normalizer: Any) -> Normalizer:
    if not isinstance(normalizer, str):
        raise TypeError(
            f"normalizer must be one of {sorted(NORMALIZERS)} (a string), got "
            f"{type(normalizer).__name__}"
        )
    if normalizer not in NORMALIZERS:
        raise ValueError(
            f"unknown normalizer {normalizer!r}; expected one of {sorted(NORMALIZERS)}"
        )
    return NORMALIZERS[normalizer]


def _normalize_columns(scores: Any, normalizer: Normalizer) -> Any:
    """Weights ``S(s_ij) / Σ_k S(s_kj)``: each query column (axis -1) sums to 1 over keys."""
    if normalizer.name == "exp":
        return _softmax_columns(scores)  # shifted, numerically stable softmax
    E = normalizer.function(scores)
    if _is_torch(E):
        return E / E.sum(dim=-2, keepdim=True)
    return E / E.sum(axis=-2, keepdims=True)


def _mT(X: Any) -> Any:
    return np.swapaxes(X, -1, -2) if isinstance(X, np.ndarray) else X.mT


def _normalized_av(X: Any, A: Any, V: Any, normalizer: Normalizer | None) -> Any:
    scores = _mT(X) @ (A @ X)
    return (V @ X) @ (scores if normalizer is None else _normalize_columns(scores, normalizer))


def _normalized_qkv(X: Any, Q: Any, K: Any, V: Any, normalizer: Normalizer | None) -> Any:
    scores = _mT(K @ X) @ (Q @ X)
    return (V @ X) @ (scores if normalizer is None else _normalize_columns(scores, normalizer))


def _normalized_deep(X: Any, layers: Sequence[Any], normalizer: Normalizer | None) -> Any:
    for Q, K, V in layers:
        X = _normalized_qkv(X, Q, K, V, normalizer)
    return X


def _torch_like(*arrays: Any) -> Any:
    return next((a for a in arrays if _is_torch(a)), None)


def normalized_attention(X: Any, A: Any, V: Any, normalizer: str = "exp") -> Any:
    """One normalized attention layer in ``(A, V)`` coordinates.

    Column ``j`` of the output is ``Σ_i S(x_iᵀ A x_j) V x_i / Σ_k S(x_kᵀ A x_j)``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns.
    A : array-like or torch.Tensor, shape=[d, d]
        The attention matrix ``Kᵀ Q``.
    V : array-like or torch.Tensor, shape=[d_out, d]
        The value matrix.
    normalizer : str
        A key of :data:`NORMALIZERS` (default ``"exp"``: softmax).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]

    Raises
    ------
    ValueError
        On shapes that do not fit, non-finite entries or an unknown normalizer.

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    S = _check_normalizer(normalizer)
    like = _torch_like(X, A, V)
    X = as_array(X, "X", like=like)
    A = as_array(A, "A", like=like)
    V = as_array(V, "V", like=like)
    d = X.shape[-2]
    if len(A.shape) != 2 or tuple(A.shape) != (d, d):
        raise ValueError(
            f"A must have shape (d, d) = ({d}, {d}) for X of width {d}, got {tuple(A.shape)}"
        )
    if len(V.shape) != 2 or V.shape[1] != d:
        raise ValueError(f"V must have shape (d_out, {d}) for X of width {d}, got {tuple(V.shape)}")
    return _normalized_av(X, A, V, S)


def normalized_network(X: Any, layers: Sequence[Any], normalizer: str = "exp") -> Any:
    """A deep normalized attention network ``φ_l ∘ … ∘ φ_1`` with normalizer ``S``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d_0, t]
        Tokens as columns.
    layers : sequence of (Q, K, V)
        Layer ``i`` has ``Q_i, K_i`` of shape ``(a_i, d_{i-1})`` and ``V_i`` of shape
        ``(d_i, d_{i-1})``.
    normalizer : str
        A key of :data:`NORMALIZERS`. With ``"exp"`` this is
        ``lsa_lib.lightning.deep_attention(X, layers, normalized=True)``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_l, t]

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    S = _check_normalizer(normalizer)
    like = None
    if isinstance(layers, Sequence):
        like = _torch_like(
            X, *(m for layer in layers if isinstance(layer, (tuple, list)) for m in layer)
        )
    X = as_array(X, "X", like=like)
    checked = check_layers(layers, d=X.shape[-2], like=like)
    return _normalized_deep(X, checked, S)


# --------------------------------------------------------------------------------------------
# parametrizations for the rank engine
# --------------------------------------------------------------------------------------------


def _check_dim(x: Any, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def attention_value_normalized_parametrization(
    d: int, d_out: int, t: int = 3, normalizer: str = "exp"
) -> Parametrization:
    """One normalized layer in ``(A, V)`` coordinates, as a map for the rank engine.

    Parameters
    ----------
    d, d_out : int
        Input and output widths: ``A`` has shape ``(d, d)``, ``V`` shape ``(d_out, d)``.
    t : int
        Tokens per input.
    normalizer : str
        A key of :data:`NORMALIZERS` (default ``"exp"``).

    Returns
    -------
    Parametrization
        Blocks ``[A, V]`` (``d² + d·d_out`` parameters), ``polynomial=False`` and no known
        symmetry generators (for a non-homogeneous ``S`` none is expected).

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    d, d_out, t = _check_dim(d, "d"), _check_dim(d_out, "d_out"), _check_t(t)
    S = _check_normalizer(normalizer)

    def forward(params: Sequence[Any], X: Any) -> Any:
        A, V = params
        return _normalized_av(X, A, V, S)

    return Parametrization(
        name=f"normalized ({S.formula}) layer in (A, V), d={d}, d'={d_out}, t={t}",
        shapes=((d, d), (d_out, d)),
        input_shape=(d, t),
        forward=forward,
        generators=None,
        polynomial=False,
    )


def normalized_parametrization(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalizer: str = "exp"
) -> Parametrization:
    """A deep normalized network in ``(Q, K, V)`` coordinates, as a map for the rank engine.

    With ``normalizer="exp"`` this is the engine's own
    ``lightning_parametrization(widths, attn, t, normalized=True)`` (softmax); any other
    normalizer gets the same blocks, order and conventions, with ``S`` in the forward pass.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    t : int
        Tokens per input.
    normalizer : str
        A key of :data:`NORMALIZERS`.

    Returns
    -------
    Parametrization
        ``polynomial=False``; blocks in :func:`lsa_lib._core.flatten_layers` order.

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    widths, attn = check_architecture(widths, attn)
    t = _check_t(t)
    S = _check_normalizer(normalizer)
    if S.name == "exp":
        return lightning_parametrization(widths, attn, t=t, normalized=True)
    shapes = []
    for i, a in enumerate(attn):
        shapes += [(a, widths[i]), (a, widths[i]), (widths[i + 1], widths[i])]
    n_layers = len(attn)

    def forward(params: Sequence[Any], X: Any) -> Any:
        layers = [tuple(params[3 * i : 3 * i + 3]) for i in range(n_layers)]
        return _normalized_deep(X, layers, S)

    return Parametrization(
        name=f"normalized ({S.formula}) network, widths={widths}, attn={attn}, t={t}",
        shapes=tuple(shapes),
        input_shape=(widths[0], t),
        forward=forward,
        generators=None,
        polynomial=False,
    )


# --------------------------------------------------------------------------------------------
# single layer: identifiability
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxFiber:
    """The local fiber dimension of one normalized layer at a point ``(A, V)``.

    Explained in the chapter "The softmax conjecture".

    Attributes
    ----------
    fiber_dimension : int
        ``n_params − rank``: 0 means the layer is locally one-to-one in ``(A, V)`` there.
    rank : int
        The Jacobian rank (float64, read at the largest gap).
    n_params : int
        ``d² + d·d_out``.
    gap, runner_up : float
        The drop of the singular values at the rank, and the second-largest drop.
    reading : NumericalDimension
        The engine's full result.
    """

    fiber_dimension: int
    rank: int
    n_params: int
    gap: float
    runner_up: float
    reading: NumericalDimension


def _check_AV(A: Any, V: Any) -> tuple[np.ndarray, np.ndarray]:
    A = as_array(A, "A")
    V = as_array(V, "V")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix (d, d), got shape {A.shape}")
    if V.ndim != 2 or V.shape[1] != A.shape[0]:
        raise ValueError(
            f"V must have shape (d_out, d) with d = {A.shape[0]} (the size of A), got {V.shape}"
        )
    return A, V


def softmax_fiber_dimension(
    A: Any,
    V: Any,
    t: int = 3,
    *,
    normalizer: str = "exp",
    n_inputs: int | None = None,
    seed: int = 0,
    min_gap: float = DEFAULT_MIN_GAP,
) -> SoftmaxFiber:
    """The fiber dimension of one normalized layer at ``(A, V)``, in ``(A, V)`` coordinates.

    The rank engine computes the float64 Jacobian of the layer's outputs on ``n_inputs``
    random normal inputs with respect to the ``d² + d·d_out`` entries of ``(A, V)``; the fiber
    dimension is the number of parameters minus its rank.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        The attention matrix.
    V : array-like, shape=[d_out, d]
        The value matrix.
    t : int
        Tokens per input (the theorem needs ``t ≥ 2``: with one token ``A`` is invisible).
    normalizer : str
        A key of :data:`NORMALIZERS` (default softmax).
    n_inputs : int, optional
        Number of random inputs (engine default if omitted).
    seed : int
        Seed of the inputs.
    min_gap : float
        Least singular-value drop accepted.

    Returns
    -------
    SoftmaxFiber

    Raises
    ------
    RankAmbiguityError
        If the rank cannot be read reliably.

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    A, V = _check_AV(A, V)
    param = attention_value_normalized_parametrization(A.shape[0], V.shape[0], t, normalizer)
    r = numerical_rank(param, [A, V], n_inputs=n_inputs, seed=seed, min_gap=min_gap)
    return SoftmaxFiber(r.n_params - r.rank, r.rank, r.n_params, r.gap, r.runner_up, r)


def _random_inputs(d: int, t: int, n_inputs: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n_inputs, d, t))


def _relative_difference(Y1: Any, Y0: Any) -> float:
    return float(np.linalg.norm(np.asarray(Y1) - np.asarray(Y0)) / np.linalg.norm(np.asarray(Y0)))


def rescaling_changes_function(
    A: Any,
    V: Any,
    c: float,
    *,
    normalizer: str | None = "exp",
    t: int = 3,
    n_inputs: int = 20,
    seed: int = 0,
) -> float:
    """How much the lightning rescaling ``(c A, V / c)`` changes a normalized layer.

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]
    c : float
        A nonzero finite scalar.
    normalizer : str or None
        A key of :data:`NORMALIZERS`, or ``None`` for the lightning layer (no normalization).
    t, n_inputs, seed : int
        The random normal test inputs (``n_inputs`` of shape ``(d, t)``).

    Returns
    -------
    float
        ``‖φ_{cA, V/c}(X) − φ_{A, V}(X)‖ / ‖φ_{A, V}(X)‖`` over the test inputs (Frobenius norm);
        0 up to round-off for a lightning layer, positive for softmax when ``c ≠ 1``.

    Raises
    ------
    ValueError
        If ``c`` is zero, not finite or not a real number, or ``φ_{A,V}`` vanishes on the inputs.

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    A, V = _check_AV(A, V)
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not np.isfinite(c) or c == 0:
        raise ValueError(f"c must be a finite nonzero real number, got {c!r}")
    S = _check_normalizer_or_lightning(normalizer)
    t, n_inputs = _check_t(t), _check_dim(n_inputs, "n_inputs")
    X = _random_inputs(A.shape[0], t, n_inputs, seed)
    Y0 = _normalized_av(X, A, V, S)
    if np.linalg.norm(Y0) == 0:
        raise ValueError("the layer vanishes on the test inputs (V = 0?): no relative change")
    return _relative_difference(_normalized_av(X, float(c) * A, V / float(c), S), Y0)


def symmetry_defects(
    layers: Sequence[Any],
    *,
    normalizer: str | None = "exp",
    t: int = 3,
    n_inputs: int = 20,
    seed: int = 0,
) -> dict[str, float]:
    """Relative change of a deep normalized network under each of the three lightning symmetries.

    The transformations (from :mod:`lsa_lib.symmetries`) use seeded random parameters:
    scaling ``(A_i, V_i) ↦ (2 A_i, V_i / 2)`` in every layer, a random ``G ∈ GL_{a_1}`` in
    layer 1, and (with at least two layers) a random ``C ∈ GL_{d_1}`` passed from layer 1 to
    layer 2. For comparison, ``A_i ↦ 2 A_i`` alone (``V_i`` fixed), which is a symmetry exactly
    when ``S`` is homogeneous.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float weights.
    normalizer : str or None
        A key of :data:`NORMALIZERS`, or ``None`` for lightning layers (no normalization).
    t, n_inputs, seed : int
        Test inputs and the seed of ``G`` and ``C``.

    Returns
    -------
    dict
        ``{"scaling": …, "attention basis": …, "scaling A only": …, "between layers": …}``
        (the last only with at least two layers): ``‖φ_{g·W}(X) − φ_W(X)‖ / ‖φ_W(X)‖``.

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    S = _check_normalizer_or_lightning(normalizer)
    layers = check_layers(layers)
    t, n_inputs = _check_t(t), _check_dim(n_inputs, "n_inputs")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_inputs, layers[0][0].shape[1], t))
    Y0 = _normalized_deep(X, layers, S)
    a1, d1 = layers[0][0].shape[0], layers[0][2].shape[0]
    G = rng.standard_normal((a1, a1)) + 2 * np.eye(a1)
    moved = {
        "scaling": scale_layers(layers, [2.0] * len(layers)),
        "attention basis": change_attention_basis(layers, 1, G),
        "scaling A only": [(2.0 * Q, K, V) for Q, K, V in layers],
    }
    if len(layers) >= 2:
        C = rng.standard_normal((d1, d1)) + 2 * np.eye(d1)
        moved["between layers"] = pass_through(layers, 1, C)
    return {k: _relative_difference(_normalized_deep(X, W, S), Y0) for k, W in moved.items()}


# --------------------------------------------------------------------------------------------
# deep networks: Eq. 16 and Figure 3
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxEstimate:
    """One estimated dimension of a normalized network, next to its expected value.

    Explained in the chapter "The softmax conjecture".

    Attributes
    ----------
    widths, attn : tuple of int
        The architecture.
    t, n_inputs : int
        Tokens per input and number of random inputs.
    normalizer : str
        The key of :data:`NORMALIZERS` used.
    dtype : str
        ``"float64"`` or ``"float32"``: the precision of the Jacobian.
    n_params : int
        The number of weights ``P``.
    rank : int
        The rank read at the largest gap (a rejected candidate if ``trusted`` is False).
    expected : int or None
        The value it is compared with (``None`` if none was given).
    gap, runner_up : float
        The largest and second-largest drop of the singular values.
    trusted : bool
        ``gap ≥ min_gap``.
    threshold_rank : int
        The rank with the usual fixed tolerance ``s_1 · max(shape) · eps(dtype)`` (as
        ``numpy.linalg.matrix_rank`` would count), for comparison.
    seconds : float
        Time for the Jacobian and its singular values.
    singular_values : numpy.ndarray, shape=[min(N · d_l · t, P)]
        The Jacobian's singular values, largest first.
    """

    widths: tuple[int, ...]
    attn: tuple[int, ...]
    t: int
    n_inputs: int
    normalizer: str
    dtype: str
    n_params: int
    rank: int
    expected: int | None
    gap: float
    runner_up: float
    trusted: bool
    threshold_rank: int
    seconds: float
    singular_values: np.ndarray = field(repr=False, compare=False, default=None)

    @property
    def delta(self) -> int:
        """The first hidden width ``d_1`` (``δ`` when all widths are equal)."""
        return self.widths[1]

    @property
    def agrees(self) -> bool:
        """``trusted`` and ``rank == expected``."""
        return self.trusted and self.expected is not None and self.rank == self.expected


def _check_dtype(dtype: Any) -> str:
    name = (
        np.dtype(dtype).name
        if not (torch is not None and isinstance(dtype, torch.dtype))
        else str(dtype).removeprefix("torch.")
    )
    if name not in ("float64", "float32"):
        raise ValueError(f"dtype must be float64 or float32, got {name}")
    return name


def _threshold_rank(s: np.ndarray, shape: tuple[int, int], dtype: str) -> int:
    eps = np.finfo(np.float32 if dtype == "float32" else np.float64).eps
    return int((s > s[0] * max(shape) * eps).sum()) if s.size and s[0] > 0 else 0


def _largest_gap(s: np.ndarray, shape: tuple[int, int], eps: float) -> tuple[int, float, float]:
    """Largest drop of ``s`` (sorted, largest first) against the round-off floor of ``eps``.

    The same reading as :func:`lsa_lib.rank.read_rank`, whose floor is float64's; a float32
    Jacobian needs float32's floor ``s_1 · max(shape) · eps``.
    """
    floor = float(s[0] * max(shape) * eps)
    ratios = s / np.maximum(np.append(s[1:], 0.0), floor)
    order = np.argsort(ratios)[::-1]
    runner = float(ratios[order[1]]) if s.size > 1 else 1.0
    return int(order[0]) + 1, float(ratios[order[0]]), runner


def _float32_singular_values(
    param: Parametrization, n_inputs: int, seed: int, weight_scale: float
) -> tuple[np.ndarray, tuple[int, int]]:
    """Singular values of the forward-mode Jacobian computed entirely in float32.

    The point and the inputs are the float64 ones (same seeds), rounded to float32.
    """
    from torch.func import jacfwd

    rng = np.random.default_rng(seed)
    point = [weight_scale * rng.standard_normal(s) for s in param.shapes]
    params = [torch.tensor(p, dtype=torch.float32) for p in point]
    X = torch.tensor(
        np.random.default_rng(seed + 1).standard_normal((n_inputs, *param.input_shape)),
        dtype=torch.float32,
    )
    sizes = [int(np.prod(s)) for s in param.shapes]
    flat = torch.cat([p.reshape(-1) for p in params])

    def f(v: Any) -> Any:
        blocks = list(torch.split(v, sizes))
        return param.forward([b.reshape(s) for b, s in zip(blocks, param.shapes)], X).reshape(-1)

    J = jacfwd(f)(flat)
    s = torch.linalg.svdvals(J).double().numpy()
    return s, tuple(J.shape)


def softmax_dimension_estimate(
    widths: Sequence[int],
    attn: Sequence[int],
    *,
    t: int = 3,
    n_inputs: int = 250,
    normalizer: str = "exp",
    dtype: Any = np.float64,
    seed: int = 0,
    expected: int | None = None,
    min_gap: float = DEFAULT_MIN_GAP,
    strict: bool = True,
    weight_scale: float = 1.0,
) -> SoftmaxEstimate:
    """Estimate the dimension of a normalized network as a Jacobian rank at a random point.

    In float64 the rank engine's :func:`lsa_lib.rank.numerical_rank` computes the Jacobian
    (forward mode) of all outputs on ``n_inputs`` random normal inputs with respect to all
    weights, at seeded random normal weights, and reads its rank at the largest gap. In float32
    the same Jacobian is computed in single precision (to show what precision does).

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture ``(d_0, …, d_l)``, ``(a_1, …, a_l)``.
    t : int
        Tokens per input.
    n_inputs : int
        Number of random inputs ``N`` (the Jacobian has ``N · d_l · t`` rows).
    normalizer : str
        A key of :data:`NORMALIZERS`.
    dtype : numpy or torch dtype
        ``float64`` (default) or ``float32``.
    seed : int
        Seed of weights and inputs.
    expected : int, optional
        A value to compare with (stored in the result).
    min_gap : float
        Least singular-value drop trusted.
    strict : bool
        If True (default), an untrustworthy rank raises :class:`RankAmbiguityError`; if False
        it is returned with ``trusted=False``.
    weight_scale : float
        The weights are ``weight_scale`` times standard normal (default 1; ``1/√δ`` keeps
        the scores of wide or deep softmax networks of order one, away from saturation).

    Returns
    -------
    SoftmaxEstimate

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    widths, attn = check_architecture(widths, attn)
    t, n_inputs = _check_t(t), _check_dim(n_inputs, "n_inputs")
    dt = _check_dtype(dtype)
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    if (
        isinstance(weight_scale, bool)
        or not isinstance(weight_scale, numbers.Real)
        or not np.isfinite(weight_scale)
        or weight_scale <= 0
    ):
        raise ValueError(f"weight_scale must be a finite positive number, got {weight_scale!r}")
    param = normalized_parametrization(widths, attn, t=t, normalizer=normalizer)
    start = time.perf_counter()
    if dt == "float64":
        rng = np.random.default_rng(seed)
        point = [float(weight_scale) * rng.standard_normal(s) for s in param.shapes]
        try:
            r = numerical_rank(param, point, n_inputs=n_inputs, seed=seed + 1, min_gap=min_gap)
            s, shape = np.asarray(r.singular_values), (n_inputs * widths[-1] * t, r.n_params)
            reading_rank, gap, runner, trusted = r.rank, r.gap, r.runner_up, True
        except RankAmbiguityError as err:
            if strict:
                raise
            rd = err.reading
            s, shape = rd.singular_values, rd.shape
            reading_rank, gap, runner, trusted = rd.rank, rd.gap, rd.runner_up, False
    else:
        s, shape = _float32_singular_values(param, n_inputs, seed, float(weight_scale))
        reading_rank, gap, runner = _largest_gap(s, shape, np.finfo(np.float32).eps)
        trusted = gap >= min_gap
        if strict and not trusted:
            raise RankAmbiguityError(
                f"no trustworthy float32 rank: the largest drop of the singular values is "
                f"{gap:.3g} (at rank {reading_rank}), below the threshold {min_gap:.3g}",
                RankReading(
                    reading_rank,
                    gap,
                    runner,
                    float(s[0] * max(shape) * np.finfo(np.float32).eps),
                    s,
                    shape,
                ),
            )
    seconds = time.perf_counter() - start
    return SoftmaxEstimate(
        widths=widths,
        attn=attn,
        t=t,
        n_inputs=n_inputs,
        normalizer=normalizer,
        dtype=dt,
        n_params=parameter_count(widths, attn),
        rank=int(reading_rank),
        expected=expected,
        gap=float(gap),
        runner_up=float(runner),
        trusted=trusted,
        threshold_rank=_threshold_rank(np.asarray(s), shape, dt),
        seconds=seconds,
        singular_values=np.sort(np.asarray(s, dtype=np.float64))[::-1],
    )


def figure3_data(
    deltas: Sequence[int],
    depth: int = 2,
    attn: int | Sequence[int] = 2,
    t: int = 3,
    n_inputs: int = 250,
    normalizer: str = "exp",
    dtype: Any = np.float64,
    seed: int = 0,
    *,
    min_gap: float = DEFAULT_MIN_GAP,
    strict: bool = True,
    weight_scale: float = 1.0,
) -> list[SoftmaxEstimate]:
    """The data of Figure 3 of [HMK25]: estimated and expected dimension for each width ``δ``.

    For each ``δ``: a depth-``l`` normalized network with all widths ``δ`` and attention
    dimensions ``attn``, its Jacobian rank on ``n_inputs`` random normal inputs (via
    :func:`softmax_dimension_estimate`), and the expected value of Eq. 16 of [HMK25],
    ``δ² + Σ_i a_i (2δ − a_i)`` (the lightning dimension plus ``l``), from
    :func:`lsa_lib.dimension.expected_dimension` with ``normalized=True``. The paper's setting
    is the default: softmax, ``l = 2``, ``a_i = 2``, ``t = 3``, ``N = 250``.

    Parameters
    ----------
    deltas : sequence of int
        The widths ``δ``.
    depth : int
        The number of layers ``l``.
    attn : int or sequence of int
        One ``a`` for every layer, or ``(a_1, …, a_l)``.
    t, n_inputs, normalizer, dtype, seed, min_gap, strict, weight_scale
        As in :func:`softmax_dimension_estimate`.

    Returns
    -------
    list of SoftmaxEstimate
        One per ``δ``, in order; ``expected`` is Eq. 16 (the formula's value, stated for
        ``t ≥ 2``, also for rows computed with ``t = 1``).

    Raises
    ------
    ValueError
        On bad sizes, or ``a_i > δ`` (Eq. 16 does not cover it).

    Notes
    -----
    Explained in the chapter "The softmax conjecture".
    """
    if isinstance(deltas, (str, bytes)) or not isinstance(deltas, Sequence) or len(deltas) == 0:
        raise ValueError(f"deltas must be a non-empty sequence of widths, got {deltas!r}")
    depth = _check_dim(depth, "depth")
    if isinstance(attn, numbers.Integral) and not isinstance(attn, bool):
        attn_t = (int(attn),) * depth
    elif isinstance(attn, Sequence) and not isinstance(attn, (str, bytes)):
        attn_t = tuple(attn)
        if len(attn_t) != depth:
            raise ValueError(f"attn must have depth = {depth} entries, got {attn_t}")
    else:
        raise ValueError(f"attn must be an int or a sequence of {depth} ints, got {attn!r}")
    rows = []
    for delta in deltas:
        expected = expected_dimension((delta,) * (depth + 1), attn_t, normalized=True)
        rows.append(
            softmax_dimension_estimate(
                (delta,) * (depth + 1),
                attn_t,
                t=t,
                n_inputs=n_inputs,
                normalizer=normalizer,
                dtype=dtype,
                seed=seed,
                expected=expected,
                min_gap=min_gap,
                strict=strict,
                weight_scale=weight_scale,
            )
        )
    return rows


def gap_order(gap: float) -> str:
    """A gap as the power of ten just below it, e.g. ``3.2e8`` → ``"1e+08"``.

    The gap divides a genuine singular value by one at the round-off level, and round-off
    changes with the linear-algebra library; its order of magnitude is what a reader (and a
    stored notebook output) can rely on.

    Parameters
    ----------
    gap : float
        A positive number (``inf`` is shown as ``"inf"``).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``gap`` is not a positive number.

    Notes
    -----
    Used in the chapter "The softmax conjecture".
    """
    if isinstance(gap, bool) or not isinstance(gap, numbers.Real) or not gap > 0:
        raise ValueError(f"gap must be a positive number, got {gap!r}")
    if gap == np.inf:
        return "inf"
    return f"1e{int(np.floor(np.log10(float(gap)))):+03d}"


def format_estimates(rows: Sequence[SoftmaxEstimate], *, seconds: bool = False) -> str:
    """A plain-text table of estimates (one line per row).

    The gap is shown by its order of magnitude (:func:`gap_order`), the runner-up with two
    significant digits.

    Parameters
    ----------
    rows : sequence of SoftmaxEstimate
    seconds : bool
        Include the time per point (not deterministic; off by default).

    Returns
    -------
    str

    Notes
    -----
    Used in the chapter "The softmax conjecture".
    """
    head = f"{'widths':>16} {'attn':>9} {'P':>4} {'rank':>5} {'expected':>8} {'gap >=':>7}"
    head += f" {'runner-up':>9} {'trusted':>7}" + (f" {'s/point':>8}" if seconds else "")
    lines = [head]
    for r in rows:
        if not isinstance(r, SoftmaxEstimate):
            raise TypeError(f"rows must hold SoftmaxEstimate values, got {type(r).__name__}")
        exp = "-" if r.expected is None else str(r.expected)
        line = (
            f"{str(r.widths):>16} {str(r.attn):>9} {r.n_params:>4} {r.rank:>5} {exp:>8} "
            f"{gap_order(r.gap):>7} {r.runner_up:>9.2g} {str(r.trusted):>7}"
        )
        if seconds:
            line += f" {r.seconds:>8.2f}"
        lines.append(line)
    return "\n".join(lines)
