"""Semantic equality of small maps on Python lists, against brute force and the numpy path.

A small map's relation is listed without numpy (whose import costs more than a few thousand
points); both the listing and the verdict must be what plain loops and the numpy comparison give.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, evaluate, parse_map
from hlo_index.affine.evaluate import relation_on_lists, semantically_equal

from .affine_helpers import brute_relation, maps

SETTINGS = settings(deadline=None, derandomize=True, max_examples=300)


@SETTINGS
@given(maps(max_dims=2, max_range=2, max_results=2, max_constraints=2))
def test_listed_relations_are_the_brute_force_relations(m: IndexingMap):
    assert relation_on_lists(m) == brute_relation(m)


def _on_numpy(a: IndexingMap, b: IndexingMap) -> bool:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluate, "LISTED_IN_PYTHON", 0)
        return semantically_equal(a, b)


@SETTINGS
@given(maps(max_dims=2, max_range=1), maps(max_dims=2, max_range=1), st.booleans())
def test_verdicts_on_lists_are_the_numpy_verdicts(a: IndexingMap, b: IndexingMap, simplified: bool):
    if simplified:  # equal relations in two forms, and unequal ones below
        b = a.simplified()
    if a.num_dims != b.num_dims or a.num_results != b.num_results:
        return
    listed = semantically_equal(a, b)
    assert listed == _on_numpy(a, b)
    assert listed == (brute_relation(a) == brute_relation(b))


def test_a_difference_at_one_point_is_found_on_lists():
    a = parse_map("(d0, d1) -> (d0 + d1), domain: d0 in [0, 30], d1 in [0, 30]")
    b = parse_map("(d0, d1) -> (d0 + d1), domain: d0 in [0, 30], d1 in [0, 30], d0 * 31 + d1 in [0, 959]")
    assert not semantically_equal(a, b)  # b lacks the one point (30, 30)
    assert semantically_equal(a, parse_map("(d0, d1) -> (d1 + d0), domain: d0 in [0, 30], d1 in [0, 30]"))
