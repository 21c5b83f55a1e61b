"""CLI: hlo-index simplify / compose (exit codes, text and JSON output, caret diagnostics)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hlo_index.affine import parse_map
from hlo_index.cli import main

RESHAPE_ROUND_TRIP = "(d0) -> ((d0 floordiv 8) * 8 + d0 mod 8), domain: d0 in [0, 31]"


def _run(*args):
    return CliRunner().invoke(main, list(args))


def test_simplify_prints_one_line():
    result = _run("simplify", RESHAPE_ROUND_TRIP)
    assert result.exit_code == 0
    assert result.output == "(d0) -> (d0), domain: d0 in [0, 31]\n"


def test_simplify_json():
    result = _run("simplify", RESHAPE_ROUND_TRIP, "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["results"] == ["d0"] and data["dims"] == [[0, 31]]
    assert parse_map(data["map"]) == parse_map(RESHAPE_ROUND_TRIP)


def test_unreadable_map_exits_2_with_column_and_caret():
    result = _run("simplify", "(d0) -> (d0 floordiv ), domain: d0 in [0, 31]")
    assert result.exit_code == 2
    assert "error:" in result.output and "column 22" in result.output
    assert " " * 21 + "^" in result.output


def test_compose_reshape_chain():
    outer = (
        "(d0, d1) -> ((d0 * 20 + d1) floordiv 100, ((d0 * 20 + d1) floordiv 10) mod 10, "
        "(d0 * 20 + d1) mod 10), domain: d0 in [0, 49], d1 in [0, 19]"
    )
    inner = (
        "(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 20, (d0 * 100 + d1 * 10 + d2) "
        "mod 20), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    result = _run("compose", outer, inner)
    assert result.exit_code == 0
    assert result.output.startswith("(d0, d1, d2) -> (d0, d1, d2), domain:")


def test_compose_arity_mismatch_exits_2():
    result = _run("compose", "(d0) -> (d0), domain: d0 in [0, 3]", "(d0) -> (d0, d0), domain: d0 in [0, 3]")
    assert result.exit_code == 2
    assert "error:" in result.output
