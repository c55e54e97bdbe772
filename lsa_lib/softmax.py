"""Normalized attention and its symmetries: the softmax conjecture (:doc:`/book/06_softmax`).

A normalized layer (:func:`lsa_lib.lightning.attention_layer` with a normalizer) keeps two of
the three symmetries of lightning networks, the changes of basis inside and between layers,
and loses the scaling, unless its normalizer is homogeneous. The paper conjectures that deep
softmax networks are generically identifiable in their virtual weights, so that their
dimension is the lightning formula plus the number of layers (Conjecture 3.10 and Eq. 16 of
[HMK25]); the rank engine tests this (:func:`lsa_lib.dimension.float_dimension` with
``normalizer="exp"``, :func:`lsa_lib.dimension.dimension_table`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _checks, _kernel
from .lightning import Layer
from .symmetries import change_attention_basis, output_changes, pass_through, scale_layers

__all__ = ["symmetry_defects"]


def symmetry_defects(
    layers: Sequence[Layer],
    *,
    normalizer: str | None = "exp",
    c: float = 2.0,
    t: int = 3,
    n_inputs: int = 20,
    seed: int = 0,
) -> dict[str, float]:
    """How much each lightning symmetry changes a (normalized) network.

    On ``n_inputs`` seeded standard normal inputs, the relative change of the outputs
    (:func:`lsa_lib.symmetries.output_changes`) under: scaling ``(A_i, V_i) ↦ (c A_i,
    V_i / c)`` in every layer; a random ``G ∈ GL_{a_1}`` in layer 1; ``A_i ↦ c A_i`` alone
    (a symmetry exactly when the normalizer is homogeneous); with two layers or more, a random
    ``C ∈ GL_{d_1}`` passed from layer 1 to layer 2. A layer in ``(A, V)`` coordinates is
    ``(A, I, V)``. Explained in :doc:`/book/06_softmax`.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float weights.
    normalizer : str, optional
        A key of :data:`lsa_lib.lightning.NORMALIZERS`, or None for lightning layers.
    c : float
        The scaling factor (non-zero).
    t, n_inputs, seed : int
        The test inputs; the seed also draws ``G`` and ``C``.

    Returns
    -------
    dict
        ``{"scaling", "attention basis", "scaling A only"[, "between layers"]} → float``.
    """
    S = _kernel.normalizer(normalizer)
    mats = _checks.layers(layers)
    c = _checks.real(c, "c", nonzero=True)
    t, n_inputs = _checks.tokens(t), _checks.size(n_inputs, "n_inputs")
    rng = np.random.default_rng(_checks.seed(seed))
    X = rng.standard_normal((n_inputs, mats[0][0].shape[1], t))
    if not np.any(_kernel.deep(X, mats, S)):
        raise ValueError("the network vanishes on the test inputs (V = 0?): no relative change")
    a1 = mats[0][0].shape[0]
    moved = {
        "scaling": scale_layers(mats, [c] * len(mats)),
        "attention basis": change_attention_basis(
            mats, 1, rng.standard_normal((a1, a1)) + 2 * np.eye(a1)
        ),
        "scaling A only": [(c * Q, K, V) for Q, K, V in mats],
    }
    if len(mats) >= 2:
        d1 = mats[0][2].shape[0]
        moved["between layers"] = pass_through(
            mats, 1, rng.standard_normal((d1, d1)) + 2 * np.eye(d1)
        )
    return output_changes(lambda W: _kernel.deep(X, W, S), mats, moved)
