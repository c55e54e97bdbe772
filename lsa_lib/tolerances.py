"""The named tolerances of the book, and the relative difference they are compared with.

A float rank is read at the largest drop ("gap") of the singular values; the chapters say how
clear a reading is by comparing its gap with these thresholds, and how close two float64 results
are by comparing their relative difference (:func:`rel_diff`) with the round-off levels; a
change of weights that moves the output by more than :data:`NOT_A_SYMMETRY` is not a symmetry.
Why these values: :doc:`/book/04_dimension`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _checks

__all__ = [
    "GAP_MIN",
    "GAP_CLEAR",
    "GAP_WIDE",
    "ROUNDOFF",
    "ROUNDOFF_TIGHT",
    "MAX_CONDITION",
    "NOT_A_SYMMETRY",
    "SAME_RTOL",
    "M212_TOL",
    "rel_diff",
]

#: The float engine reads a rank only where the singular values drop by at least this factor
#: (otherwise it raises :class:`lsa_lib.rank.RankAmbiguityError`); see :doc:`/book/04_dimension`.
GAP_MIN = 1e4

#: A clear reading: a drop a hundred times above :data:`GAP_MIN` (:doc:`/book/06_softmax`).
GAP_CLEAR = 1e6

#: A wide gap, as small well-conditioned float64 Jacobians give (:doc:`/book/02_fibers`).
GAP_WIDE = 1e8

#: Relative differences below this count as float64 round-off (:doc:`/book/03_symmetries`).
ROUNDOFF = 1e-12

#: The round-off level of a few float64 operations on numbers of order one
#: (:doc:`/book/02_fibers`).
ROUNDOFF_TIGHT = 1e-14

#: A float matrix whose 2-norm condition number exceeds this is treated as not invertible
#: (:doc:`/book/03_symmetries`).
MAX_CONDITION = 1e10

#: A change of weights that moves the output by a relative difference above this is not a
#: symmetry: ten orders of magnitude above :data:`ROUNDOFF`, so that no float64 reading falls
#: between the two (:doc:`/book/03_symmetries`).
NOT_A_SYMMETRY = 1e-2

#: Two float64 layers compute the same function when their outputs agree to this relative
#: precision (the default of :func:`lsa_lib.fibers.same_function`; :doc:`/book/02_fibers`).
SAME_RTOL = 1e-9

#: The relative tolerance of the float tests of ``M_{2,1,2}`` (:func:`lsa_lib.m212.m212_contains`;
#: :doc:`/book/05_singularities`).
M212_TOL = 1e-9


def rel_diff(Y: ArrayLike, Z: ArrayLike) -> float:
    """The relative difference ``‖Y − Z‖ / ‖Z‖`` (Frobenius norms; ``Z`` is the reference).

    Explained in :doc:`/book/03_symmetries`.

    Parameters
    ----------
    Y, Z : array-like or torch.Tensor, same shape

    Returns
    -------
    float
        0 when both vanish.

    Raises
    ------
    ValueError
        If the shapes differ, or ``Z`` vanishes and ``Y`` does not.
    """
    Y, Z = (_checks.array(M, n, min_ndim=0) for M, n in ((Y, "Y"), (Z, "Z")))
    Y, Z = (_numpy(M) for M in (Y, Z))
    if Y.shape != Z.shape:
        raise ValueError(f"Y and Z must have the same shape, got {Y.shape} and {Z.shape}")
    scale = max(float(np.abs(Y).max()), float(np.abs(Z).max()))
    if scale == 0:
        return 0.0
    diff, ref = float(np.linalg.norm((Y - Z) / scale)), float(np.linalg.norm(Z / scale))
    if ref == 0:
        raise ValueError("the reference Z vanishes: no relative difference")
    return diff / ref


def _numpy(M: Any) -> np.ndarray:
    return M.detach().cpu().numpy() if _checks.is_torch(M) else M
