"""The kit of symmetry tangents (lsa_lib._generators): each move is a derivative of a symmetry.

Every tangent the kit writes must lie in the kernel of the Jacobian of the model it is used
for (the function does not change to first order), and the counts it promises must be the
ranks it delivers. Checked against the float Jacobian of the library's own models and against
finite steps of the group actions.
"""

from __future__ import annotations

import numpy as np
import pytest

from lsa_lib import _generators
from lsa_lib.heads import multihead_parametrization
from lsa_lib.lightning import deep_attention, random_layers
from lsa_lib.rank import exact_rank, float_jacobian, float_rank
from lsa_lib.symmetries import network_parametrization
from lsa_lib.tolerances import ROUNDOFF

RNG = np.random.default_rng(4)


def _leak(param, point, rows) -> float:
    X = RNG.standard_normal((6, *param.input_shape))
    J = float_jacobian(param, point, X)
    return float(np.abs(J @ rows.T).max() / (np.abs(J).max() * np.abs(rows).max()))


def test_every_move_of_a_deep_network_is_in_the_jacobian_kernel() -> None:
    widths, attn = (3, 4, 2), (2, 3)
    param = network_parametrization(widths, attn)
    point = [M for layer in random_layers(widths, attn, 1) for M in layer]
    for move in ("scaling", "attention basis", "pass through"):
        T = _generators.Tangents(point)
        if move == "scaling":
            T.scaling(0, 2)
            T.scaling(3, 5)
        elif move == "attention basis":
            T.attention_basis(0, 1)
            T.attention_basis(3, 4)
        else:
            T.pass_through(2, (3, 4, 5))
        rows = T.matrix()
        assert rows.shape == (len(T), param.n_params) and len(T) > 0
        assert _leak(param, point, rows) < 1e-13, move


def test_a_finite_step_of_each_group_leaves_the_function_unchanged() -> None:
    """The tangents integrate to the actions: exp(s E) on the rows the kit moves."""
    (Q, K, V), (Q2, K2, V2) = random_layers((3, 3, 2), (2, 2), 2)
    X = RNG.standard_normal((4, 3, 5))
    Y = deep_attention(X, [(Q, K, V), (Q2, K2, V2)])
    T = _generators.Tangents([Q, K, V, Q2, K2, V2])
    T.attention_basis(0, 1)
    T.pass_through(2, (3, 4, 5))
    sizes = [M.size for M in (Q, K, V, Q2, K2, V2)]
    for row in T.matrix():
        blocks = np.split(row, np.cumsum(sizes)[:-1])
        # first order: the function moves by O(s²) along a tangent
        moved = [M + 1e-6 * b.reshape(M.shape) for M, b in zip((Q, K, V, Q2, K2, V2), blocks)]
        Z = deep_attention(X, [tuple(moved[:3]), tuple(moved[3:])])
        assert np.linalg.norm(Z - Y) / np.linalg.norm(Y) < 1e-9


@pytest.mark.parametrize(("a", "d"), [(1, 3), (2, 3), (3, 3), (4, 3), (5, 2)])
def test_attention_fiber_dimension_is_the_rank_of_the_attention_tangents(a: int, d: int) -> None:
    Q, K = RNG.standard_normal((a, d)), RNG.standard_normal((a, d))
    T = _generators.Tangents([Q, K])
    T.attention_basis(0, 1)
    assert len(T) == a * a
    # GL_a acts with stabilizer of dimension (a − d)² when a > d: the orbit fills the fiber
    assert float_rank(T.matrix()).rank == _generators.attention_fiber_dimension(a, d)
    assert _generators.attention_fiber_dimension(a, d) == a * a - max(a - d, 0) ** 2


def test_integer_blocks_give_integer_rows_and_object_blocks_exact_rows() -> None:
    ints = [np.arange(6).reshape(2, 3), np.ones((2, 3), dtype=np.int64), np.ones((1, 3), np.int64)]
    T = _generators.Tangents(ints)
    T.triples(1)
    assert T.matrix().dtype == np.int64 and T.matrix().shape == (1 + 4, 15)
    huge = [np.full((1, 1), 10**40, dtype=object)] * 3
    T = _generators.Tangents(huge)
    T.triples(1, scaling=True)
    assert T.matrix()[0, 0] == 10**40


def test_triples_without_scaling_and_offsets() -> None:
    blocks = [RNG.standard_normal(s) for s in ((2, 3), (2, 3), (1, 3))] * 2
    T = _generators.Tangents(blocks)
    T.triples(2, scaling=False)
    assert len(T) == 2 * 4
    T = _generators.Tangents(blocks)
    T.triples(1, first=3)
    rows = T.matrix()
    assert not rows[:, :15].any() and rows[:, 15:].any()


def test_a_component_of_the_wrong_shape_is_refused() -> None:
    T = _generators.Tangents([np.ones((2, 2))])
    with pytest.raises(ValueError, match="shape"):
        T.add({0: np.ones((3, 2))})
    assert _generators.Tangents([np.ones((2, 2))]).matrix().shape == (0, 4)


def test_the_kit_certifies_a_model_built_from_it() -> None:
    """Two heads of one layer: the per-head kit alone gives the naive count, certified."""
    param = multihead_parametrization(3, 2, 2, 2, mixing=False)
    cert = exact_rank(param)
    assert cert.certified and cert.rank == param.predicted
    point = [RNG.standard_normal(s) for s in param.shapes]
    assert _leak(param, point, np.asarray(param.generators(point), dtype=np.float64)) < ROUNDOFF
