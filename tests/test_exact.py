"""The one exact linear algebra (lsa_lib._exact), against sympy and against its definitions."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from lsa_lib import _exact, _modp

P = _exact.PRIME

small_ints = st.integers(-6, 6)


def _matrix(n: int):
    return st.lists(st.lists(small_ints, min_size=n, max_size=n), min_size=n, max_size=n)


def test_one_prime() -> None:
    assert P == _modp.DEFAULT_PRIME == 1048573
    assert sympy.isprime(P) and P < 2**20


@given(st.integers(1, 6).flatmap(_matrix))
def test_determinant_and_adjugate_of_integer_matrices(M: list[list[int]]) -> None:
    S = sympy.Matrix(M)
    d = _exact.det(M)
    assert type(d) is int and d == S.det()
    A = _exact.adj(np.array(M, dtype=object))
    n = len(M)
    assert all(type(x) is int for x in A.flat)
    assert (A @ np.array(M, dtype=object) == d * np.eye(n, dtype=int)).all()
    assert sympy.Matrix(A.tolist()) == S.adjugate()


def test_determinant_of_rationals_floats_and_symbols() -> None:
    R = [
        [Fraction(1, 2), Fraction(1, 3), 1, 0],
        [0, 1, 2, 3],
        [1, 0, 1, Fraction(5, 7)],
        [1, 1, 1, 1],
    ]
    assert _exact.det(R) == sympy.Matrix(R).det()
    assert isinstance(_exact.det(R), Fraction)
    F = np.random.default_rng(0).standard_normal((5, 5))
    assert np.isclose(_exact.det(F), np.linalg.det(F))
    a, b = sympy.symbols("a b")
    M = sympy.Matrix([[a, b, 0, 1], [1, a, b, 0], [0, 1, a, b], [b, 0, 1, a]])
    assert sympy.expand(_exact.det(M) - M.det()) == 0
    assert sympy.expand(_exact.det([[a, b], [b, a]]) - (a * a - b * b)) == 0
    assert _exact.det([]) == 1
    assert _exact.det(sympy.Matrix([[2, 0], [0, sympy.Rational(1, 2)]])) == 1


def test_adjugate_of_singular_and_symbolic_matrices() -> None:
    M = [[1, 2, 3], [2, 4, 6], [1, 0, 1]]  # rank 2: the adjugate has rank 1
    A = _exact.adj(M)
    assert sympy.Matrix(A.tolist()) == sympy.Matrix(M).adjugate()
    x = sympy.Symbol("x")
    S = [[x, 1], [2, x]]
    assert sympy.Matrix(_exact.adj(S).tolist()) == sympy.Matrix(S).adjugate()
    assert _exact.adj([[7]])[0, 0] == 1


@given(
    st.integers(1, 5).flatmap(
        lambda n: st.lists(st.lists(small_ints, min_size=n, max_size=n), min_size=1, max_size=6)
    )
)
def test_rank_over_the_rationals(rows: list[list[int]]) -> None:
    assert _exact.rank_q(rows) == sympy.Matrix(rows).rank()
    halves = [[Fraction(x, 2) for x in row] for row in rows]
    assert _exact.rank_q(halves) == sympy.Matrix(rows).rank()


def test_nullspace_is_a_primitive_integer_basis() -> None:
    M = [[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1]]
    basis = _exact.nullspace(M)
    assert len(basis) == 4 - sympy.Matrix(M).rank()
    for v in basis:
        assert all(type(x) is int for x in v)
        assert np.gcd.reduce(np.abs(v)) == 1
        assert (np.array(M) @ np.array(v) == 0).all()
    assert _exact.rank_q(basis) == len(basis)


def test_modular_determinant_inverse_and_adjugate() -> None:
    rng = np.random.default_rng(1)
    M = rng.integers(-50, 50, size=(4, 4)).tolist()
    assert _exact.det_mod(M) == sympy.Matrix(M).det() % P
    inv = _exact.inv_mod(M)
    prod = (np.array(M, dtype=object) @ np.array(inv, dtype=object)) % P
    assert (prod == np.eye(4, dtype=int)).all()
    d, A = _exact.adjugate_mod(M)
    assert d == sympy.Matrix(M).det() % P
    assert (
        np.array(A, dtype=object) % P
        == np.array(sympy.Matrix(M).adjugate().tolist(), dtype=object) % P
    ).all()
    singular = [[1, 2], [2, 4]]
    d0, A0 = _exact.adjugate_mod(singular)
    assert d0 == 0 and [[x % P for x in r] for r in A0] == [[4, P - 2], [P - 2, 1]]


def test_bad_kinds_are_not_guessed() -> None:
    with pytest.raises(TypeError):
        _exact.rank_q([["a", 1]])


@given(
    st.integers(4, 6).flatmap(
        lambda n: st.tuples(
            st.integers(4, n).flatmap(
                lambda k: st.lists(
                    st.lists(st.integers(-3, 3), min_size=k, max_size=k), min_size=n, max_size=n
                )
            ),
            st.integers(1, 4),
            st.booleans(),
        )
    )
)
def test_all_minors_are_the_determinants_of_the_submatrices(case) -> None:
    rows, denominator, wide = case
    M = [[Fraction(x, denominator) for x in row] for row in rows] if denominator > 1 else rows
    if wide:
        M = [list(col) for col in zip(*M)]
    for k in {2, 4, min(len(M), len(M[0]))}:  # closed forms, flint, one basis (maximal minors)
        expected = [
            _exact.det([[M[r][c] for c in C] for r in R])
            for R in itertools.combinations(range(len(M)), k)
            for C in itertools.combinations(range(len(M[0])), k)
        ]
        got = _exact.minors(M, k)
        assert got == expected
        assert [type(x) for x in got] == [type(x) for x in expected]
