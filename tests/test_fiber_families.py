"""The fiber directions beyond the three symmetries (``lsa_lib.dimension.extra_fiber_directions``).

Each family must leave the network's output unchanged along a *finite* step, not only to first
order, for lightning and for softmax networks alike where the family is claimed for softmax; a
random direction must change it (so that the check can fail). The certified dimensions that the
families give are pinned on the book's examples.
"""

from __future__ import annotations

import numpy as np
import pytest

from lsa_lib.dimension import exact_dimension, extra_fiber_directions
from lsa_lib.lightning import deep_attention, parameter_count


def integer_layers(widths, attn, rng, low=-3, high=4):
    shapes = [((a, d0), (a, d0), (d1, d0)) for d0, d1, a in zip(widths, widths[1:], attn)]
    return [tuple(rng.integers(low, high, s).astype(np.int64) for s in qkv) for qkv in shapes]


def flat(layers):
    return np.concatenate([np.asarray(M, dtype=np.float64).ravel() for L in layers for M in L])


def unflat(vector, widths, attn):
    out, pos = [], 0
    for d0, d1, a in zip(widths, widths[1:], attn):
        layer = []
        for shape in ((a, d0), (a, d0), (d1, d0)):
            n = shape[0] * shape[1]
            layer.append(vector[pos : pos + n].reshape(shape))
            pos += n
        out.append(tuple(layer))
    return out


def largest_change(widths, attn, layers, D, normalizer, rng, *, scale=0.25, step=0.5):
    """max over the rows of D of |φ(W + step·D̂) − φ(W)| / |φ(W)|, at W = scale · layers."""
    X = rng.standard_normal((7, widths[0], 3))
    W = scale * flat(layers)
    Y = deep_attention(X, unflat(W, widths, attn), normalizer)
    worst = 0.0
    for row in np.asarray(D, dtype=np.float64):
        moved = W + step * row / np.abs(row).max()
        Z = deep_attention(X, unflat(moved, widths, attn), normalizer)
        worst = max(worst, float(np.abs(Z - Y).max() / np.abs(Y).max()))
    return worst


UNREAD = [((5, 4, 1), (2, 1)), ((6, 4, 1), (2, 1)), ((6, 5, 1), (1, 1))]


@pytest.mark.parametrize(("widths", "attn"), UNREAD)
@pytest.mark.parametrize("normalizer", [None, "exp"])
def test_unread_hidden_directions_leave_the_output_unchanged(widths, attn, normalizer):
    rng = np.random.default_rng(7)
    layers = integer_layers(widths, attn, rng)
    D = extra_fiber_directions(layers, 3, normalizer=normalizer)
    assert D.shape[0] > 0 and D.shape[1] == parameter_count(widths, attn)
    assert all(type(v) is int for v in D.ravel())  # exact Python integers
    assert largest_change(widths, attn, layers, D, normalizer, rng) < 1e-12
    # the check can fail: random directions of the same size do change the output
    R = rng.standard_normal(D.shape)
    assert largest_change(widths, attn, layers, R, normalizer, rng) > 1e-3


def test_softmax_drops_the_token_collapse_family():
    """After a layer with a_1 = 1 a softmax network does not collapse its tokens."""
    widths, attn = (5, 3, 3, 4), (1, 2, 2)
    rng = np.random.default_rng(3)
    layers = integer_layers(widths, attn, rng)
    lightning = extra_fiber_directions(layers, 3)
    assert lightning.shape[0] == 4  # Ω ∈ 𝔰𝔬(2) in layers 2 and 3, on Q and on K
    assert extra_fiber_directions(layers, 3, normalizer="exp").shape[0] == 0
    # and the lightning family does move the softmax network (it is no softmax symmetry)
    assert largest_change(widths, attn, layers, lightning, "exp", rng) > 1e-3
    assert largest_change(widths, attn, layers, lightning, None, rng) < 1e-12


@pytest.mark.parametrize(
    ("widths", "attn", "lightning", "softmax"),
    [((5, 4, 1), (2, 1), 28, 30), ((6, 4, 1), (2, 1), 35, 37)],
)
def test_unread_hidden_directions_certify_softmax(widths, attn, lightning, softmax):
    plain = exact_dimension(widths, attn, 3, "exp")
    cert = exact_dimension(widths, attn, 3, "exp", beyond_symmetries=True)
    assert plain.upper > softmax  # the surviving symmetries alone leave a gap
    assert cert.certified and cert.rank == softmax and cert.lower_by == "ball"
    light = exact_dimension(widths, attn, 3, beyond_symmetries=True)
    assert light.certified and light.rank == lightning


def test_extra_fiber_directions_bad_normalizer():
    layers = [(np.ones((1, 2), dtype=int), np.ones((1, 2), dtype=int), np.ones((2, 2), dtype=int))]
    with pytest.raises(ValueError, match="normalizer"):
        extra_fiber_directions(layers, 3, normalizer="tanh")
