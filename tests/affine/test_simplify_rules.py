"""Every simplifier rule by example; each case is also checked against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, clear_caches, dim, parse_map

from .affine_helpers import brute_relation, intervals

D = "domain: "
SPEC_AND_RULES = [
    # the spec's four simplifier examples (case 3 pinned to our canonical printed form)
    ("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]", "(d0, d1)"),
    (
        "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) floordiv"
        " 10, d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2)",
    ),
    (
        "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8), "
        "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0 * 2 + (d1 * 4 + d2) floordiv 8, (d1 * 4 + d2) mod 8)",
    ),
    ("(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]", "(d0)"),
    # reshape round trip and digit merges
    ("(d0) -> ((d0 floordiv 8) * 8 + d0 mod 8), domain: d0 in [0, 100]", "(d0)"),
    ("(d0) -> (((d0 floordiv 4) mod 8) * 4 + d0 mod 4), domain: d0 in [0, 1000]", "(d0 mod 32)"),
    ("(d0) -> ((d0 floordiv 32) * 8 + (d0 floordiv 4) mod 8), domain: d0 in [0, 1000]", "(d0 floordiv 4)"),
    (
        "(d0, d1) -> (d0 * 4 + d1 - ((d0 * 4 + d1) floordiv 8) * 8), domain: d0 in [0, 100], d1 in [0, 100]",
        "((d0 * 4 + d1) mod 8)",
    ),
    (
        "(d0, d1) -> (d1 * 4 + d0 mod 4 - ((d1 * 4 + d0 mod 4) floordiv 8) * 8), "
        "domain: d0 in [0, 100], d1 in [0, 100]",
        "(d0 mod 4 + (d1 mod 2) * 4)",
    ),
    # mod / floordiv constant over the range, mod fitting one period
    ("(d0) -> (d0 mod 8, d0 floordiv 8, d0 mod 16), domain: d0 in [16, 19]", "(d0 - 16, 2, d0 - 16)"),
    ("(d0) -> (d0 mod 16, d0 ceildiv 16), domain: d0 in [1, 15]", "(d0, 1)"),
    # (c*a) mod (a*b), gcd splits of sums under mod and floordiv
    (
        "(d0, d1) -> ((d0 * 4) mod 32, (d0 * 4 + d1) mod 8, (d0 * 4 + d1) floordiv 8), "
        "domain: d0 in [0, 100], d1 in [0, 3]",
        "((d0 mod 8) * 4, d1 + (d0 mod 2) * 4, d0 floordiv 2)",
    ),
    # (x mod ab) floordiv a, nested floordiv, signed-remainder congruence
    (
        "(d0) -> ((d0 mod 12) floordiv 4, (d0 floordiv 4) floordiv 2, (d0 * 15 + 15) mod 16), domain: d0 in [0, 15]",
        "((d0 floordiv 4) mod 3, d0 floordiv 8, -d0 + 15)",
    ),
    ("(d0) -> ((d0 floordiv 4 + 1) floordiv 2), domain: d0 in [0, 100]", "((d0 + 4) floordiv 8)"),
    # a constant remainder under one block of a factor leaves floordiv/mod (XLA's tiling
    # offset cancellation)
    (
        "(d0) -> ((d0 * 32 + 31) floordiv 4608, (d0 * 4 + 1) mod 8), domain: d0 in [0, 10000]",
        "(d0 floordiv 144, (d0 mod 2) * 4 + 1)",
    ),
    # nested floordiv of a sum: (A + z floordiv a) floordiv b == (a*A + z) floordiv (a*b)
    (
        "(d0, d1) -> ((d0 * 2 + d1 floordiv 64) floordiv 3), domain: d0 in [0, 100], d1 in [0, 127]",
        "((d0 * 128 + d1) floordiv 192)",
    ),
    # digit groups of a lifted base: (d1*2 + d0 floordiv 64) mod 3 is a digit of d1*128 + d0
    (
        "(d0, d1) -> (((d1 * 2 + d0 floordiv 64) mod 3) * 256 + (d0 mod 64) * 4 + "
        "((d1 * 128 + d0) floordiv 192) * 768), domain: d0 in [0, 127], d1 in [0, 30]",
        "(d0 * 4 + d1 * 512)",
    ),
    # digit groups whose bases differ by a constant (a multiple of the lower group's modulus)
    ("(d0) -> (d0 mod 4 + ((d0 floordiv 4 + 42) mod 64) * 4), domain: d0 in [0, 1000]", "((d0 + 168) mod 256)"),
    (
        "(d0, d1) -> ((d0 + d1) mod 4 + ((d0 + d1 + 8) floordiv 4) * 4), domain: d0 in [0, 100], d1 in [0, 7]",
        "(d0 + d1 + 8)",
    ),
    # digit groups of y are digit groups of x == g*y + z (0 <= z < g): a reshape through a
    # dimension of size g
    (
        "(d0, d1, d2) -> (((d0 * 6 + d1) floordiv 4) * 60 + (d0 * 90 + d1 * 15 + d2) mod 60), "
        "domain: d0 in [0, 3], d1 in [0, 5], d2 in [0, 14]",
        "(d0 * 90 + d1 * 15 + d2)",
    ),
    # ... and of x == y + m*w for the modulus m of every group (here 90*d0, m == 2)
    (
        "(d0, d1) -> ((d1 * 15) mod 2 + ((d0 * 45 + (d1 * 15) floordiv 2) mod 30) * 2), "
        "domain: d0 in [0, 3], d1 in [0, 5]",
        "(((d0 * 6 + d1) mod 4) * 15)",
    ),
    # k*x - k*c*(x floordiv c) == k*(x mod c), x a sum with a constant
    (
        "(d0)[s0] -> (d0 + s0 - ((s0 + 1) floordiv 3) * 3 + 1), domain: d0 in [0, 1], s0 in [0, 3]",
        "(d0 + (s0 + 1) mod 3)",
    ),
    # construction folding needs no ranges
    (
        "(d0) -> (d0 * 1 + 0, (d0 * 6) floordiv 4, (d0 * 6 + 3) mod 9), domain: d0 in [0, 100]",
        "(d0, (d0 * 3) floordiv 2, ((d0 * 2 + 1) mod 3) * 3)",
    ),
]


@pytest.mark.parametrize("text, results", SPEC_AND_RULES)
def test_rule(text: str, results: str):
    m = parse_map(text)
    s = m.simplified()
    assert str(s).split(" -> ")[1].split(", domain")[0] == results
    assert brute_relation(s) == brute_relation(m)


CONSTRAINT_RULES = [
    # e + c moved into the interval; a constraint on a bare variable tightens its bounds
    ("(d0) -> (d0), domain: d0 in [0, 100], d0 + 5 in [10, 20]", "(d0) -> (d0), domain: d0 in [5, 15]"),
    # e * k and e floordiv k moved into the interval (then intersected)
    (
        "(d0, d1) -> (d0), domain: d0 in [0, 100], d1 in [0, 100], (d0 + d1) * 4 in [3, 17], "
        "(d0 + d1) floordiv 4 in [1, 2]",
        "(d0, d1) -> (d0), domain: d0 in [0, 100], d1 in [0, 100], d0 + d1 in [4, 4]",
    ),
    # the spec's always-true constraint is removed
    (
        "(d0)[s0] -> (d0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]",
        "(d0)[s0] -> (d0), domain: d0 in [0, 5], s0 in [1, 3]",
    ),
    # infeasible constraints make the map KNOWN EMPTY
    ("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [50, 60]", "KNOWN EMPTY"),
    ("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [1, 1], d0 mod 2 in [0, 0]", "KNOWN EMPTY"),
    # mod constraints on one variable merged by lcm; bounds snapped to feasible values
    (
        "(d0) -> (d0), domain: d0 in [1, 40], d0 mod 2 in [0, 0], d0 mod 3 in [0, 0]",
        "(d0) -> (d0), domain: d0 in [6, 36], d0 mod 6 in [0, 0]",
    ),
    # a negated expression is turned around
    ("(d0) -> (-d0 + 7), domain: d0 in [0, 7], -d0 in [-3, 0]", "(d0) -> (-d0 + 7), domain: d0 in [0, 3]"),
    # whole blocks: 6*d0 + (3*s0 + s1) with 3*s0 + s1 in [0, 5] moves onto d0 (XLA's rule, for
    # range-variable remainders only; a dimension remainder keeps the constraint)
    (
        "(d0)[s0, s1] -> (d0), domain: d0 in [0, 1999], s0 in [0, 1], s1 in [0, 2], d0 * 6 + s0 * 3 + s1 in [0, 599]",
        "(d0)[s0, s1] -> (d0), domain: d0 in [0, 99], s0 in [0, 1], s1 in [0, 2]",
    ),
    (
        "(d0, d1) -> (d0), domain: d0 in [0, 199], d1 in [0, 5], d0 * 6 + d1 in [0, 599]",
        "(d0, d1) -> (d0), domain: d0 in [0, 199], d1 in [0, 5], d0 * 6 + d1 in [0, 599]",
    ),
    # a variable fixed to one value becomes a constant
    (
        "(d0, d1) -> (d0 + d1), domain: d0 in [0, 9], d1 in [0, 9], d1 * 2 in [6, 7]",
        "(d0, d1) -> (d0 + 3), domain: d0 in [0, 9], d1 in [3, 3]",
    ),
]


@pytest.mark.parametrize("text, expected", CONSTRAINT_RULES)
def test_constraint_rule(text: str, expected: str):
    m = parse_map(text)
    s = m.simplified()
    assert str(s) == expected
    assert brute_relation(s) == brute_relation(m)


def test_constraint_order_is_deterministic():
    a = parse_map(
        "(d0, d1) -> (d0), domain: d0 in [0, 20], d1 in [0, 20], "
        "d0 + d1 in [2, 30], d0 mod 3 in [0, 1], (d0 - d1) floordiv 2 in [0, 3]"
    )
    b = parse_map(
        "(d0, d1) -> (d0), domain: d0 in [0, 20], d1 in [0, 20], "
        "(d0 - d1) floordiv 2 in [0, 3], d0 mod 3 in [0, 1], d0 + d1 in [2, 30]"
    )
    assert str(a.simplified()) == str(b.simplified())
    assert a == b and hash(a) == hash(b)


def test_reshape_chain_cancels():
    # [10,10,10] -> [50,20] -> [10,10,10] (spec): composition then simplification is identity
    to_50_20 = parse_map(
        "(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 20, "
        "(d0 * 100 + d1 * 10 + d2) mod 20), "
        "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    to_10_10_10 = parse_map(
        "(d0, d1) -> ((d0 * 20 + d1) floordiv 100, "
        "((d0 * 20 + d1) floordiv 10) mod 10, (d0 * 20 + d1) mod 10), "
        "domain: d0 in [0, 49], d1 in [0, 19]"
    )
    composed = to_10_10_10.compose(to_50_20)
    assert str(composed) == ("(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")


def test_shared_domain_memos_survive_clear_caches():
    text = "(d0, d1) -> ((d0 * 16 + d1) floordiv 16, (d0 * 16 + d1) mod 16), domain: d0 in [0, 7], d1 in [0, 15]"
    first = str(parse_map(text).simplified())
    assert str(parse_map(text).simplified()) == first  # warm (shared memo)
    clear_caches()
    assert str(parse_map(text).simplified()) == first == "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 15]"


@st.composite
def reshape_like(draw):
    """Sums mixing ``x``, ``x floordiv c`` and ``x mod c`` of one linear ``x`` with a constant:
    the shapes the digit-merge and floordiv-cancel rules rewrite."""
    k0, k1 = draw(st.integers(-3, 3)), draw(st.integers(-3, 3))
    x = dim(0) * k0 + dim(1) * k1 + draw(st.integers(-9, 9))
    c = draw(st.sampled_from([2, 3, 4, 6, 8]))
    parts = [
        x * draw(st.integers(-2, 2)),
        x.floordiv(c) * draw(st.integers(-16, 16)),
        x.mod(c) * draw(st.integers(-4, 4)),
        (x.floordiv(c) + draw(st.integers(0, 40))).mod(draw(st.sampled_from([2, 4, 8])))
        * draw(st.sampled_from([0, c, -c])),
    ]
    return IndexingMap([draw(intervals()), draw(intervals())], [], [], [sum(parts[1:], parts[0])])


@settings(deadline=None, derandomize=True, max_examples=300)
@given(reshape_like())
def test_reshape_like_sums_simplify_exactly(m: IndexingMap):
    s = m.simplified()
    assert brute_relation(s) == brute_relation(m), f"{m}\n  simplified to\n{s}"
