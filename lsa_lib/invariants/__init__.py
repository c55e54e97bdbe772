"""Algebraic invariants of one output coordinate (:doc:`/book/notes/invariants`).

With one output row (``d' = 1``, ``V = vᵀ``) the entry of ``φ(X) = V X Xᵀ A X`` in column
``j`` is a cubic form in the entries ``x_{k,n}`` of ``X``. Alexandr, Duan and Montúfar take its
coefficients, each divided by the number of weight monomials ``v_p A_{qr}`` it is a sum of, as
coordinates ("scaled coefficients"). In the book's tensor ``F``
(:func:`lsa_lib.singularities.function_coefficients`, ``k = 0``) they are:

* for every context column ``n ≠ j``, the coefficient of ``x_{p,n} x_{q,n} x_{r,j}`` (``p ≤ q``)
  is ``F[p, q, r]``: one copy of ``F`` per context column;
* for the target column itself, the coefficient of ``x_{p,j} x_{q,j} x_{r,j}`` is the full
  symmetrization ``Sym(F)[p, q, r]``.

A coordinate is named by its monomial: the sorted triple of its ``(row, column)`` index pairs,
1-based. :func:`scaled_coordinates` maps ``F`` to these coordinates exactly,
:func:`invariant_values` evaluates the invariant families at them, and :func:`variety_counts`
counts the coordinates, the linear relations among them, the dimension of the variety they
fill, and (smallest cases) its degree.
"""

from __future__ import annotations

from ._coordinates import scaled_coordinates
from ._counts import variety_counts
from ._families import invariant_values

__all__ = ["scaled_coordinates", "invariant_values", "variety_counts"]
