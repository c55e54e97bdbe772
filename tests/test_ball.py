"""Ball arithmetic (lsa_lib._ball) and the exact engine's lower bound for non-polynomial maps."""

from __future__ import annotations

import flint
import numpy as np
import pytest

from lsa_lib import _ball
from lsa_lib.lightning import deep_attention, random_layers
from lsa_lib.rank import Parametrization, exact_rank, float_jacobian
from lsa_lib.symmetries import network_parametrization


def _contains(balls: list[list[object]], values: np.ndarray, slack: float = 0.0) -> bool:
    """Every ball contains the float value (widened by ``slack`` for the float's own error)."""
    for row, vals in zip(balls, values, strict=True):
        for ball, v in zip(row, vals, strict=True):
            if not (ball - flint.arb(float(v))).contains(0) and slack == 0:
                return False
            if slack and abs(float(ball.mid()) - v) > slack * (1 + abs(v)):
                return False
    return True


def test_ball_forward_contains_the_float_forward():
    g = np.random.default_rng(0)
    layers = random_layers((3, 3, 2), (2, 2), rng=1)
    X = g.standard_normal((3, 4))
    old = flint.ctx.prec
    flint.ctx.prec = 128
    for normalizer in (None, "exp", "square_plus_one", "taylor2"):
        param = network_parametrization((3, 3, 2), (2, 2), 4, normalizer)
        point = [np.asarray(M, dtype=np.float64) for layer in layers for M in layer]
        duals = [_ball.BallDual(M) for M in point]
        Y = param.forward(duals, _ball.BallDual(X))
        exact = deep_attention(X, layers, normalizer=normalizer)
        mids = np.array([[float(Y.value[i, j].mid()) for j in range(4)] for i in range(2)])
        rads = np.array([[float(Y.value[i, j].rad()) for j in range(4)] for i in range(2)])
        assert np.allclose(mids, exact, rtol=1e-12, atol=1e-12), normalizer
        assert (rads < 1e-20).all(), normalizer  # 53-bit inputs, 128-bit balls: tight
    flint.ctx.prec = old


def test_ball_jacobian_matches_the_float_jacobian():
    g = np.random.default_rng(1)
    param = network_parametrization((3, 2, 2), (2, 1), 3, "exp")
    point = [g.standard_normal(s) for s in param.shapes]
    X = g.standard_normal((1, 3, 3))
    J = float_jacobian(param, point, X)
    cols = list(range(param.n_params))
    old = flint.ctx.prec
    flint.ctx.prec = 128
    try:
        block = _ball.jacobian_block(param.forward, param.shapes, point, X[0], cols)
    finally:
        flint.ctx.prec = old
    mids = np.array([[float(b.mid()) for b in row] for row in block])
    assert np.allclose(mids, J, rtol=1e-10, atol=1e-12)


def test_division_and_exp_follow_the_quotient_and_chain_rules():
    # f(x) = exp(x) / (1 + exp(x)) (a logistic weight): f' = f (1 - f)
    x = 0.37
    X = _ball.BallDual([[x]], [flint.arb_mat([[1]])])
    E = np.exp(X)
    f = E / (E + 1.0)
    value = 1 / (1 + np.exp(-x))
    assert (f.value[0, 0] - flint.arb(value)).contains(0) or abs(
        float(f.value[0, 0].mid()) - value
    ) < 1e-15
    assert abs(float(f.tangents[0][0, 0].mid()) - value * (1 - value)) < 1e-15


def _logistic_pair() -> Parametrization:
    """``(a, b) ↦ X · σ(a + b)``: two parameters, rank exactly one (only a + b matters)."""

    def forward(params, X):
        a, b = params
        E = (a + b).exp()  # torch tensors and ball duals alike
        return X * (E / (E + 1.0))

    return Parametrization("logistic pair", ((1, 1), (1, 1)), (2, 3), forward, polynomial=False)


