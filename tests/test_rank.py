"""Tests of the rank engine (lsa_lib.rank): float readings, Jacobians, exact certificates."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lsa_lib import _modp
from lsa_lib.dimension import exact_dimension, float_dimension
from lsa_lib.fibers import attention_value_parametrization
from lsa_lib.lightning import parameter_count, random_layers
from lsa_lib.rank import (
    ExactRank,
    FloatRank,
    Parametrization,
    RankAmbiguityError,
    _exact_jacobian,
    _generator_matrix,
    _orbit_rank,
    _read,
    exact_rank,
    float_jacobian,
    float_rank,
)
from lsa_lib.symmetries import network_parametrization
from lsa_lib.tolerances import GAP_MIN

P_PRIME = _modp.DEFAULT_PRIME


def single_layer_dimension(d: int, d_out: int, a: int) -> int:
    """The paper's single-layer formula, written out independently of lsa_lib.dimension."""
    return 2 * a * d + d * d_out - a * a - 1 if a <= d else d * d + d * d_out - 1


# ------------------------------------------------------------------------------------------
# reading a rank at the largest gap
# ------------------------------------------------------------------------------------------
def test_read_largest_gap() -> None:
    r = _read(np.array([3.0, 2.0, 1.0, 1e-9, 1e-10]), (5, 5), "float64", GAP_MIN, True)
    assert r.rank == 3 and r.trusted and r.nullity == 2 and str(r) == "3"
    assert r.gap == pytest.approx(1e9)
    # the runner-up is the last value against the round-off floor s_1 · 5 · eps
    assert r.runner_up == pytest.approx(1e-10 / (3.0 * 5 * np.finfo(float).eps))
    assert r.floor == pytest.approx(3.0 * 5 * np.finfo(float).eps)
    assert r.threshold_rank == 5  # both tiny values are above the fixed tolerance


def test_read_ambiguous_raises_or_returns_untrusted() -> None:
    s = np.logspace(0, -12, 13)  # every drop a factor 10, the last ~350 above round-off
    with pytest.raises(RankAmbiguityError) as info:
        _read(s, (13, 13), "float64", GAP_MIN, True)
    assert info.value.reading.gap < GAP_MIN and not info.value.reading.trusted
    loose = _read(s, (13, 13), "float64", GAP_MIN, False)
    assert not loose.trusted and str(loose).endswith("?")


def test_read_zero_and_bad_values() -> None:
    z = _read(np.zeros(3), (3, 4), "float64", GAP_MIN, True)
    assert (z.rank, z.gap, z.floor, z.threshold_rank) == (0, np.inf, 0.0, 0)
    with pytest.raises(ValueError):
        _read(np.ones(2), (3, 4), "float64", GAP_MIN, True)
    with pytest.raises(ValueError):
        _read(np.array([1.0, -1.0, 0.0]), (3, 4), "float64", GAP_MIN, True)


def test_float32_readings_use_float32_round_off() -> None:
    # s = (1, 1e-3, 1e-9): against float64's floor the last value is genuine (rank 3), against
    # float32's floor 3 · 1.2e-7 it is noise, and the largest drop is after the second value
    M = np.diag([1.0, 1e-3, 1e-9])
    r64, r32 = float_rank(M), float_rank(M, dtype="float32", strict=False)
    assert (r64.rank, r64.dtype) == (3, "float64") and r64.gap > 1e6
    assert (r32.rank, r32.dtype) == (2, "float32")
    assert r32.gap == pytest.approx(1e-3 / (3 * np.finfo(np.float32).eps), rel=1e-5)
    assert r32.threshold_rank == 2 and r64.threshold_rank == 3
    with pytest.raises(RankAmbiguityError):
        float_rank(M, dtype="float32")  # that drop (2.8e3) is below the threshold 1e4


