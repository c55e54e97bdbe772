"""Dimension formulas, their hypotheses, and the computed dimensions (:doc:`/book/04_dimension`).

The dimension of the neuromanifold is the generic rank of the Jacobian of ``W ↦ φ_W``
(:func:`exact_dimension`, :func:`float_dimension`). The closed formula of the book is the
general-width formula (:func:`general_width_formula`, :doc:`/book/notes/general_widths`): with
``r_i = min(a_i, d_{i-1})``,
``d_l d_{l-1} + Σ_{i<l} d_i (d_{i-1} − d_i) + Σ_i r_i (2 d_{i-1} − r_i) − l``, plus ``l`` for
softmax networks. It contains the paper's one-layer formula ``2ad + dd' − a² − 1`` (``a ≤ d``)
and its equal-width configuration ``δ² + l·a(2δ − a) − l``. Where it holds is not said here
but in code: its hypotheses are :data:`HYPOTHESES` (checked by :func:`failed_hypotheses`,
applied by :func:`expected_dimension`, which refuses outside them), and the book's rules
(:mod:`lsa_lib.rules`) — among them the correction by :func:`unread_count` where a narrowing
hidden layer is not fully read (:func:`seen_dimension`) — are checked against every certified
case of the atlas and of the sweep. Where the formula over-counts,
:func:`extra_fiber_directions` writes down the fiber directions beyond the three symmetries.
"""

from __future__ import annotations

from . import _fibers, _formulas
from ._computed import dimension_table, exact_dimension, float_dimension
from ._fibers import FiberBounds as FiberBounds  # what needed_fiber_families returns
from ._fibers import extra_fiber_directions, needed_fiber_families
from ._formulas import (
    expected_dimension,
    failed_hypotheses,
    general_width_formula,
    seen_dimension,
    unread_count,
)

__all__ = [
    "general_width_formula",
    "seen_dimension",
    "unread_count",
    "HYPOTHESES",
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

#: The hypotheses of the general-width formula, by name (``"tokens"``, ``"non-increasing"``,
#: ``"no collapse loss"``, ``"fully read"``): clauses with their words and their test on a case
#: ``widths, attn, t``, from which the rules of :mod:`lsa_lib.rules` build their domains
#: (:doc:`/book/04_dimension/counterexamples`, :doc:`/book/notes/general_widths`).
HYPOTHESES = _formulas.HYPOTHESES
