"""KNOWN EMPTY keeps its arity, as XLA's ResetToKnownEmpty does: the dims, range and runtime
variables stay (bounded by the empty interval) and so do the results (all 0)."""

from __future__ import annotations

from hlo_index.affine import IndexingMap, Interval, parse_map

INFEASIBLE = (
    "(d0, d1)[s0]{rt0} -> (d0 + s0, d1, rt0), domain: d0 in [0, 3], d1 in [0, 3], "
    "s0 in [0, 2], rt0 in [0, 5], d0 + s0 in [10, 20]"
)


def test_an_infeasible_map_simplifies_to_known_empty_with_its_arity():
    m = parse_map(INFEASIBLE)
    empty = m.simplified()
    assert empty.is_known_empty
    assert (len(empty.dims), empty.num_dims) == (2, 2)
    assert (len(empty.range_vars), len(empty.runtime_vars)) == (1, 1)
    assert (len(empty.results), empty.num_results) == (3, 3)
    assert all(b == Interval(0, -1) for b in empty.dims + empty.range_vars)
    assert all(str(r) == "0" for r in empty.results)
    assert empty.constraints == ()


def test_the_original_map_has_no_feasible_point_either():
    # the emptiness itself is checked by brute force on the original map, not believed
    import itertools

    feasible = [(d0, s0) for d0, s0 in itertools.product(range(4), range(3)) if 10 <= d0 + s0 <= 20]
    assert feasible == []


def test_empty_maps_of_one_arity_are_equal_whatever_their_variables():
    a = parse_map(INFEASIBLE).simplified()
    b = parse_map("(d0, d1) -> (d0, d1, 0), domain: d0 in [0, 3], d1 in [0, 3], d0 in [5, 6]").simplified()
    assert a.is_known_empty and b.is_known_empty
    assert a == b and hash(a) == hash(b)


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
