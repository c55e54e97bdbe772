"""Tests of exact arithmetic modulo a prime (lsa_lib._modp), the exact engine's arithmetic."""

from __future__ import annotations

import flint
import numpy as np
import pytest

from lsa_lib import _modp

P_PRIME = _modp.DEFAULT_PRIME


def _exact_mod(x: np.ndarray, p: int) -> np.ndarray:
    return np.array([int(v) % p for v in x.astype(np.int64)], dtype=np.float64)


def test_reduce_near_multiples_of_p() -> None:
    p = P_PRIME
    q = np.array([0, 1, 2**20, 2**32, 2**33 - 1], dtype=np.float64)
    x = np.concatenate([q * p + e for e in (-1.0, 0.0, 1.0, p - 1.0)])
    x = x[(x >= 0) & (x < 2**53)]
    assert np.array_equal(_modp.reduce(x.copy(), p), _exact_mod(x, p))


@pytest.mark.parametrize(
    ("p", "e", "correction"),
    [(1048571, 0.0, "subtract"), (1000003, -1.0, "add")],
)
def test_reduce_corrects_both_off_by_one_quotients(p: int, e: float, correction: str) -> None:
    # x = q p + e near 2^53: floor(x · (1/p)) is one too large (x − q p < 0, p added back) or
    # one too small (x − q p ≥ p, p subtracted); the inputs are chosen so that each happens
    q = np.random.default_rng(0).integers(1, (2**53 - 1) // p, size=50_000).astype(np.float64)
    x = q * p + e
    x = x[(x >= 0) & (x < 2**53)]
    raw = x - np.floor(x * (1.0 / p)) * p  # the residue before the corrections
    wrong = raw < 0 if correction == "add" else raw >= p
    assert wrong.sum() > 100  # the test exercises the correction
    assert x.size < 1 << 16  # the numpy path (large arrays go through torch.remainder)
    assert np.array_equal(_modp.reduce(x.copy(), p), _exact_mod(x, p))


def test_reduce_large_and_strided_arrays() -> None:
    p = P_PRIME
    rng = np.random.default_rng(2)
    q = rng.integers(0, 2**33, size=50_000)
    x = np.concatenate([q * p + e for e in (-1, 0, 1, p - 1)]).astype(np.float64)
    x = np.concatenate([x, -x[:1000]])
    assert np.array_equal(_modp.reduce(x.copy(), p), _exact_mod(x, p))
    y = np.stack([x, x])  # a strided (non-contiguous) view, reduced in place
    view = y[:, ::2]
    _modp.reduce(view, p)
    assert np.array_equal(y[0, ::2], _exact_mod(x, p)[::2]) and np.array_equal(y[0, 1::2], x[1::2])


def test_mm_exact_with_long_inner_dimension() -> None:
    p = P_PRIME
    rng = np.random.default_rng(1)
    n = 3 * _modp.max_inner(p) + 5  # forces chunking
    A = rng.integers(p - 3, p, size=(2, n))
    B = rng.integers(p - 3, p, size=(n, 3))
    exact = (A.astype(object) @ B.astype(object)) % p
    got = _modp.mm(A.astype(np.float64), B.astype(np.float64), p)
    assert np.array_equal(got.astype(np.int64), exact.astype(np.int64))


@pytest.mark.parametrize("r", [5, 3 * _modp.max_inner(P_PRIME) + 11])
def test_dual_product_rule_exact_for_short_and_long_inner_dimensions(r: int) -> None:
    # both factors carry tangents; for long inner dimensions the product-rule sums exceed 2^53
    # and must go through the chunked exact product and a reduction of their sum
    p = P_PRIME
    rng = np.random.default_rng(r)
    a, b = rng.integers(0, p, size=(2, r)), rng.integers(0, p, size=(r, 3))
    ta, tb = rng.integers(0, p, size=(2, r, 2)), rng.integers(0, p, size=(r, 3, 2))
    x = _modp.ModDual(a.astype(np.float64), ta.astype(np.float64), p)
    y = _modp.ModDual(b.astype(np.float64), tb.astype(np.float64), p)
    z = x @ y
    ao, bo, tao, tbo = (m.astype(object) for m in (a, b, ta, tb))
    assert np.array_equal(z.value.astype(np.int64), ((ao @ bo) % p).astype(np.int64))
    for k in range(2):
        exact = (tao[..., k] @ bo + ao @ tbo[..., k]) % p
        assert np.array_equal(z.tangent[..., k].astype(np.int64), exact.astype(np.int64))
    assert z.tangent.max() < p


@pytest.mark.parametrize("seed", range(6))
def test_rank_mod_p_agrees_with_flint(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 90, size=2))
    r = int(rng.integers(0, min(m, n) + 1))
    M = rng.integers(0, 7, size=(m, r)) @ rng.integers(0, 7, size=(r, n))
    if seed % 2:
        M[:, int(rng.integers(0, n))] = 0
        M[int(rng.integers(0, m))] = M[0] * 3
    expected = flint.nmod_mat(m, n, [int(v) for v in M.ravel()], P_PRIME).rank()
    assert _modp.rank_mod_p(M, P_PRIME) == expected


