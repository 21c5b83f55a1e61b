"""Exact proofs with isl (when islpy is installed) that simplification and composition keep the
relation; the numpy/Python brute force elsewhere is the always-available oracle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from hlo_index.affine import parse_map

from .affine_helpers import maps
from .test_simplify_rules import CONSTRAINT_RULES, SPEC_AND_RULES

pytest.importorskip("islpy")
from hlo_index.affine.isl_bridge import isl_equal


@settings(deadline=None, derandomize=True, max_examples=200)
@given(maps(max_dims=3, max_range=2, max_results=3, max_constraints=3, runtime=1))
def test_isl_proves_simplification_exact(m):
    assert isl_equal(m, m.simplified())


@pytest.mark.parametrize("text", [t for t, _ in SPEC_AND_RULES + CONSTRAINT_RULES])
def test_isl_proves_each_rule_example(text):
    m = parse_map(text)
    assert isl_equal(m, m.simplified())


def test_isl_detects_a_wrong_map():
    a = parse_map("(d0) -> (d0 mod 8), domain: d0 in [0, 15]")
    b = parse_map("(d0) -> (d0 mod 4), domain: d0 in [0, 15]")
    assert not isl_equal(a, b)
