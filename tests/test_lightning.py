"""Tests for lsa_lib.lightning: the one forward pass (lightning and normalized layers)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib.lightning import (
    NORMALIZERS,
    attention_layer,
    attention_matrix,
    attention_scores,
    deep_attention,
    flop_count,
    parameter_count,
    random_layers,
)


def lightning_attention(X, Q, K, V, **kw):
    return attention_layer(X, Q, K, V, **kw)


def softmax_attention(X, Q, K, V, **kw):
    return attention_layer(X, Q, K, V, "exp", **kw)


def naive_lightning(X, Q, K, V):
    """Column j = sum_i (K x_i . Q x_j) V x_i, by two loops."""
    d, t = X.shape
    out = np.zeros((V.shape[0], t))
    for j in range(t):
        for i in range(t):
            out[:, j] += float((K @ X[:, i]) @ (Q @ X[:, j])) * (V @ X[:, i])
    return out


def naive_softmax(X, Q, K, V):
    d, t = X.shape
    out = np.zeros((V.shape[0], t))
    for j in range(t):
        scores = np.array([(K @ X[:, i]) @ (Q @ X[:, j]) for i in range(t)])
        w = np.exp(scores - scores.max())
        w /= w.sum()
        for i in range(t):
            out[:, j] += w[i] * (V @ X[:, i])
    return out


def layer(rng, d=4, d_out=3, a=2, t=5):
    X = rng.standard_normal((d, t))
    Q, K = rng.standard_normal((a, d)), rng.standard_normal((a, d))
    V = rng.standard_normal((d_out, d))
    return X, Q, K, V


sizes = st.tuples(*(st.integers(1, 5) for _ in range(4)))


@settings(max_examples=40, deadline=None)
@given(sizes=sizes, seed=st.integers(0, 2**32 - 1))
def test_lightning_matches_naive_loop(sizes, seed):
    d, d_out, a, t = sizes
    X, Q, K, V = layer(np.random.default_rng(seed), d, d_out, a, t)
    expected = naive_lightning(X, Q, K, V)
    for order in ("linear", "quadratic"):
        Y = lightning_attention(X, Q, K, V, order=order)
        assert Y.shape == (d_out, t) and Y.dtype == np.float64
        np.testing.assert_allclose(Y, expected, rtol=1e-10, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(sizes=sizes, seed=st.integers(0, 2**32 - 1))
def test_softmax_matches_naive_loop(sizes, seed):
    d, d_out, a, t = sizes
    X, Q, K, V = layer(np.random.default_rng(seed), d, d_out, a, t)
    np.testing.assert_allclose(
        softmax_attention(X, Q, K, V), naive_softmax(X, Q, K, V), rtol=1e-10, atol=1e-10
    )


def test_softmax_weights_sum_to_one_per_query():
    rng = np.random.default_rng(1)
    d, t = 4, 7
    X = np.vstack([rng.standard_normal((d - 1, t)), np.ones((1, t))])
    Q, K = rng.standard_normal((2, d)), rng.standard_normal((2, d))
    V = np.zeros((1, d))
    V[0, -1] = 1.0
    np.testing.assert_allclose(softmax_attention(X, Q, K, V), np.ones((1, t)))
    # the lightning layer gives the raw column sums of the scores instead
    np.testing.assert_allclose(
        lightning_attention(X, Q, K, V), attention_scores(X, Q, K).sum(axis=0)[None]
    )


def test_softmax_is_stable_for_large_scores():
    rng = np.random.default_rng(2)
    X, Q, K, V = layer(rng)
    Y = softmax_attention(100 * X, Q, K, V)
    assert np.isfinite(Y).all()


@pytest.mark.parametrize("block", [1, 2, 3, 5, 100])
def test_softmax_query_blocks_give_the_same_result(block):
    X, Q, K, V = layer(np.random.default_rng(3), t=7)
    np.testing.assert_allclose(
        softmax_attention(X, Q, K, V, query_block=block), softmax_attention(X, Q, K, V), rtol=1e-13
    )
    Xt, Qt, Kt, Vt = (torch.from_numpy(m) for m in (X, Q, K, V))
    out = softmax_attention(Xt, Qt, Kt, Vt, query_block=block)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), softmax_attention(X, Q, K, V), rtol=1e-13)


def test_attention_scores_and_matrix():
    X, Q, K, V = layer(np.random.default_rng(4))
    S = attention_scores(X, Q, K)
    A = attention_matrix(Q, K)
    assert S.shape == (5, 5) and A.shape == (4, 4)
    np.testing.assert_allclose(S, X.T @ A @ X)
    np.testing.assert_allclose(S[2, 3], (K @ X[:, 2]) @ (Q @ X[:, 3]))
    np.testing.assert_allclose(lightning_attention(X, Q, K, V), V @ X @ X.T @ A @ X)


def test_depends_on_QK_only_through_A():
    rng = np.random.default_rng(5)
    X, Q, K, V = layer(rng)
    G = rng.standard_normal((2, 2)) + 3 * np.eye(2)
    Q2, K2 = G @ Q, np.linalg.inv(G).T @ K
    np.testing.assert_allclose(attention_matrix(Q2, K2), attention_matrix(Q, K), atol=1e-12)
    np.testing.assert_allclose(
        lightning_attention(X, Q2, K2, V), lightning_attention(X, Q, K, V), atol=1e-10
    )
    np.testing.assert_allclose(
        softmax_attention(X, Q2, K2, V), softmax_attention(X, Q, K, V), atol=1e-10
    )


def test_homogeneity_and_trilinearity_numerically():
    rng = np.random.default_rng(6)
    X, Q, K, V = layer(rng)
    Y = lightning_attention(X, Q, K, V)
    np.testing.assert_allclose(lightning_attention(-1.7 * X, Q, K, V), (-1.7) ** 3 * Y, rtol=1e-12)
    Q2 = rng.standard_normal(Q.shape)
    np.testing.assert_allclose(
        lightning_attention(X, 2 * Q + 3 * Q2, K, V),
        2 * Y + 3 * lightning_attention(X, Q2, K, V),
        rtol=1e-10,
        atol=1e-10,
    )


def test_batching_matches_loop():
    rng = np.random.default_rng(7)
    _, Q, K, V = layer(rng)
    Xb = rng.standard_normal((2, 3, 4, 5))
    for fn in (lightning_attention, softmax_attention, attention_scores):
        args = (Q, K) if fn is attention_scores else (Q, K, V)
        out = fn(Xb, *args)
        for i in range(2):
            for j in range(3):
                np.testing.assert_allclose(out[i, j], fn(Xb[i, j], *args), rtol=1e-12)
    assert deep_attention(Xb, [(Q, K, V)]).shape == (2, 3, 3, 5)


def test_torch_and_numpy_agree():
    X, Q, K, V = layer(np.random.default_rng(8))
    T = [torch.from_numpy(m) for m in (X, Q, K, V)]
    for fn in (lightning_attention, softmax_attention):
        out = fn(*T)
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
        np.testing.assert_allclose(out.numpy(), fn(X, Q, K, V), rtol=1e-12, atol=1e-12)
    # mixed inputs become torch; float32 tensors keep float32
    mixed = lightning_attention(T[0], Q, K, V)
    assert isinstance(mixed, torch.Tensor)
    out32 = lightning_attention(*(m.float() for m in T))
    assert out32.dtype == torch.float32
    np.testing.assert_allclose(
        out32.double().numpy(), lightning_attention(X, Q, K, V), rtol=1e-4, atol=1e-4
    )
    A = attention_matrix(T[1], T[2])
    assert isinstance(A, torch.Tensor)


def test_torch_autograd_flows():
    X, Q, K, V = layer(np.random.default_rng(9))
    Qt = torch.from_numpy(Q).requires_grad_()
    lightning_attention(
        torch.from_numpy(X), Qt, torch.from_numpy(K), torch.from_numpy(V)
    ).sum().backward()
    assert Qt.grad is not None and Qt.grad.shape == Q.shape


def test_integer_and_list_inputs_become_float64():
    X = [[1, 2, 3], [0, 1, 0]]
    Q = K = [[1, 0]]
    V = [[1, 1]]
    Y = lightning_attention(X, Q, K, V)
    assert Y.dtype == np.float64
    np.testing.assert_allclose(
        Y,
        naive_lightning(
            np.array(X, float), np.array(Q, float), np.array(K, float), np.array(V, float)
        ),
    )


def test_deep_composition():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((4, 6))
    layers = [
        (rng.standard_normal((2, 4)), rng.standard_normal((2, 4)), rng.standard_normal((3, 4))),
        (rng.standard_normal((1, 3)), rng.standard_normal((1, 3)), rng.standard_normal((2, 3))),
        (rng.standard_normal((2, 2)), rng.standard_normal((2, 2)), rng.standard_normal((5, 2))),
    ]
    Y = X
    Z = X
    for Q, K, V in layers:
        Y = lightning_attention(Y, Q, K, V)
        Z = softmax_attention(Z, Q, K, V)
    np.testing.assert_allclose(deep_attention(X, layers), Y, rtol=1e-12)
    np.testing.assert_allclose(deep_attention(X, layers, "exp"), Z, rtol=1e-12)
    # degree 3^l in X
    np.testing.assert_allclose(deep_attention(2 * X, layers), 2**27 * Y, rtol=1e-10)
    Tl = [tuple(torch.from_numpy(m) for m in lay) for lay in layers]
    np.testing.assert_allclose(deep_attention(torch.from_numpy(X), Tl).numpy(), Y, rtol=1e-12)


# ---------------------------------------------------------------- bad input


@pytest.fixture
def good():
    return layer(np.random.default_rng(11))


@pytest.mark.parametrize("fn", [lightning_attention, softmax_attention])
def test_wrong_ndim(fn, good):
    X, Q, K, V = good
    with pytest.raises(ValueError, match=r"X must have at least 2 dimensions, got shape \(4,\)"):
        fn(X[:, 0], Q, K, V)
    with pytest.raises(ValueError, match=r"Q must be a matrix, got shape \(1, 2, 4\)"):
        fn(X, Q[None], K, V)
    with pytest.raises(ValueError, match=r"V must have at least 2 dimensions, got shape \(4,\)"):
        fn(X, Q, K, V[0])


@pytest.mark.parametrize("fn", [lightning_attention, softmax_attention])
def test_mismatched_shapes_name_the_shapes(fn, good):
    X, Q, K, V = good
    with pytest.raises(ValueError, match=r"d = 4.*shape \(2, 4\).*got X \(3, 5\)"):
        fn(X[:3], Q, K, V)
    with pytest.raises(ValueError, match=r"Q \(2, 4\) and K \(3, 4\)"):
        fn(X, Q, np.vstack([K, K[:1]]), V)
    with pytest.raises(ValueError, match=r"got V \(3, 2\)"):
        fn(X, Q, K, V[:, :2])


def test_mismatched_shapes_other_functions(good):
    X, Q, K, V = good
    with pytest.raises(ValueError, match=r"got X \(3, 5\)"):
        attention_scores(X[:3], Q, K)
    with pytest.raises(ValueError, match=r"Q \(2, 4\) and K \(2, 3\)"):
        attention_matrix(Q, K[:, :3])
    with pytest.raises(ValueError, match=r"got X \(3, 5\)"):
        deep_attention(X[:3], [(Q, K, V)])
    # the second layer expects width 3 (the output of the first), gets a Q of width 4
    with pytest.raises(ValueError, match=r"layer 2"):
        deep_attention(X, [(Q, K, V), (Q, K, V)])


@pytest.mark.parametrize("shape", [(0, 5), (4, 0), (2, 0, 4, 5)])
def test_empty_sizes(good, shape):
    _, Q, K, V = good
    with pytest.raises(ValueError, match="empty size"):
        lightning_attention(np.zeros(shape), Q, K, V)


def test_empty_weights(good):
    X, Q, K, V = good
    with pytest.raises(ValueError, match="empty size"):
        lightning_attention(X, Q[:0], K[:0], V)
    with pytest.raises(ValueError, match="empty size"):
        lightning_attention(X, Q, K, V[:0])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", range(4))
def test_non_finite_entries(good, bad, where):
    args = [m.copy() for m in good]
    args[where][0, 0] = bad
    with pytest.raises(ValueError, match="non-finite"):
        lightning_attention(*args)
    with pytest.raises(ValueError, match="non-finite"):
        softmax_attention(*args)


def test_non_finite_torch(good):
    X, Q, K, V = (torch.from_numpy(m.copy()) for m in good)
    X[1, 1] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        lightning_attention(X, Q, K, V)


@pytest.mark.parametrize("bad", ["abc", [["a", "b"]], np.array([[object()]]), None, {1: 2}])
def test_non_numeric(good, bad):
    _, Q, K, V = good
    with pytest.raises(TypeError, match="X must be"):
        lightning_attention(bad, Q, K, V)


def test_complex_rejected(good):
    X, Q, K, V = good
    with pytest.raises(TypeError, match="real"):
        lightning_attention(X + 1j, Q, K, V)
    with pytest.raises(TypeError, match="real"):
        lightning_attention(torch.from_numpy(X) + 1j, Q, K, V)


def test_bad_options(good):
    X, Q, K, V = good
    with pytest.raises(ValueError, match="order"):
        lightning_attention(X, Q, K, V, order="fast")
    with pytest.raises(ValueError, match="query_block"):
        softmax_attention(X, Q, K, V, query_block=0)
    with pytest.raises(TypeError, match="normalizer"):
        deep_attention(X, [(Q, K, V)], True)
    with pytest.raises(ValueError, match="normalizer"):
        attention_layer(X, Q, K, V, "relu")
    with pytest.raises(ValueError, match="non-empty"):
        deep_attention(X, [])
    with pytest.raises(TypeError, match="triple"):
        deep_attention(X, [(Q, K)])
    with pytest.raises(TypeError, match="wrap one layer"):
        deep_attention(X, (Q, K, V))


# ---------------------------------------------------------------- counts


def test_flop_count_formulas():
    for d, d_out, a in [(1, 1, 1), (4, 3, 2), (64, 64, 16)]:
        for t in (1, 2, 7, 1000):
            assert flop_count(d, d_out, a, t, "linear") == t * (
                d * d_out + 2 * a * d + 2 * a * d_out
            )
            assert flop_count(d, d_out, a, t, "quadratic") == t * (
                d * d_out + 2 * a * d
            ) + t * t * (a + d_out)
    # linear: doubling t doubles the count; quadratic: the second difference is constant
    f = [flop_count(8, 8, 2, t, "quadratic") for t in range(1, 6)]
    assert len({f[i + 2] - 2 * f[i + 1] + f[i] for i in range(3)}) == 1
    assert flop_count(8, 8, 2, 20, "linear") == 2 * flop_count(8, 8, 2, 10, "linear")


@pytest.mark.parametrize("args", [(0, 1, 1, 1), (1, 1, 1, -2), (1.5, 1, 1, 1), (True, 1, 1, 1)])
def test_flop_count_bad_sizes(args):
    with pytest.raises(ValueError, match="positive integer"):
        flop_count(*args, "linear")


def test_flop_count_bad_order():
    with pytest.raises(ValueError, match="order"):
        flop_count(2, 2, 2, 2, "cubic")


# ---------------------------------------------------------------- normalizers


def naive_normalized(X, A, V, S):
    d, t = X.shape
    out = np.zeros((V.shape[0], t))
    for j in range(t):
        w = np.array([S(X[:, i] @ A @ X[:, j]) for i in range(t)])
        out[:, j] = (V @ X) @ (w / w.sum())
    return out


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_every_normalizer_matches_the_naive_loop(name):
    rng = np.random.default_rng(13)
    X, A, V = rng.standard_normal((3, 5)), rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    S = NORMALIZERS[name]
    got = attention_layer(X, A, np.eye(3), V, name)  # (A, V) coordinates: Q = A, K = I
    np.testing.assert_allclose(got, naive_normalized(X, A, V, S.function), rtol=1e-10)
    Xt, At, Vt = (torch.from_numpy(m) for m in (X, A, V))
    out = attention_layer(Xt, At, torch.eye(3, dtype=torch.float64), Vt, name)
    np.testing.assert_allclose(out.numpy(), got, rtol=1e-12)
    # the weights sum to one: a constant first token coordinate comes out unchanged
    X1 = X.copy()
    X1[0] = 1.0
    ones = attention_layer(X1, A, np.eye(3), np.eye(3), name)[0]
    np.testing.assert_allclose(ones, 1.0)


def test_normalizer_table():
    grid = np.linspace(-30, 30, 6001)
    for name, S in NORMALIZERS.items():
        assert S.name == name
        assert (S.function(grid).min() > 0) == S.positive
        if S.homogeneous_degree is not None:
            k = S.homogeneous_degree
            assert np.allclose(S.function(3.0 * grid), 3.0**k * S.function(grid))
    assert NORMALIZERS["exp"].formula == "exp(x)"


def test_random_layers_and_parameter_count():
    a = random_layers((4, 3, 2), (2, 1), rng=7)
    b = random_layers((4, 3, 2), (2, 1), rng=np.random.default_rng(7))
    assert [tuple(m.shape for m in lay) for lay in a] == [
        ((2, 4), (2, 4), (3, 4)),
        ((1, 3), (1, 3), (2, 3)),
    ]
    for la, lb in zip(a, b, strict=True):
        for ma, mb in zip(la, lb, strict=True):
            np.testing.assert_array_equal(ma, mb)
            assert ma.dtype == np.float64
    assert parameter_count((2, 2), (2,)) == 12  # 2ad + dd' with d = d' = a = 2
    assert parameter_count((4, 3), (2,)) == 2 * 2 * 4 + 3 * 4
    assert parameter_count((5, 3, 3, 4), (1, 2, 2)) == (2 * 5 + 15) + (12 + 9) + (12 + 12)
    with pytest.raises(ValueError):
        parameter_count((2,), ())