def test_float_rank_of_matrices() -> None:
    rng = np.random.default_rng(0)
    M = rng.standard_normal((20, 3)) @ rng.standard_normal((3, 15))
    r = float_rank(M)
    assert isinstance(r, FloatRank) and r.rank == 3 and r.n_inputs is None and r.n_params == 15
    assert float_rank(torch.from_numpy(M)).rank == 3
    assert float_rank(sympy.Matrix([[1, 2], [2, 4]])).rank == 1
    with pytest.raises(ValueError):
        float_rank(np.ones(3))
    with pytest.raises(TypeError, match="Parametrization"):
        float_rank(M, n_inputs=3)


def test_exact_rank_of_matrices_is_the_rank_over_the_rationals() -> None:
    # [[1, 1], [1, 8]] has rank 2 over Q (1 mod 7): the matrix rank is over the rationals
    assert exact_rank(np.array([[1, 1], [1, 8]])).rank == 2
    R = sympy.Matrix([[sympy.Rational(1, 3), 1], [1, 3]])
    r = exact_rank(R)
    assert isinstance(r, ExactRank) and r.certified and r.rank == 1 and r.prime is None
    assert exact_rank(np.zeros((2, 3), dtype=int)).rank == 0
    with pytest.raises(ValueError, match="integer or rational"):
        exact_rank(np.array([[0.5]]))
    with pytest.raises(ValueError):
        exact_rank(np.zeros((0, 2), dtype=int))
    with pytest.raises(TypeError, match="Parametrization"):
        exact_rank(np.eye(2, dtype=int), params=[np.eye(2)])


# ------------------------------------------------------------------------------------------
# Jacobians
# ------------------------------------------------------------------------------------------
def test_dual_numbers_match_the_integer_jacobian() -> None:
    """Tangents mod p equal the exact integer Jacobian (small integers: float64 is exact)."""
    param = network_parametrization((3, 2, 2), (2, 1), t=2)
    rng = np.random.default_rng(3)
    point = [rng.integers(-2, 3, size=s) for s in param.shapes]
    X = rng.integers(-2, 3, size=(2, 3, 2))
    J = float_jacobian(param, point, X)
    assert np.abs(J).max() < 2**50
    p = P_PRIME
    res = [_modp.as_residues(x, p) for x in point]
    got = _exact_jacobian(param, res, _modp.as_residues(X, p), None, p)
    assert np.array_equal(got, np.mod(np.round(J), p))


def test_float_jacobian_modes_and_precisions_agree() -> None:
    param = network_parametrization((3, 2), (2,), normalizer="exp")
    rng = np.random.default_rng(0)
    point = [rng.standard_normal(s) for s in param.shapes]
    X = rng.standard_normal((4, 3, 3))
    J1 = float_jacobian(param, point, X, mode="forward")
    J2 = float_jacobian(param, point, X, mode="reverse", chunk=1)
    assert J1.shape == (4 * 2 * 3, param.n_params) and J1.dtype == np.float64
    assert np.allclose(J1, J2, atol=1e-12)
    J32 = float_jacobian(param, point, X, dtype=torch.float32)
    assert J32.dtype == np.float32 and np.allclose(J32, J1, atol=1e-4)
    with pytest.raises(ValueError, match="mode"):
        float_jacobian(param, point, X, mode="sideways")
    with pytest.raises(ValueError, match="X must have shape"):
        float_jacobian(param, point, X[:, :2])


# ------------------------------------------------------------------------------------------
# hand-computed dimensions
# ------------------------------------------------------------------------------------------
def test_single_layer_d2_a2_is_7() -> None:
    cert = exact_dimension((2, 2), (2,))
    assert isinstance(cert, ExactRank)
    assert (cert.lower, cert.upper, cert.n_params, cert.prime) == (7, 7, 12, P_PRIME)
    assert cert.certified and cert.rank == 7 and cert.nullity == 5 and str(cert) == "7"
    num = float_dimension((2, 2), (2,))
    assert isinstance(num, FloatRank)
    assert num.rank == 7 and num.gap >= GAP_MIN and num.n_params == 12 and num.trusted


