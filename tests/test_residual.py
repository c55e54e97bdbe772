"""Tests of lsa_lib.residual: residual lightning layers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lsa_lib.lightning import attention_layer, deep_attention
from lsa_lib.rank import exact_rank
from lsa_lib.residual import residual_attention, residual_parametrization
from lsa_lib.symmetries import change_attention_basis, pass_through, scale_layers

RNG = np.random.default_rng(20260601)


def _layer(a, d, d_out, rng=RNG):
    return tuple(rng.standard_normal(s) for s in ((a, d), (a, d), (d_out, d)))


def _close(A, B, tol=1e-9):
    A, B = np.asarray(A), np.asarray(B)
    return np.abs(A - B).max() <= tol * max(1.0, np.abs(B).max())


def test_residual_is_identity_plus_layers():
    d, t = 3, 4
    X = RNG.standard_normal((d, t))
    L = [_layer(2, d, d), _layer(1, d, d)]
    Y1 = X + attention_layer(X, *L[0])
    Y2 = Y1 + attention_layer(Y1, *L[1])
    assert _close(residual_attention(X, L), Y2)
    out = residual_attention(torch.tensor(X), L)
    assert isinstance(out, torch.Tensor) and _close(out.numpy(), Y2)


def test_residual_symmetries_survive_and_pass_through_breaks():
    d = 3
    X = RNG.standard_normal((d, 4))
    L = [_layer(2, d, d), _layer(2, d, d)]
    Y = residual_attention(X, L)
    assert _close(residual_attention(X, scale_layers(L, [1.0, -2.5])), Y)
    G = RNG.standard_normal((2, 2))
    assert _close(residual_attention(X, change_attention_basis(L, 1, G)), Y)
    C = np.eye(d) + 0.5 * RNG.standard_normal((d, d))
    assert not _close(residual_attention(X, pass_through(L, 1, C)), Y, tol=1e-3)
    # the same pass-through is a symmetry without skips
    assert _close(deep_attention(X, pass_through(L, 1, C)), deep_attention(X, L))


@pytest.mark.parametrize(("d", "attn", "expected"), [(3, (2, 2), 42 - 10), (2, (1, 2, 2), 32 - 12)])
def test_certified_dimensions(d, attn, expected):
    param = residual_parametrization(d, attn)
    # the prediction counts the fibers of (Q_i, K_i) ↦ A_i and one scaling per layer
    assert param.predicted == param.n_params - sum(a * a + 1 for a in attn) == expected
    c = exact_rank(param)
    assert c.certified and c.rank == expected


def test_bad_inputs():
    X = RNG.standard_normal((3, 4))
    Q, K, Vm = _layer(2, 3, 3)
    with pytest.raises(ValueError, match="V of shape"):
        residual_attention(X, [(Q, K, Vm[:2])])
    with pytest.raises(TypeError, match="list of"):
        residual_attention(X, (Q, K, Vm))
    with pytest.raises(ValueError, match="attn"):
        residual_parametrization(2, ())
    with pytest.raises(ValueError, match="at least 2"):
        residual_parametrization(2, (1,), t=1)
