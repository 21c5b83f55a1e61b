"""API additions of the second round: KNOWN EMPTY arity header, XLA's ``/`` syntax, the bounded
semantic equality, remove_unused_variables on detached constraints, shared domain memos."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, clear_caches, dim, parse_map, range_var

from .affine_helpers import brute_relation, intervals


def test_known_empty_text_is_xlas_and_the_header_keeps_the_counts():
    empty = IndexingMap.known_empty(2, 3)
    assert str(empty) == "KNOWN EMPTY"  # the public text, as XLA prints it
    text = empty.to_string(known_empty_arity=True)
    assert text == "(d0, d1) -> (3 results): KNOWN EMPTY"
    back = parse_map(text)
    assert back.is_known_empty and (back.num_dims, back.num_results) == (2, 3)
    assert parse_map("() -> (1 result): KNOWN EMPTY").num_results == 1
    plain = parse_map("KNOWN EMPTY")
    assert plain.is_known_empty and (plain.num_dims, plain.num_results) == (0, 0)
    # regular maps print the same with or without the option
    m = IndexingMap.identity([3])
    assert m.to_string(known_empty_arity=True) == str(m)


def test_slash_is_floordiv_and_negative_divisors_negate_the_operand():
    m = parse_map("(d0) -> (d0 / 4, d0 / -3, d0 ceildiv -3), domain: d0 in [-7, 7]")
    for x in range(-7, 8):
        assert m.evaluate([x]) == (x // 4, x // -3, -((-x) // -3))


def test_semantic_equality_is_exhaustive_on_small_domains():
    a = parse_map("(d0) -> (d0 floordiv 4), domain: d0 in [0, 63]")
    b = parse_map("(d0) -> ((d0 + 1) floordiv 4), domain: d0 in [0, 63]")
    assert a.semantically_equal(a.simplified())
    assert not a.semantically_equal(b)  # they differ at d0 = 3 only


def test_semantic_equality_beyond_the_limit_is_a_bounded_sampled_check():
    # 4e8 range points: sampled (this used to enumerate the whole range box and run out of
    # memory); a difference on a large part of the domain is found
    text = (
        "()[s0, s1, s2, s3] -> ((s0 * 458752 + s1 + s2 * 4 + s3 * 512) mod {}), "
        "domain: s0 in [0, 871], s1 in [0, 3], s2 in [0, 127], s3 in [0, 895]"
    )
    m = parse_map(text.format(20000))
    assert m.semantically_equal(m.simplified(), limit=1 << 12)
    assert not m.semantically_equal(parse_map(text.format(20001)), limit=1 << 12)


def test_runtime_assignments_beyond_64_are_sampled_not_only_corners():
    # the maps differ only when rt0 is neither a corner nor the midpoint of [0, 40]
    a = parse_map("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 40]")
    b = parse_map("(d0){rt0} -> (d0 + rt0 + (rt0 mod 20 + 19) floordiv 20), domain: d0 in [0, 3], rt0 in [0, 40]")
    assert a.semantically_equal(a)
    assert not a.semantically_equal(b)


def test_remove_unused_variables_decides_detached_constraints():
    feasible = parse_map(
        "(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 3], s0 in [0, 9], s1 in [0, 2], s0 mod 4 in [3, 3]"
    )
    assert str(feasible.remove_unused_variables()) == "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 2]"
    infeasible = IndexingMap([Interval(0, 3)], [Interval(0, 9)], [], [dim(0)], [(range_var(0) * 2, Interval(7, 7))])
    assert infeasible.remove_unused_variables().is_known_empty
    assert not brute_relation(infeasible)
    linked = parse_map("(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 3], s0 in [0, 9], s1 in [0, 2], s0 + s1 in [3, 4]")
    assert linked.remove_unused_variables() is linked  # s0 is tied to the used s1


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
