"""``hlo-index layout``: exit codes, JSON, text and SVG."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo.shapes import parse_shape_text
from hlo_index.layout import physical_offsets


def run(*args):
    return CliRunner().invoke(main, ["layout", *args])


def test_json_spec_example():
    result = run("F32[3,5]{1,0:T(2,2)}", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"schema", "shape", "map", "physical_elements", "offsets"}
    assert data["schema"] == "hlo-index-layout/1"
    assert data["physical_elements"] == 24
    assert data["offsets"][2][3] == 17
    assert data["shape"].startswith("f32[3,5]")
    assert "->" in data["map"]


def test_json_offsets_are_nested_like_the_shape():
    text = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"
    data = json.loads(run(text, "--format", "json").stdout)
    assert np.array_equal(np.array(data["offsets"]), physical_offsets(parse_shape_text(text)))
    assert data["physical_elements"] == 12432


def test_json_omits_offsets_of_huge_shapes():
    result = run("f32[512,512]{1,0:T(8,128)}", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["offsets"] is None and data["physical_elements"] == 512 * 512
    assert "omitted" in result.stderr


def test_text_picture_and_svg(tmp_path):
    svg = tmp_path / "layout.svg"
    result = run("bf16[4,8]{1,0:T(2,4)(2,1)}", "--svg", str(svg))
    assert result.exit_code == 0, result.output
    assert "physical elements: 32" in result.stdout
    assert svg.read_text().startswith("<svg")


def test_bad_shape_text_exits_2_with_column_and_caret():
    result = run("f32[3,5]{1,0:T(2,x)}")
    assert result.exit_code == 2
    assert "column 18" in result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1].index("^") == lines[-2].index("x")


def test_a_tuple_shape_is_refused_as_a_tuple():
    result = run(" (f32[2]{0}, f32[3]{0})")
    assert result.exit_code == 2
    assert "a tuple has no layout of its own" in result.stderr and "column 2" in result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1].index("^") == lines[-2].index("(")


def test_color_switch():
    """--color always styles the tiles (ANSI escapes); --color never writes plain text; the grid's
    numbers are the same either way."""
    coloured, plain = run("f32[3,5]{1,0:T(2,2)}", "--color", "always"), run("f32[3,5]{1,0:T(2,2)}", "--color", "never")
    assert coloured.exit_code == plain.exit_code == 0
    assert "\x1b[" in coloured.output and "\x1b[" not in plain.output
    import re

    strip = re.compile(r"\x1b\[[0-9;]*m")
    assert strip.sub("", coloured.output).split() == plain.output.split()


def test_a_shape_of_two_billion_grids_draws_its_first():
    # the grids are counted, not enumerated: a range of 2**31 - 1 grid indices is never built
    result = run("f32[2147483647,3,4]{0,2,1}", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "2147483639 more grids not shown\n" in result.output  # and no promise of JSON offsets
    assert result.output.count("┊") == 8 * 3  # 8 grids of 3 rows