def test_the_float_engine_stops_when_a_new_batch_adds_nothing() -> None:
    # (2, 2), a = 2: P = 12, 6 outputs per input, so it starts with ⌈1.2 · 12 / 6⌉ + 2 = 5
    # inputs (rank 7), doubles once to 10 (rank 7 again) and stops there
    assert float_dimension((2, 2), (2,)).n_inputs == 10
    # Figure 3 at δ = 10: 14 inputs (420 rows) give a rank below 172, however clean its gap;
    # the engine goes on to 28 and 56 inputs, where two readings of 172 agree
    few = float_dimension((10, 10, 10), (2, 2), normalizer="exp", n_inputs=14, strict=False)
    assert few.rank < 172
    auto = float_dimension((10, 10, 10), (2, 2), normalizer="exp")
    assert auto.rank == 172 and auto.n_inputs == 56 and auto.trusted


def test_the_float_engine_gives_up_on_ill_conditioned_jacobians() -> None:
    # l = 4 lightning: float64 cannot read the rank; the engine stops adding inputs after
    # two ambiguous readings past 2P rows instead of going on to 16P
    param = network_parametrization((3,) * 5, (2,) * 4)
    r = float_rank(param, strict=False)
    assert not r.trusted and r.shape[0] < 16 * param.n_params
    assert exact_dimension((3,) * 5, (2,) * 4).rank == 9 + 4 * 8 - 4


@pytest.mark.parametrize(
    "d, d_out, a, t",
    [(2, 1, 1, 2), (3, 2, 2, 2), (3, 3, 3, 3), (2, 3, 3, 2), (2, 2, 4, 3), (4, 2, 1, 3)],
)
def test_single_layer_formula(d: int, d_out: int, a: int, t: int) -> None:
    cert = exact_dimension((d, d_out), (a,), t)
    assert cert.certified and cert.rank == single_layer_dimension(d, d_out, a)
    assert float_dimension((d, d_out), (a,), t).rank == cert.rank


def test_attention_value_coordinates_give_the_same_dimension() -> None:
    param = attention_value_parametrization(3, 2)
    assert param.n_params == 9 + 6
    cert = exact_rank(param)
    assert cert.certified and cert.rank == single_layer_dimension(3, 2, 3)
    assert float_rank(param).rank == cert.rank


def test_deep_equal_widths_formula_lightning_and_softmax() -> None:
    # δ² + Σ a_i (2δ − a_i) − l for lightning, + l for softmax (δ = 4, l = 2, a = 2)
    expected = 16 + 2 * 2 * (8 - 2) - 2
    cert = exact_dimension((4, 4, 4), (2, 2))
    assert cert.certified and cert.rank == expected
    assert float_dimension((4, 4, 4), (2, 2)).rank == expected
    assert float_dimension((4, 4, 4), (2, 2), 3, "exp").rank == expected + 2


def test_inputs_are_added_until_the_rank_saturates() -> None:
    # one input's Jacobian block has rank far below its 3·8 outputs once a few inputs are
    # seen, so the first guess (rows ≈ 1.1 k) is not enough: both engines add inputs
    expected = 64 + 4 * 8 * (16 - 8) - 4  # δ² + Σ a_i (2δ − a_i) − l, δ = a_i = 8, l = 4
    cert = exact_dimension((8,) * 5, (8,) * 4)
    assert cert.certified and cert.rank == expected
    assert cert.n_inputs * 8 * 3 > 2 * expected
    num = float_dimension((8, 8, 8), (8, 8))
    assert num.rank == 64 + 2 * 64 - 2 and num.gap >= GAP_MIN
    soft = float_dimension((6, 6, 6), (2, 2), 3, "exp")
    assert soft.rank == 36 + 2 * 2 * 10  # the conjectured softmax dimension, δ = 6


def test_bounds_that_do_not_meet_are_reported() -> None:
    # an a_i = 1 layer before later layers: the symmetries do not explain the whole fiber
    cert = exact_dimension((5, 3, 3, 4), (1, 2, 2))
    assert cert.lower == 36 and cert.upper == 40 and not cert.certified and str(cert) == "36..40"
    with pytest.raises(ValueError, match="do not meet"):
        _ = cert.rank


