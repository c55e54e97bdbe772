"""The exact engine's bounds at one integer point (private helper of the rank engine).

For a polynomial map, :func:`lsa_lib.rank.exact_rank` bounds the rank of the Jacobian at an
integer point ``θ`` modulo a prime ``p`` from both sides (:func:`certify`): from above by ``P``
minus the rank of the symmetry tangents at ``θ`` (:func:`generator_matrix`, the upper bound of
the softmax certificate too), from below by the rank of Jacobian rows sampled on random integer
inputs, added in rounds. :func:`outputs_per_input` counts the rows one input gives (both engines
size their samples with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from . import _exact, _generators, _modp

if TYPE_CHECKING:
    from .rank import Parametrization


def outputs_per_input(param: Parametrization) -> int:
    """The number of output coordinates of one input (one forward pass at zero)."""
    ps = [torch.zeros(s, dtype=torch.float64) for s in param.shapes]
    with torch.no_grad():
        y = param.forward(ps, torch.zeros((1, *param.input_shape), dtype=torch.float64))
    return int(np.prod(tuple(y.shape[1:])))


def generator_matrix(param: Parametrization, point: list[np.ndarray], p: int) -> np.ndarray:
    """The symmetry tangents at ``point`` as residues mod ``p``, shape ``(n_generators, P)``."""
    if param.generators is None:
        return np.zeros((0, param.n_params))
    # integer arrays in, so that the generators come back as exact integers
    gens = param.generators([np.asarray(x).astype(np.int64) for x in point])
    return _modp.as_residues(_generators.as_matrix(gens, param.n_params), p, "generators")


def certify(
    param: Parametrization, point: list[np.ndarray], p: int, rng: np.random.Generator, n: Any
) -> tuple[int, int, int]:
    """``(lower, upper, inputs used)`` at ``point``.

    With ``n=None`` inputs are added in rounds until the bounds meet or a round no longer raises
    the rank; each round extrapolates the rank gained per input so far (deep networks gain about
    ``t²`` directions per input once the first few are seen).
    """
    P = param.n_params
    upper = P - _exact.orbit_rank(generator_matrix(param, point, p), param.shapes, p)
    if upper == 0:
        return 0, 0, 0
    C = None if upper == P else rng.integers(0, p, size=(P, upper)).astype(np.float64)

    def rows(m: int) -> np.ndarray:
        X = rng.integers(0, p, size=(m, *param.input_shape)).astype(np.float64)
        return _modp.jacobian(param.forward, param.shapes, param.input_shape, point, X, C, p)

    if n is not None:
        return _modp.rank_mod_p(rows(n), p), upper, n
    n = int(np.ceil(1.1 * upper / outputs_per_input(param))) + 1
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
