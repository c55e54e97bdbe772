"""The rank engine: honest float ranks (and, later in this module, certified exact ranks).

Every dimension in the book is the rank of a Jacobian. A float rank is read at the
**largest gap** of the singular values and returned together with that gap; when the gap is
too small to trust, :class:`RankAmbiguityError` is raised instead of a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_MIN_GAP",
    "RankAmbiguityError",
    "RankReading",
    "read_rank",
    "float_rank",
]

#: A float rank is trusted only if the singular values drop by at least this factor there.
DEFAULT_MIN_GAP = 1e4


class RankAmbiguityError(ValueError):
    """Raised when singular values show no gap large enough to read a rank from.

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
