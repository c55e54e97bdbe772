"""The rank engine: float ranks read at the largest gap, and exact ranks with certified bounds.

Every dimension in the book is the rank of a Jacobian: of a map from parameters to functions,
sampled on inputs. The engine knows maps, not models: a :class:`Parametrization` gives the
parameter blocks and a forward pass written with ``@``, ``.mT``, ``+``, ``-`` and ``*``; each
model's module builds its own. Two engines, one result type each:

* **float** (:func:`float_rank`, :class:`FloatRank`): the Jacobian by automatic differentiation
  (:func:`float_jacobian`, float64 or float32), its singular values, and the rank read at the
  largest gap, which must reach ``min_gap`` (:data:`lsa_lib.tolerances.GAP_MIN`) or
  :class:`RankAmbiguityError` is raised;
* **exact** (:func:`exact_rank`, :class:`ExactRank`): ``P`` minus the rank of the known
  symmetries' tangents (modulo a prime) is an upper bound; the lower bound is the Jacobian's
  rank modulo a prime for polynomial maps with integer coefficients (forward-mode dual numbers,
  the private module ``lsa_lib._modp``), and for other maps (softmax) the rank of a minor of
  the Jacobian proven non-zero in ball arithmetic (the private module ``lsa_lib._ball``). When
  the bounds meet the rank is certified.

Why both bounds hold and why the float threshold is what it is: :doc:`/book/04_dimension`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import flint
import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch.func import jacfwd, jacrev, vmap

from . import _ball, _checks, _modp
from ._checks import DType
from .tolerances import GAP_MIN

__all__ = [
    "Parametrization",
    "FloatRank",
    "ExactRank",
    "RankAmbiguityError",
    "float_jacobian",
    "float_rank",
    "exact_rank",
]

_TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass(frozen=True)
class Parametrization:
    """A map from parameter blocks to a function, sampled on inputs (see :doc:`/book/04_dimension`).

    Attributes
    ----------
    name : str
        A label for messages.
    shapes : tuple of tuple of int
        The parameter blocks, in order (for networks ``Q_1, K_1, V_1, Q_2, …``).
    input_shape : tuple of int
        ``(d_0, t)``, the shape of one input ``X``.
    forward : callable
        ``forward(params, X)``: ``params`` a list of arrays shaped like ``shapes``, ``X`` of
        shape ``(n, d_0, t)``; returns an array ``(n, …)``. Only ``@``, ``.mT``, ``+``, ``-``,
        ``*`` and integer constants when ``polynomial`` (then it runs on torch tensors and on
        the exact dual numbers alike).
    generators : callable, optional
        ``generators(params)``: tangent vectors of symmetries at ``params`` (each a list of
        arrays shaped like ``params``, or one array ``(n_generators, P)``), polynomial with
        integer coefficients; they give the exact engine's upper bound.
    polynomial : bool
        ``forward`` is a polynomial with integer coefficients (the exact engine applies).
    predicted : int, optional
        The dimension the model's own count predicts, when it has one (compared with the
        computed rank by the chapters).
    """

    name: str
    shapes: tuple[tuple[int, ...], ...]
    input_shape: tuple[int, int]
    forward: Callable[..., Any]
    generators: Callable[..., Any] | None = None
    polynomial: bool = True
    predicted: int | None = None

    def __post_init__(self) -> None:
        shapes = tuple(
            tuple(_checks.size(s, "parameter block size") for s in sh) for sh in self.shapes
        )
        if not shapes:
            raise ValueError("a parametrization needs at least one parameter block")
        if len(self.input_shape) != 2:
            raise ValueError(f"input_shape must be (d_0, t), got {self.input_shape!r}")
        object.__setattr__(self, "shapes", shapes)
        object.__setattr__(
            self,
            "input_shape",
            (
                _checks.size(self.input_shape[0], "input width d_0"),
                _checks.tokens(self.input_shape[1]),
            ),
        )
        if not callable(self.forward):
            raise TypeError("forward must be callable")
        if self.generators is not None and not callable(self.generators):
            raise TypeError("generators must be callable or None")

    @property
    def n_params(self) -> int:
        """The number of parameters ``P``."""
        return int(sum(int(np.prod(s)) for s in self.shapes))


@dataclass(frozen=True)
class FloatRank:
    """A rank read at the largest gap of float singular values (see :doc:`/book/04_dimension`).

    Attributes
    ----------
    rank : int
        The number of singular values above the largest gap.
    gap : float
        ``s_rank / max(s_{rank+1}, floor)``: how much the singular values drop there.
    runner_up : float
        The second-largest such drop (1.0 if there is none).
    trusted : bool
        ``gap ≥ min_gap``; an untrusted reading is only returned with ``strict=False``.
    singular_values : numpy.ndarray, shape=[min(shape)]
        All singular values, largest first.
    shape : tuple of int
        ``(rows, columns)`` of the matrix (for a Jacobian: ``(outputs, P)``).
    dtype : {"float64", "float32"}
        The precision of the matrix and its singular values.
    n_inputs : int or None
        The number of random inputs of a Jacobian (None for a given matrix).
    """

    rank: int
    gap: float
    runner_up: float
    trusted: bool
    singular_values: NDArray[np.float64] = field(repr=False)
    shape: tuple[int, int]
    dtype: str = "float64"
    n_inputs: int | None = None

    @property
    def n_params(self) -> int:
        """The number of columns (parameters, for a Jacobian)."""
        return self.shape[1]

    @property
    def nullity(self) -> int:
        """``columns − rank``: the dimension of the kernel (a fiber dimension, for a Jacobian)."""
        return self.shape[1] - self.rank

    @property
    def floor(self) -> float:
        """The round-off level ``s_1 · max(shape) · eps(dtype)``."""
        s = self.singular_values
        return float(s[0] * max(self.shape) * np.finfo(self.dtype).eps) if s.size else 0.0

    @property
    def threshold_rank(self) -> int:
        """The count of singular values above :attr:`floor` (``numpy.linalg.matrix_rank``'s rule)."""
        return int((self.singular_values > self.floor).sum()) if self.floor > 0 else 0

    def __str__(self) -> str:
        return str(self.rank) if self.trusted else f"{self.rank}?"


@dataclass(frozen=True)
class ExactRank:
    """Certified bounds ``lower ≤ rank ≤ upper`` from exact arithmetic (see :doc:`/book/04_dimension`).

    Attributes
    ----------
    lower, upper : int
        Proven bounds on the rank (for a parametrization at a random point: on its dimension).
    n_params : int
        ``P``, the number of columns.
    prime : int or None
        The prime ``p`` of the arithmetic, or None for a rank over the rationals.
    n_inputs : int or None
        The number of inputs of a Jacobian (None for a given matrix).
    lower_by : {"mod p", "ball", "rational"}
        How the lower bound is proven: a rank modulo ``prime``, a minor whose determinant's
        ball excludes zero (non-polynomial maps, at a float point on float inputs), or an exact
        rank over the rationals (a given matrix).
    reading : FloatRank or None
        For a ``"ball"`` lower bound, the float reading of the Jacobian that chose its minor
        (at the same point, on the same inputs); None otherwise.
    """

    lower: int
    upper: int
    n_params: int
    prime: int | None
    n_inputs: int | None = None
    lower_by: str = "mod p"
    reading: FloatRank | None = field(default=None, repr=False, compare=False)

    @property
    def certified(self) -> bool:
        """The bounds meet: the rank is proven."""
        return self.lower == self.upper

    @property
    def rank(self) -> int:
        """The certified rank; ``ValueError`` if the bounds do not meet."""
        if not self.certified:
            raise ValueError(
                f"the bounds do not meet ({self.lower} ≤ rank ≤ {self.upper}): no certified value"
            )
        return self.lower

    @property
    def nullity(self) -> int:
        """``P − rank`` (certified): the dimension of the kernel."""
        return self.n_params - self.rank

    def __str__(self) -> str:
        return str(self.lower) if self.certified else f"{self.lower}..{self.upper}"


class RankAmbiguityError(ValueError):
    """No singular-value gap reaches ``min_gap`` (see :doc:`/book/04_dimension`).

    Attributes
    ----------
    reading : FloatRank
        The rejected reading (``trusted=False``): its rank and gap are the best candidates.
    """

    def __init__(self, message: str, reading: FloatRank):
        super().__init__(message)
        self.reading = reading


# =========================================================================================
# the float engine
# =========================================================================================
def _read(
    s: ArrayLike, shape: tuple[int, int], dtype: str, min_gap: float, strict: bool, n: Any = None
) -> FloatRank:
    """The rank at the largest drop of ``s`` against the round-off floor of ``dtype``."""
    s = np.sort(np.asarray(s, dtype=np.float64).ravel())[::-1]
    shape = (int(shape[0]), int(shape[1]))
    if s.size != min(shape) or not np.isfinite(s).all() or (s < 0).any():
        raise ValueError(f"expected {min(shape)} finite non-negative singular values")
    if s[0] == 0:
        return FloatRank(0, np.inf, 1.0, True, s, shape, dtype, n)
    floor = s[0] * max(shape) * np.finfo(dtype).eps
    ratios = s / np.maximum(np.append(s[1:], 0.0), floor)  # ratios[r-1]: the drop after s_r
    order = np.argsort(ratios)[::-1]
    runner = float(ratios[order[1]]) if s.size > 1 else 1.0
    gap = float(ratios[order[0]])
    reading = FloatRank(int(order[0]) + 1, gap, runner, gap >= min_gap, s, shape, dtype, n)
    if strict and not reading.trusted:
        raise RankAmbiguityError(
            f"no trustworthy rank: the largest drop of the singular values is {gap:.3g} (at rank "
            f"{reading.rank}), below the threshold {min_gap:.3g}",
            reading,
        )
    return reading


def _singular_values(J: NDArray[Any]) -> NDArray[np.float64]:
    """Singular values of a float matrix in its own precision (tall: of its QR factor ``R``)."""
    T = torch.as_tensor(J)
    if T.shape[0] > 2 * T.shape[1]:  # LAPACK's geqrf (Householder): R is in the upper triangle
        T = torch.triu(torch.geqrf(T)[0][: T.shape[1]])
    return torch.linalg.svdvals(T).double().numpy()


def _outputs_per_input(param: Parametrization) -> int:
    """The number of output coordinates of one input (one forward pass at zero)."""
    ps = [torch.zeros(s, dtype=torch.float64) for s in param.shapes]
    with torch.no_grad():
        y = param.forward(ps, torch.zeros((1, *param.input_shape), dtype=torch.float64))
    return int(np.prod(tuple(y.shape[1:])))


def _check_params(param: Parametrization, params: Any, *, exact: bool) -> list[np.ndarray]:
    if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
        raise TypeError("params must be a list of arrays, one per parameter block")
    if len(params) != len(param.shapes):
        raise ValueError(
            f"params has {len(params)} blocks, but {param.name} has {len(param.shapes)}"
        )
    out = []
    for i, (p, s) in enumerate(zip(params, param.shapes, strict=True)):
        p = p.detach().cpu().numpy() if _checks.is_torch(p) else p
        arr = np.asarray(p) if exact else _checks.array(p, f"params[{i}]", min_ndim=0)
        if tuple(arr.shape) != tuple(s):
            raise ValueError(f"params[{i}] must have shape {s}, got {tuple(arr.shape)}")
        out.append(arr)
    return out


def float_jacobian(
    param: Parametrization,
    params: Sequence[ArrayLike],
    X: ArrayLike,
    *,
    dtype: DType = "float64",
    mode: str = "auto",
    chunk: int | None = None,
) -> NDArray[np.floating]:
    """The Jacobian of all outputs on inputs ``X`` with respect to all parameters.

    Per input, in the mode that needs fewer passes: reverse mode (``torch.func.jacrev``) when
    an input has fewer outputs than there are parameters, forward mode otherwise; batched over
    the inputs with ``vmap``. Explained in :doc:`/book/04_dimension`.

    Parameters
    ----------
    param : Parametrization
    params : list of array-like
        The point, one array per block.
    X : array-like, shape=[n, d_0, t]
        The inputs.
    dtype : {"float64", "float32"}
        The precision of the whole computation.
    mode : {"auto", "forward", "reverse"}
    chunk : int, optional
        Inputs per batch (default: about 2·10⁷ Jacobian entries).

    Returns
    -------
    numpy.ndarray, shape=[n · (outputs per input), P]
        Rows input by input, each as ``forward(params, X)[i].reshape(-1)``.
    """
    _checks.choice(mode, "mode", ("auto", "forward", "reverse"))
    tdt = _TORCH_DTYPES[_checks.dtype(dtype)]
    blocks = tuple(torch.as_tensor(p, dtype=tdt) for p in _check_params(param, params, exact=False))
    Xt = torch.as_tensor(_checks.array(X, "X", min_ndim=3), dtype=tdt)
    if Xt.ndim != 3 or tuple(Xt.shape[1:]) != tuple(param.input_shape):
        raise ValueError(
            f"X must have shape (n, {param.input_shape[0]}, {param.input_shape[1]}), "
            f"got {tuple(Xt.shape)}"
        )
    P, out = param.n_params, _outputs_per_input(param)
    if mode == "auto":
        mode = "reverse" if out < P else "forward"

    def g(ps: tuple[Any, ...], x: Any) -> Any:
        return param.forward(list(ps), x[None]).reshape(-1)

    # with respect to the blocks, not views of a flat vector: in reverse mode every view
    # would cost a full-size zero gradient and an addition
    per_input = vmap((jacrev if mode == "reverse" else jacfwd)(g), in_dims=(None, 0))
    chunk = chunk or max(1, int(2e7 // max(out * P, 1)))
    # filled transposed: the Jacobian comes out column-major, as LAPACK's QR wants it
    JT = torch.empty((P, Xt.shape[0] * out), dtype=tdt)
    for s in range(0, Xt.shape[0], chunk):
        jb = per_input(blocks, Xt[s : s + chunk])  # one (c, out, *shape) tensor per block
        col = 0
        for b in jb:
            width = b[0, 0].numel()
            JT[col : col + width, s * out : s * out + b.shape[0] * out] = b.reshape(-1, width).T
            col += width
    return JT.numpy().T


def _saturated(
    param: Parametrization, point: list[Any], rng: np.random.Generator, dt: str, min_gap: float
) -> tuple[NDArray[np.float64], NDArray[Any], NDArray[np.float64]]:
    """Inputs, Jacobian and its singular values once new inputs no longer raise the rank.

    Start with ``⌈1.2 P / (outputs per input)⌉ + 2`` inputs and double (new random inputs)
    until two successive readings are unambiguous and equal, or two successive readings are
    ambiguous past ``2P`` rows, or ``16P`` rows are reached. Why: :doc:`/book/04_dimension`.
    """
    P, shape = param.n_params, param.input_shape
    n = int(np.ceil(1.2 * P / _outputs_per_input(param))) + 2
    X = rng.standard_normal((n, *shape))
    J = float_jacobian(param, point, X, dtype=dt)
    previous, ambiguous = None, 0
    while True:
        s = _singular_values(J)
        reading = _read(s, J.shape, dt, min_gap, strict=False)
        rank = reading.rank if reading.trusted else None
        ambiguous = 0 if reading.trusted else ambiguous + 1
        if rank is not None and rank == previous:
            return X, J, s
        if J.shape[0] >= 16 * P or (ambiguous >= 2 and J.shape[0] >= 2 * P):
            return X, J, s
        previous = rank
        more = rng.standard_normal((X.shape[0], *shape))
        J = np.vstack([J, float_jacobian(param, point, more, dtype=dt)])
        X = np.concatenate([X, more])


def float_rank(
    target: Parametrization | ArrayLike,
    params: Sequence[ArrayLike] | None = None,
    *,
    n_inputs: int | None = None,
    seed: int = 0,
    weight_scale: float = 1.0,
    dtype: DType = "float64",
    min_gap: float = GAP_MIN,
    strict: bool = True,
) -> FloatRank:
    """The float rank of a matrix, or of a parametrization's Jacobian, read at the largest gap.

    Explained in :doc:`/book/04_dimension`.

    Parameters
    ----------
    target : Parametrization or array-like, shape=[m, n]
        A map (any forward pass, polynomial or not), or a matrix (numpy, torch, sympy).
    params : list of array-like, optional
        The point (one array per block); default ``weight_scale`` times standard normal.
    n_inputs : int, optional
        The number of random normal inputs. Default: add inputs until a new batch no longer
        raises the rank (see :func:`float_jacobian` and the chapter).
    seed : int
        Seeds the point (when not given), then the inputs, from one generator.
    weight_scale : float
        The scale of the random point.
    dtype : {"float64", "float32"}
        The precision of the Jacobian (or matrix), of its singular values and of the floor
        ``s_1 · max(shape) · eps`` that the gaps are measured against.
    min_gap : float
        The least drop trusted (default :data:`lsa_lib.tolerances.GAP_MIN`).
    strict : bool
        Raise on an untrusted reading (default); ``False`` returns it with ``trusted=False``.

    Returns
    -------
    FloatRank

    Raises
    ------
    RankAmbiguityError
        If ``strict`` and no drop reaches ``min_gap``: float precision cannot tell.
    """
    dt, min_gap = _checks.dtype(dtype), _checks.min_gap(min_gap)
    strict = _checks.flag(strict, "strict")
    if not isinstance(target, Parametrization):
        if params is not None or n_inputs is not None:
            raise TypeError("params and n_inputs apply to a Parametrization, not to a matrix")
        M = np.asarray(_checks.matrix(target, "matrix"), dtype=dt)
        return _read(np.linalg.svd(M, compute_uv=False), M.shape, dt, min_gap, strict)
    n_inputs = None if n_inputs is None else _checks.size(n_inputs, "n_inputs")
    scale = _checks.real(weight_scale, "weight_scale", positive=True)
    rng = np.random.default_rng(_checks.seed(seed))
    if params is None:
        point = [scale * rng.standard_normal(s) for s in target.shapes]
    else:
        point = _check_params(target, params, exact=False)
    if n_inputs is None:
        X, J, s = _saturated(target, point, rng, dt, min_gap)
        n = X.shape[0]
    else:
        n = n_inputs
        J = float_jacobian(target, point, rng.standard_normal((n, *target.input_shape)), dtype=dt)
        s = _singular_values(J)
    return _read(s, J.shape, dt, min_gap, strict, n)


# =========================================================================================
# the exact engine
# =========================================================================================
def _generator_matrix(param: Parametrization, point: list[np.ndarray], p: int) -> np.ndarray:
    """The symmetry tangents at ``point`` as residues mod ``p``, shape ``(n_generators, P)``."""
    P = param.n_params
    if param.generators is None:
        return np.zeros((0, P))
    # integer arrays in, so that the generators come back as exact integers
    gens = param.generators([np.asarray(x).astype(np.int64) for x in point])
    if isinstance(gens, np.ndarray) and gens.ndim == 2:
        rows = list(gens)  # an object array's rows keep their Python integers
    else:
        rows = [_exact_concat(g) for g in gens]
    for r in rows:
        if r.shape != (P,):
            raise ValueError(f"a generator has {r.size} entries, expected P = {P}")
    if not rows:
        return np.zeros((0, P))
    return np.stack([_modp.as_residues(r, p, "generators") for r in rows])


def _exact_concat(blocks: Sequence[Any]) -> np.ndarray:
    """One generator's blocks as one flat integer row, without a detour through float64.

    numpy promotes int64 beside uint64 (or beside the int64 array of a large Python integer)
    to float64, which rounds integers above 2**53; object arrays keep them exact.
    """
    arrays = [np.asarray(b).reshape(-1) for b in blocks]
    kinds = {a.dtype.kind for a in arrays}
    if "O" in kinds or ("u" in kinds and "i" in kinds):
        arrays = [a.astype(object) for a in arrays]
    return np.concatenate(arrays)


def _orbit_rank(G: np.ndarray, shapes: Sequence[tuple[int, ...]], p: int) -> int:
    """``rank_p(G)`` for the symmetry tangents, from small blocks when their structure allows.

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
            return _modp.rank_mod_p(G, p)
        g, c = pick
        total += _modp.rank_mod_p(G[labels == g][:, blocks[c]], p)
        remaining.remove(g)
    return total if total == G.shape[0] else _modp.rank_mod_p(G, p)


def _exact_jacobian(
    param: Parametrization, point: list[np.ndarray], X: np.ndarray, C: np.ndarray | None, p: int
) -> np.ndarray:
    """``J C mod p`` on inputs ``X`` (``C``: ``(P, k)`` directions; ``None``: all ``P``)."""
    P = param.n_params
    duals, pos = [], 0
    for x, s in zip(point, param.shapes, strict=True):
        n = int(np.prod(s))
        if C is None:
            tan = np.zeros((n, P))
            tan[np.arange(n), np.arange(pos, pos + n)] = 1.0
        else:
            tan = np.ascontiguousarray(C[pos : pos + n])
        duals.append(_modp.ModDual(x, tan.reshape((*s, -1)), p))
        pos += n
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


def _certify(
    param: Parametrization, point: list[np.ndarray], p: int, rng: np.random.Generator, n: Any
) -> tuple[int, int, int]:
    """``(lower, upper, inputs used)`` at ``point``.

    With ``n=None`` inputs are added in rounds until the bounds meet or a round no longer raises
    the rank; each round extrapolates the rank gained per input so far (deep networks gain about
    ``t²`` directions per input once the first few are seen).
    """
    P = param.n_params
    upper = P - _orbit_rank(_generator_matrix(param, point, p), param.shapes, p)
    if upper == 0:
        return 0, 0, 0
    C = None if upper == P else rng.integers(0, p, size=(P, upper)).astype(np.float64)

    def rows(m: int) -> np.ndarray:
        X = rng.integers(0, p, size=(m, *param.input_shape)).astype(np.float64)
        return _exact_jacobian(param, point, X, C, p)

    if n is not None:
        return _modp.rank_mod_p(rows(n), p), upper, n
    n = int(np.ceil(1.1 * upper / _outputs_per_input(param))) + 1
    J = rows(n)
    lower = _modp.rank_mod_p(J, p)
    prev_n, prev_lower = 0, 0
    while prev_lower < lower < upper:
        rate = (lower - prev_lower) / (n - prev_n)
        extra = min(int(np.ceil(1.2 * (upper - lower) / rate)) + 1, 2 * n)
        prev_n, prev_lower = n, lower
        J = np.vstack([J, rows(extra)])
        n += extra
        lower = _modp.rank_mod_p(J, p)
    return lower, upper, n


#: Working precisions (bits) tried in turn for the ball-arithmetic lower bound.
_BALL_PRECISIONS = (128, 256, 512)


def _leading_inputs(J: NDArray[np.float64], out: int, r: int) -> int:
    """The fewest leading inputs whose rows of ``J`` (``out`` per input) reach float rank ``r``.

    Each input of the minor costs one forward pass in ball arithmetic, so the minor's rows are
    chosen among as few inputs as the float reading allows (all of them if none fewer does).
    """
    n = J.shape[0] // out
    m = max(1, -(-r // out))
    while m < n:
        sub = J[: m * out]
        s = np.linalg.svd(sub, compute_uv=False)
        reading = _read(s, sub.shape, "float64", GAP_MIN, strict=False)
        if reading.trusted and reading.rank >= r:
            return m
        m += max(1, m // 4)
    return n


def _ball_lower(
    param: Parametrization, point: list[NDArray[np.float64]], X: NDArray[np.float64], J: Any, r: int
) -> int:
    """A rank proven by ball arithmetic: the size of a minor whose determinant excludes zero.

    The float Jacobian ``J`` (at ``point`` on inputs ``X``) only *chooses* ``r`` columns
    (pivoted Gram–Schmidt) and ``r`` rows (partial pivoting, among the fewest leading inputs
    that reach rank ``r`` in float64: :func:`_leading_inputs`); the entries of that minor are
    recomputed in ball
    arithmetic from the exact float inputs, so round-off in ``J`` cannot affect the proof. If
    the full minor's ball contains zero at every precision tried, leading minors of the chosen
    order are tried, largest first (any one that excludes zero proves its size).
    """
    cols = _ball.pivots(J, r)
    out = _outputs_per_input(param)
    m = _leading_inputs(J[:, cols], out, r)
    rows = _ball.pivot_rows(J[: m * out, cols])
    entries: dict[int, list[Any]] = {}
    old = flint.ctx.prec
    try:
        for prec in _BALL_PRECISIONS:
            flint.ctx.prec = prec
            for i in sorted({row // out for row in rows}):
                block = _ball.jacobian_block(param.forward, param.shapes, point, X[i], cols)
                entries.update({row: block[row % out] for row in rows if row // out == i})
            minor = [entries[row] for row in rows]
            if _ball.minor_excludes_zero(minor):
                return len(rows)
        for k in range(len(rows) - 1, 0, -1):
            if _ball.minor_excludes_zero([row[:k] for row in minor[:k]]):
                return k
        return 0
    finally:
        flint.ctx.prec = old


def _ball_certify(
    param: Parametrization, params: Any, p: int, rng: np.random.Generator, n: int | None
) -> ExactRank:
    """Bounds for a non-polynomial map: ball-arithmetic lower bound, symmetry upper bound."""
    P = param.n_params
    if params is None:
        point = [rng.standard_normal(s) for s in param.shapes]
    else:
        point = [np.asarray(x, dtype=np.float64) for x in _check_params(param, params, exact=False)]
    integer_point = [rng.integers(0, p, size=s).astype(np.float64) for s in param.shapes]
    upper = P - _orbit_rank(_generator_matrix(param, integer_point, p), param.shapes, p)
    if n is None:
        X, J, s = _saturated(param, point, rng, "float64", GAP_MIN)
    else:
        X = rng.standard_normal((n, *param.input_shape))
        J = float_jacobian(param, point, X)
        s = _singular_values(J)
    reading = _read(s, J.shape, "float64", GAP_MIN, strict=False, n=int(X.shape[0]))
    r = min(reading.rank, upper)
    lower = _ball_lower(param, point, X, J, r) if r > 0 else 0
    return ExactRank(int(lower), int(upper), P, p, int(X.shape[0]), "ball", reading)


def _exact_matrix_rank(M: Any) -> ExactRank:
    """The rank over the rationals of an integer or rational matrix (python-flint)."""
    if isinstance(M, np.ndarray) and M.dtype.kind in "iub":
        if M.ndim != 2 or 0 in M.shape:
            raise ValueError(f"matrix must be a non-empty matrix, got shape {M.shape}")
        F = flint.fmpz_mat([[int(x) for x in row] for row in M.tolist()])
        return ExactRank(F.rank(), F.rank(), M.shape[1], None, lower_by="rational")
    if not _checks.is_exact(M):
        raise ValueError("the exact rank of a matrix needs integer or rational entries")
    R = _checks.rational_matrix(M, "matrix")
    F = flint.fmpq_mat(R.rows, R.cols, [flint.fmpq(int(x.p), int(x.q)) for x in R])
    return ExactRank(F.rank(), F.rank(), R.cols, None, lower_by="rational")


def exact_rank(
    target: Parametrization | ArrayLike,
    params: Sequence[ArrayLike] | None = None,
    *,
    seed: int = 0,
    prime: int | None = None,
    n_inputs: int | None = None,
) -> ExactRank:
    """Certified bounds on the rank of a parametrization, or a matrix's exact rank.

    For a polynomial parametrization, at an integer point ``θ`` and random integer inputs,
    modulo a prime ``p``: the lower bound is the rank of the sampled Jacobian (times a random
    compression of its columns), the upper bound ``P`` minus the rank of the symmetry tangents
    at ``θ``. For a map that is not polynomial (softmax), the upper bound is the same (the
    tangents at a random integer point), and the lower bound the size of a minor of the
    Jacobian at a float point, on float inputs, whose determinant is proven non-zero in ball
    arithmetic (the float Jacobian only chooses the minor). Neither bound depends on luck;
    randomness only decides whether they meet. The proofs: :doc:`/book/04_dimension` and
    :doc:`/book/06_softmax`.

    Parameters
    ----------
    target : Parametrization or array-like, shape=[m, n]
        A parametrization (polynomial with integer coefficients, or any map written with
        ``@``, ``.mT``, ``+``, ``-``, ``*``, ``/``, ``numpy.exp``), or a matrix of integers or
        rationals (numpy, sympy, fractions), whose rank over the rationals is computed exactly.
    params : list of array-like, optional
        The point ``θ``: integers for a polynomial map (default uniform random residues mod
        ``p``), floats otherwise (default standard normal).
    seed : int
        Seeds the point, the inputs and the compression.
    prime : int, optional
        A prime ``2 < p < 2^20`` (default ``1048573``, the largest).
    n_inputs : int, optional
        Default: add inputs in rounds until the bounds meet or a round adds nothing.

    Returns
    -------
    ExactRank
        ``lower ≤ rank ≤ upper`` (at the given point, and for the dimension at a random one).

    Raises
    ------
    ValueError
        If the point does not fit the blocks (or is not integer for a polynomial map), or the
        prime is not a prime below ``2^20``.
    """
    if not isinstance(target, Parametrization):
        if params is not None or n_inputs is not None:
            raise TypeError("params and n_inputs apply to a Parametrization, not to a matrix")
        return _exact_matrix_rank(target)
    p = _modp.DEFAULT_PRIME if prime is None else _checks.prime(prime)
    rng = np.random.default_rng(_checks.seed(seed))
    n_inputs = None if n_inputs is None else _checks.size(n_inputs, "n_inputs")
    if not target.polynomial:
        return _ball_certify(target, params, p, rng, n_inputs)
    if params is None:
        point = [rng.integers(0, p, size=s).astype(np.float64) for s in target.shapes]
    else:
        point = [
            _modp.as_residues(x, p, f"params[{i}]")
            for i, x in enumerate(_check_params(target, params, exact=True))
        ]
    lower, upper, used = _certify(target, point, p, rng, n_inputs)
    return ExactRank(int(lower), int(upper), target.n_params, p, int(used))