def test_rank_mod_p_of_large_matrices_agrees_with_flint() -> None:
    # wide enough for the recursive elimination (block triangular inverses, r > 96)
    rng = np.random.default_rng(7)
    M = rng.integers(0, P_PRIME, size=(260, 150)) @ rng.integers(0, P_PRIME, size=(150, 300))
    M = M % P_PRIME
    expected = flint.nmod_mat(260, 300, [int(v) for v in M.ravel()], P_PRIME).rank()
    assert _modp.rank_mod_p(M, P_PRIME) == expected == 150


def test_rank_mod_p_sees_the_prime() -> None:
    # [[1, 1], [1, 1 + 7]] has rank 2 over Q but rank 1 mod 7
    M = np.array([[1, 1], [1, 8]])
    assert _modp.rank_mod_p(M, 7) == 1
    assert _modp.rank_mod_p(M, P_PRIME) == 2
    assert _modp.rank_mod_p(np.zeros((0, 3), dtype=int), 7) == 0


def test_residues_of_exact_integers() -> None:
    big = np.array([[2**80, -3], [7, 0]], dtype=object)
    assert np.array_equal(_modp.as_residues(big, 7), np.array([[4.0, 4.0], [0.0, 0.0]]))
    assert np.array_equal(_modp.as_residues(np.array([-1, 8]), 7), np.array([6.0, 1.0]))
    assert np.array_equal(_modp.as_residues(np.array([-8.0, 3.0]), 7), np.array([6.0, 3.0]))
    assert np.array_equal(_modp.as_residues(np.array([-1.0, 8.0]), 7), np.array([6.0, 1.0]))
    assert np.array_equal(_modp.as_residues(np.array([-1e12]), 7), np.array([1e12 % 7 * -1 % 7]))
    with pytest.raises(ValueError):
        _modp.as_residues(np.array([0.5], dtype=object), 7)
    with pytest.raises(ValueError):
        _modp.as_residues(np.array([0.5]), 7)
    with pytest.raises(ValueError):
        _modp.as_residues(np.array([2.0**60]), 7)
    with pytest.raises(TypeError):
        _modp.as_residues(np.array(["a"]), 7)
    with pytest.raises(TypeError):
        _modp.as_residues(np.array([1j]), 7)


def test_rank_mod_p_bad_input() -> None:
    with pytest.raises(ValueError):
        _modp.rank_mod_p(np.array([[0.5, 1.0]]), P_PRIME)
    with pytest.raises(ValueError):
        _modp.rank_mod_p(np.zeros((2, 2, 2), dtype=int), P_PRIME)


def test_dual_elementwise_and_subtraction() -> None:
    p = 101
    # value shape (1, 2), two tangent directions (last axis): the two unit vectors
    a = _modp.ModDual(np.array([[3.0, 4.0]]), np.eye(2)[None], p)
    y = a * a - 2 * a + np.array([[1, 1]])  # (a - 1)²: derivative 2(a - 1)
    assert np.array_equal(y.value, np.array([[4.0, 9.0]]))
    assert np.array_equal(y.tangent[..., 0], np.array([[4.0, 0.0]]))
    assert np.array_equal(y.tangent[..., 1], np.array([[0.0, 6.0]]))
    w = (a.mT @ a).reshape(4)  # the outer product, flattened
    assert np.array_equal(w.value, np.array([9.0, 12.0, 12.0, 16.0]))
    assert np.array_equal(w.tangent[:, 0], np.array([6.0, 4.0, 4.0, 0.0]))
    z = -a
    assert np.array_equal(z.value, np.array([[98.0, 97.0]]))
    assert np.array_equal((1 - a).value, np.array([[99.0, 98.0]]))
    assert np.array_equal((np.array([[1.0, 0.0]]) @ a.mT).value, np.array([[3.0]]))
    assert a.shape == (1, 2) and a.ndim == 2 and "tangents=2" in repr(a)
    with pytest.raises(TypeError):
        a * 0.5
    with pytest.raises(ValueError, match="different primes"):
        a + _modp.ModDual(np.zeros((1, 2)), None, 7)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_a_multiple_of_p_is_the_residue_zero(dtype) -> None:
    """``p`` itself is not a residue: the "already residues" shortcut stops below ``p``."""
    p = P_PRIME
    assert _modp.as_residues(np.array([[p]], dtype=dtype), p).tolist() == [[0.0]]
    assert _modp.rank_mod_p(np.array([[p]], dtype=dtype), p) == 0
    assert _modp.rank_mod_p(np.array([[p, 1], [1, p]], dtype=dtype), p) == 2  # [[0, 1], [1, 0]]
    assert _modp.rank_mod_p(np.array([[p - 1, 0], [0, 2 * p]], dtype=dtype), p) == 1


def test_triangular_inverse_by_blocks() -> None:
    """Large unit lower-triangular matrices are inverted by the block formula (r > 96)."""
    p = P_PRIME
    rng = np.random.default_rng(7)
    for r in (97, 200, 300):
        N = np.tril(rng.integers(0, p, size=(r, r)), -1).astype(np.float64)
        Xinv = _modp._tri_inv(N, p)
        L = N + np.eye(r)
        assert np.array_equal(_modp.mm(L, Xinv, p), np.eye(r)), r
    # and through the rank: a product of triangular factors with known rank
    A = rng.integers(0, p, size=(400, 150)).astype(np.float64)
    B = rng.integers(0, p, size=(150, 300)).astype(np.float64)
    assert _modp.rank_mod_p(_modp.mm(A, B, p), p) == 150
