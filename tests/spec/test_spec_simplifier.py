"""The spec's "Indexing Map Simplifier" section through ``hlo-index simplify``: the four map
examples, the chained-reshape cancellation, and the three kinds of constraint simplification.

Every rewrite is also checked against brute force: the simplified map must be the same relation
as the input (a simplifier that prints the spec's answer for the wrong reason would fail there).
"""

from __future__ import annotations

import json

import pytest

from hlo_index.affine import parse_map

from .examples import OUT2IN, fusion_module
from .helpers import EXACT, STRUCTURAL, analyze, assert_spec_map, map_texts, run_cli, spec_map_text

# (spec text of the input, domain, spec's simplified result) -- the spec's own spelling, with the
# domain its prose gives ("for d in [0, 6] x [0, 14]") written as XLA domain entries.
MAP_EXAMPLES = [
    pytest.param(
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16)",
        "d0 in [0, 6], d1 in [0, 14]",
        "(d0, d1) -> (d0, d1)",
        EXACT,
        id="1",
    ),
    pytest.param(
        "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) floordiv 10, d2 mod 10)",
        "d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> (d0, d1, d2)",
        EXACT,
        id="2",
    ),
    pytest.param(
        "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8)",
        "d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> (2d0 + (4d1 + d2) floordiv 8,(4d1 + d2) mod 8)",
        STRUCTURAL,
        id="3",
    ),
    # The spec prints "-(-11d0 - d1 + 109) floordiv 11 + 9", which under MLIR precedence (unary
    # minus binds to the parenthesis) is not d0; the intended map negates the floordiv.
    pytest.param(
        "(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9)",
        "d0 in [0, 9], d1 in [0, 10]",
        "(d0, d1) -> (d0)",
        EXACT,
        id="4",
    ),
]


def simplify_cli(text: str, fmt: str = "text") -> str:
    code, out = run_cli(["simplify", text, "--format", fmt])
    assert code == 0, out
    return out.strip()


@pytest.mark.parametrize("spec_input, domain, spec_result, expected_kind", MAP_EXAMPLES)
def test_simplifier_example(spec_input, domain, spec_result, expected_kind):
    got = simplify_cli(f"{spec_input}, domain: {domain}")
    kind = assert_spec_map(got, f"{spec_result}, domain: {domain}")
    assert kind in (EXACT, STRUCTURAL)
    if expected_kind == EXACT:
        assert kind == EXACT, got
    before = parse_map(f"{spec_input}, domain: {domain}")
    assert parse_map(got).semantically_equal(before), "simplify changed the relation"


def test_simplifier_example_3_spelling():
    """Same map as the spec's, spelled with `d0 * 2` where the spec writes `2d0`."""
    got = simplify_cli(
        "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8), "
        "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    head = got.partition(", domain:")[0]
    assert head == "(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) floordiv 8, (d1 * 4 + d2) mod 8)"


def test_simplifier_example_4_as_printed_is_not_d0():
    """The literal spec text parses as ((11d0 + d1 - 109) floordiv 11) + 9, which is d0 - 1 for
    d1 < 10: the spec's typo, not a simplifier failure. It must still simplify to the same relation."""
    literal = "(d0, d1) -> (-(-11d0 - d1 + 109) floordiv 11 + 9), domain: d0 in [0, 9], d1 in [0, 10]"
    m = parse_map(literal)
    assert m.evaluate((3, 0)) == (2,) and m.evaluate((3, 10)) == (3,)
    got = parse_map(simplify_cli(literal))
    assert got.semantically_equal(m)
    assert not got.semantically_equal(parse_map("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]"))


def test_simplify_json_output():
    doc = json.loads(
        simplify_cli("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]", fmt="json")
    )
    assert doc["results"] == ["d0", "d1"] and doc["constraints"] == []
    assert doc["dims"] == [[0, 6], [0, 14]]


# ------------------------------------------------------------------ chained reshapes cancel


def test_chained_reshapes_cancel_in_a_fusion(tmp_path):
    """The spec's reshape chain, as a fusion this time (the computation form is in test_spec_maps)."""
    hlo = fusion_module(
        """
p0 = f32[10, 10, 10] parameter(0)
reshape1 = f32[50, 20] reshape(p0)
ROOT reshape2 = f32[10, 10, 10] reshape(reshape1)
""",
        ["f32[10,10,10]"],
        "f32[10,10,10]",
    )
    target = analyze(tmp_path, hlo, fusion="fusion")
    (got,) = map_texts(target, OUT2IN, 0)
    assert (
        assert_spec_map(got, "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]") == EXACT
    )


# --------------------------------------------------------------- constraint simplification
# The spec states three rules without examples; each case here is one instance of a rule, with
# the result the rule prescribes.
CONSTRAINT_CASES = [
    # 1. lb <= expr (floordiv, +, -, *) c <= ub  becomes  lb' <= expr <= ub'
    pytest.param(
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], (d0 + d1) floordiv 8 in [2, 5]",
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], d0 + d1 in [16, 47]",
        id="1-floordiv",
    ),
    pytest.param(
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], d0 + d1 + 3 in [5, 10]",
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], d0 + d1 in [2, 7]",
        id="1-plus",
    ),
    pytest.param(
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], d0 + d1 - 4 in [5, 10]",
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], d0 + d1 in [9, 14]",
        id="1-minus",
    ),
    pytest.param(
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], (d0 + d1) * 4 in [3, 17]",
        "(d0, d1) -> (d0), domain: d0 in [0, 50], d1 in [0, 50], d0 + d1 in [1, 4]",
        id="1-times",
    ),
    pytest.param(
        "(d0) -> (d0), domain: d0 in [0, 99], d0 floordiv 8 in [2, 5]",
        "(d0) -> (d0), domain: d0 in [16, 47]",
        id="1-bare-variable",
    ),
    # 2. always-satisfied constraints vanish: the spec's own example.
    pytest.param(
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]",
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]",
        id="2-always-true",
    ),
    # 3. the constraint's expression is simplified like a result (simplifier example 1 inside).
    pytest.param(
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14], d1 mod 16 + d0 * 2 in [0, 20]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14], d0 * 2 + d1 in [0, 20]",
        id="3-expression",
    ),
    pytest.param(
        "(d0, d1) -> (d0), domain: d0 in [0, 6], d1 in [0, 14], d0 + d1 floordiv 16 in [0, 3]",
        "(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 14]",
        id="3-expression-then-bound",
    ),
]


@pytest.mark.parametrize("before, after", CONSTRAINT_CASES)
def test_constraint_simplification(before, after):
    got = simplify_cli(before)
    assert assert_spec_map(got, after) == EXACT, got
    assert parse_map(got).semantically_equal(parse_map(before))


def test_spec_map_text_joins_the_spec_layout():
    """The only conversion applied to the spec's maps: its line layout into XLA's one-line form."""
    text = "(d0, d1) -> ()\ndomain:\nd0 in [0, 1]\nd1 in [0, 3]"
    assert spec_map_text(text) == "(d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 3]"
    assert spec_map_text("(d0) -> (d0),\ndomain:\nd0 in [0, 31],") == "(d0) -> (d0), domain: d0 in [0, 31]"
