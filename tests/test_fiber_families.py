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


# ------------------------------------------------------------ every family, exactly ---

from fractions import Fraction  # noqa: E402

import sympy  # noqa: E402

from lsa_lib.dimension import (  # noqa: E402
    FIBER_FAMILIES,
    needed_fiber_families,
)
from lsa_lib.symbolic import symbolic_difference  # noqa: E402


def moved(layers, row, step):
    out, pos = [], 0
    for layer in layers:
        new = []
        for M in layer:
            new.append(M + step * np.array(row[pos : pos + M.size], dtype=object).reshape(M.shape))
            pos += M.size
        out.append(tuple(new))
    return out


def rational_normalized(X, layers):
    """The normalized network with S(x) = x² + 1, in exact rational arithmetic (written here)."""
    Y = X
    for Q, K, V in layers:
        S = ((K @ Y).T @ (Q @ Y)) ** 2 + 1
        Y = (V @ Y) @ (S / S.sum(axis=0))
    return Y


FAMILY_CASES = [
    ((5, 4, 1), (2, 1), 3, "unread"),
    ((7, 6, 6, 1), (2, 1, 1), 3, "unread"),  # read through two layers
    ((6, 6, 5, 1), (1, 1, 1), 3, "unread"),
    ((2, 3, 2), (2, 1), 3, "unused"),
    ((2, 3, 4, 2), (2, 2, 2), 3, "unused"),  # two widening layers in a row
    ((4, 2, 3, 2), (2, 2, 2), 3, "unused"),  # a widening layer after a narrowing one
    ((2, 5, 4, 1), (2, 1, 1), 3, "unused"),
    ((2, 5, 4, 1), (2, 1, 1), 3, "unread"),
    ((2, 2), (2,), 1, "one token"),
    ((3, 2, 3), (2, 1), 1, "one token"),
]


@pytest.mark.parametrize(("widths", "attn", "t", "family"), FAMILY_CASES)
def test_each_family_is_exact_for_lightning_along_a_symbolic_step(widths, attn, t, family):
    """φ(W + h D) − φ(W) is the zero matrix in the field of rational functions of h."""
    if family == "one token":
        pytest.skip("the one-token family is a symmetry of normalized networks only")
    rng = np.random.default_rng(11)
    layers = integer_layers(widths, attn, rng)
    D = extra_fiber_directions(layers, t, families=(family,))
    assert D.shape[0] > 0
    h = sympy.Symbol("h")
    X = sympy.Matrix(rng.integers(-3, 4, (widths[0], t)))
    exact = [tuple(sympy.Matrix(M) for M in layer) for layer in layers]

    def unchanged(row):
        other = [tuple(sympy.Matrix(M) for M in layer) for layer in moved(layers, row, h)]
        return symbolic_difference(X, exact, other).is_zero_matrix

    assert all(unchanged(row) for row in D)
    assert not unchanged(rng.integers(-2, 3, D.shape[1]).astype(object))  # the check bites


@pytest.mark.parametrize(("widths", "attn", "t", "family"), FAMILY_CASES)
def test_each_normalized_family_is_exact_for_a_rational_normalizer(widths, attn, t, family):
    """With S(x) = x² + 1 the normalized network is rational: equality, not round-off."""
    rng = np.random.default_rng(12)
    layers = integer_layers(widths, attn, rng)
    D = extra_fiber_directions(layers, t, normalizer="square_plus_one", families=(family,))
    assert D.shape[0] > 0
    X = np.vectorize(Fraction, otypes=[object])(rng.integers(-3, 4, (widths[0], t)))
    W = [tuple(M.astype(object) for M in layer) for layer in layers]
    Y = rational_normalized(X, W)
    for row in D:
        for step in (1, -2):
            assert (rational_normalized(X, moved(W, row, step)) == Y).all()
    R = rng.integers(-2, 3, D.shape[1]).astype(object)
    assert not (rational_normalized(X, moved(W, R, 1)) == Y).all()


@pytest.mark.parametrize(("widths", "attn", "t", "family"), FAMILY_CASES)
def test_each_normalized_family_leaves_softmax_unchanged(widths, attn, t, family):
    rng = np.random.default_rng(13)
    layers = integer_layers(widths, attn, rng)
    D = extra_fiber_directions(layers, t, normalizer="exp", families=(family,))
    X = rng.standard_normal((6, widths[0], t))
    W = [tuple(np.asarray(M, dtype=float) / 4 for M in layer) for layer in layers]
    Y = deep_attention(X, W, "exp")
    for row in D.astype(float):
        Z = deep_attention(X, moved(W, row / np.abs(row).max(), 0.5), "exp")
        assert np.abs(Z - Y).max() <= 1e-12 * np.abs(Y).max()


