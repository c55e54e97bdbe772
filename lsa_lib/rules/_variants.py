"""The rules about variants of the lightning layer (part of :mod:`lsa_lib.rules`).

Residual networks, several heads, positional transport, content-dependent metrics (the
research notes).

Each formula is written here from the research note's statement, independently of the
``predicted`` values of the parametrizations; each certificate is the exact engine's, with
the symmetry tangents of the variant's module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from .. import heads, metric, residual, transport
from .._clauses import Clause
from ..rank import ExactRank, exact_rank
from ._core import Rule, _draw, _small


def _c2(n: int) -> int:
    """``C(n, 2)``, and ``0`` for ``n < 2``."""
    return n * (n - 1) // 2 if n >= 2 else 0


def _fiber(a: int, d: int) -> int:
    """The dimension of the fibers of ``(Q, K) ↦ Kᵀ Q``: ``2ad − r(2d − r)``, ``r = min(a, d)``."""
    r = min(a, d)
    return 2 * a * d - r * (2 * d - r)


# residual networks ------------------------------------------------------------------------


def _residual_formula(d: int, attn: Any, t: int) -> int:
    return sum(2 * a * d + d * d - _fiber(a, d) - 1 for a in attn)


def _residual_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        attn = tuple(_draw(rng, 1, d + 1) for _ in range(_draw(rng, 1, 3)))
        return {"d": d, "attn": attn, "t": int(rng.choice([2, 3, 4]))}

    return _small(rng, 20, draw, lambda d, attn, t: sum(2 * a * d + d * d for a in attn) <= 110)


# several heads -----------------------------------------------------------------------------


def _summed_formula(d: int, d_out: int, a: int, H: int, t: int) -> int:
    r = min(a, d)
    per_head = 2 * a * d + d * d_out - _fiber(a, d) - max(1, min(H, d * d) - (d - r) ** 2)
    return min(d_out * d * d * (d + 1) // 2, H * per_head)


def _summed_certify(d: int, d_out: int, a: int, H: int, t: int) -> ExactRank:
    c = exact_rank(heads.multihead_parametrization(d, d_out, a, H, t=t))
    return replace(c, upper=min(c.upper, heads.cubic_map_dimension(d, d_out)))


def _summed_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "a": _draw(rng, 1, d + 1),
            "H": _draw(rng, 1, 6),
            "t": int(rng.choice([2, 3, 4])),
        }

    return _small(rng, 20, draw, lambda d, d_out, a, H, t: H * (2 * a * d + d * d_out) <= 150)


def _output_count(d: int, d_out: int, heads: Any, t: int) -> int:
    """``Σ_h [r_k (2d − r_k) + r_v (d + d' − r_v)]``: the count of the per-head symmetries."""
    total = 0
    for d_k, d_v in heads:
        r_k, r_v = min(d_k, d), min(d_v, d, d_out)
        total += r_k * (2 * d - r_k) + r_v * (d + d_out - r_v)
    return total


def _output_cases(rng: np.random.Generator, n: int, max_params: int) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        sizes = tuple((_draw(rng, 1, d + 1), _draw(rng, 1, d + 1)) for _ in range(_draw(rng, 1, 3)))
        return {"d": d, "d_out": _draw(rng, 1, 3), "heads": sizes, "t": int(rng.choice([2, 3]))}

    def size(d: int, d_out: int, heads: Any, t: int) -> bool:
        return sum(2 * d_k * d + d_v * d + d_out * d_v for d_k, d_v in heads) <= max_params

    return _small(rng, n, draw, size)


def _lightning_heads_domain(d: int, d_out: int, heads: Any, t: int) -> bool:
    cubic = d_out * d * d * (d + 1) // 2
    return (
        t >= 2
        and d_out >= 2
        and len(heads) <= 2
        and not _moves(d, d_out, heads)
        and _output_count(d, d_out, heads, t) - len(heads) <= cubic
    )


def _moves(d: int, d_out: int, sizes: Any) -> bool:
    return heads.moves_possible(d, d_out, list(sizes))


# positional transport --------------------------------------------------------------------

# Pythagorean triples with four different angles (so that equal angles come only from repeats)
_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25))


