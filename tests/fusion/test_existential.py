"""Range-variable clean-ups after composition keep the relation: examples, then random maps checked
by enumerating both relations."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, dim, parse_map, range_var
from hlo_index.context import AnalysisContext
from hlo_index.fusion.existential import drop_witness_range_vars


def test_witness_only_variable_is_dropped():
    m = parse_map("(d0)[s0, s1] -> (s0), domain: d0 in [0, 9], s0 in [0, 255], s1 in [16, 255], s1 mod 32 in [16, 31]")
    assert drop_witness_range_vars(m) == parse_map("(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 255]")


def test_unsatisfiable_witness_makes_the_map_empty():
    m = parse_map("(d0)[s0, s1] -> (s0), domain: d0 in [0, 9], s0 in [0, 3], s1 in [0, 15], s1 mod 32 in [16, 31]")
    assert drop_witness_range_vars(m).is_known_empty


def test_single_value_variable_becomes_a_constant():
    m = parse_map("()[s0, s1] -> (s0, s1), domain: s0 in [0, 26], s1 in [0, 42], s0 in [0, 0]")
    assert drop_witness_range_vars(m) == parse_map("()[s0] -> (0, s0), domain: s0 in [0, 42]")


def test_independent_witness_conditions_are_decided_apart():
    """Two windows' conditions, each on its own pair of variables: each pair's box is small though
    their product is past ``witness_points``; both satisfiable, so both go (checked by enumerating
    the relations: the budget that decides them is not the one that enumerates here)."""
    text = (
        "(d0)[s0, s1, s2, s3, s4] -> (s0), domain: d0 in [0, 1], s0 in [0, 3], s1 in [0, 2], s2 in [0, 4], "
        "s3 in [0, 2], s4 in [0, 4], s1 + s2 * 2 in [1, 8], s3 + s4 in [6, 7]"
    )
    with AnalysisContext(witness_points=20):
        cleaned = drop_witness_range_vars(parse_map(text))
    assert cleaned == parse_map("(d0)[s0] -> (s0), domain: d0 in [0, 1], s0 in [0, 3]")
    assert _relation(cleaned) == _relation(parse_map(text))


def test_one_unsatisfiable_condition_among_several_makes_the_map_empty():
    text = (
        "(d0)[s0, s1, s2, s3, s4] -> (s0), domain: d0 in [0, 1], s0 in [0, 3], s1 in [0, 2], s2 in [0, 4], "
        "s3 in [0, 2], s4 in [0, 4], s1 + s2 * 2 in [1, 8], s3 + s4 in [7, 9]"
    )
    with AnalysisContext(witness_points=20):
        assert drop_witness_range_vars(parse_map(text)).is_known_empty
    assert not _relation(parse_map(text))


def _relation(m: IndexingMap) -> set:
    out = set()
    for point in itertools.product(*(range(iv.lo, iv.hi + 1) for iv in m.dims)):
        out |= {(point, r) for r in m.read_set(point)}
    return out


@settings(deadline=None, derandomize=True, max_examples=80)
@given(
    d=st.integers(1, 3),
    s0=st.tuples(st.integers(0, 3), st.integers(0, 4)),
    s1=st.tuples(st.integers(0, 6), st.integers(0, 8)),
    modulus=st.integers(2, 4),
    residue=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    pin=st.integers(-1, 4),
    use_s1_in_result=st.booleans(),
)
def test_random_maps_keep_their_relation(d, s0, s1, modulus, residue, pin, use_s1_in_result):
    s0_iv = Interval(min(s0), max(s0))
    s1_iv = Interval(min(s1), max(s1))
    results = [range_var(0) + dim(0) * 2] + ([range_var(1)] if use_s1_in_result else [])
    constraints = [(range_var(1).mod(modulus), Interval(min(residue), max(residue)))]
    if pin >= 0:
        constraints.append((range_var(0), Interval(pin, pin)))
    m = IndexingMap([Interval(0, d - 1)], [s0_iv, s1_iv], (), results, constraints).simplified()
    cleaned = drop_witness_range_vars(m)
    assert (_relation(cleaned) if not cleaned.is_known_empty else set()) == (
        _relation(m) if not m.is_known_empty else set()
    )
    assert len(cleaned.range_vars) <= len(m.range_vars)
