"""Tests of lsa_lib.descent, the gradient-descent experiment."""

from __future__ import annotations

import numpy as np
import pytest

from lsa_lib import descent as D
from lsa_lib.singularities import function_coefficients


def test_sigma_ratio_measures_the_distance_to_rank_one():
    rng = np.random.default_rng(11)
    b, c = rng.standard_normal(2), rng.standard_normal(2)
    assert D._sigma_ratio(np.outer(b, c)) < 1e-12
    assert D._sigma_ratio(np.eye(2)) == 1.0 and D._sigma_ratio(np.zeros((2, 2))) == 0.0
    assert D._sigma_ratio(rng.standard_normal((5, 3, 2))).shape == (5,)


def test_descent_runs_and_stats():
    rng = np.random.default_rng(12)
    A, V = rng.standard_normal((2, 2)) / 2, rng.standard_normal((2, 2)) / 2
    r1 = D.descent_runs(A, V, n_runs=4, steps=200, record_every=50, seed=3)
    r2 = D.descent_runs(A, V, n_runs=4, steps=200, record_every=50, seed=3)
    assert np.array_equal(r1.loss, r2.loss)
    assert r1.loss.shape == r1.proximity.shape == (4, 5)
    assert list(r1.steps) == [0, 50, 100, 150, 200]
    assert (r1.loss[:, -1] < r1.loss[:, 0]).all()
    assert np.allclose(r1.proximity, np.maximum(r1.ratio_A, r1.ratio_V))
    stats = r1.stats()
    assert stats["n_runs"] == 4 and 0 <= stats["end_near"] <= 4
    lo, hi = stats["end_near_ci"]
    assert 0 <= lo <= hi <= 1
    assert stats["fitted"] == int((r1.loss[:, -1] < 1e-3).sum())
    assert stats["ever_near"] == int((r1.proximity < 0.05).any(axis=1).sum())
    # the loss at each run's first step near the locus, against a plain loop over the records
    wide = r1.stats(threshold=0.9)
    expected = []
    for run in range(4):
        for k in range(len(r1.steps)):
            if r1.proximity[run, k] < 0.9:
                expected.append(r1.loss[run, k])
                break
    assert len(expected) == wide["ever_near"] > 0
    assert np.array_equal(wide["first_near_loss"], np.array(expected))
    with pytest.raises(ValueError):
        r1.stats(threshold=2)
    with pytest.raises(ValueError):
        r1.stats(fit_loss=0)
    with pytest.raises(ValueError, match="d_out"):
        D.descent_runs(A, V[:1])
    # the target's proximity is that of the pair, and the loss is relative to the zero function
    assert r1.target_proximity == pytest.approx(max(D._sigma_ratio(A), D._sigma_ratio(V)))
    Ft = function_coefficients(A, V)
    assert np.isfinite(Ft).all() and r1.final_weights[2].shape == (4, 2, 2)
    for bad in ({"n_runs": 0}, {"steps": 1.5}, {"lr": -1.0}, {"t": 1}, {"init_scale": 0}):
        with pytest.raises(ValueError):
            D.descent_runs(A, V, **bad)


def test_wilson_interval():
    lo, hi = D._wilson_interval(0, 48)
    assert lo == 0 and 0.07 < hi < 0.08
    lo, hi = D._wilson_interval(24, 48)
    assert lo < 0.5 < hi and np.isclose(lo + hi, 1)
    lo, hi = D._wilson_interval(48, 48)
    assert hi == pytest.approx(1) and 0.92 < lo < 0.93
