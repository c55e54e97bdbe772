"""The named tolerances of the book: one family of singular-value gaps and of round-off levels.

A float rank is read at the largest drop ("gap") of the singular values; the chapters say how
clear a reading is by comparing its gap with these thresholds, and how close two float64 results
are by comparing a relative difference (:func:`lsa_lib.report.rel_diff`) with the round-off
levels. Why these values: :doc:`/book/04_dimension`.
"""

from __future__ import annotations

__all__ = ["GAP_MIN", "GAP_CLEAR", "GAP_WIDE", "ROUNDOFF", "ROUNDOFF_TIGHT", "MAX_CONDITION"]

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