def test_the_ball_bound_never_exceeds_the_true_rank():
    param = _logistic_pair()
    cert = exact_rank(param)
    assert cert.lower_by == "ball" and cert.lower == 1 and cert.upper == 2
    # asked for a larger minor than exists, the bound falls back to the true rank
    g = np.random.default_rng(2)
    point = [g.standard_normal((1, 1)) for _ in range(2)]
    X = g.standard_normal((4, 2, 3))
    J = float_jacobian(param, point, X)
    assert _ball.certified_rank(param.forward, param.shapes, point, X, J, 2, 1) == 1


def test_softmax_certificates_meet_on_small_networks():
    cert = exact_rank(network_parametrization((3, 3, 3), (2, 2), 3, "exp"))
    assert cert.lower_by == "ball" and cert.certified and cert.rank == 25  # the paper's Eq. 16
    one_token = exact_rank(network_parametrization((3, 3, 3), (2, 2), 1, "exp"))
    # one token: only V_2 V_1 matters (rank 9), and the symmetries' bound cannot see that
    assert one_token.lower == 9 and one_token.upper == 25


def test_ball_values_refuse_non_finite_numbers():
    with pytest.raises(ValueError, match="finite"):
        _ball.BallDual([[np.inf]])
    with pytest.raises(ValueError, match="2-D"):
        _ball.BallDual(np.zeros((2, 2, 2)))


def test_broadcasting_follows_numpy_for_values_and_derivatives():
    # u (1 × 3, depends on x) combined with a constant 2 × 3 matrix C, entry by entry
    g = np.random.default_rng(3)
    C = g.standard_normal((2, 3))
    u0, du = g.standard_normal((1, 3)), g.standard_normal((1, 3))
    u = _ball.BallDual(u0, [_ball._ball_matrix(du)])
    for op, value, derivative in (
        (lambda a, b: a + b, u0 + C, du + 0 * C),
        (lambda a, b: a * b, u0 * C, du * C),
        (lambda a, b: b / a, C / u0, -C * du / u0**2),
        (lambda a, b: a / b, u0 / C, du / C),
    ):
        out = op(u, _ball.BallDual(C))
        mids = np.array([[float(out.value[i, j].mid()) for j in range(3)] for i in range(2)])
        slope = out.tangents[0]
        dmid = np.array([[float(slope[i, j].mid()) for j in range(3)] for i in range(2)])
        assert np.allclose(mids, value) and np.allclose(dmid, derivative)


def _cancellation() -> Parametrization:
    """``y = θ (x³ − 2^156 − 3·2^104 − 3·2^52)``: at ``x = 2^52 + 1`` the factor is exactly 1.

    ``x³`` needs 157 bits, so at 128 bits its ball is wider than 1 and the derivative's ball
    contains zero; at 256 bits it is exact. The certificate must retry at higher precision.
    """

    def forward(params, X):  # each constant is a float64 number exactly; their sum is not
        return params[0] @ (X * X * X - 2.0**156 - 3 * 2.0**104 - 3 * 2.0**52)

    return Parametrization("cancellation", ((1, 1),), (1, 1), forward, polynomial=False)


def test_the_ball_bound_retries_at_higher_precision() -> None:
    param = _cancellation()
    point = [np.ones((1, 1))]
    X = np.full((1, 1, 1), 2.0**52 + 1)
    J = np.ones((1, 1))  # the float Jacobian only chooses the minor
    assert _ball.PRECISIONS[0] == 128 and len(_ball.PRECISIONS) > 1
    assert _ball.certified_rank(param.forward, param.shapes, point, X, J, 1, 1) == 1
    old = _ball.PRECISIONS
    try:  # with 128 bits alone the same minor proves nothing
        _ball.PRECISIONS = (128,)
        assert _ball.certified_rank(param.forward, param.shapes, point, X, J, 1, 1) == 0
    finally:
        _ball.PRECISIONS = old


def test_a_vanishing_derivative_proves_rank_zero() -> None:
    """``y = θ² x`` at ``θ = 0``: the only minor is the derivative ``2θx = 0``, exactly."""
    param = Parametrization("θ²", ((1, 1),), (1, 1), lambda p, X: p[0] @ p[0] @ X, polynomial=False)
    X, point, J = np.ones((1, 1, 1)), [np.zeros((1, 1))], np.ones((1, 1))
    assert _ball.certified_rank(param.forward, param.shapes, point, X, J, 1, 1) == 0