def _rotation(rotations: Any, a: int) -> tuple[Any, int]:
    if not rotations:
        return np.eye(a, dtype=np.int64), 1
    return transport.rational_rotation(list(rotations), a=a)


def _fixed_formula(d: int, d_out: int, rotations: Any, a: int, t: int) -> int:
    """``2ad + dd' − dim C(R) − 1``, the centralizer counted from the blocks of ``R``.

    An angle repeated ``m`` times gives ``GL_m(ℂ)``, ``2m²`` real dimensions; the ``f`` fixed
    axes give ``GL_f``. The triples of ``_TRIPLES`` have different angles in ``(0, π)``.
    """
    blocks = [tuple(r) for r in rotations]
    fixed = a - 2 * len(blocks)
    dim_c = fixed * fixed + sum(2 * blocks.count(b) ** 2 for b in set(blocks))
    return 2 * a * d + d * d_out - dim_c - 1


def _fixed_certify(d: int, d_out: int, rotations: Any, a: int, t: int) -> ExactRank:
    R, scale = _rotation(rotations, a)
    return exact_rank(transport.transport_parametrization(d, d_out, R, scale, t=t))


def _fixed_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        n_blocks = _draw(rng, 0, 2)
        rotations = tuple(_TRIPLES[int(i)] for i in rng.integers(0, len(_TRIPLES), size=n_blocks))
        a = 2 * n_blocks + _draw(rng, 0 if n_blocks else 1, 1)
        d = _draw(rng, max(1, a - 1), 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "rotations": rotations,
            "a": a,
            "t": int(rng.choice([2, 3])),
        }

    return _small(rng, 16, draw, lambda d, d_out, rotations, a, t: 2 * a * d + d * d_out <= 60)


def _learned_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out + (2 * t - 1) * a * a - 2 * a * a - 1 - _c2(2 * a - d)


def _flat_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out - 1


def _curved_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out + (t - 2) * a * a - 1 - _c2(2 * a - d)


def _connection_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "a": _draw(rng, 1, d + 1),
            "t": int(rng.choice([2, 3, 4])),
        }

    return _small(
        rng, 24, draw, lambda d, d_out, a, t: 2 * a * d + d * d_out + (2 * t - 1) * a * a <= 100
    )


def _transport_certify(*, causal: bool, flat: bool = False) -> Callable[..., ExactRank]:
    def certify(d: int, d_out: int, a: int, t: int) -> ExactRank:
        param = transport.learned_transport_parametrization(
            d, d_out, a, t, causal=causal, flat=flat
        )
        return exact_rank(param)

    return certify


# content-dependent metrics ---------------------------------------------------------------


def _content_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out + d - _fiber(a, d) - 2


def _tensor_formula(d: int, d_out: int, a: int, r: int, t: int) -> int:
    return 2 * a * d + d * d_out + r * a * d - _c2(a) - 1 - _c2(r) - 1


def _tensor_ceiling(d: int, d_out: int, r: int) -> int:
    """``dd' + d² + n − 1`` with ``n`` the proved bound on the cubic maps the layer reaches."""
    cubic = d * (d + 2) * (d + 1) * d // 6  # d · C(d + 2, 3): all cubic maps ℝ^d → ℝ^d
    n = min(cubic, d * d + d * (d + 1) // 2 - 1) if r == 1 else cubic
    return d * d_out + d * d + n - 1


def _tensor_domain(d: int, d_out: int, a: int, r: int, t: int) -> bool:
    return (
        t >= 2
        and a <= d
        and r <= 2
        and _tensor_formula(d, d_out, a, r, t) <= _tensor_ceiling(d, d_out, r)
    )


TENSOR_DOMAIN = Clause("a ≤ d, r ≤ 2, t ≥ 2, the count at most the proved ceiling", _tensor_domain)


def _tensor_cases(rng: np.random.Generator, n: int, max_params: int) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "a": _draw(rng, 1, d + 1),
            "r": _draw(rng, 1, 3),
            "t": int(rng.choice([2, 3])),
        }

    return _small(rng, n, draw, lambda d, d_out, a, r, t: (2 + r) * a * d + d * d_out <= max_params)


