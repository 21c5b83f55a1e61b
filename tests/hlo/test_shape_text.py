"""Shape text for the layout command: what parses, and errors that point at the column."""

from __future__ import annotations

import pytest

from hlo_index.hlo.model import Tile
from hlo_index.hlo.shapes import ShapeTextError, parse_shape_text


def test_spec_and_dump_spellings():
    spec = parse_shape_text("F32[3,5]{1,0:(2,2)}")
    dump = parse_shape_text("f32[3,5]{1,0:T(2,2)}")
    assert spec == dump
    assert spec.element_type == "f32" and spec.dims == (3, 5)
    assert spec.layout.minor_to_major == (1, 0) and spec.layout.tiles == (Tile((2, 2)),)


def test_repeated_tiles_stars_and_suffixes():
    shape = parse_shape_text("s4[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)(2,1)E(4)S(1)L(8)}")
    assert shape.layout.tiles == (Tile((-1, -1, 2, -1, 3)), Tile((2, 1)))
    assert shape.layout.element_size_bits == 4 and shape.layout.memory_space == 1
    assert shape.layout.raw_suffixes == "L(8)"


def test_scalars_dynamic_bounds_and_no_layout():
    assert parse_shape_text("f32[]{:T(256)}").layout.tiles == (Tile((256,)),)
    assert parse_shape_text("f32[<=4, 3]").dims == (4, 3)
    assert parse_shape_text(" bf16[8] ").layout is None


@pytest.mark.parametrize(
    "text, column, words",
    [
        ("f33[3]", 1, "unknown element type"),
        ("f32[3,x]", 7, "dimension size"),
        ("f32[3,5", 8, "']'"),
        ("f32[3,5]{1,2}", 12, "out of range"),
        ("f32[3,5]{1}", 10, "lists 1 dimensions"),
        ("f32[3,5]{1,0:T(2,0)}", 18, "positive"),
        ("f32[3,5]{1,0:T(2,*)}", 18, "last entry"),
        ("f32[3,5]{1,0:T(2,2)", 20, "'}'"),
        ("f32[3,5]{1,0} x", 15, "unexpected"),
    ],
)
def test_errors_name_the_column(text, column, words):
    with pytest.raises(ShapeTextError) as info:
        parse_shape_text(text)
    assert info.value.column == column, info.value.display()
    assert words in info.value.message
    caret_line = info.value.display().splitlines()[-1]
    assert caret_line.index("^") - 2 == column - 1
