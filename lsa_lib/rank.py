"""The rank engine: honest float ranks and certified exact ranks.

Every dimension in the book is the rank of a Jacobian: of the map from weights to functions,
sampled on inputs. This module computes it in two independent ways.

* **Float64** (:func:`numerical_rank`, :func:`numerical_dimension`): the Jacobian by automatic
  differentiation (``torch.func``, per input in whichever mode needs fewer passes), its
  singular values, and the rank read at the **largest gap**, returned together with that gap
  and the runner-up. When the gap is too small to trust (below ``min_gap``, default ``1e4``)
  :class:`RankAmbiguityError` is raised instead of a guess. Works for any forward map,
  softmax included.
* **Exact** (:func:`certified_rank`, :func:`certified_dimension`): for polynomial maps with
  integer coefficients (lightning networks), the Jacobian at an integer point on integer
  inputs, computed modulo a prime by forward-mode dual numbers (:mod:`lsa_lib._modp`), gives a
  certified **lower** bound; ``P`` minus the rank of the known symmetries' tangent vectors
  gives a certified **upper** bound. When they meet, the dimension is proved, not estimated.

A map is described by a :class:`Parametrization` (blocks of parameters and a forward pass
written with ``@``, ``.mT``, ``+``, ``-``, ``*``), so other chapters can hand their own maps
(multi-head, residual, normalized variants, ``(A, V)`` coordinates) to the same engine.
Explained in the chapter "Dimension formulas".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _modp
from ._core import _check_size, _check_t, as_array, check_architecture, layer_shapes
from .lightning import _deep

__all__ = [
    "DEFAULT_MIN_GAP",
    "RankAmbiguityError",
    "RankReading",
    "read_rank",
    "float_rank",
    "Parametrization",
    "lightning_parametrization",
    "attention_value_parametrization",
    "NumericalDimension",
    "CertifiedDimension",
    "float_jacobian",
    "numerical_rank",
    "numerical_dimension",
    "certified_rank",
    "certified_dimension",
]

#: A float rank is trusted only if the singular values drop by at least this factor there.
DEFAULT_MIN_GAP = 1e4


class RankAmbiguityError(ValueError):
    """Raised when singular values show no gap large enough to read a rank from.

    Part of the rank engine used by every chapter from "Single-layer fibers" on; its reading of ranks is explained in the chapter "Dimension formulas".

    Attributes
    ----------
    reading : RankReading
        The best reading that was rejected (its ``rank`` and ``gap`` are the candidates).
    """

    def __init__(self, message: str, reading: RankReading):
        super().__init__(message)
        self.reading = reading


@dataclass(frozen=True)
class RankReading:
    """A rank read from singular values.

    Part of the rank engine used by every chapter from "Single-layer fibers" on; its reading of ranks is explained in the chapter "Dimension formulas".

    Attributes
    ----------
    rank : int
        The number of singular values above the largest gap.
    gap : float
        ``s_rank / max(s_{rank+1}, floor)``: the factor by which the singular values drop at
        the rank (``floor`` is the round-off level ``s_1 · max(shape) · eps``; a full-rank or
        zero matrix is measured against it).
    runner_up : float
        The second-largest such ratio (another candidate rank's gap); 1.0 if there is none.
    floor : float
        The round-off level ``s_1 · max(shape) · eps``.
    singular_values : numpy.ndarray, shape=[min(shape)]
        All singular values, largest first.
    shape : tuple of int
        The shape of the matrix.
    """

    rank: int
    gap: float
    runner_up: float
    floor: float
    singular_values: np.ndarray = field(repr=False)
    shape: tuple[int, int]


def read_rank(
    singular_values: Any, shape: tuple[int, int], *, min_gap: float = DEFAULT_MIN_GAP
) -> RankReading:
    """Read a rank at the largest gap of a list of singular values.

    Part of the rank engine used by every chapter from "Single-layer fibers" on; its reading of ranks is explained in the chapter "Dimension formulas".

    Parameters
    ----------
    singular_values : array-like, shape=[n]
        Singular values of a matrix of the given shape (any order; non-negative).
    shape : tuple of int
        ``(rows, columns)`` of the matrix; ``n`` must equal ``min(shape)``.
    min_gap : float
        The least drop factor accepted (default :data:`DEFAULT_MIN_GAP` = 1e4).

    Returns
    -------
    RankReading

    Raises
    ------
    RankAmbiguityError
        If the largest drop is smaller than ``min_gap``.
    ValueError
        On negative or non-finite singular values, or a length that does not fit ``shape``.
    """
    s = np.sort(np.asarray(singular_values, dtype=np.float64).ravel())[::-1]
    if len(shape) != 2 or min(shape) < 1:
        raise ValueError(f"shape must be (rows, columns) with positive sizes, got {shape}")
    if s.size != min(shape):
        raise ValueError(f"expected min{tuple(shape)} = {min(shape)} singular values, got {s.size}")
    if not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("singular values must be finite and non-negative")
    if not min_gap > 1:
        raise ValueError(f"min_gap must be > 1, got {min_gap}")
    floor = float(s[0] * max(shape) * np.finfo(np.float64).eps)
    if s[0] == 0:
        reading = RankReading(0, np.inf, 1.0, 0.0, s, tuple(shape))
        return reading
    below = np.maximum(np.append(s[1:], 0.0), floor)
    ratios = s / below  # ratios[r-1] is the drop after the r-th singular value
    # rank 0 is a candidate too: the largest singular value against the floor is ratios at r=0
    order = np.argsort(ratios)[::-1]
    best = int(order[0])
    runner = float(ratios[order[1]]) if s.size > 1 else 1.0
    reading = RankReading(best + 1, float(ratios[best]), runner, floor, s, tuple(shape))
    if reading.gap < min_gap:
        raise RankAmbiguityError(
            f"no trustworthy rank: the largest drop of the singular values is "
            f"{reading.gap:.3g} (at rank {reading.rank}), below the threshold {min_gap:.3g}",
            reading,
        )
    return reading


def float_rank(matrix: Any, *, min_gap: float = DEFAULT_MIN_GAP) -> RankReading:
    """The rank of a float matrix, read at the largest gap of its singular values.

    Part of the rank engine used by every chapter from "Single-layer fibers" on; its reading of ranks is explained in the chapter "Dimension formulas".

    Parameters
    ----------
    matrix : array-like or torch.Tensor, shape=[m, n]
        Converted to float64.
    min_gap : float
        See :func:`read_rank`.

    Returns
    -------
    RankReading

    Raises
    ------
    RankAmbiguityError
        If the singular values have no drop of at least ``min_gap``.
    """
    if hasattr(matrix, "detach"):
        matrix = matrix.detach().cpu().numpy()
    M = np.asarray(matrix, dtype=np.float64)
    if M.ndim != 2 or min(M.shape) < 1:
        raise ValueError(f"matrix must be 2-dimensional and non-empty, got shape {M.shape}")
    if not np.isfinite(M).all():
        raise ValueError("matrix has non-finite entries")
    return read_rank(np.linalg.svd(M, compute_uv=False), M.shape, min_gap=min_gap)


# =========================================================================================
# Parametrizations: maps from parameter blocks to functions, sampled on inputs
# =========================================================================================
@dataclass(frozen=True)
class Parametrization:
    """A map from parameter blocks to a function, sampled on inputs.

    Attributes
    ----------
    name : str
        A label for tables and messages.
    shapes : tuple of tuple of int
        The parameter blocks, in flattening order (for networks: :func:`lsa_lib._core.flatten_layers`
        order ``Q_1, K_1, V_1, Q_2, …``).
    input_shape : tuple of int
        ``(d_0, t)``: the shape of one input ``X``.
    forward : callable
        ``forward(params, X)`` with ``params`` a list of arrays shaped like ``shapes`` and ``X``
        of shape ``(n, d_0, t)``; returns an array ``(n, ...)``. It must be written with ``@``,
        ``.mT``, ``+``, ``-`` and ``*`` only (and integer constants), so that it runs both on
        torch float64 tensors under ``torch.func`` and on the exact dual numbers modulo a prime
        of the certified engine. Non-polynomial operations (``softmax``) are allowed when
        ``polynomial=False`` (then only the float engine applies).
    generators : callable or None
        ``generators(params)`` returns known symmetry directions at ``params``: tangent vectors
        of a group acting on the parameters without changing the function, polynomial with
        integer coefficients in ``params``. Either a sequence of tangent vectors (each a list of
        arrays shaped like ``params``) or an array of shape ``(n_generators, P)`` in flattening
        order. Used for the certified upper bound.
    polynomial : bool
        ``True`` if ``forward`` is a polynomial with integer coefficients in parameters and
        inputs (then :func:`certified_rank` applies).

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the rank engine).
    """

    name: str
    shapes: tuple[tuple[int, ...], ...]
    input_shape: tuple[int, int]
    forward: Callable[..., Any]
    generators: Callable[..., Any] | None = None
    polynomial: bool = True

    def __post_init__(self) -> None:
        shapes = tuple(
            tuple(_check_size(s, "parameter block size") for s in sh) for sh in self.shapes
        )
        if not shapes:
            raise ValueError("a parametrization needs at least one parameter block")
        object.__setattr__(self, "shapes", shapes)
        if len(self.input_shape) != 2:
            raise ValueError(f"input_shape must be (d_0, t), got {self.input_shape!r}")
        d0 = _check_size(self.input_shape[0], "input width d_0")
        t = _check_size(self.input_shape[1], "t")
        object.__setattr__(self, "input_shape", (d0, t))
        if not callable(self.forward):
            raise TypeError("forward must be callable")
        if self.generators is not None and not callable(self.generators):
            raise TypeError("generators must be callable or None")

    @property
    def n_params(self) -> int:
        """The number of parameters ``P`` (the sum of the blocks' sizes)."""
        return int(sum(int(np.prod(s)) for s in self.shapes))

    def split(self, vector: Any) -> list[Any]:
        """Cut a flat parameter vector (numpy or torch, shape ``[P]``) into the blocks."""
        out, pos = [], 0
        for s in self.shapes:
            n = int(np.prod(s))
            out.append(vector[pos : pos + n].reshape(s))
            pos += n
        return out


def lightning_parametrization(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalized: bool = False
) -> Parametrization:
    """The deep self-attention network ``W = (Q_1, K_1, V_1, …) ↦ φ_W`` as a map for the engine.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    t : int
        Tokens per input (``t ≥ 1``; the dimension formulas assume ``t ≥ 2``).
    normalized : bool
        ``False`` (lightning, polynomial) or ``True`` (softmax, not polynomial).

    Returns
    -------
    Parametrization
        Blocks in :func:`lsa_lib._core.flatten_layers` order; generators: the three symmetries
        of :func:`lsa_lib.symmetries.symmetry_generators` (scaling only when not normalized).

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    widths, attn = check_architecture(widths, attn)
    t = _check_t(t)
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"normalized must be True or False, got {normalized!r}")
    normalized = bool(normalized)
    shapes = tuple(s for layer in layer_shapes(widths, attn) for s in layer)
    n_layers = len(attn)

    def forward(params: Sequence[Any], X: Any) -> Any:
        layers = [tuple(params[3 * i : 3 * i + 3]) for i in range(n_layers)]
        return _deep(X, layers, normalized)

    def generators(params: Sequence[Any]) -> Any:
        from .symmetries import symmetry_generators

        layers = [tuple(params[3 * i : 3 * i + 3]) for i in range(n_layers)]
        return symmetry_generators(layers, normalized=normalized)

    kind = "softmax" if normalized else "lightning"
    return Parametrization(
        name=f"{kind} network, widths={widths}, attn={attn}, t={t}",
        shapes=shapes,
        input_shape=(widths[0], t),
        forward=forward,
        generators=generators,
        polynomial=not normalized,
    )


def attention_value_parametrization(d: int, d_out: int, t: int = 3) -> Parametrization:
    """One lightning layer in ``(A, V)`` coordinates: ``(A, V) ↦ (X ↦ V X Xᵀ A X)``.

    Parameters
    ----------
    d, d_out : int
        Input and output widths: ``A`` has shape ``(d, d)``, ``V`` shape ``(d_out, d)``.
    t : int
        Tokens per input.

    Returns
    -------
    Parametrization
        Blocks ``[A, V]`` (``d² + d·d_out`` parameters); generator: the scaling ``(A, -V)``.

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    d, d_out, t = _check_size(d, "d"), _check_size(d_out, "d_out"), _check_t(t)

    def forward(params: Sequence[Any], X: Any) -> Any:
        A, V = params
        return ((V @ X) @ X.mT) @ (A @ X)

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        A, V = params
        return [[A, -V]]

    return Parametrization(
        name=f"lightning layer in (A, V), d={d}, d'={d_out}, t={t}",
        shapes=((d, d), (d_out, d)),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
    )


# =========================================================================================
# Results
# =========================================================================================
@dataclass(frozen=True)
class NumericalDimension:
    """A float64 Jacobian rank, read at the largest gap of the singular values.

    Part of the rank engine used by every chapter from "Single-layer fibers" on; its reading of ranks is explained in the chapter "Dimension formulas".

    Attributes
    ----------
    rank : int
        The rank (the dimension, at a random point of a generic parametrization).
    gap : float
        The factor by which the singular values drop after the ``rank``-th one.
    runner_up : float
        The second-largest drop (another candidate rank's gap).
    singular_values : numpy.ndarray, shape=[min(rows, P)]
        All singular values of the sampled Jacobian, largest first.
    n_params : int
        ``P``, the number of columns.
    n_inputs : int
        The number of random inputs ``X`` the Jacobian was sampled on.
    t : int
        Tokens per input.
    seconds : float
        Wall time of the Jacobian and the SVD.
    """

    rank: int
    gap: float
    runner_up: float
    singular_values: np.ndarray = field(repr=False)
    n_params: int
    n_inputs: int
    t: int
    seconds: float


@dataclass(frozen=True)
class CertifiedDimension:
    """Certified bounds ``lower ≤ rank ≤ upper`` from exact arithmetic modulo a prime.

    Part of the rank engine used by every chapter from "Single-layer fibers" on; its reading of ranks is explained in the chapter "Dimension formulas".

    Attributes
    ----------
    lower : int
        The rank mod ``p`` of the sampled Jacobian (a certified lower bound).
    upper : int
        ``P`` minus the rank mod ``p`` of the symmetry tangents (a certified upper bound).
    n_params : int
        ``P``.
    prime : int
        The prime ``p``.
    n_inputs : int
        The number of integer inputs the Jacobian was sampled on.
    t : int
        Tokens per input.
    seconds : float
        Wall time.
    """

    lower: int
    upper: int
    n_params: int
    prime: int
    n_inputs: int
    t: int
    seconds: float

    @property
    def exact(self) -> bool:
        """``True`` if the bounds meet (the dimension is certified)."""
        return self.lower == self.upper

    @property
    def dimension(self) -> int:
        """The certified value; raises ``ValueError`` if the bounds do not meet."""
        if not self.exact:
            raise ValueError(
                f"the bounds do not meet ({self.lower} ≤ rank ≤ {self.upper}): no certified value"
            )
        return self.lower


# =========================================================================================
# The float engine
# =========================================================================================
def _default_inputs(param: Parametrization, k: int, margin: float = 1.2) -> int:
    """The least ``n`` with ``n · (outputs per input) ≥ margin · k`` (plus two spare inputs)."""
    out = _outputs_per_input(param)
    return int(np.ceil(margin * k / out)) + 2


def _outputs_per_input(param: Parametrization) -> int:
    """The number of output coordinates of one input (one forward pass at zero, cached)."""
    cached = param.__dict__.get("_outputs_per_input")
    if cached is not None:
        return cached
    import torch

    ps = [torch.zeros(s, dtype=torch.float64) for s in param.shapes]
    X = torch.zeros((1, *param.input_shape), dtype=torch.float64)
    with torch.no_grad():
        y = param.forward(ps, X)
    n = int(np.prod(tuple(y.shape[1:]))) if y.ndim > 1 else 1
    object.__setattr__(param, "_outputs_per_input", n)  # a cache, not a field
    return n


def _check_n_inputs(n_inputs: Any) -> int | None:
    if n_inputs is None:
        return None
    return _check_size(n_inputs, "n_inputs")


def _check_params(param: Parametrization, params: Any, *, exact: bool) -> list[np.ndarray]:
    if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
        raise TypeError("params must be a list of arrays, one per parameter block")
    if len(params) != len(param.shapes):
        raise ValueError(
            f"params has {len(params)} blocks, but {param.name} has {len(param.shapes)}"
        )
    out = []
    for i, (p, s) in enumerate(zip(params, param.shapes)):
        if hasattr(p, "detach"):
            p = p.detach().cpu().numpy()
        if exact:
            arr = np.asarray(p)
        else:
            arr = as_array(p, f"params[{i}]", min_ndim=0)
            arr = np.asarray(arr, dtype=np.float64)
        if tuple(arr.shape) != tuple(s):
            raise ValueError(f"params[{i}] must have shape {s}, got {tuple(arr.shape)}")
        out.append(arr)
    return out


def _check_min_gap(min_gap: Any) -> float:
    if not isinstance(min_gap, (int, float, np.floating, np.integer)) or not min_gap > 1:
        raise ValueError(f"min_gap must be a number > 1, got {min_gap!r}")
    return float(min_gap)


def float_jacobian(
    param: Parametrization,
    params: Sequence[Any],
    X: Any,
    *,
    mode: str = "auto",
    chunk: int | None = None,
) -> np.ndarray:
    """The float64 Jacobian of all outputs on inputs ``X`` with respect to all parameters.

    The inputs are independent, so the Jacobian is a stack of per-input blocks of shape
    ``(outputs per input, P)``. Each block is computed in the mode that needs fewer passes:
    reverse mode (``torch.func.jacrev``, one pass per output coordinate of that input) when an
    input has fewer outputs than there are parameters, forward mode (``torch.func.jacfwd``,
    one pass per parameter) otherwise; either way batched over inputs with ``vmap``. For the
    softmax network of Figure 3 of [HMK25] (``δ = 10``: 30 outputs per input, ``P = 280``)
    reverse mode per input pushes ``30 n`` vectors instead of ``280 n``.

    Parameters
    ----------
    param : Parametrization
    params : list of array-like
        The point, one array per block.
    X : array-like, shape=[n, d_0, t]
        The inputs.
    mode : {"auto", "forward", "reverse"}
        ``"auto"`` picks as described above.
    chunk : int, optional
        How many inputs to process at once (default: about 2·10⁷ Jacobian entries per chunk).

    Returns
    -------
    numpy.ndarray, shape=[n · (outputs per input), P]
        Rows ordered input by input, then as ``forward(params, X)[i].reshape(-1)``.

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the rank engine).
    """
    import torch
    from torch.func import jacfwd, jacrev, vmap

    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', got {mode!r}")
    blocks = tuple(torch.as_tensor(np.asarray(p, dtype=np.float64)) for p in params)
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float64))
    if Xt.ndim != 3 or tuple(Xt.shape[1:]) != tuple(param.input_shape):
        raise ValueError(
            f"X must have shape (n, {param.input_shape[0]}, {param.input_shape[1]}), "
            f"got {tuple(Xt.shape)}"
        )
    P = param.n_params
    out = _outputs_per_input(param)
    if mode == "auto":
        mode = "reverse" if out < P else "forward"

    def g(ps: tuple[Any, ...], x: Any) -> Any:
        return param.forward(list(ps), x[None]).reshape(-1)

    # differentiate with respect to the blocks (not a flat vector cut into views: in reverse
    # mode every view would cost a full-size zero gradient and an addition)
    jac = (jacrev if mode == "reverse" else jacfwd)(g)
    per_input = vmap(jac, in_dims=(None, 0))
    n = Xt.shape[0]
    if chunk is None:
        chunk = max(1, int(2e7 // max(out * P, 1)))
    parts = []
    for s in range(0, n, chunk):
        jb = per_input(blocks, Xt[s : s + chunk])  # one (c, out, *shape) tensor per block
        # assembled transposed: the Jacobian comes out column-major, as LAPACK's QR wants it
        parts.append(torch.cat([b.reshape(b.shape[0] * out, -1).T for b in jb]))
    JT = parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)
    return JT.numpy().T


def _singular_values(J: np.ndarray) -> np.ndarray:
    """Singular values of a float64 matrix, largest first.

    A tall matrix is reduced to the triangular factor ``R`` of its QR decomposition first
    (``R`` has the same singular values; Householder QR is backward stable, so nothing is lost
    at the round-off level ``s_1 · eps``). LAPACK through torch (measured faster here than
    numpy's BLAS for these shapes).
    """
    import torch

    T = torch.as_tensor(J)
    if T.shape[0] > 2 * T.shape[1]:
        T = torch.linalg.qr(T, mode="r")[1]
    return torch.linalg.svdvals(T).numpy()


#: With ``n_inputs=None``, inputs are added until the sampled Jacobian has this many rows per
#: parameter at most (then the reading is taken as it is).
_MAX_ROWS_PER_PARAM = 16


def _saturated_jacobian(
    param: Parametrization, point: list[np.ndarray], rng: np.random.Generator, min_gap: float
) -> tuple[int, np.ndarray]:
    """Sample inputs until one more batch of random inputs no longer raises the rank.

    Start with the least ``n`` with ``n · (outputs per input) ≥ 1.2 P`` (plus 2), then double
    ``n`` (new random inputs, rows appended) until two successive readings are unambiguous and
    equal (or two successive readings are ambiguous past ``2 P`` rows, or ``16 P`` rows are
    reached). Why equality after doubling means saturation: the inputs ``X`` whose Jacobian rows
    would enlarge the current row space form a Zariski-open set; if it is non-empty, a random
    batch meets it with probability one, so a batch that adds nothing shows it is empty. The
    count of rows alone is not enough: one input's block can have rank far below its number of
    outputs (for the softmax network of Figure 3 at ``δ = 10``, 14 inputs give 420 rows but
    rank < 172).
    """
    P = param.n_params
    shape = param.input_shape
    n = _default_inputs(param, P)
    J = float_jacobian(param, point, rng.standard_normal((n, *shape)))
    previous, ambiguous = None, 0
    while True:
        try:
            rank = read_rank(_singular_values(J), J.shape, min_gap=min_gap).rank
            ambiguous = 0
        except RankAmbiguityError:
            rank = None
            ambiguous += 1
        if rank is not None and rank == previous:
            return n, J
        if J.shape[0] >= _MAX_ROWS_PER_PARAM * P:
            return n, J
        if ambiguous >= 2 and J.shape[0] >= 2 * P:
            # more inputs do not cure an ill-conditioned Jacobian (deep lightning networks)
            return n, J
        previous = rank
        J = np.vstack([J, float_jacobian(param, point, rng.standard_normal((n, *shape)))])
        n *= 2


def numerical_rank(
    param: Parametrization,
    params: Sequence[Any] | None = None,
    *,
    n_inputs: int | None = None,
    seed: int = 0,
    min_gap: float = DEFAULT_MIN_GAP,
) -> NumericalDimension:
    """The rank of the parametrization's Jacobian in float64, read at the largest gap.

    Parameters
    ----------
    param : Parametrization
        The map (any ``forward``, polynomial or not).
    params : list of array-like, optional
        The point (one float array per block); default: standard normal, seeded by ``seed``.
    n_inputs : int, optional
        The number of random normal inputs ``X``. Default: start with the least ``n`` with
        ``n · (outputs per input) ≥ 1.2 P`` (plus 2) and double ``n`` until a new batch of
        inputs no longer raises the rank (see the chapter; at most ``16 P`` rows, and it stops
        early when two successive readings are ambiguous).
    seed : int
        Seeds the point (when not given) and the inputs.
    min_gap : float
        The least drop of the singular values accepted (default ``1e4``).

    Returns
    -------
    NumericalDimension
        At a random point and enough random inputs, the rank of the Jacobian is the dimension
        of the image (the neuromanifold) with probability one, *if* float64 reads it right;
        the gap and the runner-up say how clear the reading is.

    Raises
    ------
    RankAmbiguityError
        If the singular values have no drop of at least ``min_gap`` (float64 cannot tell).
    ValueError
        On blocks of the wrong shape, a non-positive ``n_inputs``, or ``min_gap ≤ 1``.

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the rank engine). The Jacobian is
    :func:`float_jacobian` (per input, reverse or forward mode, whichever needs fewer passes);
    its singular values come from a QR factorization followed by an SVD of ``R``; the rank is
    read by :func:`read_rank`. Why the threshold ``1e4``: float64 round-off puts the singular
    values that should be zero near ``s_1 · 1e-16``; a drop of four orders of magnitude is far
    outside what the smooth decay of a well-posed Jacobian produces, and readings below it are
    reported as ambiguous rather than guessed.
    """
    if not isinstance(param, Parametrization):
        raise TypeError(f"param must be a Parametrization, got {type(param).__name__}")
    n_inputs = _check_n_inputs(n_inputs)
    min_gap = _check_min_gap(min_gap)
    seed = _check_seed(seed)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    if params is None:
        point = [rng.standard_normal(s) for s in param.shapes]
    else:
        point = _check_params(param, params, exact=False)
    P = param.n_params
    if n_inputs is not None:
        n = n_inputs
        J = float_jacobian(param, point, rng.standard_normal((n, *param.input_shape)))
    else:
        n, J = _saturated_jacobian(param, point, rng, min_gap)
    s = _singular_values(J)
    reading = read_rank(s, J.shape, min_gap=min_gap)
    return NumericalDimension(
        rank=reading.rank,
        gap=reading.gap,
        runner_up=reading.runner_up,
        singular_values=reading.singular_values,
        n_params=P,
        n_inputs=n,
        t=param.input_shape[1],
        seconds=time.perf_counter() - start,
    )


def numerical_dimension(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalized: bool = False,
    n_inputs: int | None = None,
    seed: int = 0,
    min_gap: float = DEFAULT_MIN_GAP,
) -> NumericalDimension:
    """The float64 dimension estimate of a deep lightning (or softmax) network.

    :func:`numerical_rank` of :func:`lightning_parametrization` at a random normal point, on
    ``n_inputs`` random normal inputs.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    t : int
        Tokens per input.
    normalized : bool
        ``True`` for softmax layers.
    n_inputs : int, optional
        Default: enough for the Jacobian to reach full column rank (see :func:`numerical_rank`).
    seed : int
        Seeds the point and the inputs.
    min_gap : float
        The least singular-value drop accepted.

    Returns
    -------
    NumericalDimension

    Raises
    ------
    RankAmbiguityError
        If the singular values show no trustworthy gap (deep lightning networks are badly
        conditioned: use :func:`certified_dimension`).
    ValueError
        On a bad architecture, ``t < 1`` or ``n_inputs < 1``.

    Notes
    -----
    Explained in the chapter "Dimension formulas".
    """
    param = lightning_parametrization(widths, attn, t=t, normalized=normalized)
    return numerical_rank(param, n_inputs=n_inputs, seed=seed, min_gap=min_gap)


# =========================================================================================
# The certified (exact, modular) engine
# =========================================================================================
def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _generator_matrix(param: Parametrization, point: list[np.ndarray], p: int) -> np.ndarray:
    """The symmetry tangents at ``point`` as residues mod ``p``, shape ``(n_generators, P)``."""
    P = param.n_params
    if param.generators is None:
        return np.zeros((0, P))
    # integer arrays in, so that the generators come back as exact integers
    gens = param.generators([np.asarray(x).astype(np.int64) for x in point])
    if isinstance(gens, np.ndarray) and gens.ndim == 2 and gens.dtype != object:
        if gens.shape[1] != P:
            raise ValueError(f"generators returned {gens.shape[1]} columns, expected P = {P}")
        return _modp.as_residues(gens, p, "generators")
    rows = []
    for g in gens:
        if isinstance(g, np.ndarray) and g.ndim == 1:
            flat = g
        else:
            flat = np.concatenate([np.asarray(b).reshape(-1) for b in g])
        if flat.shape[0] != P:
            raise ValueError(f"a generator has {flat.shape[0]} entries, expected P = {P}")
        rows.append(_modp.as_residues(flat, p, "generators"))
    if not rows:
        return np.zeros((0, P))
    return np.stack(rows)


def _orbit_rank(G: np.ndarray, shapes: Sequence[tuple[int, ...]], p: int) -> int:
    """``rank_p(G)`` for the symmetry tangents, using their block structure when it suffices.

    Generators are sparse: each touches a few parameter blocks (``GL_a`` of layer ``i`` only
    ``Q_i, K_i``; the pass-through between layers ``i, i+1`` only ``V_i`` and layer ``i+1``).
    Group the rows by the set of blocks they touch and look for an order of the groups and one
    *private* block per group, touched by no group placed before it. In that order the
    submatrix (rows: the groups, columns: the private blocks) is block lower-triangular, so
    ``rank G ≥ Σ rank(diagonal blocks)`` (independent rows of the diagonal blocks stay
    independent: a vanishing combination must vanish on the last private block first, and so
    on). When this sum reaches the number of non-zero rows it *is* the rank (a rank never
    exceeds the number of rows), computed from small blocks; otherwise the dense rank is used.
    """
    if G.shape[0] == 0:
        return 0
    G = G[(G != 0).any(axis=1)]
    n_rows = G.shape[0]
    if n_rows == 0:
        return 0
    edges = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    blocks = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
    support = np.stack([(G[:, b] != 0).any(axis=1) for b in blocks], axis=1)
    signatures, labels = np.unique(support, axis=0, return_inverse=True)
    labels = labels.reshape(-1)
    remaining = set(range(len(signatures)))
    total = 0
    while remaining:
        pick = None
        for g in sorted(remaining):
            for c in np.flatnonzero(signatures[g]):
                if not any(signatures[h][c] for h in remaining if h != g):
                    pick = (g, int(c))
                    break
            if pick is not None:
                break
        if pick is None:
            break
        g, c = pick
        total += _modp.rank_mod_p(G[labels == g][:, blocks[c]], p)
        remaining.remove(g)
    if not remaining and total == n_rows:
        return total
    return _modp.rank_mod_p(G, p)


def _exact_jacobian(
    param: Parametrization, point: list[np.ndarray], X: np.ndarray, C: np.ndarray | None, p: int
) -> np.ndarray:
    """``J C mod p``: the Jacobian at ``point`` on inputs ``X`` times the directions ``C``.

    ``C`` has shape ``(P, k)`` (``None``: all ``P`` unit directions). Computed by pushing ``k``
    tangent directions through ``forward`` with :class:`lsa_lib._modp.ModDual`.
    """
    P = param.n_params
    duals, pos = [], 0
    for x, s in zip(point, param.shapes):
        size = int(np.prod(s))
        if C is None:
            tan = np.zeros((size, P))
            tan[np.arange(size), np.arange(pos, pos + size)] = 1.0
        else:
            tan = np.ascontiguousarray(C[pos : pos + size])
        duals.append(_modp.ModDual(x, tan.reshape((*s, -1)), p))
        pos += size
    k = P if C is None else C.shape[1]
    # inputs in chunks, so that one tangent array holds at most ~3·10⁷ numbers
    width = max([param.input_shape[0]] + [max(s) for s in param.shapes])
    chunk = max(1, int(3e7 // max(1, k * width * param.input_shape[1])))
    parts = []
    for s in range(0, X.shape[0], chunk):
        y = param.forward(duals, _modp.ModDual(X[s : s + chunk], None, p))
        if not isinstance(y, _modp.ModDual):
            raise TypeError("forward did not return an array built from its parameters")
        if y.tangent is None:
            parts.append(np.zeros((int(np.prod(y.value.shape)), k)))
        else:
            parts.append(np.broadcast_to(y.tangent, y.value.shape + (k,)).reshape(-1, k))
    return np.vstack(parts)


def certified_rank(
    param: Parametrization,
    params: Sequence[Any] | None = None,
    *,
    seed: int = 0,
    prime: int | None = None,
    n_inputs: int | None = None,
) -> CertifiedDimension:
    """Certified bounds on the rank of a polynomial parametrization, by exact arithmetic mod ``p``.

    At an integer point ``θ`` (``params``, or random residues mod ``p``) and random integer
    inputs ``X_1, …, X_n``:

    * **upper bound** ``P - o``, with ``o`` the rank mod ``p`` of the symmetry tangents
      ``G(θ)`` (rows: ``param.generators``). Why it holds: each tangent is the derivative of a
      curve of parameters along which the function does not change, so it lies in the kernel
      of the differential ``dφ_θ``; hence ``rank dφ_θ ≤ P - rank_Q G(θ)``. Reducing an integer
      matrix mod ``p`` can only lower its rank (a non-zero minor mod ``p`` is a non-zero
      integer), so ``rank_p G(θ) ≤ rank_Q G(θ)`` and ``P - o`` bounds ``rank dφ_θ``. It also
      bounds the dimension (the generic rank): at a generic ``θ'``,
      ``rank dφ_θ' ≤ P - rank G(θ')`` and ``rank G(θ') ≥ rank G(θ)``, since the generic rank
      of a polynomial matrix is its largest rank.
    * **lower bound** ``rank_p(J C)``, with ``J`` the Jacobian of the outputs on the inputs
      (an integer matrix, computed mod ``p`` by forward-mode dual numbers) and ``C`` a random
      ``P × k`` matrix mod ``p``, ``k = P - o`` (column compression; ``C = I`` without
      generators). Why it holds: ``rank_p(J C) ≤ rank_p(J) ≤ rank_Q(J) ≤ rank dφ_θ ≤
      dim``: compressing columns cannot raise a rank, reduction mod ``p`` cannot raise it, a
      finite sample of outputs sees at most the whole differential, and the rank at any point
      is at most the generic rank (the dimension of the image).

    Neither bound depends on luck; randomness only decides whether they **meet** (by the
    Schwartz–Zippel lemma, with probability close to one when the point, the inputs and ``C``
    are random mod a large prime and enough inputs are sampled). If they do not meet and the
    point was random, the computation is repeated once with another seed, keeping the larger
    lower and the smaller upper bound (both remain valid for the dimension).

    Parameters
    ----------
    param : Parametrization
        A polynomial parametrization (``param.polynomial``), with integer coefficients.
    params : list of array-like of int, optional
        The point ``θ`` (integer entries); default: uniform random residues mod ``p``.
    seed : int
        Seeds the point, the inputs and ``C``.
    prime : int, optional
        A prime ``2 < p < 2^20`` (default ``1048573``, the largest below ``2^20``).
    n_inputs : int, optional
        Default: start with the least ``n`` with ``n · (outputs per input) ≥ 1.1 k`` (plus 1)
        and add inputs in rounds until the bounds meet or new inputs no longer raise the rank.

    Returns
    -------
    CertifiedDimension
        ``lower ≤ rank dφ_θ ≤ upper`` at the given point, and ``lower ≤ dim ≤ upper``.

    Raises
    ------
    ValueError
        If ``param`` is not polynomial, ``params`` are not integers of the right shapes, or
        ``prime`` is not a prime below ``2^20``.

    Notes
    -----
    Explained in the chapter "Dimension formulas" (the rank engine). Exactness of float64
    arithmetic on residues: see :mod:`lsa_lib._modp`.
    """
    if not isinstance(param, Parametrization):
        raise TypeError(f"param must be a Parametrization, got {type(param).__name__}")
    if not param.polynomial:
        raise ValueError(
            f"{param.name} is not polynomial (e.g. softmax): only numerical_rank applies"
        )
    p = _modp.DEFAULT_PRIME if prime is None else _modp._check_prime(prime)
    seed = _check_seed(seed)
    n_inputs = _check_n_inputs(n_inputs)
    start = time.perf_counter()
    given = params is not None
    if given:
        point = [
            _modp.as_residues(x, p, f"params[{i}]")
            for i, x in enumerate(_check_params(param, params, exact=True))
        ]
    lower, upper, used = -1, param.n_params + 1, 0
    attempts = 1 if given else 2
    for attempt in range(attempts):
        rng = np.random.default_rng([seed, attempt])
        if not given:
            point = [rng.integers(0, p, size=s).astype(np.float64) for s in param.shapes]
        lo, up, n = _certify_once(param, point, p, rng, n_inputs)
        lower, upper, used = max(lower, lo), min(upper, up), max(used, n)
        if lower == upper:
            break
    return CertifiedDimension(
        lower=int(lower),
        upper=int(upper),
        n_params=param.n_params,
        prime=p,
        n_inputs=int(used),
        t=param.input_shape[1],
        seconds=time.perf_counter() - start,
    )


def _certify_once(
    param: Parametrization,
    point: list[np.ndarray],
    p: int,
    rng: np.random.Generator,
    n_inputs: int | None,
) -> tuple[int, int, int]:
    """One attempt: ``(lower, upper, inputs used)`` at ``point``.

    With ``n_inputs=None`` the inputs are added in rounds until the bounds meet or a round of
    new random inputs no longer raises the rank (saturation, as in the float engine):
    one input's Jacobian block can have rank far below its number of outputs once the first
    few inputs are seen (deep networks: about ``t²`` new directions per input), so the number
    of rows is not a good guide. Each round extrapolates the rank gained per input so far.
    """
    P = param.n_params
    G = _generator_matrix(param, point, p)
    o = _orbit_rank(G, param.shapes, p)
    upper = P - o
    k = upper
    if k == 0:
        return 0, 0, 0
    C = None if k == P else rng.integers(0, p, size=(P, k)).astype(np.float64)
    shape = param.input_shape

    def rows(m: int) -> np.ndarray:
        X = rng.integers(0, p, size=(m, *shape)).astype(np.float64)
        return _exact_jacobian(param, point, X, C, p)

    if n_inputs is not None:
        return _modp.rank_mod_p(rows(n_inputs), p), upper, n_inputs
    n = _default_inputs_exact(param, k)
    J = rows(n)
    lower = _modp.rank_mod_p(J, p)
    prev_n, prev_lower = 0, 0
    while lower < upper and lower > prev_lower:
        rate = (lower - prev_lower) / (n - prev_n)  # rank gained per input, last round
        extra = int(np.ceil(1.2 * (upper - lower) / rate)) + 1
        extra = min(extra, 2 * n)
        prev_n, prev_lower = n, lower
        J = np.vstack([J, rows(extra)])
        n += extra
        lower = _modp.rank_mod_p(J, p)
    return lower, upper, n


def _default_inputs_exact(param: Parametrization, k: int) -> int:
    out = _outputs_per_input(param)
    return int(np.ceil(1.1 * k / out)) + 1


def certified_dimension(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, seed: int = 0
) -> CertifiedDimension:
    """Certified bounds on the dimension of a deep lightning network's neuromanifold.

    :func:`certified_rank` of :func:`lightning_parametrization` (``normalized=False``) at a
    random integer point: the lower bound is the rank mod ``p`` of the Jacobian, the upper bound
    ``P`` minus the rank mod ``p`` of the three symmetries' tangent vectors; see
    :func:`certified_rank` for why each holds.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    t : int
        Tokens per input.
    seed : int
        Seeds the point, the inputs and the column compression.

    Returns
    -------
    CertifiedDimension
        ``.exact`` is ``True`` when the bounds meet; then ``.dimension`` is certified.

    Raises
    ------
    ValueError
        On a bad architecture or ``t < 1``.

    Notes
    -----
    Explained in the chapter "Dimension formulas". Cost: the ``k = P - o`` tangent directions
    are pushed through enough inputs for the rank to saturate, and deep networks gain only
    about ``t²`` new directions per input once the first few inputs are seen, so a larger
    ``t`` (up to the width) needs far fewer inputs. Measured on the book's 2-core machine,
    single-threaded: widths ``(24,)*5``, ``a_i = 24`` (``P = 6912``) take about 55 s at
    ``t = 3`` (281 inputs) and 6 s at ``t = 24``; widths ``(32,)*5``, ``a_i = 32``
    (``P = 12288``, dimension 5116) take about 21 s at ``t = 32``.
    """
    param = lightning_parametrization(widths, attn, t=t, normalized=False)
    return certified_rank(param, seed=seed)