def _tensor_softmax_certify(d: int, d_out: int, a: int, r: int, t: int) -> ExactRank:
    param = metric.riemannian_parametrization(d, d_out, a, r, t=t, normalizer="exp")
    point_rng = np.random.default_rng(0)  # scores of order one: half a standard normal
    return exact_rank(param, [0.5 * point_rng.standard_normal(s) for s in param.shapes])


VARIANT_RULES: list[Rule] = [
    Rule(
        name="residual networks",
        label="prop-residual-dim",
        model="residual",
        statement=(
            "a residual lightning network of width d has the sum of its single layers' "
            "dimensions, Σ_i (2a_i d + d² − f(a_i, d) − 1)"
        ),
        clauses=(
            Clause("t ≥ 2 tokens (any depth and attention dimensions)", lambda d, attn, t: t >= 2),
        ),
        formula=_residual_formula,
        certify=lambda d, attn, t: exact_rank(residual.residual_parametrization(d, attn, t)),
        cases=_residual_cases,
    ),
    Rule(
        name="summed heads",
        label="conj-heads-dim",
        model="summed heads",
        statement=(
            "H summed lightning heads have dimension min(d'd·d(d+1)/2, "
            "H(2ad + dd' − f(a, d) − max(1, min(H, d²) − (d − r)²))), r = min(a, d)"
        ),
        clauses=(
            Clause("d' ≥ 2 outputs, t ≥ 2 tokens", lambda d, d_out, a, H, t: d_out >= 2 and t >= 2),
        ),
        formula=_summed_formula,
        certify=_summed_certify,
        cases=_summed_cases,
    ),
    Rule(
        name="softmax heads with output maps",
        label="prop-mh-softmax-grid",
        model="multi-head softmax",
        statement=(
            "standard multi-head softmax attention has dimension "
            "Σ_h [r_k(2d − r_k) + r_v(d + d' − r_v)], r_k = min(d_k, d), r_v = min(d_v, d, d')"
        ),
        clauses=(
            Clause("t ≥ 2 tokens (any widths and head sizes)", lambda d, d_out, heads, t: t >= 2),
        ),
        formula=_output_count,
        certify=lambda d, d_out, heads, t: _output_dimension(d, d_out, heads, t, "exp"),
        cases=lambda rng: _output_cases(rng, 6, 70),
    ),
    Rule(
        name="lightning heads with output maps",
        label="prop-mh-lightning-grid",
        model="multi-head lightning",
        statement=(
            "standard multi-head lightning attention has dimension "
            "Σ_h [r_k(2d − r_k) + r_v(d + d' − r_v)] − H"
        ),
        clauses=(
            Clause(
                (
                    "t ≥ 2; d' ≥ 2; at most two heads; no moves between heads (heads.moves_possible); "
                    "the count at most d'd·d(d+1)/2"
                ),
                _lightning_heads_domain,
            ),
        ),
        formula=lambda d, d_out, heads, t: _output_count(d, d_out, heads, t) - len(heads),
        certify=lambda d, d_out, heads, t: _output_dimension(d, d_out, heads, t, None),
        cases=lambda rng: _output_cases(rng, 24, 120),
    ),
    Rule(
        name="transport by a fixed rotation",
        label="prop-transport-dim",
        model="transport",
        statement="transport by a fixed orthogonal R gives dimension 2ad + dd' − dim C(R) − 1",
        clauses=(
            Clause(
                "a ≤ d, t ≥ 2 (R a rational block rotation)",
                lambda d, d_out, rotations, a, t: a <= d and t >= 2,
            ),
        ),
        formula=_fixed_formula,
        certify=_fixed_certify,
        cases=_fixed_cases,
    ),
    Rule(
        name="learned transport",
        label="conj-learned-dim",
        model="learned transport",
        statement=(
            "one learned map per offset gives dimension 2ad + dd' + (2t − 1)a² − 2a² − 1 "
            "− C(2a − d, 2)"
        ),
        clauses=(Clause("a ≤ d, t ≥ 2", lambda d, d_out, a, t: a <= d and t >= 2),),
        formula=_learned_formula,
        certify=_transport_certify(causal=False),
        cases=_connection_cases,
    ),
    Rule(
        name="flat connection",
        label="prop-mg-curvature",
        model="causal transport, flat",
        statement="causal transport by the powers of one learned map has dimension 2ad + dd' − 1",
        clauses=(
            Clause(
                "a ≤ d, t ≥ 3 (at t = 2 it is the curved count)",
                lambda d, d_out, a, t: a <= d and t >= 3,
            ),
        ),
        formula=_flat_formula,
        certify=_transport_certify(causal=True, flat=True),
        cases=_connection_cases,
    ),
    Rule(
        name="curved connection",
        label="prop-mg-curvature",
        model="causal transport, curved",
        statement=(
            "causal transport by one learned map per offset has dimension "
            "2ad + dd' + (t − 2)a² − 1 − C(2a − d, 2)"
        ),
        clauses=(Clause("a ≤ d, t ≥ 2", lambda d, d_out, a, t: a <= d and t >= 2),),
        formula=_curved_formula,
        certify=_transport_certify(causal=True),
        cases=_connection_cases,
    ),
    Rule(
        name="linear content weight",
        label="prop-metric-dim",
        model="content weight",
        statement="the weight m(x) = μᵀx adds d − 1 dimensions: 2ad + dd' + d − f(a, d) − 2",
        clauses=(Clause("t ≥ 2 tokens", lambda d, d_out, a, t: t >= 2),),
        formula=_content_formula,
        certify=lambda d, d_out, a, t: exact_rank(metric.metric_parametrization(d, d_out, a, t)),
        cases=lambda rng: [
            {k: v for k, v in c.items() if k != "r"} for c in _tensor_cases(rng, 16, 60)
        ],
    ),
    Rule(
        name="metric tensor",
        label="prop-mg-grid",
        model="metric tensor",
        statement=(
            "the metric tensor I + Σ_k (B_k x)(B_k x)ᵀ at the query gives dimension "
            "2ad + dd' + rad − C(a, 2) − 1 − C(r, 2) − 1 (lightning)"
        ),
        clauses=(TENSOR_DOMAIN,),
        formula=_tensor_formula,
        certify=lambda d, d_out, a, r, t: exact_rank(
            metric.riemannian_parametrization(d, d_out, a, r, t=t)
        ),
        cases=lambda rng: _tensor_cases(rng, 24, 90),
    ),
    Rule(
        name="metric tensor, softmax",
        label="prop-mg-grid",
        model="metric tensor, softmax",
        statement="with the softmax, the metric-tensor layer has one dimension more",
        clauses=(TENSOR_DOMAIN,),
        formula=lambda d, d_out, a, r, t: _tensor_formula(d, d_out, a, r, t) + 1,
        certify=_tensor_softmax_certify,
        cases=lambda rng: _tensor_cases(rng, 5, 50),
    ),
]


def _output_dimension(d: int, d_out: int, sizes: Any, t: int, normalizer: str | None) -> ExactRank:
    reading, _ = heads.multihead_dimension(
        d, d_out, list(sizes), normalizer=normalizer, t=t, method="exact"
    )
    assert isinstance(reading, ExactRank)
    return reading
