"""Dimension formulas, their hypotheses, and the computed dimensions (:doc:`/book/04_dimension`).

The dimension of the neuromanifold is the generic rank of the Jacobian of ``W ↦ φ_W``
(:func:`exact_dimension`, :func:`float_dimension`). The closed formulas:

* one layer [HMK25, as reported]: ``2ad + dd' − a² − 1`` if ``a ≤ d``, else ``d² + dd' − 1``;
* equal widths ``δ`` with one attention dimension ``a`` in every layer (the configuration of
  the paper's Figure 3 and of the authors' script): ``δ² + l·a(2δ − a) − l``; the book's
  per-layer form ``δ² + Σ_i a_i (2δ − a_i) − l`` holds unless some ``a_i = 1`` is followed by a
  later ``a_j ≥ 2`` (certified on grids);
* general widths (the book's, certified on grids; :doc:`/book/notes/general_widths`): with
  ``r_i = min(a_i, d_{i-1})``,
  ``d_l d_{l-1} + Σ_{i<l} d_i (d_{i-1} − d_i) + Σ_i r_i (2 d_{i-1} − r_i) − l``;

plus ``l`` with a normalizer (one softmax layer as reported; for the paper's configurations the
formula plus ``l`` gives the "Expected" values of the paper's Eq. 16). :func:`expected_dimension`
refuses architectures outside the formulas' hypotheses (:func:`failed_hypotheses`); where the
general formula over-counts, :func:`extra_fiber_directions` writes down the fiber directions
beyond the three symmetries.
"""

from __future__ import annotations

from . import _fibers
from ._computed import dimension_table, exact_dimension, float_dimension
from ._fibers import FiberBounds as FiberBounds  # what needed_fiber_families returns
from ._fibers import extra_fiber_directions, needed_fiber_families
from ._formulas import expected_dimension, failed_hypotheses, general_width_formula, seen_dimension

__all__ = [
    "general_width_formula",
    "seen_dimension",
    "failed_hypotheses",
    "expected_dimension",
    "FIBER_FAMILIES",
    "extra_fiber_directions",
    "needed_fiber_families",
    "exact_dimension",
    "float_dimension",
    "dimension_table",
]

#: The families of :func:`extra_fiber_directions`, in the order of its rows
#: (:doc:`/book/notes/widening`).
FIBER_FAMILIES: tuple[str, ...] = _fibers.FIBER_FAMILIES