def test_exact_rank_at_a_given_singular_point() -> None:
    # (A, V) = (0, I): the differential is δA ↦ V X Xᵀ δA X, of rank d² = 4
    param = attention_value_parametrization(2, 2)
    cert = exact_rank(param, [np.zeros((2, 2), dtype=int), np.eye(2, dtype=int)])
    assert cert.lower == 4
    assert cert.upper == 7  # only the scaling tangent (0, -V) is known to be in the kernel


def test_given_points() -> None:
    layers = random_layers((3, 3, 2), (2, 2), rng=5)
    param = network_parametrization((3, 3, 2), (2, 2))
    blocks = [m for layer in layers for m in layer]
    assert float_rank(param, blocks).rank == float_rank(param).rank
    ints = [np.round(3 * m).astype(int) for m in blocks]
    cert = exact_rank(param, ints, n_inputs=30)
    assert cert.lower <= cert.upper <= param.n_params and cert.n_inputs == 30
    torch_blocks = [torch.from_numpy(m) for m in blocks]
    assert float_rank(param, torch_blocks).rank == float_rank(param).rank


# ------------------------------------------------------------------------------------------
# property tests
# ------------------------------------------------------------------------------------------
architectures = st.integers(1, 2).flatmap(
    lambda l: st.tuples(
        st.lists(st.integers(1, 4), min_size=l + 1, max_size=l + 1),
        st.lists(st.integers(1, 3), min_size=l, max_size=l),
        st.integers(2, 3),
    )
)


@settings(max_examples=25)
@given(arch=architectures, seed=st.integers(0, 5))
@example(arch=([2, 2], [2], 3), seed=0)
@example(arch=([4, 4, 4], [3, 3], 3), seed=1)  # a_i < d: the GL_a orbits are the whole fibers
@example(arch=([4, 2, 3], [3, 1], 2), seed=2)  # a hidden width below a_1 and an a_2 = 1 layer
@example(arch=([1, 4], [3], 2), seed=3)  # a > d: the attention matrix is unconstrained
def test_float_reading_lies_between_the_exact_bounds(arch: tuple, seed: int) -> None:
    # on these small networks float64 always reads a rank: a refusal fails the test
    widths, attn, t = arch
    cert = exact_dimension(widths, attn, t, seed=seed)
    assert 0 <= cert.lower <= cert.upper <= parameter_count(widths, attn)
    num = float_dimension(widths, attn, t, seed=seed)
    assert num.trusted and cert.lower <= num.rank <= cert.upper


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------
def test_float_rank_raises_when_no_gap_is_large_enough() -> None:
    with pytest.raises(RankAmbiguityError):
        float_dimension((2, 2), (2,), min_gap=1e30)


@pytest.mark.parametrize(
    "widths, attn",
    [((2, 2, 2), (2,)), ((2,), ()), ((0, 2), (1,)), ((2, 2), (0,)), ((2.5, 2), (1,)), ("22", (1,))],
)
def test_bad_architecture(widths: object, attn: object) -> None:
    with pytest.raises(ValueError):
        exact_dimension(widths, attn)
    with pytest.raises(ValueError):
        float_dimension(widths, attn)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        exact_dimension((2, 2), (1,), 0)
    with pytest.raises(ValueError):
        float_dimension((2, 2), (1,), 1.5)
    with pytest.raises(ValueError):
        float_dimension((2, 2), (1,), n_inputs=0)
    with pytest.raises(ValueError):
        float_dimension((2, 2), (1,), min_gap=1.0)
    with pytest.raises(ValueError):
        float_dimension((2, 2), (1,), weight_scale=0.0)
    with pytest.raises(ValueError):
        exact_dimension((2, 2), (1,), seed=-1)
    param = network_parametrization((2, 2), (1,))
    with pytest.raises(ValueError):
        exact_rank(param, prime=1048575)
    with pytest.raises(ValueError):
        exact_rank(param, [np.ones((1, 2)), np.ones((1, 2))])  # two blocks, not three
    with pytest.raises(ValueError):
        exact_rank(param, [np.ones((2, 1), dtype=int)] * 2 + [np.ones((2, 2), dtype=int)])
    with pytest.raises(ValueError):
        exact_rank(param, [np.full((1, 2), 0.5), np.ones((1, 2)), np.ones((2, 2))])
    with pytest.raises(TypeError):
        exact_rank(param, "not a list")
    softmax = network_parametrization((2, 2), (1,), normalizer="exp")
    with pytest.raises(ValueError, match="finite"):  # a ball needs a finite centre
        exact_rank(softmax, [np.full((1, 2), np.inf), np.ones((1, 2)), np.ones((2, 2))])
    with pytest.raises(ValueError):
        exact_rank(softmax, [np.ones((2, 2))] * 3)
    with pytest.raises(TypeError):
        network_parametrization((2, 2), (1,), normalizer=True)


