"""An experiment, not part of the library's core: gradient descent on one lightning layer.

Many runs of plain gradient descent from small random weights toward a target function, with
how close each run comes to the singular locus ``rk(A)·rk(V) ≤ 1`` along the way. Exploratory:
the chapter reports what it sees with confidence intervals, and states nothing general.
Explained in :doc:`/book/07_training`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from . import _checks
from .singularities import function_coefficients

__all__ = ["DescentRuns", "descent_runs"]


def _sigma_ratio(M: NDArray[np.float64]) -> NDArray[np.float64]:
    """σ₂/σ₁ over the last two axes (0 for a zero matrix)."""
    s = np.linalg.svd(M, compute_uv=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s[..., 0] > 0, s[..., 1] / s[..., 0], 0.0)


def _wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95 % for ``z = 1.96``)."""
    p, den = successes / n, 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class DescentRuns:
    """Trajectories of many gradient-descent runs toward one target.

    Explained in :doc:`/book/07_training`.

    Attributes
    ----------
    steps : numpy.ndarray, shape=[n_records]
        The recorded step numbers.
    proximity : numpy.ndarray, shape=[n_runs, n_records]
        ``max(σ₂/σ₁ of A, σ₂/σ₁ of V)`` along each run: 0 exactly on the locus
        ``rk(A)·rk(V) ≤ 1``, of order 1 at generic points, unchanged by scaling and swap.
    loss : numpy.ndarray, shape=[n_runs, n_records]
        Relative to the loss of the zero function.
    target_proximity : float
    ratio_A, ratio_V : numpy.ndarray, shape=[n_runs, n_records]
        ``σ₂/σ₁`` of ``A = KᵀQ`` and of ``V`` (``proximity`` is their maximum).
    final_weights : tuple of numpy.ndarray
        ``(Q, K, V)`` at the end, shapes ``[n_runs, d, d]``, ``[n_runs, d, d]``,
        ``[n_runs, d_out, d]``.
    """

    steps: NDArray[np.int64]
    proximity: NDArray[np.float64]
    loss: NDArray[np.float64]
    target_proximity: float
    ratio_A: NDArray[np.float64]
    ratio_V: NDArray[np.float64]
    final_weights: tuple[NDArray[np.float64], ...] = field(repr=False, default=())

    def stats(self, threshold: float = 0.05, fit_loss: float = 1e-3) -> dict[str, Any]:
        """Summary statistics of the runs.

        Parameters
        ----------
        threshold : float
            A point is near the locus when its proximity is below this.
        fit_loss : float
            A run has fitted the target when its relative loss is below this.

        Returns
        -------
        dict
            ``n_runs``; ``end_near`` (runs ending near the locus) with its Wilson 95 % interval
            ``end_near_ci``; ``ever_near``; ``median_first_near_step`` (nan if none);
            ``first_near_loss`` (array, the relative loss of each run that comes near the locus
            at its first recorded step near it, in the order of the runs);
            ``mean_time_near`` (fraction of recorded steps near the locus); ``fitted``;
            ``median_steps_to_fit``; ``unfitted_near`` (not fitted, ending near the locus).
        """
        for name, val in (("threshold", threshold), ("fit_loss", fit_loss)):
            if not 0 < _checks.real(val, name) < 1:
                raise ValueError(f"{name} must be in (0, 1), got {val!r}")
        near, fit = self.proximity < threshold, self.loss < fit_loss
        n, end, ever, fitted = near.shape[0], int(near[:, -1].sum()), near.any(axis=1), fit[:, -1]
        first_index = np.argmax(near[ever], axis=1)
        first = self.steps[first_index]
        to_fit = np.array([self.steps[np.argmax(row)] for row in fit[fitted]])
        return {
            "n_runs": n,
            "end_near": end,
            "end_near_ci": _wilson_interval(end, n),
            "ever_near": int(ever.sum()),
            "median_first_near_step": float(np.median(first)) if first.size else float("nan"),
            "first_near_loss": self.loss[ever][np.arange(first_index.size), first_index],
            "mean_time_near": float(near.mean()),
            "fitted": int(fitted.sum()),
            "median_steps_to_fit": float(np.median(to_fit)) if to_fit.size else float("nan"),
            "unfitted_near": int((near[:, -1] & ~fitted).sum()),
        }