@pytest.mark.parametrize(
    ("widths", "attn", "t", "lightning", "softmax", "needed"),
    [
        ((2, 3, 2), (2, 1), 3, 9, 11, ("unused",)),
        ((2, 3, 4, 2), (2, 2, 2), 3, 13, 16, ("unused",)),
        ((7, 6, 6, 1), (2, 1, 1), 3, 54, 57, ("unread",)),
        ((2, 5, 4, 1), (2, 1, 1), 3, 9, 12, ("unread", "unused")),
        ((2, 2), (2,), 1, 6, 4, None),
    ],
)
def test_the_families_certify(widths, attn, t, lightning, softmax, needed):
    light = exact_dimension(widths, attn, t, beyond_symmetries=True)
    soft = exact_dimension(widths, attn, t, "exp", beyond_symmetries=True)
    assert light.certified and light.rank == lightning
    assert soft.certified and soft.rank == softmax
    # the symmetries alone leave a gap, the families close it
    for model, value in ((None, lightning), ("exp", softmax)):
        bounds = needed_fiber_families(widths, attn, t, model)
        assert bounds.symmetries > value == bounds.families
        # the same bounds at another point: generic, so equal
        assert needed_fiber_families(widths, attn, t, model, seed=5)[:2] == bounds[:2]
        if needed is not None:
            assert bounds.needed == needed


def test_two_widening_layers_need_the_product_of_the_value_matrices():
    """zᵀ V_2 = 0 alone does not close (2, 3, 4, 2): only zᵀ V_2 V_1 = 0 does."""
    widths, attn = (2, 3, 4, 2), (2, 2, 2)
    cert = exact_dimension(widths, attn, 3, beyond_symmetries=True)
    without = exact_dimension(widths, attn, 3, beyond_symmetries=True, families=("unread",))
    assert cert.certified and cert.rank == 13 and without.upper > 13


def test_one_token_softmax_is_the_product_of_the_value_matrices():
    """t = 1: the dimension of V_l ⋯ V_1, matrices of rank at most min d_i."""
    for widths, attn in (((3, 2, 3), (2, 2)), ((2, 3, 2), (1, 3)), ((4, 4), (2,))):
        k, d0, dl = min(widths), widths[0], widths[-1]
        cert = exact_dimension(widths, attn, 1, "exp", beyond_symmetries=True)
        assert cert.certified and cert.rank == k * (d0 + dl - k)


def test_ball_certificates_carry_their_float_reading():
    cert = exact_dimension((3, 3, 3), (2, 2), 3, "exp", beyond_symmetries=True)
    assert cert.lower_by == "ball" and cert.reading is not None
    assert cert.reading.trusted and cert.reading.rank >= cert.lower
    assert cert.reading.n_inputs == cert.n_inputs
    assert exact_dimension((3, 3, 3), (2, 2), 3).reading is None  # mod p: no float reading


def test_families_bad_input():
    layers = [(np.ones((1, 2), dtype=int), np.ones((1, 2), dtype=int), np.ones((2, 2), dtype=int))]
    with pytest.raises(ValueError, match="unknown fiber family 'unrad'"):
        extra_fiber_directions(layers, 3, families=("unrad",))
    with pytest.raises(TypeError, match="families must be a sequence"):
        extra_fiber_directions(layers, 3, families="unread")
    with pytest.raises(ValueError, match="beyond_symmetries=True"):
        exact_dimension((2, 2), (2,), 3, families=("unread",))
    with pytest.raises(ValueError, match="normalizer"):
        needed_fiber_families((2, 2), (2,), 3, "softmax")
    with pytest.raises(ValueError, match="unknown fiber family"):
        exact_dimension((2, 2), (2,), 3, beyond_symmetries=True, families=("widening",))
    with pytest.raises(ValueError):
        needed_fiber_families((2, 0), (2,))
    assert extra_fiber_directions(layers, 3, families=()).shape == (0, 8)
    assert set(FIBER_FAMILIES) == {"collapse", "unread", "unused", "one token"}