def test_parametrization_checks() -> None:
    def forward(params, X):
        return params[0] @ X

    param = Parametrization("linear", ((2, 2),), (2, 3), forward)
    assert param.n_params == 4 and param.predicted is None
    assert float_rank(param).rank == 4
    cert = exact_rank(param)
    assert (cert.lower, cert.upper) == (4, 4)
    with pytest.raises(ValueError):
        Parametrization("bad", ((0, 2),), (2, 3), forward)
    with pytest.raises(ValueError):
        Parametrization("bad", (), (2, 3), forward)
    with pytest.raises(ValueError):
        Parametrization("bad", ((2, 2),), (2, 0), forward)
    with pytest.raises(ValueError):
        Parametrization("bad", ((2, 2),), (2, 3, 1), forward)
    with pytest.raises(TypeError):
        Parametrization("bad", ((2, 2),), (2, 3), "not callable")
    with pytest.raises(TypeError):
        Parametrization("bad", ((2, 2),), (2, 3), forward, generators="no")
    detached = Parametrization("detached", ((2, 2),), (2, 3), lambda ps, X: np.ones((2, 2)))
    with pytest.raises(TypeError, match="forward did not return"):
        exact_rank(detached)
    constant = Parametrization("constant", ((2, 2),), (2, 3), lambda ps, X: X * 1)
    assert exact_rank(constant).lower == 0  # no tangent: the Jacobian vanishes
    wrong = Parametrization("wrong", ((2, 2),), (2, 3), forward, lambda params: [[np.ones(3)]])
    with pytest.raises(ValueError, match="expected P = 4"):
        exact_rank(wrong)
    everything = Parametrization(
        "all", ((2, 2),), (2, 3), forward, lambda params: np.eye(4, dtype=np.int64)
    )
    assert exact_rank(everything).upper == 0


@pytest.mark.parametrize(
    "widths, attn",
    [((3, 2), (4,)), ((4, 4, 4), (2, 2)), ((2, 3, 2), (3, 1)), ((3, 3), (1,)), ((3, 1, 2), (2, 2))],
)
def test_orbit_rank_matches_the_dense_rank(widths: tuple, attn: tuple) -> None:
    param = network_parametrization(widths, attn)
    rng = np.random.default_rng(0)
    point = [rng.integers(0, P_PRIME, size=s).astype(np.float64) for s in param.shapes]
    G = _generator_matrix(param, point, P_PRIME)
    assert _orbit_rank(G, param.shapes, P_PRIME) == _modp.rank_mod_p(G, P_PRIME)


def test_generators_with_integers_beyond_int64_stay_exact():
    """Large tangents (int64 beside uint64 entries) are reduced mod p without float rounding.

    At this architecture some fiber directions of the upper bound hold integers above 2**63;
    numpy would promote their blocks to float64 and the certificate would refuse them.
    """
    from lsa_lib.dimension import exact_dimension
    from lsa_lib.rank import _exact_concat

    row = _exact_concat([np.array([-3], dtype=np.int64), np.array([2**63 + 5], dtype=np.uint64)])
    assert row.dtype == object and list(row) == [-3, 2**63 + 5]
    from lsa_lib.dimension import float_dimension

    cert = exact_dimension((1, 6, 6, 6, 6), (4, 3, 5, 1), 1, beyond_symmetries=True)
    assert cert.certified and cert.rank == float_dimension((1, 6, 6, 6, 6), (4, 3, 5, 1), 1).rank