def descent_runs(
    A_target: ArrayLike,
    V_target: ArrayLike,
    *,
    n_runs: int = 64,
    steps: int = 3000,
    lr: float = 0.05,
    init_scale: float = 0.1,
    n_inputs: int = 128,
    t: int = 3,
    record_every: int = 25,
    seed: int = 0,
) -> DescentRuns:
    """Plain gradient descent on one layer ``(Q, K, V)`` (``a = d``) toward a target layer.

    The loss is the mean squared error on ``n_inputs`` fixed standard normal inputs, divided by
    that of the zero function. All runs train together in torch float64, one thread. The output
    is linear in the coefficient tensor ``F`` (:func:`lsa_lib.singularities.function_coefficients`),
    so the loss is a quadratic form in ``F`` with the Gram matrix of the inputs' cubic features,
    computed once: a step costs the same for any ``n_inputs``. Explained in
    :doc:`/book/07_training`.

    Parameters
    ----------
    A_target : array-like, shape=[d, d]
    V_target : array-like, shape=[d_out, d]
    n_runs : int
        Independent initializations, entries normal with std ``init_scale``.
    steps : int
    lr : float
        Step size.
    init_scale : float
    n_inputs, t : int
        The training inputs, shape ``(n_inputs, d, t)`` (``t ≥ 2``).
    record_every : int
    seed : int
        Seeds the inputs and the initializations.

    Returns
    -------
    DescentRuns
    """
    A_t, V_t = _checks.pair(A_target, V_target)
    n_runs, steps = _checks.size(n_runs, "n_runs"), _checks.size(steps, "steps")
    n_inputs, record_every = (
        _checks.size(n_inputs, "n_inputs"),
        _checks.size(record_every, "record_every"),
    )
    t = _checks.tokens(t, minimum=2)
    lr, init_scale = (
        _checks.real(v, n, positive=True) for v, n in ((lr, "lr"), (init_scale, "init_scale"))
    )
    d, d_out = A_t.shape[0], V_t.shape[0]
    if min(d, d_out) < 2:
        raise ValueError(f"the experiment needs d ≥ 2 and d_out ≥ 2, got d = {d}, d_out = {d_out}")
    gen = torch.Generator().manual_seed(_checks.seed(seed))
    dt = torch.float64
    X = torch.randn(n_inputs, d, t, generator=gen, dtype=dt)
    # φ(X)[k, j] = Σ F[k, p, q, r] z_j[p, q, r] with z_j[p, q, r] = (X Xᵀ)[p, q] X[r, j]
    Z = torch.einsum("npq,nrj->njpqr", X @ X.mT, X).reshape(n_inputs * t, d**3)
    G = Z.T @ Z / (n_inputs * t * d_out)

    def coefficients(A: Any, V: Any) -> Any:
        F = function_coefficients(A, V)
        return F.reshape(*F.shape[:-4], d_out, d**3)

    Ft = coefficients(torch.as_tensor(A_t, dtype=dt), torch.as_tensor(V_t, dtype=dt))
    scale = float(torch.einsum("ki,ij,kj->", Ft, G, Ft))
    Q, K, V = (
        (init_scale * torch.randn(n_runs, *s, generator=gen, dtype=dt)).requires_grad_()
        for s in ((d, d), (d, d), (d_out, d))
    )
    record: dict[str, list[Any]] = {"steps": [], "loss": [], "A": [], "V": []}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: extra threads only add contention
    try:
        for step in range(steps + 1):
            D = coefficients(K.mT @ Q, V) - Ft
            per_run = torch.einsum("rki,ij,rkj->r", D, G, D) / scale
            if step % record_every == 0 or step == steps:
                with torch.no_grad():
                    record["steps"].append(step)
                    record["A"].append(_sigma_ratio((K.mT @ Q).numpy()))
                    record["V"].append(_sigma_ratio(V.detach().numpy()))
                    record["loss"].append(per_run.detach().numpy().copy())
            if step == steps:
                break
            gQ, gK, gV = torch.autograd.grad(per_run.sum(), (Q, K, V))
            with torch.no_grad():
                Q -= lr * gQ
                K -= lr * gK
                V -= lr * gV
    finally:
        torch.set_num_threads(threads)
    ratio_A, ratio_V = np.array(record["A"]).T, np.array(record["V"]).T
    return DescentRuns(
        np.array(record["steps"]),
        np.maximum(ratio_A, ratio_V),
        np.array(record["loss"]).T,
        float(max(_sigma_ratio(A_t), _sigma_ratio(V_t))),
        ratio_A,
        ratio_V,
        tuple(M.detach().numpy().copy() for M in (Q, K, V)),
    )
