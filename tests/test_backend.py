"""The array protocol of the forward passes (lsa_lib._backend), on every backend it serves.

A forward pass runs on numpy arrays, torch tensors (also under ``torch.func``), the exact dual
numbers modulo a prime and the ball dual numbers; the constants it makes through the protocol
must mean the same in all four. Each test computes one thing on every backend and compares it
with the plain numpy value (the value part of a dual number).
"""

from __future__ import annotations

import flint
import numpy as np
import pytest
import torch
from torch.func import jacrev, vmap

from lsa_lib import _backend, _ball, _modp

P = _modp.DEFAULT_PRIME
RNG = np.random.default_rng(0)
Y = RNG.integers(-5, 6, size=(3, 4)).astype(np.float64)  # small integers: exact everywhere


def _value(x) -> np.ndarray:
    """The value of an array of any backend, as float64 numpy (residues mapped to (−p/2, p/2))."""
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().astype(np.float64)
    if isinstance(x, _modp.ModDual):
        v = x.value.copy()
        v[v > P // 2] -= P
        return v
    if isinstance(x, _ball.BallDual):
        r, c = x.shape
        return np.array([[float(x.value[i, j].mid()) for j in range(c)] for i in range(r)])
    return np.asarray(x, dtype=np.float64)


def _backends(M: np.ndarray) -> dict[str, object]:
    return {
        "numpy": M.copy(),
        "torch": torch.tensor(M),
        "mod p": _modp.ModDual(_modp.as_residues(M, P), None, P),
        "ball": _ball.BallDual(M),
    }


@pytest.mark.parametrize("kind", ["numpy", "torch", "mod p", "ball"])
def test_constants_act_as_their_values(kind: str) -> None:
    like = _backends(Y)[kind]
    c = RNG.integers(-3, 4, size=(2, 3)).astype(np.float64)
    assert np.array_equal(_value(_backend.const(c, like) @ like), c @ Y)
    assert np.array_equal(_value(_backend.ones((2, 3), like) @ like), np.ones((2, 3)) @ Y)
    assert np.array_equal(_value(_backend.eye(3, like) @ like), Y)
    assert np.array_equal(_value(_backend.ones_like(like) * like), Y)
    for j in range(Y.shape[1]):
        kept = np.zeros_like(Y)
        kept[:, j] = Y[:, j]
        assert np.array_equal(_value(like @ _backend.selector(4, j, like)), kept)


@pytest.mark.parametrize("kind", ["numpy", "torch", "mod p", "ball"])
def test_per_column_multiplies_each_column_by_its_map(kind: str) -> None:
    maps = [RNG.integers(-2, 3, size=(2, 3)).astype(np.float64) for _ in range(Y.shape[1])]
    got = _value(_backend.per_column(maps, _backends(Y)[kind]))
    expected = np.stack([maps[j] @ Y[:, j] for j in range(Y.shape[1])], axis=1)
    assert got.shape == (2, 4) and np.array_equal(got, expected)


def test_per_column_is_batched_and_differentiable_under_torch_func() -> None:
    maps = [RNG.standard_normal((2, 3)) for _ in range(4)]
    W = torch.tensor(RNG.standard_normal((3, 3)))
    X = torch.tensor(RNG.standard_normal((5, 3, 4)))

    def f(W, x):
        return _backend.per_column(maps, W @ x).sum()

    grads = vmap(jacrev(f), in_dims=(None, 0))(W, X)
    # d/dW Σ_j Σ_b (M_j W x_j)_b = Σ_j (1ᵀ M_j)ᵀ x_jᵀ
    expected = [sum(np.outer(maps[j].sum(0), x[:, j]) for j in range(4)) for x in X.numpy()]
    assert np.allclose(grads.numpy(), np.stack(expected))


def test_constants_take_the_dtype_of_torch_tensors() -> None:
    like = torch.zeros((2, 2), dtype=torch.float32)
    assert _backend.const(np.eye(2), like).dtype == torch.float32
    assert _backend.ones((1, 2), like).dtype == torch.float32


def test_exact_copies_and_zero_tangents_keep_their_kind() -> None:
    ints = _backend.exact(np.array([[1.0, -2.0], [3.0, 4.0]]))
    assert ints.dtype == object and all(type(v) is int for v in ints.flat)
    big = ints * 10**30  # Python integers: no overflow in generator algebra
    assert big[1, 1] == 4 * 10**30
    floats = _backend.exact(np.array([[0.5, 1.0]]))
    assert all(type(v) is float for v in floats.flat)
    assert _backend.exact(torch.tensor([[2.0]]))[0, 0] == 2
    zeros = _backend.zeros([np.ones((2, 3), dtype=np.int64), ints, torch.ones(1, 2)])
    assert [z.shape for z in zeros] == [(2, 3), (2, 2), (1, 2)]
    assert zeros[0].dtype == np.int64 and zeros[1].dtype == object
    assert all(not z.any() for z in zeros)


def test_object_arrays_stay_exact() -> None:
    like = _backend.exact(np.eye(2))
    assert _backend.const([[1, 2]], like).dtype == object


def test_concat_joins_tokens() -> None:
    a, b = np.ones((2, 1)), np.zeros((2, 2))
    assert _backend.concat([a, b], None).shape == (2, 3)
    t = _backend.concat([torch.tensor(a), torch.tensor(b)], torch.tensor(a))
    assert isinstance(t, torch.Tensor) and t.shape == (2, 3)


def test_ball_constants_are_exact_balls() -> None:
    like = _ball.BallDual(Y)
    c = _backend.const(np.array([[0.1]]), like)
    lifted = _ball.BallDual(c)
    assert lifted.value[0, 0].rad() == 0 and lifted.value[0, 0] == flint.arb(0.1)
