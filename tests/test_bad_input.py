"""No silent answers: bad or extreme input gets a clear error, never a wrong or non-finite value.

The calls of the code review's bad-input probe that once answered silently wrong, crashed
inside numpy or torch, or gave a message that did not name the problem. Each must now return
the right value, or raise ``ValueError`` / ``TypeError`` naming what was wrong (and, for sizes,
the size and the limit) before anything large is allocated.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lsa_lib import _limits, heads, m212, report, singularities, symbolic, transport
from lsa_lib.dimension import dimension_table, exact_dimension, float_dimension
from lsa_lib.fibers import attention_value_parametrization, fiber_dimension, same_function
from lsa_lib.invariants import variety_counts
from lsa_lib.lightning import attention_layer, deep_attention, parameter_count, random_layers
from lsa_lib.rank import Parametrization, exact_rank, float_jacobian, float_rank
from lsa_lib.symmetries import output_changes, scale_layers
from lsa_lib.tolerances import NOT_A_SYMMETRY, ROUNDOFF, rel_diff

RNG = np.random.default_rng(77)
HUGE = ((10**6, 10**6), (10**6,))


@pytest.mark.parametrize("chunk", [-1, 0, 2.5, True])
def test_float_jacobian_refuses_a_bad_chunk(chunk) -> None:
    par = attention_value_parametrization(2, 1, 2)
    point = [RNG.standard_normal(s) for s in par.shapes]
    X = RNG.standard_normal((4, 2, 2))
    with pytest.raises(ValueError, match="chunk must be a positive integer"):
        float_jacobian(par, point, X, chunk=chunk)
    J = float_jacobian(par, point, X, chunk=1)
    assert np.allclose(J, float_jacobian(par, point, X)) and np.isfinite(J).all()


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1.0, 1e70, 1e80, 1e155, 1e300])
def test_m212_membership_does_not_depend_on_the_scale(scale: float) -> None:
    common = scale * np.array([1.0, 0, 0, 0, 1.0, 0])  # (x², xy): common factor x
    definite = scale * np.array([1.0, 0, 1, 2.0, 0, 2.0])  # proportional definite quadrics
    independent = scale * np.array([1.0, 0, 1, 0, 1, 0])  # (x² + y², xy): no common factor
    assert m212.m212_contains(common) is True
    assert m212.m212_contains(definite) is False
    assert m212.m212_contains(independent) is False
    A, V = m212.m212_preimage(common)
    assert np.isfinite(A).all() and np.isfinite(V).all()
    assert np.allclose(m212.quadric_pair(A, V) / scale, common / scale)


def test_m212_tolerance_is_checked() -> None:
    for tol in ("a", 0, -1e-9, float("nan")):
        with pytest.raises(ValueError, match="tol"):
            m212.m212_contains(np.ones(6), tol=tol)


def test_attention_overflow_is_an_error_naming_the_scores() -> None:
    X = RNG.standard_normal((3, 4))
    Q, K = 1e200 * RNG.standard_normal((2, 2, 3))
    V = RNG.standard_normal((2, 3))
    for normalizer in (None, "exp"):
        with pytest.raises(ValueError, match="scores overflow float64"):
            attention_layer(X, Q, K, V, normalizer)
    Q, K = 1e100 * RNG.standard_normal((2, 2, 3))
    with pytest.raises(ValueError, match="output overflows float64"):
        attention_layer(X, Q, K, 1e250 * V)
    layers = [(Q, K, 1e200 * V) for Q, K, V in random_layers((3, 3, 3), (2, 2), 0)]
    with pytest.raises(ValueError, match="scores of layer 2 overflow"):
        deep_attention(X, layers)


def test_softmax_of_large_finite_scores_is_finite_and_normalized() -> None:
    X = RNG.standard_normal((3, 5))
    Q, K = 30 * RNG.standard_normal((2, 2, 3))  # scores of order 10³: exp overflows unshifted
    V = np.eye(3)
    S = (K @ X).T @ (Q @ X)
    assert np.abs(S).max() > 710  # exp(S) alone would overflow
    E = np.exp(S - S.max(axis=0))  # the reference: shifted by each column's maximum
    expected = X @ (E / E.sum(axis=0))
    for x in (X, torch.tensor(X)):
        Y = attention_layer(x, Q, K, V, "exp")
        Y = Y.numpy() if isinstance(Y, torch.Tensor) else Y
        assert np.isfinite(Y).all() and np.allclose(Y, expected)


def test_square_normalizer_on_a_query_with_zero_scores() -> None:
    X = np.array([[1.0, 0.0], [0.0, 0.0]])
    Q, K = np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]])
    with pytest.raises(ValueError, match="'square' divides by .* = 0"):
        attention_layer(X, Q, K, np.eye(2), "square")
    assert np.isfinite(attention_layer(X, Q, K, np.eye(2), "square_plus_one")).all()


def test_rel_diff_of_huge_finite_arrays() -> None:
    assert np.isclose(rel_diff([1e200, 1e200], [1e200, 2e200]), np.sqrt(1 / 5))
    assert rel_diff(np.zeros(3), np.zeros(3)) == 0.0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: random_layers(*HUGE), "weights .* would need about 21.8 TiB"),
        (lambda: exact_dimension(*HUGE), "P = 3000000000000"),
        (lambda: float_dimension(*HUGE), "would need about"),
        (lambda: float_dimension((300, 300), (300,)), "GiB of memory, more than this machine"),
        (lambda: fiber_dimension(np.eye(1000), np.eye(1000)), "P = 2000000"),
        (lambda: m212.umbrella_slice(n=100_000), "grids of the umbrella slice"),
        (lambda: singularities.coefficient_evaluation_rank(200, 1, 2), "evaluation matrix"),
        (lambda: singularities.coefficient_differential(np.eye(100), np.eye(100)), "differential"),
        (lambda: variety_counts(2, 1, t=10**6), "exact coordinates"),
        (lambda: heads.multihead_dimension(3, 2, [(2, 2)] * 1000), "symmetry tangents"),
        (lambda: symbolic.symbolic_matrix("q", 3000, 3000), "number of symbols"),
        (lambda: symbolic.symbolic_layers(*HUGE), "number of symbols"),
    ],
)
def test_sizes_this_machine_cannot_hold_are_refused_before_allocating(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_a_normalized_layer_on_a_million_tokens_points_to_query_block() -> None:
    X = RNG.standard_normal((2, 10**6))
    Q, K = RNG.standard_normal((2, 2, 2))
    with pytest.raises(ValueError, match="pass query_block"):
        attention_layer(X, Q, K, np.eye(2), "exp")


def test_the_guards_never_refuse_what_runs_today() -> None:
    """A certificate of 12,288 parameters runs in about 20 s; its sizes pass every guard."""
    P = 12_288
    _limits.fits(16.0 * P * P, "the exact Jacobian")  # no error
    _limits.fits(1.2 * 8 * P * P, "the float Jacobian")
    assert parameter_count(*HUGE) == 3 * 10**12  # a count is a number, not an allocation
    assert symbolic.symbolic_matrix("q", 2, 3).shape == (2, 3)


def test_commutant_of_a_large_identity_is_complete() -> None:
    """An exact kernel of a 1600 × 1600 system in seconds (it took minutes in sympy)."""
    basis = transport.commutant_basis(np.eye(40, dtype=int))
    assert len(basis) == 1600 and all(B.dtype == np.int64 for B in basis)


def test_messages_name_the_problem() -> None:
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        random_layers((2, 2), (2,), rng="abc")
    with pytest.raises(ValueError, match="rng must be"):
        random_layers((2, 2), (2,), rng=2.5)
    with pytest.raises(TypeError, match="row 0 must be a mapping"):
        report.Table([1, 2])
    with pytest.raises(TypeError, match="rows must be a list of mappings"):
        report.Table({"a": 1})
    par = Parametrization("halves", ((1, 1),), (1, 2), lambda p, X: (p[0] @ X) / 2)
    with pytest.raises(TypeError, match="exact forwards cannot divide"):
        exact_rank(par)
    with pytest.raises(ValueError, match="min_gap must be a finite number > 1"):
        float_rank(np.eye(3), min_gap=float("inf"))
    with pytest.raises(ValueError, match="methods must list"):
        dimension_table([((2, 2), (2,))], methods=())
    layers = random_layers((3, 3, 2), (2, 2), 0)
    layers[1] = (np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="^layer 2 expects input width 4") as err:
        deep_attention(np.ones((3, 2)), layers)
    assert "layer of layer" not in str(err.value)
    A, V = RNG.standard_normal((2, 2)), RNG.standard_normal((1, 2))
    with pytest.raises(ValueError) as err:
        same_function((A, V), (A, V), rtol=float("nan"))
    assert "finite finite" not in str(err.value)


def test_widths_may_be_numpy_arrays() -> None:
    assert parameter_count(np.array([3, 3]), np.array([2])) == parameter_count((3, 3), (2,))
    assert len(random_layers(np.array([3, 2, 2]), np.array([2, 1]))) == 2


def test_plot_of_a_matrix_with_nan_is_refused() -> None:
    import matplotlib.pyplot as plt

    from lsa_lib.plotting import plot_signed_matrix

    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="non-finite"):
        plot_signed_matrix(ax, np.array([[1.0, np.nan]]))
    plt.close(fig)


def test_output_changes_separates_symmetries_from_other_changes() -> None:
    layers = random_layers((3, 3, 2), (2, 2), 5)
    X = RNG.standard_normal((4, 3, 5))
    moved = {
        "scaling": scale_layers(layers, [2.0, -0.5]),
        "V_1 alone": [(layers[0][0], layers[0][1], 2 * layers[0][2]), layers[1]],
    }
    change = output_changes(lambda W: deep_attention(X, W), layers, moved)
    assert list(change) == ["scaling", "V_1 alone"]
    assert change["scaling"] < ROUNDOFF and change["V_1 alone"] > NOT_A_SYMMETRY
    with pytest.raises(ValueError, match="non-empty mapping"):
        output_changes(lambda W: deep_attention(X, W), layers, {})
    with pytest.raises(TypeError, match="forward must be a function"):
        output_changes(None, layers, moved)
