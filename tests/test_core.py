"""Tests for lsa_lib._core: shape checks, architectures, parameter vectors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lsa_lib._core import (
    as_array,
    check_architecture,
    check_layer,
    check_layers,
    flatten_layers,
    layer_shapes,
    parameter_count,
    random_layers,
    unflatten_layers,
)

architectures = st.integers(1, 3).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 5), min_size=n + 1, max_size=n + 1),
        st.lists(st.integers(1, 4), min_size=n, max_size=n),
    )
)


def test_check_architecture_returns_int_tuples():
    w, a = check_architecture([3, np.int64(4), 2], (2, 1))
    assert w == (3, 4, 2) and a == (2, 1)
    assert all(type(x) is int for x in w + a)


@pytest.mark.parametrize(
    ("widths", "attn", "match"),
    [
        ((3,), (), "at least"),
        ((3, 4, 2), (2,), "one entry per layer"),
        ((3, 4), (2, 1), "one entry per layer"),
        ((3, 0), (2,), r"widths\[1\] must be a positive integer"),
        ((3, 4), (-1,), r"attn\[0\] must be a positive integer"),
        ((3, 2.5), (1,), "positive integer"),
        ((3, True), (1,), "positive integer"),
        ("34", (1,), "sequence"),
        ((3, 4), 2, "sequence"),
    ],
)
def test_check_architecture_bad(widths, attn, match):
    with pytest.raises(ValueError, match=match):
        check_architecture(widths, attn)


def test_parameter_count_examples():
    assert parameter_count((2, 2), (2,)) == 12  # 2ad + dd' with d = d' = a = 2
    assert parameter_count((4, 3), (2,)) == 2 * 2 * 4 + 3 * 4
    assert parameter_count((5, 3, 3, 4), (1, 2, 2)) == (2 * 5 + 15) + (12 + 9) + (12 + 12)


@settings(max_examples=30, deadline=None)
@given(arch=architectures, seed=st.integers(0, 2**16))
def test_flatten_unflatten_round_trip(arch, seed):
    widths, attn = arch
    layers = random_layers(widths, attn, rng=seed)
    vec = flatten_layers(layers)
    assert vec.shape == (parameter_count(widths, attn),)
    back = unflatten_layers(vec, widths, attn)
    assert len(back) == len(layers)
    for (Q, K, V), (Q2, K2, V2), shapes in zip(
        layers, back, layer_shapes(widths, attn), strict=True
    ):
        assert (Q2.shape, K2.shape, V2.shape) == shapes
        np.testing.assert_array_equal(Q, Q2)
        np.testing.assert_array_equal(K, K2)
        np.testing.assert_array_equal(V, V2)
    np.testing.assert_array_equal(flatten_layers(back), vec)


def test_flatten_order_is_Q1_K1_V1_Q2():
    layers = [
        (np.full((1, 2), 1.0), np.full((1, 2), 2.0), np.full((3, 2), 3.0)),
        (np.full((1, 3), 4.0), np.full((1, 3), 5.0), np.full((1, 3), 6.0)),
    ]
    vec = flatten_layers(layers)
    assert vec.tolist() == [1] * 2 + [2] * 2 + [3] * 6 + [4] * 3 + [5] * 3 + [6] * 3
    # row-major inside each matrix
    Q = np.arange(6.0).reshape(2, 3)
    assert flatten_layers([(Q, Q, Q)])[:6].tolist() == [0, 1, 2, 3, 4, 5]


def test_flatten_unflatten_torch_and_batch():
    layers = [tuple(torch.from_numpy(m) for m in lay) for lay in random_layers((3, 2), (2,), rng=1)]
    vec = flatten_layers(layers)
    assert isinstance(vec, torch.Tensor) and vec.shape == (parameter_count((3, 2), (2,)),)
    back = unflatten_layers(vec, (3, 2), (2,))
    assert torch.equal(back[0][2], layers[0][2])
    batch = torch.stack([vec, 2 * vec])
    Qb = unflatten_layers(batch, (3, 2), (2,))[0][0]
    assert Qb.shape == (2, 2, 3)
    assert torch.equal(Qb[1], 2 * layers[0][0])


def test_unflatten_wrong_length():
    with pytest.raises(ValueError, match=r"length 5.*need 18"):
        unflatten_layers(np.zeros(5), (3, 2), (2,))


def test_random_layers_seeded_and_shaped():
    a = random_layers((4, 3, 2), (2, 1), rng=7)
    b = random_layers((4, 3, 2), (2, 1), rng=np.random.default_rng(7))
    assert [tuple(m.shape for m in lay) for lay in a] == layer_shapes((4, 3, 2), (2, 1))
    for la, lb in zip(a, b, strict=True):
        for ma, mb in zip(la, lb, strict=True):
            np.testing.assert_array_equal(ma, mb)
            assert ma.dtype == np.float64


def test_as_array_conversions_and_errors():
    assert as_array([[1, 2]], "X").dtype == np.float64
    assert as_array(np.array([[True]]), "X").dtype == np.float64
    t = as_array(torch.ones(2, 2, dtype=torch.int64), "X")
    assert t.dtype == torch.float64
    assert as_array([[1.0]], "X", like=torch.ones(1, dtype=torch.float32)).dtype == torch.float32
    with pytest.raises(TypeError, match="X must be numeric"):
        as_array("text", "X")
    with pytest.raises(TypeError, match="real"):
        as_array(torch.ones(2, 2, dtype=torch.bool), "X")
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        as_array(np.ones(3), "X")
    with pytest.raises(ValueError, match="empty size"):
        as_array(np.ones((0, 3)), "X")
    with pytest.raises(ValueError, match="non-finite"):
        as_array(np.array([[np.nan]]), "X")


def test_check_layer_and_layers():
    Q, K, V = random_layers((4, 3), (2,), rng=0)[0]
    out = check_layer(Q, K, V, d=4)
    assert all(isinstance(m, np.ndarray) for m in out)
    with pytest.raises(ValueError, match=r"expects input width 4.*width 5"):
        check_layer(Q, K, V, d=5)
    with pytest.raises(ValueError, match=r"V of layer 2"):
        check_layer(Q, K, V[:, :2], index=2)
    layers = random_layers((4, 3, 2), (2, 2), rng=0)
    assert len(check_layers(layers, d=4)) == 2
    with pytest.raises(ValueError, match="layer 2"):
        check_layers([layers[0], layers[0]])
    with pytest.raises(ValueError, match="non-empty"):
        check_layers([])
    with pytest.raises(TypeError, match="triple"):
        check_layers([(Q, K)])
